// idem-bench-jobs (issue #28): claim throughput beside a running recovery job, in one process.
//
// A scratch schema of ROWS rows (succeeded, 1 % retryable) plus, per job phase, SET failed
// rows of a tenant of their own. Claim+complete on new keys at C connections (claim(), then
// complete() in one transaction, as a worker does) in phases of S seconds, alternated without a
// job / with a job running (ABAB..., so drift hits both alike): before each "with" phase a job
// requeueing its own set is started, and in the phase it runs (CALL idem_job_run, through
// runRecoveryJob) at each --duties beside the claims. Per phase: tasks/s, p99 and the longest claim, how often a claim backend was
// seen waiting on a lock (pg_stat_activity sampled every 5 ms), and the rows the job changed.
// Ratio = with / without: the median of the paired ratios, and the ratio of the medians. The
// control (--duties 0) says how far apart the two phases of a pair are with no job running.
//
// Usage: idem-bench-jobs --dsn DSN [--rows N] [--set N] [--connections C] [--seconds S]
//                        [--phases N] [--batch N] [--duties 1,0.25,0.1]
// (batch: default the runner's, JobLimits::defaultBatch; a duty of 0 is the control: the job is
// started before the "with" phase as for the others, and not run.)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/key.h"
#include "core/taskstore.h"
#include "operations/jobs.h"
#include "schema/migrate.h"

namespace {

using Clock = std::chrono::steady_clock;
using idem::SchemaName;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void exec(pqxx::connection& c, const std::string& sql)
{
    pqxx::nontransaction n(c);
    n.exec(sql);
}

struct Args {
    std::string dsn;
    long long rows = 1'000'000;
    long long set = 20'000;
    int connections = 4;
    double seconds = 8;
    int phases = 3;
    int batch = idem::JobLimits::defaultBatch;
    std::vector<double> duties { 1.0, 0.25, 0.1 };
};

const SchemaName schema("idem_jobsbench");

void populate(pqxx::connection& c, const Args& a, int sets)
{
    exec(c, "DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
    idem::migrate(c, { schema, false });
    const auto t0 = Clock::now();
    const long long step = 250'000;
    for (long long from = 0; from < a.rows; from += step) {
        pqxx::work w(c);
        w.exec_params("INSERT INTO " + schema.qualify("task_idempotency")
                + " (idempotency_key, request_hash, status, result_json, attempts, created_at, updated_at, error_class,"
                  "  next_attempt_at)"
                  " SELECT 'tenant-' || (i % 8) || ':charge:order-' || i, 'v1:' || md5(i::text) || md5((i + 1)::text),"
                  "        CASE WHEN i % 100 = 7 THEN 'retryable_failed' ELSE 'succeeded' END,"
                  "        CASE WHEN i % 100 = 7 THEN NULL ELSE jsonb_build_object('charged', 100, 'order', i) END, 1,"
                  "        now() - interval '1 day', now() - interval '1 day' + (i % 86400) * interval '1 second',"
                  "        CASE WHEN i % 100 = 7 THEN 'retryable' END,"
                  "        CASE WHEN i % 100 = 7 THEN now() + interval '1 hour' END"
                  "   FROM generate_series($1::bigint, $2::bigint - 1) i",
            from, std::min(a.rows, from + step));
        w.commit();
        std::fprintf(stderr, "populate: %lld rows (%.0f s)\n", std::min(a.rows, from + step), secondsSince(t0));
    }
    pqxx::work w(c);
    w.exec_params("INSERT INTO " + schema.qualify("task_idempotency")
            + " (idempotency_key, request_hash, status, attempts, max_attempts, error_class, error_message, created_at,"
              "  updated_at)"
              " SELECT 'jobset-' || s || ':charge:order-' || i, 'v1:' || repeat('c', 64), 'failed', 5, 5, 'retryable',"
              "        'gateway timeout', now() - interval '2 hours', now() - interval '1 hour'"
              "   FROM generate_series(1, $1::int) s, generate_series(1, $2::bigint) i",
        sets, a.set);
    w.commit();
    exec(c, "VACUUM (ANALYZE) " + schema.qualify("task_idempotency"));
    std::fprintf(stderr, "populate: done (%.0f s)\n", secondsSince(t0));
}

struct Phase {
    std::string label;
    double perSecond = 0;
    double p99ms = 0;
    double maxMs = 0;
    long long lockWaitSamples = 0;
    std::map<std::string, long long> lockWaits; // by wait_event (extend, transactionid, tuple, ...)
    long long samples = 0;
    long long changed = 0;
};

Phase claimPhase(const Args& a, const std::string& label, int round, const std::function<long long(std::atomic<bool>&)>& during)
{
    std::atomic<bool> stop { false };
    std::vector<std::vector<double>> lat(static_cast<std::size_t>(a.connections));
    std::vector<std::thread> threads;
    std::mutex err;
    std::string problem;
    for (int t = 0; t < a.connections; ++t)
        threads.emplace_back([&, t] {
            try {
                auto conn = idem::connect(a.dsn, { "bench claim" });
                idem::StoreOptions o;
                o.schema = schema;
                idem::TaskStore store(*conn, o);
                const std::string digest = "v1:" + std::string(64, 'b');
                for (long long n = 0; !stop.load(); ++n) {
                    const idem::TaskKey key("tenant-" + std::to_string(t), "charge",
                        "bench-" + label + "-" + std::to_string(round) + "-" + std::to_string(n));
                    const auto t0 = Clock::now();
                    const auto cl = store.claim(key, digest);
                    pqxx::work w(*conn);
                    store.complete(w, key, cl.token, "{\"ok\": true}");
                    w.commit();
                    lat[static_cast<std::size_t>(t)].push_back(secondsSince(t0) * 1000);
                }
            } catch (const std::exception& e) {
                std::lock_guard l(err);
                problem = e.what();
                stop = true;
            }
        });
    Phase p;
    p.label = label;
    std::atomic<long long> waits { 0 }, samples { 0 };
    std::thread sampler([&] {
        auto conn = idem::connect(a.dsn, { "bench sampler" });
        while (!stop.load()) {
            pqxx::nontransaction n(*conn);
            for (const auto& r : n.exec("SELECT wait_event FROM pg_stat_activity WHERE application_name = 'bench claim'"
                                        " AND wait_event_type = 'Lock'")) {
                ++waits;
                std::lock_guard l(err);
                ++p.lockWaits[r[0].as<std::string>()];
            }
            ++samples;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    });
    std::atomic<bool> stopDuring { false };
    std::thread side([&] { p.changed = during ? during(stopDuring) : 0; });
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(a.seconds));
    stop = true;
    for (auto& th : threads)
        th.join();
    const double elapsed = secondsSince(t0);
    stopDuring = true;
    side.join();
    sampler.join();
    if (!problem.empty())
        throw std::runtime_error("claim thread: " + problem);
    std::vector<double> all;
    for (auto& v : lat)
        all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    p.perSecond = static_cast<double>(all.size()) / elapsed;
    p.p99ms = all.empty() ? 0 : all[static_cast<std::size_t>(static_cast<double>(all.size() - 1) * 0.99)];
    p.maxMs = all.empty() ? 0 : all.back();
    p.lockWaitSamples = waits;
    p.samples = samples;
    return p;
}

void printPhase(const Phase& p)
{
    std::printf("  %-22s %8.0f tasks/s  p99 %6.2f ms  max %7.2f ms  lock-wait samples %lld/%lld  job changed %lld\n",
        p.label.c_str(), p.perSecond, p.p99ms, p.maxMs, p.lockWaitSamples, p.samples, p.changed);
    for (const auto& [event, n] : p.lockWaits)
        std::printf("    claim backends waiting on lock %s: %lld samples\n", event.c_str(), n);
    std::fflush(stdout);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    if (v.empty())
        return 0;
    const auto n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Args parse(int argc, char** argv)
{
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        const auto next = [&]() -> std::string {
            if (i + 1 >= argc)
                throw std::invalid_argument(k + " needs a value");
            return argv[++i];
        };
        if (k == "--dsn")
            a.dsn = next();
        else if (k == "--rows")
            a.rows = std::stoll(next());
        else if (k == "--set")
            a.set = std::stoll(next());
        else if (k == "--connections")
            a.connections = std::stoi(next());
        else if (k == "--seconds")
            a.seconds = std::stod(next());
        else if (k == "--phases")
            a.phases = std::stoi(next());
        else if (k == "--batch")
            a.batch = std::stoi(next());
        else if (k == "--duties") {
            a.duties.clear();
            const std::string v = next();
            for (std::size_t at = 0; at <= v.size();) {
                const auto comma = v.find(',', at);
                a.duties.push_back(std::stod(v.substr(at, comma == std::string::npos ? std::string::npos : comma - at)));
                if (comma == std::string::npos)
                    break;
                at = comma + 1;
            }
        } else
            throw std::invalid_argument("unknown option " + k);
    }
    if (a.dsn.empty())
        throw std::invalid_argument("--dsn is required");
    return a;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        const Args a = parse(argc, argv);
        const int sets = a.phases * static_cast<int>(a.duties.size());
        auto admin = idem::connect(a.dsn, { "bench admin" });
        populate(*admin, a, sets);
        std::printf("# idem-bench-jobs: %lld rows, %d sets of %lld failed rows, %d claim connections, %g s phases,"
                    " batch %d\n",
            a.rows, sets, a.set, a.connections, a.seconds, a.batch);
        int set = 0;
        for (const double duty : a.duties) {
            if (duty > 0)
                std::printf("\n## beside a job at duty %g\n", duty);
            else
                std::printf("\n## control: a job started before the phase, not run\n");
            std::vector<double> ratios, withs, withouts;
            for (int round = 0; round < a.phases; ++round) {
                const int phase = set + 1; // the keys of each phase are new: unique across duties and rounds
                const auto without = claimPhase(a, "without", phase, {});
                printPhase(without);
                // The job is started (its filter matched and its rows recorded) before the phase:
                // the phase measures the claims beside its batches alone.
                const auto started = [&] {
                    idem::JobRequest r;
                    r.filter.tenant = "jobset-" + std::to_string(++set);
                    r.cap = idem::JobLimits::maxCap;
                    r.reason = "bench";
                    return idem::startJob(*admin, schema, r);
                }();
                const auto job = [&a, duty, id = started.jobId](std::atomic<bool>& stopFlag) -> long long {
                    auto conn = idem::connect(a.dsn, { "bench job" });
                    idem::JobRunOptions o;
                    o.batch = a.batch;
                    o.duty = duty;
                    o.callSeconds = 1;
                    o.stop = &stopFlag;
                    return idem::runRecoveryJob(*conn, schema, id, o).changed;
                };
                const auto with = claimPhase(a, duty > 0 ? "with job" : "with idle job", phase,
                    duty > 0 ? std::function<long long(std::atomic<bool>&)>(job) : nullptr);
                printPhase(with);
                if (with.changed >= a.set)
                    std::printf("  (the job ended within the phase: raise --set)\n");
                ratios.push_back(with.perSecond / without.perSecond);
                withs.push_back(with.perSecond);
                withouts.push_back(without.perSecond);
            }
            std::printf("  with/without: median of the %d paired ratios %.3f, ratio of the medians %.3f\n", a.phases,
                median(ratios), median(withs) / median(withouts));
        }
        exec(*admin, "DROP SCHEMA " + schema.quoted() + " CASCADE");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "idem-bench-jobs: %s\n", e.what());
        return 1;
    }
}
