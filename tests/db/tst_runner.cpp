#include <QtTest>

#include <functional>
#include <optional>
#include <pqxx/pqxx>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "core/connection.h"
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

// runTask end to end: what the worker is told, what the record holds, and how many business
// rows actually committed.
class TestRunner : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void kinds_data();
    void kinds();
    void badResult_data();
    void badResult();
    void unknownOutcomeRetriedWithSameKey();
    void expiredLeaseCountsAsUnknownOutcome();
    void fenceHoldsPastTheLease();
    void fenceInCompleteRefusesAStaleAttempt();
    void undecodableMessageStillRecorded_data();
    void undecodableMessageStillRecorded();
    void claimOnReadOnlyServerReconnects();
    void completionAfterReadOnlyRetriedOnNewConnection();
    void completionRetriedIsDecidedByItsFence();
    void failureRecordedAfterReadOnlyOnNewConnection();
    void serverGoneUnderTheTaskIsALostConnection();

private:
    // A connection whose transactions are read-only, as on a standby or a demoted primary.
    std::unique_ptr<pqxx::connection> readOnlyConnection() const
    {
        return idem::connect(
            idem::test::dsnWith(m_fx.db->dsn(), { { "options", "-c default_transaction_read_only=on" } }));
    }
    // RunOptions::reconnect that opens a writable connection (kept in m_reopened), recording why.
    idem::RunOptions reconnecting(std::vector<std::string>& reasons, std::function<void()> meanwhile = {})
    {
        idem::RunOptions o;
        o.reconnect = [this, &reasons, meanwhile](const idem::DatabaseUnavailable& why) -> pqxx::connection& {
            reasons.push_back(why.what());
            if (meanwhile)
                meanwhile();
            m_reopened.push_back(m_fx.db->connect());
            return *m_reopened.back();
        };
        return o;
    }
    std::vector<std::unique_ptr<pqxx::connection>> m_reopened;

    idem::TaskKey nextKey() { return m_fx.nextKey("runner"); }
    int businessRows(const idem::TaskKey& key) { return m_fx.businessRows(key); }
    QByteArray f(const idem::TaskKey& key, const std::string& expr) { return field(*m_fx.admin, key, expr); }

    idem::test::ProtocolFixture m_fx;
};

namespace {

enum class Scenario {
    Succeed,
    Replay,
    InProgress,
    Conflict,
    RetryLater,
    TaskFailureRetryable,
    RuntimeError,
    Permanent,
    Exhausted,
    LostWhileFailing,
};

// A task's exception whose message is read by runTask after the business transaction rolled
// back and before the failure is recorded: the one moment another worker can take over an
// expired lease (during the task the fence's row lock keeps everyone out). what() runs that
// takeover, once.
class TakenOverWhileFailing : public std::runtime_error {
public:
    explicit TakenOverWhileFailing(std::function<void()> takeover)
        : std::runtime_error("bank timeout")
        , m_takeover(std::move(takeover))
    {
    }
    const char* what() const noexcept override
    {
        if (auto takeover = std::exchange(m_takeover, {})) {
            try {
                takeover();
            } catch (...) {
            }
        }
        return std::runtime_error::what();
    }

private:
    mutable std::function<void()> m_takeover;
};

} // namespace

void TestRunner::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_fx.open("runner");
    // The downstream payment service: idempotent by the key it is sent, as a real one is.
    pqxx::work w(*m_fx.admin);
    w.exec("CREATE TABLE downstream_charges (idempotency_key text PRIMARY KEY, amount integer NOT NULL)");
    w.commit();
}

void TestRunner::cleanupTestCase() { m_fx.close(); }

void TestRunner::kinds_data()
{
    QTest::addColumn<int>("scenario");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QByteArray>("status"); // of the record afterwards
    QTest::addColumn<QByteArray>("errorClass");
    QTest::addColumn<int>("rows"); // business rows committed, in all
    QTest::addColumn<int>("calls"); // of the task, in the run under test
    const auto add
        = [](const char* name, Scenario s, Kind k, const char* status, const char* cls, int rows, int calls) {
              QTest::addRow("%s", name) << static_cast<int>(s) << static_cast<int>(k) << QByteArray(status)
                                        << QByteArray(cls) << rows << calls;
          };
    add("succeeded", Scenario::Succeed, Kind::Succeeded, "succeeded", "<null>", 1, 1);
    add("replayed", Scenario::Replay, Kind::Replayed, "succeeded", "<null>", 1, 0);
    add("in progress", Scenario::InProgress, Kind::InProgress, "processing", "<null>", 0, 0);
    add("conflict", Scenario::Conflict, Kind::Conflict, "succeeded", "<null>", 1, 0);
    add("retry later", Scenario::RetryLater, Kind::RetryLater, "retryable_failed", "retryable", 0, 0);
    add("TaskFailure retryable", Scenario::TaskFailureRetryable, Kind::WillRetry, "retryable_failed", "retryable", 0,
        1);
    add("std::runtime_error counts as retryable", Scenario::RuntimeError, Kind::WillRetry, "retryable_failed",
        "retryable", 0, 1);
    add("TaskFailure permanent", Scenario::Permanent, Kind::Failed, "failed", "permanent", 0, 1);
    add("retryable, out of attempts", Scenario::Exhausted, Kind::Failed, "failed", "retryable", 0, 1);
    add("lease lost before the failure was recorded", Scenario::LostWhileFailing, Kind::LostOwnership, "processing",
        "<null>", 0, 1);
}

void TestRunner::kinds()
{
    QFETCH(int, scenario);
    QFETCH(int, kind);
    QFETCH(QByteArray, status);
    QFETCH(QByteArray, errorClass);
    QFETCH(int, rows);
    QFETCH(int, calls);
    const auto s = static_cast<Scenario>(scenario);
    const auto lease = s == Scenario::LostWhileFailing ? 300ms : 2000ms;
    idem::TaskStore store(*m_fx.conn, storeOptions(lease, s == Scenario::Exhausted ? 1 : 5));
    idem::TaskStore other(*m_fx.other, storeOptions(lease));
    const auto key = nextKey();
    const std::string result = R"({"charged": 1250})";

    int taskCalls = 0;
    std::optional<idem::ClaimResult> takeover;
    const idem::TaskFunction task = [&](pqxx::work& tx, const idem::TaskContext& ctx) -> std::string {
        ++taskCalls;
        tx.exec_params("INSERT INTO payments (idempotency_key, amount) VALUES ($1, 1250)", ctx.idempotencyKey);
        switch (s) {
        case Scenario::TaskFailureRetryable:
        case Scenario::Exhausted:
            throw idem::TaskFailure(idem::FailureClass::Retryable, "bank timeout");
        case Scenario::RuntimeError:
            throw std::runtime_error("bank timeout");
        case Scenario::Permanent:
            throw idem::TaskFailure(idem::FailureClass::Permanent, "bank timeout");
        case Scenario::LostWhileFailing:
            std::this_thread::sleep_for(350ms);
            throw TakenOverWhileFailing([&] { takeover = other.claim(key, digestOf('a')); });
        default:
            return result;
        }
    };

    switch (s) {
    case Scenario::Replay:
    case Scenario::Conflict:
        QCOMPARE(idem::runTask(store, key, digestOf('a'), task).kind, Kind::Succeeded);
        break;
    case Scenario::InProgress:
        QVERIFY(other.claim(key, digestOf('a')).mayExecute());
        break;
    case Scenario::RetryLater: {
        const auto c = other.claim(key, digestOf('a'));
        pqxx::work w(*m_fx.other);
        w.exec_params("SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'bank timeout', 60000)", key.str(), c.token);
        w.commit();
        break;
    }
    default:
        break;
    }
    taskCalls = 0;

    const auto out = idem::runTask(store, key, digestOf(s == Scenario::Conflict ? 'b' : 'a'), task);
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), QByteArray(idem::runOutcomeName(static_cast<Kind>(kind))));
    QCOMPARE(taskCalls, calls);
    QCOMPARE(businessRows(key), rows);
    QCOMPARE(f(key, "status"), status);
    QCOMPARE(f(key, "error_class"), errorClass);

    switch (s) {
    case Scenario::Succeed:
        QCOMPARE(bytes(out.resultJson), bytes(result));
        QCOMPARE(f(key, "result_json"), R"({"charged": 1250})"_b);
        break;
    case Scenario::Replay:
        QCOMPARE(bytes(out.resultJson), f(key, "result_json"));
        break;
    case Scenario::InProgress:
    case Scenario::RetryLater:
        QVERIFY(out.claim.retryAfter > 0ms);
        break;
    case Scenario::Conflict:
        // Schema v13: the conflict does not reveal the stored digest (docs/deployment.md, "Who can read what").
        QVERIFY2(out.error.find(digestOf('a')) == std::string::npos, out.error.c_str());
        QCOMPARE(f(key, "request_hash"), bytes(digestOf('a')));
        break;
    case Scenario::TaskFailureRetryable:
    case Scenario::RuntimeError:
        QCOMPARE(bytes(out.error), "bank timeout"_b);
        QCOMPARE(bytes(out.failure.status), "retryable_failed"_b);
        QCOMPARE(f(key, "error_message"), "bank timeout"_b);
        break;
    case Scenario::Permanent:
        QVERIFY(!out.failure.exhausted);
        QCOMPARE(f(key, "error_message"), "bank timeout"_b);
        break;
    case Scenario::Exhausted:
        QVERIFY(out.failure.exhausted);
        QCOMPARE(out.failure.attempts, 1);
        QCOMPARE(f(key, "error_message"), "bank timeout"_b);
        break;
    case Scenario::LostWhileFailing:
        QVERIFY(takeover.has_value());
        QCOMPARE(takeover->decision, idem::Decision::Reacquired);
        QVERIFY2(out.error.find("lease was lost") != std::string::npos, out.error.c_str());
        // The new owner holds the row; the stale executor's failure was not recorded over it.
        QCOMPARE(f(key, "owner_token"), bytes(takeover->token));
        QCOMPARE(f(key, "attempts"), "2"_b);
        QCOMPARE(f(key, "errors"), "[]"_b);
        break;
    }
}

void TestRunner::badResult_data()
{
    QTest::addColumn<int>("maxResultBytes");
    QTest::addColumn<QByteArray>("result");
    QTest::addColumn<QByteArray>("expected");
    // A 10 MiB JSON string against the default 1 MiB: refused by the library before any I/O.
    QTest::addRow("10 MiB, library check") << (1 << 20) << QByteArray('"' + QByteArray(10 << 20, 'x') + '"')
                                           << "result is 10485762 bytes, more than the 1048576 allowed"_b;
    // 63 bytes as sent, 93 as jsonb prints it: refused by the SQL function (ID003).
    QTest::addRow("jsonb larger than the text, SQL check")
        << 64 << QByteArray("[" + "1,"_b.repeated(30) + "1]") << "result is 93 bytes, more than the 64 allowed"_b;
    QTest::addRow("not JSON") << (1 << 20) << R"({"charged": 12)"_b
                              << "result is not valid JSON"_b;
    // libpq sends a parameter up to its first NUL: without the check the row would have
    // stored {"charged":12} and said succeeded.
    QTest::addRow("NUL after the JSON") << (1 << 20) << QByteArray("{\"charged\":12}\0{\"charged\":99}", 29)
                                        << "result is not valid JSON: unexpected byte 0x00 at offset 14"_b;
}

void TestRunner::badResult()
{
    QFETCH(int, maxResultBytes);
    QFETCH(QByteArray, result);
    QFETCH(QByteArray, expected);
    auto options = storeOptions(2000ms);
    options.maxResultBytes = static_cast<std::size_t>(maxResultBytes);
    idem::TaskStore store(*m_fx.conn, options);
    const auto key = nextKey();
    const std::string text = result.toStdString();

    const auto out = idem::runTask(store, key, digestOf('a'), [&](pqxx::work& tx, const idem::TaskContext& ctx) {
        tx.exec_params("INSERT INTO payments (idempotency_key, amount) VALUES ($1, 1250)", ctx.idempotencyKey);
        return text;
    });
    // The same output would be refused every time: permanent, not retried.
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), "failed"_b);
    QVERIFY2(bytes(out.error).contains(expected), out.error.c_str());
    QVERIFY(!out.failure.exhausted);
    QCOMPARE(businessRows(key), 0);
    QCOMPARE(f(key, "status"), "failed"_b);
    QCOMPARE(f(key, "error_class"), "permanent"_b);
    QVERIFY(f(key, "error_message").contains(expected));
    QCOMPARE(f(key, "result_json"), "<null>"_b);
}

void TestRunner::unknownOutcomeRetriedWithSameKey()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms)); // no backoff
    auto downstream = m_fx.db->connect();
    const auto key = nextKey();
    std::vector<std::tuple<std::string, int, bool>> seen; // idempotencyKey, attempt, previousOutcomeUnknown

    const idem::TaskFunction task = [&](pqxx::work& tx, const idem::TaskContext& ctx) -> std::string {
        seen.emplace_back(ctx.idempotencyKey, ctx.attempt, ctx.previousOutcomeUnknown);
        // The external call commits on the other side whatever happens here.
        pqxx::work remote(*downstream);
        remote.exec_params("INSERT INTO downstream_charges VALUES ($1, 1250) ON CONFLICT (idempotency_key) DO NOTHING",
            ctx.idempotencyKey);
        remote.commit();
        if (ctx.attempt == 1)
            throw idem::TaskFailure(idem::FailureClass::Unknown, "timeout after the charge request was sent");
        tx.exec_params("INSERT INTO payments (idempotency_key, amount) VALUES ($1, 1250)", ctx.idempotencyKey);
        return R"({"charged": 1250})";
    };

    const auto first = idem::runTask(store, key, digestOf('a'), task);
    QCOMPARE(QByteArray(idem::runOutcomeName(first.kind)), "will_retry"_b);
    QCOMPARE(bytes(first.failure.status), "retryable_failed"_b);
    QCOMPARE(f(key, "status"), "retryable_failed"_b);
    QCOMPARE(f(key, "error_class"), "unknown"_b);
    QCOMPARE(f(key, "errors->0->>'class'"), "unknown"_b);
    std::this_thread::sleep_for(5ms);

    const auto second = idem::runTask(store, key, digestOf('a'), task);
    QCOMPARE(QByteArray(idem::runOutcomeName(second.kind)), "succeeded"_b);
    QCOMPARE(bytes(second.claim.detail), "retry_due"_b);

    QCOMPARE(seen.size(), std::size_t(2));
    QCOMPARE(bytes(std::get<0>(seen[0])), bytes(key.str()));
    QCOMPARE(bytes(std::get<0>(seen[1])), bytes(key.str())); // the same key goes downstream again
    QCOMPARE(std::get<1>(seen[1]), 2);
    QVERIFY(!std::get<2>(seen[0]));
    QVERIFY(std::get<2>(seen[1]));
    QCOMPARE(scalar(*m_fx.admin, "SELECT count(*)::text FROM downstream_charges WHERE idempotency_key = $1", key.str()),
        "1"_b);
    QCOMPARE(businessRows(key), 1);
    QCOMPARE(f(key, "status"), "succeeded"_b);
}

void TestRunner::expiredLeaseCountsAsUnknownOutcome()
{
    // An executor that died mid-task may have sent its request: the next one must be told so,
    // even when the attempt before it had failed definitely.
    idem::TaskStore store(*m_fx.conn, storeOptions(300ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    store.fail(key, c.token, c.attempts, idem::FailureClass::Retryable, "503");
    std::this_thread::sleep_for(5ms);
    QVERIFY(store.claim(key, digestOf('a')).mayExecute()); // attempt 2, then the worker dies
    std::this_thread::sleep_for(350ms);

    std::optional<bool> unknown;
    const auto out = idem::runTask(store, key, digestOf('a'), [&](pqxx::work&, const idem::TaskContext& ctx) {
        unknown = ctx.previousOutcomeUnknown;
        return std::string("{}");
    });
    QCOMPARE(bytes(out.claim.detail), "lease_expired"_b);
    QCOMPARE(out.claim.attempts, 3);
    QVERIFY(unknown.has_value());
    QVERIFY(*unknown);
}

void TestRunner::fenceHoldsPastTheLease()
{
    // The fence locks the row for the whole business transaction, so a lease that runs out
    // meanwhile cannot be taken over: the others see in_progress, and the executor commits.
    idem::TaskStore store(*m_fx.conn, storeOptions(300ms));
    idem::TaskStore other(*m_fx.other, storeOptions(300ms));
    const auto key = nextKey();
    std::optional<idem::ClaimResult> during;
    const auto out = idem::runTask(store, key, digestOf('a'), [&](pqxx::work& tx, const idem::TaskContext& ctx) {
        tx.exec_params("INSERT INTO payments (idempotency_key, amount) VALUES ($1, 1250)", ctx.idempotencyKey);
        std::this_thread::sleep_for(400ms);
        during = other.claim(key, digestOf('a'));
        return std::string(R"({"slow": true})");
    });
    QVERIFY(during.has_value());
    QCOMPARE(during->decision, idem::Decision::InProgress);
    QCOMPARE(bytes(during->detail), "locked"_b);
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), "succeeded"_b);
    QCOMPARE(businessRows(key), 1);
    QCOMPARE(f(key, "attempts"), "1"_b);
    QCOMPARE(other.claim(key, digestOf('a')).decision, idem::Decision::Replay);
}

// Issue 45 item 2: RunOptions::fenceInComplete sends no fence, so nothing locks the row while the
// task runs and a lease that runs out is taken over (the claim says reacquired, not in progress:
// with the fence it is "locked", as above). The stale attempt's complete() then refuses its token
// and its business write rolls back with it: one effect, the new owner's.
void TestRunner::fenceInCompleteRefusesAStaleAttempt()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(300ms));
    idem::TaskStore other(*m_fx.other, storeOptions(30000ms));
    const auto key = nextKey();
    std::optional<idem::ClaimResult> during;
    idem::RunOptions options;
    options.fenceInComplete = true;
    const auto out = idem::runTask(
        store, key, digestOf('a'),
        [&](pqxx::work& tx, const idem::TaskContext& ctx) {
            tx.exec_params("INSERT INTO payments (idempotency_key, amount) VALUES ($1, 1)", ctx.idempotencyKey);
            std::this_thread::sleep_for(400ms);
            during = other.claim(key, digestOf('a'));
            if (during->mayExecute()) {
                pqxx::work w(*m_fx.other);
                other.fence(w, key, during->token);
                w.exec_params("INSERT INTO payments (idempotency_key, amount) VALUES ($1, 2)", ctx.idempotencyKey);
                other.complete(w, key, during->token, R"({"by": "other"})");
                w.commit();
            }
            return std::string(R"({"by": "stale"})");
        },
        options);
    QVERIFY(during.has_value());
    QCOMPARE(during->decision, idem::Decision::Reacquired);
    QCOMPARE(bytes(during->detail), "lease_expired"_b);
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), "lost_ownership"_b);
    QCOMPARE(businessRows(key), 1);
    QCOMPARE(
        scalar(*m_fx.admin, "SELECT string_agg(amount::text, ',') FROM payments WHERE idempotency_key = $1", key.str()),
        "2"_b);
    QCOMPARE(f(key, "status"), "succeeded"_b);
    QCOMPARE(f(key, "result_json->>'by'"), "other"_b);
    QCOMPARE(f(key, "attempts"), "2"_b);
}

// Issue 29 item 2: a claim on a read-only server (SQLSTATE 25006) is NotPrimary, in words, and
// wrote nothing; with RunOptions::reconnect the claim is made again on the new connection.
void TestRunner::claimOnReadOnlyServerReconnects()
{
    auto readOnly = readOnlyConnection();
    idem::TaskStore store(*readOnly, storeOptions(2000ms));
    const auto key = nextKey();
    const idem::TaskFunction task = [](pqxx::work& tx, const idem::TaskContext& ctx) {
        tx.exec_params("INSERT INTO payments (idempotency_key, amount) VALUES ($1, 700)", ctx.idempotencyKey);
        return std::string(R"({"paid": 700})");
    };

    bool notPrimary = false;
    try {
        idem::runTask(store, key, digestOf('a'), task);
    } catch (const idem::NotPrimary& e) {
        notPrimary = true;
        QVERIFY2(QByteArray(e.what()).startsWith("the server is read-only (not the primary): "), e.what());
        QVERIFY2(!QByteArray(e.what()).contains("25006"), e.what());
        // A kind of DatabaseUnavailable: a worker's existing reconnect handles it.
        QVERIFY(dynamic_cast<const idem::DatabaseUnavailable*>(&e) != nullptr);
    }
    QVERIFY(notPrimary);
    QCOMPARE(f(key, "status"), "<no row>"_b); // nothing of the claim landed

    std::vector<std::string> reasons;
    const auto out = idem::runTask(store, key, digestOf('a'), task, reconnecting(reasons));
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), "succeeded"_b);
    QCOMPARE(reasons.size(), std::size_t(1));
    QVERIFY2(QByteArray::fromStdString(reasons[0]).startsWith("the server is read-only (not the primary)"),
        reasons[0].c_str());
    QCOMPARE(&store.connection(), m_reopened.back().get()); // the store moved to the new connection
    QCOMPARE(f(key, "status"), "succeeded"_b);
    QCOMPARE(f(key, "attempts"), "1"_b);
    QCOMPARE(businessRows(key), 1);
}

// The server turns read-only between the claim and the fenced transaction (a switchover while
// the downstream call runs): the fence is refused with nothing written, and the fenced
// transaction is done again on a new connection with the same token; the call is not repeated.
void TestRunner::completionAfterReadOnlyRetriedOnNewConnection()
{
    auto conn = m_fx.db->connect();
    idem::TaskStore store(*conn, storeOptions(5000ms));
    const auto key = nextKey();
    int calls = 0;
    std::vector<std::string> tokens;
    const idem::DownstreamCall call = [&](const idem::TaskContext&) {
        ++calls;
        pqxx::nontransaction(store.connection()).exec("SET default_transaction_read_only = on");
        return std::string("charge-1");
    };
    const idem::RecordFunction record = [&](pqxx::work& tx, const idem::TaskContext& ctx, const std::string& answer) {
        tokens.push_back(ctx.token);
        tx.exec_params("INSERT INTO payments (idempotency_key, amount) VALUES ($1, 900)", ctx.idempotencyKey);
        return R"({"charge": ")" + answer + R"("})";
    };
    std::vector<std::string> reasons;
    const auto out = idem::runTask(store, key, digestOf('a'), call, record, reconnecting(reasons));
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), "succeeded"_b);
    QCOMPARE(calls, 1);
    QCOMPARE(reasons.size(), std::size_t(1));
    QVERIFY2(QByteArray::fromStdString(reasons[0]).contains("read-only (not the primary)"), reasons[0].c_str());
    // The fence was refused first (nothing written, the record step not reached), then passed on the
    // new connection with the claim's token: the record step ran once.
    QCOMPARE(tokens.size(), std::size_t(1));
    QCOMPARE(bytes(tokens[0]), bytes(out.claim.token));
    QCOMPARE(f(key, "status"), "succeeded"_b);
    QCOMPARE(f(key, "result_json->>'charge'"), "charge-1"_b);
    QCOMPARE(f(key, "attempts"), "1"_b);
    QCOMPARE(businessRows(key), 1);
}

// The same, but while the executor looks for the primary its lease runs out and another worker
// takes the key over and completes it: the retried fence refuses the old token. One success, one
// business row: the other executor's.
void TestRunner::completionRetriedIsDecidedByItsFence()
{
    auto conn = m_fx.db->connect();
    idem::TaskStore store(*conn, storeOptions(300ms));
    idem::TaskStore other(*m_fx.other, storeOptions(5000ms));
    const auto key = nextKey();
    const idem::DownstreamCall call = [&](const idem::TaskContext&) {
        pqxx::nontransaction(store.connection()).exec("SET default_transaction_read_only = on");
        return std::string("first");
    };
    const idem::RecordFunction record = [&](pqxx::work& tx, const idem::TaskContext& ctx, const std::string&) {
        tx.exec_params("INSERT INTO payments (idempotency_key, amount, by_token) VALUES ($1, 900, $2::uuid)",
            ctx.idempotencyKey, ctx.token);
        return std::string(R"({"by": "first"})");
    };
    std::optional<idem::RunOutcome> takeover;
    std::vector<std::string> reasons;
    const auto out = idem::runTask(store, key, digestOf('a'), call, record, reconnecting(reasons, [&] {
        std::this_thread::sleep_for(350ms); // past the first executor's lease
        takeover = idem::runTask(other, key, digestOf('a'), [](pqxx::work& tx, const idem::TaskContext& ctx) {
            tx.exec_params("INSERT INTO payments (idempotency_key, amount, by_token) VALUES ($1, 900, $2::uuid)",
                ctx.idempotencyKey, ctx.token);
            return std::string(R"({"by": "second"})");
        });
    }));
    QVERIFY(takeover.has_value());
    QCOMPARE(QByteArray(idem::runOutcomeName(takeover->kind)), "succeeded"_b);
    QCOMPARE(bytes(takeover->claim.detail), "lease_expired"_b);
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), "lost_ownership"_b);
    QCOMPARE(reasons.size(), std::size_t(1));
    QCOMPARE(f(key, "status"), "succeeded"_b);
    QCOMPARE(f(key, "result_json->>'by'"), "second"_b);
    QCOMPARE(businessRows(key), 1);
    QCOMPARE(scalar(*m_fx.admin, "SELECT by_token::text FROM payments WHERE idempotency_key = $1", key.str()),
        bytes(takeover->claim.token));
}

// A failed attempt whose failure cannot be recorded on a read-only server (which wrote nothing)
// is recorded on the new connection.
void TestRunner::failureRecordedAfterReadOnlyOnNewConnection()
{
    auto conn = m_fx.db->connect();
    idem::TaskStore store(*conn, storeOptions(5000ms));
    const auto key = nextKey();
    const idem::DownstreamCall call = [&](const idem::TaskContext&) -> std::string {
        pqxx::nontransaction(store.connection()).exec("SET default_transaction_read_only = on");
        throw idem::TaskFailure(idem::FailureClass::Retryable, "503 from the bank");
    };
    const idem::RecordFunction record
        = [](pqxx::work&, const idem::TaskContext&, const std::string&) { return std::string("{}"); };
    // Without a way to reconnect the caller is told, and the lease decides later.
    {
        auto conn2 = m_fx.db->connect();
        idem::TaskStore alone(*conn2, storeOptions(5000ms));
        const auto other = nextKey();
        const idem::DownstreamCall flip = [&](const idem::TaskContext&) -> std::string {
            pqxx::nontransaction(alone.connection()).exec("SET default_transaction_read_only = on");
            throw idem::TaskFailure(idem::FailureClass::Retryable, "503 from the bank");
        };
        QVERIFY_THROWS_EXCEPTION(idem::NotPrimary, idem::runTask(alone, other, digestOf('a'), flip, record));
        QCOMPARE(f(other, "status"), "processing"_b);
    }
    std::vector<std::string> reasons;
    const auto out = idem::runTask(store, key, digestOf('a'), call, record, reconnecting(reasons));
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), "will_retry"_b);
    QCOMPARE(reasons.size(), std::size_t(1));
    QCOMPARE(f(key, "status"), "retryable_failed"_b);
    QCOMPARE(f(key, "error_message"), "503 from the bank"_b);
    QCOMPARE(businessRows(key), 0);
}

// Issue 42: a server going away under the fenced transaction can reach libpqxx as the statement's
// error (FATAL 57P01 read before the socket closed), not as a broken connection. It is a lost
// connection all the same: not the task's failure (nothing of the transaction committed), the
// fenced transaction is done again on a new connection with the same token. Raised here with the
// SQLSTATE of a shutdown's termination, as the server's FATAL carries it.
void TestRunner::serverGoneUnderTheTaskIsALostConnection()
{
    const auto terminated = [](pqxx::work& tx) {
        tx.exec("DO $$BEGIN RAISE EXCEPTION 'terminating connection due to administrator command'"
                " USING ERRCODE = '57P01'; END$$");
    };
    int records = 0;
    const idem::DownstreamCall call = [](const idem::TaskContext&) { return std::string("charge-1"); };
    const idem::RecordFunction record = [&](pqxx::work& tx, const idem::TaskContext& ctx, const std::string& answer) {
        tx.exec_params("INSERT INTO payments (idempotency_key, amount) VALUES ($1, 900)", ctx.idempotencyKey);
        if (++records == 1)
            terminated(tx);
        return R"({"charge": ")" + answer + R"("})";
    };
    // Without a way to reconnect the caller is told the server is gone, and the lease decides later.
    {
        auto conn = m_fx.db->connect();
        idem::TaskStore alone(*conn, storeOptions(5000ms));
        const auto other = nextKey();
        bool lost = false;
        try {
            idem::runTask(alone, other, digestOf('a'), call, record);
        } catch (const idem::DatabaseUnavailable& e) {
            lost = true;
            QVERIFY2(QByteArray(e.what()).startsWith("the server ended this session"), e.what());
        }
        QVERIFY(lost);
        QCOMPARE(f(other, "status"), "processing"_b);
        QCOMPARE(businessRows(other), 0);
    }
    records = 0;
    auto conn = m_fx.db->connect();
    idem::TaskStore store(*conn, storeOptions(5000ms));
    const auto key = nextKey();
    std::vector<std::string> reasons;
    const auto out = idem::runTask(store, key, digestOf('a'), call, record, reconnecting(reasons));
    QCOMPARE(QByteArray(idem::runOutcomeName(out.kind)), "succeeded"_b);
    QCOMPARE(reasons.size(), std::size_t(1));
    QVERIFY2(QByteArray::fromStdString(reasons[0]).startsWith("the server ended this session"), reasons[0].c_str());
    QCOMPARE(records, 2);
    QCOMPARE(f(key, "status"), "succeeded"_b);
    QCOMPARE(f(key, "attempts"), "1"_b);
    QCOMPARE(businessRows(key), 1);

    // The same in one transaction (RunOptions::oneTransaction): claim, task and complete again.
    records = 0;
    const auto local = nextKey();
    auto options = reconnecting(reasons);
    options.oneTransaction = true;
    const idem::TaskFunction task = [&](pqxx::work& tx, const idem::TaskContext& ctx) {
        tx.exec_params("INSERT INTO payments (idempotency_key, amount) VALUES ($1, 700)", ctx.idempotencyKey);
        if (++records == 1)
            terminated(tx);
        return std::string(R"({"paid": 700})");
    };
    const auto one = idem::runTask(store, local, digestOf('a'), task, options);
    QCOMPARE(QByteArray(idem::runOutcomeName(one.kind)), "succeeded"_b);
    QCOMPARE(reasons.size(), std::size_t(2));
    QCOMPARE(f(local, "status"), "succeeded"_b);
    QCOMPARE(f(local, "attempts"), "1"_b);
    QCOMPARE(businessRows(local), 1);
}

void TestRunner::undecodableMessageStillRecorded_data()
{
    QTest::addColumn<QByteArray>("message");
    QTest::addColumn<QByteArray>("stored");
    // A task's exception text can carry any bytes (a Latin-1 strerror, a downstream's body);
    // PostgreSQL text cannot. The failure must still be recorded, the bytes escaped.
    QTest::addRow("Latin-1") << "Bankverbindung ung\xfcltig"_b
                             << "Bankverbindung ung\\xfcltig"_b;
    QTest::addRow("truncated sequence") << "caf\xc3"_b
                                        << "caf\\xc3"_b;
    QTest::addRow("NUL byte") << QByteArray("before\0after", 12) << "before\\x00after"_b;
    QTest::addRow("valid UTF-8 is kept") << "caf\xc3\xa9"_b
                                         << "caf\xc3\xa9"_b;
}

void TestRunner::undecodableMessageStillRecorded()
{
    QFETCH(QByteArray, message);
    QFETCH(QByteArray, stored);
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms));
    const auto key = nextKey();
    std::optional<idem::RunOutcome> out;
    try {
        out = idem::runTask(store, key, digestOf('a'), [&](pqxx::work&, const idem::TaskContext&) -> std::string {
            throw idem::TaskFailure(idem::FailureClass::Retryable, message.toStdString());
        });
    } catch (const std::exception& e) {
        QFAIL(qPrintable(
            QStringLiteral("runTask threw instead of recording the failure: ") + QString::fromUtf8(e.what())));
    }
    // what() ends at a NUL, so runTask sees only the part before it; the store itself gets all.
    if (!message.contains('\0')) {
        QCOMPARE(QByteArray(idem::runOutcomeName(out->kind)), "will_retry"_b);
        QCOMPARE(f(key, "error_message"), stored);
        QCOMPARE(f(key, "errors->0->>'message'"), stored);
    }
    const auto direct = nextKey();
    const auto c = store.claim(direct, digestOf('a'));
    store.fail(direct, c.token, c.attempts, idem::FailureClass::Retryable, message.toStdString());
    QCOMPARE(f(direct, "error_message"), stored);
}

QTEST_GUILESS_MAIN(TestRunner)
#include "tst_runner.moc"
