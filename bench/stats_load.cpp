// The consoles' load: N pollers beside one run of the claim benchmark (runOnce, unchanged).
#include "bench/stats_bench.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <random>
#include <thread>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "operations/dashboardquery.h"
#include "operations/events.h"
#include "operations/latency.h"
#include "operations/pauses.h"
#include "operations/readframe.h"
#include "operations/stats.h"

namespace idem::bench::stats {

namespace {

    using Clock = std::chrono::steady_clock;

    struct PollerTally {
        std::vector<std::uint32_t> latencyUs;
        long long timeouts = 0;
        long long late = 0;
        double cpuUs = -1;
        double clientCpuUs = 0;
        long long ownRefreshes = 0;
        double ownRefreshMs = 0;
        double oldestExactShownS = -1;
    };

    // One dashboard console's tick and what its model does after it (DashboardModel::
    // maybeRefreshExact): the shared exact refresh when it is due and nobody runs it, or, where
    // it needs figures of its own (a standby nobody refreshes for), its own refresh once a
    // period. Returns the age of the exact figures that tick showed (-1: none).
    struct ConsoleExact {
        std::optional<ExactFigures> own;
        Clock::time_point ownAt;
    };
    double dashboardPoll(pqxx::connection& conn, const SchemaName& schema, const DashboardOptions& dashboard,
        ConsoleExact& state, PollerTally& tally)
    {
        const auto r = readDashboard(conn, schema, dashboard);
        const auto now = Clock::now();
        if (needsOwnExact(r.stats, false)) {
            const double age = state.own ? std::chrono::duration<double>(now - state.ownAt).count() : -1;
            if (!state.own || age > state.own->periodSeconds) {
                state.own = readOwnExact(conn, schema, dashboard.stats, 600000);
                state.ownAt = Clock::now();
                ++tally.ownRefreshes;
                tally.ownRefreshMs += state.own->costMs;
            }
            return age;
        }
        if (r.stats.exactDue)
            refreshSharedExact(conn, schema, dashboard.stats.longUnfinishedAfterMinutes, 600000);
        return r.stats.exact ? r.stats.exact->ageSeconds : -1;
    }

    // IDEM_BENCH_POLLER_CPU=N: the pollers' threads run on CPU N only (with the standby on the
    // same CPU and the primary and the claims elsewhere, their client side stays off the
    // primary's CPU, as consoles on operators' desktops would).
    void pinPoller()
    {
        const char* cpu = std::getenv("IDEM_BENCH_POLLER_CPU");
        if (!cpu || !*cpu)
            return;
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(std::atoi(cpu), &set);
        if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
            std::fprintf(stderr, "cannot pin a poller to CPU %s\n", cpu);
    }

    struct ExactRow {
        long long refreshes = 0;
        double costMs = 0;
    };
    ExactRow sharedExact(pqxx::connection& admin, const SchemaName& schema)
    {
        pqxx::nontransaction n(admin);
        const auto r = n.exec("SELECT refreshes, cost_ms FROM " + schema.qualify("idem_stats_exact"));
        return r.empty() ? ExactRow {} : ExactRow { r[0][0].as<long long>(), r[0][1].as<double>() };
    }

    // The watches beside the tick, on tick `n` of console `p` (LatencyWatch, EventWatch and
    // PauseWatch's reads, as their jobs make them: models/latencywatch.cpp, eventwatch.cpp,
    // pausewatch.cpp).
    void watchPolls(pqxx::connection& conn, const SchemaName& schema, long long n, int p)
    {
        if ((n + p) % 5 == 0)
            listPauses(conn, schema, 60);
        if ((n + p) % 60 == 0) {
            LatencyQuery perMinute;
            perMinute.minutes = 60;
            perMinute.perMinute = true;
            LatencyQuery byOperation = perMinute;
            byOperation.byOperation = true;
            byOperation.perMinute = false;
            readLatencyView(conn, schema, perMinute, byOperation, 60, 5000);
        }
        if ((n + p + 30) % 60 == 0)
            readRecentEvents(conn, schema, (60 + 2) * 60'000'000LL, 60'000'000LL, {}, {}, 500, 5000);
    }

    bool isTimeout(const pqxx::sql_error& e) { return e.sqlstate() == "57014"; } // query_canceled

    // One poll as the naive console runs it: two plain statements under the same timeout.
    void naivePoll(pqxx::connection& conn, const SchemaName& schema, int timeoutMs)
    {
        pqxx::read_transaction t(conn);
        t.exec_params("SELECT set_config('statement_timeout', $1, true)", std::to_string(timeoutMs));
        t.exec(naiveCountSql(schema));
        t.exec(histogramSql(schema));
        t.commit();
    }

    double percentileMs(std::vector<std::uint32_t>& v, double p)
    {
        if (v.empty())
            return 0;
        const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
        std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
        return static_cast<double>(v[k]) / 1000.0;
    }

} // namespace

const char* consoleLabel(Console console)
{
    switch (console) {
    case Console::None:
        return "no consoles";
    case Console::Snapshot:
        return "consoles: readStats";
    case Console::Dashboard:
        return "consoles: dashboard tick";
    case Console::Naive:
        return "consoles: naive count + histogram";
    case Console::RoundTrip:
        return "consoles: SELECT 1 (the floor)";
    case Console::WatchedWaiting:
        return "consoles: tick+watches, waiting";
    case Console::WatchedFramed:
        return "consoles: tick+watches, framed";
    }
    return "?";
}

LoadResult runWithConsoles(pqxx::connection& admin, const LoadSpec& spec)
{
    LoadResult out;
    if (spec.console == Console::None || spec.pollers <= 0) {
        out.claim = runOnce(admin, spec.claim);
        return out;
    }

    std::vector<PollerTally> tallies(static_cast<std::size_t>(spec.pollers));
    std::atomic<bool> stop { false };
    std::atomic<int> connected { 0 };
    std::mutex errorMutex;
    std::exception_ptr error;
    StatsOptions options;
    options.statementTimeoutMs = spec.statementTimeoutMs;
    DashboardOptions dashboard;
    dashboard.stats = options;

    const ExactRow exactBefore = sharedExact(admin, spec.polled);
    const auto begin = Clock::now();
    std::vector<std::thread> threads;
    for (int p = 0; p < spec.pollers; ++p) {
        threads.emplace_back([&, p] {
            auto& tally = tallies[static_cast<std::size_t>(p)];
            pinPoller();
            try {
                auto conn = connect(spec.monitorDsn.empty() ? spec.dsn : spec.monitorDsn, { "idem-bench console" });
                ConsoleExact exact;
                ReadStatsOptions how;
                how.prepared = true; // as the exporter reads, on a direct connection
                const int pid = backendPid(*conn);
                const bool watched
                    = spec.console == Console::WatchedWaiting || spec.console == Console::WatchedFramed;
                if (spec.console == Console::Dashboard || watched) // as the console's worker does, once
                    prepareDashboardConnection(*conn, spec.statementTimeoutMs);
                std::optional<DirectReads> direct;
                if (spec.console == Console::WatchedFramed) {
                    pqxx::read_transaction t(*conn);
                    const auto raw = rawConnection(t);
                    t.commit();
                    direct.emplace(*conn, raw);
                }
                long long tick = 0;
                conn->prepare("bench_round_trip", "SELECT 1");
                // Consoles are not synchronised: each ticks on a phase of its own.
                std::mt19937 rng(0x5eedu + static_cast<unsigned>(p));
                const auto phase = std::chrono::microseconds(std::uniform_int_distribution<long long>(
                    0, std::chrono::duration_cast<std::chrono::microseconds>(spec.interval).count() - 1)(rng));
                ++connected;
                const double cpu0 = backendCpuUs(pid);
                const double client0 = threadCpuUs();
                auto next = Clock::now() + phase;
                while (!stop.load()) {
                    std::this_thread::sleep_until(next);
                    if (stop.load())
                        break;
                    const auto t0 = Clock::now();
                    try {
                        if (spec.console == Console::Snapshot)
                            readStats(*conn, spec.polled, options, how);
                        else if (spec.console == Console::Dashboard || watched) {
                            const double age = dashboardPoll(*conn, spec.polled, dashboard, exact, tally);
                            if (age >= 0 && t0 - begin > std::chrono::seconds(3))
                                tally.oldestExactShownS = std::max(tally.oldestExactShownS, age);
                            if (watched)
                                watchPolls(*conn, spec.polled, tick++, p);
                        } else if (spec.console == Console::RoundTrip) {
                            pqxx::nontransaction n(*conn);
                            n.exec_prepared("bench_round_trip");
                        } else
                            naivePoll(*conn, spec.polled, spec.statementTimeoutMs);
                        tally.latencyUs.push_back(static_cast<std::uint32_t>(
                            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count()));
                    } catch (const pqxx::sql_error& e) {
                        if (!isTimeout(e))
                            throw;
                        ++tally.timeouts;
                    }
                    // The console arms its next tick when the poll is done: an overrun stretches it.
                    next += spec.interval;
                    const auto now = Clock::now();
                    if (next < now) {
                        ++tally.late;
                        next = now;
                    }
                }
                tally.clientCpuUs = threadCpuUs() - client0;
                const double cpu1 = backendCpuUs(pid);
                if (cpu0 >= 0 && cpu1 >= 0)
                    tally.cpuUs = cpu1 - cpu0;
            } catch (...) {
                std::lock_guard lock(errorMutex);
                if (!error)
                    error = std::current_exception();
                stop = true;
            }
        });
    }
    while (connected.load() < spec.pollers && !stop.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(10));

    std::exception_ptr claimError;
    try {
        if (!stop.load())
            out.claim = runOnce(admin, spec.claim);
    } catch (...) {
        claimError = std::current_exception();
    }
    stop = true;
    for (auto& t : threads)
        t.join();
    out.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    if (claimError)
        std::rethrow_exception(claimError);
    if (error)
        std::rethrow_exception(error);

    std::vector<std::uint32_t> all;
    double cpu = 0, clientCpu = 0;
    bool cpuKnown = true;
    for (auto& t : tallies) {
        all.insert(all.end(), t.latencyUs.begin(), t.latencyUs.end());
        out.timeouts += t.timeouts;
        out.late += t.late;
        cpu += t.cpuUs;
        clientCpu += t.clientCpuUs;
        cpuKnown = cpuKnown && t.cpuUs >= 0;
        out.ownRefreshes += t.ownRefreshes;
        out.ownRefreshMs += t.ownRefreshMs;
        out.oldestExactShownS = std::max(out.oldestExactShownS, t.oldestExactShownS);
    }
    const ExactRow exactAfter = sharedExact(admin, spec.polled);
    out.sharedRefreshes = exactAfter.refreshes - exactBefore.refreshes;
    out.sharedLastCostMs = exactAfter.costMs;
    out.polls = static_cast<long long>(all.size());
    out.pollP50ms = percentileMs(all, 0.50);
    out.pollP95ms = percentileMs(all, 0.95);
    if (cpuKnown && out.polls + out.timeouts > 0)
        out.pollCpuMs = cpu / 1000.0 / static_cast<double>(out.polls + out.timeouts);
    if (out.polls + out.timeouts > 0)
        out.pollClientCpuMs = clientCpu / 1000.0 / static_cast<double>(out.polls + out.timeouts);
    return out;
}

} // namespace idem::bench::stats
