#include <QtTest>

#include <QUuid>

#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>
#include <pqxx/pqxx>
#include <thread>
#include <typeinfo>

#include "core/taskstore.h"
#include "tests/support/taskrows.h"

using namespace std::chrono_literals;
using idem::test::operator""_b;
using idem::test::bytes;
using idem::test::digestOf;
using idem::test::field;
using idem::test::rowJson;
using idem::test::scalar;
using idem::test::storeOptions;

// Every decision of claim / fence / complete / heartbeat / fail against the real database:
// what the caller is told and what the row holds afterwards.
class TestProtocol : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

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
    void claimExhaustsExpiredLease();

    void completeCommitsWithBusinessWrite();
    void uncommittedCompleteLeavesNothing();
    void lostTokenCannotCommit_data();
    void lostTokenCannotCommit();

    void sqlApiErrors_data();
    void sqlApiErrors();
    void succeededRowNeverChanges_data();
    void succeededRowNeverChanges();

    void failRetryableBacksOff();
    void failPermanentStopsAtOnce();
    void failExhaustsAttempts();
    void failExhaustsMaxAge();
    void claimExhaustsMaxAge();
    void errorHistoryKeepsTwenty();
    void hostileValuesRoundTrip_data();
    void hostileValuesRoundTrip();
    void longMessageTruncated_data();
    void longMessageTruncated();

    void heartbeatExtendsLease();
    void heartbeatWithLostToken();

    void brokenConnection_data();
    void brokenConnection();
    void serializationFailureRetried_data();
    void serializationFailureRetried();
    void badOptionsRejected_data();
    void badOptionsRejected();

private:
    idem::TaskKey nextKey(const std::string& tenant = "proto");
    int businessRows(const idem::TaskKey& key);
    QByteArray f(const idem::TaskKey& key, const std::string& expr) { return field(*m_admin, key, expr); }
    QByteArray row(const idem::TaskKey& key) { return rowJson(*m_admin, key); }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn; // worker A
    std::unique_ptr<pqxx::connection> m_other; // worker B
    std::unique_ptr<pqxx::connection> m_admin; // reads and setup
    int m_keys = 0;
};

idem::TaskKey TestProtocol::nextKey(const std::string& tenant)
{
    std::string id = QTest::currentTestFunction();
    if (const char* tag = QTest::currentDataTag())
        id += std::string("/") + tag;
    return idem::TaskKey(tenant, "charge", id + "#" + std::to_string(++m_keys));
}

int TestProtocol::businessRows(const idem::TaskKey& key)
{
    return scalar(*m_admin, "SELECT count(*)::text FROM payments WHERE idempotency_key = $1", key.str()).toInt();
}

void TestProtocol::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = idem::test::migratedDatabase("protocol");
    m_conn = m_db->connect();
    m_other = m_db->connect();
    m_admin = m_db->connect();
    pqxx::work w(*m_admin);
    // The caller's business table: no unique key, so a double effect would show as two rows.
    w.exec("CREATE TABLE payments (idempotency_key text NOT NULL, amount integer NOT NULL, by_token uuid)");
    w.commit();
}

void TestProtocol::cleanupTestCase()
{
    m_conn.reset();
    m_other.reset();
    m_admin.reset();
    m_db.reset();
}

void TestProtocol::claimAcquired()
{
    idem::TaskStore store(*m_conn, storeOptions(2000ms));
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
    idem::TaskStore a(*m_conn, storeOptions(2000ms));
    idem::TaskStore b(*m_other, storeOptions(2000ms));
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
    // What is left of the lease: 2000 ms less the 200 ms slept (and whatever the claims took).
    QVERIFY2(second.retryAfter > 1000ms && second.retryAfter <= 1800ms,
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
    idem::TaskStore store(*m_conn, storeOptions(2000ms, 5, 60s, 60s));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    QVERIFY(c.mayExecute());
    if (status == "succeeded") {
        pqxx::work tx(*m_conn);
        store.fence(tx, key, c.token);
        store.complete(tx, key, c.token, R"({"charged": 100})");
        tx.commit();
    } else if (status == "retryable_failed") {
        pqxx::work w(*m_conn);
        w.exec_params("SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'gateway timeout', 60000)", key.str(),
                      c.token);
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
    QCOMPARE(bytes(other.storedDigest), bytes(digestOf('a')));
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
    idem::TaskStore store(*m_conn, storeOptions(2000ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    QVERIFY(c.mayExecute());
    {
        pqxx::work tx(*m_conn);
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
    idem::TaskStore a(*m_conn, storeOptions(2000ms));
    idem::TaskStore b(*m_other, storeOptions(2000ms));
    const auto key = nextKey();
    const auto c = a.claim(key, digestOf('a'));
    {
        // A fixed delay through the SQL API: the store's own would be drawn from the jitter window.
        pqxx::work w(*m_conn);
        w.exec_params("SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'gateway timeout', 60000)", key.str(),
                      c.token);
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
        QVERIFY2(later.retryAfter > 55s && later.retryAfter <= 60s,
                 qPrintable(QString::number(later.retryAfter.count())));
    }
    QCOMPARE(row(key), before);
}

void TestProtocol::claimReacquiredAfterLeaseExpiry()
{
    idem::TaskStore a(*m_conn, storeOptions(300ms));
    idem::TaskStore b(*m_other, storeOptions(300ms));
    const auto key = nextKey();
    const auto first = a.claim(key, digestOf('a'));
    QVERIFY(first.mayExecute());
    // Before expiry the lease holds.
    QCOMPARE(b.claim(key, digestOf('a')).decision, idem::Decision::InProgress);

    std::this_thread::sleep_for(400ms);
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
    idem::TaskStore store(*m_conn, storeOptions(2000ms)); // no backoff: due at once
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
    idem::TaskStore store(*m_conn, storeOptions(300ms));
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
    QVERIFY_THROWS_EXCEPTION(idem::LostOwnership,
                             store.fail(key, c.token, 1, idem::FailureClass::Retryable, "try again"));
    QCOMPARE(row(key), before);
    QCOMPARE(f(key, "status"), "failed"_b);
    QCOMPARE(f(key, "owner_token"), "<null>"_b);
}

void TestProtocol::claimExhaustsExpiredLease()
{
    // Executors that die without recording anything use up attempts too.
    idem::TaskStore store(*m_conn, storeOptions(300ms, 2));
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
    pqxx::work tx(*m_conn);
    QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, store.fence(tx, key, second.token));
}

void TestProtocol::completeCommitsWithBusinessWrite()
{
    idem::TaskStore store(*m_conn, storeOptions(2000ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    {
        pqxx::work tx(*m_conn);
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
    idem::TaskStore store(*m_conn, storeOptions(2000ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    const auto before = row(key);
    {
        pqxx::work tx(*m_conn);
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
    idem::TaskStore a(*m_conn, storeOptions(300ms));
    idem::TaskStore b(*m_other, storeOptions(300ms));
    const auto key = nextKey();
    const auto stale = a.claim(key, digestOf('a'));
    std::this_thread::sleep_for(400ms);
    const auto fresh = b.claim(key, digestOf('a'));
    QCOMPARE(fresh.decision, idem::Decision::Reacquired);
    const auto takenOver = row(key);

    // The stale executor wakes up and tries to finish.
    {
        pqxx::work tx(*m_conn);
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
    QVERIFY_THROWS_EXCEPTION(idem::LostOwnership,
                             a.fail(key, stale.token, stale.attempts, idem::FailureClass::Retryable, "late"));
    QCOMPARE(row(key), takenOver);

    // The new owner completes, once.
    {
        pqxx::work tx(*m_other);
        b.fence(tx, key, fresh.token);
        tx.exec_params("INSERT INTO payments VALUES ($1, 2, $2::uuid)", key.str(), fresh.token);
        b.complete(tx, key, fresh.token, R"({"by": "fresh"})");
        tx.commit();
    }
    QCOMPARE(businessRows(key), 1);
    QCOMPARE(scalar(*m_admin, "SELECT by_token::text FROM payments WHERE idempotency_key = $1", key.str()),
             bytes(fresh.token));
    QCOMPARE(f(key, "status"), "succeeded"_b);
    QCOMPARE(f(key, "result_json"), R"({"by": "fresh"})"_b);
    QCOMPARE(f(key, "attempts"), "2"_b);

    // And the stale one still cannot, now that the row is finished.
    {
        pqxx::work tx(*m_conn);
        QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, a.complete(tx, key, stale.token, R"({"by": "stale"})"));
    }
    QCOMPARE(businessRows(key), 1);
}

namespace {
enum class KeyKind { Claimed, Unknown, Empty, TooLong };
enum class TokenKind { Owner, Other };
} // namespace

void TestProtocol::sqlApiErrors_data()
{
    // $1 is the key and $2 the token in every statement; an empty sqlstate means it must succeed
    // (the control that shows the statement itself is right).
    QTest::addColumn<QString>("sql");
    QTest::addColumn<int>("keyKind");
    QTest::addColumn<int>("tokenKind");
    QTest::addColumn<QString>("sqlstate");
    const auto add = [](const char* name, const char* sql, KeyKind k, TokenKind t, const char* state) {
        QTest::addRow("%s", name) << QString::fromLatin1(sql) << static_cast<int>(k) << static_cast<int>(t)
                                  << QString::fromLatin1(state);
    };
    const auto claimed = KeyKind::Claimed;
    const auto owner = TokenKind::Owner;
    const auto other = TokenKind::Other;
    add("fence, owner token", "SELECT * FROM idem.fence($1, $2::uuid)", claimed, owner, "");
    add("fence, other token", "SELECT * FROM idem.fence($1, $2::uuid)", claimed, other, "ID001");
    add("fence, unknown key", "SELECT * FROM idem.fence($1, $2::uuid)", KeyKind::Unknown, owner, "ID002");
    add("complete, owner token", "SELECT idem.complete($1, $2::uuid, '{}')", claimed, owner, "");
    add("complete, other token", "SELECT idem.complete($1, $2::uuid, '{}')", claimed, other, "ID001");
    add("complete, unknown key", "SELECT idem.complete($1, $2::uuid, '{}')", KeyKind::Unknown, owner, "ID001");
    add("complete, oversize result", "SELECT idem.complete($1, $2::uuid, '\"0123456789\"', 8)", claimed, owner,
        "ID003");
    add("heartbeat, owner token", "SELECT idem.heartbeat($1, $2::uuid, 1000)", claimed, owner, "");
    add("heartbeat, other token", "SELECT idem.heartbeat($1, $2::uuid, 1000)", claimed, other, "ID001");
    add("heartbeat, zero lease", "SELECT idem.heartbeat($1, $2::uuid, 0)", claimed, owner, "ID003");
    add("fail, owner token", "SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'm', 0)", claimed, owner, "");
    add("fail, other token", "SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'm', 0)", claimed, other, "ID001");
    add("fail, class bogus", "SELECT * FROM idem.fail($1, $2::uuid, 'bogus', 'm', 0)", claimed, owner, "ID003");
    add("fail, class null", "SELECT * FROM idem.fail($1, $2::uuid, NULL, 'm', 0)", claimed, owner, "ID003");
    add("fail, negative delay", "SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'm', -1)", claimed, owner,
        "ID003");
    add("claim, empty key", "SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, 1000)", KeyKind::Empty, other, "ID003");
    add("claim, key over 1024 bytes", "SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, 1000)", KeyKind::TooLong,
        other, "ID003");
    add("claim, new key", "SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, 1000)", KeyKind::Unknown, other, "");
    add("claim, empty digest", "SELECT * FROM idem.claim($1, '', $2::uuid, 1000)", claimed, other, "ID003");
    add("claim, zero lease", "SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, 0)", claimed, other, "ID003");
    add("claim, zero max attempts", "SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, 1000, 0)", claimed, other,
        "ID003");
    add("claim, null token", "SELECT * FROM idem.claim($1, 'v1:x', NULLIF($2::uuid, $2::uuid), 1000)", claimed,
        other, "ID003");
}

void TestProtocol::sqlApiErrors()
{
    QFETCH(QString, sql);
    QFETCH(int, keyKind);
    QFETCH(int, tokenKind);
    QFETCH(QString, sqlstate);
    idem::TaskStore store(*m_conn, storeOptions(2000ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    const auto before = row(key);

    std::string useKey = key.str();
    switch (static_cast<KeyKind>(keyKind)) {
    case KeyKind::Claimed:
        break;
    case KeyKind::Unknown:
        useKey += "-never-claimed";
        break;
    case KeyKind::Empty:
        useKey.clear();
        break;
    case KeyKind::TooLong:
        useKey = std::string(1025, 'k');
        break;
    }
    const std::string token = static_cast<TokenKind>(tokenKind) == TokenKind::Owner ? c.token
                                                                                     : idem::TaskStore::newToken();
    QString got;
    try {
        pqxx::work w(*m_other);
        w.exec_params(sql.toStdString(), useKey, token);
        w.commit();
    } catch (const pqxx::sql_error& e) {
        got = QString::fromStdString(e.sqlstate());
    }
    QCOMPARE(got, sqlstate);
    if (!sqlstate.isEmpty())
        QCOMPARE(row(key), before);
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
    QTest::addRow("SQL claim, max_attempts 1 and max age 0") << static_cast<int>(Poke::SqlClaimWouldExhaust);
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
    idem::TaskStore store(*m_conn, storeOptions(300ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    {
        pqxx::work tx(*m_conn);
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
        pqxx::work w(*m_other);
        const auto r = w.exec_params("SELECT decision FROM idem.claim($1, $2, $3::uuid, 1000, 1, 0)", key.str(),
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
            pqxx::work w(*m_other);
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
            pqxx::work tx(*m_conn);
            store.fence(tx, key, c.token);
        }));
        break;
    case Poke::CompleteAgain:
        QVERIFY(lost([&] {
            pqxx::work tx(*m_conn);
            store.complete(tx, key, c.token, R"({"done": "twice"})");
            tx.commit();
        }));
        break;
    }
    QCOMPARE(row(key), before);
}

void TestProtocol::failRetryableBacksOff()
{
    idem::TaskStore store(*m_conn, storeOptions(2000ms, 5, 200ms, 800ms));
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
                 "{at,attempt,class,message}"_b);
        QCOMPARE(f(key, last + "->'attempt'"), QByteArray::number(attempt));
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

void TestProtocol::failPermanentStopsAtOnce()
{
    idem::TaskStore store(*m_conn, storeOptions(2000ms, 5, 200ms, 800ms));
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

void TestProtocol::failExhaustsAttempts()
{
    idem::TaskStore store(*m_conn, storeOptions(2000ms, 3));
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

void TestProtocol::failExhaustsMaxAge()
{
    idem::TaskStore store(*m_conn, storeOptions(2000ms, 10, 0ms, 0ms, 300ms));
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

void TestProtocol::claimExhaustsMaxAge()
{
    idem::TaskStore store(*m_conn, storeOptions(2000ms, 10, 0ms, 0ms, 300ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    const auto failed = store.fail(key, c.token, c.attempts, idem::FailureClass::Retryable, "slow bank");
    QCOMPARE(bytes(failed.status), "retryable_failed"_b); // young enough to retry
    std::this_thread::sleep_for(350ms);

    const auto again = store.claim(key, digestOf('a'));
    QCOMPARE(again.decision, idem::Decision::Failed);
    QCOMPARE(bytes(again.detail), "exhausted"_b);
    QCOMPARE(bytes(again.errorClass), "retryable"_b);
    QCOMPARE(bytes(again.errorMessage), "slow bank; maximum age reached"_b);
    QCOMPARE(f(key, "status"), "failed"_b);
    QCOMPARE(f(key, "attempts"), "1"_b);
    QCOMPARE(f(key, "error_message"), "slow bank; maximum age reached"_b);
}

void TestProtocol::errorHistoryKeepsTwenty()
{
    idem::TaskStore store(*m_conn, storeOptions(2000ms, 100));
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
    QCOMPARE(f(key, "(SELECT array_agg((e->>'attempt')::int ORDER BY o) FROM jsonb_array_elements(errors)"
                    " WITH ORDINALITY AS x(e, o))"),
             "{6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25}"_b);
}

void TestProtocol::hostileValuesRoundTrip_data()
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

void TestProtocol::hostileValuesRoundTrip()
{
    QFETCH(QByteArray, value);
    idem::TaskStore store(*m_conn, storeOptions(2000ms));
    const idem::TaskKey key("hostile", "charge", value.toStdString());
    const std::string message = value.toStdString();

    const auto c = store.claim(key, digestOf('a'));
    QCOMPARE(c.decision, idem::Decision::Acquired);
    QCOMPARE(scalar(*m_admin, "SELECT count(*)::text FROM idem.task_idempotency WHERE idempotency_key = $1",
                    key.str()),
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
        pqxx::work tx(*m_conn);
        store.fence(tx, key, again.token);
        store.complete(tx, key, again.token, result);
        tx.commit();
    }
    const auto replay = store.claim(key, digestOf('a'));
    QCOMPARE(replay.decision, idem::Decision::Replay);
    QCOMPARE(bytes(nlohmann::json::parse(replay.resultJson).at("id").get<std::string>()), value);
}

void TestProtocol::longMessageTruncated_data()
{
    QTest::addColumn<QByteArray>("unit");
    QTest::addRow("ASCII") << "x"_b;
    QTest::addRow("two-byte characters") << "é"_b; // characters, not bytes, are counted
}

void TestProtocol::longMessageTruncated()
{
    QFETCH(QByteArray, unit);
    idem::TaskStore store(*m_conn, storeOptions(2000ms));
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

void TestProtocol::heartbeatExtendsLease()
{
    idem::TaskStore a(*m_conn, storeOptions(400ms));
    idem::TaskStore b(*m_other, storeOptions(400ms));
    const auto key = nextKey();
    const auto c = a.claim(key, digestOf('a'));
    const auto leaseBefore = f(key, "extract(epoch FROM lease_until)");
    std::this_thread::sleep_for(200ms);

    const auto until = a.heartbeat(key, c.token);
    const double stored = f(key, "extract(epoch FROM lease_until)").toDouble();
    const double returned = std::chrono::duration<double>(until.time_since_epoch()).count();
    QVERIFY2(std::abs(stored - returned) < 0.001, qPrintable(QString::number(stored - returned)));
    QVERIFY(stored > leaseBefore.toDouble() + 0.15);
    QCOMPARE(f(key, "round(extract(epoch FROM lease_until - updated_at) * 1000)"), "400"_b);
    QCOMPARE(f(key, "owner_token"), bytes(c.token));
    QCOMPARE(f(key, "attempts"), "1"_b);

    // Past the first lease, inside the extended one: still in progress for everyone else.
    std::this_thread::sleep_for(300ms);
    const auto other = b.claim(key, digestOf('a'));
    QCOMPARE(other.decision, idem::Decision::InProgress);
    QCOMPARE(bytes(other.detail), "lease_live"_b);
}

void TestProtocol::heartbeatWithLostToken()
{
    idem::TaskStore a(*m_conn, storeOptions(300ms));
    idem::TaskStore b(*m_other, storeOptions(300ms));
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

void TestProtocol::brokenConnection_data()
{
    QTest::addColumn<QString>("call");
    QTest::addRow("claim") << QStringLiteral("claim");
    QTest::addRow("heartbeat") << QStringLiteral("heartbeat");
    QTest::addRow("fail") << QStringLiteral("fail");
}

void TestProtocol::brokenConnection()
{
    QFETCH(QString, call);
    auto conn = m_db->connect();
    idem::TaskStore store(*conn, storeOptions(2000ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    QVERIFY(idem::test::terminateBackend(*m_admin, conn->backendpid()));

    bool unavailable = false;
    try {
        if (call == QLatin1String("claim"))
            store.claim(key, digestOf('a'));
        else if (call == QLatin1String("heartbeat"))
            store.heartbeat(key, c.token);
        else
            store.fail(key, c.token, c.attempts, idem::FailureClass::Retryable, "x");
    } catch (const idem::DatabaseUnavailable& e) {
        unavailable = true;
        QVERIFY2(QByteArray(e.what()).contains("connection"), e.what());
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QStringLiteral("not DatabaseUnavailable but ") + QString::fromUtf8(typeid(e).name())
                         + QStringLiteral(": ") + QString::fromUtf8(e.what())));
    }
    QVERIFY(unavailable);
    // Nothing of the failed call landed; the lease will decide.
    QCOMPARE(f(key, "status"), "processing"_b);
    QCOMPARE(f(key, "owner_token"), bytes(c.token));
}

void TestProtocol::serializationFailureRetried_data()
{
    QTest::addColumn<int>("retries");
    QTest::addRow("retried") << 5;
    QTest::addRow("control: no retries") << 0;
}

void TestProtocol::serializationFailureRetried()
{
    // The store's own transactions are READ COMMITTED, but a deployment may make every
    // transaction REPEATABLE READ (ALTER ROLE ... SET default_transaction_isolation). Then a claim
    // whose INSERT waits on a concurrent insert of the same key fails with 40001 once that
    // commits; the store retries and sees the committed row.
    QFETCH(int, retries);
    auto conn = m_db->connect();
    {
        pqxx::nontransaction n(*conn);
        n.exec("SET default_transaction_isolation = 'repeatable read'");
    }
    auto options = storeOptions(2000ms);
    options.maxSerializationRetries = retries;
    idem::TaskStore store(*conn, options);
    const auto key = nextKey();

    pqxx::work other(*m_other);
    other.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json)"
                      " VALUES ($1, $2, 'succeeded', '{\"by\": \"other\"}')",
                      key.str(), digestOf('a'));

    std::optional<idem::ClaimResult> result;
    std::string error;
    std::string state;
    std::thread claimer([&] {
        try {
            result = store.claim(key, digestOf('a'));
        } catch (const pqxx::serialization_failure& e) {
            // libpqxx 6 gives this class no sqlstate(); it is raised for 40001 only.
            state = "40001";
            error = e.what();
        } catch (const pqxx::sql_error& e) {
            state = e.sqlstate();
            error = e.what();
        } catch (const std::exception& e) {
            error = e.what();
        }
    });
    const int pid = conn->backendpid();
    const bool waiting = idem::test::waitUntil([&] {
        return scalar(*m_admin, "SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1", pid) == "Lock"_b;
    });
    other.commit();
    claimer.join();
    QVERIFY(waiting);

    if (retries > 0) {
        QVERIFY2(result.has_value(), error.c_str());
        QCOMPARE(result->decision, idem::Decision::Replay);
        QCOMPARE(bytes(result->resultJson), R"({"by": "other"})"_b);
    } else {
        QVERIFY(!result.has_value());
        QCOMPARE(QString::fromStdString(state), QStringLiteral("40001"));
    }
}

void TestProtocol::badOptionsRejected_data()
{
    QTest::addColumn<int>("leaseMs");
    QTest::addColumn<int>("maxAttempts");
    QTest::addColumn<int>("baseMs");
    QTest::addColumn<int>("maxMs");
    QTest::addRow("zero lease") << 0 << 5 << 0 << 0;
    QTest::addRow("negative lease") << -1 << 5 << 0 << 0;
    QTest::addRow("zero attempts") << 1000 << 0 << 0 << 0;
    QTest::addRow("cap below base") << 1000 << 5 << 200 << 100;
}

void TestProtocol::badOptionsRejected()
{
    QFETCH(int, leaseMs);
    QFETCH(int, maxAttempts);
    QFETCH(int, baseMs);
    QFETCH(int, maxMs);
    const auto options = storeOptions(std::chrono::milliseconds(leaseMs), maxAttempts,
                                      std::chrono::milliseconds(baseMs), std::chrono::milliseconds(maxMs));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, static_cast<void>(idem::TaskStore(*m_conn, options)));
}

QTEST_GUILESS_MAIN(TestProtocol)
#include "tst_protocol.moc"
