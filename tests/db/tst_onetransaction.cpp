#include <QtTest>

#include <atomic>
#include <barrier>
#include <future>
#include <pqxx/pqxx>
#include <thread>
#include <vector>

#include "core/connection.h"
#include "core/counters.h"
#include "core/runner.h"
#include "tests/support/taskrows.h"

using namespace std::chrono_literals;
using idem::test::operator""_b;
using idem::test::bytes;
using idem::test::digestOf;
using idem::test::field;
using idem::test::scalar;
using idem::test::storeOptions;
using Kind = idem::RunOutcome::Kind;

// runTask with RunOptions::oneTransaction (issue 45 item 1): claim, the task's writes and the
// completion in one transaction. What the worker is told, what the record holds, how many
// business rows committed, and what everyone else sees while it runs.
class TestOneTransaction : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void succeedsWithOneCommit();
    void answersWithoutExecuting();
    void failureRolledBackThenRecorded_data();
    void failureRolledBackThenRecorded();
    void nothingVisibleWhileInFlight_data();
    void nothingVisibleWhileInFlight();
    void duplicateWaitsRunsOut();
    void concurrentDuplicatesOneEffect_data();
    void concurrentDuplicatesOneEffect();
    void killedMidTransactionLeavesNothing_data();
    void killedMidTransactionLeavesNothing();
    void downstreamFormRefused();

private:
    idem::TaskKey nextKey() { return m_fx.nextKey("onetx"); }
    int businessRows(const idem::TaskKey& key) { return m_fx.businessRows(key); }
    QByteArray f(const idem::TaskKey& key, const std::string& expr) { return field(*m_fx.admin, key, expr); }
    static idem::RunOptions oneTx(std::chrono::milliseconds wait = 5000ms)
    {
        idem::RunOptions o;
        o.oneTransaction = true;
        o.duplicateWait = wait;
        return o;
    }
    // A row left by an earlier attempt that failed, due for a retry now (a takeover's start).
    void plantRetryDue(const idem::TaskKey& key, int maxAttempts = 5)
    {
        idem::TaskStore other(*m_fx.other, storeOptions(2000ms, maxAttempts));
        const auto c = other.claim(key, digestOf('a'));
        QVERIFY(c.mayExecute());
        pqxx::work w(*m_fx.other);
        w.exec_params("SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'bank timeout', 1)", key.str(), c.token);
        w.commit();
        QTRY_VERIFY_WITH_TIMEOUT(f(key, "next_attempt_at <= now()") == "true"_b, 5000);
    }

    idem::test::ProtocolFixture m_fx;
};

namespace {

const std::string charged = R"({"charged": 1250})";

idem::TaskFunction insertPayment(std::function<void()> meanwhile = {})
{
    return [meanwhile](pqxx::work& tx, const idem::TaskContext& ctx) -> std::string {
        tx.exec_params(
            "INSERT INTO payments (idempotency_key, amount, by_token) VALUES ($1, 1250, $2::uuid)", ctx.idempotencyKey,
            ctx.token);
        if (meanwhile)
            meanwhile();
        return charged;
    };
}

} // namespace

void TestOneTransaction::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_fx.open("onetx");
}

void TestOneTransaction::cleanupTestCase() { m_fx.close(); }

// A new key: one commit holds the claim, the business row and the success; the counters say one
// acquisition and one success.
void TestOneTransaction::succeedsWithOneCommit()
{
    idem::OutcomeCounters counters;
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms), &counters);
    const auto key = nextKey();
    std::string taskNow;
    const auto out = idem::runTask(store, key, digestOf('a'),
        [&](pqxx::work& tx, const idem::TaskContext& ctx) {
            taskNow = tx.exec("SELECT now()::text")[0][0].as<std::string>();
            return insertPayment()(tx, ctx);
        },
        oneTx());
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), "succeeded"_b);
    QCOMPARE(bytes(out.resultJson), bytes(charged));
    QCOMPARE(out.claim.attempts, 1);
    QCOMPARE(businessRows(key), 1);
    // One transaction wrote both rows (the same xmin), and it is the one that claimed the key: the
    // claim's now() is the task's (two steps claim in a transaction of their own, earlier).
    QCOMPARE(f(key, "t.xmin::text = (SELECT p.xmin::text FROM payments p WHERE p.idempotency_key = t.idempotency_key)"),
        "true"_b);
    QCOMPARE(scalar(*m_fx.admin,
                 "SELECT (created_at = $2::timestamptz AND attempt_started_at = created_at)::text"
                 " FROM idem.task_idempotency WHERE idempotency_key = $1",
                 key.str(), taskNow),
        "true"_b);
    QCOMPARE(f(key, "status || ' ' || attempts || ' ' || result_json::text"), R"(succeeded 1 {"charged": 1250})"_b);
    QCOMPARE(f(key, "owner_token IS NULL AND lease_until IS NULL"), "true"_b);
    // The payment was written by the token that completed it.
    QCOMPARE(scalar(*m_fx.admin, "SELECT by_token::text FROM payments WHERE idempotency_key = $1", key.str()),
        bytes(out.claim.token));
    counters.flush(*m_fx.admin, idem::SchemaName("idem"));
    QCOMPARE(scalar(*m_fx.admin,
                 "SELECT string_agg(outcome || '=' || n, ',' ORDER BY outcome) FROM (SELECT outcome, sum(n) AS n"
                 " FROM idem.idem_counters WHERE tenant = 'onetx' GROUP BY outcome) c"),
        "acquired=1,succeeded=1"_b);
}

// Every answer that does not execute is claim()'s, and what claim() records for it stays.
void TestOneTransaction::answersWithoutExecuting()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms, 1));
    int calls = 0;
    const auto counting = insertPayment([&] { ++calls; });

    const auto done = nextKey();
    QCOMPARE(idem::runTask(store, done, digestOf('a'), counting, oneTx()).kind, Kind::Succeeded);
    const auto replay = idem::runTask(store, done, digestOf('a'), counting, oneTx());
    QCOMPARE(QByteArray(idem::runOutcomeName(replay.kind)), "replayed"_b);
    QCOMPARE(bytes(replay.resultJson), R"({"charged": 1250})"_b);
    const auto conflict = idem::runTask(store, done, digestOf('b'), counting, oneTx());
    QCOMPARE(QByteArray(idem::runOutcomeName(conflict.kind)), "conflict"_b);
    // The conflict's record committed (the claim's transaction was not simply rolled back).
    QCOMPARE(scalar(*m_fx.admin, "SELECT n::text FROM idem.task_idempotency_conflicts WHERE idempotency_key = $1",
                 done.str()),
        "1"_b);

    // A live lease of a two-step executor: in progress at once, no wait.
    const auto held = nextKey();
    idem::TaskStore other(*m_fx.other, storeOptions(60000ms));
    QVERIFY(other.claim(held, digestOf('a')).mayExecute());
    QElapsedTimer clock;
    clock.start();
    const auto busy = idem::runTask(store, held, digestOf('a'), counting, oneTx(5000ms));
    QCOMPARE(QByteArray(idem::runOutcomeName(busy.kind)), "in_progress"_b);
    QCOMPARE(bytes(busy.claim.detail), "lease_live"_b);
    QVERIFY2(clock.elapsed() < 4000, "a live lease is an answer, not something to wait for");

    // An expired lease with attempts exhausted: claim() marks it failed, and that stands.
    const auto stale = nextKey();
    idem::TaskStore shortLease(*m_fx.other, storeOptions(1ms, 1));
    QVERIFY(shortLease.claim(stale, digestOf('a')).mayExecute());
    QTRY_VERIFY_WITH_TIMEOUT(f(stale, "lease_until <= now()") == "true"_b, 5000);
    const auto exhausted = idem::runTask(store, stale, digestOf('a'), counting, oneTx());
    QCOMPARE(QByteArray(idem::runOutcomeName(exhausted.kind)), "failed"_b);
    QCOMPARE(f(stale, "status || ' ' || error_class"), "failed unknown"_b);

    QCOMPARE(calls, 1);
    QCOMPARE(businessRows(done), 1);
    QCOMPARE(businessRows(held) + businessRows(stale), 0);
}

void TestOneTransaction::failureRolledBackThenRecorded_data()
{
    QTest::addColumn<bool>("takeover"); // the key was retry-due before (else new)
    QTest::addColumn<int>("failureClass");
    QTest::addColumn<int>("maxAttempts");
    QTest::addColumn<QByteArray>("kind");
    QTest::addColumn<QByteArray>("row"); // status, attempts, error_class, errors recorded
    QTest::addRow("new key, retryable") << false << int(idem::FailureClass::Retryable) << 5 << "will_retry"_b
                                        << "retryable_failed 1 retryable 1"_b;
    QTest::addRow("new key, permanent") << false << int(idem::FailureClass::Permanent) << 5 << "failed"_b
                                        << "failed 1 permanent 1"_b;
    QTest::addRow("takeover, retryable") << true << int(idem::FailureClass::Retryable) << 5 << "will_retry"_b
                                         << "retryable_failed 2 retryable 2"_b;
    QTest::addRow("takeover, last attempt") << true << int(idem::FailureClass::Retryable) << 2 << "failed"_b
                                            << "failed 2 retryable 2"_b;
}

// A task that throws rolls everything back (its business row too); the failure is then recorded
// on its own and counts the attempt, so max_attempts holds as in the two-step run.
void TestOneTransaction::failureRolledBackThenRecorded()
{
    QFETCH(bool, takeover);
    QFETCH(int, failureClass);
    QFETCH(int, maxAttempts);
    QFETCH(QByteArray, kind);
    QFETCH(QByteArray, row);
    const auto key = nextKey();
    if (takeover)
        plantRetryDue(key, maxAttempts);
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms, maxAttempts));
    const auto cls = static_cast<idem::FailureClass>(failureClass);
    const auto out = idem::runTask(store, key, digestOf('a'), insertPayment([cls] {
        throw idem::TaskFailure(cls, "ledger refused");
    }),
        oneTx());
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), kind);
    QCOMPARE(bytes(out.error), "ledger refused"_b);
    QCOMPARE(businessRows(key), 0);
    QCOMPARE(f(key, "status || ' ' || attempts || ' ' || error_class || ' ' || jsonb_array_length(errors)"), row);
    QCOMPARE(f(key, "error_message"), "ledger refused"_b);
}

void TestOneTransaction::nothingVisibleWhileInFlight_data()
{
    QTest::addColumn<bool>("takeover");
    QTest::addRow("new key") << false;
    QTest::addRow("takeover of a retry") << true;
}

// While the task runs, the key is absent (or as the last attempt left it) to every other
// reader, the console included; a duplicate waits and then replays the committed result.
void TestOneTransaction::nothingVisibleWhileInFlight()
{
    QFETCH(bool, takeover);
    const auto key = nextKey();
    if (takeover)
        plantRetryDue(key);
    const QByteArray before = idem::test::rowJson(*m_fx.admin, key);
    std::promise<void> inTask, release;
    auto released = release.get_future().share();
    auto first = std::async(std::launch::async, [&] {
        auto conn = m_fx.db->connect();
        idem::TaskStore store(*conn, storeOptions(2000ms));
        return idem::runTask(store, key, digestOf('a'), insertPayment([&] {
            inTask.set_value();
            released.wait();
        }),
            oneTx());
    });
    inTask.get_future().wait();
    QCOMPARE(idem::test::rowJson(*m_fx.admin, key), before);
    QCOMPARE(businessRows(key), 0);

    // A duplicate behind it waits (it is still waiting 300 ms later), then replays.
    auto second = std::async(std::launch::async, [&] {
        auto conn = m_fx.db->connect();
        idem::TaskStore store(*conn, storeOptions(2000ms));
        return idem::runTask(store, key, digestOf('a'), insertPayment(), oneTx(20000ms));
    });
    QCOMPARE(second.wait_for(300ms), std::future_status::timeout);
    release.set_value();
    const auto a = first.get();
    const auto b = second.get();
    QCOMPARE(QByteArray(idem::runOutcomeName(a.kind)), "succeeded"_b);
    QCOMPARE(QByteArray(idem::runOutcomeName(b.kind)), "replayed"_b);
    QCOMPARE(bytes(b.resultJson), R"({"charged": 1250})"_b);
    QCOMPARE(businessRows(key), 1);
    QCOMPARE(f(key, "status || ' ' || attempts"), takeover ? "succeeded 2"_b : "succeeded 1"_b);
}

// A duplicate waits no longer than its bound, then answers in progress; nothing of it is written.
void TestOneTransaction::duplicateWaitsRunsOut()
{
    const auto key = nextKey();
    std::promise<void> inTask, release;
    auto released = release.get_future().share();
    auto first = std::async(std::launch::async, [&] {
        auto conn = m_fx.db->connect();
        idem::TaskStore store(*conn, storeOptions(2000ms));
        return idem::runTask(store, key, digestOf('a'), insertPayment([&] {
            inTask.set_value();
            released.wait();
        }),
            oneTx());
    });
    inTask.get_future().wait();
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms));
    QElapsedTimer clock;
    clock.start();
    const auto out = idem::runTask(store, key, digestOf('a'), insertPayment(), oneTx(200ms));
    const auto waited = clock.elapsed();
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), "in_progress"_b);
    QCOMPARE(bytes(out.claim.detail), "wait_timeout"_b);
    QVERIFY(out.claim.retryAfter > 0ms);
    QVERIFY2(waited >= 150 && waited < 10000, qPrintable(QString::number(waited)));
    // The connection is usable again (its aborted transaction was rolled back).
    QCOMPARE(scalar(*m_fx.conn, "SELECT 1"), "1"_b);
    release.set_value();
    QCOMPARE(first.get().kind, Kind::Succeeded);
    QCOMPARE(businessRows(key), 1);
}

void TestOneTransaction::concurrentDuplicatesOneEffect_data()
{
    QTest::addColumn<bool>("takeover");
    QTest::addRow("new key") << false;
    QTest::addRow("takeover of a retry") << true;
}

// Eight runs of one key released together by a barrier: exactly one executes, every other one
// replays its result (the wait outlasts the run).
void TestOneTransaction::concurrentDuplicatesOneEffect()
{
    QFETCH(bool, takeover);
    const auto key = nextKey();
    if (takeover)
        plantRetryDue(key);
    constexpr int n = 8;
    std::vector<std::unique_ptr<pqxx::connection>> conns;
    for (int i = 0; i < n; ++i)
        conns.push_back(m_fx.db->connect());
    std::barrier start(n);
    std::vector<std::future<idem::RunOutcome>> runs;
    for (int i = 0; i < n; ++i)
        runs.push_back(std::async(std::launch::async, [&, i] {
            idem::TaskStore store(*conns[i], storeOptions(2000ms));
            start.arrive_and_wait();
            return idem::runTask(store, key, digestOf('a'), insertPayment([] { std::this_thread::sleep_for(50ms); }),
                oneTx(20000ms));
        }));
    int succeeded = 0, replayed = 0;
    for (auto& r : runs) {
        const auto out = r.get();
        succeeded += out.kind == Kind::Succeeded;
        replayed += out.kind == Kind::Replayed;
        QVERIFY2(out.kind == Kind::Succeeded || out.kind == Kind::Replayed, idem::runOutcomeName(out.kind));
    }
    QCOMPARE(succeeded, 1);
    QCOMPARE(replayed, n - 1);
    QCOMPARE(businessRows(key), 1);
    QCOMPARE(f(key, "status"), "succeeded"_b);
}

void TestOneTransaction::killedMidTransactionLeavesNothing_data()
{
    QTest::addColumn<bool>("takeover");
    QTest::addRow("new key") << false;
    QTest::addRow("takeover of a retry") << true;
}

// The executor's backend is terminated inside the task (as a crash of the worker or a lost
// connection ends it): nothing of the run remains, no lease to wait out, and the next run
// executes at once.
void TestOneTransaction::killedMidTransactionLeavesNothing()
{
    QFETCH(bool, takeover);
    const auto key = nextKey();
    if (takeover)
        plantRetryDue(key);
    const QByteArray before = idem::test::rowJson(*m_fx.admin, key);
    auto conn = m_fx.db->connect();
    const int pid = conn->backendpid();
    idem::TaskStore store(*conn, storeOptions(60000ms));
    QVERIFY_THROWS_EXCEPTION(idem::DatabaseUnavailable,
        idem::runTask(store, key, digestOf('a'), insertPayment([&] {
            pqxx::nontransaction(*m_fx.admin).exec_params("SELECT pg_terminate_backend($1)", pid);
            std::this_thread::sleep_for(100ms);
            throw std::runtime_error("unreachable: the next statement finds the connection gone");
        }),
            oneTx()));
    QCOMPARE(idem::test::rowJson(*m_fx.admin, key), before);
    QCOMPARE(businessRows(key), 0);
    idem::TaskStore next(*m_fx.other, storeOptions(60000ms));
    const auto out = idem::runTask(next, key, digestOf('a'), insertPayment(), oneTx());
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), "succeeded"_b);
    QCOMPARE(businessRows(key), 1);
}

void TestOneTransaction::downstreamFormRefused()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms));
    const auto key = nextKey();
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
        idem::runTask(
            store, key, digestOf('a'), [](const idem::TaskContext&) { return std::string("ok"); },
            [](pqxx::work&, const idem::TaskContext&, const std::string& a) { return a; }, oneTx()));
    QCOMPARE(f(key, "status"), "<no row>"_b);
}

QTEST_GUILESS_MAIN(TestOneTransaction)
#include "tst_onetransaction.moc"
