// What every page of the real main window tells about the data it shows (issue 14, items 3, 4
// and 10): the Audit page loads when it is shown and follows new entries by itself; during an
// outage the Connection, Tasks and Audit pages say the same connection state as the dashboard
// and how old what they show is; the dashboard's disconnect message is whole; the text
// operators tell rows apart by is not clipped. Issue 41 item 8: clicking every tile in turn never
// widens the window (the Failed retries tile's match sentence made it 1713 px wide on a 1600 px
// screen, Apply and Thresholds off-screen); long texts wrap or elide.

#include <QtTest>

#include <QPlainTextEdit>
#include <QPushButton>
#include <QTextDocument>

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>

#include "app/mainwindow.h"
#include "core/connection.h"
#include "models/auditmodel.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/profilestore.h"
#include "models/taskbrowsermodel.h"
#include "models/visibletext.h"
#include "operations/actions.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "views/auditwidget.h"
#include "views/consolewidget.h"
#include "views/dashboardwidget.h"
#include "views/elidedelegate.h"
#include "views/taskbrowserwidget.h"
#include "views/tilewidget.h"

using namespace idem::console;
using namespace idem::test;

class TestPageState : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void cleanupTestCase();
    void auditLoadsOnShowAndFollows();
    void outageIsToldOnEveryPage();
    void textIsNotClipped();
    void tilesNeverWidenTheWindow();
    void disconnectedLineReadsAsSentences();

private:
    void act(const std::string& key, const std::string& reason);
    QString lineText(const char* name);
    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<pqxx::connection> m_admin;
    std::unique_ptr<ConsoleSession> m_session;
    std::unique_ptr<ProfileStore> m_profiles;
    std::unique_ptr<MainWindow> m_window;
};

void TestPageState::act(const std::string& key, const std::string& reason)
{
    const auto v = idem::readRowVersions(*m_conn, idem::SchemaName(), { key });
    QVERIFY(v[0]);
    idem::ActionOptions o;
    o.reason = reason;
    o.actor = "carol@host3";
    o.extraAttempts = 1;
    const auto action = v[0]->status == "failed" ? idem::RecoveryAction::Requeue : idem::RecoveryAction::Fail;
    QCOMPARE(idem::applyAction(*m_conn, idem::SchemaName(), action, *v[0], o).outcome, idem::ActionOutcome::Applied);
}

void TestPageState::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("pagestate", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
    plantTask(*m_conn, "tenant-alpha:charge:2024-05-01:customer-000017:invoice-000123:attempt-a", "failed", 3, 3,
        "permanent");
    plantTask(*m_conn, "tenant-alpha:charge:2024-05-01:customer-000017:invoice-000123:attempt-b", "failed", 3, 3,
        "permanent");
    for (int i = 0; i < 7; ++i)
        act("tenant-alpha:charge:2024-05-01:customer-000017:invoice-000123:attempt-a",
            "entry " + std::to_string(i));
    m_admin = idem::connect(adminDsn());
}

void TestPageState::init()
{
    m_session = std::make_unique<ConsoleSession>();
    m_profiles = std::make_unique<ProfileStore>();
    m_window = std::make_unique<MainWindow>(m_session.get(), m_profiles.get());
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    m_session->connectTo(settingsFor(m_db->dsn()));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->dashboard()->model()->ticks() >= 1, browserTimeoutMs);
}

void TestPageState::cleanup()
{
    m_window.reset();
    m_profiles.reset();
    m_session.reset();
}

void TestPageState::cleanupTestCase()
{
    m_admin.reset();
    m_conn.reset();
    m_db.reset();
}

// libpq's two lines on the one status line read as two sentences, not "refused Is the server".
void TestPageState::disconnectedLineReadsAsSentences()
{
    QCOMPARE(oneLine(QStringLiteral("connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n"
                                    "\tIs the server running on that host and accepting TCP/IP connections?\n")),
        QStringLiteral(
            "connection to server at \"127.0.0.1\", port 1 failed: Connection refused. Is the server running "
            "on that host and accepting TCP/IP connections?"));
    QCOMPARE(oneLine(QStringLiteral("FATAL:  too many connections\n\nfor role \"x\".")),
        QStringLiteral("FATAL: too many connections. for role \"x\"."));
    QCOMPARE(oneLine(QStringLiteral("one: \n two")), QStringLiteral("one: two"));
}

void TestPageState::tilesNeverWidenTheWindow()
{
    // A 1600 px screen's window, narrower than the screen to start with.
    m_window->setMaximumWidth(1600);
    m_window->resize(1280, 900);
    QTRY_COMPARE(m_window->width(), 1280);
    const int start = m_window->width();
    auto* pages = m_window->console()->pages();
    auto* dashboard = m_window->dashboard();
    auto* tasks = m_window->findChild<TaskBrowserWidget*>();
    QVERIFY(tasks);
    auto* apply = tasks->findChild<QPushButton*>(QStringLiteral("applyFilter"));
    QVERIFY(apply);
    QStringList sentences;
    for (int i = 0; i < idem::console::tileCount; ++i) {
        const auto tile = static_cast<idem::console::Tile>(i);
        pages->setCurrentWidget(dashboard);
        QTest::mouseClick(dashboard->tile(tile), Qt::LeftButton);
        if (pages->currentWidget() == tasks) {
            // The page's match sentence in, the tile's words with it.
            QTRY_VERIFY_WITH_TIMEOUT(!tasks->model()->busy() && !tasks->countText().isEmpty()
                    && !tasks->countText().startsWith(QStringLiteral("Counting")),
                browserTimeoutMs);
            sentences << tasks->countText();
            QVERIFY2(apply->isVisible() && apply->mapTo(m_window.get(), QPoint(apply->width(), 0)).x() <= start,
                qPrintable(tasks->countText()));
        }
        QCoreApplication::processEvents();
        QVERIFY2(m_window->width() <= start,
            qPrintable(QStringLiteral("%1 px after the tile %2 (started at %3): %4")
                           .arg(m_window->width())
                           .arg(i)
                           .arg(start)
                           .arg(tasks->countText())));
        QVERIFY2(m_window->minimumSizeHint().width() <= start,
            qPrintable(QString::number(m_window->minimumSizeHint().width())));
    }
    // Some of the sentences are longer than the room beside the buttons: they wrapped.
    QVERIFY2(std::any_of(sentences.begin(), sentences.end(),
                 [&](const QString& s) { return tasks->fontMetrics().horizontalAdvance(s) > start / 2; }),
        qPrintable(sentences.join(QLatin1Char('\n'))));
}

QString TestPageState::lineText(const char* name)
{
    auto* label = m_window->findChild<QLabel*>(QLatin1String(name));
    return label ? label->text() : QStringLiteral("(no %1)").arg(QLatin1String(name));
}

void TestPageState::auditLoadsOnShowAndFollows()
{
    auto* audit = m_window->findChild<AuditWidget*>();
    QVERIFY(audit);
    QVERIFY(m_window->showPage(QStringLiteral("audit")));
    // Shown: the trail is there without F5, newest first, with when it was read.
    QTRY_COMPARE_WITH_TIMEOUT(audit->model()->rowCount(), 7, browserTimeoutMs);
    QTRY_VERIFY2_WITH_TIMEOUT(lineText("auditStatusLine").contains(QStringLiteral("as of")),
        qPrintable(lineText("auditStatusLine")), browserTimeoutMs);
    // An entry made elsewhere (idemctl, another console) appears by itself within a few seconds.
    act("tenant-alpha:charge:2024-05-01:customer-000017:invoice-000123:attempt-b", "made elsewhere");
    QTRY_COMPARE_WITH_TIMEOUT(audit->model()->rowCount(), 8, 8000);
    QCOMPARE(QString::fromStdString(audit->model()->entry(0).reason), QStringLiteral("made elsewhere"));
    // Followed on the worker thread, with no job piling up behind another.
    QVERIFY(m_window->monitorSession()->pendingJobs() <= 3);
}

void TestPageState::outageIsToldOnEveryPage()
{
    auto* tasks = m_window->findChild<TaskBrowserWidget*>();
    QVERIFY(tasks);
    QVERIFY(m_window->showPage(QStringLiteral("tasks")));
    QTRY_VERIFY_WITH_TIMEOUT(tasks->model()->rowCount() >= 2, browserTimeoutMs);
    QTRY_VERIFY2_WITH_TIMEOUT(lineText("tasksStatusLine").contains(QStringLiteral("as of")),
        qPrintable(lineText("tasksStatusLine")), browserTimeoutMs);
    m_window->resize(1000, 800);
    {
        pqxx::nontransaction n(*m_admin);
        n.exec("ALTER DATABASE " + m_admin->quote_name(m_db->name()) + " ALLOW_CONNECTIONS false");
        n.exec_params("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", m_db->name());
    }
    const auto reopen = qScopeGuard([this] {
        pqxx::nontransaction n(*m_admin);
        n.exec("ALTER DATABASE " + m_admin->quote_name(m_db->name()) + " ALLOW_CONNECTIONS true");
    });
    auto* dashboard = m_window->dashboard();
    QTRY_COMPARE_WITH_TIMEOUT(dashboard->model()->freshness(), DashboardModel::Freshness::Disconnected, 30000);
    QTest::qWait(2200); // what the pages show ages by the second

    // The Connection page no longer says "connected".
    auto* state = m_window->findChild<QLabel*>(QStringLiteral("stateValue"));
    QVERIFY(state);
    QVERIFY2(state->text().startsWith(QStringLiteral("disconnected")), qPrintable(state->text()));
    QVERIFY2(state->text().contains(QStringLiteral("reconnecting")), qPrintable(state->text()));
    QVERIFY2(lineText("connectionAge").contains(QStringLiteral(" ago")), qPrintable(lineText("connectionAge")));
    // Tasks and Audit: the same state, and the rows' age.
    for (const char* name : { "tasksStatusLine", "auditStatusLine" }) {
        const QString text = lineText(name);
        QVERIFY2(text.startsWith(QStringLiteral("Disconnected")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("stale")), qPrintable(text));
        QVERIFY2(text.contains(QRegularExpression(QStringLiteral("[0-9]+ s ago"))), qPrintable(text));
    }
    // The dashboard's message is whole: every line it draws fits, the last good time included,
    // and the alert line below starts under it.
    auto* freshness = dashboard->findChild<QLabel*>(QStringLiteral("dashboardFreshness"));
    QVERIFY(freshness);
    const QStringList lines = freshness->text().split(QLatin1Char('\n'));
    QVERIFY2(freshness->text().contains(QStringLiteral("Last good data at")), qPrintable(freshness->text()));
    QVERIFY2(!freshness->wordWrap(), "a wrapped reason is cut at the label's fixed height");
    QVERIFY(lines.size() * freshness->fontMetrics().lineSpacing() <= freshness->height());
    for (const auto& line : lines)
        QVERIFY2(freshness->fontMetrics().horizontalAdvance(line) <= freshness->contentsRect().width(),
            qPrintable(line));
    QVERIFY2(dashboard->freshnessText().contains(QStringLiteral("Disconnected")), qPrintable(dashboard->freshnessText()));
}

void TestPageState::textIsNotClipped()
{
    auto* tasks = m_window->findChild<TaskBrowserWidget*>();
    QVERIFY(m_window->showPage(QStringLiteral("tasks")));
    QTRY_VERIFY_WITH_TIMEOUT(tasks->model()->rowCount() >= 2, browserTimeoutMs);
    // Keys that differ only at the end stay told apart: the middle is elided.
    QCOMPARE(tasks->view()->textElideMode(), Qt::ElideMiddle);
    tasks->view()->selectRow(0);
    auto* digest = tasks->findChild<QPlainTextEdit*>(QStringLiteral("detailDigest"));
    QVERIFY(digest);
    QTRY_VERIFY_WITH_TIMEOUT(digest->toPlainText().startsWith(QStringLiteral("v1:")), browserTimeoutMs);
    QCOMPARE(digest->toPlainText().size(), 67);
    // All of it shows, "v1:" to the last digit (issue 24 item 12: it ran off the pane): wrapped
    // anywhere, its lines fit the box's height.
    // (A plain text document's height is its line count.)
    QVERIFY2(digest->document()->size().height() * digest->fontMetrics().lineSpacing() <= digest->viewport()->height() + 1,
        qPrintable(QStringLiteral("%1 lines in %2 px").arg(digest->document()->size().height()).arg(digest->viewport()->height())));
    // An error message elides at its end (its beginning says what failed), not in the middle
    // (issue 41 item 11).
    auto* errorDelegate
        = dynamic_cast<ElideDelegate*>(tasks->view()->itemDelegateForColumn(TaskBrowserModel::ErrorColumn));
    QVERIFY(errorDelegate);
    QCOMPARE(errorDelegate->mode(), Qt::ElideRight);
    QVERIFY(!tasks->view()->itemDelegateForColumn(TaskBrowserModel::KeyColumn)); // the view's: the middle
    // Audit: the time, the action (approve_policy was "appr…licy") and the actor fit their
    // columns; a key elides from the left, so its business id stays.
    execSql(*m_db->connect(),
        "SELECT idem.idem_set_approval(10, 3600, 'two people for bulk work')"); // m_conn: cut by the outage
    auto* audit = m_window->findChild<AuditWidget*>();
    QVERIFY(m_window->showPage(QStringLiteral("audit")));
    QTRY_VERIFY_WITH_TIMEOUT(audit->model()->rowCount() >= 8, browserTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(audit->model()->data(audit->model()->index(0, AuditModel::ActionColumn)).toString(),
        QStringLiteral("approval_policy"), browserTimeoutMs);
    auto* keyDelegate = dynamic_cast<ElideDelegate*>(audit->view()->itemDelegateForColumn(AuditModel::KeyColumn));
    QVERIFY(keyDelegate);
    QCOMPARE(keyDelegate->mode(), Qt::ElideLeft);
    for (int column : { int(AuditModel::AtColumn), int(AuditModel::ActionColumn), int(AuditModel::ActorColumn) }) {
        const QString text = audit->model()->data(audit->model()->index(0, column)).toString();
        const int needed = audit->view()->fontMetrics().horizontalAdvance(text) + 8;
        QVERIFY2(audit->view()->columnWidth(column) >= needed,
            qPrintable(QStringLiteral("%1 needs %2 px, has %3").arg(text).arg(needed).arg(audit->view()->columnWidth(column))));
    }
}

QTEST_MAIN(TestPageState)
#include "tst_pagestate.moc"
