#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <map>
#include <set>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "operations/audit.h"
#include "operations/jobs.h"
#include "operations/rights.h"
#include "operations/wording.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"

using idem::test::digestOf;
using idem::test::scalar;
using idem::test::sqlstateOf;

namespace {
constexpr const char* password = "pw-rights";
constexpr const char* plantedAt = "2024-05-01 10:00:00.123456+00";
const idem::SchemaName schema;

// Every NOLOGIN role of Idem a test login may be given.
const std::vector<std::string> idemRoles { "idem_reader", "idem_operator", "idem_worker", "idem_may_requeue",
    "idem_may_release", "idem_may_fail", "idem_may_pause", "idem_may_purge", "idem_may_approve" };

// Cluster-wide login roles, named for this test alone: each with the roles listed.
struct LoginSpec {
    const char* name;
    std::vector<std::string> roles;
};
const std::vector<LoginSpec> logins {
    { "idem_t_rights_reader", { "idem_reader" } },
    { "idem_t_rights_requeue", { "idem_reader", "idem_may_requeue" } },
    { "idem_t_rights_release", { "idem_reader", "idem_may_release" } },
    { "idem_t_rights_fail", { "idem_reader", "idem_may_fail" } },
    { "idem_t_rights_pause", { "idem_reader", "idem_may_pause" } },
    { "idem_t_rights_purge", { "idem_reader", "idem_may_purge" } },
    { "idem_t_rights_approve", { "idem_reader", "idem_may_approve" } },
    { "idem_t_rights_operator", { "idem_operator" } },
    { "idem_t_rights_worker", { "idem_worker" } },
    { "idem_t_rights_outsider", {} },
    // Requests and approves: may never approve its own request.
    { "idem_t_rights_both", { "idem_reader", "idem_may_requeue", "idem_may_approve" } },
    // A second approver.
    { "idem_t_rights_approve2", { "idem_may_approve" } },
    // May SET ROLE to idem_t_rights_both (granted below): not "another login" for its requests.
    { "idem_t_rights_alias", { "idem_reader", "idem_may_approve" } },
};

std::int64_t number(pqxx::connection& c, const std::string& sql)
{
    return std::stoll(scalar(c, sql).toStdString());
}

// The first column of the first row as text, or "ERR <sqlstate>" when it fails (then nothing of
// the statement's transaction is kept).
template <typename... P> std::string resultOf(pqxx::connection& c, const std::string& sql, P&&... params)
{
    try {
        pqxx::work w(c);
        const auto r = w.exec_params(sql, std::forward<P>(params)...);
        w.commit();
        if (r.empty() || r.columns() == 0)
            return "ok";
        return r[0][0].is_null() ? std::string("<null>") : r[0][0].c_str();
    } catch (const pqxx::insufficient_privilege&) {
        return "ERR 42501";
    } catch (const pqxx::sql_error& e) {
        return "ERR " + e.sqlstate();
    }
}

// The error's message, or "" when it succeeds.
std::string messageOf(pqxx::connection& c, const std::string& sql)
{
    try {
        pqxx::work w(c);
        w.exec(sql);
        w.commit();
        return {};
    } catch (const std::exception& e) {
        return e.what();
    }
}

QJsonObject json(const idem::test::CliRun& run) { return QJsonDocument::fromJson(run.out.toUtf8()).object(); }
} // namespace

// Issue #28, per-action rights and a second person's approval (schema v21): every role against
// every action, each tried as a real login, with what landed in the tables checked.
class TestRights : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void everyRoleAgainstEveryAction_data();
    void everyRoleAgainstEveryAction();
    void setRoleActsWithTheRolesRights();
    void revokedStarterStopsTheJob();
    void approvalByAnotherLoginOfTheExactSpec();
    void expiredApprovalIsRefused();
    void hostilePolicyInputsChangeNothing_data();
    void hostilePolicyInputsChangeNothing();
    void idemctlPolicyPendingApproveRights();
    void rightsComeFromOneList();

private:
    std::unique_ptr<pqxx::connection> login(const char* role);
    idem::test::CliRun idemctl(const char* role, QStringList args);
    void plant(const std::string& tenant, int n, const std::string& status);
    std::string version(const std::string& key);
    QByteArray state()
    {
        return scalar(*m_owner, "SELECT (SELECT count(*) FROM idem.idem_jobs) || '/' || (SELECT count(*) FROM idem.idem_job_items)"
                                " || '/' || (SELECT count(*) FROM idem.task_idempotency_audit) || '/' ||"
                                " (SELECT row_to_json(p)::text FROM idem.idem_approval_policy p) || '/' ||"
                                " (SELECT count(*) || '/' || sum(hashtext(row_to_json(t)::text)::bigint)"
                                "  FROM idem.task_idempotency t) || '/' || (SELECT count(*) FROM idem.idem_pauses)"
                                " || '/' || (SELECT count(*) FROM idem.idem_retention_policy)");
    }
    void checkChain()
    {
        const auto report = idem::verifyChain(*m_owner, schema);
        QVERIFY2(report.ok(), report.detail.c_str());
        QCOMPARE(std::int64_t(report.checked), number(*m_owner, "SELECT count(*) FROM idem.task_idempotency_audit"));
    }
    void setPolicy(std::int64_t rows, int ttl)
    {
        pqxx::work w(*m_owner);
        w.exec_params("SELECT idem.idem_set_approval($1, $2, 'policy for the test', 'admin')", rows, ttl);
        w.commit();
    }
    void clearPolicy()
    {
        pqxx::work w(*m_owner);
        w.exec("SELECT idem.idem_clear_approval('policy off', 'admin')");
        w.commit();
    }
    // Starts a requeue job of `tenant`'s rows as `role`; its id.
    std::int64_t startJob(const char* role, const std::string& tenant)
    {
        auto c = login(role);
        const auto r = resultOf(*c, "SELECT job_id FROM idem.idem_job_start('requeue', $1::jsonb, 1000, 'incident 28')",
            "{\"tenant\": \"" + tenant + "\"}");
        return std::stoll(r);
    }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
};

void TestRights::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("rights", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    auto admin = idem::connect(idem::test::adminDsn());
    for (const auto& l : logins) {
        idem::test::createLoginRole(l.name, password, "");
        // Exactly the roles listed, whatever an earlier run left.
        pqxx::work w(*admin);
        for (const auto& r : idemRoles)
            w.exec("REVOKE " + r + " FROM " + l.name);
        for (const auto& r : l.roles)
            w.exec("GRANT " + r + " TO " + l.name);
        w.commit();
    }
    pqxx::work w(*admin);
    w.exec("GRANT idem_t_rights_both TO idem_t_rights_alias");
    w.commit();
}

void TestRights::cleanupTestCase()
{
    m_owner.reset();
    m_db.reset();
}

void TestRights::init()
{
    pqxx::work w(*m_owner);
    w.exec("UPDATE idem.idem_jobs SET state = 'cancelled', finished_at = now(), cancel_reason = 'next test'"
           " WHERE state IN ('active', 'awaiting_approval')");
    w.exec("UPDATE idem.idem_job_items SET state = 'skipped', why = 'cancelled' WHERE state = 'pending'");
    w.commit();
    // Those two writes are the owner's, outside the functions; the policy is off between tests.
    if (scalar(*m_owner, "SELECT gated FROM idem.idem_approval_kinds WHERE kind = 'job'") == "t")
        clearPolicy();
}

std::unique_ptr<pqxx::connection> TestRights::login(const char* role)
{
    return std::make_unique<pqxx::connection>(idem::test::dsnWith(idem::test::loginDsn(m_db->dsn(), role, password),
        { { "application_name", std::string("idem-t-rights ") + role } }));
}

idem::test::CliRun TestRights::idemctl(const char* role, QStringList args)
{
    const auto dsn = role ? idem::test::loginDsn(m_db->dsn(), role, password) : m_db->dsn();
    args << QStringLiteral("--dsn") << QString::fromStdString(dsn);
    return idem::test::runProgram(idem::test::idemctlPath(), args, 60000);
}

void TestRights::plant(const std::string& tenant, int n, const std::string& status)
{
    pqxx::work w(*m_owner);
    w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until,"
                  " attempts, max_attempts, error_class, error_message, next_attempt_at, created_at, updated_at, errors)"
                  " SELECT $1 || ':charge:k' || lpad(i::text, 6, '0'), $2, $3,"
                  "        CASE WHEN $3 = 'processing' THEN gen_random_uuid() END,"
                  "        CASE WHEN $3 = 'processing' THEN now() - interval '1 minute' END,"
                  "        1, 5, CASE WHEN $3 IN ('failed', 'retryable_failed') THEN 'retryable' END,"
                  "        CASE WHEN $3 IN ('failed', 'retryable_failed') THEN 'timeout' END,"
                  "        CASE WHEN $3 = 'retryable_failed' THEN now() - interval '1 minute' END,"
                  "        $4::timestamptz - interval '1 hour', $4::timestamptz, '[]'"
                  "   FROM generate_series(1, $5) i",
        tenant, digestOf('a'), status, std::string(plantedAt), n);
    w.commit();
}

std::string TestRights::version(const std::string& key)
{
    return scalar(*m_owner,
        "SELECT (extract(epoch FROM updated_at) * 1000000)::bigint FROM idem.task_idempotency WHERE idempotency_key = $1",
        key)
        .toStdString();
}

// The table: which login may do what. Each action is tried by each login on rows of its own,
// and the test checks both the answer and what the database holds afterwards.
void TestRights::everyRoleAgainstEveryAction_data()
{
    QTest::addColumn<QString>("role");
    QTest::addColumn<QStringList>("allowed");
    const auto row = [](const char* role, QStringList allowed) {
        QTest::newRow(role) << QString::fromLatin1(role) << allowed;
    };
    const QString read = QStringLiteral("read"), requeue = QStringLiteral("requeue"), release = QStringLiteral("release"),
                  fail = QStringLiteral("fail"), pause = QStringLiteral("pause"), retention = QStringLiteral("retention"),
                  purge = QStringLiteral("purge"), jobRequeue = QStringLiteral("job_requeue"),
                  jobRelease = QStringLiteral("job_release"), jobFail = QStringLiteral("job_fail"),
                  request = QStringLiteral("change_request"), approve = QStringLiteral("change_approve");
    row("idem_t_rights_reader", { read });
    row("idem_t_rights_requeue", { read, requeue, jobRequeue });
    row("idem_t_rights_release", { read, release, jobRelease });
    row("idem_t_rights_fail", { read, fail, jobFail });
    row("idem_t_rights_pause", { read, pause });
    row("idem_t_rights_purge", { read, retention, purge, request });
    row("idem_t_rights_approve", { read, approve });
    row("idem_t_rights_operator",
        { read, requeue, release, fail, pause, retention, purge, jobRequeue, jobRelease, jobFail, request, approve });
    row("idem_t_rights_worker", {});
    row("idem_t_rights_outsider", {});
}

void TestRights::everyRoleAgainstEveryAction()
{
    QFETCH(QString, role);
    QFETCH(QStringList, allowed);
    const std::string r = role.toStdString();
    const std::string t = "t-" + r.substr(std::string("idem_t_rights_").size());
    plant(t + "-rq", 1, "failed");
    plant(t + "-rl", 1, "processing");
    plant(t + "-fl", 1, "processing");
    plant(t + "-jrq", 3, "failed");
    plant(t + "-jrl", 3, "processing");
    plant(t + "-jfl", 3, "processing");
    auto c = login(r.c_str());
    const auto k = [&](const std::string& tenant) { return tenant + ":charge:k000001"; };
    const std::string op = "op-" + r;
    const std::string jobRows = "(SELECT count(*) FROM idem.idem_job_items i JOIN idem.idem_jobs j ON j.id = i.job_id"
                                " WHERE i.state = 'changed' AND j.db_role = '"
        + r + "' AND j.action = ";

    struct Try {
        QString action;
        std::function<std::string()> run; // "ok" when done as expected, else what happened
        std::function<bool()> landed; // the effect is in the database
    };
    const auto outcome = [&](const std::string& sql, const std::string& key, const std::string& status) {
        const auto res = resultOf(*c, sql, key, status, std::stoll(version(key)));
        return res == "applied" ? std::string("ok") : res;
    };
    const auto job = [&](const char* action, const std::string& tenant) {
        auto id = resultOf(*c, "SELECT job_id FROM idem.idem_job_start($1, $2::jsonb, 100, 'incident 28')",
            std::string(action), "{\"tenant\": \"" + tenant + "\"}");
        if (id.rfind("ERR", 0) == 0)
            return id;
        try {
            pqxx::nontransaction(*c).exec_params("CALL idem.idem_job_run($1)", std::stoll(id));
        } catch (const std::exception& e) {
            return std::string("run failed: ") + e.what();
        }
        return std::string("ok");
    };
    const std::vector<Try> tries {
        { QStringLiteral("read"),
            [&] {
                const auto n = resultOf(*c, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key = $1",
                    k(t + "-rq"));
                return n == "1" ? std::string("ok") : n;
            },
            [] { return true; } },
        { QStringLiteral("requeue"),
            [&] { return outcome("SELECT outcome FROM idem.idem_requeue($1, $2, $3, 1, 'incident 28')", k(t + "-rq"), "failed"); },
            [&] { return scalar(*m_owner, "SELECT status FROM idem.task_idempotency WHERE idempotency_key = $1", k(t + "-rq")) == "retryable_failed"; } },
        { QStringLiteral("release"),
            [&] { return outcome("SELECT outcome FROM idem.idem_release($1, $2, $3, 'incident 28')", k(t + "-rl"), "processing"); },
            [&] { return scalar(*m_owner, "SELECT owner_token IS NULL FROM idem.task_idempotency WHERE idempotency_key = $1", k(t + "-rl")) == "t"; } },
        { QStringLiteral("fail"),
            [&] { return outcome("SELECT outcome FROM idem.idem_fail($1, $2, $3, 'incident 28')", k(t + "-fl"), "processing"); },
            [&] { return scalar(*m_owner, "SELECT status FROM idem.task_idempotency WHERE idempotency_key = $1", k(t + "-fl")) == "failed"; } },
        { QStringLiteral("pause"),
            [&] {
                const auto p = resultOf(*c, "SELECT tenant FROM idem.idem_pause($1, '*', 'incident 28')", t);
                if (p != t)
                    return p;
                const auto q = resultOf(*c, "SELECT tenant FROM idem.idem_resume($1, '*', 'incident 28 over')", t);
                return q == t ? std::string("ok") : q;
            },
            [&] { return number(*m_owner, "SELECT count(*) FROM idem.task_idempotency_audit WHERE action IN ('pause', 'resume')"
                                          " AND before_image::text || after_image::text LIKE '%" + t + "%'") == 2; } },
        { QStringLiteral("retention"),
            [&] {
                const auto a = resultOf(*c, "SELECT operation FROM idem.idem_set_retention($1, 86400, 'incident 28')", op);
                return a == op ? std::string("ok") : a;
            },
            [&] { return number(*m_owner, "SELECT count(*) FROM idem.idem_retention_policy WHERE operation = '" + op + "'") == 1; } },
        { QStringLiteral("purge"),
            [&] {
                const auto a = resultOf(*c, "SELECT run_id FROM idem.idem_purge(10, 1, 'incident 28')");
                return a.rfind("ERR", 0) == 0 ? a : std::string("ok");
            },
            [&] { return number(*m_owner, "SELECT count(*) FROM idem.idem_purge_runs WHERE db_role = '" + r + "'") == 1; } },
        // Schema v22: the grants of change approvals. With the kinds off a request is refused
        // inside (ID004, v28) and there is no request 0 to approve (ID002): the function ran, and
        // nothing changed (no request, no audit entry) for those allowed; 42501 for the rest.
        { QStringLiteral("change_request"),
            [&] {
                const auto a = resultOf(*c, "SELECT request_id FROM idem.idem_request_purge(10, 0, 0.5, 'incident 28')");
                return a == "ERR ID004" ? std::string("ok") : a;
            },
            [&] { return number(*m_owner, "SELECT count(*) FROM idem.idem_approval_requests WHERE kind <> 'job'") == 0; } },
        { QStringLiteral("change_approve"),
            [&] {
                const auto a = resultOf(*c, "SELECT request_id FROM idem.idem_change_approve(0, repeat('a', 64), 'incident 28')");
                return a == "ERR ID002" ? std::string("ok") : a;
            },
            [&] { return number(*m_owner, "SELECT count(*) FROM idem.idem_approval_requests WHERE kind <> 'job'") == 0; } },
        { QStringLiteral("job_requeue"), [&] { return job("requeue", t + "-jrq"); },
            [&] { return number(*m_owner, jobRows + "'requeue')") == 3; } },
        { QStringLiteral("job_release"), [&] { return job("release", t + "-jrl"); },
            [&] { return number(*m_owner, jobRows + "'release')") == 3; } },
        { QStringLiteral("job_fail"), [&] { return job("fail", t + "-jfl"); },
            [&] { return number(*m_owner, jobRows + "'fail')") == 3; } },
    };
    for (const auto& x : tries) {
        const auto before = state();
        const std::string got = x.run();
        const bool may = allowed.contains(x.action);
        const std::string what = r + " " + x.action.toStdString() + ": " + got;
        if (may) {
            QVERIFY2(got == "ok", what.c_str());
            QVERIFY2(x.landed(), what.c_str());
        } else {
            QVERIFY2(got == "ERR 42501", what.c_str());
            if (x.action != QStringLiteral("read"))
                QVERIFY2(state() == before, what.c_str()); // nothing written, not even half
        }
    }
    // What the console and idemctl rights read: the same table.
    const auto rights = idem::readRights(*c, schema);
    QVERIFY(rights.known);
    QCOMPARE(QString::fromStdString(rights.login), role);
    for (const auto& [right, action] : std::map<std::string, QString> { { "read", QStringLiteral("read") },
             { "requeue", QStringLiteral("requeue") }, { "release", QStringLiteral("release") },
             { "fail", QStringLiteral("fail") }, { "pause", QStringLiteral("pause") }, { "purge", QStringLiteral("purge") } })
        QVERIFY2(rights.may(right) == allowed.contains(action), (r + " " + right).c_str());
    QCOMPARE(rights.may("approve"), r == "idem_t_rights_approve" || r == "idem_t_rights_operator");
    if (!rights.may("requeue"))
        QVERIFY2(QString::fromStdString(rights.whyNot("requeue")).contains(QStringLiteral("GRANT idem_may_requeue TO ")),
            rights.whyNot("requeue").c_str());
    checkChain();
}

// SET ROLE: a login acts with the rights of the role it took, not its own. The operator, having
// taken idem_may_release, may not start a requeue job (the job functions are granted to that role,
// so this is the functions' own check on the caller), and one that took idem_reader may not
// requeue at all.
void TestRights::setRoleActsWithTheRolesRights()
{
    plant("t-setrole", 3, "failed");
    auto c = login("idem_t_rights_operator");
    const auto before = state();
    pqxx::nontransaction(*c).exec("SET ROLE idem_may_release");
    const auto msg = messageOf(*c, "SELECT * FROM idem.idem_job_start('requeue', '{\"tenant\": \"t-setrole\"}', 100, 'r')");
    QVERIFY2(msg.find("role idem_may_release may not start a requeue job") != std::string::npos, msg.c_str());
    QVERIFY2(msg.find("GRANT idem_may_requeue TO idem_may_release") != std::string::npos, msg.c_str());
    QCOMPARE(idem::readRights(*c, schema).may("requeue"), false);
    QCOMPARE(idem::readRights(*c, schema).may("release"), true);
    pqxx::nontransaction(*c).exec("SET ROLE idem_reader");
    QCOMPARE(sqlstateOf(*c, "SELECT * FROM idem.idem_requeue('t-setrole:charge:k000001', 'failed', 0, 1, 'r')"), std::string("42501"));
    QCOMPARE(state(), before);
    pqxx::nontransaction(*c).exec("RESET ROLE");
    QCOMPARE(resultOf(*c, "SELECT matched FROM idem.idem_job_start('requeue', '{\"tenant\": \"t-setrole\"}', 100, 'r')"),
        std::string("3"));
    QCOMPARE(scalar(*m_owner, "SELECT starter_role FROM idem.idem_jobs ORDER BY id DESC LIMIT 1"), QByteArray("idem_t_rights_operator"));
}

// A job's rows are applied with its starter's rights: revoked meanwhile, the next attach (and
// batch) is refused in words, even for a runner who holds the right, and no row changes.
void TestRights::revokedStarterStopsTheJob()
{
    plant("t-revoke", 5, "failed");
    auto admin = idem::connect(idem::test::adminDsn());
    pqxx::nontransaction(*admin).exec("GRANT idem_may_requeue TO idem_t_rights_pause");
    const auto id = startJob("idem_t_rights_pause", "t-revoke");
    pqxx::nontransaction(*admin).exec("REVOKE idem_may_requeue FROM idem_t_rights_pause");
    const auto before = state();
    auto op = login("idem_t_rights_operator");
    const auto msg = messageOf(*op, "CALL idem.idem_job_run(" + std::to_string(id) + ")");
    QVERIFY2(msg.find("job " + std::to_string(id) + " was started by role idem_t_rights_pause, which no longer holds the "
                      "requeue right") != std::string::npos,
        msg.c_str());
    QCOMPARE(state(), before);
    QCOMPARE(number(*m_owner, "SELECT changed FROM idem.idem_jobs WHERE id = " + std::to_string(id)), 0);
    // The scheduler's CALL idem_job_run(NULL) passes it over instead of failing on it forever.
    pqxx::nontransaction(*op).exec("CALL idem.idem_job_run(NULL)");
    QCOMPARE(state(), before);
    // Granted again, it runs to its end.
    pqxx::nontransaction(*admin).exec("GRANT idem_may_requeue TO idem_t_rights_pause");
    pqxx::nontransaction(*op).exec("CALL idem.idem_job_run(" + std::to_string(id) + ")");
    QCOMPARE(number(*m_owner, "SELECT changed FROM idem.idem_jobs WHERE id = " + std::to_string(id)), 5);
    pqxx::nontransaction(*admin).exec("REVOKE idem_may_requeue FROM idem_t_rights_pause");
    checkChain();
}

// Over the threshold a job waits; the requester cannot approve it, nor can a login that may act
// as the requester; an approval names one job's exact spec; another login approves it, and only
// then it runs. Both are on the audit chain.
void TestRights::approvalByAnotherLoginOfTheExactSpec()
{
    plant("t-appr-a", 6, "failed");
    plant("t-appr-b", 7, "failed");
    plant("t-appr-small", 2, "failed");
    setPolicy(5, 3600);
    QCOMPARE(scalar(*m_owner, "SELECT action || ' ' || (after_image ->> 'kind') || ' ' || (after_image ->> 'over_rows')"
                              " FROM idem.task_idempotency_audit ORDER BY id DESC LIMIT 1"),
        QByteArray("approval_policy job 5"));
    const auto small = startJob("idem_t_rights_both", "t-appr-small");
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_jobs WHERE id = " + std::to_string(small)), QByteArray("active"));
    const auto a = startJob("idem_t_rights_both", "t-appr-a");
    const auto b = startJob("idem_t_rights_requeue", "t-appr-b");
    const std::string ids = std::to_string(a), idsB = std::to_string(b);
    QCOMPARE(scalar(*m_owner, "SELECT state || ' ' || needs_approval || ' ' || approval_threshold FROM idem.idem_jobs WHERE id = " + ids),
        QByteArray("awaiting_approval true 5"));
    const std::string specA = scalar(*m_owner, "SELECT spec_sha256 FROM idem.idem_jobs WHERE id = " + ids).toStdString();
    const std::string specB = scalar(*m_owner, "SELECT spec_sha256 FROM idem.idem_jobs WHERE id = " + idsB).toStdString();

    // Not run before it is approved.
    auto both = login("idem_t_rights_both");
    auto before = state();
    auto msg = messageOf(*both, "CALL idem.idem_job_run(" + ids + ")");
    QVERIFY2(msg.find("job " + ids + " is waiting for approval") != std::string::npos, msg.c_str());
    QCOMPARE(state(), before);

    const auto approve = [&](pqxx::connection& c, const std::string& id, const std::string& spec) {
        return messageOf(c, "SELECT * FROM idem.idem_job_approve(" + id + ", '" + spec + "', 'checked the filter', 'ann')");
    };
    // The requester, though it holds the approve right.
    msg = approve(*both, ids, specA);
    QVERIFY2(msg.find("login idem_t_rights_both cannot approve job " + ids + ": it was requested by login idem_t_rights_both")
            != std::string::npos,
        msg.c_str());
    // A login that may SET ROLE to the requester.
    auto alias = login("idem_t_rights_alias");
    msg = approve(*alias, ids, specA);
    QVERIFY2(msg.find("cannot approve job " + ids) != std::string::npos
            && msg.find("one of the two may act as the other") != std::string::npos,
        msg.c_str());
    // The same, having taken the requester's role: still the same login.
    pqxx::nontransaction(*alias).exec("SET ROLE idem_t_rights_both");
    msg = approve(*alias, ids, specA);
    QVERIFY2(msg.find("cannot approve job " + ids) != std::string::npos, msg.c_str());
    pqxx::nontransaction(*alias).exec("RESET ROLE");
    // Without the approve right.
    auto requeuer = login("idem_t_rights_requeue");
    QCOMPARE(sqlstateOf(*requeuer, "SELECT * FROM idem.idem_job_approve(" + ids + ", '" + specA + "', 'r')"), std::string("42501"));
    // Another job's spec: an approval cannot be carried to another filter, count or action.
    auto approver = login("idem_t_rights_approve");
    msg = approve(*approver, ids, specB);
    QVERIFY2(msg.find("that spec is not job " + ids + "'s: job " + ids + " is requeue of 6 row(s) matched by") != std::string::npos,
        msg.c_str());
    QCOMPARE(state(), before);

    // The right one, by another login.
    msg = approve(*approver, ids, specA);
    QVERIFY2(msg.empty(), msg.c_str());
    QCOMPARE(scalar(*m_owner, "SELECT j.state || ' ' || r.state || ' ' || r.approved_login || ' ' || r.spec_sha256"
                              " FROM idem.idem_jobs j JOIN idem.idem_approval_requests r ON r.job_id = j.id WHERE j.id = " + ids),
        QByteArray::fromStdString("active approved idem_t_rights_approve " + specA));
    QCOMPARE(scalar(*m_owner, "SELECT action || ' ' || db_role || ' ' || os_user || ' ' || reason || ' ' ||"
                              " (after_image ->> 'job_id') || ' ' || (after_image ->> 'spec_sha256') || ' ' ||"
                              " (after_image -> 'approval' ->> 'approved_by')"
                              " FROM idem.task_idempotency_audit ORDER BY id DESC LIMIT 1"),
        QByteArray::fromStdString("approve idem_t_rights_approve ann checked the filter " + ids + " " + specA
            + " idem_t_rights_approve as idem_t_rights_approve (ann)"));
    // Once only.
    before = state();
    msg = approve(*approver, ids, specA);
    QVERIFY2(msg.find("job " + ids + " is not waiting for approval: it is active, approved by idem_t_rights_approve") != std::string::npos,
        msg.c_str());
    // Job b is still waiting: job a's approval does not cover it.
    auto other = login("idem_t_rights_requeue");
    msg = messageOf(*other, "CALL idem.idem_job_run(" + idsB + ")");
    QVERIFY2(msg.find("waiting for approval") != std::string::npos, msg.c_str());
    QCOMPARE(state(), before);

    pqxx::nontransaction(*both).exec("CALL idem.idem_job_run(" + ids + ")");
    QCOMPARE(scalar(*m_owner, "SELECT state || ' ' || changed FROM idem.idem_jobs WHERE id = " + ids), QByteArray("finished 6"));
    // An approver turns a request down by declining it (schema v28: no longer by cancelling it).
    auto second = login("idem_t_rights_approve2");
    QCOMPARE(sqlstateOf(*second, "SELECT * FROM idem.idem_job_cancel(" + idsB + ", 'not during the sale')"),
        std::string("42501"));
    const auto requestB = scalar(*m_owner, "SELECT id FROM idem.idem_approval_requests WHERE job_id = " + idsB).toStdString();
    const auto declined = resultOf(*second, "SELECT d.job_id::text FROM idem.idem_approval_decline(" + requestB
            + ", 'not during the sale') d");
    QVERIFY2(declined == idsB, declined.c_str());
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_jobs WHERE id = " + idsB), QByteArray("cancelled"));
    checkChain();
}

// An approval lets a job start or resume until it expires; after, resuming is refused in words.
// A request not approved in time can no longer be approved. (The instants are moved back by the
// owner: no test waits for a clock.)
void TestRights::expiredApprovalIsRefused()
{
    plant("t-exp-a", 4, "failed");
    plant("t-exp-b", 4, "failed");
    setPolicy(1, 60);
    const auto a = startJob("idem_t_rights_requeue", "t-exp-a");
    const auto b = startJob("idem_t_rights_requeue", "t-exp-b");
    const std::string ids = std::to_string(a), idsB = std::to_string(b);
    auto approver = login("idem_t_rights_approve");
    const std::string specA = scalar(*m_owner, "SELECT spec_sha256 FROM idem.idem_jobs WHERE id = " + ids).toStdString();
    const std::string specB = scalar(*m_owner, "SELECT spec_sha256 FROM idem.idem_jobs WHERE id = " + idsB).toStdString();
    QVERIFY(messageOf(*approver, "SELECT * FROM idem.idem_job_approve(" + ids + ", '" + specA + "', 'ok')").empty());
    QCOMPARE(number(*m_owner, "SELECT extract(epoch FROM approval_expires_at - approved_at)::bigint FROM"
                              " idem.idem_approval_requests WHERE job_id = " + ids), 60);
    {
        pqxx::work w(*m_owner);
        w.exec("UPDATE idem.idem_approval_requests SET approval_expires_at = now() - interval '1 second',"
               " approved_at = now() - interval '61 seconds' WHERE job_id = " + ids);
        w.exec("UPDATE idem.idem_approval_requests SET approvable_until = now() - interval '1 second' WHERE job_id = " + idsB);
        w.commit();
    }
    const auto before = state();
    auto runner = login("idem_t_rights_requeue");
    auto msg = messageOf(*runner, "CALL idem.idem_job_run(" + ids + ")");
    QVERIFY2(msg.find("job " + ids + "'s approval by idem_t_rights_approve expired at") != std::string::npos
            && msg.find("it cannot start or resume under it") != std::string::npos,
        msg.c_str());
    msg = messageOf(*approver, "SELECT * FROM idem.idem_job_approve(" + idsB + ", '" + specB + "', 'too late')");
    QVERIFY2(msg.find("job " + idsB + "'s request for approval expired at") != std::string::npos, msg.c_str());
    QCOMPARE(state(), before);
    // Through idemctl: refused (exit 3), in words.
    const auto resume = idemctl("idem_t_rights_requeue", { QStringLiteral("job"), QStringLiteral("resume"), QString::fromStdString(ids) });
    QCOMPARE(resume.exitCode, 3);
    QVERIFY2(resume.err.contains(QStringLiteral("expired at")), qPrintable(resume.err));
    QVERIFY2(resume.err.contains(QStringLiteral("refused (SQLSTATE ID004)")), qPrintable(resume.err));
    QCOMPARE(state(), before);
    checkChain();
}

void TestRights::hostilePolicyInputsChangeNothing_data()
{
    QTest::addColumn<QString>("sql");
    QTest::addColumn<QString>("words");
    const auto row = [](const char* name, const char* sql, const char* words) {
        QTest::newRow(name) << QString::fromLatin1(sql) << QString::fromLatin1(words);
    };
    row("null threshold", "SELECT idem.idem_set_approval(NULL, 3600, 'r')", "threshold must be 0 to 1000000 rows, not NULL");
    row("negative threshold", "SELECT idem.idem_set_approval(-1, 3600, 'r')", "not -1");
    row("huge threshold", "SELECT idem.idem_set_approval(1000000000, 3600, 'r')", "not 1000000000");
    row("null ttl", "SELECT idem.idem_set_approval(5, NULL, 'r')", "60 to 604800 seconds (a week), not NULL");
    row("short ttl", "SELECT idem.idem_set_approval(5, 59, 'r')", "not 59");
    row("long ttl", "SELECT idem.idem_set_approval(5, 604801, 'r')", "not 604801");
    row("null reason", "SELECT idem.idem_set_approval(5, 3600, NULL)", "reason");
    row("blank reason", "SELECT idem.idem_set_approval(5, 3600, '   ')", "reason");
    row("approve null job", "SELECT idem.idem_job_approve(NULL, repeat('a', 64), 'r')", "name the job to approve");
    row("approve null spec", "SELECT idem.idem_job_approve(1, NULL, 'r')", "64 lower-case hex digits, not NULL");
    row("approve bad spec", "SELECT idem.idem_job_approve(1, 'ABC', 'r')", "not 'ABC'");
    row("approve no job", "SELECT idem.idem_job_approve(999999, repeat('a', 64), 'r')", "there is no job 999999");
    row("unknown right", "SELECT idem.idem_right_role('root')",
        "a right is read, requeue, release, fail, pause, purge, approve or read_requests");
}

void TestRights::hostilePolicyInputsChangeNothing()
{
    QFETCH(QString, sql);
    QFETCH(QString, words);
    setPolicy(100, 600);
    const auto before = state();
    const auto msg = messageOf(*m_owner, sql.toStdString());
    QVERIFY2(QString::fromStdString(msg).contains(words), msg.c_str());
    QCOMPARE(state(), before);
    // Not the operators': the policy is the schema owner's.
    auto op = login("idem_t_rights_operator");
    QCOMPARE(sqlstateOf(*op, "SELECT idem.idem_set_approval(5, 3600, 'r')"), std::string("42501"));
    QCOMPARE(sqlstateOf(*op, "SELECT idem.idem_clear_approval('r')"), std::string("42501"));
    QCOMPARE(sqlstateOf(*op, "UPDATE idem.idem_approval_kinds SET over_rows = 0"), std::string("42501"));
    QCOMPARE(state(), before);
}

// The same through idemctl: the owner sets the policy, a job waits, the approver lists it and
// approves it by its spec, the requester runs it; idemctl rights shows who may do what.
void TestRights::idemctlPolicyPendingApproveRights()
{
    plant("t-cli", 4, "failed");
    auto run = idemctl(nullptr, { QStringLiteral("approvals"), QStringLiteral("policy"), QStringLiteral("job"),
                                     QStringLiteral("--on"), QStringLiteral("--over-rows"), QStringLiteral("2"),
                                     QStringLiteral("--ttl"), QStringLiteral("900"), QStringLiteral("--reason"),
                                     QStringLiteral("two-person rule"), QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto jobKind = json(run).value(QStringLiteral("kinds")).toArray().at(0).toObject();
    QCOMPARE(jobKind.value(QStringLiteral("kind")).toString(), QStringLiteral("job"));
    QCOMPARE(jobKind.value(QStringLiteral("over_rows")).toInt(), 2);
    QCOMPARE(jobKind.value(QStringLiteral("ttl_seconds")).toInt(), 900);
    const auto bad = idemctl(nullptr, { QStringLiteral("approvals"), QStringLiteral("policy"), QStringLiteral("job"),
                                           QStringLiteral("--on"), QStringLiteral("--over-rows"), QStringLiteral("1000001"),
                                           QStringLiteral("--reason"), QStringLiteral("x") });
    QCOMPARE(bad.exitCode, 2);

    run = idemctl("idem_t_rights_requeue", { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"),
                                                QStringLiteral("requeue"), QStringLiteral("--tenant"), QStringLiteral("t-cli"),
                                                QStringLiteral("--reason"), QStringLiteral("gateway fixed") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("waiting for approval")), qPrintable(run.out));
    const auto id = scalar(*m_owner, "SELECT max(id) FROM idem.idem_jobs");
    QCOMPARE(scalar(*m_owner, "SELECT state || ' ' || changed FROM idem.idem_jobs WHERE id = " + id.toStdString()),
        QByteArray("awaiting_approval 0"));

    run = idemctl("idem_t_rights_approve", { QStringLiteral("approvals"), QStringLiteral("list"), QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto pending = json(run).value(QStringLiteral("requests")).toArray();
    QCOMPARE(pending.size(), 1);
    const auto job = pending.at(0).toObject();
    QCOMPARE(job.value(QStringLiteral("kind")).toString(), QStringLiteral("job"));
    QCOMPARE(job.value(QStringLiteral("job_id")).toInteger(), id.toLongLong());
    QCOMPARE(job.value(QStringLiteral("spec")).toObject().value(QStringLiteral("matched")).toInt(), 4);
    const QString spec = job.value(QStringLiteral("spec_sha256")).toString();
    const QString request = QString::number(job.value(QStringLiteral("id")).toInteger());

    run = idemctl("idem_t_rights_requeue", { QStringLiteral("approvals"), QStringLiteral("approve"), request,
                                                QStringLiteral("--spec"), spec, QStringLiteral("--reason"), QStringLiteral("mine") });
    QCOMPARE(run.exitCode, 3);
    QVERIFY2(run.err.contains(QStringLiteral("42501")), qPrintable(run.err));
    // In the console's words (issue 41 item 6), not the server's "permission denied for function".
    QVERIFY2(run.err.contains(QStringLiteral("Role idem_t_rights_requeue does not hold the approve right (role "
                                             "idem_may_approve)"))
            && run.err.contains(QStringLiteral("GRANT idem_may_approve TO idem_t_rights_requeue"))
            && !run.err.contains(QStringLiteral("permission denied")),
        qPrintable(run.err));
    QVERIFY(run.err.contains(QString::fromStdString(idem::rightMissing("idem_t_rights_requeue", "approve"))));
    run = idemctl("idem_t_rights_approve", { QStringLiteral("approvals"), QStringLiteral("approve"), request,
                                                QStringLiteral("--spec"), spec, QStringLiteral("--reason"),
                                                QStringLiteral("checked with the gateway team") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("approved")), qPrintable(run.out));
    run = idemctl("idem_t_rights_requeue", { QStringLiteral("job"), QStringLiteral("resume"), QString::fromLatin1(id) });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QCOMPARE(scalar(*m_owner, "SELECT state || ' ' || changed FROM idem.idem_jobs WHERE id = " + id.toStdString()),
        QByteArray("finished 4"));

    run = idemctl("idem_t_rights_reader", { QStringLiteral("rights"), QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto rights = json(run).value(QStringLiteral("rights")).toObject();
    QCOMPARE(rights.value(QStringLiteral("read")).toObject().value(QStringLiteral("granted")).toBool(), true);
    QCOMPARE(rights.value(QStringLiteral("requeue")).toObject().value(QStringLiteral("granted")).toBool(), false);
    QCOMPARE(rights.value(QStringLiteral("requeue")).toObject().value(QStringLiteral("role")).toString(),
        QStringLiteral("idem_may_requeue"));
    checkChain();
}

// Issue 44 item 5: the rights are one list, idem_right_list(); the roles and idem_operator's
// memberships, what every right's role may call, idem_right_role, idem_rights() (and so the
// console and idemctl rights) and the role named in refusal words all follow it.
void TestRights::rightsComeFromOneList()
{
    pqxx::result list;
    {
        pqxx::read_transaction t(*m_owner);
        list = t.exec("SELECT right_name, grant_role::text, operator_holds, description,"
                      "       pg_has_role('idem_operator', grant_role, 'MEMBER'),"
                      "       has_schema_privilege(grant_role, 'idem', 'USAGE'),"
                      "       has_function_privilege(grant_role, 'idem.idem_rights()', 'EXECUTE'),"
                      "       idem.idem_right_role(right_name)::text"
                      "  FROM idem.idem_right_list() ORDER BY ordinal");
        t.commit();
    }
    QVERIFY(list.size() >= 8);
    auto reader = login("idem_t_rights_reader");
    const auto rights = idem::readRights(*reader, schema);
    QVERIFY(rights.known);
    QCOMPARE(rights.rights.size(), std::size_t(list.size()));
    for (std::size_t i = 0; i < rights.rights.size(); ++i) {
        const auto& row = list[static_cast<int>(i)];
        const auto& r = rights.rights[i];
        const std::string name = row[0].as<std::string>(), role = row[1].as<std::string>();
        QCOMPARE(r.name, name);
        QCOMPARE(r.grantRole, role);
        QCOMPARE(r.description, row[3].as<std::string>());
        QVERIFY2(!r.description.empty(), name.c_str());
        QCOMPARE(r.granted, name == "read");
        QCOMPARE(row[4].as<bool>(), row[2].as<bool>()); // idem_operator holds it as the list says
        QVERIFY2(row[5].as<bool>() && row[6].as<bool>(), role.c_str()); // may use the schema and ask
        QCOMPARE(row[7].as<std::string>(), role);
        QCOMPARE(idem::rightRole(name), role); // the rule refusal words apply without the list
    }
    QCOMPARE(sqlstateOf(*m_owner, "SELECT idem.idem_right_role('root')"), std::string("ID002"));
    QCOMPARE(sqlstateOf(*m_owner, "SELECT idem.idem_right_role(NULL)"), std::string("ID003"));
}

QTEST_GUILESS_MAIN(TestRights)
#include "tst_rights.moc"
