// One timed run: N threads, each on its own connection, released together, stopped together.
#include "bench/bench.h"
#include "bench/cpuclock.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <ctime>
#include <exception>
#include <fstream>
#include <latch>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/counters.h"

namespace idem::bench {

namespace {

    using Clock = std::chrono::steady_clock;

    struct ThreadTally {
        std::vector<std::uint32_t> latencyUs;
        long long executed = 0; // in the timed window
        long long replayed = 0;
        long long other = 0;
        long long executedTotal = 0; // warm-up included: what the tables must hold
        double clientCpuUs = 0; // this thread, timed window
        double serverCpuUs = -1; // its backend, timed window; -1 when not readable
    };

    std::string hotId(int i) { return std::string("hot-").append(std::to_string(i)); }

    // What each thread asks for next.
    class KeySource {
    public:
        KeySource(const RunSpec& spec, int thread)
            : m_spec(spec)
            , m_prefix(std::string("t").append(std::to_string(thread)).append("-"))
            , m_rng(0x1de3u + static_cast<unsigned>(thread))
        {
        }

        // The business id of the next request, and whether it is meant to be new.
        std::string next(bool& fresh)
        {
            fresh = false;
            if (m_spec.workload == Workload::Hot)
                return hotId(std::uniform_int_distribution<int>(0, m_spec.hotKeys - 1)(m_rng));
            if (m_spec.workload == Workload::Duplicates && !m_done.empty()
                && std::uniform_real_distribution<double>(0, 1)(m_rng) < m_spec.replayShare)
                return m_done[std::uniform_int_distribution<std::size_t>(0, m_done.size() - 1)(m_rng)];
            fresh = true;
            return m_prefix + std::to_string(m_seq++);
        }
        void completed(const std::string& id) { m_done.push_back(id); }

    private:
        const RunSpec& m_spec;
        std::string m_prefix;
        std::mt19937 m_rng;
        long long m_seq = 0;
        std::vector<std::string> m_done;
    };

    double percentileMs(std::vector<std::uint32_t>& v, double p)
    {
        if (v.empty())
            return 0;
        const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
        std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
        return static_cast<double>(v[k]) / 1000.0;
    }

    long long scalar(pqxx::connection& conn, const std::string& sql)
    {
        pqxx::read_transaction t(conn);
        return t.exec(sql)[0][0].as<long long>();
    }

} // namespace

RunResult runOnce(pqxx::connection& admin, const RunSpec& spec)
{
    resetTables(admin, spec.schema);
    ClientSetup setup { spec.mode, spec.schema, spec.digest, nullptr };

    long long seeded = 0;
    if (spec.workload == Workload::Hot) {
        // Every hot key succeeded once before the clock starts.
        auto conn = connect(spec.dsn, { "idem-bench seed" });
        OutcomeCounters seedCounters; // not flushed: the seeding is not part of the run
        ClientSetup seedSetup = setup;
        seedSetup.counters = &seedCounters;
        auto client = makeClient(*conn, seedSetup);
        for (int i = 0; i < spec.hotKeys; ++i)
            if (client->request(hotId(i)) == Outcome::Executed)
                ++seeded;
    }

    std::optional<OutcomeCounters> counters;
    std::optional<CounterFlusher> flusher;
    if (countsOutcomes(spec.mode)) {
        counters.emplace();
        flusher.emplace(spec.dsn, spec.schema, *counters, std::chrono::seconds(1));
        flusher->flushNow(); // connects now, not inside the timed window
        setup.counters = &*counters;
    }

    const int n = spec.connections;
    std::vector<ThreadTally> tallies(static_cast<std::size_t>(n));
    std::latch ready(n);
    std::atomic<bool> go { false };
    std::atomic<Clock::rep> deadline { 0 };
    std::mutex errorMutex;
    std::exception_ptr error;
    std::vector<Clock::time_point> finished(static_cast<std::size_t>(n));

    std::vector<std::thread> threads;
    for (int t = 0; t < n; ++t) {
        threads.emplace_back([&, t] {
            auto& tally = tallies[static_cast<std::size_t>(t)];
            bool arrived = false;
            try {
                auto conn = connect(spec.dsn, { "idem-bench" });
                const int backend = backendPid(*conn);
                auto client = makeClient(*conn, setup);
                KeySource keys(spec, t);
                for (int i = 0; i < spec.warmup; ++i) {
                    // Warm-up: the backend compiles the PL/pgSQL functions and caches plans.
                    bool fresh = false;
                    std::string id = keys.next(fresh);
                    if (spec.workload != Workload::Hot)
                        id = std::string("w").append(id); // keys of their own: never replayed in the window
                    if (client->request(id) == Outcome::Executed)
                        ++tally.executedTotal;
                }
                tally.latencyUs.reserve(1 << 16);
                arrived = true;
                ready.count_down();
                go.wait(false);
                const Clock::time_point end { Clock::duration(deadline.load()) };
                const double cpu0 = threadCpuUs(), server0 = backendCpuUs(backend);
                while (Clock::now() < end) {
                    bool fresh = false;
                    const std::string id = keys.next(fresh);
                    const auto t0 = Clock::now();
                    const Outcome o = client->request(id);
                    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
                    tally.latencyUs.push_back(static_cast<std::uint32_t>(us));
                    if (o == Outcome::Executed) {
                        ++tally.executed;
                        ++tally.executedTotal;
                        if (spec.workload == Workload::Duplicates)
                            keys.completed(id);
                    } else if (o == Outcome::Replayed) {
                        ++tally.replayed;
                    } else {
                        ++tally.other;
                    }
                }
                tally.clientCpuUs = threadCpuUs() - cpu0;
                const double server1 = backendCpuUs(backend);
                if (server0 >= 0 && server1 >= 0)
                    tally.serverCpuUs = server1 - server0;
            } catch (...) {
                std::lock_guard lock(errorMutex);
                if (!error)
                    error = std::current_exception();
            }
            finished[static_cast<std::size_t>(t)] = Clock::now();
            if (!arrived)
                ready.count_down();
        });
    }
    ready.wait();
    const auto start = Clock::now();
    deadline.store((start + spec.duration).time_since_epoch().count());
    go.store(true);
    go.notify_all();
    for (auto& th : threads)
        th.join();
    if (error)
        std::rethrow_exception(error);
    const auto last = *std::max_element(finished.begin(), finished.end());
    flusher.reset(); // its last flush, outside the window

    RunResult out;
    std::vector<std::uint32_t> all;
    long long executedTotal = seeded;
    double clientCpu = 0, serverCpu = 0;
    bool serverKnown = true;
    for (auto& tally : tallies) {
        clientCpu += tally.clientCpuUs;
        serverCpu += tally.serverCpuUs;
        serverKnown = serverKnown && tally.serverCpuUs >= 0;
        all.insert(all.end(), tally.latencyUs.begin(), tally.latencyUs.end());
        out.executed += tally.executed;
        out.replayed += tally.replayed;
        out.other += tally.other;
        executedTotal += tally.executedTotal;
    }
    out.requests = static_cast<long long>(all.size());
    const double seconds = std::chrono::duration<double>(last - start).count();
    out.perSecond = seconds > 0 ? static_cast<double>(out.requests) / seconds : 0;
    out.p50ms = percentileMs(all, 0.50);
    out.p99ms = percentileMs(all, 0.99);
    if (out.requests > 0) {
        out.clientCpuUs = clientCpu / static_cast<double>(out.requests);
        out.serverCpuUs = serverKnown ? serverCpu / static_cast<double>(out.requests) : -1;
    }

    // The tables must hold exactly one business effect per succeeded key and nothing else.
    const long long effects = scalar(admin, "SELECT count(*) FROM " + spec.schema.qualify("bench_effects"));
    const long long succeeded = scalar(
        admin, "SELECT count(*) FILTER (WHERE status = 'succeeded') FROM " + spec.schema.qualify("task_idempotency"));
    const long long rows = scalar(admin, "SELECT count(*) FROM " + spec.schema.qualify("task_idempotency"));
    if (out.other > 0)
        out.problem = std::to_string(out.other) + " unexpected outcomes";
    else if (effects != executedTotal || succeeded != executedTotal || rows != executedTotal)
        out.problem = "tables disagree: " + std::to_string(effects) + " effects, " + std::to_string(succeeded)
            + " succeeded of " + std::to_string(rows) + " rows, " + std::to_string(executedTotal) + " executed";
    if (countsOutcomes(spec.mode) && out.problem.empty()) {
        // Counters on: every request of this run (warm-up included) was counted and flushed.
        const long long counted = scalar(admin,
            "SELECT COALESCE(sum(n), 0) FROM " + spec.schema.qualify("idem_counters")
                + " WHERE outcome IN ('acquired', 'replayed')");
        const long long warmups = static_cast<long long>(n) * spec.warmup;
        if (counted != out.requests + warmups)
            out.problem = "counters hold " + std::to_string(counted) + " claims, expected "
                + std::to_string(out.requests + warmups);
    }
    return out;
}

} // namespace idem::bench
