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

    void succeedsWithOneCommit_data();
    void succeedsWithOneCommit();
    void answersWithoutExecuting_data();
    void answersWithoutExecuting();
    void failureRolledBackThenRecorded_data();
    void failureRolledBackThenRecorded();
    void nothingVisibleWhileInFlight_data();
    void nothingVisibleWhileInFlight();
    void duplicateWaitsRunsOut_data();
    void duplicateWaitsRunsOut();
    void concurrentDuplicatesOneEffect_data();
    void concurrentDuplicatesOneEffect();
    void killedMidTransactionLeavesNothing_data();
    void killedMidTransactionLeavesNothing();
    void downstreamFormRefused();
    // Record at commit (RunOptions::recordAtCommit).
    void recordFirstToRecordWins();
    void recordDuplicateReplaysBehindLiveRecord_data();
    void recordDuplicateReplaysBehindLiveRecord();
    void recordBusinessCollisionReplays();
    void recordBusinessCollisionOfAnotherKeyFails();
    void recordPauseCommittedMidFlight();
    void recordNotBesideOneTransaction();

private:
    idem::TaskKey nextKey() { return m_fx.nextKey("onetx"); }
    int businessRows(const idem::TaskKey& key) { return m_fx.businessRows(key); }
    QByteArray f(const idem::TaskKey& key, const std::string& expr) { return field(*m_fx.admin, key, expr); }
    // The mode of the data row: one transaction, or (column "record") its record-at-commit form,
    // with the read before the task unless the column "checkFirst" says otherwise.
    static idem::RunOptions oneTx(std::chrono::milliseconds wait = 5000ms)
    {
        idem::RunOptions o;
        const bool record = QTest::currentDataTag() && std::string(QTest::currentDataTag()).find("record")
            != std::string::npos;
        o.oneTransaction = !record;
        o.recordAtCommit = record;
        o.checkFirst = !QTest::currentDataTag() || std::string(QTest::currentDataTag()).find("no check first")
            == std::string::npos;
        o.duplicateWait = wait;
        return o;
    }
    static idem::RunOptions recordAtCommit(std::chrono::milliseconds wait = 5000ms, bool checkFirst = true)
    {
        idem::RunOptions o;
        o.recordAtCommit = true;
        o.checkFirst = checkFirst;
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
            "INSERT INTO payments (idempotency_key, amount, by_token) VALUES ($1, 1250, NULLIF($2, '')::uuid)",
            ctx.idempotencyKey,
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

void TestOneTransaction::succeedsWithOneCommit_data()
{
    QTest::addColumn<int>("unused");
    QTest::addRow("one transaction") << 0;
    QTest::addRow("record at commit") << 0;
}

// A new key: one commit holds the claim, the business row and the success; the counters say one
// acquisition and one success. Record at commit: the same, with no token at all.
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
        out.claim.token.empty() ? "<null>"_b : bytes(out.claim.token));
    QCOMPARE(out.claim.token.empty(), oneTx().recordAtCommit);
    pqxx::nontransaction(*m_fx.admin).exec("DELETE FROM idem.idem_counters WHERE tenant = 'onetx'");
    counters.flush(*m_fx.admin, idem::SchemaName("idem"));
    QCOMPARE(scalar(*m_fx.admin,
                 "SELECT string_agg(outcome || '=' || n, ',' ORDER BY outcome) FROM (SELECT outcome, sum(n) AS n"
                 " FROM idem.idem_counters WHERE tenant = 'onetx' GROUP BY outcome) c"),
        "acquired=1,succeeded=1"_b);
}

void TestOneTransaction::answersWithoutExecuting_data()
{
    QTest::addColumn<int>("unused");
    QTest::addRow("one transaction") << 0;
    QTest::addRow("record at commit") << 0;
}

// Every answer that does not execute is claim()'s, and what claim() records for it stays.
// Record at commit: the read before the task gives them (idem_peek_local), with the same writes.
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
    for (const char* mode : { "", ", record at commit" }) {
        QTest::addRow("new key, retryable%s", mode) << false << int(idem::FailureClass::Retryable) << 5
                                                    << "will_retry"_b << "retryable_failed 1 retryable 1"_b;
        QTest::addRow("new key, permanent%s", mode)
            << false << int(idem::FailureClass::Permanent) << 5 << "failed"_b << "failed 1 permanent 1"_b;
        QTest::addRow("takeover, retryable%s", mode) << true << int(idem::FailureClass::Retryable) << 5
                                                     << "will_retry"_b << "retryable_failed 2 retryable 2"_b;
        QTest::addRow("takeover, last attempt%s", mode)
            << true << int(idem::FailureClass::Retryable) << 2 << "failed"_b << "failed 2 retryable 2"_b;
    }
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

void TestOneTransaction::duplicateWaitsRunsOut_data()
{
    QTest::addColumn<int>("unused");
    QTest::addRow("one transaction") << 0;
    QTest::addRow("record at commit") << 0;
}

// A duplicate waits no longer than its bound, then answers in progress; nothing of it is written.
// Record at commit: the first holds its recorded, uncommitted row (the duplicate's task runs, and
// its record waits for that row).
void TestOneTransaction::duplicateWaitsRunsOut()
{
    const auto key = nextKey();
    const bool record = oneTx().recordAtCommit;
    std::promise<void> inTask, release;
    auto released = release.get_future().share();
    auto first = std::async(std::launch::async, [&] {
        auto conn = m_fx.db->connect();
        idem::TaskStore store(*conn, storeOptions(2000ms));
        if (record) {
            pqxx::work tx(*conn);
            insertPayment()(tx, idem::TaskContext { key, key.str(), std::string(), 1, false });
            const auto c = store.recordInTransaction(tx, key, digestOf('a'), charged, 5000ms);
            inTask.set_value();
            released.wait();
            tx.commit();
            idem::RunOutcome out;
            out.kind = c.mayExecute() ? Kind::Succeeded : Kind::InProgress;
            return out;
        }
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
    QTest::addRow("new key, record at commit") << false;
    QTest::addRow("takeover of a retry, record at commit") << true;
    QTest::addRow("new key, record at commit, no check first") << false;
    QTest::addRow("takeover of a retry, record at commit, no check first") << true;
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
    QTest::addRow("new key, record at commit") << false;
    QTest::addRow("takeover of a retry, record at commit") << true;
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

// Record at commit, optimistic: a key is nobody's until its record. While the first run's task
// runs nothing shows, and a duplicate that starts meanwhile runs its task and records first; the
// first then learns at its record that it is a replay, and its writes roll back.
void TestOneTransaction::recordFirstToRecordWins()
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
            recordAtCommit());
    });
    inTask.get_future().wait();
    QCOMPARE(f(key, "status"), "<no row>"_b);
    QCOMPARE(businessRows(key), 0);
    idem::OutcomeCounters counters;
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms), &counters);
    const auto second = idem::runTask(store, key, digestOf('a'), insertPayment(), recordAtCommit());
    QCOMPARE(QByteArray(idem::runOutcomeName(second.kind)), "succeeded"_b);
    QCOMPARE(bytes(second.claim.detail), "new"_b);
    release.set_value();
    const auto a = first.get();
    QCOMPARE(QByteArray(idem::runOutcomeName(a.kind)), "replayed"_b);
    QCOMPARE(bytes(a.resultJson), bytes(charged));
    QCOMPARE(businessRows(key), 1);
    QCOMPARE(f(key, "status || ' ' || attempts || ' ' || result_json::text"), R"(succeeded 1 {"charged": 1250})"_b);
    // The winner's counters: one acquisition, one success (the dashboard's figures).
    pqxx::nontransaction(*m_fx.admin).exec("DELETE FROM idem.idem_counters WHERE tenant = 'onetx'");
    counters.flush(*m_fx.admin, idem::SchemaName("idem"));
    QCOMPARE(scalar(*m_fx.admin,
                 "SELECT string_agg(outcome || '=' || n, ',' ORDER BY outcome) FROM (SELECT outcome, sum(n) AS n"
                 " FROM idem.idem_counters WHERE tenant = 'onetx' GROUP BY outcome) c"),
        "acquired=1,succeeded=1"_b);
}

void TestOneTransaction::recordDuplicateReplaysBehindLiveRecord_data()
{
    QTest::addColumn<bool>("takeover");
    QTest::addRow("new key") << false;
    QTest::addRow("takeover of a retry") << true;
}

// A run that has recorded and not committed holds the key: a duplicate's record waits for that
// commit (its task ran meanwhile; its writes roll back) and replays.
void TestOneTransaction::recordDuplicateReplaysBehindLiveRecord()
{
    QFETCH(bool, takeover);
    const auto key = nextKey();
    if (takeover)
        plantRetryDue(key);
    std::promise<void> recorded, release;
    auto released = release.get_future().share();
    auto first = std::async(std::launch::async, [&] {
        auto conn = m_fx.db->connect();
        idem::TaskStore store(*conn, storeOptions(2000ms));
        pqxx::work tx(*conn);
        insertPayment()(tx, idem::TaskContext { key, key.str(), std::string(), 1, false });
        const auto c = store.recordInTransaction(tx, key, digestOf('a'), charged, 5000ms);
        recorded.set_value();
        released.wait();
        tx.commit();
        return c;
    });
    recorded.get_future().wait();
    auto second = std::async(std::launch::async, [&] {
        auto conn = m_fx.db->connect();
        idem::TaskStore store(*conn, storeOptions(2000ms));
        return idem::runTask(store, key, digestOf('a'), insertPayment(), recordAtCommit(20000ms));
    });
    QCOMPARE(second.wait_for(300ms), std::future_status::timeout);
    release.set_value();
    const auto a = first.get();
    QVERIFY(a.mayExecute());
    QCOMPARE(bytes(a.detail), takeover ? "retry_due"_b : "new"_b);
    const auto b = second.get();
    QCOMPARE(QByteArray(idem::runOutcomeName(b.kind)), "replayed"_b);
    QCOMPARE(businessRows(key), 1);
    QCOMPARE(f(key, "status || ' ' || attempts"), takeover ? "succeeded 2"_b : "succeeded 1"_b);
}

namespace {

// A task whose business row has a unique order id (the key's own), which waits for `meanwhile`.
idem::TaskFunction insertOrder(std::function<void()> meanwhile, std::atomic<int>& calls)
{
    return [meanwhile, &calls](pqxx::work& tx, const idem::TaskContext& ctx) -> std::string {
        ++calls;
        tx.exec_params("INSERT INTO orders (order_id) VALUES ($1)", ctx.idempotencyKey);
        if (meanwhile)
            meanwhile();
        return charged;
    };
}

} // namespace

// Two runs of one new key whose tasks insert the same unique order id: the second's INSERT waits
// for the first's transaction and then fails with 23505. That is not the task's failure: the
// second rolls back, reads the stored row and replays the first's result.
void TestOneTransaction::recordBusinessCollisionReplays()
{
    pqxx::nontransaction(*m_fx.admin).exec("CREATE TABLE IF NOT EXISTS orders (order_id text PRIMARY KEY)");
    const auto key = nextKey();
    std::atomic<int> calls { 0 };
    std::promise<void> inTask, release;
    auto released = release.get_future().share();
    auto first = std::async(std::launch::async, [&] {
        auto conn = m_fx.db->connect();
        idem::TaskStore store(*conn, storeOptions(2000ms));
        return idem::runTask(store, key, digestOf('a'), insertOrder([&] {
            inTask.set_value();
            released.wait();
        }, calls),
            recordAtCommit());
    });
    inTask.get_future().wait();
    auto second = std::async(std::launch::async, [&] {
        auto conn = m_fx.db->connect();
        idem::TaskStore store(*conn, storeOptions(2000ms));
        return idem::runTask(store, key, digestOf('a'), insertOrder({}, calls), recordAtCommit());
    });
    // The second's task is blocked on the first's uncommitted order row.
    QTRY_COMPARE_WITH_TIMEOUT(scalar(*m_fx.admin,
                                  "SELECT count(*)::text FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                                  " AND query LIKE 'INSERT INTO orders%'"),
        "1"_b, 10000);
    release.set_value();
    QCOMPARE(QByteArray(idem::runOutcomeName(first.get().kind)), "succeeded"_b);
    const auto b = second.get();
    QCOMPARE(QByteArray(idem::runOutcomeName(b.kind)), "replayed"_b);
    QCOMPARE(bytes(b.resultJson), bytes(charged));
    QCOMPARE(calls.load(), 2);
    QCOMPARE(scalar(*m_fx.admin, "SELECT count(*)::text FROM orders WHERE order_id = $1", key.str()), "1"_b);
    QCOMPARE(f(key, "status || ' ' || attempts || ' ' || jsonb_array_length(errors)"), "succeeded 1 0"_b);
}

// A 23505 where the key is still free (the unique row is another's) is the task's failure,
// recorded as any failure is: rolled back, then claimed and failed on its own.
void TestOneTransaction::recordBusinessCollisionOfAnotherKeyFails()
{
    pqxx::nontransaction(*m_fx.admin).exec("CREATE TABLE IF NOT EXISTS orders (order_id text PRIMARY KEY)");
    const auto key = nextKey();
    pqxx::nontransaction(*m_fx.admin).exec_params("INSERT INTO orders (order_id) VALUES ($1)", key.str());
    std::atomic<int> calls { 0 };
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms));
    const auto out = idem::runTask(store, key, digestOf('a'), insertOrder({}, calls), recordAtCommit());
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), "will_retry"_b);
    QVERIFY2(out.error.find("duplicate key") != std::string::npos, out.error.c_str());
    QCOMPARE(calls.load(), 1);
    QCOMPARE(f(key, "status || ' ' || attempts || ' ' || error_class"), "retryable_failed 1 retryable"_b);
}

// A pause committed while the task runs (after the read before it) turns the record away: the
// run answers paused, its writes roll back, and the key stays absent.
void TestOneTransaction::recordPauseCommittedMidFlight()
{
    const auto key = nextKey();
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms));
    const auto out = idem::runTask(store, key, digestOf('a'), insertPayment([&] {
        pqxx::nontransaction(*m_fx.admin)
            .exec("SELECT * FROM idem.idem_pause('onetx', 'charge', 'ledger maintenance', 'test')");
    }),
        recordAtCommit());
    pqxx::nontransaction(*m_fx.admin).exec("SELECT * FROM idem.idem_resume('onetx', 'charge', 'done', 'test')");
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), "paused"_b);
    QCOMPARE(bytes(out.claim.detail), "onetx:charge"_b);
    QCOMPARE(businessRows(key), 0);
    QCOMPARE(f(key, "status"), "<no row>"_b);
    // Resumed: the next run records.
    QCOMPARE(idem::runTask(store, key, digestOf('a'), insertPayment(), recordAtCommit()).kind, Kind::Succeeded);
    QCOMPARE(businessRows(key), 1);
}

void TestOneTransaction::recordNotBesideOneTransaction()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms));
    const auto key = nextKey();
    auto both = recordAtCommit();
    both.oneTransaction = true;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, idem::runTask(store, key, digestOf('a'), insertPayment(), both));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
        idem::runTask(
            store, key, digestOf('a'), [](const idem::TaskContext&) { return std::string("ok"); },
            [](pqxx::work&, const idem::TaskContext&, const std::string& a) { return a; }, recordAtCommit()));
    QCOMPARE(f(key, "status"), "<no row>"_b);
}

QTEST_GUILESS_MAIN(TestOneTransaction)
#include "tst_onetransaction.moc"
