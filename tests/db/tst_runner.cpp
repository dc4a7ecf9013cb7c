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
    void badResult_data();
    void badResult();
    void unknownOutcomeRetriedWithSameKey();
    void expiredLeaseCountsAsUnknownOutcome();
    void fenceHoldsPastTheLease();
    void undecodableMessageStillRecorded_data();
    void undecodableMessageStillRecorded();

private:
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
