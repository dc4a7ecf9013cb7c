#include <QtTest>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <thread>

#include "core/taskstore.h"
#include "tests/support/taskrows.h"

using namespace std::chrono_literals;
using idem::test::operator""_b;
using idem::test::bytes;
using idem::test::digestOf;
using idem::test::scalar;
using idem::test::storeOptions;

// Failed attempts: classes, backoff, exhaustion by attempts and by age, the error history, and
// hostile bytes in keys and messages. What the caller is told and what the row holds.
class TestFailures : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        IDEM_REQUIRE_DATABASE();
        m_fx.open("failures");
    }
    void cleanupTestCase() { m_fx.close(); }

    void failRetryableBacksOff();
    void failPermanentStopsAtOnce();
    void failExhaustsAttempts();
    void claimExhaustsExpiredLease();
    void failExhaustsMaxAge();
    void claimExhaustsMaxAge();
    void errorHistoryKeepsTwenty();
    void hostileValuesRoundTrip_data();
    void hostileValuesRoundTrip();
    void longMessageTruncated_data();
    void longMessageTruncated();

private:
    idem::TaskKey nextKey() { return m_fx.nextKey("fail"); }
    QByteArray f(const idem::TaskKey& key, const std::string& expr)
    {
        return idem::test::field(*m_fx.admin, key, expr);
    }
    QByteArray row(const idem::TaskKey& key) { return idem::test::rowJson(*m_fx.admin, key); }

    idem::test::ProtocolFixture m_fx;
};

void TestFailures::failRetryableBacksOff()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms, 5, 200ms, 800ms));
    const auto key = nextKey();
    auto c = store.claim(key, digestOf('a'));
    for (int attempt = 1; attempt <= 2; ++attempt) {
        QCOMPARE(c.attempts, attempt);
        const auto message = "gateway timeout #" + std::to_string(attempt);
        const auto failed = store.fail(key, c.token, c.attempts, idem::FailureClass::Retryable, message);
        const auto ceiling = store.options().retry.ceilingAfter(attempt); // 200 ms, then 400 ms
        QCOMPARE(ceiling, std::chrono::milliseconds(200 * attempt));
        QCOMPARE(bytes(failed.status), "retryable_failed"_b);
        QCOMPARE(failed.attempts, attempt);
        QVERIFY(!failed.exhausted);
        QVERIFY(failed.retryDelay >= 0ms && failed.retryDelay <= ceiling);

        QCOMPARE(f(key, "status"), "retryable_failed"_b);
        QCOMPARE(f(key, "error_class"), "retryable"_b);
        QCOMPARE(f(key, "error_message"), bytes(message));
        QCOMPARE(f(key, "owner_token"), "<null>"_b);
        QCOMPARE(f(key, "lease_until"), "<null>"_b);
        // next_attempt_at is the fail's clock plus exactly the delay drawn, so within
        // [now, now + ceiling].
        QCOMPARE(f(key, "round(extract(epoch FROM next_attempt_at - updated_at) * 1000)").toLongLong(),
            static_cast<qlonglong>(failed.retryDelay.count()));
        QCOMPARE(f(key, "jsonb_array_length(errors)"), QByteArray::number(attempt));
        const std::string last = "errors->" + std::to_string(attempt - 1);
        QCOMPARE(f(key, "(SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(" + last + ") k)"),
            "{at,attempt,class,message,run_us}"_b);
        QCOMPARE(f(key, last + "->'attempt'"), QByteArray::number(attempt));
        // v17: the attempt's run time by the server's clock, from its claim (attempt_started_at,
        // which the fail leaves in place) to the fail: at least the fail's own statement start
        // minus that, and not more than the time since.
        QVERIFY(f(key, "(" + last + "->>'run_us')::bigint >= round(extract(epoch FROM updated_at - attempt_started_at)"
                       " * 1000000)")
            == "true"_b);
        QVERIFY(f(key, "(" + last + "->>'run_us')::bigint <= round(extract(epoch FROM clock_timestamp()"
                       " - attempt_started_at) * 1000000)")
            == "true"_b);
        QCOMPARE(f(key, last + "->>'class'"), "retryable"_b);
        QCOMPARE(f(key, last + "->>'message'"), bytes(message));
        QCOMPARE(f(key, "(" + last + "->>'at')::timestamptz = updated_at"), "true"_b);

        std::this_thread::sleep_for(failed.retryDelay + 20ms);
        c = store.claim(key, digestOf('a'));
        QCOMPARE(c.decision, idem::Decision::Reacquired);
        QCOMPARE(bytes(c.detail), "retry_due"_b);
    }
    QCOMPARE(c.attempts, 3);
    QCOMPARE(f(key, "errors->0->>'message'"), "gateway timeout #1"_b); // history keeps the order
}

void TestFailures::failPermanentStopsAtOnce()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms, 5, 200ms, 800ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    const auto failed = store.fail(key, c.token, c.attempts, idem::FailureClass::Permanent, "IBAN invalid");
    QCOMPARE(bytes(failed.status), "failed"_b);
    QCOMPARE(failed.attempts, 1);
    QVERIFY(!failed.exhausted);

    QCOMPARE(f(key, "status"), "failed"_b);
    QCOMPARE(f(key, "error_class"), "permanent"_b);
    QCOMPARE(f(key, "error_message"), "IBAN invalid"_b);
    QCOMPARE(f(key, "next_attempt_at"), "<null>"_b);
    QCOMPARE(f(key, "owner_token"), "<null>"_b);
    QCOMPARE(f(key, "errors->0->>'class'"), "permanent"_b);
    QCOMPARE(store.claim(key, digestOf('a')).decision, idem::Decision::Failed);
}

void TestFailures::failExhaustsAttempts()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms, 3));
    const auto key = nextKey();
    idem::FailResult failed;
    for (int attempt = 1; attempt <= 3; ++attempt) {
        std::this_thread::sleep_for(2ms);
        const auto c = store.claim(key, digestOf('a'));
        QVERIFY2(c.mayExecute(), idem::decisionName(c.decision));
        QCOMPARE(c.attempts, attempt);
        QCOMPARE(c.maxAttempts, 3);
        failed = store.fail(key, c.token, c.attempts, idem::FailureClass::Retryable, "boom " + std::to_string(attempt));
        QCOMPARE(failed.attempts, attempt);
        QCOMPARE(failed.exhausted, attempt == 3);
        QCOMPARE(bytes(failed.status), attempt == 3 ? "failed"_b : "retryable_failed"_b);
    }
    QCOMPARE(f(key, "status"), "failed"_b);
    QCOMPARE(f(key, "attempts"), "3"_b);
    QCOMPARE(f(key, "max_attempts"), "3"_b);
    QCOMPARE(f(key, "error_class"), "retryable"_b);
    QCOMPARE(f(key, "error_message"), "boom 3"_b);
    QCOMPARE(f(key, "next_attempt_at"), "<null>"_b);
    QCOMPARE(f(key, "jsonb_array_length(errors)"), "3"_b);
    QCOMPARE(f(key, "idempotency_key"), bytes(key.str()));

    const auto before = row(key);
    const auto after = store.claim(key, digestOf('a'));
    QCOMPARE(after.decision, idem::Decision::Failed);
    QCOMPARE(bytes(after.errorMessage), "boom 3"_b);
    QCOMPARE(after.attempts, 3);
    QCOMPARE(row(key), before);
}

void TestFailures::claimExhaustsExpiredLease()
{
    // Executors that die without recording anything use up attempts too.
    idem::TaskStore store(*m_fx.conn, storeOptions(300ms, 2));
    const auto key = nextKey();
    const auto first = store.claim(key, digestOf('a'));
    std::this_thread::sleep_for(350ms);
    const auto second = store.claim(key, digestOf('a'));
    QCOMPARE(second.decision, idem::Decision::Reacquired);
    QCOMPARE(second.attempts, 2);
    std::this_thread::sleep_for(350ms);

    const auto third = store.claim(key, digestOf('a'));
    QCOMPARE(third.decision, idem::Decision::Failed);
    QCOMPARE(bytes(third.detail), "exhausted"_b);
    QCOMPARE(bytes(third.errorClass), "unknown"_b);
    QCOMPARE(bytes(third.errorMessage), "lease expired with no outcome recorded; attempts exhausted"_b);
    QCOMPARE(third.attempts, 2);

    QCOMPARE(f(key, "status"), "failed"_b);
    QCOMPARE(f(key, "attempts"), "2"_b);
    QCOMPARE(f(key, "owner_token"), "<null>"_b);
    QCOMPARE(f(key, "lease_until"), "<null>"_b);
    pqxx::work tx(*m_fx.conn);
    QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, store.fence(tx, key, second.token));
}

void TestFailures::failExhaustsMaxAge()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms, 10, 0ms, 0ms, 300ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    std::this_thread::sleep_for(350ms);
    const auto failed = store.fail(key, c.token, c.attempts, idem::FailureClass::Retryable, "slow bank");
    QCOMPARE(bytes(failed.status), "failed"_b);
    QVERIFY(failed.exhausted);
    QCOMPARE(failed.attempts, 1);
    QCOMPARE(f(key, "status"), "failed"_b);
    QCOMPARE(f(key, "error_message"), "slow bank"_b);
}

void TestFailures::claimExhaustsMaxAge()
{
    // Young enough to retry: a maximum age of a minute, which no stall of a loaded machine
    // between the claim and the fail reaches.
    idem::TaskStore young(*m_fx.conn, storeOptions(2000ms, 10, 0ms, 0ms, 60s));
    const auto key = nextKey();
    const auto c = young.claim(key, digestOf('a'));
    const auto failed = young.fail(key, c.token, c.attempts, idem::FailureClass::Retryable, "slow bank");
    QCOMPARE(bytes(failed.status), "retryable_failed"_b);

    // A worker whose maximum age is 300 ms, once the database's clock is past it.
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms, 10, 0ms, 0ms, 300ms));
    QVERIFY(idem::test::waitUntil(
        [&] { return f(key, "created_at + interval '300 milliseconds' < clock_timestamp()") == "true"_b; }, 30s));
    const auto again = store.claim(key, digestOf('a'));
    QCOMPARE(again.decision, idem::Decision::Failed);
    QCOMPARE(bytes(again.detail), "exhausted"_b);
    QCOMPARE(bytes(again.errorClass), "retryable"_b);
    QCOMPARE(bytes(again.errorMessage), "slow bank; maximum age reached"_b);
    QCOMPARE(f(key, "status"), "failed"_b);
    QCOMPARE(f(key, "attempts"), "1"_b);
    QCOMPARE(f(key, "error_message"), "slow bank; maximum age reached"_b);
}

void TestFailures::errorHistoryKeepsTwenty()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms, 100));
    const auto key = nextKey();
    for (int attempt = 1; attempt <= 25; ++attempt) {
        std::this_thread::sleep_for(1ms);
        const auto c = store.claim(key, digestOf('a'));
        QVERIFY2(c.mayExecute(), idem::decisionName(c.decision));
        store.fail(key, c.token, c.attempts, idem::FailureClass::Retryable, "failure " + std::to_string(attempt));
    }
    QCOMPARE(f(key, "attempts"), "25"_b);
    QCOMPARE(f(key, "jsonb_array_length(errors)"), "20"_b);
    // The oldest five went; the newest is last.
    QCOMPARE(f(key, "errors->0->'attempt'"), "6"_b);
    QCOMPARE(f(key, "errors->0->>'message'"), "failure 6"_b);
    QCOMPARE(f(key, "errors->19->'attempt'"), "25"_b);
    QCOMPARE(f(key, "errors->19->>'message'"), "failure 25"_b);
    QCOMPARE(f(key,
                 "(SELECT array_agg((e->>'attempt')::int ORDER BY o) FROM jsonb_array_elements(errors)"
                 " WITH ORDINALITY AS x(e, o))"),
        "{6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25}"_b);
}

void TestFailures::hostileValuesRoundTrip_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addRow("quotes") << R"(it's "quoted" '' "")"_b;
    QTest::addRow("SQL injection") << "x'); DROP TABLE idem.task_idempotency; --"_b;
    QTest::addRow("semicolons and dollar quotes") << "a;b;$$;$x$;$1 $2 ?"_b;
    QTest::addRow("percent signs") << "100% %s %d %% %n %1"_b;
    QTest::addRow("backslashes") << R"(C:\path\to\ \\x00 \' \n \u0000)"_b;
    QTest::addRow("control characters") << "\x01\x02\t\n\r\x1b[31mred\x1b[0m\x7f"_b;
    QTest::addRow("unicode") << "Zürich ✓ 日本語 𝄞 \u202Ertl\u202C zero\u200Bwidth e\u0301"_b;
    QTest::addRow("colons") << ":a:b::c:"_b;
    QTest::addRow("whitespace padding") << "  padded \t "_b;
    QTest::addRow("json-looking") << R"({"a": [1, null]})"_b;
    QTest::addRow("500 bytes") << QByteArray("ü").repeated(250);
    QTest::addRow("512 bytes, the limit") << QByteArray(QByteArray(510, 'x') + "é");
}

void TestFailures::hostileValuesRoundTrip()
{
    QFETCH(QByteArray, value);
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms));
    const idem::TaskKey key("hostile", "charge", value.toStdString());
    const std::string message = value.toStdString();

    const auto c = store.claim(key, digestOf('a'));
    QCOMPARE(c.decision, idem::Decision::Acquired);
    QCOMPARE(
        scalar(*m_fx.admin, "SELECT count(*)::text FROM idem.task_idempotency WHERE idempotency_key = $1", key.str()),
        "1"_b);
    const auto stored = f(key, "idempotency_key");
    QCOMPARE(stored, bytes(key.str()));
    QVERIFY(idem::TaskKey::parse(stored.toStdString()) == key);

    store.fail(key, c.token, c.attempts, idem::FailureClass::Retryable, message);
    QCOMPARE(f(key, "error_message"), value);
    QCOMPARE(f(key, "errors->0->>'message'"), value);
    std::this_thread::sleep_for(2ms);

    const auto again = store.claim(key, digestOf('a'));
    QCOMPARE(again.decision, idem::Decision::Reacquired);
    QCOMPARE(bytes(again.errorMessage), value);

    // And as a value inside the stored result.
    const std::string result = nlohmann::json { { "id", message } }.dump();
    {
        pqxx::work tx(*m_fx.conn);
        store.fence(tx, key, again.token);
        store.complete(tx, key, again.token, result);
        tx.commit();
    }
    const auto replay = store.claim(key, digestOf('a'));
    QCOMPARE(replay.decision, idem::Decision::Replay);
    QCOMPARE(bytes(nlohmann::json::parse(replay.resultJson).at("id").get<std::string>()), value);
}

void TestFailures::longMessageTruncated_data()
{
    QTest::addColumn<QByteArray>("unit");
    QTest::addRow("ASCII") << "x"_b;
    QTest::addRow("two-byte characters") << "é"_b; // characters, not bytes, are counted
}

void TestFailures::longMessageTruncated()
{
    QFETCH(QByteArray, unit);
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    const QByteArray message = unit.repeated(10 * 1024);
    store.fail(key, c.token, c.attempts, idem::FailureClass::Retryable, message.toStdString());

    const QByteArray kept = unit.repeated(8192);
    QCOMPARE(f(key, "char_length(error_message)"), "8192"_b);
    QCOMPARE(f(key, "error_message"), kept);
    QCOMPARE(f(key, "errors->0->>'message'"), kept);
    std::this_thread::sleep_for(2ms);
    QCOMPARE(bytes(store.claim(key, digestOf('a')).errorMessage), kept);
}

QTEST_GUILESS_MAIN(TestFailures)
#include "tst_failures.moc"
