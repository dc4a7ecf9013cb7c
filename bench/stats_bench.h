#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "bench/bench.h"
#include "bench/cpuclock.h"
#include "core/identifier.h"

// idem-bench-stats: what the dashboard's snapshot costs on a large table, next to the naive
// queries a console could run instead, and what 20 polling consoles cost the claim path.
namespace idem::bench::stats {

// Which rows are unfinished (not succeeded).
enum class Layout {
    Scattered, // spread evenly over the whole heap (about one per heap page at 3 %): the
               // pessimistic case, old failures that pile up all over the table
    Recent, // the newest rows: packed at the heap's tail, as fresh claims in flight are
};

const char* layoutName(Layout layout);

// What a scratch table holds. Every row is a pure function of its number i (0 .. rows-1),
// the table size and the layout: p = (i * multiplier) mod rows (Scattered) or rows-1-i
// (Recent); a row is unfinished when p < unfinished, and its kind is p mod 12:
//   0-1 processing with a live lease, 2-3 processing with an expired lease,
//   4-6 retryable_failed (retryable), 7 retryable_failed (unknown outcome),
//   8-9 failed (permanent), 10-11 failed (exhausted, 5 attempts).
// At 3 % unfinished that is 1 % processing (half expired) and 2 % failed or retryable.
struct Population {
    long long rows = 0;
    long long unfinished = 0;
    Layout layout = Layout::Scattered;
};

struct PopulateReport {
    bool reused = false; // the schema already held this population
    bool lowered = false; // it held more unfinished rows; the extra ones were completed in place
    double seconds = 0; // generation + index builds + VACUUM ANALYZE
    long long heapPages = 0;
    std::string tableSize, indexSize; // pg_size_pretty
};

// Makes `schema` (migrated, no roles) hold exactly `pop`: reuses it when it already does,
// lowers the unfinished set in place when it holds the same table with more of them (the
// remaining unfinished rows stay where they are on the heap), or drops and regenerates it.
// Ends with VACUUM ANALYZE, so the planner's statistics and the visibility map are current.
PopulateReport ensurePopulation(pqxx::connection& conn, const SchemaName& schema, const Population& pop,
    long long batchRows, const std::function<void(const std::string&)>& progress);

// task_idempotency_unfinished_idx as 0001 created it (updated_at only), in place of the
// migrated one, so one run can measure the snapshot before and after 0004's covering index.
// The migrated definition is saved in the scratch schema and put back by restoreUnfinishedIndex()
// (ensurePopulation calls it too, so an interrupted run leaves nothing behind). Both return the
// seconds the rebuild took (0 when there was nothing to do).
double useV1UnfinishedIndex(pqxx::connection& conn, const SchemaName& schema);
double restoreUnfinishedIndex(pqxx::connection& conn, const SchemaName& schema);
std::string unfinishedIndexSize(pqxx::connection& conn, const SchemaName& schema);

// The plain queries a console could run instead of statsSql(): every row's status counted,
// and the attempts histogram over the unfinished rows.
std::string naiveCountSql(const SchemaName& schema);
std::string histogramSql(const SchemaName& schema);

// What one console does each tick.
enum class Console {
    None, // no consoles: the baseline
    Snapshot, // idem::readStats: BEGIN, statement timeout, statsSql(), COMMIT (what idemctl stats runs)
    Dashboard, // idem::readDashboard without the histogram: the console's own tick, one statement
    Naive, // naiveCountSql() then histogramSql(), each a statement of its own
    RoundTrip, // SELECT 1, prepared: the floor of any console that polls (a wakeup, a round trip, TLS)
    // The dashboard tick and the watches the real console runs beside it on the same connection,
    // one read at a time: the pause list every 5 s, the latency roll-up and view and the chart's
    // events every 60 s (each console on its own phase). WatchedWaiting sends every statement of a
    // watch's read on its own (as before issue 45, and behind a pooler still); WatchedFramed
    // sends each read in one round trip (operations/readframe.h, as the console's worker does on
    // a direct connection).
    WatchedWaiting,
    WatchedFramed,
};

const char* consoleLabel(Console console);

struct LoadSpec {
    std::string dsn;
    std::string monitorDsn; // where the consoles connect (a standby); empty: dsn
    SchemaName polled; // the table the consoles read: a populated one, or the claim benchmark's own
    Console console = Console::None;
    int pollers = 20;
    std::chrono::milliseconds interval { 1000 };
    int statementTimeoutMs = 5000; // the console's own timeout, for every kind of poll
    RunSpec claim; // the claim benchmark that runs meanwhile
};

struct LoadResult {
    RunResult claim;
    long long polls = 0; // completed
    long long timeouts = 0; // polls the statement timeout cancelled
    long long late = 0; // ticks that started later than scheduled (the previous poll overran)
    double pollP50ms = 0, pollP95ms = 0;
    double pollCpuMs = -1; // server CPU per completed poll (the pollers' backends), -1 unknown
    double pollClientCpuMs = 0; // the pollers' own client CPU per poll (libpq, TLS, parsing)
    double seconds = 0; // how long the pollers ran
    // The exact figures (dashboard consoles): refreshes the database did for everyone during the
    // run and the last one's cost; the consoles' own (on a standby whose shared figures nobody
    // keeps fresh) and their summed cost; the oldest exact figures a tick showed after the first
    // 3 s (before that, the figures a run without consoles left), -1 when none was shown.
    long long sharedRefreshes = 0;
    double sharedLastCostMs = 0;
    long long ownRefreshes = 0;
    double ownRefreshMs = 0;
    double oldestExactShownS = -1;
};

// Starts the pollers (each on its own connection, ticking on its own phase; a poll that
// overruns its tick delays the next one, as the console's timer does), runs the claim
// benchmark with runOnce() meanwhile, then stops them.
LoadResult runWithConsoles(pqxx::connection& admin, const LoadSpec& spec);

// The result tables (stats_report.cpp).
struct Timing {
    double firstMs = 0; // the first run on a new connection (cold backend caches)
    std::vector<double> warmMs;
    double cpuMs = -1; // the backend's CPU per warm run (parallel workers not included)
    double pct(double p) const;
};

struct SnapshotRow {
    std::string label; // "proportional" or "flat"
    std::string index; // "0004" (the migrated covering index) or "0001" (the v1 index put back)
    Population pop;
    PopulateReport populated;
    std::string unfinishedIndexSize;
    Timing snapshot, naive, histogram;
    std::string check; // empty when the snapshot agreed with the naive counts
};

struct LoadRow {
    std::string target; // what the consoles read: "claim table" or "<rows>/<unfinished>"
    Population pop;
    Console console;
    std::vector<LoadResult> runs;
};

void printSnapshots(const std::vector<SnapshotRow>& rows, int reps);
void printLoad(const std::vector<LoadRow>& rows, int claimConnections, int loadSeconds, int pollers);
void writeJson(const std::string& path, const std::vector<SnapshotRow>& snaps, const std::vector<LoadRow>& loads);

} // namespace idem::bench::stats
