#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <pqxx/transaction_base>

#include "core/identifier.h"

namespace idem {

// task_idempotency's row count over time (per hour; per ten minutes over the last two days), reconstructed from what the database already keeps:
// the rows now (planner statistics), minus the keys the claims created since each hour
// (idem_counters_total, outcome "acquired"), plus the rows the purges removed since
// (idem_purge_runs). No table scan, and history from the first day the counters hold, where the
// size samples (idem_storage_samples) only begin when the first reader took one. An estimate:
// keys deleted by hand, or counters a worker never flushed, shift it.
struct RowsHistoryPoint {
    std::string at; // ISO 8601 UTC, the end of the bucket (the last point: now)
    std::int64_t rows = 0;
    std::int64_t created = 0; // keys created in the bucket that ends here
    std::int64_t purged = 0; // rows purged in that bucket
};

struct RowsHistory {
    std::string asOf; // ISO 8601 UTC
    std::int64_t rowsNow = 0; // the estimate the history counts back from
    std::vector<RowsHistoryPoint> points; // oldest first; from the first hour with a counter or a purge
};

// The last `days` (1..3650) days; throws std::invalid_argument before any I/O for
// days out of range.
RowsHistory readRowsHistory(pqxx::transaction_base& tx, const SchemaName& schema, int days);

} // namespace idem
