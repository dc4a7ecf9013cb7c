#include <csignal>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <pqxx/pqxx>
#include <random>
#include <sstream>
#include <thread>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/demo.h"
#include "cli/demoreport.h"
#include "cli/demoworker.h"
#include "core/connection.h"
#include "core/counters.h"
#include "core/utf8.h"
#include "core/workerversion.h"
#include "schema/migrate.h"

namespace idem::cli {

namespace {
    constexpr const char* demoHelp = R"(Usage: idemctl demo [--dsn DSN] [--schema NAME] [OPTIONS]

Runs a workload through the Idem library against a database: worker threads, each with
its own connection, send requests (JSON bodies with amount, currency and target) for keys
tenant-N:OPERATION:order-RUN-N, and retry the way a client would what came back in
progress, in backoff or without an answer, with the same key and body. Each execution
calls a downstream payment service that is itself idempotent by key (demo_payments, its
own connection, committed at once) and writes a business effect inside the protected
transaction (demo_orders_effects, no unique constraint, so a double effect would show).
Both tables are created in the Idem schema when missing.

Its operations are registered re-drivable (schema v25, docs/redrive.md): the workers' claims
store their requests, and one re-driver per operation (every tenant) runs what an operator
requeues with re-execute (idemctl requeue --re-execute, a requeue job with --re-execute, the
console), with the stored request and the same key, paying and writing the effect as a worker
does. Requeued keys of earlier runs complete too.

Each execution calls the payment service with the key and no transaction open, then
records the effect and the success in a short fenced transaction. At the end (after
--duration, or on SIGINT / SIGTERM) running tasks get 2 s (or --slow-ms + 1 s) to finish;
connections still waiting on the database after that are cut. Then it checks the database:
no key has two effect rows, every succeeded record of this run has exactly one effect row
and a payment, every effect row's record succeeded, and every success the demo acknowledged
to its clients (its client-side ledger) is still succeeded with the result they were given
(a failover to a standby that lagged loses those), no request was dropped on an unexpected
error, and no key of this run is left processing with an expired lease without a request
for it queued (whichever client claimed it: the check covers workers in other languages on
the run's keys, clients/python/examples/demo_worker.py). Exit 0 when clean, 1 otherwise.

A worker whose connection breaks, or whose server turns out read-only (a standby, a primary
demoted by a switchover), says so, reconnects, waiting for a server that takes writes (with
several hosts in --dsn, target_session_attrs=read-write picks the primary), and carries on: a
claim is made again, a completion is fenced again with the same token, a request is sent again
later.

  --dsn DSN               libpq conninfo or URI (default: $IDEM_DSN, then PG* variables)
  --schema NAME           schema holding the Idem tables (default: idem)
  --workers N             worker threads, each with its own connection (default 4)
  --tenants M             tenants tenant-1..tenant-M (default 3)
  --operations LIST       comma-separated operations (default charge,refund,ship)
  --keys K                business ids per tenant and operation; 0 makes every fresh
                          request a new key (default 0)
  --rate R                requests per second over all workers, retries included;
                          0 is as fast as possible (default 50)
  --duration S            seconds to run; 0 runs until SIGINT or SIGTERM (default 0)
  --duplicate-rate P      share of requests that resend a recent request: replays, or
                          in_progress while it runs (default 0.15)
  --conflict-rate P       share that reuse a recent key with another amount (default 0.02)
  --slow-rate P           share of executions that take --slow-ms (default 0.02)
  --slow-ms MS            (default 1500)
  --transient-rate P      executions that fail retryably before paying (default 0.05)
  --permanent-rate P      executions that fail permanently (default 0.01)
  --unknown-rate P        executions that pay, then lose the answer: failure class
                          unknown, retried with the same key (default 0.02)
  --die-rate P            executors that claim and vanish mid-task, leaving the lease
                          to expire (default 0.01)
  --stale-rate P          executors that stall past a short lease, are taken over, then
                          try to commit and must be refused (default 0.01)
  --lease-ms MS           lease of a claim (default 5000)
  --seed N                random seed (default: random; printed in the summary)
  --run-id ID             the run's part of every key (order-ID-N; 1 to 32 of a-z, 0-9;
                          default: a new one, printed at the start), so that workers of
                          another language (clients/python/examples/demo_worker.py) can
                          work the same keys; the check at the end covers their effects
  --worker-version V      the version string each worker reports when it connects, as
                          HOST/idemctl-demo-N (default: this build's, )" IDEM_VERSION R"();
                          a version the database has not seen before is a deploy on the
                          charts' time axis and in `idemctl events`
  --no-redrive            neither register the operations re-drivable nor run re-drivers
                          (another process re-drives them, or nothing does)
  --quiet                 no progress line every second
  --json                  print the summary as JSON on stdout (progress goes to stderr)
)";

    volatile std::sig_atomic_t g_stopSignal = 0;

    void onStopSignal(int signal) { g_stopSignal = signal; }

    // SIGINT and SIGTERM ask for a clean stop; a second one kills as usual (SA_RESETHAND).
    class StopSignals {
    public:
        StopSignals()
        {
            g_stopSignal = 0;
            struct sigaction sa { };
            sa.sa_handler = onStopSignal;
            sigemptyset(&sa.sa_mask);
            sa.sa_flags = SA_RESETHAND;
            sigaction(SIGINT, &sa, &m_oldInt);
            sigaction(SIGTERM, &sa, &m_oldTerm);
        }
        ~StopSignals()
        {
            sigaction(SIGINT, &m_oldInt, nullptr);
            sigaction(SIGTERM, &m_oldTerm, nullptr);
        }
        StopSignals(const StopSignals&) = delete;
        StopSignals& operator=(const StopSignals&) = delete;

    private:
        struct sigaction m_oldInt { };
        struct sigaction m_oldTerm { };
    };

    double number(const Args& args, const std::string& name, double fallback, double min, double max)
    {
        const auto v = args.value(name);
        if (!v)
            return fallback;
        std::size_t used = 0;
        double d = 0;
        try {
            d = std::stod(*v, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != v->size() || !(d >= min && d <= max)) {
            std::ostringstream range;
            range << min << " to " << max;
            throw UsageError("--" + name + " must be a number from " + range.str() + ", not '" + *v + "'");
        }
        return d;
    }

    std::vector<std::string> splitList(const std::string& text)
    {
        std::vector<std::string> out;
        std::size_t from = 0;
        for (;;) {
            const auto comma = text.find(',', from);
            out.push_back(text.substr(from, comma - from));
            if (comma == std::string::npos)
                break;
            from = comma + 1;
        }
        return out;
    }

    std::string makeRunId()
    {
        static constexpr char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
        auto n = static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                .count());
        n = n * 1296 + std::random_device {}() % 1296; // two more base-36 digits: runs in the same second differ
        std::string out;
        for (; n > 0; n /= 36)
            out.insert(out.begin(), digits[n % 36]);
        return out;
    }

    demo::Options parseOptions(const std::vector<std::string>& argv, bool& help)
    {
        Args args(argv,
            { "dsn", "schema", "workers", "tenants", "operations", "keys", "rate", "duration", "duplicate-rate",
                "conflict-rate", "slow-rate", "slow-ms", "transient-rate", "permanent-rate", "unknown-rate", "die-rate",
                "stale-rate", "lease-ms", "seed", "run-id", "worker-version" },
            { "quiet", "json", "no-redrive", "help" });
        help = args.flag("help");
        demo::Options o;
        if (help)
            return o;
        if (!args.positional().empty())
            throw UsageError("demo takes no positional arguments");
        o.dsn = dsnFrom(args);
        o.schema = SchemaName(args.valueOr("schema", SchemaName::defaultName));
        o.workers = static_cast<int>(args.intValue("workers", o.workers, 1, 256));
        o.tenants = static_cast<int>(args.intValue("tenants", o.tenants, 1, 10'000));
        if (const auto ops = args.value("operations")) {
            o.operations = splitList(*ops);
            for (const auto& op : o.operations)
                TaskKey("tenant-1", op, "x"); // the key's own rules, with its own message
        }
        o.keys = args.intValue("keys", o.keys, 0, 1'000'000'000'000LL);
        o.rate = number(args, "rate", o.rate, 0, 1e6);
        o.durationSeconds = number(args, "duration", o.durationSeconds, 0, 1e9);
        o.duplicateRate = number(args, "duplicate-rate", o.duplicateRate, 0, 1);
        o.conflictRate = number(args, "conflict-rate", o.conflictRate, 0, 1);
        o.slowRate = number(args, "slow-rate", o.slowRate, 0, 1);
        o.slow = std::chrono::milliseconds(args.intValue("slow-ms", o.slow.count(), 0, 3'600'000));
        o.transientRate = number(args, "transient-rate", o.transientRate, 0, 1);
        o.permanentRate = number(args, "permanent-rate", o.permanentRate, 0, 1);
        o.unknownRate = number(args, "unknown-rate", o.unknownRate, 0, 1);
        o.dieRate = number(args, "die-rate", o.dieRate, 0, 1);
        o.staleRate = number(args, "stale-rate", o.staleRate, 0, 1);
        o.lease = std::chrono::milliseconds(args.intValue("lease-ms", o.lease.count(), 1, 86'400'000));
        if (o.duplicateRate + o.conflictRate > 1)
            throw UsageError("--duplicate-rate and --conflict-rate add up to more than 1");
        if (o.transientRate + o.permanentRate + o.unknownRate > 1)
            throw UsageError("--transient-rate, --permanent-rate and --unknown-rate add up to more than 1");
        if (o.dieRate + o.staleRate > 1)
            throw UsageError("--die-rate and --stale-rate add up to more than 1");
        if (const auto seed = args.value("seed")) {
            try {
                std::size_t used = 0;
                o.seed = std::stoull(*seed, &used);
                if (used != seed->size())
                    throw std::invalid_argument("trailing characters");
            } catch (const std::exception&) {
                throw UsageError("--seed must be a non-negative integer, not '" + *seed + "'");
            }
        } else {
            std::random_device rd;
            o.seed = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
        }
        o.quiet = args.flag("quiet");
        o.redrive = !args.flag("no-redrive");
        o.json = args.flag("json");
        o.runId = makeRunId();
        if (const auto runId = args.value("run-id")) {
            // Part of every key and a LIKE pattern: letters and digits only, so nothing in it is a wildcard.
            if (runId->empty() || runId->size() > 32
                || runId->find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") != std::string::npos)
                throw UsageError("--run-id is 1 to 32 lowercase letters and digits");
            o.runId = *runId;
        }
        o.workerVersion = args.valueOr("worker-version", IDEM_VERSION);
        try {
            validateVersionText(o.workerVersion, "version");
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("--worker-version: ") + e.what());
        }
        return o;
    }

    std::string seconds(double s)
    {
        std::ostringstream out;
        out << s << " s";
        return out.str();
    }

    void printProgress(std::ostream& out, double elapsed, const demo::Stats::Snapshot& now,
        const demo::Stats::Snapshot& before, std::size_t queued, const std::string& processing)
    {
        using demo::Tally;
        const auto delta = [&](Tally t) { return demo::at(now, t) - demo::at(before, t); };
        out << '[' << std::setw(5) << static_cast<long long>(elapsed) << "s] " << std::setw(4) << delta(Tally::Requests)
            << " req/s |";
        for (const auto t : { Tally::Succeeded, Tally::Replayed, Tally::InProgress, Tally::Conflict, Tally::RetryLater,
                 Tally::Failed, Tally::WillRetry, Tally::LostOwnership, Tally::Paused })
            out << ' ' << demo::tallyName(t) << ' ' << delta(t);
        out << " | died " << delta(Tally::Died) << " stale " << delta(Tally::StaleAttempts) << " | queued " << queued
            << " | processing " << processing << std::endl;
    }

} // namespace

int runDemo(const std::vector<std::string>& argv)
{
    bool help = false;
    const demo::Options options = parseOptions(argv, help);
    if (help) {
        std::cout << demoHelp;
        return ExitOk;
    }
    std::ostream& progress = options.json ? std::cerr : std::cout;

    // The demo writes: a read-only server (a standby) is refused at once, in words.
    auto conn = connectPrimary(options.dsn, { "idemctl demo" });
    const auto state = inspectSchema(*conn, options.schema);
    if (state.newer()) {
        std::cerr << "idemctl demo: refused: schema " << options.schema.quoted() << " is at version " << state.version
                  << ", newer than this idemctl (" << state.latest << ")\n";
        return ExitRefused;
    }
    if (state.version < state.latest) {
        std::cerr << "idemctl demo: schema " << options.schema.quoted() << " is at version " << state.version
                  << ", this idemctl needs " << state.latest << ": run `idemctl migrate` first\n";
        return ExitFailure;
    }
    demo::createDemoTables(*conn, options.schema);

    if (!options.quiet)
        progress << "idemctl demo: run " << options.runId << ", " << options.workers << " workers, " << options.tenants
                 << " tenants, " << options.operations.size() << " operations, "
                 << (options.rate > 0 ? std::to_string(static_cast<long long>(options.rate)) + " requests/s"
                                      : "no rate cap")
                 << ", "
                 << (options.durationSeconds > 0 ? "for " + seconds(options.durationSeconds)
                                                 : std::string("until SIGINT/SIGTERM"))
                 << ", workers report version " << displaySafe(options.workerVersion, 200) << std::endl;

    using Clock = std::chrono::steady_clock;
    demo::Shared shared(options);
    // Schema v25: its operations re-drivable, so that an operator's requeue with re-execute
    // (idemctl requeue --re-execute, the console) is run by the re-drivers started below.
    if (options.redrive)
        demo::registerOperations(*conn, shared);
    const StopSignals signals;
    const auto start = Clock::now();
    bool countersFlushed = true;
    Clock::time_point stopAt;
    double drained = 0;
    int cut = 0;
    conn.reset(); // the monitor has its own, cut at the stop like the workers'
    {
        CounterFlusher flusher(options.dsn, options.schema, shared.counters);
        // The re-drivers count as running too: the stop's grace waits for them as for the workers.
        shared.running = options.workers + (shared.redrivable ? static_cast<int>(options.operations.size()) : 0);
        std::vector<std::thread> threads;
        for (int i = 0; i < options.workers; ++i)
            threads.emplace_back([&shared, i] { demo::runWorker(shared, i); });
        std::vector<std::thread> redrivers;
        if (shared.redrivable)
            for (std::size_t k = 0; k < options.operations.size(); ++k)
                redrivers.emplace_back([&shared, &options, k] {
                    demo::runRedriver(shared, options.operations[k], options.workers + static_cast<int>(k));
                });
        // The progress line's processing count, off this thread: a query that waits for the
        // database (a pool with no free connection) must not keep the loop below from stopping.
        std::mutex processingMutex;
        std::string processing = "?";
        std::thread monitor;
        if (!options.quiet)
            monitor = std::thread([&] {
                constexpr int slot = -1;
                std::unique_ptr<pqxx::connection> c;
                while (!shared.stop.load()) {
                    std::string text = "?";
                    try {
                        if (!c || !c->is_open()) {
                            shared.sockets.set(slot, -1);
                            c = connect(options.dsn, { "idemctl demo" });
                            shared.sockets.set(slot, c->sock());
                        }
                        const auto [all, expired] = demo::processingCounts(*c, options.schema);
                        text = std::to_string(all) + " (" + std::to_string(expired) + " expired)";
                    } catch (const std::exception&) {
                        shared.sockets.set(slot, -1);
                        c.reset(); // the workers report the outage; try again next second
                    }
                    {
                        std::lock_guard lock(processingMutex);
                        processing = text;
                    }
                    for (int i = 0; i < 10 && !shared.stop.load(); ++i)
                        std::this_thread::sleep_for(std::chrono::milliseconds(100));
                }
                shared.sockets.set(slot, -1);
            });

        auto nextTick = start + std::chrono::seconds(1);
        demo::Stats::Snapshot last {};
        for (;;) {
            const auto now = Clock::now();
            if (g_stopSignal != 0)
                break;
            if (options.durationSeconds > 0
                && std::chrono::duration<double>(now - start).count() >= options.durationSeconds)
                break;
            if (now >= nextTick) {
                nextTick += std::chrono::seconds(1);
                const auto snap = shared.stats.snapshot();
                if (!options.quiet) {
                    std::lock_guard lock(processingMutex);
                    printProgress(progress, std::chrono::duration<double>(now - start).count(), snap, last,
                        shared.retries.size(), processing);
                }
                last = snap;
            }
            std::this_thread::sleep_for(
                std::min<Clock::duration>(nextTick - Clock::now(), std::chrono::milliseconds(50)));
        }
        if (g_stopSignal != 0 && !options.quiet)
            progress << "idemctl demo: stopping on signal " << static_cast<int>(g_stopSignal)
                     << ", letting running tasks finish" << std::endl;
        shared.stop = true;
        stopAt = Clock::now();
        // Running tasks get a grace period (a slow one included); whatever still waits on the
        // database after it is cut, so the run ends even when the database never answers.
        const auto grace = std::max<Clock::duration>(std::chrono::seconds(2), options.slow + std::chrono::seconds(1));
        while (shared.running.load() > 0 && Clock::now() - stopAt < grace)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (shared.running.load() > 0) {
            cut = shared.sockets.interruptAll();
            if (!options.quiet)
                progress << "idemctl demo: " << shared.running.load() << " workers still waiting on the database after "
                         << std::chrono::duration<double>(grace).count() << " s; cut " << cut << " connections"
                         << std::endl;
        }
        for (auto& t : threads)
            t.join();
        for (auto& t : redrivers)
            t.join();
        if (shared.reexecuted.load() > 0 && !options.quiet)
            progress << "idemctl demo: re-executed " << shared.reexecuted.load() << " requeued key(s)" << std::endl;
        if (monitor.joinable()) {
            shared.sockets.interruptAll();
            monitor.join();
        }
        drained = std::chrono::duration<double>(Clock::now() - stopAt).count();
        countersFlushed = flusher.flushNow();
    }
    const double elapsed = std::chrono::duration<double>(stopAt - start).count();

    // The check reads the primary: a standby may not have the last commits yet. A failover may
    // still be settling: it waits for one, as the workers did.
    if (!conn || !conn->is_open())
        conn = connectPrimaryWaiting(
            options.dsn, { "idemctl demo" }, std::chrono::seconds(30), [&progress, &options](const ConnectError& e) {
                if (!options.quiet)
                    progress << "idemctl demo: the check waits for the primary: " << e.what() << std::endl;
            });
    const demo::ClientSide clients { demo::at(shared.stats.snapshot(), demo::Tally::Errors), shared.retries.keys() };
    const demo::Verification verification = demo::verify(*conn, options, shared.ledger, clients);
    const demo::RunSummary summary { options, shared.stats.snapshot(), elapsed, drained, shared.retries.size(),
        countersFlushed, verification };
    if (options.json)
        std::cout << demo::summaryJson(summary).dump(2) << std::endl;
    else
        demo::printSummary(std::cout, summary);
    return verification.clean() ? ExitOk : ExitFailure;
}

} // namespace idem::cli
