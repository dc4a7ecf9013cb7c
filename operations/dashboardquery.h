#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"
#include "operations/reconcile.h"
#include "operations/stats.h"

namespace idem {

// The console dashboard's tick: every figure of statsSql() (defined there, once) and the newest
// per-minute counter buckets for the charts, all from ONE statement. A single SELECT in
// autocommit sees one consistent snapshot, so the tick is one round trip; the connection's
// statement timeout (only: no read-only default, the tick may store the shared figures) is set
// once by prepareDashboardConnection().

struct DashboardOptions {
    StatsOptions stats; // window, long-unfinished threshold, tenant / operation filter
    int historyMinutes = 2; // counter buckets returned: this many minutes back, the current one included
    // Behind a transaction pooler (PgBouncer): nothing may stay on the server backend after the
    // tick, so no prepareDashboardConnection() and no named statement. The tick is then a
    // read-write transaction (it may store the shared figures) bounded by SET LOCAL
    // (stats.statementTimeoutMs), its statement unnamed: four round trips instead of one.
    bool noSessionState = false;
};

// One minute of idem_counters, summed over the filtered tenants and operations.
struct CounterBucket {
    std::int64_t minuteEpoch = 0; // bucket start, seconds since the epoch (UTC)
    std::int64_t acquired = 0;
    std::int64_t reacquiredLease = 0;
    std::int64_t reacquiredRetry = 0;
    std::int64_t replayed = 0;
    std::int64_t inProgress = 0;
    std::int64_t conflict = 0;
    std::int64_t retryLater = 0;
    std::int64_t rejectedFailed = 0;
    std::int64_t staleToken = 0;
    std::int64_t succeeded = 0;
    std::int64_t failedRetryable = 0;
    std::int64_t failedPermanent = 0;
    std::int64_t failedUnknown = 0;
    std::int64_t exhausted = 0;
    std::int64_t retryFailed = 0; // failures of attempt 2 or later (schema v10), also in their own outcome
    std::int64_t paused = 0; // claims turned away by a pause (schema v15)

    // The charts' per-minute series, with the same meaning as the tiles' window sums in statsSql().
    std::int64_t reclaims() const { return reacquiredLease + reacquiredRetry; }
    std::int64_t duplicates() const { return replayed + inProgress + conflict; }
    std::int64_t failedRetries() const { return retryFailed; }
    std::optional<double> duplicateRatio() const;
    // A counter figure's count in this bucket (Claims, Retries, FailedRetries, DigestConflicts,
    // StaleTokenRejections: what the window sums of statsSql() add up); unset for the others.
    std::optional<std::int64_t> count(Figure figure) const;

    bool operator==(const CounterBucket&) const = default;
};


struct DashboardReading {
    StatsReading stats;
    std::int64_t serverNowMs = 0;
    std::vector<CounterBucket> buckets; // oldest first; minutes without counts are absent
    // Unfinished rows by attempts, from the shared exact refresh (stats.exact): set when one exists.
    std::optional<std::vector<AttemptsBin>> attempts;
    // The reconcile probes' last runs, summed (schema v30): the Reconcile tile.
    ReconcileTotals reconcile;
};

// $1..$4 as statsSql(), $5 history minutes.
std::string dashboardSql(const SchemaName& schema);

// Once per direct connection, before its first tick: a session statement timeout (the tick's
// bound). The session stays read-write: the tick's idem_live_stats() stores the shared figures
// when this console is the one to count them (the reader role can write nothing else). Never
// behind a transaction pooler: the setting would stay on whichever backend ran it.
void prepareDashboardConnection(pqxx::connection& conn, int statementTimeoutMs);

// The unfiltered tick as a statement of its own: dashboardSql() with $1 and $2 bound to NULL in
// the text (so a generic plan has no per-row filter to evaluate) and $3..$5 renumbered $1..$3.
// readDashboard() prepares it once per connection and the server reuses its plan.
std::string unfilteredDashboardSql(const SchemaName& schema);

// The tick: exactly one round trip, no BEGIN/COMMIT: unfiltered, the prepared statement above
// (parsed and planned once per connection); filtered, dashboardSql() planned with its values.
// With options.noSessionState, the pooler-safe form described there. Throws pqxx errors.
DashboardReading readDashboard(pqxx::connection& conn, const SchemaName& schema, const DashboardOptions& options);

} // namespace idem
