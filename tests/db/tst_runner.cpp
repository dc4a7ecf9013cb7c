#include <QtTest>

#include <functional>
#include <optional>
#include <pqxx/pqxx>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

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
    void oversizeResult_data();
    void oversizeResult();
    void unknownOutcomeRetriedWithSameKey();
    void expiredLeaseCountsAsUnknownOutcome();
    void fenceHoldsPastTheLease();

private:
    idem::TaskKey nextKey();
    int businessRows(const idem::TaskKey& key);
    QByteArray f(const idem::TaskKey& key, const std::string& expr) { return field(*m_admin, key, expr); }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<pqxx::connection> m_other;
    std::unique_ptr<pqxx::connection> m_admin;
    int m_keys = 0;
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

idem::TaskKey TestRunner::nextKey()
{
    std::string id = QTest::currentTestFunction();
    if (const char* tag = QTest::currentDataTag())
        id += std::string("/") + tag;
    return idem::TaskKey("runner", "charge", id + "#" + std::to_string(++m_keys));
}

int TestRunner::businessRows(const idem::TaskKey& key)
{
    return scalar(*m_admin, "SELECT count(*)::text FROM payments WHERE idempotency_key = $1", key.str()).toInt();
}

void TestRunner::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = idem::test::migratedDatabase("runner");
    m_conn = m_db->connect();
    m_other = m_db->connect();
    m_admin = m_db->connect();
    pqxx::work w(*m_admin);
    w.exec("CREATE TABLE payments (idempotency_key text NOT NULL, amount integer NOT NULL)");
    // The downstream payment service: idempotent by the key it is sent, as a real one is.
    w.exec("CREATE TABLE downstream_charges (idempotency_key text PRIMARY KEY, amount integer NOT NULL)");
    w.commit();
}

void TestRunner::cleanupTestCase()
{
    m_conn.reset();
    m_other.reset();
    m_admin.reset();
    m_db.reset();
}

void TestRunner::kinds_data()
{
    QTest::addColumn<int>("scenario");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QByteArray>("status"); // of the record afterwards
    QTest::addColumn<QByteArray>("errorClass");
    QTest::addColumn<int>("rows"); // business rows committed, in all
    QTest::addColumn<int>("calls"); // of the task, in the run under test
    const auto add = [](const char* name, Scenario s, Kind k, const char* status, const char* cls, int rows,
                        int calls) {
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
    idem::TaskStore store(*m_conn, storeOptions(lease, s == Scenario::Exhausted ? 1 : 5));
    idem::TaskStore other(*m_other, storeOptions(lease));
    const auto key = nextKey();
    const std::string result = R"({"charged": 1250})";

    int taskCalls = 0;
    std::optional<idem::ClaimResult> takeover;
    const idem::TaskFunction task = [&](pqxx::work& tx, const idem::TaskContext& ctx) -> std::string {
        ++taskCalls;
        tx.exec_params("INSERT INTO payments VALUES ($1, 1250)", ctx.idempotencyKey);
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
        pqxx::work w(*m_other);
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
        QVERIFY2(out.error.find(digestOf('a')) != std::string::npos, out.error.c_str());
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

void TestRunner::oversizeResult_data()
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
}

void TestRunner::oversizeResult()
{
    QFETCH(int, maxResultBytes);
    QFETCH(QByteArray, result);
    QFETCH(QByteArray, expected);
    auto options = storeOptions(2000ms);
    options.maxResultBytes = static_cast<std::size_t>(maxResultBytes);
    idem::TaskStore store(*m_conn, options);
    const auto key = nextKey();
    const std::string text = result.toStdString();

    const auto out = idem::runTask(store, key, digestOf('a'), [&](pqxx::work& tx, const idem::TaskContext& ctx) {
        tx.exec_params("INSERT INTO payments VALUES ($1, 1250)", ctx.idempotencyKey);
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
    idem::TaskStore store(*m_conn, storeOptions(2000ms)); // no backoff
    auto downstream = m_db->connect();
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
        tx.exec_params("INSERT INTO payments VALUES ($1, 1250)", ctx.idempotencyKey);
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
    QCOMPARE(scalar(*m_admin, "SELECT count(*)::text FROM downstream_charges WHERE idempotency_key = $1", key.str()),
             "1"_b);
    QCOMPARE(businessRows(key), 1);
    QCOMPARE(f(key, "status"), "succeeded"_b);
}

void TestRunner::expiredLeaseCountsAsUnknownOutcome()
{
    // An executor that died mid-task may have sent its request: the next one must be told so,
    // even when the attempt before it had failed definitely.
    idem::TaskStore store(*m_conn, storeOptions(300ms));
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
    idem::TaskStore store(*m_conn, storeOptions(300ms));
    idem::TaskStore other(*m_other, storeOptions(300ms));
    const auto key = nextKey();
    std::optional<idem::ClaimResult> during;
    const auto out = idem::runTask(store, key, digestOf('a'), [&](pqxx::work& tx, const idem::TaskContext& ctx) {
        tx.exec_params("INSERT INTO payments VALUES ($1, 1250)", ctx.idempotencyKey);
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

QTEST_GUILESS_MAIN(TestRunner)
#include "tst_runner.moc"
