#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QUuid>

#include <array>
#include <limits>
#include <map>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "schema/migrate.h"
#include "operations/audit.h"
#include "operations/storage.h"
#include "tests/support/cliprocess.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"

using idem::test::bytes;
using idem::test::scalar;

namespace {
// Cluster-wide login roles: names distinct from other programs'.
constexpr const char* operatorLogin = "idem_t_ret_op";
constexpr const char* readerLogin = "idem_t_ret_rd";
constexpr const char* workerLogin = "idem_t_ret_wk";
constexpr const char* plainLogin = "idem_t_ret_pl";

idem::test::CliRun idemctl(const QStringList& args)
{
    return idem::test::runProgram(idem::test::idemctlPath(), args, 60000);
}
} // namespace

// Issue 16: the retention policy per operation, what is due by it to the second, its audited
// changes (operators only) and the storage figures as idemctl storage --json reports them.
class TestRetention : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void defaults();
    void edgeTimes_data();
    void edgeTimes();
    void onlySucceededRowsGo();
    void changeIsAudited();
    void clearFallsBackToDefault();
    void refusedForOtherRoles_data();
    void refusedForOtherRoles();
    void badArguments_data();
    void badArguments();
    void idemctlRetention();
    void storageJsonReportsPlantedRows();

private:
    std::string dsnAs(const char* login) const { return idem::test::loginDsn(m_db->dsn(), login, m_password); }
    // What a refused change must leave as it was: the policy and the audit trail.
    QByteArray policyAndAudit() const
    {
        return scalar(*m_owner, "SELECT (SELECT string_agg(operation || '=' || horizon::text || '@' || changed_at::text"
                                " || ' ' || changed_by, ',' ORDER BY operation) FROM idem.idem_retention_policy)"
                                " || ' / ' || (SELECT count(*) FROM idem.task_idempotency_audit)"
                                " || ' / ' || (SELECT count(*) FROM idem.idem_purge_runs)");
    }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
    std::string m_password;
};

void TestRetention::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("retention", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName() });
    m_password = QUuid::createUuid().toString(QUuid::WithoutBraces).toStdString();
    idem::test::createLoginRole(operatorLogin, m_password, "idem_operator");
    idem::test::createLoginRole(readerLogin, m_password, "idem_reader");
    idem::test::createLoginRole(workerLogin, m_password, "idem_worker");
    idem::test::createLoginRole(plainLogin, m_password, "");
}

void TestRetention::cleanupTestCase()
{
    m_owner.reset();
    m_db.reset();
}

void TestRetention::init()
{
    pqxx::work w(*m_owner);
    w.exec("TRUNCATE idem.task_idempotency, idem.idem_stored_requests");
    w.exec("DELETE FROM idem.idem_retention_policy");
    w.exec("INSERT INTO idem.idem_retention_policy (operation, horizon, changed_by) VALUES"
           " ('*', 604800 * interval '1 second', 'migration'), ('charge', 2592000 * interval '1 second', 'migration')");
    w.commit();
}

void TestRetention::defaults()
{
    // As a fresh migration leaves them (init restores the same).
    idem::test::ScratchDatabase fresh("retention_fresh", idem::test::migrated);
    auto c = fresh.connect();
    idem::migrate(*c, { idem::SchemaName(), false });
    const auto policies = idem::readRetention(*c, idem::SchemaName());
    QCOMPARE(policies.size(), std::size_t(2));
    QCOMPARE(QString::fromStdString(policies[0].operation), QStringLiteral("*"));
    QCOMPARE(policies[0].horizonSeconds, 7 * 86400);
    QCOMPARE(QString::fromStdString(policies[1].operation), QStringLiteral("charge"));
    QCOMPARE(policies[1].horizonSeconds, 30 * 86400);
    QCOMPARE(QString::fromStdString(policies[1].changedBy), QStringLiteral("migration"));
    QCOMPARE(QString::fromStdString(idem::retentionSentence("charge", policies[1].horizonSeconds)),
        QStringLiteral("a retry of a `charge` key older than 30 days executes again"));
}

void TestRetention::edgeTimes_data()
{
    QTest::addColumn<QString>("operation");
    QTest::addColumn<qint64>("horizon");
    // charge has its own row; email and refund fall back to '*'.
    for (const auto& [op, h] : { std::pair { "charge", 30 * 86400 }, std::pair { "email", 7 * 86400 } })
        QTest::addRow("%s", op) << QString::fromLatin1(op) << qint64(h);
}

// Completed one second before the horizon, exactly at it and one second past it: only the
// last is due and removed. All in one transaction, so now() is one instant for the rows, the
// due figures and the purge.
void TestRetention::edgeTimes()
{
    QFETCH(QString, operation);
    QFETCH(qint64, horizon);
    const std::string op = operation.toStdString();
    pqxx::work w(*m_owner);
    for (const auto& [suffix, offset] : { std::pair { "younger", -1 }, std::pair { "exactly", 0 }, std::pair { "older", 1 } })
        w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts,"
                      " created_at, updated_at) VALUES ($1, 'h', 'succeeded', '1', 1, now() - interval '400 days',"
                      " now() - ($2::bigint + $3::int) * interval '1 second')",
            "t:" + op + ":" + suffix, horizon, offset);
    const auto due = w.exec_params(
        "SELECT d.due, d.policy_operation, d.horizon_seconds FROM idem.idem_retention_due(100) d WHERE d.operation = $1", op);
    QCOMPARE(due.size(), pqxx::result::size_type(1));
    QCOMPARE(due[0][0].as<int>(), 1);
    QCOMPARE(QString::fromStdString(due[0][1].as<std::string>()), op == "charge" ? QStringLiteral("charge") : QStringLiteral("*"));
    QCOMPARE(due[0][2].as<qint64>(), horizon);
    const auto run = w.exec("SELECT p.rows_removed FROM idem.idem_purge(100, 5, 'edge test') p");
    QCOMPARE(run[0][0].as<int>(), 1);
    const auto left = w.exec_params("SELECT string_agg(split_part(idempotency_key, ':', 3), ',' ORDER BY idempotency_key)"
                                    " FROM idem.task_idempotency WHERE split_part(idempotency_key, ':', 2) = $1",
        op);
    QCOMPARE(QString::fromStdString(left[0][0].as<std::string>()), QStringLiteral("exactly,younger"));
    w.commit();
}

// Processing, retryable and failed rows are never removed, however old; a succeeded row of an
// operation with a longer horizon stays.
void TestRetention::onlySucceededRowsGo()
{
    {
        pqxx::work w(*m_owner);
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, error_class,"
               " lease_until, next_attempt_at, created_at, updated_at)"
               " SELECT 't:' || op || ':' || st, 'h', st, 1, CASE st WHEN 'processing' THEN NULL ELSE 'permanent' END,"
               "        CASE st WHEN 'processing' THEN now() - interval '399 days' END,"
               "        CASE st WHEN 'retryable_failed' THEN now() - interval '399 days' END,"
               "        now() - interval '400 days', now() - interval '400 days'"
               "   FROM unnest(ARRAY['charge', 'email']) op, unnest(ARRAY['processing', 'retryable_failed', 'failed']) st");
        w.exec("UPDATE idem.task_idempotency SET error_class = 'retryable' WHERE status = 'retryable_failed'");
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, created_at, updated_at)"
               " VALUES ('t:charge:ten-days', 'h', 'succeeded', 1, now() - interval '10 days', now() - interval '10 days'),"
               "        ('t:email:ten-days', 'h', 'succeeded', 1, now() - interval '10 days', now() - interval '10 days')");
        w.commit();
    }
    const auto before = scalar(*m_owner, "SELECT count(*) FROM idem.task_idempotency");
    pqxx::work w(*m_owner);
    QCOMPARE(w.exec("SELECT rows_removed FROM idem.idem_purge(1000, 10)")[0][0].as<int>(), 1);
    w.commit();
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.task_idempotency"), bytes(std::to_string(std::stoi(before.toStdString()) - 1)));
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key = 't:email:ten-days'"), "0");
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE status <> 'succeeded'"), "6");
}

void TestRetention::changeIsAudited()
{
    auto op = idem::connect(dsnAs(operatorLogin));
    const auto change = idem::setRetention(*op, idem::SchemaName(), "email", 36 * 3600, "GDPR: mail keys 36 h", "alice@desk");
    QVERIFY(!change.before);
    QVERIFY(change.after);
    QCOMPARE(change.after->horizonSeconds, 36 * 3600);
    QCOMPARE(QString::fromStdString(change.after->changedBy), QStringLiteral("idem_t_ret_op (alice@desk)"));
    QVERIFY(change.auditId > 0);
    const auto second = idem::setRetention(*op, idem::SchemaName(), "email", 48 * 3600, "longer after all", "alice@desk");
    QVERIFY(second.before);
    QCOMPARE(second.before->horizonSeconds, 36 * 3600);
    QCOMPARE(second.auditId, change.auditId + 1);

    const auto entry = scalar(*m_owner,
        "SELECT action || '|' || idempotency_key || '|' || reason || '|' || db_role || '|' || os_user || '|'"
        " || (before_image -> 'policy' ->> 'horizon_seconds') || '|' || (after_image -> 'policy' ->> 'horizon_seconds')"
        " FROM idem.task_idempotency_audit WHERE id = $1",
        second.auditId);
    QCOMPARE(entry, "retention||longer after all|idem_t_ret_op|alice@desk|129600|172800");
    // Entries of every kind join one chain, and the C++ verifier checks them alike.
    const auto chain = idem::verifyChain(*m_owner, idem::SchemaName());
    QVERIFY2(chain.ok(), chain.detail.c_str());
    QVERIFY(chain.checked >= 2);
    // The library reads the new policy back.
    bool found = false;
    for (const auto& p : idem::readRetention(*op, idem::SchemaName()))
        found = found || (p.operation == "email" && p.horizonSeconds == 48 * 3600);
    QVERIFY(found);
}

void TestRetention::clearFallsBackToDefault()
{
    auto op = idem::connect(dsnAs(operatorLogin));
    const auto change = idem::clearRetention(*op, idem::SchemaName(), "charge", "charge back to the default");
    QVERIFY(change.before);
    QVERIFY(!change.after);
    QCOMPARE(scalar(*m_owner, "SELECT extract(epoch FROM idem.idem_retention_horizon('charge'))::bigint"), "604800");
    QCOMPARE(scalar(*m_owner, "SELECT action || ' ' || (after_image ->> 'falls_back_to_default_seconds')"
                              " FROM idem.task_idempotency_audit WHERE id = $1",
                 change.auditId),
        "retention 604800");
    // Nothing to clear: nothing audited.
    const auto none = idem::clearRetention(*op, idem::SchemaName(), "charge", "again");
    QCOMPARE(none.auditId, 0);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, idem::clearRetention(*op, idem::SchemaName(), "*", "no default?"));
}

void TestRetention::refusedForOtherRoles_data()
{
    QTest::addColumn<QString>("login");
    QTest::addColumn<QString>("sql");
    for (const char* login : { readerLogin, workerLogin, plainLogin }) {
        QTest::addRow("%s set", login) << QString::fromLatin1(login)
                                        << QStringLiteral("SELECT * FROM idem.idem_set_retention('charge', 3600, 'r')");
        QTest::addRow("%s clear", login) << QString::fromLatin1(login)
                                          << QStringLiteral("SELECT * FROM idem.idem_clear_retention('charge', 'r')");
        QTest::addRow("%s purge", login) << QString::fromLatin1(login) << QStringLiteral("SELECT * FROM idem.idem_purge(10)");
        QTest::addRow("%s purge_run", login) << QString::fromLatin1(login) << QStringLiteral("CALL idem.idem_purge_run(10, 1)");
        QTest::addRow("%s begin", login) << QString::fromLatin1(login) << QStringLiteral("SELECT idem.idem_purge_begin('r')");
        QTest::addRow("%s write policy", login)
            << QString::fromLatin1(login) << QStringLiteral("UPDATE idem.idem_retention_policy SET horizon = '1 hour'");
        QTest::addRow("%s delete run", login) << QString::fromLatin1(login) << QStringLiteral("DELETE FROM idem.idem_purge_runs");
    }
}

void TestRetention::refusedForOtherRoles()
{
    QFETCH(QString, login);
    QFETCH(QString, sql);
    {
        pqxx::work w(*m_owner);
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, updated_at)"
               " VALUES ('t:charge:old', 'h', 'succeeded', 1, now() - interval '90 days')");
        w.commit();
    }
    const auto before = policyAndAudit();
    auto c = idem::connect(dsnAs(login.toLatin1().constData()));
    try {
        pqxx::nontransaction n(*c);
        n.exec(sql.toStdString());
        QFAIL("not refused");
    } catch (const pqxx::insufficient_privilege&) {
    } catch (const pqxx::sql_error& e) {
        QCOMPARE(QString::fromStdString(e.sqlstate()), QStringLiteral("42501"));
    }
    QCOMPARE(policyAndAudit(), before);
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.task_idempotency"), "1");
    if (login == QLatin1String(readerLogin)) {
        // Readers do see the policy and the storage figures.
        QCOMPARE(idem::readRetention(*c, idem::SchemaName()).size(), std::size_t(2));
        const auto s = idem::readStorage(*c, idem::SchemaName());
        QCOMPARE(s.dueTotal, 1);
        QVERIFY_THROWS_EXCEPTION(pqxx::insufficient_privilege,
            idem::setRetention(*c, idem::SchemaName(), "charge", 3600, "reader tries"));
    }
}

void TestRetention::badArguments_data()
{
    QTest::addColumn<QString>("sql");
    QTest::addColumn<QString>("sqlstate");
    // ID003 a bad argument; ID002 a run that does not exist.
    const auto add = [](const char* name, const char* sql, const char* state = "ID003") {
        QTest::addRow("%s", name) << QString::fromLatin1(sql) << QString::fromLatin1(state);
    };
    add("null operation", "SELECT * FROM idem.idem_set_retention(NULL, 86400, 'r')");
    add("empty operation", "SELECT * FROM idem.idem_set_retention('', 86400, 'r')");
    add("operation with colon", "SELECT * FROM idem.idem_set_retention('a:b', 86400, 'r')");
    add("operation with space", "SELECT * FROM idem.idem_set_retention('a b', 86400, 'r')");
    add("operation of 65 bytes", "SELECT * FROM idem.idem_set_retention(repeat('x', 65), 86400, 'r')");
    add("null horizon", "SELECT * FROM idem.idem_set_retention('charge', NULL, 'r')");
    add("zero horizon", "SELECT * FROM idem.idem_set_retention('charge', 0, 'r')");
    add("negative horizon", "SELECT * FROM idem.idem_set_retention('charge', -86400, 'r')");
    add("under an hour", "SELECT * FROM idem.idem_set_retention('charge', 3599, 'r')");
    add("over 3650 days", "SELECT * FROM idem.idem_set_retention('charge', 315360001, 'r')");
    add("huge horizon", "SELECT * FROM idem.idem_set_retention('charge', 9223372036854775807, 'r')");
    add("null reason", "SELECT * FROM idem.idem_set_retention('charge', 86400, NULL)");
    add("blank reason", "SELECT * FROM idem.idem_set_retention('charge', 86400, E' \\u200B\\t')");
    add("long actor", "SELECT * FROM idem.idem_set_retention('charge', 86400, 'r', repeat('a', 257))");
    add("clear default", "SELECT * FROM idem.idem_clear_retention('*', 'r')");
    add("clear null", "SELECT * FROM idem.idem_clear_retention(NULL, 'r')");
    add("purge null batch", "SELECT * FROM idem.idem_purge(NULL)");
    add("purge zero batch", "SELECT * FROM idem.idem_purge(0)");
    add("purge huge batch", "SELECT * FROM idem.idem_purge(100001)");
    add("purge zero batches", "SELECT * FROM idem.idem_purge(10, 0)");
    add("purge 101 batches", "SELECT * FROM idem.idem_purge(10, 101)");
    add("purge blank reason", "SELECT * FROM idem.idem_purge(10, 1, '  ')");
    add("batch of no run", "SELECT * FROM idem.idem_purge_batch(999999, 10)", "ID002");
    add("finish of no run", "SELECT * FROM idem.idem_purge_finish(999999)", "ID002");
    add("run negative seconds", "CALL idem.idem_purge_run(10, -1)");
    add("run null batch", "CALL idem.idem_purge_run(NULL, 1)");
    add("run zero duty", "CALL idem.idem_purge_run(10, 1, 'r', NULL, 0)");
    add("run duty over 1", "CALL idem.idem_purge_run(10, 1, 'r', NULL, 1.5)");
    add("due zero cap", "SELECT * FROM idem.idem_retention_due(0)");
    add("due null cap", "SELECT * FROM idem.idem_retention_due(NULL)");
}

void TestRetention::badArguments()
{
    QFETCH(QString, sql);
    QFETCH(QString, sqlstate);
    {
        pqxx::work w(*m_owner);
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, updated_at)"
               " VALUES ('t:charge:old', 'h', 'succeeded', 1, now() - interval '90 days')");
        w.commit();
    }
    const auto before = policyAndAudit();
    auto op = idem::connect(dsnAs(operatorLogin));
    try {
        pqxx::nontransaction n(*op);
        n.exec(sql.toStdString());
        QFAIL("not refused");
    } catch (const pqxx::sql_error& e) {
        QVERIFY2(QString::fromStdString(e.sqlstate()) == sqlstate, (e.sqlstate() + ": " + e.what()).c_str());
    }
    QCOMPARE(policyAndAudit(), before);
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.task_idempotency"), "1");
}

void TestRetention::idemctlRetention()
{
    const QString dsn = QString::fromStdString(dsnAs(operatorLogin));
    auto set = idemctl({ QStringLiteral("retention"), QStringLiteral("set"), QStringLiteral("refund"), QStringLiteral("14d"),
        QStringLiteral("--reason"), QStringLiteral("refunds two weeks"), QStringLiteral("--dsn"), dsn });
    QVERIFY2(set.exitCode == 0, qPrintable(idem::test::describe(set)));
    QVERIFY2(set.out.contains(QStringLiteral("a retry of a `refund` key older than 14 days executes again")), qPrintable(set.out));
    QCOMPARE(scalar(*m_owner, "SELECT extract(epoch FROM horizon)::bigint FROM idem.idem_retention_policy WHERE operation = 'refund'"),
        "1209600");
    auto show = idemctl({ QStringLiteral("retention"), QStringLiteral("show"), QStringLiteral("--json"), QStringLiteral("--dsn"), dsn });
    QVERIFY2(show.exitCode == 0, qPrintable(idem::test::describe(show)));
    const auto policies = QJsonDocument::fromJson(show.out.toUtf8()).object().value(QStringLiteral("policies")).toArray();
    QCOMPARE(policies.size(), 3);
    QCOMPARE(policies[2].toObject().value(QStringLiteral("operation")).toString(), QStringLiteral("refund"));
    // A reader is refused by the database (exit 3), nothing changed; no reason is a usage error.
    const auto before = policyAndAudit();
    auto refused = idemctl({ QStringLiteral("retention"), QStringLiteral("set"), QStringLiteral("charge"), QStringLiteral("1h"),
        QStringLiteral("--reason"), QStringLiteral("x"), QStringLiteral("--dsn"), QString::fromStdString(dsnAs(readerLogin)) });
    QCOMPARE(refused.exitCode, 3);
    auto noReason = idemctl({ QStringLiteral("retention"), QStringLiteral("set"), QStringLiteral("charge"), QStringLiteral("1h"),
        QStringLiteral("--dsn"), dsn });
    QCOMPARE(noReason.exitCode, 2);
    auto badDuration = idemctl({ QStringLiteral("retention"), QStringLiteral("set"), QStringLiteral("charge"),
        QStringLiteral("-5d"), QStringLiteral("--reason"), QStringLiteral("x"), QStringLiteral("--dsn"), dsn });
    QCOMPARE(badDuration.exitCode, 2);
    auto tooShort = idemctl({ QStringLiteral("retention"), QStringLiteral("set"), QStringLiteral("charge"),
        QStringLiteral("0h"), QStringLiteral("--reason"), QStringLiteral("x"), QStringLiteral("--dsn"), dsn });
    QCOMPARE(tooShort.exitCode, 2);
    QCOMPARE(policyAndAudit(), before);
}

// What `idemctl storage --json` says about rows planted here, with every figure worked out by
// hand: the last purge run, per operation the horizon, the oldest completion and the rows due
// (capped at 500), the unfinished rows by status; the table sizes as PostgreSQL's own size
// functions give them.
void TestRetention::storageJsonReportsPlantedRows()
{
    // Completed `ago` (an interval) before now, or at the timestamp `at`.
    const auto plant = [&](pqxx::work& w, const char* op, const char* tag, const char* status, const char* ago,
                           const char* at, int rows) {
        w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, error_class,"
                      " owner_token, lease_until, next_attempt_at, created_at, updated_at)"
                      " SELECT 't:' || $1 || ':' || $2 || i, 'h', $3, 1,"
                      "        CASE $3 WHEN 'failed' THEN 'permanent' WHEN 'retryable_failed' THEN 'retryable' END,"
                      "        CASE $3 WHEN 'processing' THEN gen_random_uuid() END,"
                      "        CASE $3 WHEN 'processing' THEN now() + interval '1 hour' END,"
                      "        CASE $3 WHEN 'retryable_failed' THEN now() + interval '1 hour' END,"
                      "        now() - interval '400 days', coalesce($5::timestamptz, now() - $4::interval)"
                      "   FROM generate_series(1, $6::int) i",
            op, tag, status, ago, at, rows);
    };
    // First a run to report: 150 rows of `gone` a day past the default horizon (7 days), all of
    // them removed in batches of 100: two batches, the second short.
    qint64 runId = 0, auditId = 0;
    {
        pqxx::work w(*m_owner);
        plant(w, "gone", "old", "succeeded", "8 days", nullptr, 150);
        const auto r = w.exec("SELECT run_id, rows_removed, batches, audit_id FROM idem.idem_purge(100, 2)");
        QCOMPARE(r[0][1].as<qint64>(), 150);
        QCOMPARE(r[0][2].as<qint64>(), 2);
        runId = r[0][0].as<qint64>();
        auditId = r[0][3].as<qint64>();
        w.commit();
    }
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.task_idempotency"), "0");
    {
        pqxx::work w(*m_owner);
        // charge (its own 30 days): 40 rows 45 days old and the oldest of all, due; 25 of 10 days, not.
        plant(w, "charge", "due", "succeeded", "45 days", nullptr, 40);
        plant(w, "charge", "oldest", "succeeded", nullptr, "2020-01-02 03:04:05.678901+00", 1);
        plant(w, "charge", "young", "succeeded", "10 days", nullptr, 25);
        // email (the default, 7 days): 600 due, past the cap of 500; 30 of a day, not.
        plant(w, "email", "due", "succeeded", "8 days", nullptr, 599);
        plant(w, "email", "oldest", "succeeded", nullptr, "2021-06-07 08:09:10+00", 1);
        plant(w, "email", "young", "succeeded", "1 day", nullptr, 30);
        // ship (the default): 7 due, 5 of two days not.
        plant(w, "ship", "due", "succeeded", "8 days", nullptr, 6);
        plant(w, "ship", "oldest", "succeeded", nullptr, "2022-02-03 04:05:06.5+00", 1);
        plant(w, "ship", "young", "succeeded", "2 days", nullptr, 5);
        // Unfinished rows, however old, are never due: refund has no succeeded row and no policy
        // of its own, so it is no operation of the report.
        plant(w, "refund", "p", "processing", "400 days", nullptr, 3);
        plant(w, "refund", "r", "retryable_failed", "400 days", nullptr, 4);
        plant(w, "refund", "f", "failed", "400 days", nullptr, 6);
        // The shared live figures as if a period had passed: the report counts the rows above.
        w.exec("UPDATE idem.idem_stats_live SET taken_at = '-infinity'");
        w.commit();
    }
    {
        // Vacuumed now, so autovacuum does not change the sizes between the two readings.
        pqxx::nontransaction v(*m_owner);
        v.exec("VACUUM ANALYZE idem.task_idempotency");
    }
    auto run = idemctl({ QStringLiteral("storage"), QStringLiteral("--json"), QStringLiteral("--no-sample"),
        QStringLiteral("--cap"), QStringLiteral("500"), QStringLiteral("--dsn"), QString::fromStdString(dsnAs(readerLogin)) });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto j = QJsonDocument::fromJson(run.out.toUtf8()).object();

    struct Due {
        const char* operation;
        const char* policy;
        qint64 horizon;
        qint64 due;
        const char* quality;
        const char* oldest;
    };
    const Due planted[] = {
        { "charge", "charge", 30 * 86400, 41, "exact", "2020-01-02T03:04:05.678901Z" },
        { "email", "*", 7 * 86400, 500, "lower_bound", "2021-06-07T08:09:10.000000Z" },
        { "ship", "*", 7 * 86400, 7, "exact", "2022-02-03T04:05:06.500000Z" },
    };
    const auto ops = j.value(QStringLiteral("operations")).toArray();
    QCOMPARE(ops.size(), 3);
    for (int i = 0; i < ops.size(); ++i) {
        const auto o = ops[i].toObject();
        const auto& x = planted[i];
        QCOMPARE(o.value(QStringLiteral("operation")).toString(), QString::fromLatin1(x.operation));
        QCOMPARE(o.value(QStringLiteral("policy_operation")).toString(), QString::fromLatin1(x.policy));
        QCOMPARE(o.value(QStringLiteral("horizon_seconds")).toInteger(), x.horizon);
        QCOMPARE(o.value(QStringLiteral("due")).toInteger(), x.due);
        QCOMPARE(o.value(QStringLiteral("due_quality")).toString(), QString::fromLatin1(x.quality));
        QCOMPARE(o.value(QStringLiteral("oldest_completed_at")).toString(), QString::fromLatin1(x.oldest));
    }
    QCOMPARE(j.value(QStringLiteral("due_total")).toInteger(), 41 + 500 + 7);
    QCOMPARE(j.value(QStringLiteral("due_total_quality")).toString(), QStringLiteral("lower_bound"));
    // Rows by status: the unfinished ones exact below the cap.
    const auto status = j.value(QStringLiteral("rows_by_status")).toObject();
    for (const auto& [s, n] : { std::pair { "processing", 3 }, std::pair { "retryable_failed", 4 }, std::pair { "failed", 6 } }) {
        const auto f = status.value(QString::fromLatin1(s)).toObject();
        QCOMPARE(f.value(QStringLiteral("quality")).toString(), QStringLiteral("exact"));
        QCOMPARE(f.value(QStringLiteral("value")).toInteger(), n);
    }
    QCOMPARE(status.value(QStringLiteral("succeeded")).toObject().value(QStringLiteral("quality")).toString(),
        QStringLiteral("estimate"));
    // Every table of the schema, largest first, each as PostgreSQL's size functions measure it.
    pqxx::read_transaction t(*m_owner);
    const auto catalogue = t.exec("SELECT c.relname, pg_table_size(c.oid), pg_indexes_size(c.oid), pg_total_relation_size(c.oid)"
                                  "  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                                  " WHERE n.nspname = 'idem' AND c.relkind IN ('r', 'p')");
    std::map<std::string, std::array<qint64, 3>> sizes;
    for (const auto& r : catalogue)
        sizes[r[0].as<std::string>()] = { r[1].as<qint64>(), r[2].as<qint64>(), r[3].as<qint64>() };
    const auto tables = j.value(QStringLiteral("tables")).toArray();
    QCOMPARE(std::size_t(tables.size()), sizes.size());
    qint64 previous = std::numeric_limits<qint64>::max();
    for (int i = 0; i < tables.size(); ++i) {
        const auto o = tables[i].toObject();
        const auto name = o.value(QStringLiteral("name")).toString().toStdString();
        QVERIFY2(sizes.count(name) == 1, name.c_str());
        const auto& size = sizes.at(name);
        QCOMPARE(o.value(QStringLiteral("table_bytes")).toInteger(), size[0]);
        QCOMPARE(o.value(QStringLiteral("index_bytes")).toInteger(), size[1]);
        QCOMPARE(o.value(QStringLiteral("total_bytes")).toInteger(), size[2]);
        QVERIFY2(size[2] <= previous, name.c_str());
        previous = size[2];
    }
    QCOMPARE(tables[0].toObject().value(QStringLiteral("name")).toString(), QStringLiteral("task_idempotency"));
    // The last purge run, as the purge above returned it.
    const auto last = j.value(QStringLiteral("last_purge_run")).toObject();
    QCOMPARE(last.value(QStringLiteral("id")).toInteger(), runId);
    QCOMPARE(last.value(QStringLiteral("rows_removed")).toInteger(), 150);
    QCOMPARE(last.value(QStringLiteral("batches")).toInteger(), 2);
    QCOMPARE(last.value(QStringLiteral("audit_id")).toInteger(), auditId);
    QCOMPARE(last.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
    QCOMPARE(QJsonDocument(last.value(QStringLiteral("removed_by_operation")).toObject()).toJson(QJsonDocument::Compact),
        QByteArray(R"({"gone":150})"));
}

QTEST_GUILESS_MAIN(TestRetention)
#include "tst_retention.moc"
