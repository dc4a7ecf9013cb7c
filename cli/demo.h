#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/counters.h"
#include "core/identifier.h"
#include "core/key.h"
#include "core/runner.h"

// The pieces of `idemctl demo` that its worker threads share: what to generate, what came of
// it, and the client-side retry queue. The workers are in demoworker.h, the end-of-run check
// in demoreport.h, the command itself in cmd_demo.cpp.
namespace idem::cli::demo {

struct Options {
    std::string dsn;
    SchemaName schema;
    int workers = 4;
    int tenants = 3;
    std::vector<std::string> operations { "charge", "refund", "ship" };
    long long keys = 0; // distinct business ids per tenant and operation; 0: every fresh request is new
    double duplicateRate = 0.15;
    double conflictRate = 0.02;
    double slowRate = 0.02;
    std::chrono::milliseconds slow { 1500 };
    double transientRate = 0.05;
    double permanentRate = 0.01;
    double unknownRate = 0.02;
    double dieRate = 0.01;
    double staleRate = 0.01;
    std::chrono::milliseconds lease { 5000 };
    double durationSeconds = 0; // 0: until SIGINT / SIGTERM
    double rate = 50; // requests per second over all workers; 0: as fast as possible
    std::uint64_t seed = 0;
    bool quiet = false;
    bool redrive = true; // register the operations re-drivable and run their re-drivers
    bool json = false;
    std::string runId; // part of every business id, so each run's keys are its own
    // What each worker reports when it connects (idem_report_version, schema v18): this build's
    // version unless --worker-version says otherwise, under hostWorkerName("idemctl-demo-N").
    std::string workerVersion;

    // "order-<run>-": the business id prefix of this run's keys.
    std::string businessIdPrefix() const { return "order-" + runId + "-"; }
};

// What the demo counts. The first eight are runTask's outcome kinds, in its order; the rest
// are the demo's own events.
enum class Tally : std::size_t {
    Succeeded,
    Replayed,
    InProgress,
    Conflict,
    RetryLater,
    Failed,
    WillRetry,
    LostOwnership,
    Paused, // turned away by a pause (schema v15): asked again later, not counted as a try
    Requests, // requests sent, retries included
    Died, // executors that claimed and vanished, leaving the lease to expire
    StaleAttempts, // executors that tried to commit after losing their lease
    DownstreamPaid, // the payment service took a new payment
    DownstreamDeduped, // the payment service recognised the key and did nothing
    RetriesAbandoned, // a client gave up (too many tries, or its retry queue was full)
    DatabaseErrors, // connection lost; the worker reconnects
    NotPrimary, // refused as read-only (a standby, a demoted primary): the worker reconnects and retries
    CutAtStop, // still waiting on the database when the stop's grace ran out: cut, no answer
    Errors, // anything else unexpected
    Count
};

inline constexpr std::size_t tallyCount = static_cast<std::size_t>(Tally::Count);
const char* tallyName(Tally t);
Tally tallyOf(RunOutcome::Kind kind);

class Stats {
public:
    using Snapshot = std::array<long long, tallyCount>;
    void add(Tally t, long long n = 1)
    {
        m_values[static_cast<std::size_t>(t)].fetch_add(n, std::memory_order_relaxed);
    }
    Snapshot snapshot() const;

private:
    std::array<std::atomic<long long>, tallyCount> m_values {};
};

inline long long at(const Stats::Snapshot& s, Tally t) { return s[static_cast<std::size_t>(t)]; }

// One client request: a key and the body sent with it. A retry sends the same pair again.
struct Request {
    TaskKey key;
    nlohmann::json body;
    int tries = 0; // sends so far
};

// The business content of a key (amount, currency, target) is a function of the key, so that
// a key drawn again from a bounded key space is the same intent, not a conflict.
nlohmann::json bodyFor(const TaskKey& key);

// Fields the digest ignores: per-send metadata, not part of the business intent.
const std::vector<std::string>& ignoredFields();

// Recently sent requests, which duplicates and conflicting requests reuse.
class RecentRequests {
public:
    void remember(const Request& r);
    std::optional<Request> pick(std::mt19937_64& rng) const;

private:
    static constexpr std::size_t capacity = 256;
    mutable std::mutex m_mutex;
    std::vector<Request> m_ring;
    std::size_t m_next = 0;
};

// Requests waiting to be sent again (in progress elsewhere, in backoff, no answer), shared by
// all workers: a retry is often taken by another worker than the one that sent it first.
class RetryQueue {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::size_t capacity = 10'000;

    bool push(Request r, Clock::time_point due); // false when full
    std::optional<Request> takeDue(Clock::time_point now);
    std::size_t size() const;
    std::set<std::string> keys() const; // the keys of the requests waiting

private:
    mutable std::mutex m_mutex;
    std::multimap<Clock::time_point, Request> m_queue;
};

// Spaces requests over all workers to the requested rate.
class RateLimiter {
public:
    explicit RateLimiter(double perSecond);
    // Waits for this caller's slot; false when `stop` was set while waiting.
    bool acquire(const std::atomic<bool>& stop);

private:
    std::mutex m_mutex;
    std::chrono::steady_clock::duration m_interval {};
    std::chrono::steady_clock::time_point m_next;
};

// What the demo's clients were told: every key acknowledged as succeeded (a success or a
// replay) with the result it was given. The end-of-run check holds the database to it: a
// failover to a standby that had not received the commit forgets an acknowledged success, and
// the business table alone cannot show that (the effect row vanished with the record).
class Ledger {
public:
    // A second acknowledgement with another result is a contradiction the client saw (unless a
    // purge removed the key in between: it ran again, as a new key; the report tells them apart).
    void acknowledge(const std::string& key, const std::string& resultJson);
    std::map<std::string, nlohmann::json> entries() const; // the first result each key was given
    std::set<std::string> contradicted() const;

private:
    mutable std::mutex m_mutex;
    std::map<std::string, nlohmann::json> m_told;
    std::set<std::string> m_contradicted;
};

// The sockets of the connections the workers and the monitor hold, so that a stop can cut them
// when a call hangs (a server that does not answer, a pool with no free server connection):
// --duration must end the run whatever the database does. shutdown(2) only: the fd stays its
// owner's to close, so it cannot be reused under it.
class SocketRegistry {
public:
    // The socket a slot (one per connection a thread holds) uses now; -1 clears it. Called
    // before the connection is closed, so no fd is cut after its owner let go of it.
    void set(int slot, int fd);
    // Shuts down every registered socket and any set later; returns how many it cut.
    int interruptAll();

private:
    std::mutex m_mutex;
    std::map<int, int> m_fds;
    bool m_interrupted = false;
};

struct Shared {
    explicit Shared(const Options& o)
        : options(o)
        , limiter(o.rate)
    {
    }
    const Options& options;
    Stats stats;
    RecentRequests recent;
    RetryQueue retries;
    RateLimiter limiter;
    OutcomeCounters counters;
    Ledger ledger;
    SocketRegistry sockets;
    std::atomic<bool> stop { false };
    std::atomic<int> running { 0 }; // worker and re-driver threads not yet returned
    // Schema v25: the demo's operations are registered re-drivable (tenant '*'): the workers'
    // claims store their requests, and a re-driver per operation runs operators' re-executions.
    // False when the registration was refused (another login owns it): plain claims as before.
    bool redrivable = false;
    std::atomic<long long> reexecuted { 0 }; // re-executions the demo's re-drivers ran to success
    std::atomic<long long> nextBusinessId { 0 };

    // Prints an unexpected error to stderr, the first few only so a database outage does not
    // flood the terminal.
    void reportError(const std::string& message);

private:
    std::mutex m_errorMutex;
    int m_errorsShown = 0;
};

} // namespace idem::cli::demo
