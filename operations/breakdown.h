#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem {

// Where it is failing (issue 41): the dashboard's window split by operation (or by tenant and
// operation), with the window's most frequent error messages. What each figure reads, so its
// cost has a ceiling whatever the table holds (DESIGN.md section 6):
//   processing    rows in status processing now, from the processing partial index, at most
//                 `cap` rows read in all (then every processing figure is "at least");
//   failed        failures recorded in the window's per-minute counters (failed_retryable,
//                 failed_permanent, failed_unknown), exact;
//   retries       claims that took a row over again (reacquired_lease, reacquired_retry), exact;
//   conflicts     claims with another request digest (conflict), exact;
//                 the three counter figures read at most `cap` counter rows (then "at least");
//   p95           the run time's p95 over the window's folded minutes (the worst p95 tile's
//                 figure), at most `cap` latency rows read;
//   errors        unfinished rows updated in the window by their last error message, from the
//                 unfinished partial index, the newest `cap` rows read (then "at least").
// All of it is ONE statement: one round trip.
struct BreakdownQuery {
    int windowMinutes = 15; // the counters' window: this many minute buckets, the current one included
    bool byTenant = false; // one row per tenant and operation (else per operation)
    std::string tenant; // empty: every tenant (the dashboard's filter)
    std::string operation; // empty: every operation
    std::int64_t cap = 10000; // rows read per source, at most
    int topErrors = 10; // error messages returned, at most
    int statementTimeoutMs = 5000;
    // Behind a transaction pooler: the read sets its timeout with SET LOCAL in a transaction of
    // its own (three round trips more); else the connection's session timeout bounds it (the
    // caller sets it once per connection, as the dashboard's tick does).
    bool noSessionState = false;
};

struct BreakdownRow {
    std::string tenant; // "" in a per-operation breakdown
    std::string operation;
    std::int64_t processing = 0;
    std::int64_t failed = 0;
    std::int64_t retries = 0;
    std::int64_t conflicts = 0;
    std::optional<double> p95Ms; // none: no folded run in the window
    std::int64_t latencyRuns = 0;
    bool operator==(const BreakdownRow&) const = default;
};

struct BreakdownError {
    std::string tenant; // "" in a per-operation breakdown
    std::string operation;
    std::string message; // the first 200 characters of the last error
    std::int64_t rows = 0;
    bool operator==(const BreakdownError&) const = default;
};

struct Breakdown {
    std::vector<BreakdownRow> rows; // the most failures first, then processing, then name
    std::vector<BreakdownError> errors; // the most rows first
    // A source read up to the cap: its figures are lower bounds ("at least").
    bool processingCapped = false;
    bool countersCapped = false;
    bool latencyCapped = false;
    bool errorsCapped = false;
    std::int64_t serverNowMs = 0;
};

// The statement's text ($1 window minutes, $2 by tenant, $3 tenant or NULL, $4 operation or
// NULL, $5 cap, $6 top errors).
std::string breakdownSql(const SchemaName& schema);
// Throws std::invalid_argument for a bad query (before any I/O), pqxx errors otherwise.
Breakdown readBreakdown(pqxx::connection& conn, const SchemaName& schema, const BreakdownQuery& query);

} // namespace idem
