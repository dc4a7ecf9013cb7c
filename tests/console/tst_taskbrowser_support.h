#pragma once

// Shared by the task browser, recovery action and audit view tests: a migrated scratch
// database, sessions connected to it, rows planted with plain SQL (bound parameters).

#include <QtTest>

#include <memory>
#include <pqxx/pqxx>
#include <string>

#include "schema/migrate.h"
#include "models/consolesession.h"
#include "tests/support/testdb.h"

namespace idem::test {

constexpr int browserTimeoutMs = 20000;

inline console::ConnectionSettings settingsFor(const std::string& dsn)
{
    console::ConnectionSettings s;
    s.conninfo = QString::fromStdString(dsn);
    return s;
}

// Connects and waits (on the event loop) until connected; false on failure.
inline bool connectSession(console::ConsoleSession& session, const std::string& dsn)
{
    session.connectTo(settingsFor(dsn));
    return QTest::qWaitFor(
        [&] { return session.state() == console::ConsoleSession::State::Connected; }, browserTimeoutMs);
}

template <typename... P> inline void execSql(pqxx::connection& c, const std::string& sql, P&&... params)
{
    pqxx::work w(c);
    w.exec_params(sql, std::forward<P>(params)...);
    w.commit();
}

template <typename... P> inline pqxx::result querySql(pqxx::connection& c, const std::string& sql, P&&... params)
{
    pqxx::read_transaction t(c);
    auto r = t.exec_params(sql, std::forward<P>(params)...);
    t.commit();
    return r;
}

// One task row in a given state; updated_at and created_at from `agoSeconds` before now.
inline void plantTask(pqxx::connection& c, const std::string& key, const std::string& status, int attempts = 1,
    int maxAttempts = 5, const char* errorClass = nullptr, int leaseSeconds = 0, double agoSeconds = 60)
{
    execSql(c,
        "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts, "
        " error_class, error_message, owner_token, lease_until, next_attempt_at, created_at, updated_at, errors) "
        "VALUES ($1, 'v1:' || repeat('c', 64), $2, $3, $4, $5::text,"
        " CASE WHEN $5::text IS NULL THEN NULL ELSE 'boom: ' || $5::text END,"
        " CASE WHEN $2 = 'processing' THEN gen_random_uuid() END,"
        " CASE WHEN $2 = 'processing' THEN now() + $6::int * interval '1 second' END,"
        " CASE WHEN $2 = 'retryable_failed' THEN now() + interval '1 hour' END,"
        " now() - $7::float8 * interval '1 second', now() - $7::float8 * interval '1 second',"
        " CASE WHEN $5::text IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object("
        "   'attempt', $3::int, 'at', now(), 'class', $5::text, 'message', 'boom: ' || $5::text)) END)",
        key, status, attempts, maxAttempts, errorClass, leaseSeconds, agoSeconds);
}

inline std::string taskField(pqxx::connection& c, const std::string& key, const std::string& expr)
{
    const auto r
        = querySql(c, "SELECT (" + expr + ")::text FROM idem.task_idempotency t WHERE t.idempotency_key = $1", key);
    if (r.empty())
        return "<no row>";
    return r[0][0].is_null() ? "<null>" : r[0][0].as<std::string>();
}

inline int auditCount(pqxx::connection& c, const std::string& key)
{
    return querySql(c, "SELECT count(*) FROM idem.task_idempotency_audit WHERE idempotency_key = $1", key)[0][0]
        .as<int>();
}

} // namespace idem::test
