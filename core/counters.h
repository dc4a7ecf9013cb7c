#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem {

// Outcome names as stored in idem_counters.outcome (see resources/sql/migrations/0001_initial.sql).
namespace outcome {
    inline constexpr const char* Acquired = "acquired";
    inline constexpr const char* ReacquiredLease = "reacquired_lease";
    inline constexpr const char* ReacquiredRetry = "reacquired_retry";
    inline constexpr const char* Replayed = "replayed";
    inline constexpr const char* InProgress = "in_progress";
    inline constexpr const char* Conflict = "conflict";
    inline constexpr const char* RetryLater = "retry_later";
    inline constexpr const char* RejectedFailed = "rejected_failed";
    inline constexpr const char* StaleToken = "stale_token";
    inline constexpr const char* Succeeded = "succeeded";
    inline constexpr const char* FailedRetryable = "failed_retryable";
    inline constexpr const char* FailedPermanent = "failed_permanent";
    inline constexpr const char* FailedUnknown = "failed_unknown";
    inline constexpr const char* Exhausted = "exhausted";
    // A failure of attempt 2 or later (schema v10), counted beside the failure's own outcome:
    // what "failed retries" counts.
    inline constexpr const char* RetryFailed = "retry_failed";
    // A claim turned away by a pause (schema v15).
    inline constexpr const char* Paused = "paused";
}

// Per-minute outcome counts, aggregated in memory and written in one statement per flush.
// Counting on the claim path would make every claim of an operation update the same counter
// row, serialising them on its lock; here a claim only takes a mutex for a map increment.
// The flush goes through the SECURITY DEFINER add_counters() (schema v6): a worker has no
// write on idem_counters.
class OutcomeCounters {
public:
    static constexpr std::size_t maxNameBytes = 64; // tenant, operation (as core/key.h)
    static constexpr long long maxAdd = 1'000'000'000'000; // per add()
    static constexpr std::size_t maxBatchRows = 10'000; // per add_counters() call
    static constexpr std::chrono::hours maxAgeDays { 30 * 24 }; // older pending minutes are dropped

    // Throws std::invalid_argument for an unknown outcome, an empty or over-long tenant or
    // operation, or n outside 0 .. maxAdd.
    void add(const std::string& tenant, const std::string& operation, const char* outcome, long long n = 1);
    // Writes and clears what has accumulated. On failure the counts are kept for the next try,
    // except a batch the database refuses as out of bounds (std::invalid_argument), which would
    // be refused every time. Returns the number of counter rows written.
    // A schema older than v10 refuses the retry_failed outcome (and with it the whole batch):
    // the batch is sent again without those rows, and retry_failed is left out of every later
    // flush of this object (a worker started before the migration counts it after a restart).
    std::size_t flush(pqxx::connection& conn, const SchemaName& schema);
    std::size_t pendingRows() const;
    bool sendsRetryFailed() const { return m_sendRetryFailed.load(); }

private:
    using Key = std::tuple<std::int64_t /*minute*/, std::string, std::string, std::string>;
    void restore(const std::map<Key, long long>& batch);
    mutable std::mutex m_mutex;
    std::map<Key, long long> m_pending;
    std::atomic<bool> m_sendRetryFailed { true };
};

// Flushes an OutcomeCounters on its own connection and thread every interval, and once more
// when destroyed. A failed flush (database away) is retried at the next interval.
class CounterFlusher {
public:
    CounterFlusher(std::string conninfo, SchemaName schema, OutcomeCounters& counters,
                   std::chrono::milliseconds interval = std::chrono::seconds(1));
    ~CounterFlusher();
    CounterFlusher(const CounterFlusher&) = delete;
    CounterFlusher& operator=(const CounterFlusher&) = delete;

    // Flushes now and waits for it; true when everything pending was written.
    bool flushNow();

private:
    void loop();
    bool flushOnce();

    std::string m_conninfo;
    SchemaName m_schema;
    OutcomeCounters& m_counters;
    std::chrono::milliseconds m_interval;
    std::unique_ptr<pqxx::connection> m_conn;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stop = false;
    std::thread m_thread;
};

} // namespace idem
