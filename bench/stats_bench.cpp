// idem-bench-stats: the dashboard snapshot (idem::readStats) against the naive
// `SELECT status, count(*) ... GROUP BY status` on tables of 100k to 10M rows, timed in the
// same process and interleaved; the attempts histogram over the unfinished rows; and what
// 20 consoles polling once a second cost the claim benchmark. See bench/README.md.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <pqxx/pqxx>

#include "bench/stats_bench.h"
#include "core/connection.h"
#include "core/digest.h"
#include "schema/migrate.h"
#include "operations/dashboardquery.h"
#include "operations/stats.h"

using namespace idem;
using namespace idem::bench;
using namespace idem::bench::stats;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
    std::string dsn;
    std::string monitorDsn;
    std::vector<long long> rows { 100000, 1000000, 10000000 };
    std::vector<long long> unfinished; // per size; empty: share * rows
    double share = 0.03;
    long long flatUnfinished = 30000; // 0: no second measurement with a fixed unfinished set
    Layout layout = Layout::Scattered;
    int reps = 15;
    long long batch = 1000000;
    std::string prefix = "idem_statsbench";
    bool keep = false;
    std::string json;
    // The load part.
    int pollers = 20;
    long long loadRows = 0; // 0: the largest size
    bool loadClaim = true, loadProportional = true, loadFlat = false;
    bool compareV1Index = false;
    bool naiveConsole = true;
    int tickParts = 0; // --tick-parts N: what a tick's server CPU is made of, N calls per part
    bool snapshotConsole = true; // --no-readstats-console: only none / dashboard (/ naive)
    bool floorConsole = false; // --floor-console: also consoles that only SELECT 1
    bool watchConsoles = false; // --watch-consoles: also the tick with the watches, waiting and framed
    bool loadOnly = false; // --load-only: the load part on the claim table alone, no populated tables
    int loadSeconds = 20;
    int loadRepeat = 3;
    int claimConnections = 4;
    int indexPairs = 0; // claim runs with 0001's index against the migrated one
};

[[noreturn]] void usage(int code)
{
    std::fprintf(code ? stderr : stdout,
        "usage: idem-bench-stats --dsn DSN [--rows 100000,1000000,10000000] [--unfinished N,N,...]\n"
        "           [--unfinished-share 0.03] [--flat-unfinished 30000] [--layout scattered|recent]\n"
        "           [--reps 15] [--batch 1000000] [--schema-prefix P] [--keep] [--json FILE]\n"
        "           [--compare-v1-index] [--pollers 20] [--load-rows N] [--load-on claim,prop,flat]\n"
        "           [--no-naive-console] [--no-readstats-console] [--monitor-dsn DSN] [--tick-parts N]\n"
        "           [--floor-console] [--watch-consoles] [--load-only]\n"
        "           [--load-seconds 20] [--load-repeat 3] [--claim-connections 4] [--index-pairs N]\n"
        "Scratch schemas P_<rows> are generated once and reused while they hold the same table;\n"
        "without --keep they are dropped at the end. --pollers 0 skips the load part. --load-on claim:\n"
        "the consoles read the claim benchmark's own tables (the issue's setting); prop / flat: they\n"
        "read the populated table of --load-rows rows. --compare-v1-index measures every table with\n"
        "0001's unfinished index put back too, then with the migrated one. --monitor-dsn: the consoles\n"
        "connect there (a streaming standby of --dsn, bench/standby.sh) while the claims run on --dsn.\n");
    std::exit(code);
}

std::vector<long long> parseList(const std::string& s)
{
    std::vector<long long> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        out.push_back(std::stoll(item));
    return out;
}

Options parseArgs(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                usage(2);
            return argv[++i];
        };
        if (a == "--dsn")
            o.dsn = value();
        else if (a == "--monitor-dsn")
            o.monitorDsn = value();
        else if (a == "--rows")
            o.rows = parseList(value());
        else if (a == "--unfinished")
            o.unfinished = parseList(value());
        else if (a == "--unfinished-share")
            o.share = std::stod(value());
        else if (a == "--flat-unfinished")
            o.flatUnfinished = std::stoll(value());
        else if (a == "--layout") {
            const std::string v = value();
            if (v != "scattered" && v != "recent")
                usage(2);
            o.layout = v == "recent" ? Layout::Recent : Layout::Scattered;
        } else if (a == "--reps")
            o.reps = std::stoi(value());
        else if (a == "--batch")
            o.batch = std::stoll(value());
        else if (a == "--schema-prefix")
            o.prefix = value();
        else if (a == "--keep")
            o.keep = true;
        else if (a == "--json")
            o.json = value();
        else if (a == "--pollers")
            o.pollers = std::stoi(value());
        else if (a == "--load-rows")
            o.loadRows = std::stoll(value());
        else if (a == "--load-on") {
            const std::string v = value();
            o.loadClaim = v.find("claim") != std::string::npos;
            o.loadProportional = v.find("prop") != std::string::npos;
            o.loadFlat = v.find("flat") != std::string::npos;
        } else if (a == "--compare-v1-index")
            o.compareV1Index = true;
        else if (a == "--no-naive-console")
            o.naiveConsole = false;
        else if (a == "--tick-parts")
            o.tickParts = std::stoi(value());
        else if (a == "--floor-console")
            o.floorConsole = true;
        else if (a == "--watch-consoles")
            o.watchConsoles = true;
        else if (a == "--load-only")
            o.loadOnly = true;
        else if (a == "--no-readstats-console")
            o.snapshotConsole = false;
        else if (a == "--load-seconds")
            o.loadSeconds = std::stoi(value());
        else if (a == "--load-repeat")
            o.loadRepeat = std::stoi(value());
        else if (a == "--claim-connections")
            o.claimConnections = std::stoi(value());
        else if (a == "--index-pairs")
            o.indexPairs = std::stoi(value());
        else if (a == "--help" || a == "-h")
            usage(0);
        else
            usage(2);
    }
    std::sort(o.rows.begin(), o.rows.end());
    const bool badUnfinished = !o.unfinished.empty() && o.unfinished.size() != o.rows.size();
    if (o.dsn.empty() || o.rows.empty() || o.rows.front() < 1000 || badUnfinished || o.share <= 0 || o.share >= 1
        || o.reps < 2 || o.batch < 1000 || o.pollers < 0 || o.loadSeconds < 1 || o.loadRepeat < 1
        || o.claimConnections < 1 || o.flatUnfinished < 0)
        usage(2);
    if (o.loadRows == 0)
        o.loadRows = o.rows.back();
    return o;
}

void progress(const std::string& line)
{
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
}

// reps runs of each query on one new connection, in rotating order.
void measure(const std::string& dsn, const SchemaName& schema, int reps, SnapshotRow& row)
{
    auto conn = connect(dsn, { "idem-bench-stats" });
    const int pid = backendPid(*conn);
    // 0: the tick as every console runs it (readStats: the shared bounded figures, counted by
    // whichever reader finds them a period old); 1: the naive GROUP BY; 2: the bounded count
    // itself, forced (what one reader pays once per period for everyone).
    const std::string naive = naiveCountSql(schema);
    const std::string forced = "UPDATE " + schema.qualify("idem_stats_live") + " SET taken_at = '-infinity'";
    const std::string count = "SELECT * FROM " + schema.qualify("idem_live_stats") + "(NULL, NULL, 60)";
    StatsReading snap;
    std::map<std::string, long long> counts;
    double cpu[3] = { 0, 0, 0 };
    bool cpuKnown = pid > 0;
    for (int rep = 0; rep < reps; ++rep) {
        for (int k = 0; k < 3; ++k) {
            const int which = (k + rep) % 3;
            const double c0 = backendCpuUs(pid);
            const auto t0 = Clock::now();
            if (which == 0) {
                readStats(*conn, schema, {}, { false, false, 600000 });
            } else if (which == 1) {
                pqxx::nontransaction n(*conn);
                for (const auto& line : n.exec(naive))
                    counts[line[0].as<std::string>()] = line[1].as<long long>();
            } else {
                pqxx::nontransaction n(*conn);
                n.exec(forced);
                n.exec(count);
            }
            const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
            const double c1 = backendCpuUs(pid);
            Timing& t = which == 0 ? row.snapshot : which == 1 ? row.naive : row.histogram;
            if (rep == 0) {
                t.firstMs = ms;
            } else {
                t.warmMs.push_back(ms);
                cpu[which] += c1 - c0;
                cpuKnown = cpuKnown && c0 >= 0 && c1 >= 0;
            }
        }
    }
    if (cpuKnown) {
        row.snapshot.cpuMs = cpu[0] / 1000.0 / (reps - 1);
        row.naive.cpuMs = cpu[1] / 1000.0 / (reps - 1);
        row.histogram.cpuMs = cpu[2] / 1000.0 / (reps - 1);
    }
    // The snapshot and the plain counts must describe the same table: the exact pass (what the
    // shared refresh stores) against the GROUP BY.
    snap = readStats(*conn, schema, {}, { false, true, 600000 });
    const long long processing = counts["processing"], retryable = counts["retryable_failed"],
                    failed = counts["failed"];
    if (snap.processing + snap.expiredLeases != processing || snap.retryableFailed != retryable
        || snap.failedPermanent + snap.failedExhausted != failed
        || processing + retryable + failed != row.pop.unfinished)
        row.check = "snapshot " + std::to_string(snap.processing + snap.expiredLeases) + "/"
            + std::to_string(snap.retryableFailed) + "/" + std::to_string(snap.failedPermanent + snap.failedExhausted)
            + " vs counts " + std::to_string(processing) + "/" + std::to_string(retryable) + "/"
            + std::to_string(failed) + ", planted " + std::to_string(row.pop.unfinished) + " unfinished";
}

// The claim benchmark's own scratch schema, dropped when this goes.
class ClaimSchema {
public:
    ClaimSchema(pqxx::connection& conn, SchemaName name)
        : m_conn(conn)
        , m_name(std::move(name))
    {
        migrate(conn, MigrateOptions { m_name, false });
        createBenchTable(conn, m_name);
    }
    ~ClaimSchema()
    {
        try {
            pqxx::work w(m_conn);
            w.exec("DROP SCHEMA IF EXISTS " + m_name.quoted() + " CASCADE");
            w.commit();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "could not drop %s: %s\n", m_name.name().c_str(), e.what());
        }
    }
    ClaimSchema(const ClaimSchema&) = delete;
    ClaimSchema& operator=(const ClaimSchema&) = delete;
    const SchemaName& name() const { return m_name; }

private:
    pqxx::connection& m_conn;
    SchemaName m_name;
};

RunSpec claimSpec(const Options& o, const SchemaName& schema)
{
    RunSpec spec;
    spec.dsn = o.dsn;
    spec.mode = Mode::Library;
    spec.workload = Workload::Fresh;
    spec.schema = schema;
    spec.digest = requestDigestFromText(R"({"order":"bench-1","amount":100,"currency":"EUR"})");
    spec.connections = o.claimConnections;
    spec.duration = std::chrono::seconds(o.loadSeconds);
    return spec;
}

// The consoles read `polled`, or the claim benchmark's own schema when it is unset.
void runLoad(pqxx::connection& admin, const Options& o, const std::optional<SchemaName>& polled, const Population& pop,
    std::vector<LoadRow>& out)
{
    ClaimSchema claim(admin, SchemaName(o.prefix + "_claim_" + std::to_string(getpid())));
    LoadSpec spec;
    spec.dsn = o.dsn;
    spec.monitorDsn = o.monitorDsn;
    spec.polled = polled ? *polled : claim.name();
    const std::string target
        = polled ? std::to_string(pop.rows) + "/" + std::to_string(pop.unfinished) : std::string("claim table");
    spec.pollers = o.pollers;
    spec.claim = claimSpec(o, claim.name());

    std::vector<Console> kinds { Console::None, Console::Snapshot, Console::Dashboard };
    if (!o.snapshotConsole)
        kinds.erase(kinds.begin() + 1);
    if (o.naiveConsole)
        kinds.push_back(Console::Naive);
    if (o.floorConsole)
        kinds.push_back(Console::RoundTrip);
    if (o.watchConsoles) {
        kinds.push_back(Console::WatchedWaiting);
        kinds.push_back(Console::WatchedFramed);
    }
    const std::size_t first = out.size();
    for (Console k : kinds)
        out.push_back({ target, pop, k, {} });
    // Rotation as in idem-bench-claim: every repeat starts one kind later (A/B/C, B/C/A, ...).
    for (int rep = 0; rep < o.loadRepeat; ++rep) {
        for (std::size_t i = 0; i < kinds.size(); ++i) {
            const std::size_t k = (i + static_cast<std::size_t>(rep)) % kinds.size();
            spec.console = kinds[k];
            const LoadResult r = runWithConsoles(admin, spec);
            progress("[load " + target + " " + std::to_string(rep + 1) + "/" + std::to_string(o.loadRepeat) + "] "
                + consoleLabel(kinds[k]) + ": " + std::to_string(static_cast<long long>(r.claim.perSecond))
                + " tasks/s, " + std::to_string(r.polls) + " polls (p50 " + std::to_string(r.pollP50ms) + " ms), "
                + std::to_string(r.timeouts) + " timeouts"
                + (kinds[k] == Console::None ? std::string()
                                             : "; exact: " + std::to_string(r.sharedRefreshes) + " shared (last "
                            + std::to_string(static_cast<long long>(r.sharedLastCostMs)) + " ms), "
                            + std::to_string(r.ownRefreshes) + " own ("
                            + std::to_string(static_cast<long long>(r.ownRefreshMs)) + " ms), oldest shown "
                            + std::to_string(r.oldestExactShownS) + " s")
                + (r.claim.problem.empty() ? "" : " ! " + r.claim.problem));
            out[first + k].runs.push_back(r);
        }
    }
}

// What the wider unfinished index costs the claim path: the claim benchmark alone, with the
// migrated index and with 0001's, alternating (AB, BA, ...), no consoles.
void runIndexPairs(pqxx::connection& admin, const Options& o)
{
    ClaimSchema claim(admin, SchemaName(o.prefix + "_claimidx_" + std::to_string(getpid())));
    const RunSpec spec = claimSpec(o, claim.name());
    std::vector<double> migrated, v1, pairs, cpuMigrated, cpuV1;
    std::string each;
    for (int pair = 0; pair < o.indexPairs; ++pair) {
        double rate[2] = { 0, 0 };
        for (int k = 0; k < 2; ++k) {
            const bool useV1 = (k + pair) % 2 == 1;
            if (useV1)
                useV1UnfinishedIndex(admin, claim.name());
            else
                restoreUnfinishedIndex(admin, claim.name());
            const RunResult r = runOnce(admin, spec);
            if (!r.problem.empty())
                throw std::runtime_error("claim run failed its checks: " + r.problem);
            rate[useV1 ? 1 : 0] = r.perSecond;
            (useV1 ? cpuV1 : cpuMigrated).push_back(r.serverCpuUs);
            progress(std::string("[index pair ") + std::to_string(pair + 1) + "] " + (useV1 ? "0001" : "0004")
                + " index: " + std::to_string(static_cast<long long>(r.perSecond)) + " tasks/s");
        }
        restoreUnfinishedIndex(admin, claim.name());
        migrated.push_back(rate[0]);
        v1.push_back(rate[1]);
        pairs.push_back(rate[0] / rate[1]);
        char b[64];
        std::snprintf(b, sizeof b, "%s%.0f/%.0f=%.3f", each.empty() ? "" : " ", rate[0], rate[1], pairs.back());
        each += b;
    }
    std::printf("\n== claim benchmark alone (library, counters on, fresh keys, %d connections, %d s): migrated (0004)"
                " unfinished index vs 0001's ==\n"
                "median %.0f vs %.0f tasks/s: %.3fx; per pair (0004/0001) %s, median %.3f;\n"
                "server CPU per task (median): %.0f vs %.0f us\n",
        o.claimConnections, o.loadSeconds, medianOf(migrated), medianOf(v1), medianOf(migrated) / medianOf(v1),
        each.c_str(), medianOf(pairs), medianOf(cpuMigrated), medianOf(cpuV1));
    std::fflush(stdout);
}

// What the consoles' server CPU is made of, each part alone on one connection, back to back,
// backend CPU per call (/proc, 10 ms ticks: hence many calls): a round trip; the row figures
// read from the shared row; readStats' prepared statement and the dashboard's prepared tick (the
// shared figures fresh, as for 19 of 20 consoles); the bounded count forced (what one reader pays
// once per period for all); the exact pass (once per refresh period for all).
void tickParts(const std::string& dsn, const SchemaName& schema, int n)
{
    auto conn = connect(dsn, { "idem-bench-stats parts" });
    const int pid = backendPid(*conn);
    prepareDashboardConnection(*conn, 600000);
    conn->prepare("parts_one", "SELECT 1");
    conn->prepare("parts_live", "SELECT * FROM " + schema.qualify("idem_live_stats") + "(NULL, NULL, 60)");
    conn->prepare("parts_stale", "UPDATE " + schema.qualify("idem_stats_live") + " SET taken_at = '-infinity'");
    conn->prepare("parts_exact", "SELECT * FROM " + schema.qualify("idem_exact_stats") + "(NULL, NULL, 60)");
    const StatsOptions stats;
    DashboardOptions dashboard;
    const std::vector<std::pair<std::string, int>> parts { { "round trip (SELECT 1)", n },
        { "row figures from the shared row (idem_live_stats)", n }, { "readStats, prepared", n },
        { "dashboard tick, prepared", n }, { "bounded count, forced", std::max(1, n / 10) },
        { "exact pass (idem_exact_stats)", std::max(1, n / 100) } };
    std::printf("\n== what a tick's server CPU is made of (%s, one connection, back to back) ==\n", schema.name().c_str());
    for (std::size_t k = 0; k < parts.size(); ++k) {
        const double c0 = backendCpuUs(pid);
        const auto t0 = Clock::now();
        for (int i = 0; i < parts[k].second; ++i) {
            if (k == 3) {
                readDashboard(*conn, schema, dashboard);
                continue;
            }
            pqxx::nontransaction t(*conn);
            if (k == 0)
                t.exec_prepared("parts_one");
            else if (k == 1)
                t.exec_prepared("parts_live");
            else if (k == 2)
                readStatsPrepared(t, schema, stats);
            else if (k == 4) {
                t.exec_prepared("parts_stale");
                t.exec_prepared("parts_live");
            } else
                t.exec_prepared("parts_exact");
        }
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        const double c1 = backendCpuUs(pid);
        std::printf("  %-52s %6d calls: wall %8.3f ms, backend CPU %8.3f ms per call\n", parts[k].first.c_str(),
            parts[k].second, ms / parts[k].second, c0 >= 0 && c1 >= 0 ? (c1 - c0) / 1000.0 / parts[k].second : -1.0);
    }
    std::fflush(stdout);
}

std::string loadAverage()
{
    std::ifstream in("/proc/loadavg");
    std::string one, five;
    in >> one >> five;
    return one + " (1 min), " + five + " (5 min)";
}

} // namespace

int main(int argc, char** argv)
{
    const Options o = parseArgs(argc, argv);
    try {
        auto admin = connect(o.dsn, { "idem-bench-stats admin" });
        {
            pqxx::read_transaction t(*admin);
            const auto r
                = t.exec("SELECT current_setting('server_version'), current_setting('fsync'),"
                         " current_setting('shared_buffers'), current_setting('max_parallel_workers_per_gather')");
            std::printf("idem-bench-stats: PostgreSQL %s, fsync=%s, shared_buffers=%s,"
                        " max_parallel_workers_per_gather=%s\n",
                r[0][0].c_str(), r[0][1].c_str(), r[0][2].c_str(), r[0][3].c_str());
        }
        std::printf("client: %u hardware threads, load average at start %s\n", std::thread::hardware_concurrency(),
            loadAverage().c_str());
        std::fflush(stdout);

        std::vector<SnapshotRow> snaps;
        std::vector<LoadRow> loads;
        std::vector<SchemaName> made;
        if (o.indexPairs > 0)
            runIndexPairs(*admin, o);
        // The issue's setting first: the consoles watch the database the claim benchmark writes.
        if (o.pollers > 0 && o.loadClaim)
            runLoad(*admin, o, std::nullopt, Population {}, loads);
        for (std::size_t s = 0; s < (o.loadOnly ? 0 : o.rows.size()); ++s) {
            const long long rows = o.rows[s];
            const SchemaName schema(o.prefix + "_" + std::to_string(rows));
            made.push_back(schema);
            const long long proportional = o.unfinished.empty()
                ? static_cast<long long>(static_cast<double>(rows) * o.share + 0.5)
                : o.unfinished[s];
            std::vector<std::pair<std::string, long long>> stages { { "prop", proportional } };
            if (o.flatUnfinished > 0 && o.flatUnfinished < proportional)
                stages.push_back({ "flat", o.flatUnfinished });
            for (const auto& [stage, unfinished] : stages) {
                SnapshotRow row;
                row.label = stage;
                row.pop = { rows, unfinished, o.layout };
                progress(schema.name() + ": " + std::to_string(rows) + " rows, " + std::to_string(unfinished)
                    + " unfinished (" + layoutName(o.layout) + ")");
                row.populated = ensurePopulation(*admin, schema, row.pop, o.batch, progress);
                progress("  " + std::string(row.populated.reused ? "reused" : "ready") + " after "
                    + std::to_string(row.populated.seconds) + " s: " + row.populated.tableSize + " heap ("
                    + std::to_string(row.populated.heapPages) + " pages), " + row.populated.indexSize + " indexes");
                const auto measureWith = [&](const char* index) {
                    SnapshotRow r = row;
                    r.index = index;
                    r.unfinishedIndexSize = unfinishedIndexSize(*admin, schema);
                    measure(o.dsn, schema, o.reps, r);
                    progress("  index " + r.index + " (" + r.unfinishedIndexSize + "): readStats p50 "
                        + std::to_string(r.snapshot.pct(0.5)) + " ms, naive p50 " + std::to_string(r.naive.pct(0.5))
                        + " ms, histogram p50 " + std::to_string(r.histogram.pct(0.5)) + " ms");
                    snaps.push_back(r);
                };
                if (o.compareV1Index) {
                    progress("  0001's unfinished index put back in "
                        + std::to_string(useV1UnfinishedIndex(*admin, schema)) + " s");
                    measureWith("0001");
                    progress("  migrated unfinished index restored in "
                        + std::to_string(restoreUnfinishedIndex(*admin, schema)) + " s");
                }
                measureWith("0004");
                if (o.tickParts > 0)
                    tickParts(o.dsn, schema, o.tickParts);
                const bool loadHere = o.pollers > 0 && rows == o.loadRows
                    && ((stage == "prop" && o.loadProportional) || (stage == "flat" && o.loadFlat));
                if (loadHere)
                    runLoad(*admin, o, std::optional<SchemaName>(schema), row.pop, loads);
            }
        }

        std::printf("\nload average at end %s\n", loadAverage().c_str());
        printSnapshots(snaps, o.reps);
        printLoad(loads, o.claimConnections, o.loadSeconds, o.pollers);
        if (!o.json.empty())
            writeJson(o.json, snaps, loads);

        if (!o.keep) {
            pqxx::work w(*admin);
            for (const auto& s : made)
                w.exec("DROP SCHEMA IF EXISTS " + s.quoted() + " CASCADE");
            w.commit();
        }
        bool problems = false;
        for (const auto& r : snaps)
            problems = problems || !r.check.empty();
        for (const auto& r : loads)
            for (const auto& run : r.runs)
                problems = problems || !run.claim.problem.empty();
        return problems ? 1 : 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "idem-bench-stats: %s\n", e.what());
        return 1;
    }
}
