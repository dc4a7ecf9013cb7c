#pragma once
// The demo's re-drivers after a failover or a switchover (issue 42): a failed key of one of the
// demo's operations, with the request stored that the demo's re-driver runs, requeued with
// re-execute on the primary of `dsn`; then the wait, with a bounded clock, for its re-drive item
// to end. tst_failover and tst_patroni run it while `idemctl demo` runs.
#include <QThread>

#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/digest.h"
#include "core/redrive.h"

namespace idem::test {

// One try of requeueDemoKeyForRedrive, in one transaction.
inline std::int64_t requeueDemoKeyOnce(const std::string& dsn, const std::string& key)
{
    const nlohmann::json request { { "amount_cents", 4711 }, { "currency", "EUR" }, { "target", "acct-failover" } };
    pqxx::connection c(dsn);
    pqxx::work w(c);
    w.exec_params("SELECT * FROM idem.idem_claim_stored($1, $2, gen_random_uuid(), 60000, 5, NULL, $3)", key,
        idem::requestDigest(request), idem::canonicalRequest(request));
    w.exec_params("UPDATE idem.task_idempotency SET status = 'failed', owner_token = NULL, lease_until = NULL,"
                  " error_class = 'retryable', error_message = 'gateway down', updated_at = now()"
                  " WHERE idempotency_key = $1",
        key);
    const auto r
        = w.exec_params("SELECT r.outcome, r.redrive_item_id FROM idem.task_idempotency t,"
                        " LATERAL idem.idem_requeue_reexecute(t.idempotency_key, t.status,"
                        " (extract(epoch FROM t.updated_at) * 1000000)::bigint, 1, 'after the failover', 'test') r"
                        " WHERE t.idempotency_key = $1",
            key);
    w.commit();
    return r.empty() || r[0][1].is_null() ? 0 : r[0][1].as<std::int64_t>();
}

// Returns the re-drive item's id (0 when the requeue did not queue one). Tried again for up to
// 30 s while the primary is still settling (a pooler or proxy may route to the old one for a
// moment); the last failure is rethrown.
inline std::int64_t requeueDemoKeyForRedrive(const std::string& dsn, const std::string& key)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
        try {
            return requeueDemoKeyOnce(dsn, key);
        } catch (const std::exception&) {
            if (std::chrono::steady_clock::now() >= until)
                throw;
        }
        QThread::msleep(200);
    }
}

// The item's state and the key's, "succeeded succeeded 1" once the demo's re-driver ran it (the
// last figure: the key's business effects), or what they were when `bound` ran out.
inline std::string waitForRedrive(const std::string& dsn, std::int64_t itemId, std::chrono::milliseconds bound)
{
    const auto until = std::chrono::steady_clock::now() + bound;
    std::string last = "no answer";
    for (;;) {
        try {
            pqxx::connection c(dsn);
            pqxx::nontransaction n(c);
            const auto r = n.exec_params(
                "SELECT i.state || ' ' || coalesce(t.status, 'gone') || ' ' || (SELECT count(*) FROM"
                " idem.demo_orders_effects e WHERE e.idempotency_key = i.idempotency_key)"
                "  FROM idem.idem_redrive_items i LEFT JOIN idem.task_idempotency t USING (idempotency_key)"
                " WHERE i.id = $1",
                static_cast<long long>(itemId));
            last = r.empty() ? std::string("no item") : r[0][0].as<std::string>();
            if (last.rfind("queued", 0) != 0 && last.rfind("running", 0) != 0)
                return last;
        } catch (const std::exception& e) {
            last = e.what(); // the primary still settling: asked again
        }
        if (std::chrono::steady_clock::now() >= until)
            return last;
        QThread::msleep(200);
    }
}

} // namespace idem::test
