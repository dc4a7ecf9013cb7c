// Issue 42 in the console: a requeue that really runs. The requeue dialog (a key of the Tasks page)
// offers "Re-execute now" where the key's operation is re-drivable and a re-driver is online, says
// plainly why not otherwise, and queues a re-drive item with the requeue's audit entry; Apply to
// all starts a requeue job that re-executes, whose outcomes the Jobs page follows live as a worker
// takes and finishes the items (idem_redrive_take / idem_redrive_finish under a worker login); the
// Tasks detail follows a key's re-executions live and shows a stored request's content only to a
// holder of read_requests, redacted as the database returns it; the Connection page lists the new
// right. Screenshots of the requeue dialog and of the Jobs page go to $IDEM_REDRIVE_SCREENSHOTS
// (default: a folder in the temporary directory) for a person to look at.

#include <QtTest>

#include <QCheckBox>
#include <QDir>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTextBrowser>

#include <set>

#include <nlohmann/json.hpp>

#include "app/mainwindow.h"
#include "core/connection.h"
#include "models/bulkaction.h"
#include "models/consolesession.h"
#include "models/jobsmodel.h"
#include "models/profilestore.h"
#include "models/redrivewatch.h"
#include "models/taskbrowsermodel.h"
#include "operations/snapshot.h"
#include "operations/snapshotjson.h"
#include "operations/snapshotreport.h"
#include "tests/console/consolewindow_support.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "views/actiondialog.h"
#include "views/applyalldialog.h"
#include "views/consolewidget.h"
#include "views/jobswidget.h"
#include "views/language.h"
#include "views/refusalnote.h"
#include "views/statuspanel.h"
#include "views/taskbrowserwidget.h"
#include "views/taskdetailpane.h"

using namespace idem::console;
using namespace idem::test;

namespace {
constexpr const char* operatorRole = "idem_t_redrive_operator";
constexpr const char* workerRole = "idem_t_redrive_worker";
constexpr const char* readerRole = "idem_t_redrive_reader";
constexpr const char* password = "pw-redrive-ui";

// A statement that writes and answers (idem_redrive_take), committed.
template <typename... P> pqxx::result written(pqxx::connection& c, const std::string& sql, P&&... params)
{
    pqxx::work w(c);
    auto r = w.exec_params(sql, std::forward<P>(params)...);
    w.commit();
    return r;
}

std::string one(pqxx::connection& c, const std::string& sql)
{
    const auto r = querySql(c, sql);
    return r.empty() || r[0][0].is_null() ? "<null>" : r[0][0].as<std::string>();
}
} // namespace

class TestRedriveUi : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanup();
    void cleanupTestCase();
    void requeueOffersReexecutionAndQueuesIt();
    void detailFollowsTheKeysReexecution();
    void requestReadOnlyWithTheRight();
    void jobOutcomesFollowedLive();
    void snapshotCarriesReexecutions();
    void offlineRedriverSaysWhenItWasSeen();

private:
    void openWindow(const char* login = operatorRole);
    // The re-drivers report themselves (online: seen within 30 s): three of rx:charge, one of jx:charge.
    void seen();
    // A failed key of tenant:operation with its request stored (its digest the row's).
    void plant(const std::string& key, const std::string& request, bool stored = true);
    ActionDialog* openRequeue(const std::string& key);
    // The Tasks page on `key` alone, selected, its detail on the Re-execution tab.
    TaskDetailPane* showDetail(const std::string& key);
    TaskBrowserWidget* tasks() const { return m_window->console()->findChild<TaskBrowserWidget*>(); }
    JobsWidget* jobs() const { return m_window->jobsPage(); }
    QString shot(const QString& name) const { return QDir(m_shots).filePath(name); }

    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
    std::unique_ptr<pqxx::connection> m_worker;
    ConsoleWindow m_w;
    MainWindow* m_window = nullptr;
    QString m_shots;
};

void TestRedriveUi::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QSettings(QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console"))
        .clear();
    language::apply(QStringLiteral("en")); // English plurals: "3 workers of charge are online"
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("redrive_ui", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    createLoginRole(operatorRole, password, "idem_operator");
    createLoginRole(workerRole, password, "idem_worker");
    createLoginRole(readerRole, password, "idem_reader");
    execSql(*m_owner, std::string("GRANT idem_may_read_requests TO ") + readerRole);
    m_worker = idem::connect(loginDsn(m_db->dsn(), workerRole, password));
    // charge: re-drivable, its card field redacted, three re-drivers online; ship: re-drivable,
    // nobody online; mail: never registered.
    execSql(*m_worker, "SELECT * FROM idem.idem_redrive_register('rx', 'charge', 65536, ARRAY['card'])");
    execSql(*m_worker, "SELECT * FROM idem.idem_redrive_register('rx', 'ship')");
    execSql(*m_worker, "SELECT * FROM idem.idem_redrive_register('jx', 'charge')");
    m_shots = qEnvironmentVariable("IDEM_REDRIVE_SCREENSHOTS", QDir::temp().filePath(QStringLiteral("idem-redrive")));
    QVERIFY(QDir().mkpath(m_shots));
}

void TestRedriveUi::cleanup()
{
    m_window = nullptr;
    m_w.reset();
}

void TestRedriveUi::cleanupTestCase()
{
    m_worker.reset();
    m_owner.reset();
    m_db.reset();
}

void TestRedriveUi::openWindow(const char* login)
{
    openConsoleWindow(m_w, loginDsn(m_db->dsn(), login, password));
    m_window = m_w.window.get();
    m_window->resize(1400, 900);
    jobs()->setPollInterval(250);
}

void TestRedriveUi::seen()
{
    for (const char* w : { "w1", "w2", "w3" })
        execSql(*m_worker, "SELECT * FROM idem.idem_redriver_seen('rx', 'charge', $1, '1.0')", std::string(w));
    execSql(*m_worker, "SELECT * FROM idem.idem_redriver_seen('jx', 'charge', 'w1', '1.0')");
}

void TestRedriveUi::plant(const std::string& key, const std::string& request, bool stored)
{
    execSql(*m_owner,
        "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts,"
        " error_class, error_message, created_at, updated_at, errors)"
        " VALUES ($1, 'v1:' || encode(sha256(convert_to($2, 'UTF8')), 'hex'), 'failed', 5, 5, 'retryable',"
        " 'gateway timeout', now() - interval '1 hour', now() - interval '1 minute', '[]')",
        key, request);
    if (stored)
        execSql(*m_owner,
            "INSERT INTO idem.idem_stored_requests (idempotency_key, request, request_hash, bytes, stored_at)"
            " SELECT idempotency_key, $2, request_hash, octet_length($2), now() FROM idem.task_idempotency"
            " WHERE idempotency_key = $1",
            key, request);
}

ActionDialog* TestRedriveUi::openRequeue(const std::string& key)
{
    if (!m_window->showPage(QStringLiteral("tasks")))
        return nullptr;
    QSignalSpy pages(tasks()->model(), &TaskBrowserModel::pageLoaded);
    idem::TaskFilter f;
    f.keyPrefix = key;
    tasks()->applyFilter(f);
    int row = -1;
    if (!QTest::qWaitFor(
            [&] {
                row = tasks()->model()->rowOfKey(QString::fromStdString(key));
                return row >= 0 && !tasks()->model()->busy();
            },
            browserTimeoutMs))
        return nullptr;
    auto* view = tasks()->view();
    view->clearSelection();
    QTest::mouseClick(
        view->viewport(), Qt::LeftButton, Qt::NoModifier, view->visualRect(tasks()->model()->index(row, 0)).center());
    auto* button = tasks()->findChild<QPushButton*>(QStringLiteral("requeueButton"));
    if (!button || !QTest::qWaitFor([&] { return button->isEnabled(); }, browserTimeoutMs))
        return nullptr;
    QTest::mouseClick(button, Qt::LeftButton);
    for (auto* d : tasks()->findChildren<ActionDialog*>())
        if (d->isVisible())
            return d;
    return nullptr;
}

TaskDetailPane* TestRedriveUi::showDetail(const std::string& key)
{
    if (!m_window->showPage(QStringLiteral("tasks")))
        return nullptr;
    idem::TaskFilter f;
    f.keyPrefix = key;
    tasks()->applyFilter(f);
    const QString k = QString::fromStdString(key);
    if (!QTest::qWaitFor([&] { return tasks()->model()->rowOfKey(k) >= 0; }, browserTimeoutMs))
        return nullptr;
    tasks()->view()->selectRow(tasks()->model()->rowOfKey(k));
    auto* pane = tasks()->detail();
    pane->tabs()->setCurrentIndex(pane->redriveTab());
    return pane;
}

// The single requeue: offered where a re-driver of the key's operation is online, said plainly
// (and greyed out) where none is; with it, a re-drive item queued with the requeue's audit entry.
void TestRedriveUi::requeueOffersReexecutionAndQueuesIt()
{
    plant("rx:charge:k1", R"({"amount":5,"card":"4111111111111111","currency":"EUR"})");
    plant("rx:ship:k1", R"({"parcel":7})");
    plant("rx:mail:k1", R"({"to":"a@example.org"})", false);
    seen();
    openWindow();

    // ship is registered, but no re-driver of it is online.
    auto* ship = openRequeue("rx:ship:k1");
    QVERIFY(ship);
    QVERIFY(ship->reexecuteBox());
    QTRY_COMPARE_WITH_TIMEOUT(ship->reexecuteRefusal()->text(),
        QStringLiteral("No re-driver for ship is online: the key waits for its client"), browserTimeoutMs);
    QVERIFY(ship->reexecuteRefusal()->isVisible());
    QVERIFY(!ship->reexecuteBox()->isEnabled());
    QVERIFY(!ship->reexecuteOffer()->isVisible());
    ship->reject();

    // mail was never registered: no request is stored for it.
    auto* mail = openRequeue("rx:mail:k1");
    QVERIFY(mail);
    QTRY_VERIFY_WITH_TIMEOUT(
        mail->reexecuteRefusal()->text().startsWith(QStringLiteral("mail is not re-drivable")), browserTimeoutMs);
    QVERIFY2(mail->reexecuteRefusal()->text().endsWith(QStringLiteral("the key waits for its client")),
        qPrintable(mail->reexecuteRefusal()->text()));
    QVERIFY(!mail->reexecuteBox()->isEnabled());
    mail->reject();

    // charge: three re-drivers online.
    auto* dialog = openRequeue("rx:charge:k1");
    QVERIFY(dialog);
    QTRY_COMPARE_WITH_TIMEOUT(
        dialog->reexecuteOffer()->text(), QStringLiteral("3 workers of charge are online"), browserTimeoutMs);
    QVERIFY(dialog->reexecuteOffer()->isVisible());
    QVERIFY(!dialog->reexecuteRefusal()->isVisible());
    QVERIFY(dialog->reexecuteBox()->isEnabled());
    QTest::mouseClick(dialog->reexecuteBox(), Qt::LeftButton);
    QVERIFY(dialog->reexecuteBox()->isChecked());
    QVERIFY2(dialog->plan()->toPlainText().contains(QStringLiteral("Re-executed now: 1 record")),
        qPrintable(dialog->plan()->toPlainText()));
    dialog->reasonEdit()->insertPlainText(QStringLiteral("gateway back, INC-42: run it again"));
    QVERIFY(QTest::qWaitForWindowExposed(dialog));
    QVERIFY(dialog->grab().save(shot(QStringLiteral("requeue-reexecute.png"))));
    QTest::mouseClick(dialog->runButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(dialog->finished(), browserTimeoutMs);
    auto* results = dialog->results();
    QCOMPARE(results->data(results->index(0, BulkActionModel::OutcomeColumn)).toString(), QStringLiteral("applied"));
    QVERIFY2(results->data(results->index(0, BulkActionModel::MessageColumn))
                 .toString()
                 .contains(QStringLiteral("re-execution queued")),
        qPrintable(results->data(results->index(0, BulkActionModel::MessageColumn)).toString()));
    QVERIFY(results->result(0).redriveItemId.has_value());

    // In the database: requeued, one audit entry saying so, one queued item carrying that entry.
    QCOMPARE(one(*m_owner, "SELECT status FROM idem.task_idempotency WHERE idempotency_key = 'rx:charge:k1'"),
        std::string("retryable_failed"));
    QCOMPARE(one(*m_owner,
                 "SELECT count(*) || ' ' || string_agg(after_image ->> 'redrive', ',') FROM idem.task_idempotency_audit"
                 " WHERE idempotency_key = 'rx:charge:k1' AND action = 'requeue'"),
        std::string("1 true"));
    QCOMPARE(one(*m_owner,
                 "SELECT i.id || ' ' || i.state || ' ' || i.requested_role || ' ' || (i.audit_id = a.id)"
                 " FROM idem.idem_redrive_items i JOIN idem.task_idempotency_audit a ON a.idempotency_key ="
                 " i.idempotency_key AND a.action = 'requeue' WHERE i.idempotency_key = 'rx:charge:k1'"),
        std::to_string(*results->result(0).redriveItemId) + " queued " + operatorRole + " true");
    // Nothing queued for the keys that could not be re-executed.
    QCOMPARE(one(*m_owner, "SELECT count(*) FROM idem.idem_redrive_items WHERE idempotency_key <> 'rx:charge:k1'"),
        std::string("0"));
    dialog->accept();
}

// The Tasks detail: the key's re-executions followed live (queued, running, succeeded) and that
// a request is stored, without its content for a login without read_requests.
void TestRedriveUi::detailFollowsTheKeysReexecution()
{
    // The item the requeue above queued.
    QCOMPARE(one(*m_owner, "SELECT count(*) FROM idem.idem_redrive_items WHERE idempotency_key = 'rx:charge:k1'"),
        std::string("1"));
    openWindow();
    auto* pane = showDetail("rx:charge:k1");
    QVERIFY(pane);
    auto* table = pane->redriveTable();
    const auto stateOf = [table] { return table->rowCount() == 1 ? table->item(0, 1)->text() : QString(); };
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(), QStringLiteral("queued"), browserTimeoutMs);
    QCOMPARE(pane->tabs()->tabText(pane->redriveTab()), QStringLiteral("Re-execution (1, 1 open)"));
    const std::string bytes
        = one(*m_owner, "SELECT bytes FROM idem.idem_stored_requests WHERE idempotency_key = 'rx:charge:k1'");
    QCOMPARE(pane->requestInfo()->text(),
        QStringLiteral("A request is stored (%1 bytes); reading it needs the read_requests right.")
            .arg(QString::fromStdString(bytes)));
    QVERIFY(!pane->requestView()->isVisible());

    // A re-driver takes it, then finishes it: the pane follows without a click.
    seen();
    const auto taken
        = written(*m_worker, "SELECT item_id, request FROM idem.idem_redrive_take('rx', 'charge', 'w2', 10, 60000)");
    QCOMPARE(taken.size(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(), QStringLiteral("running"), browserTimeoutMs);
    QCOMPARE(table->item(0, 2)->text(), QStringLiteral("w2"));
    execSql(*m_worker, "SELECT * FROM idem.idem_redrive_finish($1, 'w2', 'succeeded')", taken[0][0].as<std::int64_t>());
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(), QStringLiteral("succeeded"), browserTimeoutMs);
    QVERIFY(!table->item(0, 4)->text().isEmpty()); // finished at
    QCOMPARE(pane->tabs()->tabText(pane->redriveTab()), QStringLiteral("Re-execution (1)"));
    QVERIFY(m_window->grab().save(shot(QStringLiteral("tasks-reexecution.png"))));
}

// The request's content: for a holder of read_requests, with the operation's redacted field as
// the database returns it; the Connection page lists the right like the others.
void TestRedriveUi::requestReadOnlyWithTheRight()
{
    plant("rx:charge:k2", R"({"amount":12,"card":"5500000000000004","currency":"EUR"})");
    openWindow(readerRole);
    QTRY_VERIFY_WITH_TIMEOUT(
        m_window->console()->statusPanel()->rightsText().contains(QStringLiteral("read_requests")), browserTimeoutMs);
    QVERIFY2(m_window->console()
                 ->statusPanel()
                 ->rightsText()
                 .split(QLatin1Char('\n'))
                 .contains(QStringLiteral("read_requests: yes (idem_may_read_requests)")),
        qPrintable(m_window->console()->statusPanel()->rightsText()));
    auto* pane = showDetail("rx:charge:k2");
    QVERIFY(pane);
    QTRY_VERIFY_WITH_TIMEOUT(pane->requestView()->isVisible(), browserTimeoutMs);
    const QString shown = pane->requestView()->toPlainText();
    QVERIFY2(shown.contains(QStringLiteral("\"card\": \"[redacted]\"")), qPrintable(shown));
    QVERIFY2(shown.contains(QStringLiteral("\"amount\": 12")), qPrintable(shown));
    QVERIFY2(!shown.contains(QStringLiteral("5500")), qPrintable(shown));
    QVERIFY2(pane->requestInfo()->text().startsWith(QStringLiteral("A request is stored (")),
        qPrintable(pane->requestInfo()->text()));
    QCOMPARE(pane->redriveTable()->rowCount(), 0);
    QVERIFY(m_window->grab().save(shot(QStringLiteral("tasks-request.png"))));
    cleanup();
    // The operator does not hold it (idem_operator is no member of idem_may_read_requests).
    openWindow();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->console()
                                 ->statusPanel()
                                 ->rightsText()
                                 .split(QLatin1Char('\n'))
                                 .contains(QStringLiteral("read_requests: no (idem_may_read_requests)")),
        browserTimeoutMs);
}

// Apply to all with re-execution: a requeue job whose outcomes the Jobs page follows live as a
// re-driver takes and finishes its items.
void TestRedriveUi::jobOutcomesFollowedLive()
{
    for (int i = 1; i <= 5; ++i)
        plant("jx:charge:k" + std::to_string(i), R"({"amount":)" + std::to_string(i) + "}");
    seen();
    openWindow();
    QVERIFY(m_window->showPage(QStringLiteral("tasks")));
    idem::TaskFilter filter;
    filter.tenant = "jx";
    filter.operation = "charge";
    tasks()->applyFilter(filter);
    QTRY_VERIFY_WITH_TIMEOUT(
        tasks()->applyAllButton()->isEnabled() && tasks()->model()->rowCount() == 5, browserTimeoutMs);
    QTest::mouseClick(tasks()->applyAllButton(), Qt::LeftButton);
    ApplyAllDialog* dialog = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT((dialog = m_window->findChild<ApplyAllDialog*>()) && dialog->preview(), browserTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(
        dialog->reexecuteOffer()->text(), QStringLiteral("1 worker of charge is online"), browserTimeoutMs);
    QVERIFY(dialog->reexecuteBox()->isEnabled());
    QTest::mouseClick(dialog->reexecuteBox(), Qt::LeftButton);
    dialog->reasonEdit()->insertPlainText(QStringLiteral("INC-42: re-execute the gateway failures"));
    QVERIFY2(dialog->planLabel()->text().contains(QStringLiteral("Re-execution: each requeued key")),
        qPrintable(dialog->planLabel()->text()));
    QVERIFY(dialog->startButton()->isEnabled());
    QTest::mouseClick(dialog->startButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(dialog->startedJob().has_value(), browserTimeoutMs);
    const std::int64_t id = *dialog->startedJob();
    dialog->close();
    QCOMPARE(one(*m_owner, "SELECT redrive FROM idem.idem_jobs WHERE id = " + std::to_string(id)), std::string("t"));

    // The Jobs page reads every job's outcomes in one call (idem_redrive_outcomes_of, schema v27),
    // not one idem_redrive_outcomes call per job: the figures below come without the latter.
    execSql(*m_owner, "REVOKE EXECUTE ON FUNCTION idem.idem_redrive_outcomes(bigint) FROM idem_reader");
    struct Regrant {
        pqxx::connection& owner;
        ~Regrant() { execSql(owner, "GRANT EXECUTE ON FUNCTION idem.idem_redrive_outcomes(bigint) TO idem_reader"); }
    } regrant { *m_owner };
    QVERIFY(m_window->showPage(QStringLiteral("jobs")));
    jobs()->selectJob(id);
    QTRY_COMPARE_WITH_TIMEOUT(jobs()->selectedJob(), id, browserTimeoutMs);
    const auto figure = [&] {
        const int row = jobs()->model()->rowOfJob(id);
        return row < 0 ? QString() : jobs()->model()->index(row, JobsModel::ReexecutionColumn).data().toString();
    };
    QTRY_COMPARE_WITH_TIMEOUT(figure(), QStringLiteral("5 requeued: 5 queued"), 2 * browserTimeoutMs);
    QCOMPARE(one(*m_owner,
                 "SELECT count(*) FROM idem.idem_redrive_items i JOIN idem.task_idempotency_audit a ON a.id = "
                 "i.audit_id WHERE i.job_id = "
                     + std::to_string(id) + " AND i.state = 'queued' AND a.action = 'requeue'"),
        std::string("5"));

    // A re-driver takes three and finishes them: two succeed, one fails.
    seen();
    const auto taken = written(*m_worker, "SELECT item_id FROM idem.idem_redrive_take('jx', 'charge', 'w1', 3, 60000)");
    QCOMPARE(taken.size(), 3);
    QTRY_COMPARE_WITH_TIMEOUT(figure(), QStringLiteral("5 requeued: 3 running, 2 queued"), browserTimeoutMs);
    execSql(*m_worker, "SELECT * FROM idem.idem_redrive_finish($1, 'w1', 'succeeded')", taken[0][0].as<std::int64_t>());
    execSql(*m_worker, "SELECT * FROM idem.idem_redrive_finish($1, 'w1', 'succeeded')", taken[1][0].as<std::int64_t>());
    execSql(*m_worker, "SELECT * FROM idem.idem_redrive_finish($1, 'w1', 'failed', 'card declined')",
        taken[2][0].as<std::int64_t>());
    QTRY_COMPARE_WITH_TIMEOUT(
        figure(), QStringLiteral("5 requeued: 2 succeeded, 1 failed, 2 queued"), browserTimeoutMs);
    QVERIFY2(jobs()->detailLabel()->text().contains(
                 QStringLiteral("Re-executed: 5 requeued: 2 succeeded, 1 failed, 2 queued")),
        qPrintable(jobs()->detailLabel()->text()));
    const int row = jobs()->model()->rowOfJob(id);
    QVERIFY2(jobs()
                 ->model()
                 ->index(row, JobsModel::ActionColumn)
                 .data()
                 .toString()
                 .startsWith(QStringLiteral("requeue and re-execute")),
        qPrintable(jobs()->model()->index(row, JobsModel::ActionColumn).data().toString()));
    QVERIFY(m_window->grab().save(shot(QStringLiteral("jobs-reexecution.png"))));
}

// Incident snapshots carry the re-drive items and who re-drives; a request's content only for an
// exporter holding read_requests, and never in a redacted snapshot.
void TestRedriveUi::snapshotCarriesReexecutions()
{
    seen();
    auto operatorLogin = idem::connect(loginDsn(m_db->dsn(), operatorRole, password));
    auto readerLogin = idem::connect(loginDsn(m_db->dsn(), readerRole, password));
    const auto item = [](const idem::SnapshotData& d, const std::string& key) -> const idem::SnapshotRedriveItem* {
        for (const auto& i : d.redrive->rows)
            if (i.key == key)
                return &i;
        return nullptr;
    };
    const auto mine = idem::readSnapshot(*operatorLogin, {}, {});
    QVERIFY(mine.redrive);
    QCOMPARE(mine.redrive->total, std::int64_t(6)); // rx:charge:k1 and the job's five
    QVERIFY(!mine.redrive->requestsReadable);
    const auto* k1 = item(mine, "rx:charge:k1");
    QVERIFY(k1);
    QCOMPARE(k1->state, std::string("succeeded"));
    QCOMPARE(k1->worker.value_or(""), std::string("w2"));
    QVERIFY(k1->requestStored && k1->requestBytes.value_or(0) > 0);
    QVERIFY(!k1->request);
    for (const auto& i : mine.redrive->rows)
        QVERIFY2(!i.request, i.key.c_str());
    std::set<std::string> online;
    for (const auto& w : mine.redrive->redrivers)
        if (w.online)
            online.insert(w.tenant + ":" + w.operation + ":" + w.worker);
    QVERIFY(online.count("rx:charge:w1") && online.count("rx:charge:w3") && online.count("jx:charge:w1"));
    const auto json = idem::snapshotToJson(mine);
    QVERIFY(json.find("4111111111111111") == std::string::npos);
    QCOMPARE(idem::snapshotToJson(idem::snapshotFromJson(json)), json);
    QVERIFY(idem::snapshotReportHtml(mine, {}).find("<h2>Re-executions: 6</h2>") != std::string::npos);

    // The holder of read_requests: the content, redacted as the database returns it.
    const auto theirs = idem::readSnapshot(*readerLogin, {}, {});
    QVERIFY(theirs.redrive->requestsReadable);
    const auto* r1 = item(theirs, "rx:charge:k1");
    QVERIFY(r1 && r1->request);
    const auto request = nlohmann::json::parse(*r1->request);
    QCOMPARE(request["card"], "[redacted]");
    QCOMPARE(request["amount"], 5);
    // Redacted for sharing: no content whoever exports it.
    idem::SnapshotOptions redacted;
    redacted.redact = true;
    const auto shared = idem::readSnapshot(*readerLogin, redacted, {});
    QVERIFY(!shared.redrive->requestsReadable);
    for (const auto& i : shared.redrive->rows)
        QVERIFY2(!i.request, i.key.c_str());
}

QTEST_MAIN(TestRedriveUi)
// A re-driver that went away is named with when it was last seen (schema v27): "No re-driver for
// ship is online (w-away was last seen 3 min 20 s ago, at …): the key waits for its client".
void TestRedriveUi::offlineRedriverSaysWhenItWasSeen()
{
    execSql(*m_worker, "SELECT * FROM idem.idem_redriver_seen('rx', 'ship', 'w-away', '1')");
    execSql(
        *m_owner, "UPDATE idem.idem_redrivers SET last_seen = now() - interval '200 seconds' WHERE worker = 'w-away'");
    const auto st = idem::readRedriveStatus(*m_owner, idem::SchemaName(), "rx", "ship");
    QCOMPARE(st.size(), std::size_t(1));
    const QString text = redriveOfferText("ship", st[0]);
    QVERIFY2(text.startsWith(QStringLiteral("No re-driver for ship is online (w-away was last seen 3 min 2")),
        qPrintable(text));
    QVERIFY2(text.endsWith(QStringLiteral("): the key waits for its client")), qPrintable(text));
    execSql(*m_owner, "DELETE FROM idem.idem_redrivers WHERE worker = 'w-away'");
}

#include "tst_redrive_ui.moc"
