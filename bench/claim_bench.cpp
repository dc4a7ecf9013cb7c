// idem-bench-claim: claim+complete throughput of idem_core against the article's protocol sent
// by hand and against the bare SQL functions, on the same database, in one interleaved run.
// See bench/README.md for what each section measures.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <pqxx/pqxx>

#include "bench/bench.h"
#include "core/connection.h"
#include "core/digest.h"
#include "schema/migrate.h"

using namespace idem;
using namespace idem::bench;

namespace {

struct Options {
    std::string dsn;
    int seconds = 5;
    int repeat = 2;
    std::vector<int> connections { 1, 4, 16 };
    std::vector<int> hotConnections { 16 };
    int hotKeys = 100;
    int warmup = 20;
    double replayShare = 0.9;
    bool fresh = true, dup = true, hot = true, harden = false, pause = false;
    std::vector<int> hardenConnections { 4 };
    std::vector<int> pauseConnections { 1, 4 };
    int pauseCount = 100;
    int loopCalls = 20000;
    std::string schema;
    bool keepSchema = false;
    std::string modes = "abcdefgh"; // --modes a,e,g: the modes of fresh and dup, by letter
};

[[noreturn]] void usage(int code)
{
    std::fprintf(code ? stderr : stdout,
        "usage: idem-bench-claim --dsn DSN [--seconds N] [--repeat N] [--connections 1,4,16]\n"
        "                        [--only fresh,dup,hot] [--hot-connections 16] [--hot-keys N]\n"
        "                        [--replay-share 0.9] [--warmup N] [--schema NAME] [--keep-schema]\n"
        "                        [--only harden] [--harden-connections 4] [--loop-calls 20000]\n"
        "                        [--only pause] [--pause-connections 1,4] [--pause-count 100]\n"
        "                        [--modes a,b,c,d,e,f,g,h] (fresh and dup: the modes run, by letter)\n"
        "Creates a scratch schema (and NAME_lk; with harden NAME_h0..h3; with pause NAME_v14), migrates\n"
        "it, runs, drops it.\n"
        "harden (only when named): schema v6's protocol against SECURITY INVOKER, insert-first and v5.\n"
        "pause (only when named): the shipped claim() against v14's (no pause check), ABAB, with no pauses\n"
        "and with --pause-count pauses on other operations.\n");
    std::exit(code);
}

std::vector<int> parseInts(const std::string& s)
{
    std::vector<int> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        out.push_back(std::stoi(item));
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
        else if (a == "--seconds")
            o.seconds = std::stoi(value());
        else if (a == "--repeat")
            o.repeat = std::stoi(value());
        else if (a == "--connections")
            o.connections = parseInts(value());
        else if (a == "--hot-connections")
            o.hotConnections = parseInts(value());
        else if (a == "--harden-connections")
            o.hardenConnections = parseInts(value());
        else if (a == "--pause-connections")
            o.pauseConnections = parseInts(value());
        else if (a == "--pause-count")
            o.pauseCount = std::stoi(value());
        else if (a == "--loop-calls")
            o.loopCalls = std::stoi(value());
        else if (a == "--hot-keys")
            o.hotKeys = std::stoi(value());
        else if (a == "--warmup")
            o.warmup = std::stoi(value());
        else if (a == "--replay-share")
            o.replayShare = std::stod(value());
        else if (a == "--schema")
            o.schema = value();
        else if (a == "--keep-schema")
            o.keepSchema = true;
        else if (a == "--modes")
            o.modes = value();
        else if (a == "--only") {
            const std::string v = value();
            o.fresh = v.find("fresh") != std::string::npos;
            o.dup = v.find("dup") != std::string::npos;
            o.hot = v.find("hot") != std::string::npos;
            o.harden = v.find("harden") != std::string::npos;
            o.pause = v.find("pause") != std::string::npos;
        } else if (a == "--help" || a == "-h")
            usage(0);
        else
            usage(2);
    }
    if (o.dsn.empty() || o.seconds < 1 || o.repeat < 1 || o.connections.empty() || o.hotConnections.empty()
        || o.hotKeys < 1 || o.warmup < 0 || o.hardenConnections.empty() || o.loopCalls < 100
        || o.pauseConnections.empty() || o.pauseCount < 1 || o.pauseCount > 10000)
        usage(2);
    if (o.schema.empty())
        o.schema = std::string("idem_bench_").append(std::to_string(getpid()));
    return o;
}

std::string loadAverage()
{
    std::ifstream in("/proc/loadavg");
    std::string one, five;
    in >> one >> five;
    return one + " (1 min), " + five + " (5 min)";
}

// The scratch schemas exist exactly as long as this does.
class ScratchSchemas {
public:
    ScratchSchemas(pqxx::connection& conn, std::vector<SchemaName> names, bool keep)
        : m_conn(conn)
        , m_names(std::move(names))
        , m_keep(keep)
    {
        for (const auto& s : m_names) {
            migrate(conn, MigrateOptions { s, false });
            createBenchTable(conn, s);
        }
    }
    ~ScratchSchemas()
    {
        if (m_keep)
            return;
        try {
            pqxx::work w(m_conn);
            for (const auto& s : m_names)
                w.exec("DROP SCHEMA IF EXISTS " + s.quoted() + " CASCADE");
            w.commit();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "could not drop the scratch schemas: %s\n", e.what());
        }
    }
    ScratchSchemas(const ScratchSchemas&) = delete;
    ScratchSchemas& operator=(const ScratchSchemas&) = delete;

private:
    pqxx::connection& m_conn;
    std::vector<SchemaName> m_names;
    bool m_keep;
};

Row& rowFor(std::vector<Row>& rows, const std::string& section, const std::string& label, int connections)
{
    for (auto& r : rows)
        if (r.section == section && r.label == label && r.connections == connections)
            return r;
    rows.push_back({ section, label, connections, {} });
    return rows.back();
}

struct Variant {
    std::string label;
    Mode mode;
    const SchemaName* schema;
};

void runSection(pqxx::connection& admin, const Options& o, RunSpec base, const std::string& section,
    const std::vector<Variant>& variants, const std::vector<int>& connections, std::vector<Row>& rows)
{
    // Rotation: every repeat starts one variant later, so none always runs first or last. The
    // table rows are created by the first repeat, which runs the variants in their own order.
    for (int rep = 0; rep < o.repeat; ++rep) {
        for (int conns : connections) {
            for (std::size_t i = 0; i < variants.size(); ++i) {
                const Variant& v = variants[(i + static_cast<std::size_t>(rep)) % variants.size()];
                RunSpec spec = base;
                spec.mode = v.mode;
                spec.schema = *v.schema;
                spec.connections = conns;
                const RunResult r = runOnce(admin, spec);
                std::fprintf(stderr, "[%s %d/%d] %-34s @%2d: %8.0f/s p50 %.2f ms p99 %.2f ms%s%s\n", section.c_str(),
                    rep + 1, o.repeat, v.label.c_str(), conns, r.perSecond, r.p50ms, r.p99ms,
                    r.problem.empty() ? "" : "  ! ", r.problem.c_str());
                rowFor(rows, section, v.label, conns).runs.push_back(r);
            }
        }
    }
}

// The pause section, ABAB: in each round every mode and connection count runs the v14 claim()
// (A) and then the shipped one (B), so both see the same drift of a shared machine; the same
// clients, keys (bench:<mode>:...) and tables. Then claim() timed inside the backend, A then B.
void runPauseSection(pqxx::connection& admin, const Options& o, RunSpec base, const SchemaName& shipped,
    const SchemaName& v14, std::vector<Row>& rows)
{
    const Mode modes[] = { Mode::Bare, Mode::LibraryNoCounters };
    const std::pair<const char*, const SchemaName*> ab[] = { { "v14", &v14 }, { "shipped", &shipped } };
    base.workload = Workload::Fresh;
    for (const int pauses : { 0, o.pauseCount }) {
        for (const auto* s : { &v14, &shipped })
            setOtherPauses(admin, *s, pauses);
        const std::string section = "pause-" + std::to_string(pauses);
        for (int rep = 0; rep < o.repeat; ++rep)
            for (int conns : o.pauseConnections)
                for (const Mode mode : modes)
                    for (const auto& [tag, schema] : ab) {
                        RunSpec spec = base;
                        spec.mode = mode;
                        spec.schema = *schema;
                        spec.connections = conns;
                        const RunResult r = runOnce(admin, spec);
                        const std::string label = std::string(modeLabel(mode)) + ", " + tag;
                        std::fprintf(stderr, "[%s %d/%d] %-34s @%2d: %8.0f/s p50 %.2f ms srv %.0f us%s%s\n",
                            section.c_str(), rep + 1, o.repeat, label.c_str(), conns, r.perSecond, r.p50ms,
                            r.serverCpuUs, r.problem.empty() ? "" : "  ! ", r.problem.c_str());
                        rowFor(rows, section, label, conns).runs.push_back(r);
                    }
        std::vector<LoopCost> loops[2];
        for (int rep = 0; rep < o.repeat; ++rep)
            for (int i = 0; i < 2; ++i) {
                const auto c = serverLoop(admin, *ab[i].second, base.digest, 100, o.loopCalls / 2, rep);
                std::fprintf(stderr, "[%s loop %d/%d] %s: new key %.1f us (cpu %.1f), task %.1f us (cpu %.1f)\n",
                    section.c_str(), rep + 1, o.repeat, ab[i].first, c.newWallUs, c.newCpuUs, c.taskWallUs,
                    c.taskCpuUs);
                loops[i].push_back(c);
            }
        const auto med = [&](int i, double LoopCost::*field) {
            std::vector<double> v;
            for (const auto& c : loops[i])
                v.push_back(c.*field);
            return medianOf(v);
        };
        std::printf("\n== %d pauses: claim() inside the backend (plpgsql loop, %d new keys, %d tasks): us per call, "
                    "medians of %d ==\n",
            pauses, o.loopCalls / 2, o.loopCalls / 4, o.repeat);
        std::printf("%-8s %9s %9s %9s %9s\n", "claim()", "new key", "cpu", "task", "cpu");
        for (int i = 0; i < 2; ++i)
            std::printf("%-8s %9.2f %9.2f %9.2f %9.2f\n", ab[i].first, med(i, &LoopCost::newWallUs),
                med(i, &LoopCost::newCpuUs), med(i, &LoopCost::taskWallUs), med(i, &LoopCost::taskCpuUs));
        const auto speed = [&](const char* what, double LoopCost::*field) {
            const double a = med(0, field), b = med(1, field);
            std::printf("  %-52s %6.3fx\n", what, a > 0 && b > 0 ? a / b : 0.0);
        };
        speed("shipped / v14 calls per second, new key (wall)", &LoopCost::newWallUs);
        speed("shipped / v14 calls per second, new key (backend cpu)", &LoopCost::newCpuUs);
        speed("shipped / v14 tasks per second (wall)", &LoopCost::taskWallUs);
        speed("shipped / v14 tasks per second (backend cpu)", &LoopCost::taskCpuUs);
        std::fflush(stdout);
    }
}

void printPauseSection(const std::vector<Row>& rows, const Options& o)
{
    for (const int pauses : { 0, o.pauseCount }) {
        const std::string section = "pause-" + std::to_string(pauses);
        char title[200];
        std::snprintf(title, sizeof title,
            "== claim + fenced insert + complete, new keys, %d pauses on other operations: v14 claim() (A) and the"
            " shipped one (B), ABAB (tasks/s) ==",
            pauses);
        printSection(rows, section, title, "tasks/s");
        const char* target = pauses == 0 ? "target >= 0.98" : "target >= 0.97";
        for (int n : o.pauseConnections) {
            std::printf(" at %d connection%s:\n", n, n == 1 ? "" : "s");
            for (const Mode mode : { Mode::Bare, Mode::LibraryNoCounters }) {
                const std::string m = modeLabel(mode);
                printRatio(m + ": shipped / v14", rateOf(rows, section, m + ", shipped", n), rateOf(rows, section, m + ", v14", n),
                    target);
            }
        }
    }
}

void printTargets(const std::vector<Row>& rows, const std::string& section, const std::vector<int>& connections)
{
    const std::string a = modeLabel(Mode::Article), b = modeLabel(Mode::Bare), c = modeLabel(Mode::Library),
                      d = modeLabel(Mode::LibraryNoCounters);
    for (int n : connections) {
        const bool target = n == 16;
        std::printf(" at %d connection%s:\n", n, n == 1 ? "" : "s");
        printRatio("library (counters on) / (b) bare functions", rateOf(rows, section, c, n),
            rateOf(rows, section, b, n), target ? "target >= 0.90" : "");
        printRatio("library (counters on) / (a) article by hand", rateOf(rows, section, c, n),
            rateOf(rows, section, a, n), target ? "target >= 1.30" : "");
        printRatio("library (counters off) / (b) bare functions", rateOf(rows, section, d, n),
            rateOf(rows, section, b, n), "");
        printRatio("library (counters off) / (a) article by hand", rateOf(rows, section, d, n),
            rateOf(rows, section, a, n), "");
        printRatio("counters on / counters off", rateOf(rows, section, c, n), rateOf(rows, section, d, n),
            target ? "target 0.95 .. 1.05" : "");
        // Issue 45 item 1: one transaction for local effects against the article by hand.
        const std::string e = modeLabel(Mode::LibraryOneTransaction);
        printRatio("(e) one transaction / (a) article by hand", rateOf(rows, section, e, n), rateOf(rows, section, a, n),
            n == 1 ? "target >= 1.80" : target ? "target >= 1.30" : "");
        printRatio("(e) one transaction / (c) library, two steps", rateOf(rows, section, e, n),
            rateOf(rows, section, c, n), "");
        // Issue 45 item 2: the two-step run without the fence call (complete checks the token).
        const std::string f = modeLabel(Mode::LibraryFenceInComplete);
        printRatio("(f) fence in complete / (a) article by hand", rateOf(rows, section, f, n),
            rateOf(rows, section, a, n), target ? "target >= 1.30" : "");
        printRatio("(f) fence in complete / (b) bare functions", rateOf(rows, section, f, n),
            rateOf(rows, section, b, n), "target >= 0.90 (dup)");
        printRatio("(f) fence in complete / (c) library with the fence", rateOf(rows, section, f, n),
            rateOf(rows, section, c, n), "");
        // Issue 45 item 1, record at commit: the task's write, one Idem statement, one commit.
        const std::string g = modeLabel(Mode::LibraryRecordAtCommit);
        const std::string h = modeLabel(Mode::LibraryRecordNoCheck);
        printRatio("(g) record at commit / (a) article by hand", rateOf(rows, section, g, n),
            rateOf(rows, section, a, n), n == 1 ? "target >= 1.80" : target ? "target >= 1.30" : "");
        printRatio("(h) record, no read first / (a) article by hand", rateOf(rows, section, h, n),
            rateOf(rows, section, a, n), n == 1 ? "target >= 1.80" : target ? "target >= 1.30" : "");
        printRatio("(g) record at commit / (e) one transaction", rateOf(rows, section, g, n),
            rateOf(rows, section, e, n), "");
        printRatio("(h) record, no read first / (e) one transaction", rateOf(rows, section, h, n),
            rateOf(rows, section, e, n), "");
    }
}

} // namespace

int main(int argc, char** argv)
{
    const Options o = parseArgs(argc, argv);
    try {
        auto admin = connect(o.dsn, { "idem-bench admin" });
        {
            pqxx::read_transaction t(*admin);
            const auto r = t.exec("SELECT current_setting('server_version'), current_setting('fsync'),"
                                  " current_setting('synchronous_commit'), current_setting('full_page_writes'),"
                                  " current_setting('shared_buffers')");
            std::printf("idem-bench-claim: PostgreSQL %s, fsync=%s, synchronous_commit=%s, full_page_writes=%s,"
                        " shared_buffers=%s\n",
                r[0][0].c_str(), r[0][1].c_str(), r[0][2].c_str(), r[0][3].c_str(), r[0][4].c_str());
        }
        std::printf("client: %u hardware threads, load average at start %s\n", std::thread::hardware_concurrency(),
            loadAverage().c_str());
        std::printf("%d s per run, %d repeat(s), modes interleaved; figures are medians over the repeats\n", o.seconds,
            o.repeat);
        std::fflush(stdout);

        const SchemaName schema(o.schema), locking(o.schema + "_lk"), v14(o.schema + "_v14");
        const ProtocolVariant variantsOf[] = { ProtocolVariant::Shipped, ProtocolVariant::Invoker,
            ProtocolVariant::InsertFirst };
        std::vector<SchemaName> names { schema, locking }, hardened;
        if (o.harden)
            for (std::size_t i = 0; i < std::size(variantsOf); ++i)
                names.push_back(hardened.emplace_back(o.schema + "_h" + std::to_string(i)));
        if (o.pause)
            names.push_back(v14);
        ScratchSchemas scratch(*admin, names, o.keepSchema);
        installLockingClaim(*admin, locking);
        if (o.pause) {
            installV14Claim(*admin, v14);
            // Only the in-backend loop function: both keep their migrated fence() and complete().
            installProtocolVariant(*admin, v14, ProtocolVariant::Shipped);
            installProtocolVariant(*admin, schema, ProtocolVariant::Shipped);
        }
        for (std::size_t i = 0; i < hardened.size(); ++i)
            installProtocolVariant(*admin, hardened[i], variantsOf[i]);

        RunSpec base;
        base.dsn = o.dsn;
        base.digest = requestDigestFromText(R"({"order":"bench-1","amount":100,"currency":"EUR"})");
        base.duration = std::chrono::seconds(o.seconds);
        base.warmup = o.warmup;
        base.replayShare = o.replayShare;
        base.hotKeys = o.hotKeys;

        const std::vector<Variant> every {
            { modeLabel(Mode::Article), Mode::Article, &schema },
            { modeLabel(Mode::Bare), Mode::Bare, &schema },
            { modeLabel(Mode::Library), Mode::Library, &schema },
            { modeLabel(Mode::LibraryNoCounters), Mode::LibraryNoCounters, &schema },
            { modeLabel(Mode::LibraryOneTransaction), Mode::LibraryOneTransaction, &schema },
            { modeLabel(Mode::LibraryFenceInComplete), Mode::LibraryFenceInComplete, &schema },
            { modeLabel(Mode::LibraryRecordAtCommit), Mode::LibraryRecordAtCommit, &schema },
            { modeLabel(Mode::LibraryRecordNoCheck), Mode::LibraryRecordNoCheck, &schema },
        };
        std::vector<Variant> chosen;
        for (const auto& v : every)
            if (o.modes.find(v.label[1]) != std::string::npos) // "(a) ..." -> 'a'
                chosen.push_back(v);
        const std::vector<Variant>& four = chosen;
        std::vector<Row> rows;
        if (o.fresh) {
            base.workload = Workload::Fresh;
            runSection(*admin, o, base, "fresh", four, o.connections, rows);
        }
        if (o.dup) {
            base.workload = Workload::Duplicates;
            runSection(*admin, o, base, "dup", four, o.connections, rows);
        }
        if (o.hot) {
            base.workload = Workload::Hot;
            const std::vector<Variant> hot {
                { "library, lock-free replay (shipped)", Mode::LibraryNoCounters, &schema },
                { "library, replay under FOR UPDATE", Mode::LibraryNoCounters, &locking },
                { "bare claim(), lock-free (shipped)", Mode::Bare, &schema },
                { "bare claim(), under FOR UPDATE", Mode::Bare, &locking },
                { "(a) article, by hand (FOR UPDATE)", Mode::Article, &schema },
            };
            runSection(*admin, o, base, "hot", hot, o.hotConnections, rows);
        }

        if (o.pause)
            runPauseSection(*admin, o, base, schema, v14, rows);

        std::vector<std::pair<ProtocolVariant, std::vector<LoopCost>>> loops;
        if (o.harden) {
            for (const auto v : variantsOf)
                loops.emplace_back(v, std::vector<LoopCost> {});
            // In-backend loops first, rotated like the runs: every round starts one variant later.
            for (int rep = 0; rep < o.repeat; ++rep)
                for (std::size_t i = 0; i < hardened.size(); ++i) {
                    const std::size_t k = (i + static_cast<std::size_t>(rep)) % hardened.size();
                    const auto c = serverLoop(*admin, hardened[k], base.digest, o.loopCalls, o.loopCalls / 2, rep);
                    std::fprintf(stderr,
                        "[loop %d/%d] %-34s replay %.1f us (cpu %.1f), new key %.1f (cpu %.1f), task %.1f (cpu %.1f)\n",
                        rep + 1, o.repeat, protocolVariantLabel(variantsOf[k]), c.replayWallUs, c.replayCpuUs,
                        c.newWallUs, c.newCpuUs, c.taskWallUs, c.taskCpuUs);
                    loops[k].second.push_back(c);
                }
            std::vector<Variant> end;
            for (std::size_t i = 0; i < hardened.size(); ++i)
                end.push_back({ protocolVariantLabel(variantsOf[i]), Mode::LibraryNoCounters, &hardened[i] });
            base.workload = Workload::Hot;
            runSection(*admin, o, base, "harden-hot", end, o.hardenConnections, rows);
            base.workload = Workload::Fresh;
            runSection(*admin, o, base, "harden-fresh", end, o.hardenConnections, rows);
        }

        std::printf("\nload average at end %s\n", loadAverage().c_str());
        if (o.pause)
            printPauseSection(rows, o);
        if (o.harden) {
            printLoopTable(loops);
            printSection(rows, "harden-hot",
                "== library (counters off): replays of hot succeeded keys per protocol variant (replays/s) ==",
                "req/s");
            printSection(rows, "harden-fresh",
                "== library (counters off): claim + fenced insert + complete, new keys, per variant (tasks/s) ==",
                "tasks/s");
            for (const char* section : { "harden-hot", "harden-fresh" })
                for (int n : o.hardenConnections) {
                    std::printf(" %s at %d connection%s (throughput):\n", section, n, n == 1 ? "" : "s");
                    const auto rate = [&](ProtocolVariant v) { return rateOf(rows, section, protocolVariantLabel(v), n); };
                    printRatio("definer / invoker", rate(ProtocolVariant::Shipped), rate(ProtocolVariant::Invoker), "");
                    printRatio("read-first / insert-first", rate(ProtocolVariant::Shipped),
                        rate(ProtocolVariant::InsertFirst), "");
                }
        }
        if (o.fresh) {
            printSection(rows, "fresh",
                "== claim + fenced business insert + complete, every request a new key (tasks/s) ==", "tasks/s");
            printTargets(rows, "fresh", o.connections);
        }
        if (o.dup) {
            char title[160];
            std::snprintf(title, sizeof title,
                "== duplicate-heavy: %.0f%% of requests replay a key this thread completed (requests/s) ==",
                o.replayShare * 100);
            printSection(rows, "dup", title, "req/s");
            printTargets(rows, "dup", o.connections);
        }
        if (o.hot) {
            char title[160];
            std::snprintf(title, sizeof title, "== replays of %d hot succeeded keys (replays/s) ==", o.hotKeys);
            printSection(rows, "hot", title, "req/s");
            for (int n : o.hotConnections) {
                std::printf(" at %d connection%s:\n", n, n == 1 ? "" : "s");
                printRatio("library: locking / lock-free replay",
                    rateOf(rows, "hot", "library, replay under FOR UPDATE", n),
                    rateOf(rows, "hot", "library, lock-free replay (shipped)", n), "");
                printRatio("bare claim(): locking / lock-free replay",
                    rateOf(rows, "hot", "bare claim(), under FOR UPDATE", n),
                    rateOf(rows, "hot", "bare claim(), lock-free (shipped)", n), "");
            }
        }
        std::fflush(stdout);
        bool problems = false;
        for (const auto& r : rows)
            problems = problems || !median(r.runs).problem.empty();
        return problems ? 1 : 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "idem-bench-claim: %s\n", e.what());
        return 1;
    }
}
