#include <QtTest>

#include <QUuid>

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

// Every decision of claim / fence / complete / heartbeat against the real database: what the
// caller is told and what the row holds afterwards.
class TestProtocol : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        IDEM_REQUIRE_DATABASE();
        m_fx.open("protocol");
    }
    void cleanupTestCase() { m_fx.close(); }

    void claimAcquired();
    void claimInProgress();
    void claimConflict_data();
    void claimConflict();
    void claimReplay_data();
    void claimReplay();
    void claimRetryLater();
    void claimReacquiredAfterLeaseExpiry();
    void claimReacquiredWhenRetryDue();
    void claimFailedAfterPermanent();
    void completeCommitsWithBusinessWrite();
    void uncommittedCompleteLeavesNothing();
    void lostTokenCannotCommit_data();
    void lostTokenCannotCommit();
    void succeededRowNeverChanges_data();
    void succeededRowNeverChanges();
    void heartbeatExtendsLease();
    void heartbeatWithLostToken();

private:
    idem::TaskKey nextKey() { return m_fx.nextKey("proto"); }
    int businessRows(const idem::TaskKey& key) { return m_fx.businessRows(key); }
    QByteArray f(const idem::TaskKey& key, const std::string& expr)
    {
        return idem::test::field(*m_fx.admin, key, expr);
    }
    QByteArray row(const idem::TaskKey& key) { return idem::test::rowJson(*m_fx.admin, key); }

    idem::test::ProtocolFixture m_fx;
};

void TestProtocol::claimAcquired()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));

    QCOMPARE(c.decision, idem::Decision::Acquired);
    QVERIFY(c.mayExecute());
    QCOMPARE(bytes(c.detail), "new"_b);
    QCOMPARE(c.attempts, 1);
    QCOMPARE(c.maxAttempts, 5);
    QVERIFY(!QUuid::fromString(QString::fromStdString(c.token)).isNull());
    QCOMPARE(c.retryAfter, 0ms);

    QCOMPARE(f(key, "status"), "processing"_b);
    QCOMPARE(f(key, "owner_token"), bytes(c.token));
    QCOMPARE(f(key, "attempts"), "1"_b);
    QCOMPARE(f(key, "max_attempts"), "5"_b);
    QCOMPARE(f(key, "request_hash"), bytes(digestOf('a')));
    QCOMPARE(f(key, "lease_until > now()"), "true"_b);
    // Exactly the configured lease from the claim's own clock.
    QCOMPARE(f(key, "round(extract(epoch FROM lease_until - updated_at) * 1000)"), "2000"_b);
    QCOMPARE(f(key, "created_at = updated_at"), "true"_b);
    QCOMPARE(f(key, "result_json"), "<null>"_b);
    QCOMPARE(f(key, "next_attempt_at"), "<null>"_b);
    QCOMPARE(f(key, "error_class"), "<null>"_b);
    QCOMPARE(f(key, "errors"), "[]"_b);
}

void TestProtocol::claimInProgress()
{
    // A lease of a minute: no stall of a loaded machine between the two claims reaches its end.
    idem::TaskStore a(*m_fx.conn, storeOptions(60s));
    idem::TaskStore b(*m_fx.other, storeOptions(60s));
    const auto key = nextKey();
    const auto first = a.claim(key, digestOf('a'));
    QVERIFY(first.mayExecute());
    const auto before = row(key);

    std::this_thread::sleep_for(200ms);
    const auto second = b.claim(key, digestOf('a'));
    QCOMPARE(second.decision, idem::Decision::InProgress);
    QVERIFY(!second.mayExecute());
    QCOMPARE(bytes(second.detail), "lease_live"_b);
    QVERIFY(second.token.empty());
    QCOMPARE(second.attempts, 1);
    // What is left of the lease: 60 s less at least the 200 ms slept (and whatever the claims took).
    QVERIFY2(second.retryAfter > 30s && second.retryAfter <= 59800ms,
        qPrintable(QString::number(second.retryAfter.count())));
    QCOMPARE(row(key), before);
}

void TestProtocol::claimConflict_data()
{
    QTest::addColumn<QByteArray>("status");
    QTest::addRow("while processing") << "processing"_b;
    QTest::addRow("after success") << "succeeded"_b;
    QTest::addRow("in backoff") << "retryable_failed"_b;
    QTest::addRow("after permanent failure") << "failed"_b;
}

void TestProtocol::claimConflict()
{
    QFETCH(QByteArray, status);
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms, 5, 60s, 60s));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    QVERIFY(c.mayExecute());
    if (status == "succeeded") {
        pqxx::work tx(*m_fx.conn);
        store.fence(tx, key, c.token);
        store.complete(tx, key, c.token, R"({"charged": 100})");
        tx.commit();
    } else if (status == "retryable_failed") {
        pqxx::work w(*m_fx.conn);
        w.exec_params(
            "SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'gateway timeout', 60000)", key.str(), c.token);
        w.commit();
    } else if (status == "failed") {
        store.fail(key, c.token, c.attempts, idem::FailureClass::Permanent, "card declined");
    }
    QCOMPARE(f(key, "status"), status);
    const auto before = row(key);
    std::this_thread::sleep_for(5ms); // a changed updated_at would show

    const auto other = store.claim(key, digestOf('b'));
    QCOMPARE(other.decision, idem::Decision::Conflict);
    QVERIFY(!other.mayExecute());
    QVERIFY(other.storedDigest.empty()); // schema v13: a conflict does not reveal the stored digest
    QCOMPARE(bytes(other.detail), status);
    QVERIFY(other.token.empty());
    QVERIFY(other.resultJson.empty());

    QCOMPARE(row(key), before); // request_hash, status, result_json, updated_at: all of it
    QCOMPARE(f(key, "request_hash"), bytes(digestOf('a')));
}

void TestProtocol::claimReplay_data()
{
    QTest::addColumn<QByteArray>("result");
    QTest::addRow("object") << R"({"charge_id": "ch_1", "amount": 1250, "currency": "EUR"})"_b;
    QTest::addRow("nested, unordered, spaced") << R"({ "z" : [1, 2.50, {"b":null, "a":true}], "a": "x" })"_b;
    QTest::addRow("string with escapes and unicode") << R"("line\nbreak \"q\" \\ \u00e9 \ud83d\ude00 Zürich")"_b;
    QTest::addRow("number") << "12345678901234567890.125"_b;
    QTest::addRow("empty array") << "[]"_b;
    QTest::addRow("json null") << "null"_b;
}

void TestProtocol::claimReplay()
{
    QFETCH(QByteArray, result);
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    QVERIFY(c.mayExecute());
    {
        pqxx::work tx(*m_fx.conn);
        store.fence(tx, key, c.token);
        store.complete(tx, key, c.token, result.toStdString());
        tx.commit();
    }
    QCOMPARE(f(key, "status"), "succeeded"_b);
    const auto before = row(key);

    const auto again = store.claim(key, digestOf('a'));
    QCOMPARE(again.decision, idem::Decision::Replay);
    QVERIFY(!again.mayExecute());
    QCOMPARE(again.attempts, 1);
    // Byte-equal to what the database stores, and the same JSON value the executor produced.
    QCOMPARE(bytes(again.resultJson), f(key, "result_json"));
    QCOMPARE(nlohmann::json::parse(again.resultJson), nlohmann::json::parse(result.toStdString()));
    QCOMPARE(row(key), before);
}

void TestProtocol::claimRetryLater()
{
    idem::TaskStore a(*m_fx.conn, storeOptions(2000ms));
    idem::TaskStore b(*m_fx.other, storeOptions(2000ms));
    const auto key = nextKey();
    const auto c = a.claim(key, digestOf('a'));
    {
        // A fixed delay through the SQL API: the store's own would be drawn from the jitter window.
        pqxx::work w(*m_fx.conn);
        w.exec_params(
            "SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'gateway timeout', 60000)", key.str(), c.token);
        w.commit();
    }
    const auto before = row(key);
    // Every claimer respects next_attempt_at, not only the one that failed.
    for (auto* store : { &a, &b }) {
        const auto later = store->claim(key, digestOf('a'));
        QCOMPARE(later.decision, idem::Decision::RetryLater);
        QVERIFY(!later.mayExecute());
        QVERIFY(later.token.empty());
        QCOMPARE(bytes(later.detail), "retryable"_b);
        QCOMPARE(bytes(later.errorClass), "retryable"_b);
        QCOMPARE(bytes(later.errorMessage), "gateway timeout"_b);
        QCOMPARE(later.attempts, 1);
        QVERIFY2(
            later.retryAfter > 55s && later.retryAfter <= 60s, qPrintable(QString::number(later.retryAfter.count())));
    }
    QCOMPARE(row(key), before);
}

void TestProtocol::claimReacquiredAfterLeaseExpiry()
{
    idem::TaskStore a(*m_fx.conn, storeOptions(60s));
    idem::TaskStore b(*m_fx.other, storeOptions(60s));
    const auto key = nextKey();
    const auto first = a.claim(key, digestOf('a'));
    QVERIFY(first.mayExecute());
    // Before expiry the lease (a minute) holds.
    QCOMPARE(b.claim(key, digestOf('a')).decision, idem::Decision::InProgress);

    // The executor's last heartbeat asks for 300 ms more, then it goes silent. Once the
    // database's clock is past that lease, another worker takes the task over.
    idem::TaskStore dying(*m_fx.conn, storeOptions(300ms));
    dying.heartbeat(key, first.token);
    QVERIFY(idem::test::waitUntil([&] { return f(key, "lease_until < clock_timestamp()") == "true"_b; }, 30s));
    const auto second = b.claim(key, digestOf('a'));
    QCOMPARE(second.decision, idem::Decision::Reacquired);
    QVERIFY(second.mayExecute());
    QCOMPARE(bytes(second.detail), "lease_expired"_b);
    QCOMPARE(second.attempts, 2);
    QVERIFY(!second.token.empty());
    QVERIFY(second.token != first.token);

    QCOMPARE(f(key, "status"), "processing"_b);
    QCOMPARE(f(key, "owner_token"), bytes(second.token));
    QCOMPARE(f(key, "attempts"), "2"_b);
    QCOMPARE(f(key, "lease_until > now()"), "true"_b);
    QCOMPARE(f(key, "created_at < updated_at"), "true"_b);
}

void TestProtocol::claimReacquiredWhenRetryDue()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms)); // no backoff: due at once
    const auto key = nextKey();
    const auto first = store.claim(key, digestOf('a'));
    const auto failed = store.fail(key, first.token, first.attempts, idem::FailureClass::Retryable, "503 from bank");
    QCOMPARE(bytes(failed.status), "retryable_failed"_b);
    QCOMPARE(failed.retryDelay, 0ms);
    std::this_thread::sleep_for(5ms);

    const auto second = store.claim(key, digestOf('a'));
    QCOMPARE(second.decision, idem::Decision::Reacquired);
    QCOMPARE(bytes(second.detail), "retry_due"_b);
    QCOMPARE(second.attempts, 2);
    QVERIFY(second.token != first.token);
    // The executor learns what went wrong last time.
    QCOMPARE(bytes(second.errorClass), "retryable"_b);
    QCOMPARE(bytes(second.errorMessage), "503 from bank"_b);

    QCOMPARE(f(key, "status"), "processing"_b);
    QCOMPARE(f(key, "owner_token"), bytes(second.token));
    QCOMPARE(f(key, "next_attempt_at"), "<null>"_b);
    QCOMPARE(f(key, "jsonb_array_length(errors)"), "1"_b);
}

void TestProtocol::claimFailedAfterPermanent()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(300ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    const auto failed = store.fail(key, c.token, c.attempts, idem::FailureClass::Permanent, "card declined");
    QCOMPARE(bytes(failed.status), "failed"_b);
    QVERIFY(!failed.exhausted);
    const auto before = row(key);

    // Not after the lease either, and not with a fresh token: failed stays failed.
    std::this_thread::sleep_for(350ms);
    for (int i = 0; i < 2; ++i) {
        const auto again = store.claim(key, digestOf('a'));
        QCOMPARE(again.decision, idem::Decision::Failed);
        QVERIFY(!again.mayExecute());
        QCOMPARE(bytes(again.detail), "failed"_b);
        QCOMPARE(bytes(again.errorClass), "permanent"_b);
        QCOMPARE(bytes(again.errorMessage), "card declined"_b);
        QCOMPARE(again.attempts, 1);
    }
    QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, store.heartbeat(key, c.token));
    QVERIFY_THROWS_EXCEPTION(
        idem::LostOwnership, store.fail(key, c.token, 1, idem::FailureClass::Retryable, "try again"));
    QCOMPARE(row(key), before);
    QCOMPARE(f(key, "status"), "failed"_b);
    QCOMPARE(f(key, "owner_token"), "<null>"_b);
}

void TestProtocol::completeCommitsWithBusinessWrite()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    {
        pqxx::work tx(*m_fx.conn);
        store.fence(tx, key, c.token);
        tx.exec_params("INSERT INTO payments VALUES ($1, 1250, $2::uuid)", key.str(), c.token);
        store.complete(tx, key, c.token, R"({"charge_id": "ch_1"})");
        // Not visible to anyone before the commit.
        QCOMPARE(businessRows(key), 0);
        QCOMPARE(f(key, "status"), "processing"_b);
        tx.commit();
    }
    QCOMPARE(businessRows(key), 1);
    QCOMPARE(f(key, "status"), "succeeded"_b);
    QCOMPARE(f(key, "result_json"), R"({"charge_id": "ch_1"})"_b);
    QCOMPARE(f(key, "owner_token"), "<null>"_b);
    QCOMPARE(f(key, "lease_until"), "<null>"_b);
    QCOMPARE(f(key, "attempts"), "1"_b);
}

void TestProtocol::uncommittedCompleteLeavesNothing()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    const auto before = row(key);
    {
        pqxx::work tx(*m_fx.conn);
        store.fence(tx, key, c.token);
        tx.exec_params("INSERT INTO payments VALUES ($1, 1250, $2::uuid)", key.str(), c.token);
        store.complete(tx, key, c.token, "{}");
        // The worker dies (or throws) before commit: the transaction aborts.
    }
    QCOMPARE(businessRows(key), 0);
    QCOMPARE(row(key), before);
}

void TestProtocol::lostTokenCannotCommit_data()
{
    QTest::addColumn<bool>("fenceFirst");
    QTest::addRow("fence before the business write") << true;
    QTest::addRow("business write, then complete") << false;
}

void TestProtocol::lostTokenCannotCommit()
{
    QFETCH(bool, fenceFirst);
    idem::TaskStore a(*m_fx.conn, storeOptions(300ms));
    idem::TaskStore b(*m_fx.other, storeOptions(300ms));
    const auto key = nextKey();
    const auto stale = a.claim(key, digestOf('a'));
    std::this_thread::sleep_for(400ms);
    const auto fresh = b.claim(key, digestOf('a'));
    QCOMPARE(fresh.decision, idem::Decision::Reacquired);
    const auto takenOver = row(key);

    // The stale executor wakes up and tries to finish.
    {
        pqxx::work tx(*m_fx.conn);
        if (fenceFirst) {
            QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, a.fence(tx, key, stale.token));
        } else {
            tx.exec_params("INSERT INTO payments VALUES ($1, 1, $2::uuid)", key.str(), stale.token);
            QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, a.complete(tx, key, stale.token, R"({"by": "stale"})"));
            // Even a caller that ignores the error and commits cannot land its write: the
            // server rolls the failed transaction back.
            try {
                tx.commit();
            } catch (const std::exception&) {
            }
        }
    }
    QCOMPARE(businessRows(key), 0);
    QCOMPARE(row(key), takenOver);
    QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, a.heartbeat(key, stale.token));
    QVERIFY_THROWS_EXCEPTION(
        idem::LostOwnership, a.fail(key, stale.token, stale.attempts, idem::FailureClass::Retryable, "late"));
    QCOMPARE(row(key), takenOver);

    // The new owner completes, once.
    {
        pqxx::work tx(*m_fx.other);
        b.fence(tx, key, fresh.token);
        tx.exec_params("INSERT INTO payments VALUES ($1, 2, $2::uuid)", key.str(), fresh.token);
        b.complete(tx, key, fresh.token, R"({"by": "fresh"})");
        tx.commit();
    }
    QCOMPARE(businessRows(key), 1);
    QCOMPARE(scalar(*m_fx.admin, "SELECT by_token::text FROM payments WHERE idempotency_key = $1", key.str()),
        bytes(fresh.token));
    QCOMPARE(f(key, "status"), "succeeded"_b);
    QCOMPARE(f(key, "result_json"), R"({"by": "fresh"})"_b);
    QCOMPARE(f(key, "attempts"), "2"_b);

    // And the stale one still cannot, now that the row is finished.
    {
        pqxx::work tx(*m_fx.conn);
        QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, a.complete(tx, key, stale.token, R"({"by": "stale"})"));
    }
    QCOMPARE(businessRows(key), 1);
}

namespace {
enum class Poke {
    ClaimSameDigest,
    ClaimOtherDigest,
    ClaimAfterLease,
    SqlClaimWouldExhaust,
    FailRetryable,
    FailPermanent,
    FailUnknown,
    SqlFail,
    Heartbeat,
    Fence,
    CompleteAgain,
};
} // namespace

void TestProtocol::succeededRowNeverChanges_data()
{
    QTest::addColumn<int>("poke");
    QTest::addRow("claim, same digest") << static_cast<int>(Poke::ClaimSameDigest);
    QTest::addRow("claim, other digest") << static_cast<int>(Poke::ClaimOtherDigest);
    QTest::addRow("claim, long after the lease") << static_cast<int>(Poke::ClaimAfterLease);
    QTest::addRow("SQL claim, max_attempts 1 and max age 1 ms") << static_cast<int>(Poke::SqlClaimWouldExhaust);
    QTest::addRow("fail retryable, old token") << static_cast<int>(Poke::FailRetryable);
    QTest::addRow("fail permanent, old token") << static_cast<int>(Poke::FailPermanent);
    QTest::addRow("fail unknown, old token") << static_cast<int>(Poke::FailUnknown);
    QTest::addRow("SQL fail, old token") << static_cast<int>(Poke::SqlFail);
    QTest::addRow("heartbeat, old token") << static_cast<int>(Poke::Heartbeat);
    QTest::addRow("fence, old token") << static_cast<int>(Poke::Fence);
    QTest::addRow("complete again, old token") << static_cast<int>(Poke::CompleteAgain);
}

void TestProtocol::succeededRowNeverChanges()
{
    QFETCH(int, poke);
    idem::TaskStore store(*m_fx.conn, storeOptions(300ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    {
        pqxx::work tx(*m_fx.conn);
        store.fence(tx, key, c.token);
        store.complete(tx, key, c.token, R"({"done": true})");
        tx.commit();
    }
    const auto before = row(key);
    QVERIFY(before.contains(R"("status":"succeeded")"));
    std::this_thread::sleep_for(5ms);

    const auto lost = [&](auto&& fn) {
        try {
            fn();
        } catch (const idem::LostOwnership&) {
            return true;
        }
        return false;
    };
    switch (static_cast<Poke>(poke)) {
    case Poke::ClaimSameDigest:
        QCOMPARE(store.claim(key, digestOf('a')).decision, idem::Decision::Replay);
        break;
    case Poke::ClaimOtherDigest:
        QCOMPARE(store.claim(key, digestOf('b')).decision, idem::Decision::Conflict);
        break;
    case Poke::ClaimAfterLease:
        std::this_thread::sleep_for(350ms);
        QCOMPARE(store.claim(key, digestOf('a')).decision, idem::Decision::Replay);
        break;
    case Poke::SqlClaimWouldExhaust: {
        pqxx::work w(*m_fx.other);
        const auto r = w.exec_params("SELECT decision FROM idem.claim($1, $2, $3::uuid, 1000, 1, 1)", key.str(),
            digestOf('a'), idem::TaskStore::newToken());
        w.commit();
        QCOMPARE(bytes(r[0][0].as<std::string>()), "replay"_b);
        break;
    }
    case Poke::FailRetryable:
        QVERIFY(lost([&] { store.fail(key, c.token, 1, idem::FailureClass::Retryable, "x"); }));
        break;
    case Poke::FailPermanent:
        QVERIFY(lost([&] { store.fail(key, c.token, 1, idem::FailureClass::Permanent, "x"); }));
        break;
    case Poke::FailUnknown:
        QVERIFY(lost([&] { store.fail(key, c.token, 1, idem::FailureClass::Unknown, "x"); }));
        break;
    case Poke::SqlFail:
        try {
            pqxx::work w(*m_fx.other);
            w.exec_params("SELECT * FROM idem.fail($1, $2::uuid, 'permanent', 'x', 0)", key.str(), c.token);
            w.commit();
            QFAIL("fail on a succeeded row was accepted");
        } catch (const pqxx::sql_error& e) {
            QCOMPARE(QString::fromStdString(e.sqlstate()), QStringLiteral("ID001"));
        }
        break;
    case Poke::Heartbeat:
        QVERIFY(lost([&] { store.heartbeat(key, c.token); }));
        break;
    case Poke::Fence:
        QVERIFY(lost([&] {
            pqxx::work tx(*m_fx.conn);
            store.fence(tx, key, c.token);
        }));
        break;
    case Poke::CompleteAgain:
        QVERIFY(lost([&] {
            pqxx::work tx(*m_fx.conn);
            store.complete(tx, key, c.token, R"({"done": "twice"})");
            tx.commit();
        }));
        break;
    }
    QCOMPARE(row(key), before);
}

void TestProtocol::heartbeatExtendsLease()
{
    // Claimed for 600 ms; the heartbeat (the same executor, asking for a minute) extends it from
    // its own clock. A minute is past any stall of a loaded machine.
    idem::TaskStore a(*m_fx.conn, storeOptions(600ms));
    idem::TaskStore aLonger(*m_fx.conn, storeOptions(60s));
    idem::TaskStore b(*m_fx.other, storeOptions(60s));
    const auto key = nextKey();
    const auto c = a.claim(key, digestOf('a'));
    const auto leaseBefore = f(key, "extract(epoch FROM lease_until)").toDouble();
    QCOMPARE(f(key, "round(extract(epoch FROM lease_until - updated_at) * 1000)"), "600"_b);
    std::this_thread::sleep_for(300ms);

    const auto until = aLonger.heartbeat(key, c.token);
    const double stored = f(key, "extract(epoch FROM lease_until)").toDouble();
    const double returned = std::chrono::duration<double>(until.time_since_epoch()).count();
    QVERIFY2(std::abs(stored - returned) < 0.001, qPrintable(QString::number(stored - returned)));
    // From the heartbeat's clock, at least the 300 ms slept after the claim's.
    QCOMPARE(f(key, "round(extract(epoch FROM lease_until - updated_at) * 1000)"), "60000"_b);
    QVERIFY(f(key, "extract(epoch FROM updated_at)").toDouble() > leaseBefore - 0.6 + 0.25);
    QCOMPARE(f(key, "owner_token"), bytes(c.token));
    QCOMPARE(f(key, "attempts"), "1"_b);

    // Past the first lease by the database's clock, inside the extended one: still in progress
    // for everyone else.
    QVERIFY(idem::test::waitUntil(
        [&] { return scalar(*m_fx.admin, "SELECT (clock_timestamp() > to_timestamp($1::float8))::text", leaseBefore) == "true"_b; },
        30s));
    const auto other = b.claim(key, digestOf('a'));
    QCOMPARE(other.decision, idem::Decision::InProgress);
    QCOMPARE(bytes(other.detail), "lease_live"_b);
}

void TestProtocol::heartbeatWithLostToken()
{
    idem::TaskStore a(*m_fx.conn, storeOptions(300ms));
    idem::TaskStore b(*m_fx.other, storeOptions(300ms));
    const auto key = nextKey();
    const auto stale = a.claim(key, digestOf('a'));
    std::this_thread::sleep_for(350ms);
    const auto fresh = b.claim(key, digestOf('a'));
    QCOMPARE(fresh.decision, idem::Decision::Reacquired);
    const auto before = row(key);

    QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, a.heartbeat(key, stale.token));
    QCOMPARE(row(key), before);
    // The owner's heartbeat still works.
    b.heartbeat(key, fresh.token);
    QCOMPARE(f(key, "owner_token"), bytes(fresh.token));
}

QTEST_GUILESS_MAIN(TestProtocol)
#include "tst_protocol.moc"
