#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/connection>

#include "core/identifier.h"
#include "core/key.h"
#include "core/runner.h"
#include "core/taskstore.h"

namespace idem {

// Re-execution that really runs (schema v25, docs/redrive.md). An operation registered as
// re-drivable stores each claim's canonical request beside its key (StoreOptions::storeRequestsOf,
// idem_claim_stored); an operator's requeue that re-executes queues a re-drive item; a Redriver of
// that operation takes the item, runs the stored request through runTask with the SAME key and the
// stored request's digest (so a race with the original client's own retry still has one effect:
// both go through the same claim), and records what became of it. No Qt.

struct RedriveRegistration {
    std::string tenant; // a key's tenant, or "*" for every tenant
    std::string operation;
    int maxRequestBytes = 65536; // 1 .. 1048576: a claim with a larger request is refused
    std::vector<std::string> redact; // top-level fields shown as "[redacted]" to holders of read_requests
};

enum class RegisterOutcome { Registered, Unchanged, Updated };
const char* registerOutcomeName(RegisterOutcome outcome);

// idem_redrive_register, one round trip. Throws std::invalid_argument for bounds the SQL refuses
// (checked before any I/O where they can be), DatabaseUnavailable when the connection breaks, and
// pqxx::insufficient_privilege when another login owns the registration.
RegisterOutcome registerRedrivable(pqxx::connection& conn, const SchemaName& schema, const RedriveRegistration& r);

// The request's canonical JSON text without its ignored fields: what a claim of a re-drivable
// operation stores, the text whose v1 digest is requestDigest(request, ignoreFields).
std::string canonicalRequest(const nlohmann::json& request, const std::vector<std::string>& ignoreFields = {});

// One item a re-driver took.
struct RedriveItem {
    std::int64_t id = 0;
    std::string key; // tenant:operation:business_id
    std::string request; // the stored canonical JSON text
    std::string requestDigest;
    std::int64_t jobId = 0; // 0: a single requeue
};

// The business work of a re-execution: as a TaskFunction, with the stored request parsed. It runs
// inside the fenced business transaction (its writes commit with the success or not at all).
using RedriveTask = std::function<std::string(pqxx::work& tx, const TaskContext& ctx, const nlohmann::json& request)>;

// What finish records for a run's outcome: Succeeded, Replayed -> succeeded; Failed -> failed;
// Conflict -> conflict; InProgress, RetryLater, Paused, WillRetry, LostOwnership -> later.
const char* redriveFinishOutcome(RunOutcome::Kind kind);

struct RedriveOptions {
    std::string version = "unknown"; // reported with the re-driver's presence
    int batch = 10; // items taken at a time, 1 .. 100
    std::chrono::milliseconds itemLease { 60'000 }; // 1 s .. 1 h: an item whose re-driver died is taken again after it
    // LISTEN idem_redrive and wake on its NOTIFY (between polls): only where the connection is not
    // pooled. Behind a transaction pooler (PgBouncer) set it false: the re-driver polls.
    bool listen = true;
    std::chrono::milliseconds poll { 2'000 }; // how often it looks for items when nothing woke it, <= 2 s
    std::chrono::milliseconds presenceEvery { 10'000 }; // idem_redriver_seen, <= 10 s
    // An item that finishes later (its key held by another, in backoff or paused) is taken again
    // when the key's lease or backoff ends, but after at most this long (2 s .. 1 h; schema v27):
    // a holder that finishes early is not waited for its whole lease.
    std::chrono::milliseconds laterWait { 5'000 };
    RunOptions run; // for each item's runTask (request is set per item)
};

struct RedriveStats {
    std::int64_t taken = 0;
    std::int64_t succeeded = 0;
    std::int64_t failed = 0;
    std::int64_t conflict = 0;
    std::int64_t later = 0;
    std::int64_t stale = 0; // finish answered stale: the item had been taken again meanwhile
    std::int64_t batches = 0;
};

// A re-drive loop for one operation of one tenant ("*": every tenant), as worker `worker` (a
// stable name, like a deploy's: hostWorkerName). One connection, one thread: the connection is the
// one the loop LISTENs on, takes items on, and runs them on (through a TaskStore with
// storeOptions). stop() may be called from any thread (or a signal handler: it only sets a flag);
// run() returns within about 200 ms, after the item it is running.
class Redriver {
public:
    Redriver(pqxx::connection& conn, StoreOptions storeOptions, std::string tenant, std::string operation,
        std::string worker, RedriveTask task, RedriveOptions options = {}, OutcomeCounters* counters = nullptr);
    ~Redriver();
    Redriver(const Redriver&) = delete;
    Redriver& operator=(const Redriver&) = delete;

    // Reports presence, then takes and runs batches until stop(). Throws DatabaseUnavailable when
    // the connection breaks (the items it held are taken again once their lease ends),
    // pqxx::insufficient_privilege when the login may not re-drive the operation, and Refused
    // (ID004) when it is not registered.
    void run();
    // One presence report if due, one take and the runs of what it took; returns the items taken.
    int runOnce();
    void stop() { m_stop.store(true); }
    bool stopping() const { return m_stop.load(); }
    const RedriveStats& stats() const { return m_stats; }

private:
    void reportPresence(bool force);
    void runItem(const RedriveItem& item);
    bool finish(std::int64_t itemId, const char* outcome, const std::string& detail);
    void waitForWork();

    pqxx::connection& m_conn;
    TaskStore m_store;
    std::string m_tenant;
    std::string m_operation;
    std::string m_worker;
    RedriveTask m_task;
    RedriveOptions m_options;
    std::atomic<bool> m_stop { false };
    RedriveStats m_stats;
    std::chrono::steady_clock::time_point m_lastSeen {};
    bool m_seen = false;
    struct Listener;
    std::unique_ptr<Listener> m_listener;
};

} // namespace idem
