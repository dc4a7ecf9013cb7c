#include <QtTest>

#include <optional>
#include <pqxx/pqxx>
#include <thread>
#include <typeinfo>

#include "core/connection.h"
#include "core/taskstore.h"
#include "tests/support/taskrows.h"

using namespace std::chrono_literals;
using idem::test::operator""_b;
using idem::test::bytes;
using idem::test::digestOf;
using idem::test::scalar;
using idem::test::storeOptions;

// How the protocol fails: the SQL API's SQLSTATEs, a broken connection, serialization failures
// retried, options refused.
class TestProtocolErrors : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        IDEM_REQUIRE_DATABASE();
        m_fx.open("protoerr");
    }
    void cleanupTestCase() { m_fx.close(); }

    void sqlApiErrors_data();
    void sqlApiErrors();
    void brokenConnection_data();
    void brokenConnection();
    void readOnlyServerIsNotPrimary_data();
    void readOnlyServerIsNotPrimary();
    void connectPrimaryRefusesReadOnly();
    void serializationFailureRetried_data();
    void serializationFailureRetried();
    void badOptionsRejected_data();
    void badOptionsRejected();

private:
    idem::TaskKey nextKey() { return m_fx.nextKey("err"); }
    QByteArray f(const idem::TaskKey& key, const std::string& expr)
    {
        return idem::test::field(*m_fx.admin, key, expr);
    }
    QByteArray row(const idem::TaskKey& key) { return idem::test::rowJson(*m_fx.admin, key); }

    idem::test::ProtocolFixture m_fx;
};

namespace {
enum class KeyKind { Claimed, Unknown, Empty, TooLong };
enum class TokenKind { Owner, Other };
} // namespace

void TestProtocolErrors::sqlApiErrors_data()
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
    add("fail, negative delay", "SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'm', -1)", claimed, owner, "ID003");
    add("claim, empty key", "SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, 1000)", KeyKind::Empty, other, "ID003");
    add("claim, key over 1024 bytes", "SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, 1000)", KeyKind::TooLong, other,
        "ID003");
    add("claim, new key", "SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, 1000)", KeyKind::Unknown, other, "");
    add("claim, empty digest", "SELECT * FROM idem.claim($1, '', $2::uuid, 1000)", claimed, other, "ID003");
    add("claim, zero lease", "SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, 0)", claimed, other, "ID003");
    add("claim, zero max attempts", "SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, 1000, 0)", claimed, other, "ID003");
    add("claim, null token", "SELECT * FROM idem.claim($1, 'v1:x', NULLIF($2::uuid, $2::uuid), 1000)", claimed, other,
        "ID003");
}

void TestProtocolErrors::sqlApiErrors()
{
    QFETCH(QString, sql);
    QFETCH(int, keyKind);
    QFETCH(int, tokenKind);
    QFETCH(QString, sqlstate);
    idem::TaskStore store(*m_fx.conn, storeOptions(2000ms));
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
    const std::string token
        = static_cast<TokenKind>(tokenKind) == TokenKind::Owner ? c.token : idem::TaskStore::newToken();
    QString got;
    try {
        pqxx::work w(*m_fx.other);
        w.exec_params(sql.toStdString(), useKey, token);
        w.commit();
    } catch (const pqxx::sql_error& e) {
        got = QString::fromStdString(e.sqlstate());
    }
    QCOMPARE(got, sqlstate);
    if (!sqlstate.isEmpty())
        QCOMPARE(row(key), before);
}

void TestProtocolErrors::brokenConnection_data()
{
    QTest::addColumn<QString>("call");
    QTest::addRow("claim") << QStringLiteral("claim");
    QTest::addRow("heartbeat") << QStringLiteral("heartbeat");
    QTest::addRow("fail") << QStringLiteral("fail");
}

void TestProtocolErrors::brokenConnection()
{
    QFETCH(QString, call);
    auto conn = m_fx.db->connect();
    idem::TaskStore store(*conn, storeOptions(2000ms));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    QVERIFY(idem::test::terminateBackend(*m_fx.admin, conn->backendpid()));

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

void TestProtocolErrors::readOnlyServerIsNotPrimary_data()
{
    QTest::addColumn<QString>("call");
    for (const char* call : { "claim", "fence", "complete", "heartbeat", "fail" })
        QTest::newRow(call) << QString::fromLatin1(call);
}

// Issue 29 item 2: SQLSTATE 25006 (a standby, a demoted primary, default_transaction_read_only) is
// NotPrimary, a kind of DatabaseUnavailable, in words, and nothing of the call landed.
void TestProtocolErrors::readOnlyServerIsNotPrimary()
{
    QFETCH(QString, call);
    idem::TaskStore writer(*m_fx.conn, storeOptions(30s));
    const auto key = nextKey();
    const auto c = writer.claim(key, digestOf('a'));
    const QByteArray before = row(key);
    auto readOnly
        = idem::connect(idem::test::dsnWith(m_fx.db->dsn(), { { "options", "-c default_transaction_read_only=on" } }));
    idem::TaskStore store(*readOnly, storeOptions(30s));
    const auto fresh = nextKey();

    std::string said;
    try {
        if (call == QLatin1String("claim")) {
            store.claim(fresh, digestOf('a'));
        } else if (call == QLatin1String("fence") || call == QLatin1String("complete")) {
            pqxx::work tx(*readOnly);
            if (call == QLatin1String("fence"))
                store.fence(tx, key, c.token);
            else
                store.complete(tx, key, c.token, "{}");
        } else if (call == QLatin1String("heartbeat")) {
            store.heartbeat(key, c.token);
        } else {
            store.fail(key, c.token, c.attempts, idem::FailureClass::Retryable, "x");
        }
    } catch (const idem::NotPrimary& e) {
        said = e.what();
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QStringLiteral("not NotPrimary but ") + QString::fromUtf8(typeid(e).name())
            + QStringLiteral(": ") + QString::fromUtf8(e.what())));
    }
    QVERIFY2(QByteArray::fromStdString(said).startsWith("the server is read-only (not the primary): "), said.c_str());
    QVERIFY2(QByteArray::fromStdString(said).contains("read-only transaction"), said.c_str()); // the server's reason
    QCOMPARE(f(fresh, "status"), "<no row>"_b);
    QCOMPARE(row(key), before);
    // The owner goes on where it can write.
    pqxx::work tx(*m_fx.conn);
    writer.fence(tx, key, c.token);
    writer.complete(tx, key, c.token, R"({"ok": true})");
    tx.commit();
    QCOMPARE(f(key, "status"), "succeeded"_b);
}

// A client that writes refuses a read-only server at connect, in words; libpq's
// target_session_attrs=read-write does the same for a multi-host conninfo.
void TestProtocolErrors::connectPrimaryRefusesReadOnly()
{
    const auto readOnlyDsn
        = idem::test::dsnWith(m_fx.db->dsn(), { { "options", "-c default_transaction_read_only=on" } });
    auto writable = idem::connectPrimary(m_fx.db->dsn());
    QVERIFY(!idem::sessionReadOnly(*writable));
    auto plain = idem::connect(readOnlyDsn); // a reader may watch a read-only server
    QVERIFY(idem::sessionReadOnly(*plain));
    bool refused = false;
    try {
        idem::connectPrimary(readOnlyDsn);
    } catch (const idem::ConnectError& e) {
        refused = true;
        QCOMPARE(e.kind(), idem::ConnectErrorKind::ReadOnly);
        QCOMPARE(QByteArray(idem::connectErrorKindName(e.kind())), "not the primary"_b);
        QVERIFY2(QByteArray(e.what()).startsWith("the server is read-only (not the primary)"), e.what());
        QVERIFY2(QByteArray(e.what()).contains("target_session_attrs=read-write"), e.what());
    }
    QVERIFY(refused);
    // Waiting for a primary gives up after its patience with the same refusal, having said so.
    int retries = 0;
    QVERIFY_THROWS_EXCEPTION(
        idem::ConnectError, idem::connectPrimaryWaiting(readOnlyDsn, {}, 1200ms, [&](const idem::ConnectError& e) {
            ++retries;
            QCOMPARE(e.kind(), idem::ConnectErrorKind::ReadOnly);
        }));
    QVERIFY(retries >= 1);
}

void TestProtocolErrors::serializationFailureRetried_data()
{
    QTest::addColumn<int>("retries");
    QTest::addRow("retried") << 5;
    QTest::addRow("control: no retries") << 0;
}

void TestProtocolErrors::serializationFailureRetried()
{
    // The store asks for no isolation level, so a deployment may make its sessions REPEATABLE READ
    // (ALTER ROLE ... SET default_transaction_isolation). Claims refuse that (a pause committed
    // after the snapshot would go unseen: tst_pause), but a heartbeat, fail or complete runs
    // there: one whose UPDATE waits on a concurrent update of the same row fails with 40001 once
    // that commits; the store retries and acts on the committed row. (40P01 cannot be provoked
    // through the store: each call touches one row.)
    QFETCH(int, retries);
    auto conn = m_fx.db->connect();
    auto options = storeOptions(2000ms);
    options.maxSerializationRetries = retries;
    idem::TaskStore store(*conn, options);
    const auto key = nextKey();
    const auto claimed = store.claim(key, digestOf('a')); // at READ COMMITTED, the session's default now
    QCOMPARE(claimed.decision, idem::Decision::Acquired);
    {
        pqxx::nontransaction n(*conn);
        n.exec("SET default_transaction_isolation = 'repeatable read'");
    }

    const auto leaseOf = [&] {
        return scalar(*m_fx.admin,
            "SELECT (extract(epoch FROM lease_until) * 1000000)::bigint::text FROM idem.task_idempotency"
            " WHERE idempotency_key = $1",
            key.str());
    };
    const auto leaseBefore = leaseOf();
    pqxx::work other(*m_fx.other);
    other.exec_params("UPDATE idem.task_idempotency SET updated_at = updated_at WHERE idempotency_key = $1", key.str());

    bool extended = false;
    std::string error;
    std::string state;
    std::thread beater([&] {
        try {
            store.heartbeat(key, claimed.token);
            extended = true;
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
        return scalar(*m_fx.admin, "SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1", pid) == "Lock"_b;
    });
    other.commit();
    beater.join();
    QVERIFY(waiting);

    if (retries > 0) {
        QVERIFY2(extended, error.c_str());
        QVERIFY(leaseOf().toLongLong() > leaseBefore.toLongLong()); // the retried heartbeat landed
    } else {
        QVERIFY(!extended);
        QCOMPARE(QString::fromStdString(state), QStringLiteral("40001"));
        QCOMPARE(leaseOf(), leaseBefore); // refused whole
    }
}

void TestProtocolErrors::badOptionsRejected_data()
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

void TestProtocolErrors::badOptionsRejected()
{
    QFETCH(int, leaseMs);
    QFETCH(int, maxAttempts);
    QFETCH(int, baseMs);
    QFETCH(int, maxMs);
    const auto options = storeOptions(std::chrono::milliseconds(leaseMs), maxAttempts,
        std::chrono::milliseconds(baseMs), std::chrono::milliseconds(maxMs));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, static_cast<void>(idem::TaskStore(*m_fx.conn, options)));
}

QTEST_GUILESS_MAIN(TestProtocolErrors)
#include "tst_protocolerrors.moc"
