#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryFile>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "operations/audit.h"
#include "operations/changerequests.h"
#include "operations/jobs.h"
#include "operations/purge.h"
#include "operations/storage.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"

using idem::test::scalar;
using idem::test::sqlstateOf;

namespace {
constexpr const char* password = "pw-changes";
const idem::SchemaName schema;

const std::vector<std::string> idemRoles { "idem_reader", "idem_operator", "idem_worker", "idem_may_requeue",
    "idem_may_release", "idem_may_fail", "idem_may_pause", "idem_may_purge", "idem_may_approve" };
struct LoginSpec {
    const char* name;
    std::vector<std::string> roles;
};
const std::vector<LoginSpec> logins {
    { "idem_t_chg_purge", { "idem_reader", "idem_may_purge" } },
    { "idem_t_chg_approve", { "idem_reader", "idem_may_approve" } },
    // Requests and approves: never its own request.
    { "idem_t_chg_both", { "idem_reader", "idem_may_purge", "idem_may_approve" } },
    // May SET ROLE to idem_t_chg_both (granted below): not "another login" for its requests.
    { "idem_t_chg_alias", { "idem_reader", "idem_may_approve" } },
    // Another right, not the approve right.
    { "idem_t_chg_requeue", { "idem_reader", "idem_may_requeue" } },
    { "idem_t_chg_reader", { "idem_reader" } },
    // Starts jobs and requeues (issue #40 item 1: the budget of one login).
    { "idem_t_chg_operator", { "idem_operator" } },
};

// The error's message, or "" when it succeeds (then it commits).
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

// Declines request `id` as the login of `c`; the request's kind.
std::string resultOfDecline(pqxx::connection& c, std::int64_t id)
{
    pqxx::work w(c);
    const auto r = w.exec_params("SELECT kind FROM idem.idem_approval_decline($1, 'withdrawn', 'pat')", id);
    w.commit();
    return r.at(0).at(0).as<std::string>();
}
} // namespace

// Issue #28, the last part (schema v22): a retention change or a manual purge under a second
// person's approval, when the owner turns it on; off, nothing changes from v21. Each login is a
// real one; what landed in the tables is checked after every refusal.
class TestChangeApprovals : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void switchOffChangesNothing();
    void directCallsRefusedWhenOn();
    void retentionRequestApprovedByAnotherLoginUsedOnce();
    void approvalOfOneRequestCoversNoOther();
    void expiredRequestsAndApprovalsRefused();
    void hostileInputsChangeNothing_data();
    void hostileInputsChangeNothing();
    void idemctlPurgeRequestApproveRun();
    void idemctlRetentionAndPending();
    void budgetBoundsSplitJobsAndSingleActions();
    void approvedPurgeHeldToItsSpec();
    void approvedPurgeRunsOnlyAsApproved();
    void declineOnlyWhatWaits();
    void requestsMadeBeforeOneMechanismSurvive();

private:
    std::unique_ptr<pqxx::connection> login(const char* role);
    idem::test::CliRun idemctl(const char* role, QStringList args);
    void setSwitches(bool retention, bool purges, int ttl = 3600);
    std::int64_t number(const std::string& sql) { return std::stoll(scalar(*m_owner, sql).toStdString()); }
    // Everything a change request, an approval or a use may touch.
    QByteArray state()
    {
        return scalar(*m_owner,
            "SELECT (SELECT count(*) FROM idem.task_idempotency_audit) || '/' ||"
            " (SELECT coalesce(string_agg(row_to_json(r)::text, ',' ORDER BY r.id), '') FROM idem.idem_approval_requests "
            "r)"
            " || '/' || (SELECT string_agg(operation || '=' || horizon::text, ',' ORDER BY operation)"
            "  FROM idem.idem_retention_policy) || '/' || (SELECT count(*) FROM idem.idem_purge_runs) || '/' ||"
            " (SELECT count(*) FROM idem.task_idempotency) || '/' ||"
            " (SELECT row_to_json(p)::text FROM idem.idem_approval_policy p) || '/' ||"
            " (SELECT string_agg(row_to_json(k)::text, ',' ORDER BY k.kind) FROM idem.idem_approval_kinds k)");
    }
    void checkChain()
    {
        const auto report = idem::verifyChain(*m_owner, schema);
        QVERIFY2(report.ok(), report.detail.c_str());
        QCOMPARE(std::int64_t(report.checked), number("SELECT count(*) FROM idem.task_idempotency_audit"));
    }
    // A retention request by `role`: its id and spec sha256.
    std::pair<std::int64_t, std::string> requestRetention(
        const char* role, const std::string& operation, std::int64_t seconds)
    {
        auto c = login(role);
        const auto r = idem::requestRetentionChange(*c, schema, operation, seconds, "shorter for " + operation, "ann");
        return { r.id, r.specSha256 };
    }
    void plantSucceeded(const std::string& tenant, int n, const char* age)
    {
        pqxx::work w(*m_owner);
        w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, created_at, "
                      "updated_at)"
                      " SELECT $1 || ':charge:k' || i, 'h', 'succeeded', 1, now() - $2::interval - interval '1 hour',"
                      "        now() - $2::interval FROM generate_series(1, $3) i",
            tenant, std::string(age), n);
        w.commit();
    }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
};

void TestChangeApprovals::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("changes", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    auto admin = idem::connect(idem::test::adminDsn());
    for (const auto& l : logins) {
        idem::test::createLoginRole(l.name, password, "");
        pqxx::work w(*admin);
        for (const auto& r : idemRoles)
            w.exec("REVOKE " + r + " FROM " + l.name);
        for (const auto& r : l.roles)
            w.exec("GRANT " + r + " TO " + l.name);
        w.commit();
    }
    pqxx::work w(*admin);
    w.exec("GRANT idem_t_chg_both TO idem_t_chg_alias");
    w.commit();
}

void TestChangeApprovals::cleanupTestCase()
{
    m_owner.reset();
    m_db.reset();
}

void TestChangeApprovals::init()
{
    // Each test starts with the switches off and no request open (the owner's writes).
    pqxx::work w(*m_owner);
    w.exec("UPDATE idem.idem_approval_requests SET state = 'used', used_at = now(), used_xid = '1'::xid8,"
           " approved_login = coalesce(approved_login, 'x'), approved_at = coalesce(approved_at, now()),"
           " approval_expires_at = coalesce(approval_expires_at, now())"
           " WHERE state IN ('awaiting_approval', 'approved') AND job_id IS NULL");
    w.exec("UPDATE idem.idem_approval_kinds SET gated = false, over_rows = NULL, ttl_seconds = 3600");
    // No job left open by an earlier test (their requests would be listed).
    w.exec("UPDATE idem.idem_jobs SET state = 'cancelled', finished_at = now(), cancel_reason = 'next test'"
           " WHERE state IN ('active', 'awaiting_approval')");
    w.exec("UPDATE idem.idem_job_items SET state = 'skipped', why = 'cancelled' WHERE state = 'pending'");
    w.exec("UPDATE idem.idem_approval_policy SET budget_rows = NULL");
    w.commit();
}

std::unique_ptr<pqxx::connection> TestChangeApprovals::login(const char* role)
{
    return std::make_unique<pqxx::connection>(idem::test::dsnWith(idem::test::loginDsn(m_db->dsn(), role, password),
        { { "application_name", std::string("idem-t-changes ") + role } }));
}

idem::test::CliRun TestChangeApprovals::idemctl(const char* role, QStringList args)
{
    const auto dsn = role ? idem::test::loginDsn(m_db->dsn(), role, password) : m_db->dsn();
    args << QStringLiteral("--dsn") << QString::fromStdString(dsn);
    return idem::test::runProgram(idem::test::idemctlPath(), args, 60000);
}

void TestChangeApprovals::setSwitches(bool retention, bool purges, int ttl)
{
    idem::setApprovalKindPolicy(*m_owner, schema, "retention", retention, std::nullopt, ttl, "two people for changes",
        "admin");
    idem::setApprovalKindPolicy(*m_owner, schema, "purge", purges, std::nullopt, ttl, "two people for changes", "admin");
}

// Off (the default): set, clear and purge run at once as in v21, and a request is refused.
void TestChangeApprovals::switchOffChangesNothing()
{
    auto c = login("idem_t_chg_purge");
    QCOMPARE(scalar(*m_owner,
                 "SELECT string_agg(kind || ' ' || gated || ' ' || ttl_seconds, ',' ORDER BY kind)"
                 " FROM idem.idem_approval_kinds"),
        QByteArray("job false 3600,purge false 3600,retention false 3600"));
    QVERIFY(messageOf(*c, "SELECT * FROM idem.idem_set_retention('off-op', 7200, 'direct')").empty());
    QCOMPARE(scalar(*m_owner, "SELECT horizon FROM idem.idem_retention_policy WHERE operation = 'off-op'"),
        QByteArray("02:00:00"));
    QVERIFY(messageOf(*c, "SELECT * FROM idem.idem_clear_retention('off-op', 'direct')").empty());
    QVERIFY(messageOf(*c, "SELECT * FROM idem.idem_purge(10, 1, 'direct')").empty());
    const auto before = state();
    auto msg = messageOf(*c, "SELECT * FROM idem.idem_request_retention('set', 'off-op', 7200, 'r')");
    QVERIFY2(msg.find("a retention change does not need approval") != std::string::npos, msg.c_str());
    msg = messageOf(*c, "SELECT * FROM idem.idem_request_purge(100, 0, 0.5, 'r')");
    QVERIFY2(msg.find("a manual purge does not need approval") != std::string::npos, msg.c_str());
    QCOMPARE(state(), before);
    // idemctl as before: the change made, no request.
    auto run = idemctl("idem_t_chg_purge",
        { QStringLiteral("retention"), QStringLiteral("set"), QStringLiteral("off-op"), QStringLiteral("3d"),
            QStringLiteral("--reason"), QStringLiteral("direct") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(!run.out.contains(QStringLiteral("awaiting approval")), qPrintable(run.out));
    QCOMPARE(scalar(*m_owner, "SELECT horizon FROM idem.idem_retention_policy WHERE operation = 'off-op'"),
        QByteArray("72:00:00"));
    run = idemctl("idem_t_chg_purge", { QStringLiteral("purge"), QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY(json(run).contains(QStringLiteral("run_id")));
    QCOMPARE(number("SELECT count(*) FROM idem.idem_approval_requests WHERE state <> 'used'"), 0);
    checkChain();
}

// On: the direct calls are refused in words, changing nothing; the switches are the owner's.
void TestChangeApprovals::directCallsRefusedWhenOn()
{
    setSwitches(true, true, 600);
    // One entry per kind (schema v28: the registry of gated kinds).
    QCOMPARE(scalar(*m_owner,
                 "SELECT string_agg(action || ' ' || (after_image ->> 'kind') || ' ' || (after_image ->> 'gated') || ' '"
                 " || (after_image ->> 'ttl_seconds'), ',' ORDER BY id) FROM (SELECT * FROM idem.task_idempotency_audit"
                 " ORDER BY id DESC LIMIT 2) a"),
        QByteArray("approval_policy retention true 600,approval_policy purge true 600"));
    auto c = login("idem_t_chg_purge");
    const auto before = state();
    auto msg = messageOf(*c, "SELECT * FROM idem.idem_set_retention('on-op', 7200, 'direct')");
    QVERIFY2(msg.find("retention changes need a second person's approval") != std::string::npos, msg.c_str());
    msg = messageOf(*c, "SELECT * FROM idem.idem_clear_retention('on-op', 'direct')");
    QVERIFY2(msg.find("retention changes need a second person's approval") != std::string::npos, msg.c_str());
    msg = messageOf(*c, "SELECT * FROM idem.idem_purge(10, 1, 'direct')");
    QVERIFY2(msg.find("manual purges need a second person's approval") != std::string::npos, msg.c_str());
    msg = messageOf(*c, "SELECT idem.idem_purge_begin('direct')");
    QVERIFY2(msg.find("manual purges need a second person's approval") != std::string::npos, msg.c_str());
    // By hand, the scheduler's procedure is a manual purge too: only pg_cron's session is not.
    try {
        pqxx::nontransaction(*c).exec("CALL idem.idem_purge_run(10, 5, 'by hand')");
        QFAIL("CALL idem_purge_run by hand ran with manual purges needing approval");
    } catch (const pqxx::sql_error& e) {
        QCOMPARE(e.sqlstate(), std::string("ID004"));
        QVERIFY2(
            std::string(e.what()).find("manual purges need a second person's approval") != std::string::npos, e.what());
    }
    QCOMPARE(state(), before);
    // Not the operators': the switches are the schema owner's.
    auto op = login("idem_t_chg_both");
    QCOMPARE(
        sqlstateOf(*op, "SELECT * FROM idem.idem_set_change_approval(false, false, 3600, 'r')"), std::string("42501"));
    QCOMPARE(sqlstateOf(*op, "UPDATE idem.idem_approval_kinds SET gated = false"), std::string("42501"));
    QCOMPARE(sqlstateOf(*op, "SELECT * FROM idem.idem_set_approval_policy('purge', false, NULL, 3600, 'r')"),
        std::string("42501"));
    QCOMPARE(sqlstateOf(*op,
                 "INSERT INTO idem.idem_approval_requests (kind, spec, spec_sha256, requested_login,"
                 " requested_role, requested_actor, requested_reason, requested_at, approvable_until,"
                 " request_audit_id) VALUES ('purge', '{}', repeat('a', 64), 'x', 'x', 'x', 'x', now(), now(), 0)"),
        std::string("42501"));
    QCOMPARE(state(), before);
    checkChain();
}

// The whole path: the requester cannot approve, nor can a login that may act as it, nor one
// without the approve right; another login approves the exact spec; the use applies it once, and
// nothing else runs under it in that transaction.
void TestChangeApprovals::retentionRequestApprovedByAnotherLoginUsedOnce()
{
    setSwitches(true, false);
    const auto [id, sha] = requestRetention("idem_t_chg_both", "pay", 2 * 86400);
    const std::string ids = std::to_string(id);
    QCOMPARE(scalar(*m_owner,
                 "SELECT kind || ' ' || state || ' ' || requested_login || ' ' || spec::text FROM"
                 " idem.idem_approval_requests WHERE id = "
                     + ids),
        QByteArray("retention awaiting_approval idem_t_chg_both {\"kind\": \"retention\", \"change\": \"set\", "
                   "\"operation\": \"pay\","
                   " \"horizon_seconds\": 172800}"));
    QCOMPARE(
        scalar(*m_owner,
            "SELECT encode(sha256(convert_to(spec::text, 'UTF8')), 'hex') FROM idem.idem_approval_requests WHERE id = "
                + ids),
        QByteArray::fromStdString(sha));
    QCOMPARE(scalar(*m_owner,
                 "SELECT action || ' ' || db_role || ' ' || (after_image ->> 'request_id') FROM"
                 " idem.task_idempotency_audit ORDER BY id DESC LIMIT 1"),
        QByteArray::fromStdString("change_request idem_t_chg_both " + ids));
    QCOMPARE(
        scalar(*m_owner, "SELECT count(*) FROM idem.idem_retention_policy WHERE operation = 'pay'"), QByteArray("0"));
    const auto approve = [&](pqxx::connection& c, const std::string& spec) {
        return messageOf(c, "SELECT * FROM idem.idem_change_approve(" + ids + ", '" + spec + "', 'checked', 'bo')");
    };
    auto before = state();
    // Not approved yet: the use is refused.
    auto both = login("idem_t_chg_both");
    auto msg = messageOf(*both, "SELECT * FROM idem.idem_change_use(" + ids + ", '" + sha + "')");
    QVERIFY2(msg.find("change request " + ids + " is not approved yet") != std::string::npos, msg.c_str());
    // The requester, though it holds the approve right.
    msg = approve(*both, sha);
    QVERIFY2(msg.find("login idem_t_chg_both cannot approve change request " + ids
                 + ": it was requested by login idem_t_chg_both")
            != std::string::npos,
        msg.c_str());
    auto alias = login("idem_t_chg_alias");
    msg = approve(*alias, sha);
    QVERIFY2(msg.find("one of the two may act as the other") != std::string::npos, msg.c_str());
    // Without the approve right.
    auto requeuer = login("idem_t_chg_requeue");
    QCOMPARE(sqlstateOf(*requeuer, "SELECT * FROM idem.idem_change_approve(" + ids + ", '" + sha + "', 'r')"),
        std::string("42501"));
    auto purger = login("idem_t_chg_purge");
    QCOMPARE(sqlstateOf(*purger, "SELECT * FROM idem.idem_change_approve(" + ids + ", '" + sha + "', 'r')"),
        std::string("42501"));
    // A changed spec.
    msg = approve(*login("idem_t_chg_approve"), std::string(64, 'a'));
    QVERIFY2(msg.find("that spec is not change request " + ids + "'s") != std::string::npos, msg.c_str());
    QCOMPARE(state(), before);

    auto approver = login("idem_t_chg_approve");
    msg = approve(*approver, sha);
    QVERIFY2(msg.empty(), msg.c_str());
    QCOMPARE(
        scalar(*m_owner,
            "SELECT state || ' ' || approved_login || ' ' || approved_reason || ' ' ||"
            " extract(epoch FROM approval_expires_at - approved_at)::int FROM idem.idem_approval_requests WHERE id = "
                + ids),
        QByteArray("approved idem_t_chg_approve checked 3600"));
    QCOMPARE(scalar(*m_owner,
                 "SELECT action || ' ' || db_role || ' ' || os_user FROM idem.task_idempotency_audit ORDER BY id DESC "
                 "LIMIT 1"),
        QByteArray("change_approve idem_t_chg_approve bo"));
    // Approved once only.
    msg = approve(*approver, sha);
    QVERIFY2(msg.find("is not waiting for approval: it is approved") != std::string::npos, msg.c_str());
    QCOMPARE(
        sqlstateOf(*approver, "SELECT * FROM idem.idem_change_use(" + ids + ", '" + sha + "')"), std::string("42501"));

    // The use, and in its transaction nothing else under it: not another horizon, not the same
    // change a second time (rolled back: the request stays approved).
    {
        pqxx::work w(*purger);
        w.exec("SELECT * FROM idem.idem_change_use(" + ids + ", '" + sha + "')");
        for (const char* sql : { "SELECT * FROM idem.idem_set_retention('pay', 3600, 'sneak')",
                 "SELECT * FROM idem.idem_set_retention('pay', 172800, 'again')" }) {
            pqxx::subtransaction sub(w, "sneak");
            try {
                sub.exec(sql);
                QFAIL(sql);
            } catch (const pqxx::sql_error& e) {
                QCOMPARE(e.sqlstate(), std::string("ID004"));
            }
            sub.abort();
        }
        w.abort();
    }
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_approval_requests WHERE id = " + ids), QByteArray("approved"));
    const auto use = idem::useRetentionRequest(*purger, schema, id, sha, "pat");
    QVERIFY(use.appliedAuditId);
    QCOMPARE(scalar(*m_owner, "SELECT horizon FROM idem.idem_retention_policy WHERE operation = 'pay'"),
        QByteArray("48:00:00"));
    QCOMPARE(scalar(*m_owner,
                 "SELECT string_agg(action || ':' || db_role, ' ' ORDER BY id) FROM"
                 " (SELECT * FROM idem.task_idempotency_audit ORDER BY id DESC LIMIT 2) a"),
        QByteArray("change_use:idem_t_chg_purge retention:idem_t_chg_purge"));
    QCOMPARE(scalar(*m_owner,
                 "SELECT state || ' ' || used_login || ' ' || (applied_audit_id = "
                     + std::to_string(*use.appliedAuditId) + ") FROM idem.idem_approval_requests WHERE id = " + ids),
        QByteArray("used idem_t_chg_purge true"));
    // Used twice: refused.
    before = state();
    msg = messageOf(*purger, "SELECT * FROM idem.idem_change_use(" + ids + ", '" + sha + "')");
    QVERIFY2(msg.find("change request " + ids + " was used already, by login idem_t_chg_purge") != std::string::npos,
        msg.c_str());
    QCOMPARE(state(), before);
    checkChain();
}

// An approval names one request's exact spec: not another request's, not a spec changed since.
void TestChangeApprovals::approvalOfOneRequestCoversNoOther()
{
    setSwitches(true, true);
    const auto [a, shaA] = requestRetention("idem_t_chg_purge", "op-a", 86400);
    const auto [b, shaB] = requestRetention("idem_t_chg_purge", "op-b", 86400);
    const std::string idA = std::to_string(a), idB = std::to_string(b);
    auto approver = login("idem_t_chg_approve");
    QVERIFY(messageOf(*approver, "SELECT * FROM idem.idem_change_approve(" + idA + ", '" + shaA + "', 'ok')").empty());
    auto purger = login("idem_t_chg_purge");
    const auto before = state();
    // A's approval for B: B is not approved; B's spec for A: not A's.
    auto msg = messageOf(*purger, "SELECT * FROM idem.idem_change_use(" + idB + ", '" + shaA + "')");
    QVERIFY2(msg.find("is not approved yet") != std::string::npos, msg.c_str());
    msg = messageOf(*purger, "SELECT * FROM idem.idem_change_use(" + idA + ", '" + shaB + "')");
    QVERIFY2(msg.find("that spec is not change request " + idA + "'s") != std::string::npos, msg.c_str());
    // A purge cannot run under a retention request's approval.
    idem::PurgeOptions o;
    o.requestId = a;
    o.requestSha256 = shaA;
    QVERIFY_THROWS_EXCEPTION(idem::JobRefused, idem::runPurge(*purger, schema, o));
    QCOMPARE(state(), before);
    // The spec changed behind the approval (only the owner could): the use is refused.
    {
        pqxx::work w(*m_owner);
        w.exec("UPDATE idem.idem_approval_requests SET spec = jsonb_set(spec, '{horizon_seconds}', '3600') WHERE id = "
            + idA);
        w.commit();
    }
    const auto tampered = state();
    msg = messageOf(*purger, "SELECT * FROM idem.idem_change_use(" + idA + ", '" + shaA + "')");
    QVERIFY2(msg.find("that spec is not change request " + idA + "'s") != std::string::npos, msg.c_str());
    QCOMPARE(state(), tampered);
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_retention_policy WHERE operation IN ('op-a', 'op-b')"),
        QByteArray("0"));
    checkChain();
}

// A request past its time for approval cannot be approved; an approval past its expiry cannot be
// used. (The instants are moved back by the owner: no test waits for a clock.)
void TestChangeApprovals::expiredRequestsAndApprovalsRefused()
{
    setSwitches(true, false, 60);
    const auto [a, shaA] = requestRetention("idem_t_chg_purge", "exp-a", 86400);
    const auto [b, shaB] = requestRetention("idem_t_chg_purge", "exp-b", 86400);
    const std::string idA = std::to_string(a), idB = std::to_string(b);
    QCOMPARE(number("SELECT extract(epoch FROM approvable_until - requested_at)::bigint FROM idem.idem_approval_requests "
                    "WHERE id = "
                 + idA),
        60);
    auto approver = login("idem_t_chg_approve");
    QVERIFY(messageOf(*approver, "SELECT * FROM idem.idem_change_approve(" + idA + ", '" + shaA + "', 'ok')").empty());
    {
        pqxx::work w(*m_owner);
        w.exec(
            "UPDATE idem.idem_approval_requests SET approval_expires_at = now() - interval '1 second' WHERE id = " + idA);
        w.exec("UPDATE idem.idem_approval_requests SET approvable_until = now() - interval '1 second' WHERE id = " + idB);
        w.commit();
    }
    const auto before = state();
    auto msg = messageOf(*login("idem_t_chg_purge"), "SELECT * FROM idem.idem_change_use(" + idA + ", '" + shaA + "')");
    QVERIFY2(msg.find("change request " + idA + "'s approval expired at") != std::string::npos, msg.c_str());
    msg = messageOf(*approver, "SELECT * FROM idem.idem_change_approve(" + idB + ", '" + shaB + "', 'too late')");
    QVERIFY2(msg.find("change request " + idB + "'s request for approval expired at") != std::string::npos, msg.c_str());
    QCOMPARE(state(), before);
    // Listed while they expire, for a day; then no longer (they would crowd out the live ones).
    const auto listed = [&] {
        QStringList ids;
        for (const auto& c : idem::listApprovalRequests(*m_owner, schema))
            ids << QString::number(c.id) + (c.expired() ? QStringLiteral(" expired") : QString());
        return ids.join(QLatin1Char(','));
    };
    QCOMPARE(listed(), QStringLiteral("%1 expired,%2 expired").arg(a).arg(b));
    {
        pqxx::work w(*m_owner);
        w.exec("UPDATE idem.idem_approval_requests SET approvable_until = now() - interval '25 hours',"
               " requested_at = now() - interval '26 hours' WHERE id = "
            + idB);
        w.commit();
    }
    QCOMPARE(listed(), QStringLiteral("%1 expired").arg(a));
    const auto moved = state();
    // idemctl: refused, exit 3, nothing changed.
    const auto run = idemctl("idem_t_chg_purge",
        { QStringLiteral("retention"), QStringLiteral("apply"), QStringLiteral("--request"), QString::number(a),
            QStringLiteral("--spec"), QString::fromStdString(shaA) });
    QCOMPARE(run.exitCode, 3);
    QVERIFY2(run.err.contains(QStringLiteral("expired at")), qPrintable(run.err));
    QCOMPARE(state(), moved);
    checkChain();
}

void TestChangeApprovals::hostileInputsChangeNothing_data()
{
    QTest::addColumn<QString>("role");
    QTest::addColumn<QString>("sql");
    QTest::addColumn<QString>("words");
    QTest::addColumn<QString>("code");
    // ID003 a bad argument; ID002 (not found) and ID004 (refused by state or policy) named.
    const auto row = [](const char* name, const char* role, const char* sql, const char* words,
                         const char* code = "ID003") {
        QTest::newRow(name) << QString::fromLatin1(role) << QString::fromLatin1(sql) << QString::fromLatin1(words)
                            << QString::fromLatin1(code);
    };
    const char* owner = "";
    const char* purge = "idem_t_chg_purge";
    const char* approve = "idem_t_chg_approve";
    row("switch null", owner, "SELECT * FROM idem.idem_set_change_approval(NULL, true, 3600, 'r')",
        "true or false, not NULL");
    row("switch null 2", owner, "SELECT * FROM idem.idem_set_change_approval(true, NULL, 3600, 'r')",
        "true or false, not NULL");
    row("ttl null", owner, "SELECT * FROM idem.idem_set_change_approval(true, true, NULL, 'r')",
        "60 to 604800 seconds (a week), not NULL");
    row("ttl short", owner, "SELECT * FROM idem.idem_set_change_approval(true, true, 59, 'r')", "not 59");
    row("ttl long", owner, "SELECT * FROM idem.idem_set_change_approval(true, true, 604801, 'r')", "not 604801");
    row("policy no reason", owner, "SELECT * FROM idem.idem_set_change_approval(true, true, 600, NULL)",
        "a reason is required");
    row("change null", purge, "SELECT * FROM idem.idem_request_retention(NULL, 'op', 7200, 'r')",
        "set or clear, not NULL");
    row("change bad", purge, "SELECT * FROM idem.idem_request_retention('drop', 'op', 7200, 'r')",
        "set or clear, not 'drop'");
    row("operation null", purge, "SELECT * FROM idem.idem_request_retention('set', NULL, 7200, 'r')", "not NULL");
    row("operation colon", purge, "SELECT * FROM idem.idem_request_retention('set', 'a:b', 7200, 'r')", "without ':'");
    row("horizon null", purge, "SELECT * FROM idem.idem_request_retention('set', 'op', NULL, 'r')",
        "3600 to 315360000 seconds");
    row("horizon short", purge, "SELECT * FROM idem.idem_request_retention('set', 'op', 3599, 'r')", "not 3599");
    row("horizon long", purge, "SELECT * FROM idem.idem_request_retention('set', 'op', 315360001, 'r')",
        "not 315360001");
    row("clear default", purge, "SELECT * FROM idem.idem_request_retention('clear', '*', NULL, 'r')",
        "cannot be removed");
    row("clear with horizon", purge, "SELECT * FROM idem.idem_request_retention('clear', 'op', 7200, 'r')",
        "names no horizon");
    row("request no reason", purge, "SELECT * FROM idem.idem_request_retention('set', 'op', 7200, NULL)",
        "a reason is required");
    row("request blank reason", purge, "SELECT * FROM idem.idem_request_purge(10, 0, 0.5, '  ')",
        "a reason is required");
    row("batch null", purge, "SELECT * FROM idem.idem_request_purge(NULL, 0, 0.5, 'r')",
        "batch must be 1 to 100000 rows, not NULL");
    row("batch zero", purge, "SELECT * FROM idem.idem_request_purge(0, 0, 0.5, 'r')", "not 0");
    row("seconds null", purge, "SELECT * FROM idem.idem_request_purge(10, NULL, 0.5, 'r')", "max_seconds must be 0");
    row("seconds negative", purge, "SELECT * FROM idem.idem_request_purge(10, -1, 0.5, 'r')", "not -1");
    row("duty null", purge, "SELECT * FROM idem.idem_request_purge(10, 0, NULL, 'r')",
        "duty must be 0.01 to 1, not NULL");
    row("duty nan", purge, "SELECT * FROM idem.idem_request_purge(10, 0, 'NaN', 'r')", "duty must be 0.01 to 1");
    row("approve null id", approve, "SELECT * FROM idem.idem_change_approve(NULL, repeat('a', 64), 'r')",
        "name the request to approve");
    row("approve null sha", approve, "SELECT * FROM idem.idem_change_approve(1, NULL, 'r')",
        "64 lower-case hex digits, not NULL");
    row("approve bad sha", approve, "SELECT * FROM idem.idem_change_approve(1, 'ABC', 'r')", "not 'ABC'");
    row("approve no reason", approve, "SELECT * FROM idem.idem_change_approve(1, repeat('a', 64), NULL)",
        "a reason is required");
    row("approve no request", approve, "SELECT * FROM idem.idem_change_approve(999999, repeat('a', 64), 'r')",
        "there is no request 999999", "ID002");
    // Schema v28's one approve and decline, and the one policy setter.
    row("one approve null id", approve, "SELECT * FROM idem.idem_approval_approve(NULL, repeat('a', 64), 'r')",
        "name the request to approve");
    row("one approve no request", approve, "SELECT * FROM idem.idem_approval_approve(999999, repeat('a', 64), 'r')",
        "there is no request 999999", "ID002");
    row("decline null id", approve, "SELECT * FROM idem.idem_approval_decline(NULL, 'r')", "name the request to decline");
    row("decline no reason", approve, "SELECT * FROM idem.idem_approval_decline(1, NULL)", "a reason is required");
    row("decline no request", approve, "SELECT * FROM idem.idem_approval_decline(999999, 'r')",
        "there is no request 999999", "ID002");
    row("policy null kind", owner, "SELECT * FROM idem.idem_set_approval_policy(NULL, true, NULL, 3600, 'r')",
        "name the gated kind");
    row("policy unknown kind", owner, "SELECT * FROM idem.idem_set_approval_policy('reboot', true, NULL, 3600, 'r')",
        "there is no gated kind 'reboot'", "ID002");
    row("policy rows of a purge", owner, "SELECT * FROM idem.idem_set_approval_policy('purge', true, 5, 3600, 'r')",
        "a purge request counts no rows");
    row("policy null gated", owner, "SELECT * FROM idem.idem_set_approval_policy('job', NULL, 5, 3600, 'r')",
        "true or false, not NULL");
    row("policy huge rows", owner, "SELECT * FROM idem.idem_set_approval_policy('job', true, 1000001, 3600, 'r')",
        "not 1000001");
    // The second-person rule (the owner's internal, shared by every approval) with no requester.
    row("approver no requester", owner, "SELECT idem.idem_approver_check('job 1', NULL)",
        "job 1 records no login that requested it", "ID004");
    row("approver is requester", owner, "SELECT idem.idem_approver_check('job 1', session_user)",
        "cannot approve job 1: it was requested by login", "ID004");
    row("use null id", purge, "SELECT * FROM idem.idem_change_use(NULL, repeat('a', 64))",
        "name the change request to use");
    row("use null sha", purge, "SELECT * FROM idem.idem_change_use(1, NULL)", "64 lower-case hex digits, not NULL");
    row("use long actor", purge, "SELECT * FROM idem.idem_change_use(1, repeat('a', 64), repeat('x', 300))",
        "longer than 256");
    row("use no request", purge, "SELECT * FROM idem.idem_change_use(999999, repeat('a', 64))",
        "there is no change request 999999", "ID002");
}

void TestChangeApprovals::hostileInputsChangeNothing()
{
    QFETCH(QString, role);
    QFETCH(QString, sql);
    QFETCH(QString, words);
    QFETCH(QString, code);
    setSwitches(true, true);
    const auto before = state();
    auto c = role.isEmpty() ? idem::connect(m_db->dsn()) : login(role.toLatin1().constData());
    try {
        pqxx::work w(*c);
        w.exec(sql.toStdString());
        w.commit();
        QFAIL("accepted");
    } catch (const pqxx::sql_error& e) {
        QCOMPARE(QString::fromStdString(e.sqlstate()), code);
        QVERIFY2(QString::fromUtf8(e.what()).contains(words), e.what());
    }
    QCOMPARE(state(), before);
    // Whoever lacks the right gets 42501 instead, before any argument is looked at.
    auto reader = login("idem_t_chg_reader");
    if (!role.isEmpty())
        QCOMPARE(sqlstateOf(*reader, sql.toStdString()), std::string("42501"));
    QCOMPARE(state(), before);
}

// idemctl: the owner turns the switch on; purge requests instead of removing; approvals list shows
// it; the requester cannot approve; another login does; purge --request runs it once; the
// audit chain verifies.
void TestChangeApprovals::idemctlPurgeRequestApproveRun()
{
    plantSucceeded("t-due", 30, "400 days");
    plantSucceeded("t-kept", 5, "1 hour");
    auto run = idemctl(nullptr,
        { QStringLiteral("approvals"), QStringLiteral("policy"), QStringLiteral("purge"), QStringLiteral("--on"),
            QStringLiteral("--ttl"), QStringLiteral("900"), QStringLiteral("--reason"), QStringLiteral("two people purge"),
            QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto kinds = json(run).value(QStringLiteral("kinds")).toArray();
    QCOMPARE(kinds.size(), 3);
    QCOMPARE(kinds.at(1).toObject().value(QStringLiteral("kind")).toString(), QStringLiteral("purge"));
    QCOMPARE(kinds.at(1).toObject().value(QStringLiteral("gated")).toBool(), true);
    QCOMPARE(kinds.at(1).toObject().value(QStringLiteral("ttl_seconds")).toInt(), 900);
    QCOMPARE(kinds.at(2).toObject().value(QStringLiteral("gated")).toBool(), false);
    run = idemctl(nullptr,
        { QStringLiteral("approvals"), QStringLiteral("policy"), QStringLiteral("purge"), QStringLiteral("--reason"),
            QStringLiteral("x") });
    QCOMPARE(run.exitCode, 2); // neither --on nor --off
    run = idemctl(nullptr,
        { QStringLiteral("approvals"), QStringLiteral("policy"), QStringLiteral("reboot"), QStringLiteral("--on"),
            QStringLiteral("--reason"), QStringLiteral("x") });
    QCOMPARE(run.exitCode, 3);
    QVERIFY2(run.err.contains(QStringLiteral("SQLSTATE ID002")) && run.err.contains(QStringLiteral("no gated kind")),
        qPrintable(run.err));
    run = idemctl("idem_t_chg_both",
        { QStringLiteral("approvals"), QStringLiteral("policy"), QStringLiteral("purge"), QStringLiteral("--off"),
            QStringLiteral("--reason"), QStringLiteral("x") });
    QCOMPARE(run.exitCode, 3);
    // Where the commands were before: they say where they moved.
    run = idemctl(nullptr, { QStringLiteral("job"), QStringLiteral("pending") });
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(QStringLiteral("idemctl job pending moved: idemctl approvals list")), qPrintable(run.err));

    const auto tasks = number("SELECT count(*) FROM idem.task_idempotency");
    run = idemctl("idem_t_chg_both",
        { QStringLiteral("purge"), QStringLiteral("--batch"), QStringLiteral("7"), QStringLiteral("--reason"),
            QStringLiteral("disk nearly full") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto id = number("SELECT max(id) FROM idem.idem_approval_requests");
    const auto sha
        = scalar(*m_owner, "SELECT spec_sha256 FROM idem.idem_approval_requests WHERE id = " + std::to_string(id));
    QVERIFY2(run.out.contains(
                 QStringLiteral("awaiting approval: request %1 (sha256 %2)").arg(id).arg(QString::fromLatin1(sha))),
        qPrintable(run.out));
    QCOMPARE(number("SELECT count(*) FROM idem.task_idempotency"), tasks);
    QCOMPARE(scalar(*m_owner, "SELECT spec::text FROM idem.idem_approval_requests WHERE id = " + std::to_string(id)),
        QByteArray("{\"duty\": 0.1, \"kind\": \"purge\", \"batch\": 7, \"max_seconds\": 0}"));

    run = idemctl(
        "idem_t_chg_approve", { QStringLiteral("approvals"), QStringLiteral("list"), QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto requests = json(run).value(QStringLiteral("requests")).toArray();
    QCOMPARE(requests.size(), 1);
    QCOMPARE(requests.at(0).toObject().value(QStringLiteral("spec_sha256")).toString(), QString::fromLatin1(sha));
    QCOMPARE(requests.at(0).toObject().value(QStringLiteral("requested_login")).toString(),
        QStringLiteral("idem_t_chg_both"));
    run = idemctl("idem_t_chg_approve", { QStringLiteral("approvals"), QStringLiteral("list") });
    QVERIFY2(run.out.contains(QStringLiteral("request %1: purge: batches of 7, until nothing is due").arg(id)),
        qPrintable(run.out));

    // Not run before it is approved; the requester cannot approve it.
    const QStringList use { QStringLiteral("purge"), QStringLiteral("--request"), QString::number(id),
        QStringLiteral("--spec"), QString::fromLatin1(sha) };
    run = idemctl("idem_t_chg_both", use);
    QCOMPARE(run.exitCode, 3);
    QVERIFY2(run.err.contains(QStringLiteral("not approved yet")), qPrintable(run.err));
    const QStringList approve { QStringLiteral("approvals"), QStringLiteral("approve"), QString::number(id),
        QStringLiteral("--spec"), QString::fromLatin1(sha), QStringLiteral("--reason"),
        QStringLiteral("checked the due rows") };
    run = idemctl("idem_t_chg_both", approve);
    QCOMPARE(run.exitCode, 3);
    QVERIFY2(run.err.contains(QStringLiteral("cannot approve change request")), qPrintable(run.err));
    run = idemctl("idem_t_chg_approve", approve);
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("request %1 approved").arg(id)), qPrintable(run.out));
    QCOMPARE(number("SELECT count(*) FROM idem.task_idempotency"), tasks);

    run = idemctl("idem_t_chg_both", use + QStringList { QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QCOMPARE(json(run).value(QStringLiteral("rows_removed")).toInt(), 30);
    QCOMPARE(json(run).value(QStringLiteral("request_id")).toInteger(), qint64(id));
    QCOMPARE(number("SELECT count(*) FROM idem.task_idempotency"), tasks - 30);
    // Batches of the request's 7, the request's reason.
    QCOMPARE(scalar(*m_owner,
                 "SELECT r.batches || ' ' || r.reason || ' ' || r.db_role FROM idem.idem_purge_runs r"
                 " JOIN idem.idem_approval_requests q ON q.purge_run_id = r.id WHERE q.id = "
                     + std::to_string(id)),
        QByteArray("5 disk nearly full idem_t_chg_both"));
    // Used twice: refused, nothing removed.
    plantSucceeded("t-due2", 3, "400 days");
    run = idemctl("idem_t_chg_both", use);
    QCOMPARE(run.exitCode, 3);
    QVERIFY2(run.err.contains(QStringLiteral("was used already")), qPrintable(run.err));
    QCOMPARE(number("SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 't-due2:%'"), 3);
    // The chain verifies, through idemctl too.
    run = idemctl(nullptr, { QStringLiteral("audit"), QStringLiteral("verify") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    checkChain();
}

// idemctl retention set requests; apply applies it once, after another login's approval.
void TestChangeApprovals::idemctlRetentionAndPending()
{
    auto run = idemctl(nullptr,
        { QStringLiteral("approvals"), QStringLiteral("policy"), QStringLiteral("retention"), QStringLiteral("--on"),
            QStringLiteral("--reason"), QStringLiteral("two people") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("retention: needs approval (a retention change)")), qPrintable(run.out));
    // What the Storage page says it from.
    const auto storage = idem::readStorage(*login("idem_t_chg_reader"), schema);
    QVERIFY(storage.retentionChangesNeedApproval);
    QVERIFY(!storage.manualPurgesNeedApproval);
    const auto before = scalar(*m_owner,
        "SELECT string_agg(operation || '=' || horizon::text, ',' ORDER BY operation) FROM idem.idem_retention_policy");
    run = idemctl("idem_t_chg_purge",
        { QStringLiteral("retention"), QStringLiteral("set"), QStringLiteral("refund"), QStringLiteral("12h"),
            QStringLiteral("--reason"), QStringLiteral("smaller table") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto id = number("SELECT max(id) FROM idem.idem_approval_requests");
    const auto sha
        = scalar(*m_owner, "SELECT spec_sha256 FROM idem.idem_approval_requests WHERE id = " + std::to_string(id));
    QVERIFY2(run.out.contains(
                 QStringLiteral("awaiting approval: request %1 (sha256 %2)").arg(id).arg(QString::fromLatin1(sha))),
        qPrintable(run.out));
    QCOMPARE(scalar(*m_owner,
                 "SELECT string_agg(operation || '=' || horizon::text, ',' ORDER BY operation) FROM "
                 "idem.idem_retention_policy"),
        before);
    run = idemctl("idem_t_chg_approve",
        { QStringLiteral("approvals"), QStringLiteral("approve"), QString::number(id), QStringLiteral("--spec"),
            QString::fromLatin1(sha), QStringLiteral("--reason"), QStringLiteral("fine") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const QStringList apply { QStringLiteral("retention"), QStringLiteral("apply"), QStringLiteral("--request"),
        QString::number(id), QStringLiteral("--spec"), QString::fromLatin1(sha) };
    run = idemctl("idem_t_chg_purge", apply);
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(
        run.out.contains(QStringLiteral("request %1 applied: retention: set refund to").arg(id)), qPrintable(run.out));
    QCOMPARE(scalar(*m_owner, "SELECT horizon FROM idem.idem_retention_policy WHERE operation = 'refund'"),
        QByteArray("12:00:00"));
    run = idemctl("idem_t_chg_purge", apply);
    QCOMPARE(run.exitCode, 3);
    // Bad usage: exit 2, nothing sent.
    run = idemctl("idem_t_chg_purge",
        { QStringLiteral("retention"), QStringLiteral("apply"), QStringLiteral("--request"), QStringLiteral("1") });
    QCOMPARE(run.exitCode, 2);
    run = idemctl("idem_t_chg_purge",
        { QStringLiteral("purge"), QStringLiteral("--request"), QStringLiteral("1"), QStringLiteral("--spec"),
            QStringLiteral("XYZ") });
    QCOMPARE(run.exitCode, 2);
    checkChain();
}

// Issue #40 item 1: with jobs over 11 rows needing a second person, one login requeued 30 rows
// unapproved as jobs of at most 11 rows (key prefixes) and 30 more one key at a time
// (--keys-from). With the budget (schema v23, 20 rows an hour) the same login's jobs and single
// actions count together: the third job of 10 rows waits for approval, and single requeues past
// the budget are refused with ID004, nothing changed, saying how to get them approved.
void TestChangeApprovals::budgetBoundsSplitJobsAndSingleActions()
{
    {
        pqxx::work w(*m_owner);
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts,"
               " error_class, created_at, updated_at)"
               " SELECT 'bud:charge:' || g || lpad(i::text, 2, '0'), 'h', 'failed', 5, 5, 'retryable',"
               "        now() - interval '2 hours', now() - interval '1 hour'"
               "   FROM unnest(ARRAY['a', 'b', 'c', 'd']) g, generate_series(1, 10) i");
        w.commit();
    }
    idem::setApprovalKindPolicy(*m_owner, schema, "job", true, 11, 3600, "jobs over 11 rows need two people", "admin");
    auto run = idemctl(nullptr,
        { QStringLiteral("approvals"), QStringLiteral("policy"), QStringLiteral("--budget"), QStringLiteral("20"),
            QStringLiteral("--window"), QStringLiteral("3600"), QStringLiteral("--reason"),
            QStringLiteral("bound what one login changes alone") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("one login changes at most 20 task row(s) without another login's "
                                             "approval in any 3600 s")),
        qPrintable(run.out));
    QCOMPARE(scalar(*m_owner,
                 "SELECT (after_image ->> 'budget_rows') || ' ' || (after_image ->> 'budget_window_seconds') FROM "
                 "idem.task_idempotency_audit WHERE action = 'approval_policy' ORDER BY id DESC LIMIT 1"),
        QByteArray("20 3600"));
    // Not the owner's to change by anyone else.
    run = idemctl("idem_t_chg_operator",
        { QStringLiteral("approvals"), QStringLiteral("policy"), QStringLiteral("--budget"), QStringLiteral("off"),
            QStringLiteral("--reason"), QStringLiteral("x") });
    QCOMPARE(run.exitCode, 3);
    const auto job = [&](const char* group) {
        return idemctl("idem_t_chg_operator",
            { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"), QStringLiteral("requeue"),
                QStringLiteral("--key-prefix"), QStringLiteral("bud:charge:") + QLatin1String(group),
                QStringLiteral("--reason"), QStringLiteral("gateway fixed"), QStringLiteral("--quiet") });
    };
    run = job("a");
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    run = job("b");
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    // A dry run says so before anything is started.
    run = idemctl("idem_t_chg_operator",
        { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"), QStringLiteral("requeue"),
            QStringLiteral("--key-prefix"), QStringLiteral("bud:charge:c"), QStringLiteral("--dry-run") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("if started now, it needs another login's approval: this login changed 20 "
                                             "task row(s) without one in the last 3600 s")),
        qPrintable(run.out));
    run = job("c");
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("waiting for approval by another login holding the approve right (role "
                                             "idem_may_approve): over this login's budget")),
        qPrintable(run.out));
    QCOMPARE(scalar(*m_owner,
                 "SELECT string_agg(state || ':' || coalesce(approval_why, '-') || ':' || changed, ' ' ORDER BY id)"
                 " FROM idem.idem_jobs WHERE filter ->> 'key_prefix' LIKE 'bud:%'"),
        QByteArray("finished:-:10 finished:-:10 awaiting_approval:budget:0"));
    QCOMPARE(number("SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'bud:charge:c%'"
                    " AND status = 'failed'"),
        10);

    // Single actions, one key at a time (--keys-from): refused, nothing changed, and told how.
    QTemporaryFile keys;
    QVERIFY(keys.open());
    for (int i = 1; i <= 10; ++i)
        keys.write(QStringLiteral("bud:charge:d%1\n").arg(i, 2, 10, QLatin1Char('0')).toUtf8());
    keys.flush();
    const auto audit = number("SELECT count(*) FROM idem.task_idempotency_audit");
    run = idemctl("idem_t_chg_operator",
        { QStringLiteral("requeue"), QStringLiteral("--keys-from"), keys.fileName(), QStringLiteral("--reason"),
            QStringLiteral("one by one") });
    QCOMPARE(run.exitCode, 3);
    QVERIFY2(run.out.contains(QStringLiteral("summary: needs_approval 10")), qPrintable(idem::test::describe(run)));
    QVERIFY2(run.err.contains(QStringLiteral("refused by the approval policy (SQLSTATE ID004)"))
            && run.err.contains(QStringLiteral("start a recovery job over the rows"))
            && run.err.contains(QStringLiteral("idemctl approvals approve")),
        qPrintable(run.err));
    QCOMPARE(number("SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'bud:charge:d%'"
                    " AND status = 'failed'"),
        10);
    QCOMPARE(number("SELECT count(*) FROM idem.task_idempotency_audit"), audit);
    // Another login has a budget of its own (a login is not a person: the guide says so).
    auto other = login("idem_t_chg_requeue");
    QCOMPARE(scalar(*other, "SELECT used || ' ' || coalesce(why, '-') FROM idem.idem_approval_needed('requeue', 1)"),
        QByteArray("0 -"));
    run = idemctl("idem_t_chg_operator", { QStringLiteral("approvals"), QStringLiteral("policy") });
    QVERIFY2(run.out.contains(QStringLiteral("budget: one login changes at most 20")), qPrintable(run.out));
    checkChain();
}

// Issue #40 item 5: an approved purge (batch 10, 1 s, duty 0.01) driven by the same login with
// idem_purge_batch(run, 100000), at any pace, past its time: each refused with ID004, nothing
// removed; batches as approved go through.
void TestChangeApprovals::approvedPurgeHeldToItsSpec()
{
    plantSucceeded("t-spec", 40, "400 days");
    setSwitches(false, true);
    auto requester = login("idem_t_chg_both");
    std::string id, sha;
    {
        pqxx::work w(*requester);
        const auto r = w.exec("SELECT request_id, spec_sha256 FROM idem.idem_request_purge(10, 1, 0.01, 'slowly, please')")
                           .at(0);
        id = r[0].as<std::string>();
        sha = r[1].as<std::string>();
        w.commit();
    }
    {
        auto approver = login("idem_t_chg_approve");
        pqxx::work w(*approver);
        w.exec_params("SELECT * FROM idem.idem_change_approve($1, $2, 'ok at that pace')", std::stoll(id), sha);
        w.commit();
    }
    std::int64_t run = 0;
    {
        pqxx::work w(*requester);
        run = w.exec_params("SELECT purge_run_id FROM idem.idem_change_use($1, $2)", std::stoll(id), sha)[0][0]
                  .as<std::int64_t>();
        w.commit();
    }
    QCOMPARE(scalar(*m_owner,
                 "SELECT spec_batch || ' ' || spec_max_seconds || ' ' || spec_duty || ' ' || change_request_id FROM "
                 "idem.idem_purge_runs WHERE id = "
                     + std::to_string(run)),
        QByteArray::fromStdString("10 1 0.01 " + id));
    // Every row (due rows other tests left count too: a batch takes the oldest due).
    const auto rows = [&] { return number("SELECT count(*) FROM idem.task_idempotency"); };
    const auto all = rows();
    const std::string batch = "SELECT removed FROM idem.idem_purge_batch(" + std::to_string(run) + ", ";
    QCOMPARE(sqlstateOf(*requester, batch + "100000)"), std::string("ID004"));
    QVERIFY2(messageOf(*requester, batch + "100000)").find("approved for batches of 10 rows: not 100000")
            != std::string::npos,
        messageOf(*requester, batch + "100000)").c_str());
    QCOMPARE(rows(), all);
    QVERIFY(messageOf(*requester, batch + "10)").empty());
    QCOMPARE(rows(), all - 10);
    // At duty 0.01 the next batch waits 99 times the last one's time: at once is too soon.
    const auto soon = messageOf(*requester, batch + "10)");
    QVERIFY2(soon.find("its next batch is due at") != std::string::npos, soon.c_str());
    QCOMPARE(rows(), all - 10);
    // Past the approved second, no batch at all.
    QVERIFY(idem::test::waitUntil(
        [&] { return number("SELECT (clock_timestamp() > started_at + interval '1100 ms')::int FROM idem.idem_purge_runs"
                             " WHERE id = " + std::to_string(run)) == 1; },
        std::chrono::seconds(10)));
    const auto late = messageOf(*requester, batch + "10)");
    QVERIFY2(late.find("approved for 1 s: that time is over") != std::string::npos, late.c_str());
    QCOMPARE(rows(), all - 10);
    pqxx::work w(*requester);
    w.exec("SELECT * FROM idem.idem_purge_finish(" + std::to_string(run) + ")");
    w.commit();
    checkChain();
}

// Issue #44 item 2: what an approval names is what runs. idemctl purge --request takes no other
// pace (not even a slower --pause-ms); a client that skips idemctl and calls the SQL with a bigger
// batch than approved is refused by the database, nothing removed; the approved one removes.
void TestChangeApprovals::approvedPurgeRunsOnlyAsApproved()
{
    plantSucceeded("t-spec2", 12, "400 days");
    setSwitches(false, true);
    auto requester = login("idem_t_chg_purge");
    const auto q = idem::requestPurge(*requester, schema, 5, 0, 1.0, "five at a time");
    idem::approveRequest(*login("idem_t_chg_approve"), schema, q.id, q.specSha256, "five is fine");
    const QStringList use { QStringLiteral("purge"), QStringLiteral("--request"), QString::number(q.id),
        QStringLiteral("--spec"), QString::fromStdString(q.specSha256) };
    for (const char* extra : { "--pause-ms", "--batch", "--duty", "--max-seconds" }) {
        const auto run = idemctl("idem_t_chg_purge", use + QStringList { QString::fromLatin1(extra), QStringLiteral("1") });
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(QStringLiteral("--request runs the approved request as it was approved")),
            qPrintable(run.err));
    }
    const auto all = number("SELECT count(*) FROM idem.task_idempotency");
    std::int64_t run = 0;
    {
        pqxx::work w(*requester);
        run = w.exec_params("SELECT purge_run_id FROM idem.idem_change_use($1, $2)", q.id, q.specSha256)[0][0]
                  .as<std::int64_t>();
        w.commit();
    }
    const std::string batch = "SELECT removed FROM idem.idem_purge_batch(" + std::to_string(run) + ", ";
    QCOMPARE(sqlstateOf(*requester, batch + "6)"), std::string("ID004"));
    QCOMPARE(number("SELECT count(*) FROM idem.task_idempotency"), all);
    QVERIFY(messageOf(*requester, batch + "5)").empty());
    QCOMPARE(number("SELECT count(*) FROM idem.task_idempotency"), all - 5);
    messageOf(*requester, "SELECT * FROM idem.idem_purge_finish(" + std::to_string(run) + ")");
    checkChain();
}

// Issue #44 item 1: one decline for every kind. A request waiting for approval is declined by the
// approve right (audited, action decline; a job's cancels the job, nothing of it ran), or withdrawn
// by the login that asked; a declined request is neither approved nor used. An approved job that
// runs is not declined, and the approve right alone no longer cancels it (v21 to v27 it did:
// idem_job_cancel let the approve right cancel a job in any state); its action's right does.
void TestChangeApprovals::declineOnlyWhatWaits()
{
    {
        pqxx::work w(*m_owner);
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts,"
               " error_class, created_at, updated_at)"
               " SELECT 'dec:charge:' || g || i, 'h', 'failed', 5, 5, 'retryable', now() - interval '2 hours',"
               "        now() - interval '1 hour' FROM unnest(ARRAY['a', 'b']) g, generate_series(1, 5) i");
        w.commit();
    }
    idem::setApprovalKindPolicy(*m_owner, schema, "job", true, 3, 3600, "jobs over 3 rows need two people", "admin");
    const auto start = [&](const char* group) {
        const auto run = idemctl("idem_t_chg_operator",
            { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"), QStringLiteral("requeue"),
                QStringLiteral("--key-prefix"), QStringLiteral("dec:charge:") + QLatin1String(group),
                QStringLiteral("--reason"), QStringLiteral("gateway fixed"), QStringLiteral("--detach") });
        return run;
    };
    auto run = start("a");
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto jobA = number("SELECT max(id) FROM idem.idem_jobs");
    const auto reqA = number("SELECT id FROM idem.idem_approval_requests WHERE job_id = " + std::to_string(jobA));
    QVERIFY2(run.out.contains(QStringLiteral("idemctl approvals approve %1 --spec").arg(reqA)), qPrintable(run.out));
    run = start("b");
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto jobB = number("SELECT max(id) FROM idem.idem_jobs");
    const auto reqB = number("SELECT id FROM idem.idem_approval_requests WHERE job_id = " + std::to_string(jobB));
    // A purge request beside them: one list of every kind.
    setSwitches(false, true);
    const auto purge = idem::requestPurge(*login("idem_t_chg_purge"), schema, 10, 0, 0.5, "disk");
    run = idemctl("idem_t_chg_approve", { QStringLiteral("approvals"), QStringLiteral("list"), QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QStringList kinds;
    for (const auto& r : json(run).value(QStringLiteral("requests")).toArray())
        kinds << r.toObject().value(QStringLiteral("kind")).toString() + QLatin1Char(' ')
                + r.toObject().value(QStringLiteral("state")).toString();
    QCOMPARE(kinds.join(QLatin1Char(',')),
        QStringLiteral("job awaiting_approval,job awaiting_approval,purge awaiting_approval"));

    // Job a's request declined by an approver: the job is cancelled, none of its rows changed.
    run = idemctl("idem_t_chg_approve",
        { QStringLiteral("approvals"), QStringLiteral("decline"), QString::number(reqA), QStringLiteral("--reason"),
            QStringLiteral("not during the sale") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("request %1 declined: job %2 is cancelled").arg(reqA).arg(jobA)),
        qPrintable(run.out));
    QCOMPARE(scalar(*m_owner,
                 "SELECT r.state || ' ' || r.declined_login || ' ' || j.state || ' ' || j.changed FROM"
                 " idem.idem_approval_requests r JOIN idem.idem_jobs j ON j.id = r.job_id WHERE r.id = "
                     + std::to_string(reqA)),
        QByteArray("declined idem_t_chg_approve cancelled 0"));
    QCOMPARE(scalar(*m_owner,
                 "SELECT string_agg(action || ':' || coalesce(after_image ->> 'event', ''), ' ' ORDER BY id) FROM"
                 " (SELECT * FROM idem.task_idempotency_audit ORDER BY id DESC LIMIT 2) a"),
        QByteArray("decline:decline job:cancel"));
    QCOMPARE(number("SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'dec:charge:a%'"
                    " AND status = 'failed'"),
        5);
    // Declined: never approved after.
    const auto specA = scalar(*m_owner, "SELECT spec_sha256 FROM idem.idem_jobs WHERE id = " + std::to_string(jobA));
    run = idemctl("idem_t_chg_approve",
        { QStringLiteral("approvals"), QStringLiteral("approve"), QString::number(reqA), QStringLiteral("--spec"),
            QString::fromLatin1(specA), QStringLiteral("--reason"), QStringLiteral("changed my mind") });
    QCOMPARE(run.exitCode, 3);
    QVERIFY2(run.err.contains(QStringLiteral("SQLSTATE ID004")) && run.err.contains(QStringLiteral("declined by")),
        qPrintable(run.err));

    // Job b approved, then running (active): the approver can neither decline nor cancel it.
    const auto specB = scalar(*m_owner, "SELECT spec_sha256 FROM idem.idem_jobs WHERE id = " + std::to_string(jobB));
    idem::approveRequest(*login("idem_t_chg_approve"), schema, reqB, specB.toStdString(), "fine");
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_jobs WHERE id = " + std::to_string(jobB)),
        QByteArray("active"));
    auto approver = login("idem_t_chg_approve");
    QCOMPARE(sqlstateOf(*approver, "SELECT * FROM idem.idem_job_cancel(" + std::to_string(jobB) + ", 'stop it')"),
        std::string("42501"));
    QCOMPARE(sqlstateOf(*approver, "SELECT * FROM idem.idem_approval_decline(" + std::to_string(reqB) + ", 'stop it')"),
        std::string("ID004"));
    run = idemctl("idem_t_chg_approve",
        { QStringLiteral("approvals"), QStringLiteral("decline"), QString::number(reqB), QStringLiteral("--reason"),
            QStringLiteral("stop it") });
    QCOMPARE(run.exitCode, 3);
    QVERIFY2(run.err.contains(QStringLiteral("only a request waiting for approval is declined"))
            && run.err.contains(QStringLiteral("idemctl job cancel %1").arg(jobB)),
        qPrintable(run.err));
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_jobs WHERE id = " + std::to_string(jobB)),
        QByteArray("active"));
    // Its action's right cancels it.
    QVERIFY(messageOf(*login("idem_t_chg_operator"), "SELECT * FROM idem.idem_job_cancel(" + std::to_string(jobB)
                + ", 'stop it')")
                .empty());
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_jobs WHERE id = " + std::to_string(jobB)),
        QByteArray("cancelled"));

    // A change request withdrawn by the login that asked (it holds no approve right); then neither
    // approved nor used.
    auto purger = login("idem_t_chg_purge");
    QCOMPARE(resultOfDecline(*purger, purge.id), std::string("purge"));
    QCOMPARE(scalar(*m_owner, "SELECT state || ' ' || declined_login FROM idem.idem_approval_requests WHERE id = "
                         + std::to_string(purge.id)),
        QByteArray("declined idem_t_chg_purge"));
    auto msg = messageOf(*purger, "SELECT * FROM idem.idem_change_use(" + std::to_string(purge.id) + ", '"
            + purge.specSha256 + "')");
    QVERIFY2(msg.find("was declined, by login idem_t_chg_purge") != std::string::npos, msg.c_str());
    // Another login without the approve right may not decline what it did not ask for.
    const auto other = idem::requestPurge(*login("idem_t_chg_both"), schema, 10, 0, 0.5, "disk again");
    QCOMPARE(sqlstateOf(*purger, "SELECT * FROM idem.idem_approval_decline(" + std::to_string(other.id) + ", 'no')"),
        std::string("42501"));
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_approval_requests WHERE id = " + std::to_string(other.id)),
        QByteArray("awaiting_approval"));
    checkChain();
}

// Issue #44 item 1: rows made under the v21/v22 shape (a job waiting, a job approved, a job
// cancelled while it waited, change requests waiting and used, the policy's columns) survive the
// migration to one request table and a registry of gated kinds with their state; the waiting job
// is then approved through the one mechanism and runs.
void TestChangeApprovals::requestsMadeBeforeOneMechanismSurvive()
{
    idem::test::ScratchDatabase db("chg_upgrade");
    const QString dsn = QString::fromStdString(db.dsn());
    auto run = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("migrate"), QStringLiteral("--to-version"), QStringLiteral("26"), QStringLiteral("--dsn"), dsn },
        180000);
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    auto c = db.connect();
    const auto one = [&](const std::string& sql) { return scalar(*c, sql); };
    {
        pqxx::work w(*c);
        // The policy as v23 to v27 kept it.
        w.exec("UPDATE idem.idem_approval_policy SET job_rows = 7, ttl_seconds = 1800,"
               " retention_changes_need_approval = false, manual_purges_need_approval = true,"
               " change_ttl_seconds = 900, budget_rows = 50, budget_window_seconds = 600");
        // Three jobs that needed approval: waiting, approved (active), cancelled while it waited.
        w.exec(R"(
            INSERT INTO idem.idem_jobs (state, action, extra_attempts, filter, moment, cap, matched, reason, db_role,
                actor, application, starter_role, needs_approval, approval_threshold, approval_why,
                approval_requested_until, approved_login, approved_role, approved_actor, approved_reason,
                approved_spec_sha256, approved_at, approval_expires_at, finished_at, cancelled_by, cancel_reason,
                start_audit_id)
            VALUES ('awaiting_approval', 'requeue', 1, '{"tenant": "up"}', now() - interval '1 minute', 100, 9,
                    'waits', 'idem_t_chg_operator', 'ann', 'idemctl', 'idem_t_chg_operator', true, 7, 'rows',
                    now() + interval '20 minutes', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 11),
                   ('active', 'fail', NULL, '{"tenant": "up2"}', now() - interval '2 minutes', 100, 8,
                    'approved', 'idem_t_chg_operator', 'ann', 'idemctl', 'idem_t_chg_operator', true, 7, 'rows',
                    now() + interval '20 minutes', 'idem_t_chg_approve', 'idem_t_chg_approve', 'bob', 'ok',
                    repeat('0', 64), now() - interval '1 minute', now() + interval '29 minutes', NULL, NULL, NULL, 12),
                   ('cancelled', 'release', NULL, '{"tenant": "up3"}', now() - interval '3 minutes', 100, 10,
                    'turned down', 'idem_t_chg_operator', 'ann', 'idemctl', 'idem_t_chg_operator', true, 7, 'budget',
                    now() + interval '20 minutes', NULL, NULL, NULL, NULL, NULL, NULL, NULL, now() - interval '30 s',
                    'idem_t_chg_approve (bob)', 'no', 13)
        )");
        // Their specs as idem_job_spec writes them.
        w.exec("UPDATE idem.idem_jobs j SET spec_sha256 = encode(sha256(convert_to(jsonb_build_object('action',"
               " j.action, 'extra_attempts', j.extra_attempts, 'filter', j.filter, 'moment_us',"
               " (extract(epoch FROM j.moment) * 1000000)::bigint, 'cap', j.cap, 'matched', j.matched)::text, 'UTF8')),"
               " 'hex')");
        w.exec("UPDATE idem.idem_jobs SET approved_spec_sha256 = spec_sha256 WHERE approved_at IS NOT NULL");
        // Change requests: a purge waiting, a retention change used.
        w.exec(R"(
            INSERT INTO idem.idem_change_requests (kind, spec, spec_sha256, state, requested_login, requested_role,
                requested_actor, requested_reason, requested_at, approvable_until, request_audit_id, approved_login,
                approved_role, approved_actor, approved_reason, approved_at, approval_expires_at, used_login, used_at,
                used_xid, applied_audit_id)
            VALUES ('purge', '{"kind": "purge", "batch": 10, "duty": 0.5, "max_seconds": 0}', repeat('a', 64),
                    'awaiting_approval', 'idem_t_chg_purge', 'idem_t_chg_purge', 'pat', 'disk', now(),
                    now() + interval '15 minutes', 21, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                   ('retention', '{"kind": "retention", "change": "clear", "operation": "x"}', repeat('b', 64), 'used',
                    'idem_t_chg_purge', 'idem_t_chg_purge', 'pat', 'tidy', now() - interval '1 hour',
                    now() - interval '45 minutes', 22, 'idem_t_chg_approve', 'idem_t_chg_approve', 'bob', 'fine',
                    now() - interval '50 minutes', now() - interval '35 minutes', 'idem_t_chg_purge',
                    now() - interval '40 minutes', '5'::xid8, 0)
        )");
        w.exec("UPDATE idem.idem_change_requests SET spec_sha256 = encode(sha256(convert_to(spec::text, 'UTF8')), 'hex')");
        w.commit();
    }
    const auto before = one("SELECT string_agg(id || ' ' || state || ' ' || spec_sha256 || ' ' || requested_login"
                            " || ' ' || coalesce(approved_login, '-'), ',' ORDER BY id) FROM idem.idem_change_requests");

    run = idem::test::runProgram(idem::test::idemctlPath(), { QStringLiteral("migrate"), QStringLiteral("--dsn"), dsn },
        180000);
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));

    // The policy: one row per kind, the budget kept.
    QCOMPARE(one("SELECT string_agg(kind || ' ' || gated || ' ' || coalesce(over_rows::text, '-') || ' ' || ttl_seconds,"
                 " ',' ORDER BY kind) FROM idem.idem_approval_kinds"),
        QByteArray("job true 7 1800,purge true - 900,retention false - 900"));
    QCOMPARE(one("SELECT budget_rows || ' ' || budget_window_seconds FROM idem.idem_approval_policy"),
        QByteArray("50 600"));
    // The change requests as they were, under the same ids.
    QCOMPARE(one("SELECT string_agg(id || ' ' || state || ' ' || spec_sha256 || ' ' || requested_login"
                 " || ' ' || coalesce(approved_login, '-'), ',' ORDER BY id) FROM idem.idem_approval_requests"
                 " WHERE job_id IS NULL"),
        before);
    // The jobs' requests: waiting, approved (until when it was), declined; the jobs unchanged.
    QCOMPARE(one("SELECT string_agg(j.reason || ' ' || j.state || ' ' || r.state || ' ' || (r.spec_sha256 = j.spec_sha256)"
                 " || ' ' || coalesce(r.approved_login, '-') || ' ' || coalesce(r.declined_login, '-') || ' '"
                 " || (r.approvable_until > now()) || ' ' || coalesce((r.approval_expires_at > now())::text, '-'),"
                 " ',' ORDER BY j.id) FROM idem.idem_jobs j JOIN idem.idem_approval_requests r ON r.job_id = j.id"),
        QByteArray("waits awaiting_approval awaiting_approval true - - true -,"
                   "approved active approved true idem_t_chg_approve - true true,"
                   "turned down cancelled declined true - idem_t_chg_approve true -"));
    // The waiting job is approved through the one mechanism, by another login, naming its spec.
    const auto request = one("SELECT r.id FROM idem.idem_approval_requests r JOIN idem.idem_jobs j ON j.id = r.job_id"
                             " WHERE j.reason = 'waits'");
    const auto spec = one("SELECT spec_sha256 FROM idem.idem_jobs WHERE reason = 'waits'");
    run = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("approvals"), QStringLiteral("approve"), QString::fromLatin1(request), QStringLiteral("--spec"),
            QString::fromLatin1(spec), QStringLiteral("--reason"), QStringLiteral("after the upgrade"),
            QStringLiteral("--dsn"), QString::fromStdString(idem::test::loginDsn(db.dsn(), "idem_t_chg_approve", password)) },
        60000);
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QCOMPARE(one("SELECT state FROM idem.idem_jobs WHERE reason = 'waits'"), QByteArray("active"));
}

QTEST_GUILESS_MAIN(TestChangeApprovals)
#include "tst_changeapprovals.moc"
