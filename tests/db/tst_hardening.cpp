#include <QtTest>

#include <atomic>
#include <pqxx/pqxx>
#include <thread>

#include "core/counters.h"
#include "core/taskstore.h"
#include "tests/support/taskrows.h"

using namespace std::chrono_literals;
using idem::test::operator""_b;
using idem::test::bytes;
using idem::test::digestOf;
using idem::test::scalar;
using idem::test::storeOptions;

// Issue 12: the protocol functions refuse a NULL token and out-of-range arguments (ID003,
// nothing changed) and never take "no owner" for "this owner"; the library refuses the same
// values before any I/O; claim() reads before it inserts, with the same decisions and races.
class TestHardening : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        IDEM_REQUIRE_DATABASE();
        m_fx.open("hardening");
    }
    void cleanupTestCase() { m_fx.close(); }

    void nullTokenRefused_data();
    void nullTokenRefused();
    void nullTokenCannotPayTwice();
    void bounds_data();
    void bounds();
    void libraryRefusesOptions_data();
    void libraryRefusesOptions();
    void libraryRefusesArguments();
    void replayReadsFirst();
    void newKeyWaitsForUncommittedClaim_data();
    void newKeyWaitsForUncommittedClaim();
    void concurrentClaimersOfNewKey();
    void conflictStillRecorded();

private:
    idem::TaskKey nextKey() { return m_fx.nextKey("hard"); }
    QByteArray f(const idem::TaskKey& key, const std::string& expr)
    {
        return idem::test::field(*m_fx.admin, key, expr);
    }
    QByteArray row(const idem::TaskKey& key) { return idem::test::rowJson(*m_fx.admin, key); }
    // Releases the key as an operator does: processing, no owner, lease ended now.
    void release(const idem::TaskKey& key);

    idem::test::ProtocolFixture m_fx;
};

namespace {

// Runs one statement in its own transaction on `c`; the SQLSTATE it failed with, or "".
template <typename... Params> QString stateOf(pqxx::connection& c, const std::string& sql, Params&&... params)
{
    try {
        pqxx::work w(c);
        w.exec_params(sql, std::forward<Params>(params)...);
        w.commit();
    } catch (const pqxx::sql_error& e) {
        return QString::fromStdString(e.sqlstate());
    }
    return {};
}

enum class Target { NewKey, Claimed };

} // namespace

void TestHardening::release(const idem::TaskKey& key)
{
    pqxx::work w(*m_fx.admin);
    const auto r = w.exec_params("SELECT outcome FROM idem.idem_release($1, 'processing',"
                                 " (SELECT (extract(epoch FROM updated_at) * 1000000)::bigint"
                                 "    FROM idem.task_idempotency WHERE idempotency_key = $1), 'worker host lost')",
        key.str());
    w.commit();
    QCOMPARE(bytes(r[0][0].as<std::string>()), "applied"_b);
    QCOMPARE(f(key, "status || ' ' || (owner_token IS NULL)::text"), "processing true"_b);
}

void TestHardening::nullTokenRefused_data()
{
    QTest::addColumn<QString>("sql");
    QTest::addColumn<bool>("released");
    const std::pair<const char*, const char*> calls[] = {
        { "fence", "SELECT * FROM idem.fence($1, NULLIF($2::uuid, $2::uuid))" },
        { "complete", "SELECT idem.complete($1, NULLIF($2::uuid, $2::uuid), '{\"paid\": true}')" },
        { "heartbeat", "SELECT idem.heartbeat($1, NULLIF($2::uuid, $2::uuid), 30000)" },
        { "fail", "SELECT * FROM idem.fail($1, NULLIF($2::uuid, $2::uuid), 'unknown', 'lost', 0)" },
    };
    for (const auto& [name, sql] : calls) {
        QTest::addRow("%s, released row", name) << QString::fromLatin1(sql) << true;
        QTest::addRow("%s, live row", name) << QString::fromLatin1(sql) << false;
    }
}

// After a release the row is processing with owner_token NULL: a NULL token must not pass
// for its owner (NULL IS DISTINCT FROM NULL is false).
void TestHardening::nullTokenRefused()
{
    QFETCH(QString, sql);
    QFETCH(bool, released);
    idem::TaskStore store(*m_fx.conn, storeOptions(30s));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    QVERIFY(c.mayExecute());
    if (released)
        release(key);
    const auto before = row(key);
    QCOMPARE(stateOf(*m_fx.other, sql.toStdString(), key.str(), c.token), QStringLiteral("ID003"));
    QCOMPARE(row(key), before);
}

// The issue's sequence: a client that ignores the claim's decision sends the NULL token it
// was given. Before the fix its payment committed and its fail() made the row retryable, so
// the next worker paid again.
void TestHardening::nullTokenCannotPayTwice()
{
    idem::TaskStore first(*m_fx.conn, storeOptions(30s));
    const auto key = nextKey();
    const auto a = first.claim(key, digestOf('a'));
    QVERIFY(a.mayExecute());

    const auto b = [&] {
        pqxx::nontransaction n(*m_fx.other);
        return n.exec_params("SELECT decision, owner_token FROM idem.claim($1, $2, $3::uuid, 30000)", key.str(),
            digestOf('a'), idem::TaskStore::newToken());
    }();
    QCOMPARE(bytes(b[0][0].as<std::string>()), "in_progress"_b);
    QVERIFY(b[0][1].is_null());
    release(key); // the operator frees the key of the worker that went quiet

    QString refused;
    try {
        pqxx::work w(*m_fx.other);
        w.exec_params("SELECT * FROM idem.fence($1, $2::uuid)", key.str(), static_cast<const char*>(nullptr));
        w.exec_params("INSERT INTO payments (idempotency_key, amount) VALUES ($1, 1250)", key.str());
        w.exec_params("SELECT * FROM idem.fail($1, $2::uuid, 'unknown', 'gateway timeout', 0)", key.str(),
            static_cast<const char*>(nullptr));
        w.commit();
    } catch (const pqxx::sql_error& e) {
        refused = QString::fromStdString(e.sqlstate());
    }
    QCOMPARE(refused, QStringLiteral("ID003"));
    QCOMPARE(m_fx.businessRows(key), 0);

    // The next worker takes the released row over and pays once.
    idem::TaskStore next(*m_fx.admin, storeOptions(30s));
    const auto c = next.claim(key, digestOf('a'));
    QCOMPARE(idem::decisionName(c.decision), "reacquired");
    {
        pqxx::work tx(*m_fx.admin);
        next.fence(tx, key, c.token);
        tx.exec_params("INSERT INTO payments (idempotency_key, amount, by_token) VALUES ($1, 1250, $2::uuid)",
            key.str(), c.token);
        next.complete(tx, key, c.token, R"({"receipt": "r-1"})");
        tx.commit();
    }
    // The first executor, back from its pause, cannot commit either.
    {
        pqxx::work tx(*m_fx.conn);
        QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, first.fence(tx, key, a.token));
    }
    QCOMPARE(m_fx.businessRows(key), 1);
    QCOMPARE(f(key, "status || ' ' || attempts"), "succeeded 2"_b);
    QCOMPARE(scalar(*m_fx.admin, "SELECT by_token::text FROM payments WHERE idempotency_key = $1", key.str()),
        bytes(c.token));
}

void TestHardening::bounds_data()
{
    // $1 is the key, $2 a token (the owner's for a claimed key). An empty state must succeed:
    // the row just inside each bound shows that the statement itself is right.
    QTest::addColumn<QString>("sql");
    QTest::addColumn<int>("target");
    QTest::addColumn<QString>("sqlstate");
    const auto add = [](const std::string& name, const std::string& sql, Target t, const char* state) {
        QTest::addRow("%s", name.c_str()) << QString::fromStdString(sql) << static_cast<int>(t)
                                          << QString::fromLatin1(state);
    };
    const std::string max63 = "9223372036854775807";
    const auto fresh = Target::NewKey;
    const auto claimed = Target::Claimed;

    // claim: lease 1 ms .. 24 h
    const auto claimLease = [&](const std::string& v) {
        return "SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, " + v + ")";
    };
    add("claim lease 1 ms", claimLease("1"), fresh, "");
    add("claim lease 24 h", claimLease("86400000"), fresh, "");
    add("claim lease 24 h + 1 ms", claimLease("86400001"), fresh, "ID003");
    add("claim lease 0", claimLease("0"), fresh, "ID003");
    add("claim lease 10^15 ms", claimLease("1000000000000000"), fresh, "ID003");
    add("claim lease 2^63-1", claimLease(max63), fresh, "ID003");
    add("claim lease NULL", claimLease("NULL"), fresh, "ID003");
    // claim: max_attempts 1 .. 1000
    const auto claimAttempts = [&](const std::string& v) {
        return "SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, 1000, " + v + ")";
    };
    add("claim max_attempts 1", claimAttempts("1"), fresh, "");
    add("claim max_attempts 1000", claimAttempts("1000"), fresh, "");
    add("claim max_attempts 1001", claimAttempts("1001"), fresh, "ID003");
    add("claim max_attempts 0", claimAttempts("0"), fresh, "ID003");
    add("claim max_attempts 2^31-1", claimAttempts("2147483647"), fresh, "ID003");
    add("claim max_attempts NULL", claimAttempts("NULL"), fresh, "ID003");
    // claim: max_age NULL (no limit) or 1 ms .. 365 days
    const auto claimAge = [&](const std::string& v) {
        return "SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, 1000, 5, " + v + ")";
    };
    add("claim max_age NULL", claimAge("NULL"), fresh, "");
    add("claim max_age 1 ms", claimAge("1"), fresh, "");
    add("claim max_age 365 d", claimAge("31536000000"), fresh, "");
    add("claim max_age 365 d + 1 ms", claimAge("31536000001"), fresh, "ID003");
    add("claim max_age 0", claimAge("0"), fresh, "ID003");
    add("claim max_age 2^63-1", claimAge(max63), fresh, "ID003");
    // claim: request_hash 1 .. 256 bytes of visible ASCII
    const auto claimHash = [&](const std::string& v) {
        return "SELECT * FROM idem.claim($1, " + v + ", $2::uuid, 1000)";
    };
    add("claim hash v1 digest", claimHash("'" + digestOf('a') + "'"), fresh, "");
    add("claim hash 256 bytes", claimHash("repeat('h', 256)"), fresh, "");
    add("claim hash 257 bytes", claimHash("repeat('h', 257)"), fresh, "ID003");
    add("claim hash 10 MB", claimHash("repeat('h', 10000000)"), fresh, "ID003");
    add("claim hash with a space", claimHash("'v1:a b'"), fresh, "ID003");
    add("claim hash non-ASCII", claimHash("'v1:\xc3\xa9'"), fresh, "ID003");
    add("claim hash NULL", claimHash("NULL"), fresh, "ID003");
    add("claim key NULL", "SELECT * FROM idem.claim(NULLIF($1, $1), 'v1:x', $2::uuid, 1000)", fresh, "ID003");
    // claim on an existing row with a bad argument changes nothing either
    add("claim lease 2^63-1, claimed key", claimLease(max63), claimed, "ID003");

    // heartbeat: the same lease bounds
    const auto beat = [&](const std::string& v) { return "SELECT idem.heartbeat($1, $2::uuid, " + v + ")"; };
    add("heartbeat lease 1 ms", beat("1"), claimed, "");
    add("heartbeat lease 24 h", beat("86400000"), claimed, "");
    add("heartbeat lease 24 h + 1 ms", beat("86400001"), claimed, "ID003");
    add("heartbeat lease 10^15 ms", beat("1000000000000000"), claimed, "ID003");
    add("heartbeat lease 2^63-1", beat(max63), claimed, "ID003");
    add("heartbeat lease NULL", beat("NULL"), claimed, "ID003");

    // fail: retry delay 0 .. 7 days, max_age as claim's, a class, a message (NULL refused;
    // longer than 8192 characters kept truncated)
    const auto failDelay = [&](const std::string& v) {
        return "SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'm', " + v + ")";
    };
    add("fail delay 0", failDelay("0"), claimed, "");
    add("fail delay 7 d", failDelay("604800000"), claimed, "");
    add("fail delay 7 d + 1 ms", failDelay("604800001"), claimed, "ID003");
    add("fail delay -1", failDelay("-1"), claimed, "ID003");
    add("fail delay 2^63-1", failDelay(max63), claimed, "ID003");
    add("fail delay NULL", failDelay("NULL"), claimed, "ID003");
    const auto failAge = [&](const std::string& v) {
        return "SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'm', 0, " + v + ")";
    };
    add("fail max_age 365 d", failAge("31536000000"), claimed, "");
    add("fail max_age 365 d + 1 ms", failAge("31536000001"), claimed, "ID003");
    add("fail max_age 0", failAge("0"), claimed, "ID003");
    add("fail max_age 2^63-1", failAge(max63), claimed, "ID003");
    add("fail message 100k characters", "SELECT * FROM idem.fail($1, $2::uuid, 'retryable', repeat('m', 100000), 0)",
        claimed, "");
    add("fail message NULL", "SELECT * FROM idem.fail($1, $2::uuid, 'retryable', NULL, 0)", claimed, "ID003");
    add("fail class empty", "SELECT * FROM idem.fail($1, $2::uuid, '', 'm', 0)", claimed, "ID003");

    // complete: a result (SQL NULL refused; JSON null is a result) and max_result_bytes 1 .. 64 MiB
    const auto done = [&](const std::string& result, const std::string& limit) {
        return "SELECT idem.complete($1, $2::uuid, " + result + ", " + limit + ")";
    };
    add("complete 1 byte of 1", done("'1'", "1"), claimed, "");
    add("complete limit 64 MiB", done("'{}'", "67108864"), claimed, "");
    add("complete limit 64 MiB + 1", done("'{}'", "67108865"), claimed, "ID003");
    add("complete limit 0", done("'{}'", "0"), claimed, "ID003");
    add("complete limit 2^31-1", done("'{}'", "2147483647"), claimed, "ID003");
    add("complete limit NULL", done("'{}'", "NULL"), claimed, "ID003");
    add("complete JSON null", done("'null'", "1048576"), claimed, "");
    add("complete result NULL", done("NULL", "1048576"), claimed, "ID003");

    // The key, for every fenced function: NULL, empty or over 1024 bytes is an argument error,
    // not "no record" or "not yours".
    const std::pair<const char*, std::string> fenced[] = {
        { "fence", "SELECT * FROM idem.fence(%K, $2::uuid)" },
        { "complete", "SELECT idem.complete(%K, $2::uuid, '{}')" },
        { "heartbeat", "SELECT idem.heartbeat(%K, $2::uuid, 1000)" },
        { "fail", "SELECT * FROM idem.fail(%K, $2::uuid, 'retryable', 'm', 0)" },
    };
    const std::pair<const char*, const char*> keys[] = {
        { "NULL", "NULLIF($1, $1)" },
        { "empty", "left($1, 0)" },
        { "1025 bytes", "repeat('k', 1025) || left($1, 0)" },
    };
    for (const auto& [fn, sql] : fenced)
        for (const auto& [what, expr] : keys) {
            std::string s = sql;
            s.replace(s.find("%K"), 2, expr);
            add(std::string(fn) + " key " + what, s, claimed, "ID003");
        }
}

void TestHardening::bounds()
{
    QFETCH(QString, sql);
    QFETCH(int, target);
    QFETCH(QString, sqlstate);
    idem::TaskStore store(*m_fx.conn, storeOptions(30s));
    const auto key = nextKey();
    std::string token = idem::TaskStore::newToken();
    if (static_cast<Target>(target) == Target::Claimed)
        token = store.claim(key, digestOf('a')).token;
    const auto before = row(key);

    QCOMPARE(stateOf(*m_fx.other, sql.toStdString(), key.str(), token), sqlstate);
    if (!sqlstate.isEmpty())
        QCOMPARE(row(key), before); // "<no row>" for a new key
    else if (static_cast<Target>(target) == Target::NewKey)
        QCOMPARE(f(key, "status"), "processing"_b);
}

void TestHardening::libraryRefusesOptions_data()
{
    QTest::addColumn<int>("what");
    QTest::addColumn<qint64>("value");
    QTest::addColumn<bool>("valid");
    enum { Lease, MaxResult, MaxAttempts, MaxDelay, MaxAge };
    QTest::addRow("lease 24 h") << int(Lease) << qint64(86'400'000) << true;
    QTest::addRow("lease 24 h + 1 ms") << int(Lease) << qint64(86'400'001) << false;
    QTest::addRow("max result 64 MiB") << int(MaxResult) << qint64(64 << 20) << true;
    QTest::addRow("max result 64 MiB + 1") << int(MaxResult) << qint64((64 << 20) + 1) << false;
    QTest::addRow("max result 0") << int(MaxResult) << qint64(0) << false;
    QTest::addRow("max attempts 1000") << int(MaxAttempts) << qint64(1000) << true;
    QTest::addRow("max attempts 1001") << int(MaxAttempts) << qint64(1001) << false;
    QTest::addRow("max delay 7 d") << int(MaxDelay) << qint64(604'800'000) << true;
    QTest::addRow("max delay 7 d + 1 ms") << int(MaxDelay) << qint64(604'800'001) << false;
    QTest::addRow("max age 365 d") << int(MaxAge) << qint64(31'536'000'000) << true;
    QTest::addRow("max age 365 d + 1 ms") << int(MaxAge) << qint64(31'536'000'001) << false;
}

// The bounds the SQL enforces, refused by the store's constructor before any I/O.
void TestHardening::libraryRefusesOptions()
{
    QFETCH(int, what);
    QFETCH(qint64, value);
    QFETCH(bool, valid);
    auto o = storeOptions(30s);
    const std::chrono::milliseconds ms(value);
    switch (what) {
    case 0:
        o.lease = ms;
        break;
    case 1:
        o.maxResultBytes = static_cast<std::size_t>(value);
        break;
    case 2:
        o.retry.maxAttempts = static_cast<int>(value);
        break;
    case 3:
        o.retry.maxDelay = ms;
        break;
    case 4:
        o.retry.maxAge = ms;
        break;
    }
    if (valid)
        idem::TaskStore(*m_fx.conn, o);
    else
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, idem::TaskStore(*m_fx.conn, o));
}

// A digest the SQL would refuse, and the empty token of a claim that did not acquire: both
// std::invalid_argument before any I/O, so the caller's transaction stays usable.
void TestHardening::libraryRefusesArguments()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(30s));
    const auto key = nextKey();
    for (const std::string& digest : { std::string(), std::string(257, 'h'), std::string("v1:a b") })
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, store.claim(key, digest));
    QCOMPARE(row(key), "<no row>"_b);

    const auto a = store.claim(key, digestOf('a'));
    QVERIFY(a.mayExecute());
    idem::TaskStore second(*m_fx.other, storeOptions(30s));
    const auto b = second.claim(key, digestOf('a'));
    QCOMPARE(idem::decisionName(b.decision), "in_progress");
    QVERIFY(b.token.empty());
    {
        pqxx::work tx(*m_fx.other);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, second.fence(tx, key, b.token));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, second.complete(tx, key, b.token, "{}"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, second.fence(tx, key, "not-a-uuid"));
        QCOMPARE(tx.exec("SELECT 1")[0][0].as<int>(), 1); // still a live transaction
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, second.heartbeat(key, b.token));
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument, second.fail(key, b.token, 1, idem::FailureClass::Unknown, "gateway timeout"));
    QCOMPARE(f(key, "status || ' ' || owner_token"), bytes("processing " + a.token));

    idem::OutcomeCounters counters;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, counters.add(std::string(65, 't'), "charge", "acquired"));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, counters.add("", "charge", "acquired"));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, counters.add("t", "charge", "acquired", 1'000'000'000'001));
    QCOMPARE(counters.pendingRows(), std::size_t(0));
}

// A replay answers from a plain read: it never asks for the table's ROW EXCLUSIVE lock, so it
// goes on while something holds SHARE (a plain CREATE INDEX does), which a new key cannot.
void TestHardening::replayReadsFirst()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(30s));
    const auto key = nextKey();
    const auto c = store.claim(key, digestOf('a'));
    {
        pqxx::work tx(*m_fx.conn);
        store.fence(tx, key, c.token);
        store.complete(tx, key, c.token, R"({"receipt": "r-1"})");
        tx.commit();
    }
    pqxx::nontransaction(*m_fx.conn).exec("SET statement_timeout = '3s'");
    pqxx::work lock(*m_fx.admin);
    lock.exec("LOCK TABLE idem.task_idempotency IN SHARE MODE");
    QString replay;
    try {
        const auto r = store.claim(key, digestOf('a'));
        replay = QString::fromLatin1(idem::decisionName(r.decision)) + QLatin1Char(' ')
            + QString::fromStdString(r.resultJson);
    } catch (const pqxx::sql_error& e) {
        replay = QStringLiteral("error ") + QString::fromStdString(e.sqlstate());
    }
    QString fresh; // control: the lock is real for an insert
    pqxx::nontransaction(*m_fx.conn).exec("SET statement_timeout = '300ms'");
    try {
        store.claim(nextKey(), digestOf('a'));
    } catch (const pqxx::sql_error& e) {
        fresh = QString::fromStdString(e.sqlstate());
    }
    lock.abort();
    pqxx::nontransaction(*m_fx.conn).exec("RESET statement_timeout");
    QCOMPARE(replay, QStringLiteral(R"(replay {"receipt": "r-1"})"));
    QCOMPARE(fresh, QStringLiteral("57014"));
}

void TestHardening::newKeyWaitsForUncommittedClaim_data()
{
    QTest::addColumn<bool>("commit");
    QTest::addColumn<QString>("decision");
    QTest::addRow("first claim commits") << true << QStringLiteral("in_progress lease_live 1");
    QTest::addRow("first claim rolls back") << false << QStringLiteral("acquired new 1");
}

// Two claimers of a new key, the first one's insert not yet committed: the second finds no row,
// waits in its insert, then sees what the first did.
void TestHardening::newKeyWaitsForUncommittedClaim()
{
    QFETCH(bool, commit);
    QFETCH(QString, decision);
    const auto key = nextKey();
    pqxx::work first(*m_fx.other);
    QCOMPARE(bytes(first.exec_params("SELECT decision FROM idem.claim($1, $2, $3::uuid, 30000)", key.str(),
                            digestOf('a'), idem::TaskStore::newToken())[0][0]
                       .as<std::string>()),
        "acquired"_b);
    idem::TaskStore store(*m_fx.conn, storeOptions(30s));
    idem::ClaimResult second;
    std::string error;
    std::thread t([&] {
        try {
            second = store.claim(key, digestOf('a'));
        } catch (const std::exception& e) {
            error = e.what();
        }
    });
    const int pid = m_fx.conn->backendpid();
    const bool waited = idem::test::waitUntil([&] {
        return scalar(*m_fx.admin, "SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1", pid) == "Lock"_b;
    });
    if (commit)
        first.commit();
    else
        first.abort();
    t.join();
    QVERIFY(waited);
    QVERIFY2(error.empty(), error.c_str());
    QCOMPARE(QString::fromLatin1(idem::decisionName(second.decision)) + QLatin1Char(' ')
            + QString::fromStdString(second.detail) + QLatin1Char(' ') + QString::number(second.attempts),
        decision);
    QCOMPARE(f(key, "attempts"), "1"_b);
    if (!commit)
        QCOMPARE(f(key, "owner_token"), bytes(second.token));
}

// Eight claimers of each new key released together: exactly one executes, the others are told
// it is in progress, and the row is the winner's first attempt.
void TestHardening::concurrentClaimersOfNewKey()
{
    constexpr int threads = 8, rounds = 30;
    std::vector<std::unique_ptr<pqxx::connection>> conns;
    for (int i = 0; i < threads; ++i)
        conns.push_back(m_fx.db->connect());
    for (int round = 0; round < rounds; ++round) {
        const auto key = nextKey();
        std::atomic<int> ready { 0 };
        std::vector<idem::ClaimResult> results(threads);
        std::vector<std::string> errors(threads);
        std::vector<std::thread> pool;
        for (int i = 0; i < threads; ++i)
            pool.emplace_back([&, i] {
                idem::TaskStore store(*conns[static_cast<std::size_t>(i)], storeOptions(30s));
                ++ready;
                while (ready.load() < threads)
                    std::this_thread::yield();
                try {
                    results[static_cast<std::size_t>(i)] = store.claim(key, digestOf('a'));
                } catch (const std::exception& e) {
                    errors[static_cast<std::size_t>(i)] = e.what();
                }
            });
        for (auto& t : pool)
            t.join();
        int acquired = 0;
        std::string winner;
        for (int i = 0; i < threads; ++i) {
            const auto& r = results[static_cast<std::size_t>(i)];
            QVERIFY2(errors[static_cast<std::size_t>(i)].empty(), errors[static_cast<std::size_t>(i)].c_str());
            if (r.decision == idem::Decision::Acquired) {
                ++acquired;
                winner = r.token;
            } else {
                QCOMPARE(idem::decisionName(r.decision), "in_progress");
                QVERIFY2(r.detail == "lease_live" || r.detail == "contended", r.detail.c_str());
            }
        }
        QCOMPARE(acquired, 1);
        QCOMPARE(f(key, "status || ' ' || attempts || ' ' || owner_token"), bytes("processing 1 " + winner));
    }
}

// The digest-conflict record of schema v5 is kept on the read-first path.
void TestHardening::conflictStillRecorded()
{
    idem::TaskStore store(*m_fx.conn, storeOptions(30s));
    const auto key = nextKey();
    QVERIFY(store.claim(key, digestOf('a')).mayExecute());
    const auto before = row(key);
    for (int i = 0; i < 2; ++i) {
        const auto c = store.claim(key, digestOf('b'));
        QCOMPARE(idem::decisionName(c.decision), "conflict");
        QVERIFY(c.storedDigest.empty()); // schema v13: not revealed
    }
    QCOMPARE(row(key), before);
    QCOMPARE(scalar(*m_fx.admin,
                 "SELECT n || ' ' || last_digest FROM idem.task_idempotency_conflicts WHERE idempotency_key = $1",
                 key.str()),
        bytes("2 " + digestOf('b')));
}

QTEST_GUILESS_MAIN(TestHardening)
#include "tst_hardening.moc"
