#pragma once

#include <optional>
#include <string>
#include <vector>

namespace idem {

// Which task records an operator means: the task browser's server-side filters, what a
// dashboard tile opens, what `idemctl tasks` takes. Every set field narrows the set (AND);
// a default-constructed filter means every record. Values are only ever bound as parameters.
struct TaskFilter {
    std::vector<std::string> statuses; // empty: any status
    std::optional<std::string> tenant; // first field of the key (tenant:operation:business_id)
    std::optional<std::string> operation; // second field of the key
    std::optional<std::string> keyPrefix; // literal prefix of idempotency_key (no wildcards)
    std::optional<int> minAttempts; // attempts >= this
    bool expiredLease = false; // processing whose lease ran out (or has none)
    bool liveLease = false; // processing with a lease still running
    bool uncertain = false; // retryable_failed whose last outcome is unknown
    std::optional<std::string> errorClass; // retryable / permanent / unknown
    bool exhausted = false; // failed for any reason other than a permanent error
    std::optional<std::string> failedSince; // ISO 8601: status failed, updated_at at or after it
    std::optional<int> unfinishedForMinutes; // not succeeded, first seen at least this long ago
    bool digestConflicts = false; // keys with a recorded digest conflict
    // The counters' window (the last N minute buckets, the current one included), for what a
    // counter tile opens: updated_at in it; a recorded digest conflict whose last one is in it.
    std::optional<int> updatedWithinMinutes;
    std::optional<int> conflictWithinMinutes;
    // What the Failed retries tile counts, as keys: a failure of attempt 2 or later recorded in
    // the key's error history inside the updatedWithinMinutes window (which it needs), whatever
    // the key's status now (one that later succeeded included).
    bool failedRetryInWindow = false;
    // The last error message contains this text, case-insensitively, literally (no wildcards).
    // Unfinished tasks only: a succeeded task's message is the history of an attempt before the
    // success, and the restriction lets the unfinished-rows index bound the read.
    std::optional<std::string> errorContains;

    bool operator==(const TaskFilter&) const = default;
};

} // namespace idem
