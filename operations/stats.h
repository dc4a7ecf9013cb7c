#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>
#include <pqxx/row>
#include <pqxx/transaction_base>

#include "core/identifier.h"

namespace idem {

// What the dashboard tiles, `idemctl stats` and its JSON / Prometheus output show. The row
// figures are defined in SQL (0008_stats_at_scale.sql: idem_live_stats, bounded, and
// idem_exact_stats, exact); the counter figures in statsSql() (statssql.cpp); this header only
// carries the numbers and what each of them is. Three files define what it declares: the
// statements' text (statssql.cpp), a row to figures (statsrow.cpp) and the reading and refresh
// protocol (statsrefresh.cpp).
struct StatsOptions {
    int windowMinutes = 15; // duplicate ratio and every counter sum: this many minute buckets, current one included
    int longUnfinishedAfterMinutes = 60;
    std::optional<std::string> tenant; // unset: all tenants
    std::optional<std::string> operation; // unset: all operations
    int statementTimeoutMs = 5000;
};

// The total rows' estimate source before the table's first ANALYZE (n_live_tup).
inline constexpr const char* liveRowCounterSource = "live-row counter (not analysed yet)";
inline constexpr const char* plannerStatisticsSource = "planner statistics";

// The total rows' estimate and whether the table is unanalysed, as SQL columns over a relation
// `rel` (oid, reltuples of task_idempotency): the stats reading and the Tasks page's count of
// every row read the one figure, so the tile and the page it opens agree.
std::string totalRowsEstimateColumns();

// Every row figure is counted up to this many rows per tick (idem_live_stats' c_cap).
constexpr std::int64_t boundedCountCap = 10000;

// What a shown number is.
enum class FigureQuality {
    Exact, // counted now (or summed from the counters now)
    ExactCached, // counted exactly at observedAt, by the shared refresh: shown with its age
    LowerBound, // the true figure is at least this (the count stopped at the cap)
    Estimate, // about this much (source says from what); never below a proven lower bound
};
const char* qualityName(FigureQuality quality); // exact, exact_cached, lower_bound, estimate

enum class Figure {
    Processing,
    ExpiredLeases,
    OldestProcessingAge,
    RetryableFailed,
    Uncertain,
    FailedPermanent,
    FailedExhausted,
    LongUnfinished,
    DuplicateRatio,
    Claims,
    Retries,
    FailedRetries,
    DigestConflicts,
    StaleTokenRejections,
    TotalRows,
};
constexpr int figureCount = 15;
// The JSON field / Prometheus suffix of a figure: processing, expired_leases, ...
const char* figureKey(Figure figure);

struct FigureLabel {
    FigureQuality quality = FigureQuality::Exact;
    std::string observedAt; // when the value held: ISO 8601 UTC
    // A lower bound's exact figure from the shared (or the console's own) refresh, as of
    // exactAsOf, when one exists for the same definition; unset otherwise.
    std::optional<double> exact;
    std::string exactAsOf;
    std::optional<double> exactAgeSeconds;
    std::string source; // an estimate's source ("planner statistics")
};

// Unfinished rows (status <> 'succeeded') by attempts; the last bin holds that many or more.
struct AttemptsBin {
    int attempts = 0;
    std::int64_t rows = 0;
    bool operator==(const AttemptsBin&) const = default;
};
constexpr int attemptsHistogramTopBin = 10;

// The exact row figures of one refresh (idem_stats_exact, or a console's own on a standby or
// under a filter).
struct ExactFigures {
    std::string takenAt; // ISO 8601 UTC
    double ageSeconds = 0; // at the reading's server time
    double costMs = 0;
    double periodSeconds = 0; // the next refresh is due this long after takenAt
    std::int64_t refreshes = 0; // how many the database has done (shared only)
    std::string takenBy; // the role that ran it (shared only)
    bool shared = false; // idem_stats_exact, not a console's own
    int longUnfinishedAfterMinutes = 60;
    std::int64_t processing = 0;
    std::int64_t expiredLeases = 0;
    std::optional<double> oldestProcessingAgeSeconds; // at the reading's server time
    std::int64_t retryableFailed = 0;
    std::int64_t uncertain = 0;
    std::int64_t failedPermanent = 0;
    std::int64_t failedExhausted = 0;
    std::int64_t longUnfinished = 0;
    std::vector<AttemptsBin> attempts;
};

// Counter flushes add_counters() refused as implausible (schema v13, idem_counters_refused):
// how many in the last 24 hours, and who sent the newest one.
struct RefusedFlushes {
    std::int64_t last24h = 0;
    std::int64_t kept = 0; // rows kept (the newest 1000)
    std::string lastAt; // ISO 8601 UTC; empty when none was ever refused
    std::string lastRole;
    std::string lastApplication;
    std::string lastClientAddr; // empty for a local socket
    std::string lastReason;
};

// A session holding the shared exact refresh past its due time (its transaction keeps the row
// locked; idem_exact_refresh_holder): readers count for themselves meanwhile.
struct ExactRefreshHolder {
    int pid = 0;
    std::string role;
    std::string application;
    std::string since; // ISO 8601 UTC: its transaction's start, when this role may see it
};

// One reading of the figures (idemctl stats, a dashboard tick, the exporter, the figures of an
// incident snapshot).
struct StatsReading {
    // Live rows (task_idempotency), bounded: each is exact or, when labels say so, the lower
    // bound boundedCountCap (or, filtered, what the visited rows prove).
    std::int64_t processing = 0;
    std::int64_t expiredLeases = 0;
    std::optional<double> oldestProcessingAgeSeconds; // unset when nothing is processing
    std::int64_t retryableFailed = 0;
    std::int64_t uncertain = 0;
    std::int64_t failedPermanent = 0;
    std::int64_t failedExhausted = 0;
    std::int64_t longUnfinished = 0; // processing or waiting to retry, first seen before the threshold
    int longUnfinishedAfterMinutes = 60; // that threshold

    // Over the window, from the counters (idem_counters_total; filtered, idem_counters).
    std::optional<double> duplicateRatio; // unset when no claim was counted
    std::int64_t claims = 0; // the ratio's denominator
    std::int64_t retries = 0;
    std::int64_t failedRetries = 0;
    std::int64_t digestConflicts = 0;
    std::int64_t staleTokenRejections = 0;

    // Table-wide, from the planner's statistics (an estimate, raised to what the row figures
    // prove); before the first ANALYZE from the statistics collector's live rows (its label's
    // source then is liveRowCounterSource), unset on a standby before then.
    std::optional<std::int64_t> totalRowsEstimate;

    // The audit trail's head, task_idempotency_audit's newest entry (the whole trail: the tenant
    // and operation filter does not apply). Ids only grow, so a smaller id later means removed
    // entries: whoever keeps this figure (the console, Prometheus) is a witness of the trail.
    std::int64_t auditHeadId = 0; // 0 when the trail is empty
    std::string auditHeadHash; // its entry_hash, hex; empty when the trail is empty

    std::string asOf; // server now(), ISO 8601 UTC
    bool inRecovery = false;
    std::optional<double> replicationLagSeconds; // only on a standby with replayed transactions

    // What each figure is, by Figure.
    std::array<FigureLabel, figureCount> labels {};
    const FigureLabel& label(Figure f) const { return labels[static_cast<std::size_t>(f)]; }
    FigureLabel& label(Figure f) { return labels[static_cast<std::size_t>(f)]; }
    bool anyLowerBound() const;

    // The row figures' own time and cost: liveShared when another reader counted them (within
    // the last second or so) and this one only read them.
    std::string liveTakenAt;
    bool liveShared = false;
    double liveCostMs = 0;
    std::int64_t liveComputations = 0; // how many times the database counted the shared figures

    // The shared exact refresh (unset before the first one, and under a filter); exactDue:
    // a refresh is due and nobody is running one (a primary, unfiltered).
    std::optional<ExactFigures> exact;
    bool exactDue = false;
    std::optional<ExactRefreshHolder> exactHolder; // set when it is held past its due time

    RefusedFlushes refusedFlushes;
};

// A count figure's value in s (the total rows' estimate unset until there is one); unset for the
// figures that are no count (the oldest processing age, the duplicate ratio).
std::optional<std::int64_t> countFigure(const StatsReading& s, Figure figure);

// statssql.cpp: the statements' text.

// The reading's SQL: $1 tenant, $2 operation (text, NULL = all), $3 window minutes,
// $4 long-unfinished minutes. exactRows: the row figures from idem_exact_stats (one pass over
// the unfinished rows, all exact) instead of the bounded idem_live_stats. Exposed so tests can
// EXPLAIN it.
std::string statsSql(const SchemaName& schema, bool exactRows = false);

// A statement of statsSql()'s family with its filter bound to NULL in the text: every "$1::text"
// and "$2::text" becomes NULL::text and $3..$params are renumbered $1..$(params - 2), so a
// generic plan has no per-row filter left to evaluate. Each placeholder is written with its cast,
// which makes the rewrite exact.
std::string withoutFilterParameters(std::string sql, int params);

// statsrefresh.cpp: the reading and the shared refresh protocol.

// One reading in its own READ COMMITTED transaction (so that it may store the shared bounded
// figures when it is the one to count them), with the statement timeout set for it. When
// refreshShared and the shared exact refresh is due, runs it first (refreshSharedExact) unless
// another reader is. exactRows: every row figure counted exactly now (idemctl stats --exact).
struct ReadStatsOptions {
    bool refreshShared = true;
    bool exactRows = false;
    int refreshTimeoutMs = 600000;
    // A direct connection (never a transaction pooler, which hands each transaction a backend
    // that may not know the statement): the unfiltered reading is prepared on it once and the
    // server reuses its plan, instead of parsing and planning it on every reading.
    bool prepared = false;
};
StatsReading readStats(pqxx::connection& conn, const SchemaName& schema, const StatsOptions& options,
    const ReadStatsOptions& how = {});

// The same figures inside a transaction the caller opened. An incident snapshot reads them in
// its own REPEATABLE READ transaction beside the rows they count, exactRows true. Sets no
// statement timeout.
StatsReading readStats(
    pqxx::transaction_base& tx, const SchemaName& schema, const StatsOptions& options, bool exactRows = false);

// The same, unfiltered readings through a statement prepared on tx's connection (named after its
// text, so another schema gets its own); filtered ones as above. Direct connections only (see
// ReadStatsOptions::prepared).
StatsReading readStatsPrepared(pqxx::transaction_base& tx, const SchemaName& schema, const StatsOptions& options);

// SET LOCAL for a reader's transaction, as bound values: they end with the transaction, so a
// pooled server connection keeps nothing of them. No parallel workers: a poll that fans out into
// three processes costs the database more CPU for a few milliseconds less wall time, and 20
// consoles multiply it.
void boundRead(pqxx::transaction_base& tx, int statementTimeoutMs);

// The shared exact refresh, if due and nobody else runs it: idem_exact_refresh_begin() in one
// transaction, idem_exact_refresh_finish() in the next with timeoutMs as its statement timeout.
// Returns true when this call refreshed. Throws on a database error (the attempt then counts as
// taken: the next is due after max(period, 60 s)).
bool refreshSharedExact(pqxx::connection& conn, const SchemaName& schema, int longUnfinishedAfterMinutes, int timeoutMs);

// Whether a reader needs exact figures of its own instead of the shared ones: under a filter
// (the shared refresh is unfiltered), on a standby whose replicated shared figures nobody on
// the primary keeps fresh (older than max(60 s, two periods)), or while a session holds the
// shared refresh past its due time (exactHolder: its open transaction keeps the row locked).
bool needsOwnExact(const StatsReading& s, bool filtered);

// A reader's own exact refresh (on a standby, or under a filter): idem_exact_stats() in a
// read-only transaction, timed. periodSeconds follows the same rule as the shared one.
ExactFigures readOwnExact(pqxx::connection& conn, const SchemaName& schema, const StatsOptions& options, int timeoutMs);

// The period after a refresh that cost costMs: 50x, 20 s to 15 min (~2 % of one core).
double exactRefreshPeriodSeconds(double costMs);

// statsrow.cpp: a row to figures (also qualityName(), figureKey(), countFigure() above).

// The figures from a row that carries statsSql()'s columns by name (the dashboard's tick selects
// them beside its chart data, in the same statement). Labels are set.
StatsReading statsFromRow(const pqxx::row& row);

// Sets s.labels from its bounded flags (already in the labels' quality) and the exact figures
// e: a lower bound gets e's value beside it when e counts the same thing. Replaces s.exact.
void attachExact(StatsReading& s, const ExactFigures& e);

} // namespace idem
