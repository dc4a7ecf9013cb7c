// idem-bench-purge (issue 16): the purge of succeeded keys past their horizon beside the claim
// path, on a scratch schema of ROWS rows of which DUE are succeeded past the charge horizon.
//
//   claim   claim+complete throughput at C connections (new keys: claim(), complete() in one
//           transaction each, as a worker does), in phases of S seconds in one run: without the
//           purge / with the purge running, alternated (ABAB...), so drift hits both alike; the
//           purge at each --duties (1: full speed; 0.2: batches at most a fifth of the time).
//           Per phase: tasks/s, p99
//           and the longest claim, and how often a claim backend was seen waiting on a lock
//           (pg_stat_activity sampled every 5 ms). Ratio = with / without.
//   index   claim+complete with and without task_idempotency_succeeded_idx (the purge's path),
//           alternated the same way.
//   size    table and index bytes before, after the purge, after VACUUM; rows/s purged.
//   year    a simulated year at a fixed rate with retention on (generated, not waited for):
//           each simulated day's completions are written with their completion times in the
//           past and the purge runs as it would on that day (the policy's horizon moved by the
//           days between that day and now, so the purge's cutoff is that day's cutoff); the
//           row count per day, which must stay flat within a day's traffic once past the horizon.
//
// Usage: idem-bench-purge --dsn DSN [--rows N] [--due N] [--connections C] [--seconds S]
//                         [--phases N] [--batch N] [--duties 1,0.2] [--year-per-day N]
//                         [--only claim,index,loop,size,year]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/key.h"
#include "schema/migrate.h"
#include "core/taskstore.h"
#include "operations/purge.h"

namespace {

using Clock = std::chrono::steady_clock;
using idem::SchemaName;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

long long scalar(pqxx::connection& c, const std::string& sql)
{
    pqxx::nontransaction n(c);
    return n.exec(sql)[0][0].as<long long>();
}

void exec(pqxx::connection& c, const std::string& sql)
{
    pqxx::nontransaction n(c);
    n.exec(sql);
}

struct Args {
    std::string dsn;
    long long rows = 1'000'000;
    long long due = 300'000;
    int connections = 4;
    double seconds = 8;
    int phases = 4;
    int batch = 1000;
    std::vector<double> duties { 1.0, 0.2 };
    int yearPerDay = 4000;
    std::string only = "claim,index,loop,size,year";
};

const SchemaName schema("idem_purgebench");

// ROWS rows: DUE succeeded charge rows completed 31..60 days ago, the rest succeeded within
// the horizons (charge 0..29 days, refund/ship 0..6 days) and 1 % unfinished. Indexes dropped
// and rebuilt around the load.
void populate(pqxx::connection& c, const Args& a)
{
    exec(c, "DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
    idem::migrate(c, { schema, false });
    const auto t0 = Clock::now();
    std::vector<std::string> defs;
    {
        pqxx::work w(c);
        for (const auto& r : w.exec_params("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1"
                                           " AND tablename = 'task_idempotency' AND indexname <> 'task_idempotency_pkey'",
                 schema.name())) {
            defs.push_back(r[1].as<std::string>());
            w.exec("DROP INDEX " + schema.qualify(w.quote_name(r[0].as<std::string>())));
        }
        w.exec("ALTER TABLE " + schema.qualify("task_idempotency") + " DROP CONSTRAINT task_idempotency_pkey");
        w.commit();
    }
    const long long step = 250'000;
    for (long long from = 0; from < a.rows; from += step) {
        pqxx::work w(c);
        w.exec_params("INSERT INTO " + schema.qualify("task_idempotency")
                + " (idempotency_key, request_hash, status, result_json, attempts, created_at, updated_at, error_class,"
                  "  next_attempt_at)"
                  " SELECT 'tenant-' || (i % 8) || ':' || CASE WHEN i < $3 OR i % 3 = 0 THEN 'charge' WHEN i % 3 = 1"
                  "        THEN 'refund' ELSE 'ship' END || ':order-' || i, 'v1:' || md5(i::text) || md5((i + 1)::text),"
                  "        CASE WHEN i >= $3 AND i % 100 = 7 THEN 'retryable_failed' ELSE 'succeeded' END,"
                  "        CASE WHEN i >= $3 AND i % 100 = 7 THEN NULL"
                  "             ELSE jsonb_build_object('charged', 100, 'currency', 'EUR', 'order', i) END, 1,"
                  "        u - interval '2 seconds', u,"
                  "        CASE WHEN i >= $3 AND i % 100 = 7 THEN 'retryable' END,"
                  "        CASE WHEN i >= $3 AND i % 100 = 7 THEN now() + interval '1 hour' END"
                  "   FROM (SELECT i, now() - CASE WHEN i < $3 THEN interval '31 days' + (i % 29) * interval '1 day'"
                  "                                WHEN i % 3 = 0 THEN (i % 29) * interval '1 day'"
                  "                                ELSE (i % 6) * interval '1 day' END"
                  "                     - (i % 86400) * interval '1 second' AS u"
                  "           FROM generate_series($1::bigint, $2::bigint - 1) i) g",
            from, std::min(a.rows, from + step), a.due);
        w.commit();
        std::fprintf(stderr, "populate: %lld rows (%.0f s)\n", std::min(a.rows, from + step), secondsSince(t0));
    }
    {
        pqxx::work w(c);
        w.exec("ALTER TABLE " + schema.qualify("task_idempotency") + " ADD PRIMARY KEY (idempotency_key)");
        for (const auto& d : defs)
            w.exec(d);
        w.commit();
    }
    exec(c, "VACUUM (ANALYZE) " + schema.qualify("task_idempotency"));
    std::fprintf(stderr, "populate: done, indexes rebuilt, vacuumed (%.0f s)\n", secondsSince(t0));
}

struct Phase {
    std::string label;
    double perSecond = 0;
    double p99ms = 0;
    double maxMs = 0;
    long long lockWaitSamples = 0; // a claim backend seen in wait_event_type Lock
    std::map<std::string, long long> lockWaits; // by wait_event (extend, transactionid, tuple, ...)
    long long samples = 0;
    long long purged = 0;
};

// C threads of claim+complete on new keys for `seconds`; `during` runs beside them (on its own
// thread) until they stop.
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
    std::thread side([&] { p.purged = during ? during(stopDuring) : 0; });
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
    std::printf("  %-26s %8.0f tasks/s  p99 %6.2f ms  max %7.2f ms  lock-wait samples %lld/%lld  purged %lld\n",
        p.label.c_str(), p.perSecond, p.p99ms, p.maxMs, p.lockWaitSamples, p.samples, p.purged);
    for (const auto& [event, n] : p.lockWaits)
        std::printf("    claim backends waiting on lock %s: %lld samples\n", event.c_str(), n);
    std::fflush(stdout);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

void sizes(pqxx::connection& c, const char* when)
{
    pqxx::nontransaction n(c);
    const auto r = n.exec_params("SELECT pg_table_size($1::regclass), pg_indexes_size($1::regclass),"
                                 " (SELECT count(*) FROM " + schema.qualify("task_idempotency") + ")",
        schema.qualify("task_idempotency"));
    std::printf("  %-34s table %8.1f MB  indexes %8.1f MB  rows %lld\n", when, r[0][0].as<double>() / 1048576,
        r[0][1].as<double>() / 1048576, r[0][2].as<long long>());
    std::fflush(stdout);
}

void claimSection(pqxx::connection& admin, const Args& a)
{
    std::printf("\n## claim+complete at %d connections beside the purge (%g s phases)\n", a.connections, a.seconds);
    const auto purge = [&](double duty) {
        return [&a, duty](std::atomic<bool>& stopFlag) -> long long {
            auto conn = idem::connect(a.dsn, { "bench purge" });
            idem::PurgeOptions o;
            o.batch = a.batch;
            o.duty = duty;
            o.stop = &stopFlag;
            o.reason = "bench";
            const auto r = idem::runPurge(*conn, schema, o);
            std::printf("    purge: %lld rows in %.1f s (%.0f rows/s, longest batch %.1f ms)%s\n",
                static_cast<long long>(r.rowsRemoved), r.durationMs / 1000,
                static_cast<double>(r.rowsRemoved) / std::max(r.durationMs / 1000, 1e-9), r.longestBatchMs,
                r.stoppedByTime ? "" : "; the backlog ran out before the phase ended");
            return r.rowsRemoved;
        };
    };
    // Before each pair of phases the backlog is topped up to DUE rows, so each purge phase has
    // the same work and each baseline the same table.
    const auto topUp = [&](int round) {
        const long long have = scalar(admin, "SELECT count(*) FROM " + schema.qualify("task_idempotency")
                + " WHERE split_part(idempotency_key, ':', 2) = 'charge' AND status = 'succeeded'"
                  " AND updated_at < now() - interval '30 days'");
        pqxx::work w(admin);
        w.exec_params("INSERT INTO " + schema.qualify("task_idempotency")
                + " (idempotency_key, request_hash, status, result_json, attempts, created_at, updated_at)"
                  " SELECT 'tenant-' || (i % 8) || ':charge:refill-' || $1 || '-' || i, 'v1:' || md5(i::text),"
                  "        'succeeded', jsonb_build_object('charged', 100, 'order', i), 1, u - interval '2 seconds', u"
                  "   FROM (SELECT i, now() - interval '31 days' - (i % 29) * interval '1 day'"
                  "                   - (i % 86400) * interval '1 second' AS u"
                  "           FROM generate_series(1, $2::bigint) i) g",
            round, std::max(0LL, a.due - have));
        w.commit();
        exec(admin, "VACUUM (ANALYZE) " + schema.qualify("task_idempotency"));
    };
    for (const double duty : a.duties) {
        const int tag = static_cast<int>(duty * 100);
        char label[64];
        std::snprintf(label, sizeof label, "with purge, duty %.2f", duty);
        std::vector<double> without, with;
        for (int i = 0; i < a.phases; ++i) {
            topUp(tag * 1000 + i);
            const auto base = claimPhase(a, "without purge", tag * 1000 + i, {});
            printPhase(base);
            without.push_back(base.perSecond);
            auto p = claimPhase(a, label, tag * 1000 + i, purge(duty));
            printPhase(p);
            with.push_back(p.perSecond);
        }
        std::printf("  ratio (duty %.2f): median with / median without = %.0f / %.0f = %.2f (target >= 0.90)\n", duty,
            median(with), median(without), median(with) / median(without));
    }
}

void indexSection(pqxx::connection& admin, const Args& a)
{
    std::printf("\n## claim+complete with and without task_idempotency_succeeded_idx (%g s phases)\n", a.seconds);
    std::vector<double> with, without;
    for (int i = 0; i < a.phases; ++i) {
        exec(admin, "DROP INDEX IF EXISTS " + schema.qualify("task_idempotency_succeeded_idx"));
        auto p = claimPhase(a, "without the index", 100 + i, {});
        printPhase(p);
        without.push_back(p.perSecond);
        exec(admin, "CREATE INDEX task_idempotency_succeeded_idx ON " + schema.qualify("task_idempotency")
                + " (split_part(idempotency_key, ':', 2), updated_at) WHERE status = 'succeeded'");
        p = claimPhase(a, "with the index", 100 + i, {});
        printPhase(p);
        with.push_back(p.perSecond);
    }
    std::printf("  ratio: median with / median without = %.0f / %.0f = %.3f\n", median(with), median(without),
        median(with) / median(without));
}

// claim + complete of new keys in a PL/pgSQL loop inside one backend, timed there: the cost per
// task without the client, the network and the other connections' noise.
double serverLoopUs(pqxx::connection& admin, int tasks, int round)
{
    pqxx::work w(admin);
    const auto r = w.exec_params("SELECT " + schema.qualify("bench_loop") + "($1, $2)", tasks, round);
    w.commit();
    return r[0][0].as<double>();
}

void loopSection(pqxx::connection& admin, const Args& a)
{
    std::printf("\n## claim+complete in a server-side loop, with and without task_idempotency_succeeded_idx\n");
    exec(admin, "CREATE OR REPLACE FUNCTION " + schema.qualify("bench_loop") + R"((p_n integer, p_round integer)
RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp(); v_token uuid;
BEGIN
    FOR i IN 1..p_n LOOP
        v_token := gen_random_uuid();
        PERFORM )" + schema.qualify("claim") + R"(('loop:charge:' || p_round || '-' || i, 'v1:x', v_token, 30000);
        PERFORM )" + schema.qualify("complete") + R"(('loop:charge:' || p_round || '-' || i, v_token, '{"ok": true}'::jsonb);
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1e6 / p_n;
END $$)");
    std::vector<double> with, without, diff;
    const auto drop = [&] { exec(admin, "DROP INDEX IF EXISTS " + schema.qualify("task_idempotency_succeeded_idx")); };
    const auto create = [&] {
        exec(admin, "CREATE INDEX IF NOT EXISTS task_idempotency_succeeded_idx ON " + schema.qualify("task_idempotency")
                + " (split_part(idempotency_key, ':', 2), updated_at) WHERE status = 'succeeded'");
    };
    // ABBA: the order alternates, so the table's growth and the machine's drift favour neither.
    for (int i = 0; i < a.phases * 2; ++i) {
        double w = 0, wo = 0;
        if (i % 2 == 0) {
            drop();
            wo = serverLoopUs(admin, 5000, 2 * i);
            create();
            w = serverLoopUs(admin, 5000, 2 * i + 1);
        } else {
            create();
            w = serverLoopUs(admin, 5000, 2 * i + 1);
            drop();
            wo = serverLoopUs(admin, 5000, 2 * i);
        }
        with.push_back(w);
        without.push_back(wo);
        diff.push_back(w - wo);
        std::printf("  round %d (%s first): without %.1f us/task, with %.1f us/task\n", i, i % 2 == 0 ? "without" : "with", wo, w);
        std::fflush(stdout);
    }
    create();
    std::printf("  median: without %.1f us, with %.1f us per task; median of the paired differences %+.1f us\n",
        median(without), median(with), median(diff));
}

void sizeSection(pqxx::connection& admin, const Args& a)
{
    std::printf("\n## purge alone (full speed): rows/s, sizes\n");
    sizes(admin, "before the purge");
    auto conn = idem::connect(a.dsn, { "bench purge" });
    idem::PurgeOptions o;
    o.batch = a.batch;
    o.reason = "bench";
    o.duty = 1;
    const auto r = idem::runPurge(*conn, schema, o);
    std::printf("  purged %lld rows in %lld batches, %.1f s: %.0f rows/s, longest batch %.1f ms\n",
        static_cast<long long>(r.rowsRemoved), static_cast<long long>(r.batches), r.durationMs / 1000,
        static_cast<double>(r.rowsRemoved) / (r.durationMs / 1000), r.longestBatchMs);
    sizes(admin, "after the purge");
    const auto t0 = Clock::now();
    exec(admin, "VACUUM " + schema.qualify("task_idempotency"));
    std::printf("  VACUUM took %.1f s\n", secondsSince(t0));
    sizes(admin, "after VACUUM (space reusable)");
}

// The simulated year: see the header comment.
void yearSection(pqxx::connection& admin, const Args& a)
{
    std::printf("\n## simulated year: %d completions a day (half charge 30 d, half ship 7 d), purge daily\n", a.yearPerDay);
    exec(admin, "DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
    idem::migrate(admin, { schema, false });
    exec(admin, "VACUUM " + schema.qualify("task_idempotency"));
    auto conn = idem::connect(a.dsn, { "bench purge" });
    long long minAfter = -1, maxAfter = 0;
    for (int day = 0; day < 365; ++day) {
        const int back = 365 - day; // that day is `back` days before now
        {
            pqxx::work w(admin);
            w.exec_params("INSERT INTO " + schema.qualify("task_idempotency")
                    + " (idempotency_key, request_hash, status, result_json, attempts, created_at, updated_at)"
                      " SELECT 't:' || CASE WHEN i % 2 = 0 THEN 'charge' ELSE 'ship' END || ':d' || $1 || '-' || i,"
                      "        'v1:' || md5(i::text), 'succeeded', '{\"ok\": true}', 1, u, u"
                      "   FROM (SELECT i, now() - $2 * interval '1 day' + (i::float8 / $3) * interval '1 day' AS u"
                      "           FROM generate_series(0, $3 - 1) i) g",
                day, back, a.yearPerDay);
            // The purge as of the end of that day: horizons moved back by the days since.
            w.exec_params("UPDATE " + schema.qualify("idem_retention_policy")
                    + " SET horizon = (CASE operation WHEN 'charge' THEN 30 ELSE 7 END + $1 - 1) * 86400 * interval '1 second'",
                back);
            w.commit();
        }
        idem::PurgeOptions o;
        o.batch = a.batch;
        o.reason = "simulated day " + std::to_string(day);
        o.duty = 1;
        idem::runPurge(*conn, schema, o);
        // A real day holds hundreds of autovacuum naps; the simulated one lasts a second.
        exec(admin, "VACUUM " + schema.qualify("task_idempotency"));
        const long long rows = scalar(admin, "SELECT count(*) FROM " + schema.qualify("task_idempotency"));
        if (day >= 31) {
            minAfter = minAfter < 0 ? rows : std::min(minAfter, rows);
            maxAfter = std::max(maxAfter, rows);
        }
        if (day % 30 == 0 || day == 364) {
            pqxx::nontransaction n(admin);
            const auto s = n.exec_params("SELECT pg_table_size($1::regclass), pg_indexes_size($1::regclass)",
                schema.qualify("task_idempotency"));
            std::printf("  day %3d: %8lld rows  table %6.1f MB  indexes %6.1f MB\n", day, rows,
                s[0][0].as<double>() / 1048576, s[0][1].as<double>() / 1048576);
            std::fflush(stdout);
        }
    }
    std::printf("  days 31..364: rows between %lld and %lld (spread %lld, one day's traffic %d; expected ~%d)\n", minAfter,
        maxAfter, maxAfter - minAfter, a.yearPerDay, a.yearPerDay / 2 * 30 + a.yearPerDay / 2 * 7);
    exec(admin, "UPDATE " + schema.qualify("idem_retention_policy")
            + " SET horizon = CASE operation WHEN 'charge' THEN 30 ELSE 7 END * 86400 * interval '1 second'");
}

} // namespace

int main(int argc, char** argv)
{
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--dsn")
            a.dsn = v;
        else if (k == "--rows")
            a.rows = std::stoll(v);
        else if (k == "--due")
            a.due = std::stoll(v);
        else if (k == "--connections")
            a.connections = std::stoi(v);
        else if (k == "--seconds")
            a.seconds = std::stod(v);
        else if (k == "--phases")
            a.phases = std::stoi(v);
        else if (k == "--batch")
            a.batch = std::stoi(v);
        else if (k == "--duties") {
            a.duties.clear();
            for (std::size_t at = 0; at < v.size();) {
                const auto comma = v.find(',', at);
                a.duties.push_back(std::stod(v.substr(at, comma - at)));
                at = comma == std::string::npos ? v.size() : comma + 1;
            }
        }
        else if (k == "--year-per-day")
            a.yearPerDay = std::stoi(v);
        else if (k == "--only")
            a.only = v;
        else {
            std::fprintf(stderr, "unknown option %s\n", k.c_str());
            return 2;
        }
    }
    try {
        auto admin = idem::connect(a.dsn, { "bench admin" });
        const auto want = [&](const char* s) { return a.only.find(s) != std::string::npos; };
        std::printf("# idem-bench-purge: %lld rows, %lld due, batch %d\n", a.rows, a.due, a.batch);
        if (want("claim") || want("size") || want("index") || want("loop"))
            populate(*admin, a);
        if (want("loop"))
            loopSection(*admin, a);
        if (want("index"))
            indexSection(*admin, a);
        if (want("claim"))
            claimSection(*admin, a);
        if (want("size")) {
            if (want("claim"))
                populate(*admin, a);
            sizeSection(*admin, a);
        }
        if (want("year"))
            yearSection(*admin, a);
        exec(*admin, "DROP SCHEMA " + schema.quoted() + " CASCADE");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "idem-bench-purge: %s\n", e.what());
        return 1;
    }
    return 0;
}
