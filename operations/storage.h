#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/connection>
#include <pqxx/transaction_base>

#include "core/identifier.h"
#include "operations/horizon.h"
#include "operations/stats.h"

namespace idem {

// Key lifecycle (resources/sql/migrations/0009_key_lifecycle.sql): how long a succeeded key is kept, what
// the Idem tables hold and what a purge would remove. The console's Storage page and
// `idemctl storage` / `idemctl retention` read through here. Read-only except setRetention and
// clearRetention, which go through the audited SQL functions (idem_operator only).
//
// A succeeded row's completion time is its updated_at (complete() sets it, nothing changes a
// succeeded row afterwards). A row is due for purge when it is succeeded and was completed
// before now() minus the horizon of its operation (the second ':'-separated part of the key):
// the operation's own policy row, else the "*" row. Exactly at the horizon it is kept. A claim
// of a purged key creates it anew: the task executes again.

// One row of idem_retention_policy. "*" is the default for every operation without its own row.
struct RetentionPolicy {
    std::string operation; // an operation name (1..64 visible ASCII, no ':'), or "*"
    std::int64_t horizonSeconds = 0;
    std::string changedAt; // ISO 8601 UTC
    std::string changedBy; // "db_role (actor)" as the audited change recorded it; "migration" for the defaults
};

// The horizon in words for people: "30 days", "36 hours", "90 minutes", "45 seconds".
std::string formatHorizon(std::int64_t horizonSeconds);
// What purging means, said plainly: "a retry of a `charge` key older than 30 days executes
// again" (for "*": "a retry of any other key older than 7 days executes again").
std::string retentionSentence(const std::string& operation, std::int64_t horizonSeconds);

struct StorageTable {
    std::string name; // unqualified: task_idempotency, task_idempotency_audit, idem_counters, ...
    std::int64_t tableBytes = 0; // pg_table_size: heap, TOAST, free space and visibility maps
    std::int64_t indexBytes = 0; // pg_indexes_size
    std::int64_t totalBytes = 0; // pg_total_relation_size
    std::optional<std::int64_t> rowsEstimate; // pg_class.reltuples; unset before the first ANALYZE
    std::int64_t liveTuples = 0; // pg_stat_user_tables.n_live_tup (the statistics' estimate)
    std::int64_t deadTuples = 0; // n_dead_tup
    std::string lastVacuum; // ISO 8601 UTC; empty when never (since the statistics were reset)
    std::string lastAutovacuum;
    std::string lastAnalyze; // the newer of last_analyze and last_autoanalyze
};

// Rows of task_idempotency in one status. processing, retryable_failed and failed come from the
// bounded figures (exact below the cap) or the shared exact refresh (ExactCached, with its
// observedAt); succeeded is an Estimate (planner statistics minus the unfinished rows).
struct StatusRows {
    std::string status; // processing, retryable_failed, failed, succeeded
    std::int64_t rows = 0;
    FigureLabel label;
};

// One operation that has succeeded rows, or has a policy row of its own.
struct OperationRetention {
    std::string operation;
    std::string policyOperation; // the policy row that applies: the operation itself or "*"
    std::int64_t horizonSeconds = 0;
    std::string cutoff; // ISO 8601 UTC: a succeeded row completed before this is due
    std::string oldestCompletedAt; // the oldest succeeded row's completion; empty when it has none
    std::optional<double> oldestAgeSeconds; // at the report's asOf
    std::int64_t due = 0; // succeeded rows completed before the cutoff, counted up to StorageOptions::dueCap
    FigureLabel dueLabel; // Exact, or LowerBound when the count stopped at the cap
    std::string policyChangedAt;
    std::string policyChangedBy;
};

// One run of the purge (idem_purge_runs), from idemctl, a scheduler or idem_purge().
struct PurgeRun {
    std::int64_t id = 0;
    std::string state; // running, finished, abandoned (its session ended before it finished)
    std::string startedAt; // ISO 8601 UTC
    std::string finishedAt; // empty while running
    double durationSeconds = 0; // finished (or last batch) minus started
    std::int64_t rowsRemoved = 0;
    std::int64_t batches = 0;
    std::string dbRole; // session_user
    std::string actor; // as the client said (idemctl: login@hostname)
    std::string application; // application_name (pg_cron for a scheduled run)
    std::optional<std::int64_t> auditId; // its audit entry, once finished or closed as abandoned
    // A running run only: whether its session still holds the run's lock (idem_purge_alive). False
    // after a failover, a restart or a killed process: the row says running until the next purge
    // closes it as abandoned. Unknown on a standby, which cannot see the primary's sessions.
    std::optional<bool> alive;
    std::vector<std::pair<std::string, std::int64_t>> removedByOperation;
};

// The rows each operation lost, from a run's operations JSON (idem_purge_runs.operations).
std::vector<std::pair<std::string, std::int64_t>> removedByOperation(const std::string& operationsJson);

// One point of the table size over time (idem_storage_samples), task_idempotency only.
struct StorageSample {
    std::string takenAt; // ISO 8601 UTC
    std::int64_t tableBytes = 0;
    std::int64_t indexBytes = 0;
    std::optional<std::int64_t> rowsEstimate;
};

struct StorageOptions {
    std::int64_t dueCap = 10000; // per operation, 1..10,000,000
    int sampleDays = 90; // samples taken in the last this many days
    int statementTimeoutMs = 5000;
    // Store a size sample if the last one is older than the sample period (idem_storage_sample,
    // which readers may call: it writes at most one row per period). Ignored in readStorage(tx).
    bool takeSample = true;
};

struct StorageReport {
    std::string asOf; // server now(), ISO 8601 UTC
    std::vector<StorageTable> tables; // the Idem tables of the schema, largest first
    std::vector<StatusRows> rowsByStatus; // processing, retryable_failed, failed, succeeded
    std::vector<RetentionPolicy> policies; // "*" first, then by operation
    std::vector<OperationRetention> operations; // by operation
    std::int64_t dueCap = 0; // the cap each OperationRetention::due was counted up to
    std::int64_t dueTotal = 0; // sum over operations
    bool dueTotalLowerBound = false; // some operation's count stopped at the cap
    std::optional<PurgeRun> lastRun; // the newest run that is not running
    std::optional<PurgeRun> running; // the newest run still running, if any
    std::vector<StorageSample> samples; // oldest first
    double samplePeriodSeconds = 0; // at most one sample per this period
    // Schema v22: the approval policy's switches (false before v22): a retention change or a
    // manual purge waits for a second person's approval.
    bool retentionChangesNeedApproval = false;
    bool manualPurgesNeedApproval = false;
    // Schema v26: who holds back the transaction horizon, the dead rows the Idem tables keep
    // meanwhile and the vacuums that removed nothing (available false before v26).
    HorizonReading horizon;
};

// The succeeded rows due for purge per operation (idem_retention_due: each counted up to cap,
// 1..10,000,000, a count that reached it labelled a lower bound), with asOf as their observedAt.
struct RetentionDue {
    std::vector<OperationRetention> operations; // by operation
    std::int64_t total = 0;
    bool totalLowerBound = false;
};
RetentionDue readRetentionDue(
    pqxx::transaction_base& tx, const SchemaName& schema, std::int64_t cap, const std::string& asOf);

// Everything the Storage page shows, in one read-only READ COMMITTED transaction with the
// statement timeout (after idem_storage_sample in its own transaction when takeSample). Cost:
// the catalogue and statistics views, one index probe per operation for its oldest row and a
// count of at most dueCap index entries per operation (idem_retention_due); no table scan.
StorageReport readStorage(pqxx::connection& conn, const SchemaName& schema, const StorageOptions& options = {});
// The same inside a transaction the caller opened (no sample, no timeout set).
StorageReport readStorage(pqxx::transaction_base& tx, const SchemaName& schema, const StorageOptions& options = {});

std::vector<RetentionPolicy> readRetention(pqxx::transaction_base& tx, const SchemaName& schema);
std::vector<RetentionPolicy> readRetention(pqxx::connection& conn, const SchemaName& schema);

struct RetentionChange {
    std::optional<RetentionPolicy> before; // unset: the operation had no row of its own
    std::optional<RetentionPolicy> after; // unset: the row was removed (clearRetention)
    std::int64_t auditId = 0;
};

// Limits the SQL enforces too (SQLSTATE ID003): a horizon of 1 hour to 3650 days.
constexpr std::int64_t minHorizonSeconds = 3600;
constexpr std::int64_t maxHorizonSeconds = 3650LL * 86400;

// idem_set_retention(operation, horizon_seconds, reason, actor): sets (or adds) the policy row,
// one audit entry (action "retention"). Refused (pqxx::insufficient_privilege) for a role that
// is not idem_operator; std::invalid_argument before any I/O for what the SQL would refuse.
// actor empty: localActor().
RetentionChange setRetention(pqxx::connection& conn, const SchemaName& schema, const std::string& operation,
    std::int64_t horizonSeconds, const std::string& reason, const std::string& actor = {});
// idem_clear_retention(operation, reason, actor): the operation falls back to "*" (which itself
// cannot be removed). Audited as setRetention.
RetentionChange clearRetention(pqxx::connection& conn, const SchemaName& schema, const std::string& operation,
    const std::string& reason, const std::string& actor = {});

} // namespace idem
