#include <QtTest>

#include <QUuid>

#include <optional>
#include <string_view>
#include <vector>
#include <pqxx/pqxx>

#include "core/connection.h"
#include "operations/actions.h"
#include "operations/audit.h"
#include "schema/migrate.h"
#include "tests/support/testdb.h"

namespace {

// Login roles for this program (roles are cluster-wide, hence the distinct names).
struct LoginRole {
    const char* idemRole;
    const char* login;
};
const LoginRole loginRoles[] = {
    { "idem_operator", "idem_t_priv_op" },
    { "idem_reader", "idem_t_priv_rd" },
    { "idem_worker", "idem_t_priv_wk" },
    // Schema v21: a right alone reads nothing and writes no table (its functions do, audited).
    { "idem_may_requeue", "idem_t_priv_rq" },
    { "idem_may_purge", "idem_t_priv_pg" },
    { "idem_may_approve", "idem_t_priv_ap" },
    // Schema v25: reading stored requests is a right of its own, through idem_stored_request only.
    { "idem_may_read_requests", "idem_t_priv_rr" },
};

// One attempted statement and how to see, as the owner, whether it took effect: `check`
// returns `after` once the statement has run, and something else before.
struct Probe {
    std::string sql;
    std::optional<std::string> param;
    std::string check;
    std::string after;
};

// SELECT probes return their own check value: the reader must see what the owner sees.
std::optional<Probe> probeFor(const QString& table, const QString& op)
{
    const std::string t = "idem." + table.toStdString();
    const std::string o = op.toStdString();
    if (o == "SELECT")
        return Probe { "SELECT count(*)::text FROM " + t, std::nullopt, "SELECT count(*)::text FROM " + t, "" };
    if (o == "TRUNCATE")
        return Probe { "TRUNCATE " + t, std::nullopt, "SELECT count(*)::text FROM " + t, "0" };
    // A lock ends with its transaction: nothing to see afterwards, the refusal is the result.
    if (o == "LOCK")
        return Probe { "LOCK TABLE " + t + " IN ACCESS EXCLUSIVE MODE", std::nullopt, "SELECT 'not locked'",
            "locked" };
    if (table == QLatin1String("task_idempotency")) {
        const std::string seeded = "SELECT count(*)::text FROM " + t + " WHERE idempotency_key = 'seed'";
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t
                    + " (idempotency_key, request_hash, status) VALUES ($1, 'h', 'processing')",
                "probe", "SELECT count(*)::text FROM " + t + " WHERE idempotency_key = 'probe'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET attempts = attempts + 1 WHERE idempotency_key = $1", "seed",
                "SELECT attempts::text FROM " + t + " WHERE idempotency_key = 'seed'", "2" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE idempotency_key = $1", "seed", seeded, "0" };
    }
    if (table == QLatin1String("idem_counters")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t
                    + " (bucket, tenant, operation, outcome, n)"
                      " VALUES (date_trunc('minute', now()), $1, 'charge', 'replayed', 1)",
                "probe", "SELECT count(*)::text FROM " + t + " WHERE tenant = 'probe'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET n = n + 1 WHERE tenant = $1", "t1",
                "SELECT sum(n)::text FROM " + t + " WHERE tenant = 't1'", "2" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE tenant = $1", "t1",
                "SELECT count(*)::text FROM " + t + " WHERE tenant = 't1'", "0" };
    }
    if (table == QLatin1String("task_idempotency_conflicts")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t + " VALUES ($1, now(), now(), 1, 'v1:x')", "probe",
                "SELECT count(*)::text FROM " + t + " WHERE idempotency_key = 'probe'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET n = n + 1 WHERE idempotency_key = $1", "seed",
                "SELECT n::text FROM " + t + " WHERE idempotency_key = 'seed'", "2" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE idempotency_key = $1", "seed",
                "SELECT count(*)::text FROM " + t + " WHERE idempotency_key = 'seed'", "0" };
    }
    if (table == QLatin1String("task_idempotency_audit")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t
                    + " (idempotency_key, action, reason, db_role, os_user, client_host, before_image,"
                      " after_image, prev_hash, entry_hash)"
                      " VALUES ($1, 'requeue', 'forged', current_user, 'u', 'h', '{}', '{}', 'e1', 'e2')",
                "probe", "SELECT count(*)::text FROM " + t + " WHERE idempotency_key = 'probe'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET reason = 'tampered' WHERE idempotency_key = $1", "seed",
                "SELECT reason FROM " + t + " WHERE idempotency_key = 'seed'", "tampered" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE idempotency_key = $1", "seed",
                "SELECT count(*)::text FROM " + t + " WHERE idempotency_key = 'seed'", "0" };
    }
    if (table == QLatin1String("idem_pauses")) { // schema v15: set and lifted only through idem_pause/idem_resume
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t + " VALUES ($1, 'charge', 'forged', 'u', now(), now(), NULL, 0)", "probe",
                "SELECT count(*)::text FROM " + t + " WHERE tenant = 'probe'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET reason = 'tampered' WHERE tenant = $1", "seed",
                "SELECT reason FROM " + t + " WHERE tenant = 'seed'", "tampered" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE tenant = $1", "seed",
                "SELECT count(*)::text FROM " + t + " WHERE tenant = 'seed'", "0" };
    }
    if (table == QLatin1String("idem_worker_versions")) { // schema v18: written only by idem_report_version
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t + " VALUES ($1, 'forged', now(), now(), 'me')", "probe",
                "SELECT count(*)::text FROM " + t + " WHERE worker = 'probe'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET version = 'forged' WHERE worker = $1", "seed",
                "SELECT version FROM " + t + " WHERE worker = 'seed'", "forged" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE worker = $1", "seed",
                "SELECT count(*)::text FROM " + t + " WHERE worker = 'seed'", "0" };
    }
    if (table == QLatin1String("idem_deploys")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t
                    + " (at, worker, new_version, db_role) VALUES (now(), $1, 'forged', 'me')",
                "probe", "SELECT count(*)::text FROM " + t + " WHERE worker = 'probe'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET new_version = 'forged' WHERE worker = $1", "seed",
                "SELECT new_version FROM " + t + " WHERE worker = 'seed'", "forged" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE worker = $1", "seed",
                "SELECT count(*)::text FROM " + t + " WHERE worker = 'seed'", "0" };
    }
    // Schema v19: recovery jobs change only through idem_job_start, idem_job_batch, idem_job_cancel.
    if (table == QLatin1String("idem_jobs")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t + " (state, action, extra_attempts, filter, moment, cap, reason, db_role,"
                    " actor, application) VALUES ('active', 'requeue', 1, '{}', now(), 1, $1, 'u', 'u', 'a')",
                "probe", "SELECT count(*)::text FROM " + t + " WHERE reason = 'probe'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET changed = changed + 1 WHERE reason = $1", "seed",
                "SELECT changed::text FROM " + t + " WHERE reason = 'seed'", "1" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE reason = $1", "seed",
                "SELECT count(*)::text FROM " + t + " WHERE reason = 'seed'", "0" };
    }
    if (table == QLatin1String("idem_job_items")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t + " (job_id, seq, idempotency_key, seen_status, seen_updated_at, state)"
                    " SELECT j.id, 2, $1, 'failed', now(), 'pending' FROM idem.idem_jobs j",
                "probe", "SELECT count(*)::text FROM " + t + " WHERE idempotency_key = 'probe'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET state = 'skipped', why = 'cancelled' WHERE idempotency_key = $1", "seed",
                "SELECT state FROM " + t + " WHERE idempotency_key = 'seed'", "skipped" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE idempotency_key = $1", "seed",
                "SELECT count(*)::text FROM " + t + " WHERE idempotency_key = 'seed'", "0" };
    }
    if (table == QLatin1String("idem_timelines")) { // schema v20: written only by idem_note_timeline
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t + " VALUES (42, $1::int, now(), 1, 'forged:1', 'me')", "9",
                "SELECT count(*)::text FROM " + t + " WHERE timeline = 9", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET node = 'forged:1' WHERE timeline = $1::int", "2",
                "SELECT node FROM " + t + " WHERE timeline = 2", "forged:1" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE timeline = $1::int", "2",
                "SELECT count(*)::text FROM " + t + " WHERE timeline = 2", "0" };
    }
    // Schema v21: the approval policy (since v28 the budget only) changes only through the
    // owner's functions (idem_set_approval_budget).
    if (table == QLatin1String("idem_approval_policy")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t + " (one, budget_rows) VALUES (true, $1::bigint)", "1",
                "SELECT count(*)::text FROM " + t, "2" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET budget_rows = $1::bigint", "0", "SELECT budget_rows::text FROM " + t, "0" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE budget_rows = $1::bigint", "10",
                "SELECT count(*)::text FROM " + t, "0" };
    }
    // Schema v28: the registry of gated kinds changes only through idem_set_approval_policy, the
    // owner's.
    if (table == QLatin1String("idem_approval_kinds")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t + " (kind, what) VALUES ($1, 'forged')", "reboot",
                "SELECT count(*)::text FROM " + t + " WHERE kind = 'reboot'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET gated = false WHERE kind = $1", "purge",
                "SELECT gated::text FROM " + t + " WHERE kind = 'purge'", "false" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE kind = $1", "purge",
                "SELECT count(*)::text FROM " + t + " WHERE kind = 'purge'", "0" };
    }
    // Schema v22 (every gated kind's since v28): requests are written only by idem_request_*,
    // idem_job_start, idem_approval_approve, idem_approval_decline and idem_change_use.
    if (table == QLatin1String("idem_approval_requests")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t
                    + " (kind, spec, spec_sha256, requested_login, requested_role,"
                      " requested_actor, requested_reason, requested_at, approvable_until, request_audit_id)"
                      " VALUES ('purge', '{}', repeat('a', 64), 'u', 'u', 'u', $1, now(), now(), 0)",
                "probe", "SELECT count(*)::text FROM " + t + " WHERE requested_reason = 'probe'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t
                    + " SET state = 'approved', approved_login = 'forged', approved_at = now(),"
                      " approval_expires_at = now() + interval '1 hour' WHERE requested_reason = $1",
                "seed", "SELECT state FROM " + t + " WHERE requested_reason = 'seed'", "approved" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE requested_reason = $1", "seed",
                "SELECT count(*)::text FROM " + t + " WHERE requested_reason = 'seed'", "0" };
    }
    // Schema v25: re-execution's tables change only through the redrive functions; stored
    // requests are read by nobody but the owner (idem_stored_request shows them).
    if (table == QLatin1String("idem_redrive_operations")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t + " (tenant, operation, registered_at, registered_by, updated_at)"
                    " VALUES ($1, 'charge', now(), 'forged', now())",
                "probe", "SELECT count(*)::text FROM " + t + " WHERE tenant = 'probe'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET registered_by = 'forged' WHERE tenant = $1", "seed",
                "SELECT registered_by FROM " + t + " WHERE tenant = 'seed'", "forged" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE tenant = $1", "seed",
                "SELECT count(*)::text FROM " + t + " WHERE tenant = 'seed'", "0" };
    }
    if (table == QLatin1String("idem_redrivers")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t + " VALUES ($1, 'charge', 'w', '1', 'me', now(), now())", "probe",
                "SELECT count(*)::text FROM " + t + " WHERE tenant = 'probe'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET version = 'forged' WHERE tenant = $1", "seed",
                "SELECT version FROM " + t + " WHERE tenant = 'seed'", "forged" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE tenant = $1", "seed",
                "SELECT count(*)::text FROM " + t + " WHERE tenant = 'seed'", "0" };
    }
    if (table == QLatin1String("idem_redrive_items")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t + " (idempotency_key, tenant, operation, state, requested_at,"
                    " requested_role, requested_actor) VALUES ($1, 'probe', 'charge', 'queued', now(), 'u', 'u')",
                "probe:charge:1", "SELECT count(*)::text FROM " + t + " WHERE tenant = 'probe'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET state = 'succeeded', finished_at = now() WHERE idempotency_key = $1",
                "seed", "SELECT state FROM " + t + " WHERE idempotency_key = 'seed'", "succeeded" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE idempotency_key = $1", "seed",
                "SELECT count(*)::text FROM " + t + " WHERE idempotency_key = 'seed'", "0" };
    }
    if (table == QLatin1String("idem_stored_requests")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t + " SELECT 'seed2', '{}', 'h', 2, now() WHERE $1 = 'probe'", "probe",
                "SELECT count(*)::text FROM " + t + " WHERE idempotency_key = 'seed2'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET request = '{\"forged\":1}' WHERE idempotency_key = $1", "seed",
                "SELECT request FROM " + t + " WHERE idempotency_key = 'seed'", "{\"forged\":1}" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE idempotency_key = $1", "seed",
                "SELECT count(*)::text FROM " + t + " WHERE idempotency_key = 'seed'", "0" };
    }
    if (table == QLatin1String("idem_request_fields")) {
        if (o == "INSERT")
            return Probe { "INSERT INTO " + t + " SELECT 'seed2', '{}', 0, now() WHERE $1 = 'probe'", "probe",
                "SELECT count(*)::text FROM " + t + " WHERE idempotency_key = 'seed2'", "1" };
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET field_count = 9 WHERE idempotency_key = $1", "seed",
                "SELECT field_count::text FROM " + t + " WHERE idempotency_key = 'seed'", "9" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE idempotency_key = $1", "seed",
                "SELECT count(*)::text FROM " + t + " WHERE idempotency_key = 'seed'", "0" };
    }
    if (table == QLatin1String("idem_schema_version")) {
        if (o == "UPDATE")
            return Probe { "UPDATE " + t + " SET checksum = $1 WHERE version = 1", "tampered",
                "SELECT checksum FROM " + t + " WHERE version = 1", "tampered" };
        if (o == "DELETE")
            return Probe { "DELETE FROM " + t + " WHERE version = $1::int", "1",
                "SELECT count(*)::text FROM " + t + " WHERE version = 1", "0" };
    }
    return std::nullopt;
}

QString value(pqxx::connection& c, const std::string& sql)
{
    pqxx::read_transaction t(c);
    const auto r = t.exec(sql);
    return r[0][0].is_null() ? QStringLiteral("<null>") : QString::fromStdString(r[0][0].as<std::string>());
}

// Every Idem table back to one known row each, the version table as migrate left it.
void reseed(pqxx::connection& c)
{
    pqxx::work w(c);
    w.exec("TRUNCATE idem.task_idempotency, idem.idem_counters, idem.task_idempotency_audit,"
           " idem.task_idempotency_conflicts, idem.idem_pauses, idem.idem_worker_versions, idem.idem_deploys,"
           " idem.idem_job_items, idem.idem_jobs, idem.idem_timelines, idem.idem_approval_policy,"
           " idem.idem_approval_requests, idem.idem_stored_requests, idem.idem_redrive_items, idem.idem_redrivers,"
           " idem.idem_redrive_operations, idem.idem_request_fields");
    w.exec("DELETE FROM idem.idem_approval_kinds");
    w.exec("INSERT INTO idem.idem_approval_kinds (kind, gated, what) VALUES ('job', false, 'a job'),"
           " ('retention', false, 'a retention change'), ('purge', true, 'a manual purge')");
    w.exec_params("INSERT INTO idem.idem_approval_requests (kind, spec, spec_sha256, requested_login, requested_role,"
                  " requested_actor, requested_reason, requested_at, approvable_until, request_audit_id)"
                  " VALUES ('retention', '{}', repeat('b', 64), 'alice', 'alice', 'alice', $1, now(),"
                  " now() + interval '1 hour', 1)",
        "seed");
    w.exec_params("INSERT INTO idem.idem_timelines VALUES (42, $1::int, now(), 1, '127.0.0.1:5432', 'postgres')", "2");
    w.exec("INSERT INTO idem.idem_approval_policy (one, budget_rows) VALUES (true, 10)");
    w.exec_params("INSERT INTO idem.idem_worker_versions VALUES ($1, '2.3.1', now(), now(), 'postgres')", "seed");
    w.exec_params(
        "INSERT INTO idem.idem_deploys (at, worker, new_version, db_role) VALUES (now(), $1, '2.3.1', 'postgres')",
        "seed");
    w.exec_params("INSERT INTO idem.idem_jobs (state, action, extra_attempts, filter, moment, cap, reason, db_role, actor,"
                  " application) VALUES ('active', 'requeue', 1, '{}', now(), 10, $1, 'alice', 'alice', 'idemctl')",
        "seed");
    w.exec_params("INSERT INTO idem.idem_job_items (job_id, seq, idempotency_key, seen_status, seen_updated_at, state)"
                  " SELECT id, 1, $1, 'failed', now(), 'pending' FROM idem.idem_jobs",
        "seed");
    w.exec_params("INSERT INTO idem.idem_pauses VALUES ($1, 'charge', 'gateway down', 'alice', now(), now(), NULL, 0)",
        "seed");
    w.exec_params("INSERT INTO idem.task_idempotency_conflicts VALUES ($1, now(), now(), 1, 'v1:b')", "seed");
    w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts)"
                  " VALUES ($1, 'h', 'processing', 1), ('seed2', 'h', 'processing', 1)",
        "seed");
    w.exec_params("INSERT INTO idem.idem_stored_requests VALUES ($1, '{\"card\":\"4242\"}', 'h', 16, now())", "seed");
    w.exec_params("INSERT INTO idem.idem_request_fields VALUES ($1, '{\"amount\":\"0123456789abcdef\"}', 1, now())", "seed");
    w.exec_params("INSERT INTO idem.idem_redrive_operations (tenant, operation, registered_at, registered_by, updated_at)"
                  " VALUES ($1, 'charge', now(), 'postgres', now())",
        "seed");
    w.exec_params("INSERT INTO idem.idem_redrivers VALUES ($1, 'charge', 'w1', '1.0', 'postgres', now(), now())", "seed");
    w.exec_params("INSERT INTO idem.idem_redrive_items (idempotency_key, tenant, operation, state, requested_at,"
                  " requested_role, requested_actor) VALUES ($1, 'seed', 'charge', 'queued', now(), 'alice', 'alice')",
        "seed");
    w.exec_params("INSERT INTO idem.idem_counters (bucket, tenant, operation, outcome, n)"
                  " VALUES (date_trunc('minute', now()), $1, 'charge', 'acquired', 1)",
        "t1");
    w.exec_params("INSERT INTO idem.task_idempotency_audit (idempotency_key, action, reason, db_role, os_user,"
                  " client_host, before_image, after_image, prev_hash, entry_hash)"
                  " VALUES ($1, 'requeue', 'stuck lease', 'postgres', 'alice', 'host1', '{}', '{}', '', 'e0')",
        "seed");
    w.exec("DELETE FROM idem.idem_schema_version");
    w.exec("INSERT INTO idem.idem_schema_version SELECT * FROM public.version_copy");
    w.commit();
}

} // namespace

class TestPrivileges : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void matrix_data();
    void matrix();
    void ownerRewriteBreaksTheChain();
    void publicSchemaGrantsOnlyIdemObjects();
    void changeApprovalFunctionGrants();

private:
    std::string loginDsn(const std::string& base, const std::string& login) const;

    std::string m_password;
    std::unique_ptr<idem::test::ScratchDatabase> m_matrixDb; // matrix()'s own, reseeded per row
};

void TestPrivileges::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    // Migrating creates the cluster-wide idem_* roles if this is the first run on the cluster.
    m_matrixDb = std::make_unique<idem::test::ScratchDatabase>("priv_matrix", idem::test::migrated);
    auto c = m_matrixDb->connect();
    idem::migrate(*c, { idem::SchemaName() });
    {
        pqxx::work w(*c);
        w.exec("CREATE TABLE public.version_copy AS SELECT * FROM idem.idem_schema_version");
        w.commit();
    }
    m_password = QUuid::createUuid().toString(QUuid::WithoutBraces).toStdString();
    for (const auto& r : loginRoles)
        idem::test::createLoginRole(r.login, m_password, r.idemRole);
}

void TestPrivileges::cleanupTestCase() { m_matrixDb.reset(); }

std::string TestPrivileges::loginDsn(const std::string& base, const std::string& login) const
{
    return idem::test::loginDsn(base, login, m_password);
}

void TestPrivileges::matrix_data()
{
    QTest::addColumn<QString>("login");
    QTest::addColumn<QString>("table");
    QTest::addColumn<QString>("op");
    QTest::addColumn<bool>("allowed");

    const QStringList every { QStringLiteral("SELECT"), QStringLiteral("INSERT"), QStringLiteral("UPDATE"),
        QStringLiteral("DELETE"), QStringLiteral("TRUNCATE"), QStringLiteral("LOCK") };
    const std::pair<const char*, QStringList> tables[] = {
        { "task_idempotency", every },
        { "idem_counters", every },
        { "task_idempotency_conflicts", every },
        { "task_idempotency_audit", every },
        { "idem_pauses", every },
        { "idem_worker_versions", every },
        { "idem_deploys", every },
        { "idem_jobs", every },
        { "idem_job_items", every },
        { "idem_timelines", every },
        { "idem_approval_policy", every },
        { "idem_approval_requests", every },
        { "idem_approval_kinds", every },
        { "idem_redrive_operations", every },
        { "idem_redrivers", every },
        { "idem_redrive_items", every },
        { "idem_stored_requests", every },
        { "idem_request_fields", every },
        { "idem_schema_version",
            { QStringLiteral("SELECT"), QStringLiteral("UPDATE"), QStringLiteral("DELETE"), QStringLiteral("LOCK") } },
    };
    // DESIGN section 2: readers and operators change no table; workers (schema v6) touch no
    // Idem table at all, only the SECURITY DEFINER protocol functions, and may read the schema
    // version. Nobody but the owner takes a table's ACCESS EXCLUSIVE lock.
    const QStringList workerMay {
        QStringLiteral("idem_schema_version SELECT"),
    };
    for (const auto& r : loginRoles) {
        const QString role = QString::fromLatin1(r.idemRole);
        for (const auto& [table, ops] : tables) {
            for (const auto& op : ops) {
                const QString key = QString::fromLatin1(table) + QLatin1Char(' ') + op;
                // Schema v25: a stored request is read by nobody but the owner, whatever the role.
                const bool allowed = role == QLatin1String("idem_worker") ? workerMay.contains(key)
                    : role.startsWith(QLatin1String("idem_may_"))          ? false
                    : std::string_view(table) == "idem_stored_requests"    ? false
                                                                          : op == QLatin1String("SELECT");
                QTest::addRow("%s %s %s", r.idemRole, qPrintable(op), table)
                    << QString::fromLatin1(r.login) << QString::fromLatin1(table) << op << allowed;
            }
        }
    }
}

void TestPrivileges::matrix()
{
    QFETCH(QString, login);
    QFETCH(QString, table);
    QFETCH(QString, op);
    QFETCH(bool, allowed);
    const auto probe = probeFor(table, op);
    QVERIFY2(probe, "no probe for this row");
    QVERIFY(m_matrixDb);
    auto owner = m_matrixDb->connect();
    reseed(*owner);
    const QString before = value(*owner, probe->check);
    const bool isSelect = op == QLatin1String("SELECT");
    if (!isSelect)
        QVERIFY2(
            before != QString::fromStdString(probe->after), qPrintable(before)); // the check can tell the difference

    auto as = idem::connect(loginDsn(m_matrixDb->dsn(), login.toStdString()));
    QCOMPARE(value(*as, "SELECT current_user"), login);
    std::optional<std::string> denied;
    QString selected;
    try {
        pqxx::work w(*as);
        const auto r = probe->param ? w.exec_params(probe->sql, *probe->param) : w.exec(probe->sql);
        if (isSelect)
            selected = QString::fromStdString(r[0][0].as<std::string>());
        w.commit();
    } catch (const pqxx::insufficient_privilege& e) {
        denied = e.sqlstate();
    } catch (const pqxx::sql_error& e) {
        QFAIL(qPrintable(QStringLiteral("unexpected SQLSTATE %1: %2")
                             .arg(QString::fromStdString(e.sqlstate()), QString::fromUtf8(e.what()))));
    }

    const QString now = value(*owner, probe->check);
    if (allowed) {
        QVERIFY2(!denied, "refused with 42501");
        QCOMPARE(isSelect ? selected : now, isSelect ? before : QString::fromStdString(probe->after));
    } else {
        QVERIFY2(denied, "the statement went through");
        // libpqxx 6.4 throws insufficient_privilege for exactly SQLSTATE 42501 but leaves
        // sqlstate() empty for it; a later libpqxx fills it in.
        QVERIFY2(denied->empty() || *denied == "42501", denied->c_str());
        QCOMPARE(now, before);
    }
}

// Only the owner may rewrite history; the hash chain, not the grants, is what catches that. The
// owner here is a login role without superuser that owns the database and migrated it; an
// operator makes the entries through the audited actions, a reader verifies the chain.
void TestPrivileges::ownerRewriteBreaksTheChain()
{
    const std::string owner = "idem_t_priv_owner";
    idem::test::createLoginRole(owner, m_password, "");
    idem::test::ScratchDatabase db("priv_owner");
    {
        auto admin = db.connect();
        pqxx::work w(*admin);
        w.exec("ALTER ROLE " + owner + " NOSUPERUSER NOCREATEROLE NOCREATEDB NOBYPASSRLS");
        w.exec("ALTER DATABASE \"" + db.name() + "\" OWNER TO " + owner);
        w.commit();
    }
    auto asOwner = idem::connect(loginDsn(db.dsn(), owner));
    QCOMPARE(value(*asOwner, "SELECT current_user || ' ' || rolsuper FROM pg_roles WHERE rolname = current_user"),
        QString::fromStdString(owner + " false"));
    // The cluster's idem_* roles exist (initTestCase): the owner grants on its own objects.
    idem::migrate(*asOwner, { idem::SchemaName() });
    {
        pqxx::work w(*asOwner);
        for (int i = 1; i <= 3; ++i)
            w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts,"
                          " error_class, updated_at) VALUES ($1, 'v1:x', 'failed', 3, 3, 'retryable', now() - interval '1 minute')",
                "shop:charge:" + std::to_string(i));
        w.commit();
    }

    // Three entries as an operator makes them.
    auto asOperator = idem::connect(loginDsn(db.dsn(), "idem_t_priv_op"));
    std::vector<std::int64_t> ids;
    for (int i = 1; i <= 3; ++i) {
        const auto seen = idem::readRowVersions(*asOperator, idem::SchemaName(), { "shop:charge:" + std::to_string(i) });
        QVERIFY(seen.at(0));
        idem::ActionOptions o;
        o.reason = "stuck since the outage, case " + std::to_string(i);
        o.actor = "alice@desk";
        const auto r = idem::applyAction(*asOperator, idem::SchemaName(), idem::RecoveryAction::Requeue, *seen[0], o);
        QVERIFY2(r.outcome == idem::ActionOutcome::Applied, r.message.c_str());
        ids.push_back(*r.auditId);
    }
    const auto entry = [&](std::int64_t id) {
        pqxx::read_transaction t(*asOwner);
        return t.exec_params("SELECT db_role || ' / ' || reason FROM idem.task_idempotency_audit WHERE id = $1", id)
            .at(0)
            .at(0)
            .as<std::string>();
    };
    QCOMPARE(entry(ids[1]), std::string("idem_t_priv_op / stuck since the outage, case 2"));
    auto asReader = idem::connect(loginDsn(db.dsn(), "idem_t_priv_rd"));
    const auto intact = idem::verifyChain(*asReader, idem::SchemaName());
    QVERIFY2(intact.ok(), intact.detail.c_str());
    QCOMPARE(intact.checked, std::int64_t(3));

    // The operator who wrote them cannot change them.
    {
        pqxx::work w(*asOperator);
        QVERIFY_THROWS_EXCEPTION(pqxx::insufficient_privilege,
            w.exec_params("UPDATE idem.task_idempotency_audit SET reason = $1 WHERE id = $2", "never happened", ids[1]));
    }
    QCOMPARE(entry(ids[1]), std::string("idem_t_priv_op / stuck since the outage, case 2"));

    // The owner can, and the reader's verification finds the entry that no longer hashes to itself.
    {
        pqxx::work w(*asOwner);
        const auto r = w.exec_params(
            "UPDATE idem.task_idempotency_audit SET reason = $1 WHERE id = $2", "rewritten by the owner", ids[1]);
        QCOMPARE(r.affected_rows(), pqxx::result::size_type(1));
        w.commit();
    }
    QCOMPARE(entry(ids[1]), std::string("idem_t_priv_op / rewritten by the owner"));
    const auto edited = idem::verifyChain(*asReader, idem::SchemaName());
    QVERIFY2(!edited.ok(), "the owner's rewrite went unnoticed");
    QCOMPARE(idem::chainBreakName(edited.brokenBy), "hash_mismatch");
    QCOMPARE(*edited.firstBrokenId, ids[1]);
    QCOMPARE(edited.checked, std::int64_t(1));

    // Re-hashed by an owner who knows the algorithm: the entry checks, the next link does not.
    {
        pqxx::work w(*asOwner);
        w.exec_params("UPDATE idem.task_idempotency_audit SET entry_hash = idem.audit_entry_hash(id,"
                      " (extract(epoch FROM at) * 1000000)::bigint, idempotency_key, action, reason, db_role, os_user,"
                      " client_host, application, before_image, after_image, prev_hash) WHERE id = $1",
            ids[1]);
        w.commit();
    }
    const auto rehashed = idem::verifyChain(*asReader, idem::SchemaName());
    QVERIFY2(!rehashed.ok(), "the owner's re-hashed rewrite went unnoticed");
    QCOMPARE(idem::chainBreakName(rehashed.brokenBy), "prev_link_broken");
    QCOMPARE(*rehashed.firstBrokenId, ids[2]);
}

// Adopting a table in public grants on the Idem objects by name, never on the schema's
// other tables.
void TestPrivileges::publicSchemaGrantsOnlyIdemObjects()
{
    idem::test::ScratchDatabase db("priv_public");
    auto c = db.connect();
    {
        pqxx::work w(*c);
        w.exec("CREATE TABLE public.payroll (employee text, salary numeric)");
        w.exec_params("INSERT INTO public.payroll VALUES ($1, 100)", "alice");
        w.commit();
    }
    idem::migrate(*c, { idem::SchemaName("public") });
    QCOMPARE(value(*c,
                 "SELECT has_table_privilege('idem_reader', 'public.task_idempotency', 'SELECT')"
                 "   AND has_function_privilege('idem_worker', 'public.claim(text, text, uuid, bigint, integer, bigint)',"
                 "                              'EXECUTE')"
                 "   AND NOT has_table_privilege('idem_worker', 'public.task_idempotency', 'SELECT')"),
        QStringLiteral("t"));
    QCOMPARE(value(*c,
                 "SELECT has_table_privilege('idem_reader', 'public.payroll', 'SELECT')"
                 "    OR has_table_privilege('idem_operator', 'public.payroll', 'SELECT')"
                 "    OR has_table_privilege('idem_worker', 'public.payroll', 'SELECT, INSERT, UPDATE')"),
        QStringLiteral("f"));

    for (const auto& r : loginRoles) {
        auto as = idem::connect(loginDsn(db.dsn(), r.login));
        if (r.idemRole == std::string("idem_worker")) {
            pqxx::work w(*as); // a worker claims, and sees no table
            QCOMPARE(w.exec("SELECT decision FROM public.claim('shop:charge:1', 'v1:x', gen_random_uuid(), 1000)")[0][0]
                         .as<std::string>(),
                std::string("acquired"));
            w.commit();
        } else if (std::string(r.idemRole).rfind("idem_may_", 0) == 0) {
            pqxx::read_transaction t(*as); // a right alone reads nothing (grant idem_reader beside it)
            QVERIFY_THROWS_EXCEPTION(pqxx::insufficient_privilege, t.exec("SELECT count(*) FROM public.task_idempotency"));
        } else
            QCOMPARE(value(*as, "SELECT count(*) FROM public.task_idempotency"), QStringLiteral("0"));
        pqxx::read_transaction t(*as);
        QVERIFY_THROWS_EXCEPTION(pqxx::insufficient_privilege, t.exec("SELECT * FROM public.payroll"));
    }
}

// Schema v22: who may run each change-approval function, as the grants say (roles.sql): the
// purge right requests and uses, the approve right approves, the switches and the internals are
// nobody's but the owner's. Every one callable is SECURITY DEFINER with a pinned path.
void TestPrivileges::changeApprovalFunctionGrants()
{
    auto c = m_matrixDb->connect();
    const auto grants = value(*c,
        "SELECT string_agg(p.oid::regprocedure::text || ': ' || coalesce((SELECT string_agg(r.rolname, ' ' ORDER BY "
        "r.rolname)"
        "   FROM pg_roles r WHERE r.rolname IN ('idem_reader', 'idem_operator', 'idem_worker', 'idem_may_requeue',"
        "   'idem_may_release', 'idem_may_fail', 'idem_may_pause', 'idem_may_purge', 'idem_may_approve', "
        "'idem_t_priv_op')"
        "   AND has_function_privilege(r.oid, p.oid, 'EXECUTE')), '-'), E'\\n' ORDER BY p.proname)"
        "  FROM pg_proc p WHERE p.pronamespace = 'idem'::regnamespace AND p.proname IN ('idem_set_change_approval',"
        "  'idem_approver_check', 'idem_approval_approve', 'idem_approval_decline', 'idem_approval_image',"
        "  'idem_approval_lock', 'idem_approval_request_add', 'idem_set_approval_policy', 'idem_job_approve', 'idem_job_cancel',"
        "  'idem_change_guard', 'idem_request_retention',"
        "  'idem_request_purge', 'idem_change_approve', 'idem_change_use')");
    // Schema v28: one approve and one decline; the approve right alone cancels no job.
    QCOMPARE(grants,
        QStringLiteral(
            "idem.idem_approval_approve(bigint,text,text,text): idem_may_approve idem_operator idem_t_priv_op\n"
            "idem.idem_approval_decline(bigint,text,text): idem_may_approve idem_may_fail idem_may_purge"
            " idem_may_release idem_may_requeue idem_operator idem_t_priv_op\n"
            "idem.idem_approval_image(idem.idem_approval_requests): -\n"
            "idem.idem_approval_lock(bigint,text): -\n"
            "idem.idem_approval_request_add(text,jsonb,text,text,bigint): -\n"
            "idem.idem_approver_check(text,text): -\n"
            "idem.idem_change_approve(bigint,text,text,text): idem_may_approve idem_operator idem_t_priv_op\n"
            "idem.idem_change_guard(text,jsonb): -\n"
            "idem.idem_change_use(bigint,text,text): idem_may_purge idem_operator idem_t_priv_op\n"
            "idem.idem_job_approve(bigint,text,text,text): idem_may_approve idem_operator idem_t_priv_op\n"
            "idem.idem_job_cancel(bigint,text,text): idem_may_fail idem_may_release idem_may_requeue idem_operator"
            " idem_t_priv_op\n"
            "idem.idem_request_purge(integer,integer,double precision,text,text): idem_may_purge idem_operator"
            " idem_t_priv_op\n"
            "idem.idem_request_retention(text,text,bigint,text,text): idem_may_purge idem_operator idem_t_priv_op\n"
            "idem.idem_set_approval_policy(text,boolean,bigint,integer,text,text): -\n"
            "idem.idem_set_change_approval(boolean,boolean,integer,text,text): -"));
    // Schema v23: anyone with an Idem role but a worker may ask whether a change would need
    // approval; the gate, the budget and the checks are nobody's but the owner's; the table of
    // what each login changed is read by nobody else.
    const auto budget = value(*c,
        "SELECT string_agg(p.oid::regprocedure::text || ': ' || coalesce((SELECT string_agg(r.rolname, ' ' ORDER BY "
        "r.rolname) FROM pg_roles r WHERE r.rolname IN ('idem_reader', 'idem_operator', 'idem_worker', "
        "'idem_may_requeue', 'idem_may_approve') AND has_function_privilege(r.oid, p.oid, 'EXECUTE')), '-'), E'\\n'"
        " ORDER BY p.proname) FROM pg_proc p WHERE p.pronamespace = 'idem'::regnamespace AND p.proname IN"
        " ('idem_approval_needed', 'idem_approval_gate', 'idem_set_approval_budget', 'idem_job_start_check',"
        " 'idem_purge_spec_check')");
    QCOMPARE(budget,
        QStringLiteral("idem.idem_approval_gate(text,bigint,bigint): -\n"
                       "idem.idem_approval_needed(text,bigint): idem_may_approve idem_may_requeue idem_operator "
                       "idem_reader\n"
                       "idem.idem_job_start_check(text,bigint,bigint,bigint,bigint,bigint): -\n"
                       "idem.idem_purge_spec_check(idem.idem_purge_runs,integer): -\n"
                       "idem.idem_set_approval_budget(bigint,integer,text,text): -"));
    QCOMPARE(value(*c,
                 "SELECT string_agg(r.rolname, ' ') FROM pg_roles r WHERE r.rolname IN ('idem_reader',"
                 " 'idem_operator', 'idem_worker', 'idem_t_priv_op') AND has_table_privilege(r.oid,"
                 " 'idem.idem_approval_uses', 'SELECT')"),
        QStringLiteral("<null>"));
    QCOMPARE(
        value(*c,
            "SELECT string_agg(proname || ' ' || prosecdef || ' ' || array_to_string(proconfig, ';'), ','"
            " ORDER BY proname) FROM pg_proc WHERE pronamespace = 'idem'::regnamespace"
            " AND proname IN ('idem_request_retention', 'idem_request_purge', 'idem_change_approve', 'idem_change_use',"
            " 'idem_approval_approve', 'idem_approval_decline', 'idem_job_approve')"
            " AND NOT (prosecdef AND array_to_string(proconfig, ';') LIKE 'search_path=\"idem\", pg_temp%')"),
        QStringLiteral("<null>"));
}

QTEST_GUILESS_MAIN(TestPrivileges)
#include "tst_privileges.moc"
