#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <pqxx/connection>
#include <pqxx/row>
#include <pqxx/transaction_base>

#include "core/identifier.h"

namespace idem {

// What the dashboard tiles, `idemctl stats` and its JSON / Prometheus output show. Every figure
// is defined once, in statsSql() (see stats.cpp); this struct only carries the numbers.
struct StatsOptions {
    int windowMinutes = 15; // duplicate ratio and every counter sum: this many minute buckets, current one included
    int longUnfinishedAfterMinutes = 60;
    std::optional<std::string> tenant; // unset: all tenants
    std::optional<std::string> operation; // unset: all operations
    int statementTimeoutMs = 5000;
};

struct StatsSnapshot {
    // Live rows (task_idempotency), read through the partial indexes only.
    std::int64_t processing = 0;
    std::int64_t expiredLeases = 0;
    std::optional<double> oldestProcessingAgeSeconds; // unset when nothing is processing
    std::int64_t retryableFailed = 0;
    std::int64_t uncertain = 0;
    std::int64_t failedPermanent = 0;
    std::int64_t failedExhausted = 0;
    std::int64_t longUnfinished = 0;

    // Over the window, from idem_counters.
    std::optional<double> duplicateRatio; // unset when no claim was counted
    std::int64_t claims = 0; // the ratio's denominator
    std::int64_t retries = 0;
    std::int64_t failedRetries = 0;
    std::int64_t digestConflicts = 0;
    std::int64_t staleTokenRejections = 0;

    // Table-wide, from the planner's statistics: an estimate, unset before the first ANALYZE.
    std::optional<std::int64_t> totalRowsEstimate;

    // The audit trail's head, task_idempotency_audit's newest entry (the whole trail: the tenant
    // and operation filter does not apply). Ids only grow, so a smaller id later means removed
    // entries: whoever keeps this figure (the console, Prometheus) is a witness of the trail.
    std::int64_t auditHeadId = 0; // 0 when the trail is empty
    std::string auditHeadHash; // its entry_hash, hex; empty when the trail is empty

    std::string asOf; // server now(), ISO 8601 with offset
    bool inRecovery = false;
    std::optional<double> replicationLagSeconds; // only on a standby with replayed transactions
};

// The snapshot's SQL: $1 tenant, $2 operation (text, NULL = all), $3 window minutes,
// $4 long-unfinished minutes. Exposed so tests can EXPLAIN it.
std::string statsSql(const SchemaName& schema);

// One consistent snapshot: a read-only REPEATABLE READ transaction holding two statements
// (set_config of the statement timeout, then statsSql()). The timeout cannot ride inside the
// snapshot statement itself: PostgreSQL arms it before the statement runs.
StatsSnapshot readStats(pqxx::connection& conn, const SchemaName& schema, const StatsOptions& options);

// The same figures inside a transaction the caller opened (an incident snapshot reads them in its
// own REPEATABLE READ transaction, beside the rows they count). Sets no statement timeout.
StatsSnapshot readStats(pqxx::transaction_base& tx, const SchemaName& schema, const StatsOptions& options);

// The figures from a row that carries statsSql()'s columns by name (the dashboard's tick selects
// them beside its chart data, in the same statement).
StatsSnapshot statsFromRow(const pqxx::row& row);

} // namespace idem
