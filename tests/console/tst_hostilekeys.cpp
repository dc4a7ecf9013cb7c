// Keys are shown byte for byte (issue 24 item 4): a key holding "%2" was listed in the action
// confirmation as another key (chained QString::arg put the attempts into it, and a surplus
// arg() warned), and a newline or an RTL override made one key look like two, or reorder.
// Hostile keys planted by SQL, then the Tasks table, the task detail, the action dialog, the
// dashboard's rows dialog and the Audit page (after a real requeue) are read as a person sees
// them: the exact key, the invisible characters escaped. Any "QString::arg" warning fails.

#include <QtTest>

#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QTextBrowser>

#include "models/auditmodel.h"
#include "models/taskbrowsermodel.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "views/actiondialog.h"
#include "views/auditwidget.h"
#include "views/dashboardrowsdialog.h"
#include "views/taskbrowserwidget.h"
#include "views/taskdetailpane.h"

using idem::console::ActionDialog;
using idem::console::AuditModel;
using idem::console::AuditWidget;
using idem::console::ConsoleSession;
using idem::console::DashboardRowsDialog;
using idem::console::TaskBrowserModel;
using idem::console::TaskBrowserWidget;
using namespace idem::test;

namespace {
QStringList argWarnings;
QtMessageHandler previousHandler = nullptr;

void failOnArg(QtMsgType type, const QMessageLogContext& context, const QString& message)
{
    if (message.contains(QStringLiteral("QString::arg")))
        argWarnings << message;
    if (previousHandler)
        previousHandler(type, context, message);
}

struct Hostile {
    std::string key; // as stored
    QString shown; // as it must read, written out here by hand
};

std::vector<Hostile> hostileKeys()
{
    const std::string longKey = "tenant-9:manual:" + std::string(1024 - 16, 'x');
    return {
        { "tenant-9:manual:order-%2-%3-100%", QStringLiteral("tenant-9:manual:order-%2-%3-100%") },
        { "tenant-9:manual:%1%1-%L1-%n", QStringLiteral("tenant-9:manual:%1%1-%L1-%n") },
        { "tenant-9:manual:abc\u202Edcba", QStringLiteral("tenant-9:manual:abc\\u202edcba") },
        { "tenant-9:manual:line1\nline2\ttab", QStringLiteral("tenant-9:manual:line1\\x0aline2\\x09tab") },
        { "tenant-9:manual:zero\u200Bwidth\u2066iso\u2069", QStringLiteral("tenant-9:manual:zero\\u200bwidth\\u2066iso\\u2069") },
        { longKey, QString::fromStdString(longKey) },
    };
}
} // namespace

class TestHostileKeys : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init() { argWarnings.clear(); }
    void cleanup() { QVERIFY2(argWarnings.isEmpty(), qPrintable(argWarnings.join(QLatin1Char('\n')))); }
    void tasksTableAndDetailShowTheKey();
    void actionDialogListsTheKey();
    void rowsDialogShowsTheKey();
    void auditShowsTheKeyAndReason();

private:
    std::vector<idem::TaskRow> loadRows(TaskBrowserWidget& w);
    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<ConsoleSession> m_session;
};

void TestHostileKeys::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    previousHandler = qInstallMessageHandler(failOnArg);
    m_db = std::make_unique<ScratchDatabase>("hostilekeys", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), true });
    for (const auto& h : hostileKeys())
        plantTask(*m_conn, h.key, "failed", 2, 5, "permanent", 0, 30);
    m_session = std::make_unique<ConsoleSession>();
    QVERIFY(connectSession(*m_session, m_db->dsn()));
}

void TestHostileKeys::cleanupTestCase()
{
    m_session.reset();
    m_conn.reset();
    m_db.reset();
    qInstallMessageHandler(previousHandler);
}

std::vector<idem::TaskRow> TestHostileKeys::loadRows(TaskBrowserWidget& w)
{
    idem::TaskFilter f;
    f.tenant = "tenant-9";
    w.applyFilter(f);
    std::vector<idem::TaskRow> rows;
    if (!QTest::qWaitFor([&] { return w.model()->rowCount() == int(hostileKeys().size()) && !w.model()->busy(); },
            browserTimeoutMs))
        return rows;
    for (int r = 0; r < w.model()->rowCount(); ++r)
        rows.push_back(w.model()->task(r));
    return rows;
}

void TestHostileKeys::tasksTableAndDetailShowTheKey()
{
    TaskBrowserWidget w(m_session.get(), m_session.get());
    w.resize(1200, 700);
    w.show();
    QCOMPARE(loadRows(w).size(), hostileKeys().size());
    auto* detailKey = w.detail()->findChild<QLineEdit*>(QStringLiteral("detailKey"));
    QVERIFY(detailKey);
    for (const auto& h : hostileKeys()) {
        const int row = w.model()->rowOfKey(QString::fromStdString(h.key));
        QVERIFY2(row >= 0, h.key.c_str());
        QCOMPARE(w.model()->index(row, TaskBrowserModel::KeyColumn).data().toString(), h.shown);
        // What is copied stays the raw key.
        QCOMPARE(w.model()->data(w.model()->index(row, 0), TaskBrowserModel::KeyRole).toString().toStdString(), h.key);
        w.view()->selectRow(row);
        QTRY_COMPARE_WITH_TIMEOUT(detailKey->text(), h.shown, browserTimeoutMs);
    }
}

void TestHostileKeys::actionDialogListsTheKey()
{
    TaskBrowserWidget w(m_session.get(), m_session.get());
    const auto rows = loadRows(w);
    QCOMPARE(rows.size(), hostileKeys().size());
    ActionDialog dialog(m_session.get(), idem::RecoveryAction::Requeue, rows);
    const QString plan = dialog.plan()->toPlainText();
    for (const auto& h : hostileKeys()) {
        // Each key once, exactly, followed by its own attempts (not spliced into another key).
        QVERIFY2(plan.contains(h.shown + QStringLiteral(" – attempts 2 of 5")),
            qPrintable(h.shown.left(80) + QStringLiteral("\n---\n") + plan.left(2000)));
    }
    QVERIFY2(!plan.contains(QStringLiteral("order-2-5-100%")), qPrintable(plan.left(500)));
}

void TestHostileKeys::rowsDialogShowsTheKey()
{
    idem::TaskFilter f;
    f.tenant = "tenant-9";
    DashboardRowsDialog dialog(m_session.get(), f, QStringLiteral("Failed %1 %2"), QStringLiteral("rows %1 in %2"));
    QSignalSpy loaded(&dialog, &DashboardRowsDialog::loaded);
    QVERIFY(loaded.wait(browserTimeoutMs));
    QStringList shown;
    for (int r = 0; r < dialog.table()->rowCount(); ++r)
        shown << dialog.table()->item(r, 0)->text();
    for (const auto& h : hostileKeys())
        QVERIFY2(shown.contains(h.shown), qPrintable(h.shown.left(80)));
    QVERIFY2(dialog.statusText().contains(QStringLiteral("rows %1 in %2")), qPrintable(dialog.statusText()));
}

void TestHostileKeys::auditShowsTheKeyAndReason()
{
    TaskBrowserWidget w(m_session.get(), m_session.get());
    const auto rows = loadRows(w);
    QCOMPARE(rows.size(), hostileKeys().size());
    ActionDialog dialog(m_session.get(), idem::RecoveryAction::Requeue, rows);
    const QString reason = QStringLiteral("INC-%1 %2: refund\u202Eevil\nsecond line");
    dialog.reasonEdit()->insertPlainText(reason);
    QVERIFY(dialog.runButton()->isEnabled());
    QTest::mouseClick(dialog.runButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(dialog.finished(), browserTimeoutMs);
    QCOMPARE(querySql(*m_conn, "SELECT count(*) FROM idem.task_idempotency_audit WHERE reason = $1",
                 reason.toStdString())[0][0]
                 .as<int>(),
        int(hostileKeys().size()));

    AuditWidget audit(m_session.get());
    audit.show();
    QTRY_COMPARE_WITH_TIMEOUT(audit.model()->rowCount(), int(hostileKeys().size()), browserTimeoutMs);
    auto* title = audit.findChild<QLabel*>(QStringLiteral("auditEntryTitle"));
    QVERIFY(title);
    const auto keys = hostileKeys();
    for (int r = 0; r < audit.model()->rowCount(); ++r) {
        const std::string key = audit.model()->entry(r).key;
        const auto it = std::find_if(keys.begin(), keys.end(), [&](const Hostile& h) { return h.key == key; });
        QVERIFY(it != keys.end());
        QCOMPARE(audit.model()->index(r, AuditModel::KeyColumn).data().toString(), it->shown);
        audit.view()->selectRow(r);
        QVERIFY2(title->text().contains(QStringLiteral("<tt>") + it->shown.toHtmlEscaped() + QStringLiteral("</tt>")),
            qPrintable(title->text().left(300)));
        // The reason as typed, its override shown, its line break kept.
        QCOMPARE(audit.reasonView()->toPlainText(), QStringLiteral("INC-%1 %2: refund\\u202eevil\nsecond line"));
    }
}

QTEST_MAIN(TestHostileKeys)
#include "tst_hostilekeys.moc"
