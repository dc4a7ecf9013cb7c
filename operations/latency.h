#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/connection>
#include <pqxx/transaction_base>

#include "core/identifier.h"

namespace idem {

// Latency (schema v17, resources/sql/migrations/0017_latency.sql): per minute, tenant and
// operation, histograms of the run time of each attempt (claim to complete or fail), the time to
// success of each key (first claim to complete) and the attempts a success took, all by the
// server's clock, folded from the task rows by idem_latency_rollup(). Only folded minutes are
// read: a minute is folded once it has been closed for a minute, and never changes after. No Qt:
// idemctl, the exporter and the console's worker thread call these.
enum class LatencyKind { Run, TimeToSuccess, Attempts };

// "run", "tts", "attempts": the kind's name in SQL and --json output.
const char* latencyKindName(LatencyKind kind);
std::optional<LatencyKind> latencyKindFromName(const std::string& name);

// The histograms' geometry, as idem_latency_slot() and idem_latency_value() define it: a duration
// of d microseconds is in slot floor(32 * log10(d)) (0 below 1 us), whose values lie in
// (10^(s/32), 10^((s+1)/32)] us (upper bound included, as Prometheus' le); for attempts, slot s is s attempts. tst_latency checks that these
// agree with the SQL.
constexpr int latencySlotsPerDecade = 32;
double latencySlotUpperUs(int slot); // upper bound of a duration slot (included), microseconds

struct LatencyHistogram {
    std::optional<std::int64_t> minuteUs; // per-minute reading: the minute's start (server clock)
    std::string operation; // "*" when the reading was not split by operation
    LatencyKind kind = LatencyKind::Run;
    std::int64_t count = 0;
    double total = 0; // sum of the values: microseconds, or attempts
    std::vector<std::pair<int, std::int64_t>> slotCounts; // (slot, count), ascending slot, count > 0 (not "slots": a Qt keyword)
    // Milliseconds for durations, attempts for Attempts; from idem_latency_percentiles (nearest
    // rank, within 3.7 % of the exact value for durations, exact for attempts).
    double mean = 0;
    double p50 = 0;
    double p95 = 0;
    double p99 = 0;
};

struct LatencyQuery {
    int minutes = 15; // the window: the last `minutes` folded minutes (1 to 44640, 31 days)
    std::string tenant; // empty: every tenant
    std::string operation; // empty: every operation
    bool byOperation = true; // one histogram per operation (else operation "*")
    bool perMinute = false; // one histogram per minute (else the whole window)
};

struct LatencyReport {
    std::int64_t fromUs = 0; // the window read: [fromUs, toUs), whole minutes
    std::int64_t toUs = 0; // = where the roll-up stands: minutes from here on are not folded yet
    std::int64_t serverNowUs = 0;
    std::optional<std::int64_t> foldedAtUs; // when the roll-up last ran (none: never)
    int minutesFolded = 0; // folded by this reading's own roll-up call
    std::vector<LatencyHistogram> histograms; // by minute, operation, then kind
};

// Folds the minutes that are due (idem_latency_rollup(p_max_minutes)); 0 when none is due or
// another session is folding them. Needs idem_reader.
int rollupLatency(pqxx::connection& conn, const SchemaName& schema, int maxMinutes = 60);
// The same in a read-write transaction the caller holds and commits (the exporter's, with its
// statement timeout).
int rollupLatency(pqxx::transaction_base& tx, const SchemaName& schema, int maxMinutes = 60);
// The roll-up in its own transaction, then one read-only transaction: the window ending where
// the roll-up stands. Throws std::invalid_argument for a bad query (before any I/O),
// pqxx::undefined_function/undefined_table before schema v17.
LatencyReport readLatency(pqxx::connection& conn, const SchemaName& schema, const LatencyQuery& query);
// The read alone, in a transaction the caller holds (the exporter's savepoint); no roll-up.
LatencyReport readLatency(pqxx::transaction_base& tx, const SchemaName& schema, const LatencyQuery& query);
// The console's latency view: when rollupMinutes > 0 a roll-up of at most that many minutes in a
// read-write transaction of its own, then both queries' reports from one read-only transaction,
// each transaction bounded by statementTimeoutMs. On a connection a DirectReads scope names
// (operations/readframe.h) all of it in one round trip, the read REPEATABLE READ (the state and
// both reports from one snapshot); elsewhere (behind a transaction pooler) statement by statement.
struct LatencyView {
    int minutesFolded = 0;
    LatencyReport perMinute;
    LatencyReport byOperation;
};
LatencyView readLatencyView(pqxx::connection& conn, const SchemaName& schema, const LatencyQuery& perMinute,
    const LatencyQuery& byOperation, int rollupMinutes, int statementTimeoutMs);
// The folded histograms of [fromUs, toUs) (whole minutes), by operation: what the exporter adds to
// its cumulative histograms as minutes are folded. No percentiles.
std::vector<LatencyHistogram> readLatencyHistograms(
    pqxx::transaction_base& tx, const SchemaName& schema, std::int64_t fromUs, std::int64_t toUs);
// The nearest-rank quantile (0 < q <= 1) of slot counts, as idem_latency_quantile() computes
// it in SQL, for readers without a database (an incident snapshot): milliseconds for durations,
// attempts for Attempts; none when empty or q is out of range. tst_latency checks that both agree.
std::optional<double> latencyQuantile(LatencyKind kind, const std::vector<std::pair<int, std::int64_t>>& slotCounts, double q);
// Slot counts from the text of array_to_string(slots, ',') and array_to_string(counts, ','), as
// readers of idem_latency select them (libpqxx 6.4 has no array reader worth the name).
std::vector<std::pair<int, std::int64_t>> parseSlotCounts(const std::string& slots, const std::string& counts);
// Adds `from`'s counts into `into` (both ascending by slot; `into` stays so).
void mergeSlotCounts(std::vector<std::pair<int, std::int64_t>>& into, const std::vector<std::pair<int, std::int64_t>>& from);

// Where the roll-up stands (idem_latency_state.folded_to), microseconds since the epoch.
std::int64_t latencyFoldedToUs(pqxx::transaction_base& tx, const SchemaName& schema);

} // namespace idem
