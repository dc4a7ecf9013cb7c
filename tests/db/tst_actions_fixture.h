#pragma once

// What the recovery-action tests share: a migrated scratch database with a business table,
// rows planted in any state, and independent reads of what landed (the row, its image as the
// audit should hold it, the audit entry), all through bound parameters.

#include <QTest>

#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "operations/actions.h"
#include "operations/audit.h"
#include "tests/support/taskrows.h"

namespace idem::test {

// The protocol fixture's database, business table and connections; here `conn` is the
// operator, `other` a worker or a second operator, `admin` plants and reads.
struct ActionsFixture : ProtocolFixture {
    // Keys as plain strings: actions take any stored key, not only well-formed TaskKeys.
    std::string nextKey(const std::string& tenant)
    {
        std::string id = QTest::currentTestFunction();
        if (const char* tag = QTest::currentDataTag())
            id += std::string("/") + tag;
        return tenant + ":charge:" + id + "#" + std::to_string(++keys);
    }

    ActionOptions options(const std::string& reason) const
    {
        ActionOptions o;
        o.reason = reason;
        o.actor = "tester@ci-host";
        return o;
    }

    // A row as a worker would have left it in `status`, last touched a minute ago.
    RowVersion plant(
        const std::string& key, const std::string& status, int attempts, int maxAttempts, const std::string& errorClass)
    {
        pqxx::work w(*admin);
        w.exec_params(
            "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts,"
            " error_class, error_message, owner_token, lease_until, next_attempt_at, result_json, errors,"
            " created_at, updated_at)"
            " VALUES ($1, 'v1:planted', $2, $3, $4, NULLIF($5, ''), CASE WHEN $2 <> 'processing' THEN 'boom' END,"
            "  CASE WHEN $2 = 'processing' THEN gen_random_uuid() END,"
            "  CASE WHEN $2 = 'processing' THEN now() + interval '1 hour' END,"
            "  CASE WHEN $2 = 'retryable_failed' THEN now() - interval '1 second' END,"
            "  CASE WHEN $2 = 'succeeded' THEN '{\"receipt\": \"r-1\"}'::jsonb END,"
            "  CASE WHEN $2 = 'processing' THEN '[]'::jsonb ELSE '[{\"at\": \"2024-01-01T00:00:00+00:00\","
            "  \"class\": \"retryable\", \"attempt\": 1, \"message\": \"boom\"}]'::jsonb END,"
            "  now() - interval '1 hour', now() - interval '1 minute')",
            key, status, attempts, maxAttempts, errorClass);
        w.commit();
        return *version(key);
    }

    std::optional<RowVersion> version(const std::string& key)
    {
        pqxx::read_transaction t(*admin);
        const auto r = t.exec_params(
            "SELECT status, (extract(epoch FROM updated_at) * 1000000)::bigint FROM idem.task_idempotency"
            " WHERE idempotency_key = $1",
            key);
        if (r.empty())
            return std::nullopt;
        return RowVersion { key, r[0][0].as<std::string>(), r[0][1].as<std::int64_t>() };
    }

    QByteArray f(const std::string& key, const std::string& expr)
    {
        return scalar(
            *admin, "SELECT (" + expr + ")::text FROM idem.task_idempotency t WHERE t.idempotency_key = $1", key);
    }

    // The row as the audit must keep it, built here rather than by the schema's own function:
    // every column in UTC, result_json replaced by the SHA-256 of its text.
    QByteArray image(const std::string& key)
    {
        pqxx::work w(*admin);
        w.exec("SET LOCAL TimeZone = 'UTC'");
        const auto r
            = w.exec_params("SELECT ((to_jsonb(t) - 'result_json') || jsonb_build_object('result_json_sha256',"
                            " CASE WHEN t.result_json IS NULL THEN NULL"
                            "      ELSE encode(sha256(convert_to(t.result_json::text, 'UTF8')), 'hex') END))::text"
                            " FROM idem.task_idempotency t WHERE t.idempotency_key = $1",
                key);
        return r.empty() ? "<no row>"_b : bytes(r[0][0].as<std::string>());
    }

    long long auditCount()
    {
        return scalar(*admin, "SELECT count(*)::text FROM idem.task_idempotency_audit").toLongLong();
    }

    int businessRows(const std::string& key)
    {
        return scalar(*admin, "SELECT count(*)::text FROM payments WHERE idempotency_key = $1", key).toInt();
    }

    // The entry says who (the acting connection's session user, address and application name,
    // the actor it passed), why, and the row on both sides; it links to the one before it and
    // its hash is what C++ computes from its fields.
    void checkEntry(std::int64_t id, const std::string& key, const std::string& action, const std::string& reason,
        const std::string& actor, const QByteArray& before, const QByteArray& after)
    {
        const auto entries
            = listAudit(*admin, SchemaName(), AuditFilter { .afterId = id - 1, .oldestFirst = true, .limit = 1 });
        QCOMPARE(entries.size(), std::size_t(1));
        const AuditEntry& e = entries[0];
        QCOMPARE(e.id, id);
        QCOMPARE(e.key, key);
        QCOMPARE(e.action, action);
        QCOMPARE(e.reason, reason);
        QCOMPARE(e.osUser, actor);
        QCOMPARE(bytes(e.dbRole), scalar(*conn, "SELECT session_user::text"));
        QCOMPARE(bytes(e.clientHost), scalar(*conn, "SELECT coalesce(host(inet_client_addr()), '[local]')"));
        QCOMPARE(bytes(e.application), scalar(*conn, "SELECT current_setting('application_name')"));
        QVERIFY(!e.application.empty());
        QCOMPARE(bytes(e.beforeImage), before);
        QCOMPARE(bytes(e.afterImage), after);
        const QByteArray prev = id == 1
            ? QByteArray(auditGenesisHash)
            : scalar(*admin, "SELECT entry_hash FROM idem.task_idempotency_audit WHERE id = $1",
                static_cast<long long>(id - 1));
        QCOMPARE(bytes(e.prevHash), prev);
        QCOMPARE(e.entryHash, auditEntryHash(e));
        QCOMPARE(scalar(*admin,
                     "SELECT (now() - at < interval '1 minute')::text FROM idem.task_idempotency_audit"
                     " WHERE id = $1",
                     static_cast<long long>(id)),
            "true"_b);
    }
};

} // namespace idem::test
