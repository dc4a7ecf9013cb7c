// The status gauges (schema v6): whatever writes task_idempotency, in whatever order and with
// whatever concurrency, the gauges equal a count of the rows in the same snapshot, and the
// dashboard figures read from them equal the figures counted from the rows.
#include <QtTest>

#include <atomic>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/dashboardquery.h"
#include "core/migrate.h"
#include "core/stats.h"
#include "tests/support/cliprocess.h"
#include "tests/support/testdb.h"

using idem::test::ScratchDatabase;

class TestGauges : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void everyKindOfWriteIsCounted();
    void rolledBackChangesLeaveNoTrace();
    void concurrentWritersStayExact();
    void figuresEqualTheCountedForm();
    void checkFindsAndRecountRepairs();
    void rolesNeedNoGrantOnTheGauges();
    void unfilteredTickIsPlannedOnce();

private:
    // Fails the test naming every gauge that differs from the rows.
    void expectExact(const char* when);
    std::string value(const std::string& sql);
    void exec(const std::string& sql);

    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
};

void TestGauges::init()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>(QTest::currentTestFunction());
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
}

void TestGauges::cleanup()
{
    m_conn.reset();
    m_db.reset();
}

std::string TestGauges::value(const std::string& sql)
{
    pqxx::nontransaction n(*m_conn);
    const auto r = n.exec(sql);
    return r.at(0).at(0).is_null() ? std::string("NULL") : r.at(0).at(0).as<std::string>();
}

void TestGauges::exec(const std::string& sql)
{
    pqxx::work w(*m_conn);
    w.exec(sql);
    w.commit();
}

void TestGauges::expectExact(const char* when)
{
    std::string mismatches;
    for (const auto& c : idem::checkGauges(*m_conn, idem::SchemaName(), 10000))
        if (!c.ok())
            mismatches += c.name + " gauge " + std::to_string(c.gauge) + " counted " + std::to_string(c.counted) + "; ";
    QVERIFY2(mismatches.empty(), (std::string(when) + ": " + mismatches).c_str());
}

namespace {
// A row of the given status and class; created `ageMinutes` ago.
std::string row(const std::string& key, const std::string& status, const std::string& cls, int ageMinutes = 1)
{
    return "('" + key + "', 'v1:" + std::string(64, 'a') + "', '" + status + "', "
        + (cls.empty() ? std::string("NULL") : "'" + cls + "'") + ", now() - interval '" + std::to_string(ageMinutes)
        + " minutes')";
}
const std::string insertHead = "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, error_class, "
                               "created_at) VALUES ";
} // namespace

void TestGauges::everyKindOfWriteIsCounted()
{
    // A fresh schema starts at zero, and the migration counted what an adopted table held.
    expectExact("fresh schema");
    QCOMPARE(value("SELECT count(*) FROM idem.task_idempotency_gauges"), std::string("64"));

    exec(insertHead + row("t:op:1", "processing", "") + "," + row("t:op:2", "retryable_failed", "unknown") + ","
        + row("t:op:3", "retryable_failed", "retryable") + "," + row("t:op:4", "failed", "permanent") + ","
        + row("t:op:5", "failed", "retryable") + "," + row("t:op:6", "failed", "") + ","
        + row("t:op:7", "succeeded", ""));
    expectExact("multi-row insert");
    QCOMPARE(value("SELECT sum(uncertain) FROM idem.task_idempotency_gauges"), std::string("1"));
    QCOMPARE(value("SELECT sum(failed_other) FROM idem.task_idempotency_gauges"), std::string("2"));

    // ON CONFLICT DO NOTHING: a row that was not inserted is not counted.
    exec(insertHead + row("t:op:1", "processing", "") + " ON CONFLICT DO NOTHING");
    expectExact("insert that conflicted");
    QCOMPARE(value("SELECT sum(processing) FROM idem.task_idempotency_gauges"), std::string("1"));

    // Every transition, and a class change without a status change.
    exec("UPDATE idem.task_idempotency SET status = 'succeeded', error_class = NULL WHERE idempotency_key = 't:op:1'");
    exec("UPDATE idem.task_idempotency SET error_class = 'retryable' WHERE idempotency_key = 't:op:2'");
    exec("UPDATE idem.task_idempotency SET status = 'processing' WHERE idempotency_key = 't:op:3'");
    exec("UPDATE idem.task_idempotency SET error_class = 'permanent' WHERE idempotency_key = 't:op:5'");
    exec("UPDATE idem.task_idempotency SET status = 'retryable_failed', error_class = 'unknown'"
         " WHERE idempotency_key = 't:op:7'");
    expectExact("single-row transitions");
    QCOMPARE(value("SELECT sum(uncertain) FROM idem.task_idempotency_gauges"), std::string("1"));
    QCOMPARE(value("SELECT sum(failed_permanent) FROM idem.task_idempotency_gauges"), std::string("2"));

    // A heartbeat-like update changes neither column and fires nothing.
    exec("UPDATE idem.task_idempotency SET updated_at = now(), lease_until = now() + interval '1 minute'");
    expectExact("updates of other columns");

    // Many single-row changes in one transaction: summed, written once at commit.
    {
        pqxx::work w(*m_conn);
        for (int i = 0; i < 300; ++i)
            w.exec_params(insertHead + "($1, 'v1:' || repeat('e', 64), 'processing', NULL, now())",
                "t:many:" + std::to_string(i));
        w.exec("UPDATE idem.task_idempotency SET status = 'succeeded' WHERE idempotency_key LIKE 't:many:%'"
               " AND right(idempotency_key, 1) IN ('0', '5')");
        w.commit();
    }
    expectExact("300 changes in one transaction");
    QCOMPARE(value("SELECT sum(processing) FROM idem.task_idempotency_gauges"), std::string("241"));

    // Many rows in one statement, deletes, COPY.
    exec("UPDATE idem.task_idempotency SET status = 'failed', error_class = 'unknown' WHERE status <> 'succeeded'");
    expectExact("bulk update");
    exec("DELETE FROM idem.task_idempotency WHERE idempotency_key IN ('t:op:2', 't:op:4')");
    expectExact("delete");
    {
        pqxx::work w(*m_conn);
        pqxx::stream_to copy(w, "idem.task_idempotency",
            std::vector<std::string> { "idempotency_key", "request_hash", "status", "error_class" });
        copy << std::make_tuple(
            std::string("t:op:c1"), "v1:" + std::string(64, 'b'), std::string("processing"), std::string("retryable"));
        copy << std::make_tuple(std::string("t:op:c2"), "v1:" + std::string(64, 'b'), std::string("retryable_failed"),
            std::string("unknown"));
        copy.complete();
        w.commit();
    }
    expectExact("COPY");
    QCOMPARE(value("SELECT sum(uncertain) FROM idem.task_idempotency_gauges"), std::string("1"));

    // TRUNCATE, then rows again in the same transaction.
    exec("TRUNCATE idem.task_idempotency; " + insertHead + row("t:op:after", "processing", ""));
    expectExact("truncate and insert");
    QCOMPARE(value("SELECT sum(processing) FROM idem.task_idempotency_gauges"), std::string("1"));
    QCOMPARE(value("SELECT sum(failed_other) + sum(failed_permanent) + sum(retryable_failed)"
                   " FROM idem.task_idempotency_gauges"),
        std::string("0"));
}

void TestGauges::rolledBackChangesLeaveNoTrace()
{
    exec(insertHead + row("t:op:1", "processing", ""));
    {
        pqxx::work w(*m_conn);
        w.exec(insertHead + row("t:op:2", "failed", "permanent"));
        w.exec("UPDATE idem.task_idempotency SET status = 'succeeded' WHERE idempotency_key = 't:op:1'");
        // Not committed.
    }
    try {
        pqxx::work w(*m_conn);
        w.exec(insertHead + row("t:op:3", "failed", "permanent"));
        w.exec(insertHead + row("t:op:1", "processing", "")); // duplicate key: the statement fails
        w.commit();
        QFAIL("the duplicate key was accepted");
    } catch (const pqxx::unique_violation&) {
    }
    expectExact("after rollbacks");
    QCOMPARE(value("SELECT sum(processing) FROM idem.task_idempotency_gauges"), std::string("1"));
    QCOMPARE(value("SELECT sum(failed_permanent) FROM idem.task_idempotency_gauges"), std::string("0"));

    // A savepoint rolled back takes its changes' notes with it; what stays is written at commit.
    {
        pqxx::work w(*m_conn);
        w.exec(insertHead + row("t:op:4", "retryable_failed", "unknown"));
        w.exec("SAVEPOINT s");
        w.exec(insertHead + row("t:op:5", "failed", "permanent"));
        w.exec("UPDATE idem.task_idempotency SET status = 'succeeded' WHERE idempotency_key = 't:op:1'");
        w.exec("ROLLBACK TO SAVEPOINT s");
        w.exec(insertHead + row("t:op:6", "failed", ""));
        w.commit();
    }
    expectExact("after a rolled-back savepoint");
    QCOMPARE(value("SELECT sum(processing) || '/' || sum(uncertain) || '/' || sum(failed_permanent) || '/' ||"
                   " sum(failed_other) FROM idem.task_idempotency_gauges"),
        std::string("1/1/0/1"));

    // Flushed per statement when the session asks for immediate constraints: the same sums.
    {
        pqxx::work w(*m_conn);
        w.exec("SET CONSTRAINTS ALL IMMEDIATE");
        w.exec(insertHead + row("t:op:7", "processing", ""));
        w.exec("UPDATE idem.task_idempotency SET status = 'failed', error_class = 'permanent'"
               " WHERE idempotency_key = 't:op:7'");
        w.commit();
    }
    expectExact("with immediate constraints");
    QCOMPARE(value("SELECT sum(failed_permanent) FROM idem.task_idempotency_gauges"), std::string("1"));
}

void TestGauges::concurrentWritersStayExact()
{
    // Eight connections move 400 shared rows between every status at random, in transactions of
    // one to three rows, some rolled back; rows collide (lock waits), gauge rows may collide
    // (pids equal modulo 64 are unlikely but allowed). Deadlocks between two writers of the same
    // rows are theirs, not the gauges': they are retried.
    exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status)"
         " SELECT 't:op:' || i, 'v1:' || repeat('c', 64), 'processing' FROM generate_series(1, 400) i");
    std::atomic<int> committed { 0 };
    std::atomic<int> errors { 0 };
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            try {
                auto c = m_db->connect();
                std::mt19937 rng(static_cast<unsigned>(t) * 7919U + 1U);
                static const char* const states[][2] = { { "processing", "NULL" }, { "succeeded", "NULL" },
                    { "retryable_failed", "'retryable'" }, { "retryable_failed", "'unknown'" },
                    { "failed", "'permanent'" }, { "failed", "'retryable'" } };
                for (int i = 0; i < 150; ++i) {
                    try {
                        pqxx::work w(*c);
                        const int n = 1 + static_cast<int>(rng() % 3);
                        for (int k = 0; k < n; ++k) {
                            const auto& s = states[rng() % 6];
                            w.exec_params(std::string("UPDATE idem.task_idempotency SET status = $1, error_class = ")
                                    + s[1] + " WHERE idempotency_key = $2",
                                s[0], "t:op:" + std::to_string(1 + rng() % 400));
                        }
                        if (rng() % 5 == 0)
                            continue; // rolled back
                        w.commit();
                        ++committed;
                    } catch (const pqxx::deadlock_detected&) {
                    }
                }
            } catch (const std::exception&) {
                ++errors;
            }
        });
    }
    for (auto& th : threads)
        th.join();
    QCOMPARE(errors.load(), 0);
    QVERIFY(committed.load() > 500);
    expectExact("after 8 concurrent writers");
}

void TestGauges::figuresEqualTheCountedForm()
{
    // The same rows read through both forms of statsSql(): unfiltered (gauges) and filtered by the
    // only tenant there is (every unfinished row counted). Every figure is the same.
    exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, error_class, lease_until, "
         "created_at)"
         " SELECT 'solo:op:' || i, 'v1:' || repeat('d', 64),"
         "        (ARRAY['processing','succeeded','retryable_failed','failed'])[1 + i % 4],"
         "        CASE i % 4 WHEN 2 THEN (ARRAY['retryable','unknown'])[1 + (i / 4) % 2]"
         "                   WHEN 3 THEN (ARRAY['permanent','unknown', NULL])[1 + i % 3] END,"
         "        CASE WHEN i % 4 = 0 THEN now() + (i % 3 - 1) * interval '10 minutes' END,"
         "        now() - i * interval '1 minute'"
         "   FROM generate_series(1, 500) i");
    idem::StatsOptions all;
    idem::StatsOptions solo;
    solo.tenant = "solo";
    const auto a = idem::readStats(*m_conn, idem::SchemaName(), all);
    const auto b = idem::readStats(*m_conn, idem::SchemaName(), solo);
    QVERIFY(a.processing > 0 && a.expiredLeases > 0 && a.uncertain > 0 && a.failedExhausted > 0);
    QVERIFY(a.longUnfinished > 0 && a.longUnfinished < 375);
    QCOMPARE(a.processing, b.processing);
    QCOMPARE(a.expiredLeases, b.expiredLeases);
    QCOMPARE(a.retryableFailed, b.retryableFailed);
    QCOMPARE(a.uncertain, b.uncertain);
    QCOMPARE(a.failedPermanent, b.failedPermanent);
    QCOMPARE(a.failedExhausted, b.failedExhausted);
    QCOMPARE(a.longUnfinished, b.longUnfinished);
    QVERIFY(a.oldestProcessingAgeSeconds && b.oldestProcessingAgeSeconds);
    QVERIFY(std::abs(*a.oldestProcessingAgeSeconds - *b.oldestProcessingAgeSeconds) < 5.0);
    QCOMPARE(value("SELECT count(*) FROM idem.task_idempotency WHERE status = 'processing' AND lease_until > now()"),
        std::to_string(a.processing));
}

void TestGauges::checkFindsAndRecountRepairs()
{
    exec(insertHead + row("t:op:1", "processing", "") + "," + row("t:op:2", "failed", "permanent"));
    const QString dsn = QString::fromStdString(m_db->dsn());
    auto run = idem::test::runProgram(QStringLiteral(IDEMCTL_PATH),
        { QStringLiteral("stats"), QStringLiteral("--check"), QStringLiteral("--dsn"), dsn });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.contains(QLatin1String("gauges match the rows")), qPrintable(run.out));

    // What a disabled trigger would leave behind: rows the gauges never saw.
    exec("ALTER TABLE idem.task_idempotency DISABLE TRIGGER task_idempotency_gauges_insert; " + insertHead
        + row("t:op:3", "processing", "") + "; ALTER TABLE idem.task_idempotency ENABLE TRIGGER "
        + "task_idempotency_gauges_insert");
    run = idem::test::runProgram(QStringLiteral(IDEMCTL_PATH),
        { QStringLiteral("stats"), QStringLiteral("--check"), QStringLiteral("--json"), QStringLiteral("--dsn"), dsn });
    QVERIFY2(run.exitCode == 1, qPrintable(idem::test::describe(run)));
    const auto j = nlohmann::json::parse(run.out.toStdString());
    QCOMPARE(j["ok"].get<bool>(), false);
    QCOMPARE(j["processing"]["gauge"].get<int>(), 1);
    QCOMPARE(j["processing"]["counted"].get<int>(), 2);
    QCOMPARE(j["failed_permanent"]["ok"].get<bool>(), true);

    exec("SELECT idem.idem_gauges_recount()");
    expectExact("after the recount");
    run = idem::test::runProgram(QStringLiteral(IDEMCTL_PATH),
        { QStringLiteral("stats"), QStringLiteral("--check"), QStringLiteral("--dsn"), dsn });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
}

void TestGauges::rolesNeedNoGrantOnTheGauges()
{
    // Migrate with roles, then a worker changes rows (the triggers write the gauges with their
    // owner's rights), a reader reads them and can change nothing, an operator may recount.
    idem::migrate(*m_conn, { idem::SchemaName(), true });
    const std::string suffix = "tst_gauges"; // cluster-wide roles, reused by later runs
    idem::test::createLoginRole("gw_" + suffix, "pw", "idem_worker");
    idem::test::createLoginRole("gr_" + suffix, "pw", "idem_reader");
    idem::test::createLoginRole("go_" + suffix, "pw", "idem_operator");
    const auto as = [&](const std::string& role) {
        return pqxx::connection(idem::test::dsnWith(m_db->dsn(), { { "user", role }, { "password", "pw" } }));
    };
    {
        auto c = as("gw_" + suffix);
        pqxx::work w(c);
        w.exec(insertHead + row("t:op:w", "processing", ""));
        w.exec("UPDATE idem.task_idempotency SET status = 'failed', error_class = 'permanent'");
        w.commit();
    }
    expectExact("worker's writes");
    QCOMPARE(value("SELECT sum(failed_permanent) FROM idem.task_idempotency_gauges"), std::string("1"));
    {
        auto c = as("gr_" + suffix);
        QCOMPARE(pqxx::nontransaction(c)
                     .exec("SELECT sum(failed_permanent) FROM idem.task_idempotency_gauges")
                     .at(0)
                     .at(0)
                     .as<int>(),
            1);
        QVERIFY_THROWS_EXCEPTION(pqxx::insufficient_privilege,
            pqxx::nontransaction(c).exec("UPDATE idem.task_idempotency_gauges SET processing = 5"));
        QVERIFY_THROWS_EXCEPTION(
            pqxx::insufficient_privilege, pqxx::nontransaction(c).exec("SELECT idem.idem_gauges_recount()"));
        auto w = as("gw_" + suffix);
        QVERIFY_THROWS_EXCEPTION(pqxx::insufficient_privilege,
            pqxx::nontransaction(w).exec("UPDATE idem.task_idempotency_gauges SET processing = 5"));
    }
    {
        auto c = as("go_" + suffix);
        pqxx::nontransaction(c).exec("SELECT idem.idem_gauges_recount()");
    }
    expectExact("operator's recount");
}

void TestGauges::unfilteredTickIsPlannedOnce()
{
    exec(insertHead + row("t:op:1", "processing", "", 90) + "," + row("t:op:2", "failed", "permanent", 5) + ","
        + row("t:op:3", "retryable_failed", "unknown", 120));
    idem::DashboardOptions options;
    options.historyMinutes = 30;
    options.attemptsHistogram = true;
    idem::prepareDashboardConnection(*m_conn, 5000, true);
    for (int i = 0; i < 8; ++i) {
        const auto tick = idem::readDashboard(*m_conn, idem::SchemaName(), options);
        // The rewritten statement answers what the filtered form and readStats answer.
        QCOMPARE(tick.stats.expiredLeases, 1);
        QCOMPARE(tick.stats.failedPermanent, 1);
        QCOMPARE(tick.stats.uncertain, 1);
        QCOMPARE(tick.stats.longUnfinished, 2);
        QVERIFY(tick.attempts.has_value());
    }
    options.stats.tenant = "t";
    const auto filtered = idem::readDashboard(*m_conn, idem::SchemaName(), options);
    QCOMPARE(filtered.stats.longUnfinished, 2);
    QCOMPARE(filtered.stats.uncertain, 1);
    // One statement on the connection, planned generically once the server chose to (after
    // five custom plans at most) and reused since.
    pqxx::nontransaction n(*m_conn);
    const auto r = n.exec("SELECT count(*), max(generic_plans), max(custom_plans) FROM pg_prepared_statements"
                          " WHERE name LIKE 'idem_tick_%'");
    QCOMPARE(r.at(0)[0].as<int>(), 1);
    QVERIFY2(r.at(0)[1].as<int>() >= 3, r.at(0)[1].c_str());
    QVERIFY2(r.at(0)[2].as<int>() <= 5, r.at(0)[2].c_str());
}

QTEST_GUILESS_MAIN(TestGauges)
#include "tst_gauges.moc"
