#include <QtTest>

#include <latch>
#include <mutex>
#include <pqxx/pqxx>
#include <thread>

#include "core/counters.h"
#include "schema/migrate.h"
#include "core/taskstore.h"
#include "tests/support/taskrows.h"

using namespace std::chrono_literals;
using idem::test::operator""_b;
using idem::test::digestOf;
using idem::test::scalar;
using idem::test::storeOptions;

// Outcome counters as the console reads them from idem_counters: exact per-minute sums, safe
// under concurrent flushes, and nothing lost while the database is away.
class TestCounters : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void flushWritesPerMinuteRows();
    void concurrentFlushesAreExact();
    void brokenConnectionKeepsCounts();
    void storeCountsEveryOutcome();
    void flusherWritesInBackground();
    void flusherKeepsCountsWhileDatabaseAway();
    void olderSchemaKeepsEveryOtherCount();

private:
    // outcome=n,... summed over minutes, for one tenant (and operation).
    QByteArray sums(const std::string& tenant, const std::string& operation = "%");

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<pqxx::connection> m_admin;
    idem::SchemaName m_schema;
};

QByteArray TestCounters::sums(const std::string& tenant, const std::string& operation)
{
    return scalar(*m_admin,
        "SELECT coalesce(string_agg(outcome || '=' || n, ',' ORDER BY outcome), '') FROM ("
        "  SELECT outcome, sum(n) AS n FROM idem.idem_counters"
        "   WHERE tenant = $1 AND operation LIKE $2 GROUP BY outcome) s",
        tenant, operation);
}

void TestCounters::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = idem::test::migratedDatabase("counters");
    m_conn = m_db->connect();
    m_admin = m_db->connect();
}

void TestCounters::cleanupTestCase()
{
    m_conn.reset();
    m_admin.reset();
    m_db.reset();
}

void TestCounters::flushWritesPerMinuteRows()
{
    using namespace idem::outcome;
    idem::OutcomeCounters counters;
    QCOMPARE(counters.flush(*m_conn, m_schema), std::size_t(0)); // nothing pending: no statement

    const auto minuteBefore = scalar(*m_admin, "SELECT date_trunc('minute', clock_timestamp())::text");
    for (int i = 0; i < 3; ++i)
        counters.add("flush-a", "charge", Acquired);
    counters.add("flush-a", "charge", Replayed, 5);
    counters.add("flush-b", "refund", Conflict);
    const auto pending = counters.pendingRows();
    QVERIFY(pending >= 3); // more only if a minute boundary fell between the adds
    QCOMPARE(counters.flush(*m_conn, m_schema), pending);
    QCOMPARE(counters.pendingRows(), std::size_t(0));
    const auto minuteAfter = scalar(*m_admin, "SELECT date_trunc('minute', clock_timestamp())::text");

    QCOMPARE(sums("flush-a"), "acquired=3,replayed=5"_b);
    QCOMPARE(sums("flush-b", "refund"), "conflict=1"_b);
    QCOMPARE(sums("flush-b", "charge"), ""_b);
    // Buckets are whole minutes of when the outcomes happened.
    QCOMPARE(scalar(*m_admin,
                 "SELECT bool_and(bucket = date_trunc('minute', bucket) AND bucket BETWEEN $1::timestamptz"
                 " AND $2::timestamptz)::text FROM idem.idem_counters WHERE tenant LIKE 'flush-%'",
                 minuteBefore.toStdString(), minuteAfter.toStdString()),
        "true"_b);

    // A second flush adds to the same rows.
    counters.add("flush-a", "charge", Acquired, 2);
    QVERIFY(counters.flush(*m_conn, m_schema) >= 1);
    QCOMPARE(sums("flush-a"), "acquired=5,replayed=5"_b);
    if (minuteBefore == minuteAfter)
        QCOMPARE(scalar(*m_admin, "SELECT count(*)::text FROM idem.idem_counters WHERE tenant = 'flush-a'"), "2"_b);
}

void TestCounters::concurrentFlushesAreExact()
{
    // Two workers flush overlapping counter rows at the same moments, each its own batch and a
    // batch they share. Rows locked in different orders would deadlock (40P01, thrown here).
    constexpr int threads = 2;
    constexpr int rounds = 25;
    constexpr int tenants = 20;
    const char* const outcomes[] = { idem::outcome::Acquired, idem::outcome::Replayed, idem::outcome::InProgress,
        idem::outcome::Conflict, idem::outcome::Succeeded, idem::outcome::StaleToken };
    idem::OutcomeCounters shared;
    std::latch start(threads);
    std::mutex errorsMutex;
    QStringList errors;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            try {
                auto conn = m_db->connect();
                idem::OutcomeCounters own;
                start.arrive_and_wait();
                for (int r = 0; r < rounds; ++r) {
                    // Opposite orders of adding: the flush must not depend on it.
                    for (int i = 0; i < tenants; ++i) {
                        const int tenant = t == 0 ? i : tenants - 1 - i;
                        for (const char* what : outcomes) {
                            own.add("conc-" + std::to_string(tenant), "op", what);
                            shared.add("conc-" + std::to_string(tenant), "op", what);
                        }
                    }
                    own.flush(*conn, m_schema);
                    shared.flush(*conn, m_schema);
                }
            } catch (const std::exception& e) {
                std::lock_guard lock(errorsMutex);
                errors << QString::fromUtf8(e.what());
            }
        });
    }
    for (auto& w : workers)
        w.join();
    QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QLatin1Char('\n'))));
    QCOMPARE(shared.pendingRows(), std::size_t(0));

    const auto expected = QByteArray::number(threads * rounds * 2);
    QCOMPARE(scalar(*m_admin,
                 "SELECT count(*)::text || ' ' || min(s)::text || ' ' || max(s)::text FROM ("
                 "  SELECT sum(n) AS s FROM idem.idem_counters WHERE tenant LIKE 'conc-%' GROUP BY tenant, outcome) x"),
        QByteArray(QByteArray::number(tenants * 6) + ' ' + expected + ' ' + expected));
}

void TestCounters::brokenConnectionKeepsCounts()
{
    idem::OutcomeCounters counters;
    counters.add("broken", "charge", idem::outcome::Succeeded, 7);
    counters.add("broken", "charge", idem::outcome::FailedUnknown, 2);
    auto doomed = m_db->connect();
    QVERIFY(idem::test::terminateBackend(*m_admin, doomed->backendpid()));

    bool threw = false;
    try {
        counters.flush(*doomed, m_schema);
    } catch (const std::exception&) {
        threw = true;
    }
    QVERIFY(threw);
    QCOMPARE(counters.pendingRows(), std::size_t(2));
    QCOMPARE(sums("broken"), ""_b);

    // Counted while the database was away, then written together.
    counters.add("broken", "charge", idem::outcome::Succeeded, 1);
    QVERIFY(counters.flush(*m_conn, m_schema) >= 2);
    QCOMPARE(counters.pendingRows(), std::size_t(0));
    QCOMPARE(sums("broken"), "failed_unknown=2,succeeded=8"_b);
}

void TestCounters::storeCountsEveryOutcome()
{
    idem::OutcomeCounters counters;
    idem::TaskStore store(*m_conn, storeOptions(2000ms), &counters);
    idem::TaskStore shortLease(*m_conn, storeOptions(300ms), &counters);
    idem::TaskStore oneAttempt(*m_conn, storeOptions(300ms, 1), &counters);
    const auto key = [](int n) { return idem::TaskKey("cnt-store", "charge", "k" + std::to_string(n)); };

    // 1: acquired, in_progress, conflict, succeeded (once: complete itself counts nothing), replayed
    const auto c1 = store.claim(key(1), digestOf('a'));
    store.claim(key(1), digestOf('a'));
    store.claim(key(1), digestOf('b'));
    {
        pqxx::work tx(*m_conn);
        store.fence(tx, key(1), c1.token);
        store.complete(tx, key(1), c1.token, "{}");
        tx.commit();
    }
    store.countSucceeded(key(1)); // after the commit, as the caller of complete() does
    store.claim(key(1), digestOf('a'));

    // 2: acquired, retry_later (the delay set through SQL, uncounted)
    const auto c2 = store.claim(key(2), digestOf('a'));
    {
        pqxx::work w(*m_conn);
        w.exec_params("SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'x', 60000)", key(2).str(), c2.token);
        w.commit();
    }
    QCOMPARE(store.claim(key(2), digestOf('a')).decision, idem::Decision::RetryLater);

    // 3: acquired, failed_retryable, reacquired_retry, failed_unknown + retry_failed (attempt 2),
    //    reacquired_retry, failed_permanent + retry_failed (attempt 3), rejected_failed, stale_token
    auto c3 = store.claim(key(3), digestOf('a'));
    store.fail(key(3), c3.token, c3.attempts, idem::FailureClass::Retryable, "x");
    std::this_thread::sleep_for(2ms);
    c3 = store.claim(key(3), digestOf('a'));
    store.fail(key(3), c3.token, c3.attempts, idem::FailureClass::Unknown, "x");
    std::this_thread::sleep_for(2ms);
    c3 = store.claim(key(3), digestOf('a'));
    store.fail(key(3), c3.token, c3.attempts, idem::FailureClass::Permanent, "x");
    QCOMPARE(store.claim(key(3), digestOf('a')).decision, idem::Decision::Failed);
    QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, store.heartbeat(key(3), c3.token));

    // 4: acquired, then exhausted by a claim after the only attempt's lease ran out
    oneAttempt.claim(key(4), digestOf('a'));
    // 5: acquired, reacquired_lease, stale_token from the old executor's fence
    const auto c5 = shortLease.claim(key(5), digestOf('a'));
    std::this_thread::sleep_for(350ms);
    QCOMPARE(oneAttempt.claim(key(4), digestOf('a')).decision, idem::Decision::Failed);
    QCOMPARE(shortLease.claim(key(5), digestOf('a')).decision, idem::Decision::Reacquired);
    {
        pqxx::work tx(*m_conn);
        QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, shortLease.fence(tx, key(5), c5.token));
    }
    // 6: acquired, failed_retryable and exhausted in one fail (attempt 1: no failed retry)
    const auto c6 = oneAttempt.claim(key(6), digestOf('a'));
    QVERIFY(oneAttempt.fail(key(6), c6.token, c6.attempts, idem::FailureClass::Retryable, "x").exhausted);

    QCOMPARE(sums("cnt-store"), ""_b); // nothing written on the claim path
    counters.flush(*m_conn, m_schema);
    QCOMPARE(sums("cnt-store"),
        "acquired=6,conflict=1,exhausted=2,failed_permanent=1,failed_retryable=2,failed_unknown=1,"
        "in_progress=1,reacquired_lease=1,reacquired_retry=2,rejected_failed=1,replayed=1,retry_failed=2,"
        "retry_later=1,stale_token=2,succeeded=1"_b);
}

void TestCounters::flusherWritesInBackground()
{
    idem::OutcomeCounters counters;
    idem::CounterFlusher flusher(m_db->dsn(), m_schema, counters, 50ms);
    counters.add("bg", "charge", idem::outcome::Acquired, 3);
    QVERIFY(idem::test::waitUntil([&] { return sums("bg") == "acquired=3"_b; }, 30s));
    counters.add("bg", "charge", idem::outcome::Acquired, 1);
    QVERIFY(flusher.flushNow());
    QCOMPARE(sums("bg"), "acquired=4"_b);
}

void TestCounters::flusherKeepsCountsWhileDatabaseAway()
{
    idem::OutcomeCounters counters;
    {
        // Nothing listens on port 1.
        idem::CounterFlusher flusher("host=127.0.0.1 port=1 dbname=x connect_timeout=2", m_schema, counters, 1h);
        counters.add("away", "charge", idem::outcome::Succeeded, 4);
        QVERIFY(!flusher.flushNow());
        QCOMPARE(counters.pendingRows(), std::size_t(1));
    }
    QCOMPARE(counters.pendingRows(), std::size_t(1)); // the final flush failed too, and kept them
    counters.flush(*m_conn, m_schema);
    QCOMPARE(sums("away"), "succeeded=4"_b);
}

void TestCounters::olderSchemaKeepsEveryOtherCount()
{
    // A worker of this version flushing into a schema of version 9 (before retry_failed): there,
    // add_counters() refused a batch holding an outcome it did not know, whole, with ID003. The
    // schema is migrated, then its add_counters() put behind a stand-in that refuses retry_failed
    // as v9 did (since v14 the migrations no longer carry the functions of their time).
    const idem::SchemaName old("counters_v9");
    idem::migrate(*m_admin, { old });
    {
        pqxx::work w(*m_admin);
        w.exec("ALTER FUNCTION " + old.qualify("add_counters") + "(jsonb) RENAME TO add_counters_current");
        w.exec("CREATE FUNCTION " + old.qualify("add_counters") + "(p_batch jsonb) RETURNS integer"
               " LANGUAGE plpgsql SECURITY DEFINER SET search_path = " + old.quoted() + ", pg_temp AS $v9$"
               " BEGIN"
               "   IF EXISTS (SELECT FROM jsonb_array_elements(p_batch) e WHERE e->>'w' = 'retry_failed') THEN"
               "     RAISE EXCEPTION 'counter row out of bounds: unknown outcome retry_failed' USING ERRCODE = 'ID003';"
               "   END IF;"
               "   RETURN add_counters_current(p_batch);"
               " END $v9$");
        w.exec("GRANT EXECUTE ON FUNCTION " + old.qualify("add_counters") + "(jsonb) TO idem_worker");
        w.commit();
    }
    const auto sumsIn = [&](const std::string& table) {
        return scalar(*m_admin,
            "SELECT coalesce(string_agg(outcome || '=' || n, ',' ORDER BY outcome), '') FROM (SELECT outcome, sum(n) AS n"
            " FROM " + old.qualify(table) + " GROUP BY outcome) s");
    };
    using namespace idem::outcome;
    idem::OutcomeCounters counters;
    counters.add("old-9", "charge", FailedRetryable, 2);
    counters.add("old-9", "charge", RetryFailed, 2);
    counters.add("old-9", "charge", Acquired, 3);
    QVERIFY(counters.sendsRetryFailed());
    // Everything the schema knows lands; retry_failed is left out, now and from then on.
    QVERIFY(counters.flush(*m_conn, old) >= 2);
    QCOMPARE(sumsIn("idem_counters"), "acquired=3,failed_retryable=2"_b);
    QCOMPARE(sumsIn("idem_counters_total"), "acquired=3,failed_retryable=2"_b);
    QVERIFY(!counters.sendsRetryFailed());
    counters.add("old-9", "charge", RetryFailed);
    counters.add("old-9", "charge", Succeeded);
    counters.flush(*m_conn, old);
    QCOMPARE(sumsIn("idem_counters"), "acquired=3,failed_retryable=2,succeeded=1"_b);

    // The current schema takes it: a fresh counter object sends it there.
    idem::OutcomeCounters current;
    current.add("new-10", "charge", RetryFailed, 4);
    current.flush(*m_conn, m_schema);
    QVERIFY(current.sendsRetryFailed());
    QCOMPARE(sums("new-10"), "retry_failed=4"_b);
}

QTEST_GUILESS_MAIN(TestCounters)
#include "tst_counters.moc"
