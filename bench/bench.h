#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem {
class OutcomeCounters;
}

namespace idem::bench {

// The ways of running one task that the benchmark compares.
enum class Mode {
    Article, // (a) the article's statements, one round trip each, sent by hand
    Bare, // (b) the schema's SQL functions called with exec_params, no library
    Library, // (c) idem::runTask with OutcomeCounters and a CounterFlusher
    LibraryNoCounters, // (d) idem::runTask without counters
    LibraryOneTransaction, // (e) idem::runTask with RunOptions::oneTransaction, counters on (issue 45 item 1)
    LibraryFenceInComplete, // (f) (c) with RunOptions::fenceInComplete: no fence call (issue 45 item 2)
    LibraryRecordAtCommit, // (g) RunOptions::recordAtCommit with the read before the task, counters on
    LibraryRecordNoCheck, // (h) (g) without the read before the task (RunOptions::checkFirst off)
};

// The modes that count outcomes (an OutcomeCounters and a CounterFlusher per run).
inline bool countsOutcomes(Mode mode)
{
    return mode == Mode::Library || mode == Mode::LibraryOneTransaction || mode == Mode::LibraryFenceInComplete
        || mode == Mode::LibraryRecordAtCommit || mode == Mode::LibraryRecordNoCheck;
}

const char* modeLabel(Mode mode);
const char* modeTag(Mode mode); // the key's operation part: keeps the modes' keys apart

enum class Workload {
    Fresh, // every request a new key: claim, fenced business write, complete
    Duplicates, // a share of the requests repeat a key this thread already completed
    Hot, // every request replays one of a small set of succeeded keys
};

enum class Outcome {
    Executed, // claimed, business row written, completed, committed
    Replayed, // an earlier success answered the request
    Other, // anything else (in progress, conflict, lost token): never expected here
};

// One worker thread's way of serving a request, on its own connection.
class Client {
public:
    virtual ~Client() = default;
    virtual Outcome request(const std::string& businessId) = 0;
};

struct ClientSetup {
    Mode mode = Mode::Bare;
    SchemaName schema;
    std::string digest; // the request digest every request carries
    OutcomeCounters* counters = nullptr; // countsOutcomes(mode) only
};

std::unique_ptr<Client> makeClient(pqxx::connection& conn, const ClientSetup& setup);

// The scratch schema's extra table: one row per business effect, keyed so a second effect
// for a key could not even be written.
void createBenchTable(pqxx::connection& conn, const SchemaName& schema);
// Empties the task, effect and counter tables between runs so each run starts alike.
void resetTables(pqxx::connection& conn, const SchemaName& schema);
// Replaces the schema's claim() with the shipped body changed in one place: the first read
// of an existing row takes FOR UPDATE, so every decision, replays included, is made under
// the row lock (as the article's sketch does). Read from the bundled migration text.
void installLockingClaim(pqxx::connection& conn, const SchemaName& schema);

// The "harden" section (harden_bench.cpp): schema v6's protocol functions against variants of
// themselves, each installed in a scratch schema migrated to the latest version.
enum class ProtocolVariant {
    Shipped, // v6 as migrated: SECURITY DEFINER, claim() reads first
    Invoker, // v6 with claim/fence/complete altered to SECURITY INVOKER
    InsertFirst, // v6 (definer, same checks) with claim() trying the insert first, as v5 did
};
// (v5's own claim() was a fourth variant until v14: since the functions are one file each, its
// body is only in git history; bench/README.md keeps its figures.)
const char* protocolVariantLabel(ProtocolVariant v);
void installProtocolVariant(pqxx::connection& conn, const SchemaName& schema, ProtocolVariant variant);

// claim() timed inside the backend by a PL/pgSQL loop: wall (clock_timestamp) and backend CPU
// (from /proc, -1 when the server is elsewhere) per call, for replays of 100 succeeded keys, for
// new keys, and per whole new task (claim, fence, complete).
struct LoopCost {
    double replayWallUs = 0;
    double replayCpuUs = -1;
    double newWallUs = 0;
    double newCpuUs = -1;
    double taskWallUs = 0;
    double taskCpuUs = -1;
};
LoopCost serverLoop(pqxx::connection& conn, const SchemaName& schema, const std::string& digest, int replays,
    int newKeys, int round);
void printLoopTable(const std::vector<std::pair<ProtocolVariant, std::vector<LoopCost>>>& results);

// The "pause" section (pause_bench.cpp): the shipped claim() against v14's. The v14 body is the
// shipped one with its two guarded pause blocks (and their variables) taken out, so it follows
// claim.sql; it throws when the blocks are not found as expected.
std::string v14ClaimSql(const SchemaName& schema);
void installV14Claim(pqxx::connection& conn, const SchemaName& schema);
// Replaces the schema's pauses with `count` in force on operations no bench key uses, then ANALYZE.
void setOtherPauses(pqxx::connection& conn, const SchemaName& schema, int count);

struct RunSpec {
    std::string dsn;
    Mode mode = Mode::Bare;
    Workload workload = Workload::Fresh;
    SchemaName schema;
    std::string digest;
    int connections = 1;
    std::chrono::milliseconds duration { 5000 };
    int warmup = 20; // requests per thread before the clock starts
    double replayShare = 0.9; // Workload::Duplicates
    int hotKeys = 100; // Workload::Hot
};

struct RunResult {
    double perSecond = 0;
    double p50ms = 0;
    double p99ms = 0;
    // CPU per request in the timed window, which a loaded machine disturbs far less than
    // throughput: the client threads' own CPU time, and the server backends' (read from
    // /proc, so only when the server runs on this machine; negative when unknown).
    double clientCpuUs = 0;
    double serverCpuUs = -1;
    long long requests = 0;
    long long executed = 0;
    long long replayed = 0;
    long long other = 0;
    std::string problem; // empty when the post-run checks passed
};

// Opens spec.connections connections (one thread each), warms them up, runs them together
// for spec.duration, then checks the tables: one effect per succeeded key, nothing else.
RunResult runOnce(pqxx::connection& admin, const RunSpec& spec);

// One line of a result table: what ran and the runs' figures (medians are taken at print).
struct Row {
    std::string section;
    std::string label;
    int connections = 0;
    std::vector<RunResult> runs;
};

RunResult median(const std::vector<RunResult>& runs);
// The median of some runs' figures, 0 for none.
double medianOf(std::vector<double> v);
void printSection(const std::vector<Row>& rows, const std::string& section, const std::string& title, const char* unit);
// Throughput of the row with that label and connection count, median over its runs; 0 if absent.
double rateOf(const std::vector<Row>& rows, const std::string& section, const std::string& label, int connections);
void printRatio(const std::string& what, double num, double den, const std::string& target);

} // namespace idem::bench
