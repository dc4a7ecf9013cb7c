#pragma once

// Helpers shared by the protocol tests: read what landed in task_idempotency, byte for byte,
// through bound parameters only.

#include <QByteArray>
#include <QTest>

#include <chrono>
#include <functional>
#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <thread>

#include "core/key.h"
#include "schema/migrate.h"
#include "core/taskstore.h"
#include "tests/support/testdb.h"

namespace idem::test {

inline QByteArray operator""_b(const char* s, std::size_t n) { return QByteArray(s, static_cast<qsizetype>(n)); }

inline QByteArray bytes(const std::string& s) { return QByteArray::fromStdString(s); }

// First field of the first row as text: "<null>" for NULL, "<no row>" for an empty result.
template <typename... Params> QByteArray scalar(pqxx::connection& c, const std::string& sql, Params&&... params)
{
    pqxx::read_transaction t(c);
    const pqxx::result r = t.exec_params(sql, std::forward<Params>(params)...);
    if (r.empty())
        return "<no row>"_b;
    return r[0][0].is_null() ? "<null>"_b : bytes(r[0][0].as<std::string>());
}

// The statement's SQLSTATE when it fails (in its own transaction), "ok" when it commits.
template <typename... Params> std::string sqlstateOf(pqxx::connection& c, const std::string& sql, Params&&... params)
{
    try {
        pqxx::work w(c);
        w.exec_params(sql, std::forward<Params>(params)...);
        w.commit();
        return "ok";
    } catch (const pqxx::insufficient_privilege&) {
        return "42501"; // libpqxx 6.4 leaves sqlstate() empty on this class
    } catch (const pqxx::sql_error& e) {
        return e.sqlstate();
    }
}

// An expression over the key's task_idempotency row (alias t), as text. The expression is test
// code, never data.
inline QByteArray field(pqxx::connection& c, const TaskKey& key, const std::string& expr)
{
    return scalar(
        c, "SELECT (" + expr + ")::text FROM idem.task_idempotency t WHERE t.idempotency_key = $1", key.str());
}

// The whole row, to show that something did not change it.
inline QByteArray rowJson(pqxx::connection& c, const TaskKey& key) { return field(c, key, "row_to_json(t)"); }

// A well-formed digest that differs per letter.
// INSERT of task rows in every state from a SQL VALUES list of
// (key, status, lease interval, attempts, error_class, error_message, result json text, age):
// processing rows get a token and a lease until now() + lease, retryable ones a backoff of a
// minute, a message becomes the row's one error-history entry; created `age` ago, updated a
// second later.
inline std::string plantTasksSql(const std::string& values)
{
    return R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until, attempts,
                                           max_attempts, error_class, error_message, result_json, next_attempt_at,
                                           created_at, updated_at, errors)
        SELECT k, 'v1:' || repeat('a', 64), st,
               CASE WHEN st = 'processing' THEN gen_random_uuid() END,
               CASE WHEN st = 'processing' THEN now() + lease END,
               att, 5, ec, msg, res::jsonb,
               CASE WHEN st = 'retryable_failed' THEN now() + interval '1 minute' END,
               now() - age, now() - age + interval '1 second',
               CASE WHEN msg IS NULL THEN '[]'::jsonb
                    ELSE jsonb_build_array(jsonb_build_object('attempt', att, 'class', ec, 'message', msg)) END
        FROM (VALUES )"
        + values + R"() AS v(k, st, lease, att, ec, msg, res, age))";
}

inline std::string digestOf(char c) { return "v1:" + std::string(64, c); }

inline StoreOptions storeOptions(std::chrono::milliseconds lease, int maxAttempts = 5,
    std::chrono::milliseconds baseDelay = std::chrono::milliseconds(0),
    std::chrono::milliseconds maxDelay = std::chrono::milliseconds(0),
    std::chrono::milliseconds maxAge = std::chrono::milliseconds(0))
{
    StoreOptions o;
    o.lease = lease;
    o.retry.maxAttempts = maxAttempts;
    o.retry.baseDelay = baseDelay;
    o.retry.maxDelay = maxDelay;
    o.retry.maxAge = maxAge;
    return o;
}

// A scratch database with the Idem schema (no cluster-wide roles: the tests connect as superuser,
// and concurrent test programs would race creating them).
inline std::unique_ptr<ScratchDatabase> migratedDatabase(const std::string& tag)
{
    auto db = std::make_unique<ScratchDatabase>(tag, migrated);
    auto c = db->connect();
    migrate(*c, { SchemaName(), false });
    return db;
}

// Polls until `done` or the timeout; returns whether it got there. The default is generous: a
// condition that does come true returns at once, and a loaded 2-core machine can take seconds.
inline bool waitUntil(
    const std::function<bool()>& done, std::chrono::milliseconds timeout = std::chrono::milliseconds(30000))
{
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() > until)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

// Terminates the connection's backend from another connection, as a failover or an operator
// would, and waits until it is gone.
inline bool terminateBackend(pqxx::connection& admin, int pid)
{
    scalar(admin, "SELECT pg_terminate_backend($1)::text", pid);
    return waitUntil(
        [&] { return scalar(admin, "SELECT count(*)::text FROM pg_stat_activity WHERE pid = $1", pid) == "0"_b; });
}

// What a protocol test program shares: a migrated scratch database holding the caller's
// business table `payments` (no unique key, so a double effect shows as two rows), two worker
// connections and one for reads and setup.
struct ProtocolFixture {
    std::unique_ptr<ScratchDatabase> db;
    std::unique_ptr<pqxx::connection> conn; // worker A
    std::unique_ptr<pqxx::connection> other; // worker B
    std::unique_ptr<pqxx::connection> admin; // reads and setup
    int keys = 0;

    void open(const std::string& tag)
    {
        db = migratedDatabase(tag);
        conn = db->connect();
        other = db->connect();
        admin = db->connect();
        pqxx::work w(*admin);
        w.exec("CREATE TABLE payments (idempotency_key text NOT NULL, amount integer NOT NULL, by_token uuid)");
        w.commit();
    }

    void close()
    {
        conn.reset();
        other.reset();
        admin.reset();
        db.reset();
    }

    // A key of its own for every test function, data row and call.
    TaskKey nextKey(const std::string& tenant)
    {
        std::string id = QTest::currentTestFunction();
        if (const char* tag = QTest::currentDataTag())
            id += std::string("/") + tag;
        return TaskKey(tenant, "charge", id + "#" + std::to_string(++keys));
    }

    int businessRows(const TaskKey& key)
    {
        return scalar(*admin, "SELECT count(*)::text FROM payments WHERE idempotency_key = $1", key.str()).toInt();
    }
};

} // namespace idem::test
