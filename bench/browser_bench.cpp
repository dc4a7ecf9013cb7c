// idem-bench-browser: the task browser's reads and the console's bulk action at scale.
//
//  1. Page fetch time through operations/tasklist (keyset) for the first, middle and last page of a
//     table of --rows records (default 10M), sorted by key over every status and by update
//     time over the unfinished ones, and under four filters (a tenant and operation, expired
//     leases, the error text, the last hour); and, as the baseline in the same run, OFFSET
//     paging to the same positions.
//  2. A bulk requeue of --bulk keys (default 10,000) driven through the console's
//     BulkActionModel on a ConsoleSession (the worker thread), timed, while a 1 ms QTimer
//     probes the UI event loop's longest stall; the baseline is idem_operations' applyBulk on the same
//     connection type without Qt, and the probe's stall on an idle loop.
//  3. claim() cost of migration 0005 (conflict record) against the v2 body in the same run.
//
// Usage: idem-bench-browser --dsn DSN [--rows N] [--bulk N] [--reps N] [--reuse] [--keep]
//                           [--only pages|bulk|claim] [--claim-seconds S] [--claim-rounds N]
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "operations/actions.h"
#include "core/connection.h"
#include "schema/migrate.h"
#include "operations/tasklist.h"
#include "embedded_sql.h"
#include "models/bulkaction.h"
#include "models/consolesession.h"

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

struct Args {
    std::string dsn;
    long long rows = 10'000'000;
    int bulk = 10'000;
    int reps = 15;
    bool reuse = false;
    bool keep = false;
    int claimSeconds = 4;
    int claimRounds = 2;
    std::string only; // pages, bulk, claim: run just that part
};

const idem::SchemaName schema("idem_browserbench");

long long count(pqxx::connection& c, const std::string& sql)
{
    pqxx::read_transaction t(c);
    return t.exec(sql)[0][0].as<long long>();
}

void populate(pqxx::connection& c, const Args& a)
{
    const auto table = schema.qualify("task_idempotency");
    if (a.reuse) {
        pqxx::read_transaction t(c);
        const bool exists = t.exec_params("SELECT to_regclass($1) IS NOT NULL", table)[0][0].as<bool>();
        t.commit();
        if (exists
            && count(c, "SELECT count(*) FROM " + table + " WHERE idempotency_key NOT LIKE 'cost:%'") == a.rows) {
            std::cerr << "reusing " << a.rows << " rows in " << schema.name() << "\n";
            return;
        }
    }
    {
        pqxx::work w(c);
        w.exec("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
        w.commit();
    }
    idem::migrate(c, { schema, false });
    // 1 % processing (half of them with an expired lease), 1 % retryable, 1 % failed, the rest
    // succeeded; keys tenant-T:op-O:order-N; updated_at spread over a day with ties.
    const long long chunk = 1'000'000;
    for (long long from = 1; from <= a.rows; from += chunk) {
        const long long to = std::min(a.rows, from + chunk - 1);
        const auto start = Clock::now();
        pqxx::work w(c);
        w.exec_params("INSERT INTO " + table
                + " (idempotency_key, request_hash, status, attempts, max_attempts, error_class, owner_token,"
                  " lease_until, result_json, created_at, updated_at)"
                  " SELECT 'tenant-' || (i % 50) || ':op-' || (i % 7) || ':order-' || lpad(i::text, 9, '0'),"
                  "        'v1:' || md5(i::text) || md5(i::text),"
                  "        CASE i % 100 WHEN 0 THEN 'processing' WHEN 1 THEN 'retryable_failed'"
                  "                     WHEN 2 THEN 'failed' ELSE 'succeeded' END,"
                  "        1 + i % 5, 5,"
                  "        CASE i % 100 WHEN 1 THEN 'retryable' WHEN 2 THEN 'permanent' END,"
                  "        CASE WHEN i % 100 = 0 THEN gen_random_uuid() END,"
                  "        CASE WHEN i % 100 = 0 THEN now() + (CASE WHEN i % 200 = 0 THEN -1 ELSE 1 END) * interval '5 "
                  "min' END,"
                  "        CASE WHEN i % 100 > 2 THEN jsonb_build_object('receipt', i) END,"
                  "        now() - interval '1 day' + (i % 86400) * interval '1 second',"
                  "        now() - interval '1 day' + (i % 86400) * interval '1 second'"
                  " FROM generate_series($1::bigint, $2::bigint) i",
            from, to);
        w.commit();
        std::cerr << "  rows " << to << " (" << static_cast<int>(msSince(start)) << " ms)\n";
    }
    pqxx::nontransaction n(c);
    n.exec("VACUUM ANALYZE " + table);
}

std::string keyAtRank(pqxx::connection& c, const std::string& where, const std::string& order, long long rank)
{
    pqxx::read_transaction t(c);
    const auto r = t.exec_params("SELECT idempotency_key, " + idem::updatedAtMicrosSql("updated_at") + " FROM "
            + schema.qualify("task_idempotency") + " WHERE " + where + " ORDER BY " + order + " OFFSET $1 LIMIT 1",
        rank);
    return r[0][0].as<std::string>() + '\x1f' + r[0][1].as<std::string>();
}

void pageFetches(pqxx::connection& c, const Args& a)
{
    struct Case {
        const char* name;
        idem::TaskFilter filter;
        idem::TaskSort sort;
        std::string where, order;
    };
    idem::TaskFilter unfinished;
    unfinished.statuses = { "processing", "retryable_failed", "failed" };
    // Filters whose predicates take other indexes or plans: a key prefix, a lease, the error
    // text, a minute window.
    idem::TaskFilter tenantOp;
    tenantOp.tenant = "tenant-7";
    tenantOp.operation = "op-3";
    idem::TaskFilter expired;
    expired.expiredLease = true;
    idem::TaskFilter errorText;
    errorText.statuses = { "failed" };
    errorText.errorContains = "timeout";
    idem::TaskFilter lastHour = unfinished;
    lastHour.updatedWithinMinutes = 60;
    const std::vector<Case> cases = {
        { "key, all statuses", {}, { idem::TaskSortColumn::Key, false }, "true", "idempotency_key" },
        { "updated_at, unfinished", unfinished, { idem::TaskSortColumn::UpdatedAt, false }, "status <> 'succeeded'",
            "updated_at, idempotency_key" },
        { "key, tenant and operation", tenantOp, { idem::TaskSortColumn::Key, false },
            "idempotency_key LIKE 'tenant-7:op-3:%'", "idempotency_key" },
        { "updated_at, expired lease", expired, { idem::TaskSortColumn::UpdatedAt, false },
            "status = 'processing' AND (lease_until IS NULL OR lease_until <= now())", "updated_at, idempotency_key" },
        { "updated_at, failed with error text", errorText, { idem::TaskSortColumn::UpdatedAt, false },
            "status = 'failed' AND error_message ILIKE '%timeout%'", "updated_at, idempotency_key" },
        { "updated_at, unfinished in the last hour", lastHour, { idem::TaskSortColumn::UpdatedAt, false },
            "status <> 'succeeded' AND updated_at >= date_trunc('minute', now()) - interval '59 minutes'",
            "updated_at, idempotency_key" },
    };
    const int limit = 200;
    std::printf("\n## Page fetch (%d rows per page), %lld rows, median of %d (OFFSET past the first page: of 3)\n\n",
        limit, a.rows, a.reps);
    std::printf("| sort | position | keyset ms | OFFSET ms | OFFSET / keyset |\n|---|---|---|---|---|\n");
    for (const auto& cs : cases) {
        const long long n
            = count(c, "SELECT count(*) FROM " + schema.qualify("task_idempotency") + " WHERE " + cs.where);
        const std::pair<const char*, long long> positions[]
            = { { "first", 0 }, { "middle", n / 2 }, { "last", std::max(0LL, n - limit) } };
        for (const auto& [pos, rank] : positions) {
            std::optional<idem::TaskCursor> after;
            if (rank > 0) {
                const auto kv = keyAtRank(c, cs.where, cs.order, rank - 1);
                const auto sep = kv.find('\x1f');
                after = idem::TaskCursor { std::stoll(kv.substr(sep + 1)), kv.substr(0, sep) };
            }
            std::vector<double> keyset, offset;
            std::string firstKeyset, firstOffset;
            for (int i = 0; i < a.reps; ++i) {
                auto t0 = Clock::now();
                const auto page = idem::listTasks(c, schema, cs.filter, cs.sort, after, limit);
                keyset.push_back(msSince(t0));
                firstKeyset = page.rows.empty() ? "" : page.rows.front().key;
                // OFFSET deep in the table reads every row before it: a few runs say enough.
                if (i >= 3 && rank > 0)
                    continue;
                t0 = Clock::now();
                pqxx::read_transaction t(c);
                const auto r = t.exec_params("SELECT idempotency_key, status, attempts, max_attempts, updated_at,"
                                             " lease_until, next_attempt_at, error_class, left(error_message, 300),"
                                             " request_hash FROM "
                        + schema.qualify("task_idempotency") + " WHERE " + cs.where + " ORDER BY " + cs.order
                        + " OFFSET $1 LIMIT $2",
                    rank, limit);
                t.commit();
                offset.push_back(msSince(t0));
                firstOffset = r.empty() ? "" : r[0][0].as<std::string>();
            }
            if (firstKeyset != firstOffset)
                std::printf(
                    "(!) keyset and OFFSET disagree at %s: %s vs %s\n", pos, firstKeyset.c_str(), firstOffset.c_str());
            const double k = median(keyset), o = median(offset);
            std::printf("| %s | %s (row %lld of %lld) | %.2f | %.2f | %.2f |\n", cs.name, pos, rank, n, k, o, o / k);
            std::fflush(stdout);
        }
    }
}

std::vector<idem::RowVersion> failedVersions(pqxx::connection& c, int n, int skip)
{
    pqxx::read_transaction t(c);
    std::vector<idem::RowVersion> out;
    for (const auto& r : t.exec_params("SELECT idempotency_key, status, " + idem::updatedAtMicrosSql("updated_at")
                 + " FROM " + schema.qualify("task_idempotency")
                 + " WHERE status = 'failed' ORDER BY idempotency_key OFFSET $1 LIMIT $2",
             skip, n))
        out.push_back({ r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::int64_t>() });
    return out;
}

// The longest gap between 1 ms timer ticks while `until` is false (the event loop runs).
struct StallProbe {
    QTimer timer;
    QElapsedTimer clock;
    qint64 last = 0;
    qint64 longest = 0;
    std::vector<qint64> gaps;
    StallProbe()
    {
        timer.setInterval(1);
        timer.setTimerType(Qt::PreciseTimer);
        QObject::connect(&timer, &QTimer::timeout, [this] {
            const auto now = clock.nsecsElapsed();
            const auto gap = now - last;
            last = now;
            longest = std::max(longest, gap);
            gaps.push_back(gap);
        });
    }
    void start()
    {
        clock.start();
        last = 0;
        longest = 0;
        gaps.clear();
        timer.start();
    }
    double p99Ms()
    {
        if (gaps.empty())
            return 0;
        std::sort(gaps.begin(), gaps.end());
        return static_cast<double>(gaps[gaps.size() * 99 / 100]) / 1e6;
    }
};

void bulkRequeue(pqxx::connection& c, const Args& a)
{
    idem::console::ConsoleSession session;
    idem::console::ConnectionSettings settings;
    settings.conninfo = QString::fromStdString(a.dsn);
    settings.schema = QString::fromStdString(schema.name());
    session.connectTo(settings);
    QEventLoop loop;
    QTimer::singleShot(30000, &loop, &QEventLoop::quit);
    QObject::connect(&session, &idem::console::ConsoleSession::stateChanged, &loop, [&] {
        if (session.state() == idem::console::ConsoleSession::State::Connected)
            loop.quit();
    });
    loop.exec();
    if (session.state() != idem::console::ConsoleSession::State::Connected)
        throw std::runtime_error("the console session did not connect");

    StallProbe probe;
    probe.start();
    QTimer::singleShot(2000, &loop, &QEventLoop::quit);
    loop.exec();
    const double idleLongest = static_cast<double>(probe.longest) / 1e6, idleP99 = probe.p99Ms();

    const auto versions = failedVersions(c, a.bulk, 0);
    idem::ActionOptions options;
    options.reason = "bench: bulk requeue";
    idem::console::BulkActionModel model;
    QObject::connect(&model, &idem::console::BulkActionModel::finished, &loop, &QEventLoop::quit);
    probe.start();
    const auto t0 = Clock::now();
    model.start(&session, idem::RecoveryAction::Requeue, versions, options);
    loop.exec();
    const double consoleMs = msSince(t0);
    probe.timer.stop();
    const double busyLongest = static_cast<double>(probe.longest) / 1e6, busyP99 = probe.p99Ms();
    const int applied = model.count(idem::ActionOutcome::Applied);

    // Baseline: the same action through idem_operations alone, on other keys.
    const auto others = failedVersions(c, a.bulk, a.bulk);
    const auto t1 = Clock::now();
    const auto results = idem::applyBulk(c, schema, idem::RecoveryAction::Requeue, others, options);
    const double coreMs = msSince(t1);
    const auto coreApplied = std::count_if(results.begin(), results.end(),
        [](const idem::ActionResult& r) { return r.outcome == idem::ActionOutcome::Applied; });

    std::printf("\n## Bulk requeue of %d keys\n\n", a.bulk);
    std::printf("| path | applied | time s | keys/s | event loop longest stall ms | p99 tick gap ms |\n"
                "|---|---|---|---|---|---|\n");
    std::printf("| console BulkActionModel (worker thread, chunks of %d) | %d | %.1f | %.0f | %.1f | %.1f |\n",
        idem::console::BulkActionModel::chunkSize, applied, consoleMs / 1000, applied / (consoleMs / 1000), busyLongest,
        busyP99);
    std::printf("| baseline: core applyBulk, no Qt | %ld | %.1f | %.0f | – | – |\n", static_cast<long>(coreApplied),
        coreMs / 1000, static_cast<double>(coreApplied) / (coreMs / 1000));
    std::printf("| baseline: idle event loop, 2 s | – | – | – | %.1f | %.1f |\n", idleLongest, idleP99);
    std::printf("\nconsole / core time: %.2f\n", consoleMs / coreMs);
}

// claim() as 0005 ships it against the v2 body (installed here as claim_v2 from the bundled
// 0002 text), one connection each, alternating, for new keys and for digest conflicts.
void claimCost(pqxx::connection& c, const Args& a)
{
    std::string v2;
    for (const auto& m : idem::sql::embeddedMigrations())
        if (m.version == 2)
            v2 = m.text;
    const auto begin = v2.find("CREATE FUNCTION claim(");
    const auto end = v2.find("$claim$;", begin);
    std::string body = v2.substr(begin, end + 8 - begin);
    body.replace(0, std::string("CREATE FUNCTION claim(").size(), "CREATE OR REPLACE FUNCTION claim_v2(");
    {
        pqxx::work w(c);
        w.exec("SET LOCAL search_path = " + schema.quoted() + ", pg_temp");
        w.exec(body);
        w.commit();
    }
    std::printf("\n## claim() cost: 0005 (records conflicts per key) vs the v2 body, %d rounds of %.1f s each, 1 "
                "connection\n\n",
        a.claimRounds, a.claimSeconds / 2.0);
    std::printf("| workload | v2 claims/s | 0005 claims/s | 0005 / v2 |\n|---|---|---|---|\n");
    for (const char* workload : { "new keys", "digest conflicts" }) {
        double rate[2] = { 0, 0 };
        for (int round = 0; round < a.claimRounds; ++round) {
            for (int step = 0; step < 2; ++step) {
                const int f = (round + step) % 2; // alternate which body goes first
                const std::string fn = f == 0 ? "claim_v2" : "claim";
                const bool conflicts = std::string(workload) == "digest conflicts";
                long long n = 0;
                const auto t0 = Clock::now();
                const auto until = t0 + std::chrono::milliseconds(a.claimSeconds * 500);
                while (Clock::now() < until) {
                    const std::string key = conflicts
                        ? "cost:conflict:" + std::to_string(n % 1000)
                        : "cost:" + fn + ":" + std::to_string(round) + ":" + std::to_string(n);
                    pqxx::nontransaction t(c);
                    t.exec_params("SELECT decision FROM " + schema.qualify(fn) + "($1, $2, gen_random_uuid(), 30000)",
                        key, conflicts ? "v1:" + std::to_string(n) : std::string("v1:same"));
                    ++n;
                }
                rate[f] += static_cast<double>(n) / (msSince(t0) / 1000);
            }
        }
        std::printf("| %s | %.0f | %.0f | %.2f |\n", workload, rate[0] / a.claimRounds, rate[1] / a.claimRounds,
            rate[1] / rate[0]);
    }
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    Args a;
    if (const char* env = std::getenv("IDEM_BENCH_DSN"))
        a.dsn = env;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (arg == "--dsn")
            a.dsn = next();
        else if (arg == "--rows")
            a.rows = std::stoll(next());
        else if (arg == "--bulk")
            a.bulk = std::stoi(next());
        else if (arg == "--reps")
            a.reps = std::stoi(next());
        else if (arg == "--reuse")
            a.reuse = true;
        else if (arg == "--keep")
            a.keep = true;
        else if (arg == "--claim-seconds")
            a.claimSeconds = std::stoi(next());
        else if (arg == "--claim-rounds")
            a.claimRounds = std::stoi(next());
        else if (arg == "--only")
            a.only = next();
        else {
            std::fprintf(stderr,
                "usage: idem-bench-browser --dsn DSN [--rows N] [--bulk N] [--reps N] [--reuse] [--keep]"
                " [--only pages|bulk|claim] [--claim-seconds S] [--claim-rounds N]\n");
            return 2;
        }
    }
    try {
        auto conn = idem::connect(a.dsn);
        populate(*conn, a);
        // The keys the pages start from are read once, outside the timing; first run warms the cache.
        if (a.only.empty() || a.only == "pages")
            pageFetches(*conn, a);
        if (a.only.empty() || a.only == "bulk")
            bulkRequeue(*conn, a);
        if (a.only.empty() || a.only == "claim")
            claimCost(*conn, a);
        if (!a.keep) {
            pqxx::work w(*conn);
            w.exec("DROP SCHEMA " + schema.quoted() + " CASCADE");
            w.commit();
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "idem-bench-browser: %s\n", e.what());
        return 1;
    }
    return 0;
}
