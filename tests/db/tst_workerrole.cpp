#include <QtTest>

#include <QUuid>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/counters.h"
#include "core/runner.h"
#include "core/workerversion.h"
#include "tests/support/taskrows.h"

using namespace std::chrono_literals;
using idem::test::operator""_b;
using idem::test::bytes;
using idem::test::digestOf;
using idem::test::scalar;
using idem::test::storeOptions;

namespace {
constexpr const char* workerLogin = "idem_t_hard_wk"; // cluster-wide: distinct from other programs'
} // namespace

// Issue 12, item 4: the database holds the state machine against its own workers. A login
// granted idem_worker runs the whole protocol (claims, fenced business writes, completions,
// heartbeats, failures, the counters flush) through the SECURITY DEFINER functions, and can
// neither write nor lock any Idem table directly: a succeeded row cannot be put back to
// processing, a succeeded row cannot be forged, the table cannot be locked away from others.
class TestWorkerRole : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void protocolWorksAsWorker();
    void directAccessRefused_data();
    void directAccessRefused();
    void functionsAreDefinersWithPinnedPath();
    void migrateTakesOldGrantsBack();

private:
    std::unique_ptr<pqxx::connection> asWorker() const { return idem::connect(workerDsn()); }
    std::string workerDsn() const
    {
        return idem::test::loginDsn(m_db->dsn(), workerLogin, m_password);
    }
    // Everything in the Idem tables, as the owner sees it: what a refused statement must leave.
    QByteArray everything() const;

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
    std::string m_password;
    int m_keys = 0;
};

void TestWorkerRole::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("workerrole", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName() }); // with roles and grants
    m_password = QUuid::createUuid().toString(QUuid::WithoutBraces).toStdString();
    idem::test::createLoginRole(workerLogin, m_password, "idem_worker");
    pqxx::work w(*m_owner);
    // The worker's own business table: its grants are the deployment's, not Idem's.
    w.exec("CREATE TABLE public.payments (idempotency_key text NOT NULL, amount integer NOT NULL)");
    w.exec(std::string("GRANT SELECT, INSERT ON public.payments TO ") + workerLogin);
    w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts)"
                  " VALUES ($1, $2, 'succeeded', '{\"receipt\": \"r-0\"}', 1)",
        "shop:charge:done", digestOf('a'));
    w.exec("INSERT INTO idem.idem_counters VALUES (date_trunc('minute', now()), 'shop', 'charge', 'succeeded', 1)");
    w.exec_params("INSERT INTO idem.task_idempotency_conflicts VALUES ($1, now(), now(), 1, $2)", "shop:charge:done",
        digestOf('b'));
    w.commit();
}

void TestWorkerRole::cleanupTestCase()
{
    m_owner.reset();
    m_db.reset();
}

QByteArray TestWorkerRole::everything() const
{
    QByteArray all;
    for (const char* table : { "task_idempotency", "idem_counters", "task_idempotency_conflicts",
             "task_idempotency_audit", "idem_worker_versions", "idem_deploys" })
        all += scalar(*m_owner,
            std::string("SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM idem.") + table
                + " t");
    return all;
}

void TestWorkerRole::protocolWorksAsWorker()
{
    auto conn = asWorker();
    QCOMPARE(scalar(*conn, "SELECT current_user"), QByteArray(workerLogin));
    idem::OutcomeCounters counters;
    idem::TaskStore store(*conn, storeOptions(30s), &counters);
    const idem::TaskKey paid("shop", "charge", "order-" + std::to_string(++m_keys));
    const auto pay = [&](pqxx::work& tx, const idem::TaskContext& ctx) {
        tx.exec_params("INSERT INTO public.payments VALUES ($1, 1250)", ctx.idempotencyKey);
        return std::string(R"({"receipt": "r-1"})");
    };
    QCOMPARE(idem::runOutcomeName(idem::runTask(store, paid, digestOf('a'), pay).kind), "succeeded");
    const auto replay = idem::runTask(store, paid, digestOf('a'), pay);
    QCOMPARE(idem::runOutcomeName(replay.kind), "replayed");
    QCOMPARE(bytes(replay.resultJson), R"({"receipt": "r-1"})"_b);
    QCOMPARE(idem::runOutcomeName(idem::runTask(store, paid, digestOf('b'), pay).kind), "conflict");

    // Claim, heartbeat, a retryable failure, the retry, a permanent failure.
    const idem::TaskKey flaky("shop", "charge", "order-" + std::to_string(++m_keys));
    const auto c = store.claim(flaky, digestOf('a'));
    QVERIFY(c.mayExecute());
    store.heartbeat(flaky, c.token);
    QCOMPARE(bytes(store.fail(flaky, c.token, c.attempts, idem::FailureClass::Retryable, "timeout").status),
        "retryable_failed"_b);
    const auto again = store.claim(flaky, digestOf('a'));
    QCOMPARE(idem::decisionName(again.decision), "reacquired");
    {
        pqxx::work tx(*conn);
        store.fence(tx, flaky, again.token);
        tx.commit();
    }
    QCOMPARE(bytes(store.fail(flaky, again.token, again.attempts, idem::FailureClass::Permanent, "declined").status),
        "failed"_b);

    // The counters, through the library on the worker's connection and through a flusher.
    QVERIFY(counters.flush(*conn, idem::SchemaName()) >= 6);
    counters.add("shop", "charge", idem::outcome::Replayed, 3);
    {
        idem::CounterFlusher flusher(workerDsn(), idem::SchemaName(), counters, 1h);
        QVERIFY(flusher.flushNow());
    }
    QCOMPARE(scalar(*m_owner,
                 "SELECT string_agg(outcome || '=' || n, ',' ORDER BY outcome) FROM (SELECT outcome, sum(n) AS n"
                 "  FROM idem.idem_counters WHERE tenant = 'shop' GROUP BY outcome) s"),
        "acquired=2,conflict=1,failed_permanent=1,failed_retryable=1,reacquired_retry=1,replayed=4,retry_failed=1,succeeded=2"_b);
    QCOMPARE(scalar(*m_owner, "SELECT status || ' ' || attempts FROM idem.task_idempotency WHERE idempotency_key = $1",
                 flaky.str()),
        "failed 2"_b);
    QCOMPARE(scalar(*m_owner, "SELECT count(*)::text FROM public.payments"), "1"_b);
}

void TestWorkerRole::directAccessRefused_data()
{
    QTest::addColumn<QString>("sql");
    // The issue's three, then every other verb on every Idem table.
    QTest::addRow("succeeded row back to processing")
        << "UPDATE idem.task_idempotency SET status = 'processing', owner_token = gen_random_uuid(),"
           " lease_until = now() + interval '1 hour', result_json = NULL WHERE idempotency_key = 'shop:charge:done'";
    QTest::addRow("forged succeeded row")
        << "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json)"
           " VALUES ('shop:charge:forged', 'v1:x', 'succeeded', '{\"receipt\": \"forged\"}')";
    QTest::addRow("LOCK tasks ACCESS EXCLUSIVE") << "LOCK TABLE idem.task_idempotency IN ACCESS EXCLUSIVE MODE";
    QTest::addRow("read tasks") << "SELECT result_json FROM idem.task_idempotency";
    QTest::addRow("lock a row") << "SELECT 1 FROM idem.task_idempotency WHERE idempotency_key = 'shop:charge:done'"
                                   " FOR UPDATE";
    QTest::addRow("DELETE tasks") << "DELETE FROM idem.task_idempotency";
    QTest::addRow("TRUNCATE tasks") << "TRUNCATE idem.task_idempotency";
    const std::tuple<const char*, const char*, const char*> tables[] = {
        { "idem_counters", "VALUES (date_trunc('minute', now()), 'shop', 'charge', 'replayed', 1000)", "n = n + 1" },
        { "task_idempotency_conflicts", "VALUES ('shop:charge:x', now(), now(), 1, 'v1:x')", "n = n + 1" },
        { "task_idempotency_audit",
            "(idempotency_key, action, reason, db_role, os_user, client_host, before_image, after_image, prev_hash,"
            " entry_hash) VALUES ('shop:charge:x', 'requeue', 'forged', 'a', 'b', 'c', '{}', '{}', 'p', 'e')",
            "reason = 'tampered'" },
        // Schema v18: a worker's version goes only through idem_report_version.
        { "idem_worker_versions", "VALUES ('shop-1', 'forged', now(), now(), 'me')", "version = 'forged'" },
        { "idem_deploys", "(at, worker, new_version, db_role) VALUES (now(), 'shop-1', 'forged', 'me')",
            "new_version = 'forged'" },
    };
    for (const auto& [table, values, set] : tables) {
        const std::string t = std::string("idem.") + table;
        QTest::addRow("INSERT %s", table) << QString::fromStdString("INSERT INTO " + t + " " + values);
        QTest::addRow("UPDATE %s", table) << QString::fromStdString("UPDATE " + t + " SET " + set);
        QTest::addRow("DELETE %s", table) << QString::fromStdString("DELETE FROM " + t);
        QTest::addRow("TRUNCATE %s", table) << QString::fromStdString("TRUNCATE " + t);
        QTest::addRow("SELECT %s", table) << QString::fromStdString("SELECT count(*) FROM " + t);
    }
    for (const char* table : { "idem_counters", "task_idempotency_conflicts", "task_idempotency_audit",
             "idem_schema_version" })
        QTest::addRow("LOCK %s ACCESS EXCLUSIVE", table)
            << QString::fromStdString(std::string("LOCK TABLE idem.") + table + " IN ACCESS EXCLUSIVE MODE");
    QTest::addRow("LOCK tasks SHARE") << "LOCK TABLE idem.task_idempotency IN SHARE MODE";
    QTest::addRow("UPDATE idem_schema_version") << "UPDATE idem.idem_schema_version SET checksum = 'x'";
}

void TestWorkerRole::directAccessRefused()
{
    QFETCH(QString, sql);
    const std::string text = sql.toStdString();
    const QByteArray before = everything();
    auto conn = asWorker();
    bool denied = false;
    QString other;
    try {
        pqxx::work w(*conn);
        w.exec(text);
        w.commit();
    } catch (const pqxx::insufficient_privilege&) {
        denied = true; // SQLSTATE 42501 (libpqxx 6.4 leaves sqlstate() empty for this class)
    } catch (const pqxx::sql_error& e) {
        other = QString::fromStdString(e.sqlstate()) + QLatin1Char(' ') + QString::fromUtf8(e.what());
    }
    QVERIFY2(denied, other.isEmpty() ? "the statement went through" : qPrintable(other));
    QCOMPARE(everything(), before);
    QCOMPARE(scalar(*m_owner, "SELECT status || ' ' || result_json FROM idem.task_idempotency"
                              " WHERE idempotency_key = 'shop:charge:done'"),
        R"(succeeded {"receipt": "r-0"})"_b);
}

// Every function a worker may run is a definer whose path is pinned with pg_temp last, so a
// worker's temporary table of the same name is never what the function writes to.
void TestWorkerRole::functionsAreDefinersWithPinnedPath()
{
    QCOMPARE(scalar(*m_owner,
                 "SELECT string_agg(p.proname || ' ' || p.prosecdef || ' ' || array_to_string(p.proconfig, ';'), ','"
                 "                  ORDER BY p.proname)"
                 "  FROM pg_proc p WHERE p.pronamespace = 'idem'::regnamespace"
                 "   AND has_function_privilege('idem_worker', p.oid, 'EXECUTE')"),
        "add_counters true search_path=\"idem\", pg_temp,claim true search_path=\"idem\", pg_temp,"
        "complete true search_path=\"idem\", pg_temp,fail true search_path=\"idem\", pg_temp,"
        "fence true search_path=\"idem\", pg_temp,heartbeat true search_path=\"idem\", pg_temp,"
        "idem_claim_local true search_path=\"idem\", pg_temp;lock_timeout=1s,"
        "idem_claim_stored true search_path=\"idem\", pg_temp,"
        "idem_note_timeline true search_path=\"idem\", pg_temp,"
        // Issue 45 item 1, record at commit.
        "idem_peek_local true search_path=\"idem\", pg_temp,"
        "idem_record_local true search_path=\"idem\", pg_temp;lock_timeout=1s,"
        // Schema v25: re-execution (docs/redrive.md).
        "idem_redrive_finish true search_path=\"idem\", pg_temp,"
        "idem_redrive_register true search_path=\"idem\", pg_temp,"
        "idem_redrive_take true search_path=\"idem\", pg_temp,"
        "idem_redriver_seen true search_path=\"idem\", pg_temp,"
        "idem_report_version true search_path=\"idem\", pg_temp"_b);
    auto conn = asWorker();
    {
        pqxx::work w(*conn);
        w.exec("CREATE TEMP TABLE task_idempotency (idempotency_key text PRIMARY KEY)");
        w.exec("CREATE TEMP TABLE idem_counters (tenant text)");
        w.exec("CREATE TEMP TABLE idem_worker_versions (worker text, version text)");
        w.commit();
    }
    QCOMPARE(idem::versionReportOutcomeName(idem::reportVersion(*conn, idem::SchemaName(), "shop-7", "1.0").outcome),
        "new_worker");
    QCOMPARE(scalar(*m_owner, "SELECT version FROM idem.idem_worker_versions WHERE worker = 'shop-7'"), "1.0"_b);
    QCOMPARE(scalar(*conn, "SELECT count(*)::text FROM pg_temp.idem_worker_versions"), "0"_b);
    idem::OutcomeCounters counters;
    idem::TaskStore store(*conn, storeOptions(30s), &counters);
    const idem::TaskKey key("shop", "charge", "shadowed-" + std::to_string(++m_keys));
    QVERIFY(store.claim(key, digestOf('a')).mayExecute());
    QCOMPARE(counters.flush(*conn, idem::SchemaName()), std::size_t(1));
    QCOMPARE(scalar(*m_owner, "SELECT status FROM idem.task_idempotency WHERE idempotency_key = $1", key.str()),
        "processing"_b);
    QCOMPARE(scalar(*conn, "SELECT count(*)::text FROM pg_temp.task_idempotency"), "0"_b);
    QCOMPARE(scalar(*conn, "SELECT count(*)::text FROM pg_temp.idem_counters"), "0"_b);
}

// A database whose worker still holds the table privileges roles.sql granted until v5 loses
// them on the next migrate, and roles.sql never grants them back.
void TestWorkerRole::migrateTakesOldGrantsBack()
{
    const auto has = [&] {
        return scalar(*m_owner,
            "SELECT string_agg(c.relname || ':' || p.privilege_type, ',' ORDER BY c.relname, p.privilege_type)"
            "  FROM pg_class c, LATERAL aclexplode(c.relacl) p"
            " WHERE c.relnamespace = 'idem'::regnamespace AND p.grantee = 'idem_worker'::regrole");
    };
    {
        pqxx::work w(*m_owner);
        w.exec("GRANT SELECT, INSERT, UPDATE ON idem.task_idempotency, idem.idem_counters,"
               " idem.task_idempotency_conflicts TO idem_worker");
        w.commit();
    }
    QVERIFY(has().contains("task_idempotency:UPDATE"));
    idem::migrate(*m_owner, { idem::SchemaName() });
    QCOMPARE(has(), "idem_schema_version:SELECT"_b);
    idem::migrate(*m_owner, { idem::SchemaName() });
    QCOMPARE(has(), "idem_schema_version:SELECT"_b);
}

QTEST_GUILESS_MAIN(TestWorkerRole)
#include "tst_workerrole.moc"
