#include <QtTest>

#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTextBrowser>

#include "operations/actions.h"
#include "models/auditmodel.h"
#include "models/bulkaction.h"
#include "models/taskbrowsermodel.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "views/actiondialog.h"
#include "views/auditwidget.h"
#include "views/taskbrowserwidget.h"
#include "views/taskdetailpane.h"

using idem::RecoveryAction;
using idem::console::ActionDialog;
using idem::console::AuditModel;
using idem::console::AuditWidget;
using idem::console::ConsoleSession;
using idem::console::TaskBrowserModel;
using idem::console::TaskBrowserWidget;
using namespace idem::test;

// The Tasks and Audit pages as an operator sees them on a realistic table: the selected
// record's detail, the action dialog's plan, the bulk result list, an audit entry's diff and a
// verified chain. With IDEM_SCREENSHOT_DIR set, each is also saved as a PNG (the guides'
// docs/console-tasks.png and docs/console-audit.png come from here).
class TestTaskBrowserScreens : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void tasksPage();
    void actionDialogAndResults();
    void auditPage();

private:
    void save(QWidget* w, const char* name);
    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<ConsoleSession> m_session;
};

void TestTaskBrowserScreens::save(QWidget* w, const char* name)
{
    const QImage image = w->grab().toImage();
    QVERIFY(!image.isNull());
    const auto dir = qEnvironmentVariable("IDEM_SCREENSHOT_DIR");
    if (!dir.isEmpty())
        QVERIFY(image.save(QDir(dir).filePath(QString::fromLatin1(name))));
}

void TestTaskBrowserScreens::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("taskbrowser_screens", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
    // A morning's traffic: mostly succeeded with receipts, some processing (a few leases expired),
    // retryable failures with their history, a handful failed.
    execSql(*m_conn,
        "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts,"
        " error_class, error_message, owner_token, lease_until, next_attempt_at, result_json, errors,"
        " created_at, updated_at)"
        " SELECT 'tenant-' || (i % 9) || ':' || (ARRAY['charge','refund','payout'])[1 + i % 3] || ':order-' ||"
        "        (10000 + i), 'v1:' || encode(sha256(i::text::bytea), 'hex'),"
        "        s, a, 5,"
        "        CASE s WHEN 'retryable_failed' THEN (CASE WHEN i % 4 = 0 THEN 'unknown' ELSE 'retryable' END)"
        "               WHEN 'failed' THEN (CASE WHEN i % 2 = 0 THEN 'permanent' ELSE 'retryable' END) END,"
        "        CASE s WHEN 'retryable_failed' THEN 'gateway timeout after 30 s (HTTP 504)'"
        "               WHEN 'failed' THEN (CASE WHEN i % 2 = 0 THEN 'card declined: insufficient funds'"
        "                                       ELSE 'gateway timeout after 30 s (HTTP 504); attempts exhausted' END) "
        "END,"
        "        CASE WHEN s = 'processing' THEN gen_random_uuid() END,"
        "        CASE WHEN s = 'processing' THEN now() + ((i % 5) * 20 - 30) * interval '1 second' END,"
        "        CASE WHEN s = 'retryable_failed' THEN now() + (i % 60) * interval '1 second'"
        "             + CASE WHEN i % 80 = 4 THEN interval '1 day 1 hour' ELSE interval '0' END END,"
        "        CASE WHEN s = 'succeeded' THEN jsonb_build_object('receipt', 'r-' || i, 'amount_cents', 1250 + i,"
        "             'currency', 'EUR', 'captured', true, 'lines', jsonb_build_array(jsonb_build_object('sku',"
        "             'A-' || i, 'qty', 1))) END,"
        "        (SELECT coalesce(jsonb_agg(jsonb_build_object('attempt', n, 'at', now() - (a - n) * interval '40 s',"
        "                 'class', 'retryable', 'message', 'gateway timeout after 30 s (HTTP 504)')), '[]'::jsonb)"
        "           FROM generate_series(1, a - 1) n WHERE s <> 'succeeded'),"
        "        now() - (400 - i) * interval '9 second' - CASE WHEN i % 80 = 3 THEN interval '1 day 2 hours'"
        "                                                    ELSE interval '0' END,"
        "        now() - (400 - i) * interval '7 second' - CASE WHEN i % 80 = 3 THEN interval '1 day 2 hours'"
        "                                                    ELSE interval '0' END"
        " FROM generate_series(1, 400) i,"
        " LATERAL (SELECT (ARRAY['succeeded','succeeded','succeeded','processing','retryable_failed','failed',"
        "          'succeeded','retryable_failed'])[1 + i % 8] AS s, 1 + i % 5 AS a) x");
    // Some history for the audit page, by two operators.
    int n = 0;
    for (const auto& r : querySql(*m_conn,
             "SELECT idempotency_key FROM idem.task_idempotency WHERE status = 'failed'"
             " ORDER BY idempotency_key LIMIT 6")) {
        const auto key = r[0].as<std::string>();
        const auto v = idem::readRowVersions(*m_conn, idem::SchemaName(), { key });
        idem::ActionOptions o;
        o.reason = n % 2 ? "INC-2291: gateway fixed, retry once more" : "OPS-88: card re-authorised by support";
        o.actor = n % 2 ? "maria@ops-laptop" : "dev@bastion-1";
        o.extraAttempts = 2;
        QCOMPARE(idem::applyAction(*m_conn, idem::SchemaName(), RecoveryAction::Requeue, *v[0], o).outcome,
            idem::ActionOutcome::Applied);
        ++n;
    }
    m_session = std::make_unique<ConsoleSession>();
    QVERIFY(connectSession(*m_session, m_db->dsn()));
}

void TestTaskBrowserScreens::cleanupTestCase()
{
    m_session.reset();
    m_conn.reset();
    m_db.reset();
}

void TestTaskBrowserScreens::tasksPage()
{
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.resize(1280, 720);
    widget.show();
    QSignalSpy pages(widget.model(), &TaskBrowserModel::pageLoaded);
    idem::TaskFilter f;
    f.statuses = { "processing", "retryable_failed", "failed" };
    widget.applyFilter(f);
    widget.setSort({ idem::TaskSortColumn::UpdatedAt, true });
    QVERIFY(
        QTest::qWaitFor([&] { return widget.model()->rowCount() > 20 && !widget.model()->busy(); }, browserTimeoutMs));
    int row = 0;
    while (widget.model()->task(row).status != "retryable_failed" || widget.model()->task(row).attempts < 3)
        ++row;
    widget.view()->selectRow(row);
    const auto key = QString::fromStdString(widget.model()->task(row).key);
    QTRY_COMPARE_WITH_TIMEOUT(widget.detail()->keyField()->text(), key, browserTimeoutMs);
    widget.detail()->tabs()->setCurrentIndex(1);
    QVERIFY(widget.detail()->errorsView()->toPlainText().contains(QStringLiteral("gateway timeout")));
    QTRY_VERIFY_WITH_TIMEOUT(
        widget.findChild<QLabel*>(QStringLiteral("matchCount"))->text().contains(QStringLiteral("match")),
        browserTimeoutMs);
    QVERIFY(widget.findChild<QPushButton*>(QStringLiteral("requeueButton"))->isEnabled());
    QVERIFY(!widget.findChild<QPushButton*>(QStringLiteral("releaseButton"))->isEnabled());
    // At 1280 px every column up to Next attempt is in view, each value whole (the Next column
    // ran off the table's edge behind two full dates, and did again in a run just after midnight:
    // the data now always holds a row updated yesterday and a retry due tomorrow); the whole
    // time is in each cell's tooltip.
    QCoreApplication::processEvents();
    auto* header = widget.view()->horizontalHeader();
    const QFontMetrics fm(widget.view()->font());
    for (int c = TaskBrowserModel::KeyColumn; c <= TaskBrowserModel::NextAttemptColumn; ++c) {
        const QString title = widget.model()->headerData(c, Qt::Horizontal).toString();
        QVERIFY2(header->sectionViewportPosition(c) + header->sectionSize(c) <= widget.view()->viewport()->width(),
            qPrintable(title + QStringLiteral(" ends at ")
                + QString::number(header->sectionViewportPosition(c) + header->sectionSize(c)) + QStringLiteral(" of ")
                + QString::number(widget.view()->viewport()->width())));
        for (int r = 0; r < widget.model()->rowCount(); ++r) {
            const QString cell = widget.model()->index(r, c).data().toString();
            QVERIFY2(fm.horizontalAdvance(cell) < header->sectionSize(c), qPrintable(title + QStringLiteral(": ") + cell));
        }
    }
    const auto& shown = widget.model()->task(row);
    QCOMPARE(widget.model()->index(row, TaskBrowserModel::UpdatedColumn).data(Qt::ToolTipRole).toString(),
        idem::console::formatTimeUs(shown.updatedAtUs));
    // A cell names the day only when it is not today, and the year only when it is not this year.
    const QDate serverToday = QDateTime::fromMSecsSinceEpoch(widget.model()->serverNowUs() / 1000).date();
    const auto expectedCell = [&](std::int64_t us) {
        const QDateTime at = QDateTime::fromMSecsSinceEpoch(us / 1000);
        if (at.date() == serverToday)
            return at.toString(QStringLiteral("HH:mm:ss.zzz"));
        return at.toString(at.date().year() == serverToday.year() ? QStringLiteral("MM-dd HH:mm:ss")
                                                                  : QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    };
    QCOMPARE(widget.model()->index(row, TaskBrowserModel::UpdatedColumn).data().toString(),
        expectedCell(shown.updatedAtUs));
    int otherDays = 0;
    for (int r = 0; r < widget.model()->rowCount(); ++r) {
        const auto& t = widget.model()->task(r);
        if (QDateTime::fromMSecsSinceEpoch(t.updatedAtUs / 1000).date() == serverToday)
            continue;
        ++otherDays;
        QCOMPARE(widget.model()->index(r, TaskBrowserModel::UpdatedColumn).data().toString(), expectedCell(t.updatedAtUs));
    }
    QVERIFY2(otherDays >= 2, "the page holds rows updated on another day");
    save(&widget, "console-tasks.png");
    // With no row selected the tabs carry no count of the record that was shown before.
    QVERIFY(widget.detail()->tabs()->tabText(1).contains(QLatin1Char('(')));
    widget.view()->clearSelection();
    QTRY_COMPARE(widget.detail()->tabs()->tabText(1), QStringLiteral("Error history"));
    QCOMPARE(widget.detail()->tabs()->tabText(2), QStringLiteral("Audit"));
}

void TestTaskBrowserScreens::actionDialogAndResults()
{
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.resize(1280, 720);
    widget.show();
    idem::TaskFilter f;
    f.statuses = { "failed" };
    widget.applyFilter(f);
    QVERIFY(
        QTest::qWaitFor([&] { return widget.model()->rowCount() > 8 && !widget.model()->busy(); }, browserTimeoutMs));
    std::vector<idem::TaskRow> rows;
    for (int i = 0; i < 8; ++i)
        rows.push_back(widget.model()->task(i));
    ActionDialog dialog(m_session.get(), RecoveryAction::Requeue, rows);
    dialog.show();
    QVERIFY(dialog.plan()->toPlainText().contains(QStringLiteral("Requeue 8 record(s)")));
    QVERIFY(!dialog.runButton()->isEnabled());
    QTest::keyClicks(
        dialog.reasonEdit(), QStringLiteral("INC-2304: card processor back; requeue the overnight failures"));
    QVERIFY(dialog.runButton()->isEnabled());
    save(&dialog, "console-action-dialog.png");
    // Two of them move on before the run: refused, the rest applied.
    execSql(*m_conn, "UPDATE idem.task_idempotency SET updated_at = now() WHERE idempotency_key = ANY ($1::text[])",
        "{\"" + rows[2].key + "\",\"" + rows[5].key + "\"}");
    QTest::mouseClick(dialog.runButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(dialog.finished(), browserTimeoutMs);
    QCOMPARE(dialog.results()->count(idem::ActionOutcome::Applied), 6);
    QCOMPARE(dialog.results()->count(idem::ActionOutcome::Stale), 2);
    QVERIFY(dialog.summary()->text().contains(QStringLiteral("6 applied, 2 refused-stale")));
    save(&dialog, "console-bulk-results.png");
}

void TestTaskBrowserScreens::auditPage()
{
    AuditWidget widget(m_session.get());
    widget.resize(1280, 720);
    widget.show();
    QVERIFY(
        QTest::qWaitFor([&] { return widget.model()->rowCount() >= 6 && !widget.model()->busy(); }, browserTimeoutMs));
    widget.view()->selectRow(0);
    QVERIFY(widget.diffTable()->rowCount() > 5);
    bool anyChanged = false;
    for (int i = 0; i < widget.diffTable()->rowCount(); ++i)
        anyChanged = anyChanged || widget.diffTable()->item(i, 0)->data(Qt::UserRole).toBool();
    QVERIFY(anyChanged);
    QTest::mouseClick(widget.verifyButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(widget.chainLabel()->text().contains(QStringLiteral("Chain intact")), browserTimeoutMs);
    save(&widget, "console-audit.png");
}

QTEST_MAIN(TestTaskBrowserScreens)
#include "tst_taskbrowser_screens.moc"
