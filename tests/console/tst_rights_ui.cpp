#include <QtTest>

#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/connection.h"
#include "models/taskbrowsermodel.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "models/approvalsmodel.h"
#include "views/approvalsdialog.h"
#include "views/pausedialog.h"
#include "views/statuspanel.h"
#include "views/taskbrowserwidget.h"

using idem::console::ApprovalsDialog;
using idem::console::ApprovalsModel;

namespace {
QString cellText(const ApprovalsDialog& dialog, int row, int column)
{
    return dialog.model()->index(row, column).data().toString();
}
int rowOf(const ApprovalsDialog& dialog, std::int64_t request)
{
    for (int i = 0; i < dialog.model()->rowCount(); ++i)
        if (dialog.model()->request(i).id == request)
            return i;
    return -1;
}
} // namespace
using idem::console::ConsoleSession;
using idem::console::TaskBrowserModel;
using idem::console::TaskBrowserWidget;
using namespace idem::test;

namespace {
// Cluster-wide login roles, named for this test alone.
constexpr const char* requeuer = "idem_t_rights_ui_requeuer"; // reads, requeues, approves
constexpr const char* requester = "idem_t_rights_ui_operator"; // idem_operator
constexpr const char* reader = "idem_t_rights_ui_reader";
constexpr const char* password = "pw-rights-ui";
const std::vector<std::string> idemRoles { "idem_reader", "idem_operator", "idem_may_requeue", "idem_may_release",
    "idem_may_fail", "idem_may_pause", "idem_may_purge", "idem_may_approve" };

void screenshot(QWidget* w, const QString& name)
{
    // IDEM_SCREENSHOT_DIR: the pictures, to look at (not checked).
    const QString dir = qEnvironmentVariable("IDEM_SCREENSHOT_DIR");
    if (!dir.isEmpty())
        w->grab().save(dir + QLatin1Char('/') + name);
}
} // namespace

// The console shows what the connected role may do (schema v21, one role per right): what it may
// not is greyed out with the reason; jobs waiting for a second person are listed to those who
// may approve, and approved from the list.
class TestRightsUi : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void tasksPageGreysOutWhatTheRoleMayNotDo();
    void connectionPageListsTheRights();
    void approvalsAreListedAndApproved();
    void changeRequestsListedAndApproved();
    void readerCannotApprove();

private:
    std::string dsnOf(const char* role) { return dsnWith(m_db->dsn(), { { "user", role }, { "password", password } }); }
    std::int64_t startJob(const char* role, const std::string& prefix)
    {
        auto c = idem::connect(dsnOf(role));
        pqxx::work w(*c);
        const auto id = w.exec_params("SELECT job_id FROM idem.idem_job_start('requeue', $1::jsonb, 100, 'gateway fixed')",
                             "{\"key_prefix\": \"" + prefix + "\"}")
                            .at(0)
                            .at(0)
                            .as<std::int64_t>();
        w.commit();
        return id;
    }

    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
};

void TestRightsUi::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("rights_ui", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), true });
    auto admin = idem::connect(adminDsn());
    const std::pair<const char*, std::vector<std::string>> logins[] = {
        { requeuer, { "idem_reader", "idem_may_requeue", "idem_may_approve" } },
        { requester, { "idem_operator" } },
        { reader, { "idem_reader" } },
    };
    for (const auto& [name, roles] : logins) {
        createLoginRole(name, password, "");
        pqxx::work w(*admin);
        for (const auto& r : idemRoles)
            w.exec("REVOKE " + r + " FROM " + name);
        for (const auto& r : roles)
            w.exec("GRANT " + r + " TO " + name);
        w.commit();
    }
}

void TestRightsUi::cleanupTestCase()
{
    m_conn.reset();
    m_db.reset();
}

// A role that may requeue and not release or mark failed: Requeue is enabled on a selection of
// rows each action applies to, Release and Mark failed are greyed out, their tooltips naming the
// right and the GRANT; pausing is refused to it the same way.
void TestRightsUi::tasksPageGreysOutWhatTheRoleMayNotDo()
{
    plantTask(*m_conn, "ui:charge:failed", "failed", 5, 5, "permanent");
    plantTask(*m_conn, "ui:charge:busy", "processing", 1, 5, nullptr, 300);
    ConsoleSession session;
    QVERIFY(connectSession(session, dsnOf(requeuer)));
    const auto& rights = session.serverInfo().rights;
    QVERIFY(rights.perRight());
    QVERIFY(rights.may(QStringLiteral("requeue")));
    QVERIFY(!rights.may(QStringLiteral("release")));
    QCOMPARE(session.serverInfo().privilegeText(), QStringLiteral("rights: read, requeue, approve"));

    QWidget page;
    auto* layout = new QVBoxLayout(&page);
    auto* widget = new TaskBrowserWidget(&session, &session);
    auto* tip = new QLabel;
    tip->setWordWrap(true);
    layout->addWidget(widget, 1);
    layout->addWidget(tip);
    page.resize(1200, 700);
    page.show();
    QSignalSpy pages(widget->model(), &TaskBrowserModel::pageLoaded);
    idem::TaskFilter f;
    f.keyPrefix = "ui:";
    widget->applyFilter(f);
    QVERIFY(QTest::qWaitFor([&] { return !pages.isEmpty() && !widget->model()->busy(); }, browserTimeoutMs));
    QCOMPARE(widget->model()->rowCount(), 2);
    widget->view()->selectAll();
    auto* requeue = widget->findChild<QPushButton*>(QStringLiteral("requeueButton"));
    auto* release = widget->findChild<QPushButton*>(QStringLiteral("releaseButton"));
    auto* fail = widget->findChild<QPushButton*>(QStringLiteral("failButton"));
    QVERIFY(requeue->isEnabled());
    QVERIFY(!release->isEnabled());
    QVERIFY(!fail->isEnabled());
    QVERIFY2(release->toolTip().contains(QStringLiteral("Role idem_t_rights_ui_requeuer does not hold the release right"))
            && release->toolTip().contains(QStringLiteral("GRANT idem_may_release TO idem_t_rights_ui_requeuer")),
        qPrintable(release->toolTip()));
    QVERIFY2(fail->toolTip().contains(QStringLiteral("the fail right")), qPrintable(fail->toolTip()));
    // Said beside the greyed-out buttons too, not only on hover (issue 41 item 6).
    auto* beside = widget->findChild<QLabel*>(QStringLiteral("actionRefusal"));
    QVERIFY2(beside, "a line beside the actions says why they are greyed out");
    QVERIFY(beside->isVisible());
    QVERIFY2(beside->text().contains(QStringLiteral("Role idem_t_rights_ui_requeuer does not hold the release right"))
            && beside->text().contains(QStringLiteral("GRANT idem_may_release TO idem_t_rights_ui_requeuer"))
            && beside->text().contains(QStringLiteral("the fail right"))
            && !beside->text().contains(QStringLiteral("the requeue right")),
        qPrintable(beside->text()));
    QVERIFY(beside->geometry().bottom() <= widget->height());
    const QString pause = idem::console::pauseRefusal(&session);
    QVERIFY2(pause.contains(QStringLiteral("does not hold the pause right"))
            && pause.contains(QStringLiteral("GRANT idem_may_pause TO idem_t_rights_ui_requeuer")),
        qPrintable(pause));
    tip->setText(QStringLiteral("Release (greyed out), tooltip: ") + release->toolTip()
        + QStringLiteral("\nPause intake, tooltip: ") + pause);
    QCoreApplication::processEvents();
    screenshot(&page, QStringLiteral("rights-tasks-greyed.png"));

    // An operator: every action of the selection, pausing too.
    ConsoleSession op;
    QVERIFY(connectSession(op, dsnOf(requester)));
    TaskBrowserWidget opWidget(&op, &op);
    opWidget.show();
    QSignalSpy opPages(opWidget.model(), &TaskBrowserModel::pageLoaded);
    opWidget.applyFilter(f);
    QVERIFY(QTest::qWaitFor([&] { return !opPages.isEmpty() && !opWidget.model()->busy(); }, browserTimeoutMs));
    opWidget.view()->selectAll();
    for (const char* name : { "requeueButton", "releaseButton", "failButton" })
        QVERIFY2(opWidget.findChild<QPushButton*>(QString::fromLatin1(name))->isEnabled(), name);
    QVERIFY(idem::console::pauseRefusal(&op).isEmpty());
}

// Two jobs wait: the operator's and the approver's own. The list shows both; approving the
// operator's lands (the job active, approved by this login, an audit entry); approving its own
// is refused in the server's words and changes nothing.
// The Connection page lists the login's rights as idemctl rights prints them (issue 41 item 6).
void TestRightsUi::connectionPageListsTheRights()
{
    ConsoleSession session;
    QVERIFY(connectSession(session, dsnOf(requeuer)));
    idem::console::StatusPanel panel(&session);
    panel.resize(700, 600);
    panel.show();
    QTRY_VERIFY_WITH_TIMEOUT(panel.rightsText().contains(QStringLiteral("requeue")), browserTimeoutMs);
    const QString text = panel.rightsText();
    for (const QString& line : { QStringLiteral("read: yes (idem_reader)"),
             QStringLiteral("requeue: yes (idem_may_requeue)"), QStringLiteral("release: no (idem_may_release)"),
             QStringLiteral("fail: no (idem_may_fail)"), QStringLiteral("pause: no (idem_may_pause)"),
             QStringLiteral("purge: no (idem_may_purge)"), QStringLiteral("approve: yes (idem_may_approve)") })
        QVERIFY2(text.split(QLatin1Char('\n')).contains(line), qPrintable(text + QStringLiteral(" lacks ") + line));
    // As the database has them for the login: these three held, every other right of the list not,
    // each a line of the panel.
    auto login = idem::connect(dsnOf(requeuer));
    const auto mine = querySql(*login,
        "SELECT string_agg(right_name, ',' ORDER BY right_name) FILTER (WHERE granted), count(*) FROM idem.idem_rights()");
    QCOMPARE(mine[0][0].as<std::string>(), std::string("approve,read,requeue"));
    QCOMPARE(text.split(QLatin1Char('\n')).size(), mine[0][1].as<int>());
    auto* value = panel.findChild<QLabel*>(QStringLiteral("rightsValue"));
    QVERIFY(value && value->isVisible());
    screenshot(&panel, QStringLiteral("rights-connection.png"));
}

void TestRightsUi::approvalsAreListedAndApproved()
{
    for (int i = 1; i <= 3; ++i) {
        plantTask(*m_conn, "appr-op:charge:k" + std::to_string(i), "failed", 5, 5, "permanent");
        plantTask(*m_conn, "appr-own:charge:k" + std::to_string(i), "failed", 5, 5, "permanent");
    }
    execSql(*m_conn, "SELECT idem.idem_set_approval(2, 3600, 'two-person rule', 'admin')");
    const auto theirs = startJob(requester, "appr-op:");
    const auto mine = startJob(requeuer, "appr-own:");

    ConsoleSession session;
    QVERIFY(connectSession(session, dsnOf(requeuer)));
    ApprovalsDialog dialog(&session);
    QSignalSpy loaded(&dialog, &ApprovalsDialog::loaded);
    dialog.show();
    QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty() && !dialog.loading(); }, browserTimeoutMs));
    QCOMPARE(dialog.pendingCount(), 2);
    // Schema v28: one list of requests; a job's names the job and what it acts on.
    QVERIFY2(cellText(dialog, 0, ApprovalsModel::WhatColumn)
                 .startsWith(QStringLiteral("job %1: requeue (+1) of the 3 row(s) matched by").arg(theirs)),
        qPrintable(cellText(dialog, 0, ApprovalsModel::WhatColumn)));
    QCOMPARE(cellText(dialog, 0, ApprovalsModel::ByColumn), QStringLiteral("idem_t_rights_ui_operator (unknown)"));
    QVERIFY(!dialog.approveButton()->isEnabled()); // nothing selected, no reason
    dialog.table()->selectRow(0);
    QVERIFY(!dialog.approveButton()->isEnabled());
    dialog.reasonEdit()->setText(QStringLiteral("checked with the gateway team"));
    QVERIFY(dialog.approveButton()->isEnabled());
    screenshot(&dialog, QStringLiteral("rights-approvals.png"));

    loaded.clear();
    QTest::mouseClick(dialog.approveButton(), Qt::LeftButton);
    QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty() && !dialog.loading(); }, browserTimeoutMs));
    QVERIFY2(dialog.resultLabel()->text().startsWith(QStringLiteral("Job %1 approved: the console that requested it runs it now").arg(theirs)),
        qPrintable(dialog.resultLabel()->text()));
    QCOMPARE(querySql(*m_conn, "SELECT j.state || ' ' || r.approved_login FROM idem.idem_jobs j JOIN"
                               " idem.idem_approval_requests r ON r.job_id = j.id WHERE j.id = $1", theirs)
                 .at(0)
                 .at(0)
                 .as<std::string>(),
        std::string("active idem_t_rights_ui_requeuer"));
    // Approved: listed still (it may run until its approval expires), greyed.
    QCOMPARE(dialog.pendingCount(), 2);
    dialog.table()->selectRow(0);
    QVERIFY(!dialog.approveButton()->isEnabled());

    // Its own request: refused in words, nothing written.
    const auto auditBefore = querySql(*m_conn, "SELECT count(*) FROM idem.task_idempotency_audit").at(0).at(0).as<long>();
    dialog.table()->selectRow(1);
    dialog.reasonEdit()->setText(QStringLiteral("my own"));
    QTest::mouseClick(dialog.approveButton(), Qt::LeftButton);
    QVERIFY(QTest::qWaitFor([&] { return dialog.resultLabel()->text().startsWith(QStringLiteral("Not approved")); }, browserTimeoutMs));
    QVERIFY2(dialog.resultLabel()->text().contains(
                 QStringLiteral("login idem_t_rights_ui_requeuer cannot approve job %1: it was requested by login "
                                "idem_t_rights_ui_requeuer")
                     .arg(mine)),
        qPrintable(dialog.resultLabel()->text()));
    QCOMPARE(querySql(*m_conn, "SELECT count(*) FROM idem.task_idempotency_audit").at(0).at(0).as<long>(), auditBefore);
    QCOMPARE(querySql(*m_conn, "SELECT state FROM idem.idem_jobs WHERE id = $1", mine).at(0).at(0).as<std::string>(),
        std::string("awaiting_approval"));
    screenshot(&dialog, QStringLiteral("rights-approvals-own-refused.png"));
}

// Schema v22: a retention change and a manual purge requested by the operator wait beside the
// jobs, with what, who, the spec sha256 and until when; the expired one is greyed with why; the
// other is approved from the list (the request approved by this login, an audit entry).
void TestRightsUi::changeRequestsListedAndApproved()
{
    execSql(*m_conn, "SELECT idem.idem_set_change_approval(true, true, 3600, 'four eyes on deletes', 'admin')");
    std::int64_t retention = 0, purge = 0;
    std::string retentionSha;
    {
        auto c = idem::connect(dsnOf(requester));
        pqxx::work w(*c);
        const auto r = w.exec("SELECT request_id, spec_sha256 FROM idem.idem_request_retention('set', 'charge', 172800,"
                              " 'smaller table', 'ann')");
        retention = r.at(0).at(0).as<std::int64_t>();
        retentionSha = r.at(0).at(1).as<std::string>();
        purge = w.exec("SELECT request_id FROM idem.idem_request_purge(500, 0, 0.5, 'disk at 85%', 'ann')")
                    .at(0)
                    .at(0)
                    .as<std::int64_t>();
        // One more, waiting: the picture shows a purge to approve beside the jobs.
        w.exec("SELECT request_id FROM idem.idem_request_purge(2000, 600, 0.2, 'disk at 90%', 'ann')");
        w.commit();
    }
    execSql(*m_conn,
        "UPDATE idem.idem_approval_requests SET approvable_until = now() - interval '1 second' WHERE id = "
            + std::to_string(purge));

    ConsoleSession session;
    QVERIFY(connectSession(session, dsnOf(requeuer)));
    ApprovalsDialog dialog(&session);
    QSignalSpy loaded(&dialog, &ApprovalsDialog::loaded);
    dialog.show();
    QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty() && !dialog.loading(); }, browserTimeoutMs));
    // Beside the jobs' requests (the test before left two), in one list.
    const int r = rowOf(dialog, retention), p = rowOf(dialog, purge);
    QVERIFY(r >= 0 && p >= 0);
    QCOMPARE(cellText(dialog, r, ApprovalsModel::RequestColumn), QString::number(retention));
    QCOMPARE(cellText(dialog, r, ApprovalsModel::WhatColumn), QStringLiteral("retention: set charge to 2 days"));
    QCOMPARE(cellText(dialog, r, ApprovalsModel::ByColumn), QStringLiteral("idem_t_rights_ui_operator (ann)"));
    QCOMPARE(cellText(dialog, r, ApprovalsModel::ReasonColumn), QStringLiteral("smaller table"));
    QCOMPARE(cellText(dialog, r, ApprovalsModel::SpecColumn), QString::fromStdString(retentionSha));
    QCOMPARE(cellText(dialog, p, ApprovalsModel::WhatColumn),
        QStringLiteral("purge: batches of 500, until nothing is due, duty 0.5"));
    QVERIFY2(cellText(dialog, p, ApprovalsModel::UntilColumn).endsWith(QStringLiteral("(expired)")),
        qPrintable(cellText(dialog, p, ApprovalsModel::UntilColumn)));

    dialog.reasonEdit()->setText(QStringLiteral("checked the horizon"));
    dialog.table()->selectRow(p);
    QVERIFY(!dialog.approveButton()->isEnabled());
    QVERIFY2(dialog.approveButton()->toolTip().contains(QStringLiteral("time for approval ended")),
        qPrintable(dialog.approveButton()->toolTip()));
    dialog.table()->selectRow(r);
    QVERIFY(dialog.approveButton()->isEnabled());
    screenshot(&dialog, QStringLiteral("rights-approvals-changes.png"));
    loaded.clear();
    QTest::mouseClick(dialog.approveButton(), Qt::LeftButton);
    QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty() && !dialog.loading(); }, browserTimeoutMs));
    QVERIFY2(dialog.resultLabel()->text().startsWith(
                 QStringLiteral("Change request %1 approved: it may be used once until").arg(retention)),
        qPrintable(dialog.resultLabel()->text()));
    QCOMPARE(querySql(*m_conn, "SELECT state || ' ' || approved_login FROM idem.idem_approval_requests WHERE id = $1",
                 retention)
                 .at(0)
                 .at(0)
                 .as<std::string>(),
        std::string("approved idem_t_rights_ui_requeuer"));
    QCOMPARE(querySql(*m_conn, "SELECT action FROM idem.task_idempotency_audit ORDER BY id DESC LIMIT 1")
                 .at(0)
                 .at(0)
                 .as<std::string>(),
        std::string("change_approve"));
    // Listed still (not used yet), greyed: approved already.
    dialog.table()->selectRow(rowOf(dialog, retention));
    dialog.reasonEdit()->setText(QStringLiteral("again"));
    QVERIFY(!dialog.approveButton()->isEnabled());
    QVERIFY2(
        dialog.approveButton()->toolTip().contains(QStringLiteral("Approved already by idem_t_rights_ui_requeuer")),
        qPrintable(dialog.approveButton()->toolTip()));
    execSql(*m_conn, "SELECT idem.idem_set_change_approval(false, false, 3600, 'drill over', 'admin')");
}

void TestRightsUi::readerCannotApprove()
{
    ConsoleSession session;
    QVERIFY(connectSession(session, dsnOf(reader)));
    ApprovalsDialog dialog(&session);
    QSignalSpy loaded(&dialog, &ApprovalsDialog::loaded);
    dialog.show();
    QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty() && !dialog.loading(); }, browserTimeoutMs));
    dialog.table()->selectRow(0);
    dialog.reasonEdit()->setText(QStringLiteral("trying anyway"));
    QVERIFY(!dialog.approveButton()->isEnabled());
    QVERIFY2(dialog.approveButton()->toolTip().contains(QStringLiteral("does not hold the approve right (role idem_may_approve)")),
        qPrintable(dialog.approveButton()->toolTip()));
}

QTEST_MAIN(TestRightsUi)
#include "tst_rights_ui.moc"
