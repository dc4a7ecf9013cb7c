#include "core/redrive.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include <pqxx/pqxx>

#include "core/canonicaljson.h"
#include "core/connection.h"
#include "core/digest.h"
#include "core/servergone.h"
#include "core/workerversion.h"

namespace idem {

namespace {

    constexpr std::size_t maxDetailBytes = 4000; // the SQL allows 4096 characters

    // Cut at a UTF-8 boundary, so the server never sees a broken sequence.
    std::string bounded(std::string s)
    {
        if (s.size() <= maxDetailBytes)
            return s;
        std::size_t n = maxDetailBytes;
        while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
            --n;
        s.resize(n);
        return s;
    }

    [[noreturn]] void rethrow(const pqxx::sql_error& e)
    {
        if (e.sqlstate() == sqlstate::InvalidArgument)
            throw std::invalid_argument(e.what());
        if (e.sqlstate() == sqlstate::Refused)
            throw Refused(e.what());
        // A server going away or turning read-only under the loop is a lost server, as a broken
        // connection is (issue 42): the caller connects to the primary again.
        if (isServerGone(e))
            throw DatabaseUnavailable(describeLostConnection(e.what()));
        if (isReadOnlyRefusal(e))
            throw NotPrimary(describeReadOnly(e.what()));
        throw;
    }

    // Runs fn; a broken connection is DatabaseUnavailable, an ID003 std::invalid_argument, an
    // ID004 Refused.
    template <typename Fn>
    auto guarded(Fn&& fn)
    {
        try {
            return fn();
        } catch (const pqxx::broken_connection& e) {
            // In words, as the workers say it (never libpqxx's "client encoding" text).
            throw DatabaseUnavailable(describeLostConnection(e.what()));
        } catch (const pqxx::sql_error& e) {
            rethrow(e);
        }
    }

    std::string detailOf(const RunOutcome& out)
    {
        using K = RunOutcome::Kind;
        switch (out.kind) {
        case K::Succeeded:
            return "succeeded";
        case K::Replayed:
            return "replayed: the key had succeeded already";
        case K::Conflict:
            return "conflict: the key is held by another request";
        case K::Failed:
            return "failed: " + (out.error.empty() ? out.claim.errorMessage : out.error);
        case K::WillRetry:
            return "attempt failed, to be retried: " + out.error;
        case K::LostOwnership:
            return "lost ownership before commit: " + out.error;
        case K::InProgress:
            return "in progress elsewhere: retry after " + std::to_string(out.claim.retryAfter.count()) + " ms";
        case K::RetryLater:
            return "in backoff: retry after " + std::to_string(out.claim.retryAfter.count()) + " ms";
        case K::Paused:
            return "paused (" + out.claim.detail + "): " + out.claim.errorMessage;
        }
        return runOutcomeName(out.kind);
    }

} // namespace

const char* registerOutcomeName(RegisterOutcome outcome)
{
    switch (outcome) {
    case RegisterOutcome::Registered:
        return "registered";
    case RegisterOutcome::Unchanged:
        return "unchanged";
    case RegisterOutcome::Updated:
        return "updated";
    }
    return "unchanged";
}

RegisterOutcome registerRedrivable(pqxx::connection& conn, const SchemaName& schema, const RedriveRegistration& r)
{
    if (r.tenant != "*" && !isKeyName(r.tenant))
        throw std::invalid_argument("tenant must be '*' or 1 to 64 visible ASCII characters without ':'");
    if (!isKeyName(r.operation) || r.operation == "*")
        throw std::invalid_argument("operation must be 1 to 64 visible ASCII characters without ':', and not '*'");
    if (r.maxRequestBytes < 1 || r.maxRequestBytes > 1048576)
        throw std::invalid_argument(
            "max request bytes must be 1 to 1048576 (1 MiB), not " + std::to_string(r.maxRequestBytes));
    if (r.redact.size() > 64)
        throw std::invalid_argument("at most 64 redacted fields");
    const nlohmann::json redact = r.redact;
    const auto row = guarded([&] {
        pqxx::nontransaction w(conn);
        return w.exec_params("SELECT outcome FROM " + schema.qualify("idem_redrive_register")
                + "($1, $2, $3, ARRAY(SELECT jsonb_array_elements_text($4::jsonb)))",
            r.tenant, r.operation, r.maxRequestBytes, redact.dump());
    });
    const std::string outcome = row.at(0)[0].as<std::string>();
    if (outcome == "registered")
        return RegisterOutcome::Registered;
    if (outcome == "updated")
        return RegisterOutcome::Updated;
    return RegisterOutcome::Unchanged;
}

std::string canonicalRequest(const nlohmann::json& request, const std::vector<std::string>& ignoreFields)
{
    return canonicalJson(withoutFields(request, ignoreFields));
}

const char* redriveFinishOutcome(RunOutcome::Kind kind)
{
    using K = RunOutcome::Kind;
    switch (kind) {
    case K::Succeeded:
    case K::Replayed:
        return "succeeded";
    case K::Failed:
        return "failed";
    case K::Conflict:
        return "conflict";
    case K::InProgress:
    case K::RetryLater:
    case K::Paused:
    case K::WillRetry:
    case K::LostOwnership:
        return "later";
    }
    return "later";
}

// LISTEN idem_redrive on the loop's connection; wakes on a payload of this operation.
struct Redriver::Listener : pqxx::notification_receiver {
    Listener(pqxx::connection_base& c, std::string tenant, std::string operation)
        : pqxx::notification_receiver(c, "idem_redrive")
        , m_tenant(std::move(tenant))
        , m_operation(std::move(operation))
    {
    }
    void operator()(const std::string& payload, int) override
    {
        const auto colon = payload.find(':');
        if (colon == std::string::npos)
            return;
        if (payload.substr(colon + 1) == m_operation && (m_tenant == "*" || payload.substr(0, colon) == m_tenant))
            woken = true;
    }
    bool woken = false;

private:
    std::string m_tenant;
    std::string m_operation;
};

Redriver::Redriver(pqxx::connection& conn, StoreOptions storeOptions, std::string tenant, std::string operation,
    std::string worker, RedriveTask task, RedriveOptions options, OutcomeCounters* counters)
    : m_conn(conn)
    , m_store(conn, std::move(storeOptions), counters)
    , m_tenant(std::move(tenant))
    , m_operation(std::move(operation))
    , m_worker(std::move(worker))
    , m_task(std::move(task))
    , m_options(std::move(options))
{
    if (m_tenant != "*" && !isKeyName(m_tenant))
        throw std::invalid_argument("tenant must be '*' or 1 to 64 visible ASCII characters without ':'");
    if (!isKeyName(m_operation) || m_operation == "*")
        throw std::invalid_argument("operation must be 1 to 64 visible ASCII characters without ':', and not '*'");
    validateVersionText(m_worker, "worker");
    validateVersionText(m_options.version, "version");
    if (m_options.batch < 1 || m_options.batch > 100)
        throw std::invalid_argument("a re-driver takes 1 to 100 items at a time");
    if (m_options.itemLease < std::chrono::seconds(1) || m_options.itemLease > std::chrono::hours(1))
        throw std::invalid_argument("an item's lease must be 1 s to 1 h");
    if (m_options.poll < std::chrono::milliseconds(10) || m_options.poll > std::chrono::seconds(2))
        throw std::invalid_argument("a re-driver polls every 10 ms to 2 s");
    if (m_options.presenceEvery < std::chrono::seconds(1) || m_options.presenceEvery > std::chrono::seconds(10))
        throw std::invalid_argument("a re-driver reports itself every 1 to 10 s");
    if (m_options.laterWait < std::chrono::seconds(2) || m_options.laterWait > std::chrono::hours(1))
        throw std::invalid_argument("an item put back waits 2 s to 1 h at most");
    if (!m_task)
        throw std::invalid_argument("a re-driver needs a task");
}

Redriver::~Redriver() = default;

void Redriver::reportPresence(bool force)
{
    const auto now = std::chrono::steady_clock::now();
    if (!force && m_seen && now - m_lastSeen < m_options.presenceEvery)
        return;
    guarded([&] {
        pqxx::nontransaction w(m_conn);
        return w.exec_params(
            "SELECT outcome FROM " + m_store.options().schema.qualify("idem_redriver_seen") + "($1, $2, $3, $4)",
            m_tenant, m_operation, m_worker, m_options.version);
    });
    m_lastSeen = now;
    m_seen = true;
}

bool Redriver::finish(std::int64_t itemId, const char* outcome, const std::string& detail)
{
    const auto r = guarded([&] {
        pqxx::nontransaction w(m_conn);
        return w.exec_params("SELECT outcome, state FROM " + m_store.options().schema.qualify("idem_redrive_finish")
                + "($1, $2, $3, $4, $5)",
            static_cast<long long>(itemId), m_worker, std::string(outcome), bounded(detail),
            static_cast<int>(m_options.laterWait.count()));
    });
    if (r.at(0)[0].as<std::string>() == "stale") {
        ++m_stats.stale;
        return false;
    }
    return true;
}

void Redriver::runItem(const RedriveItem& item)
{
    nlohmann::json request;
    std::optional<TaskKey> key;
    try {
        key = TaskKey::parse(item.key);
        request = parseJsonStrict(item.request);
    } catch (const std::exception& e) {
        finish(item.id, "failed", std::string("the stored request cannot be run: ") + e.what());
        ++m_stats.failed;
        return;
    }
    RunOptions run = m_options.run;
    run.request = item.request;
    RunOutcome out;
    try {
        out = runTask(
            m_store, *key, item.requestDigest,
            [&](pqxx::work& tx, const TaskContext& ctx) { return m_task(tx, ctx, request); }, run);
    } catch (const DatabaseUnavailable&) {
        throw; // the item's lease decides: another re-driver (or this one) takes it again
    } catch (const std::exception& e) {
        // Refused by the server (a bound, a right): said, and not tried again.
        finish(item.id, "failed", std::string("refused: ") + e.what());
        ++m_stats.failed;
        return;
    }
    const char* outcome = redriveFinishOutcome(out.kind);
    if (finish(item.id, outcome, detailOf(out))) {
        const std::string o = outcome;
        if (o == "succeeded")
            ++m_stats.succeeded;
        else if (o == "failed")
            ++m_stats.failed;
        else if (o == "conflict")
            ++m_stats.conflict;
        else
            ++m_stats.later;
    }
}

int Redriver::runOnce()
{
    reportPresence(false);
    const auto r = guarded([&] {
        pqxx::nontransaction w(m_conn);
        return w.exec_params("SELECT item_id, idempotency_key, request, request_hash, job_id FROM "
                + m_store.options().schema.qualify("idem_redrive_take") + "($1, $2, $3, $4, $5)",
            m_tenant, m_operation, m_worker, m_options.batch, static_cast<long long>(m_options.itemLease.count()));
    });
    ++m_stats.batches;
    int taken = 0;
    for (const auto& row : r) {
        RedriveItem item;
        item.id = row[0].as<std::int64_t>();
        item.key = row[1].as<std::string>();
        item.request = row[2].as<std::string>();
        item.requestDigest = row[3].as<std::string>();
        item.jobId = row[4].is_null() ? 0 : row[4].as<std::int64_t>();
        ++taken;
        ++m_stats.taken;
        runItem(item);
        if (stopping())
            break; // the rest of the batch is taken again once its lease ends
    }
    return taken;
}

void Redriver::waitForWork()
{
    const auto until = std::chrono::steady_clock::now() + m_options.poll;
    while (!stopping()) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= until)
            return;
        const auto slice = std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(200));
        if (m_listener) {
            const auto us = std::chrono::duration_cast<std::chrono::microseconds>(slice).count();
            guarded([&] { return m_conn.await_notification(us / 1'000'000, us % 1'000'000); });
            if (m_listener->woken) {
                m_listener->woken = false;
                return;
            }
        } else {
            std::this_thread::sleep_for(slice);
        }
    }
}

void Redriver::run()
{
    reportPresence(true);
    if (m_options.listen && !m_listener)
        m_listener = guarded([&] { return std::make_unique<Listener>(m_conn, m_tenant, m_operation); });
    while (!stopping()) {
        if (m_listener)
            m_listener->woken = false;
        const int taken = runOnce();
        if (m_listener)
            guarded([&] { return m_conn.get_notifs(); }); // what came during the batch wakes the next one
        if (taken < m_options.batch && !(m_listener && m_listener->woken) && !stopping())
            waitForWork();
    }
}

} // namespace idem
