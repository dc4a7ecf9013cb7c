// idem-bench-snapshot: the incident snapshot export (read + signed bundle) at growing table
// sizes with the same unfinished set, against a full count(*) of the same table as the
// scaling reference measured in the same run. Each export runs in a child process (this
// binary re-executed), so its peak RSS is its own. See README.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/migrate.h"
#include "core/signing.h"
#include "core/snapshot.h"
#include "core/snapshotbundle.h"

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// The child: one export, timings on stdout as "read_ms write_ms bundle_bytes".
int childExport(const std::string& dsn, const std::string& schema, const std::string& out)
{
    const auto t0 = Clock::now();
    auto conn = idem::connect(dsn);
    idem::SnapshotOptions options;
    options.schema = idem::SchemaName(schema);
    idem::SnapshotContext context;
    context.producer = "idem-bench-snapshot";
    context.conninfo = dsn;
    auto data = idem::readSnapshot(*conn, options, context);
    conn.reset();
    const double readMs = msSince(t0);
    const auto t1 = Clock::now();
    const auto key = idem::SigningKey::generate();
    idem::writeSnapshotBundle(out, data, false, &key);
    const double writeMs = msSince(t1);
    std::uintmax_t bytes = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(out))
        if (e.is_regular_file())
            bytes += e.file_size();
    std::printf("%.1f %.1f %ju\n", readMs, writeMs, bytes);
    return 0;
}

struct Export {
    double readMs = 0, writeMs = 0, totalMs = 0;
    long maxRssKb = 0;
    std::uintmax_t bytes = 0;
    long long seqScans = 0;
};

long long seqScans(pqxx::connection& c, const std::string& schema)
{
    pqxx::read_transaction t(c); // a new transaction sees fresh statistics
    return t
        .exec_params("SELECT coalesce(seq_scan, 0) FROM pg_stat_user_tables WHERE schemaname = $1"
                     " AND relname = 'task_idempotency'",
            schema)
        .at(0)
        .at(0)
        .as<long long>();
}

Export runChild(pqxx::connection& admin, const std::string& dsn, const std::string& schema, const std::string& out)
{
    Export e;
    const long long before = seqScans(admin, schema);
    int fds[2];
    if (::pipe(fds) != 0)
        throw std::runtime_error("pipe failed");
    const auto t0 = Clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(fds[1], 1);
        ::close(fds[0]);
        ::close(fds[1]);
        ::execl("/proc/self/exe", "idem-bench-snapshot", "--child-export", dsn.c_str(), schema.c_str(), out.c_str(),
            static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(fds[1]);
    std::string text;
    char buf[256];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
        text.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    struct rusage ru { };
    ::wait4(pid, &status, 0, &ru);
    e.totalMs = msSince(t0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error("the export child failed");
    std::istringstream(text) >> e.readMs >> e.writeMs >> e.bytes;
    e.maxRssKb = ru.ru_maxrss;
    ::usleep(1'200'000); // the child's backend has exited; let its statistics land
    e.seqScans = seqScans(admin, schema) - before;
    std::filesystem::remove_all(out);
    return e;
}

// Succeeded rows [from, to), written with the indexes dropped and rebuilt afterwards.
void addSucceeded(pqxx::connection& c, const idem::SchemaName& s, long long from, long long to)
{
    const auto table = s.qualify("task_idempotency");
    const std::vector<std::string> indexes = { "task_idempotency_processing_idx", "task_idempotency_unfinished_idx",
        "task_idempotency_retry_due_idx", "task_idempotency_retried_idx" };
    std::vector<std::string> defs;
    {
        pqxx::work w(c);
        for (const auto& i : indexes) {
            const auto r = w.exec_params("SELECT pg_get_indexdef(to_regclass($1))", s.name() + "." + i);
            defs.push_back(r.at(0).at(0).as<std::string>());
            w.exec("DROP INDEX " + s.qualify(i));
        }
        w.commit();
    }
    const long long batch = 1'000'000;
    for (long long a = from; a < to; a += batch) {
        pqxx::work w(c);
        w.exec_params("INSERT INTO " + table
                + " (idempotency_key, request_hash, status, result_json, attempts, created_at, updated_at)"
                  " SELECT 'tenant-' || (i % 8) || ':' || (ARRAY['charge','refund','ship'])[i % 3 + 1] || ':order-' || "
                  "i,"
                  " 'v1:' || md5(i::text) || md5((i + 1)::text), 'succeeded',"
                  " jsonb_build_object('charged', 100, 'currency', 'EUR', 'order', i), 1 + (i % 10 = 0)::int,"
                  " now() - interval '2 days' + i * interval '1 millisecond',"
                  " now() - interval '2 days' + i * interval '1 millisecond' + interval '2 seconds'"
                  " FROM generate_series($1::bigint, $2::bigint - 1) AS i",
            a, std::min(a + batch, to));
        w.commit();
        std::cerr << "  rows " << std::min(a + batch, to) << '\n';
    }
    {
        pqxx::work w(c);
        for (const auto& d : defs)
            w.exec(d);
        w.commit();
    }
    pqxx::nontransaction(c).exec("VACUUM ANALYZE " + table);
}

// The unfinished set, once: a fifth each expired, live, failed, uncertain, retryable; plus an
// hour of counters and an audit tail.
void addUnfinished(pqxx::connection& c, const idem::SchemaName& s, long long n)
{
    pqxx::work w(c);
    w.exec_params("INSERT INTO " + s.qualify("task_idempotency")
            + " (idempotency_key, request_hash, status, owner_token, lease_until, attempts, error_class,"
              " error_message, next_attempt_at, created_at, updated_at, errors)"
              " SELECT 'tenant-' || (i % 8) || ':charge:open-' || i, 'v1:' || md5(i::text) || md5(i::text),"
              " (ARRAY['processing','processing','failed','retryable_failed','retryable_failed'])[i % 5 + 1],"
              " CASE WHEN i % 5 < 2 THEN md5(i::text)::uuid END,"
              " CASE i % 5 WHEN 0 THEN now() - interval '5 minutes' WHEN 1 THEN now() + interval '1 day' END,"
              " 1 + i % 3, CASE i % 5 WHEN 2 THEN 'permanent' WHEN 3 THEN 'unknown' WHEN 4 THEN 'retryable' END,"
              " CASE WHEN i % 5 >= 2 THEN 'upstream answered 503 for order ' || i END,"
              " CASE WHEN i % 5 >= 3 THEN now() + interval '1 minute' END,"
              " now() - interval '3 hours' + i * interval '1 second', now() - interval '1 hour' + i * interval '10 ms',"
              " CASE WHEN i % 5 >= 2 THEN jsonb_build_array(jsonb_build_object('attempt', 1, 'class', 'retryable',"
              "      'message', 'upstream answered 503')) ELSE '[]'::jsonb END"
              " FROM generate_series(0, $1::bigint - 1) AS i",
        n);
    w.exec("INSERT INTO " + s.qualify("idem_counters")
        + " (bucket, tenant, operation, outcome, n)"
          " SELECT date_trunc('minute', now()) - m * interval '1 minute', 'tenant-' || t, op, oc, 1 + (m * t) % 50"
          " FROM generate_series(0, 59) m, generate_series(0, 7) t, unnest(ARRAY['charge','refund','ship']) op,"
          " unnest(ARRAY['acquired','replayed','conflict','succeeded','failed_retryable','reacquired_lease']) oc");
    w.exec("INSERT INTO " + s.qualify("task_idempotency_audit")
        + " (at, idempotency_key, action, reason, db_role, os_user, client_host, before_image, after_image,"
          " prev_hash, entry_hash)"
          " SELECT now() - (500 - i) * interval '1 minute', 'tenant-1:charge:open-' || i, 'requeue', 'bench', 'op',"
          " 'bench', 'host', '{\"status\": \"failed\"}', '{\"status\": \"retryable_failed\"}',"
          " md5((i - 1)::text) || md5((i - 1)::text), md5(i::text) || md5(i::text) FROM generate_series(1, 500) i");
    w.commit();
}

template <typename T> T median(std::vector<T> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::vector<long long> parseList(const std::string& s)
{
    std::vector<long long> out;
    std::stringstream in(s);
    for (std::string part; std::getline(in, part, ',');)
        out.push_back(std::stoll(part));
    return out;
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 4 && args[0] == "--child-export")
        return childExport(args[1], args[2], args[3]);
    std::string dsn;
    std::vector<long long> sizes = { 1'000'000, 10'000'000 };
    long long unfinished = 5000;
    int repeat = 3;
    std::string schemaName = "idem_snapbench";
    bool keep = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto next = [&] { return i + 1 < args.size() ? args[++i] : throw std::invalid_argument(args[i]); };
        if (args[i] == "--dsn")
            dsn = next();
        else if (args[i] == "--rows")
            sizes = parseList(next());
        else if (args[i] == "--unfinished")
            unfinished = std::stoll(next());
        else if (args[i] == "--repeat")
            repeat = std::stoi(next());
        else if (args[i] == "--schema")
            schemaName = next();
        else if (args[i] == "--keep-schema")
            keep = true;
        else {
            std::cerr << "usage: idem-bench-snapshot [--dsn DSN] [--rows N,N...] [--unfinished N] [--repeat N]"
                         " [--schema S] [--keep-schema]\n";
            return 2;
        }
    }
    std::sort(sizes.begin(), sizes.end());
    const idem::SchemaName schema(schemaName);
    auto admin = idem::connect(dsn);
    pqxx::nontransaction(*admin).exec("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
    idem::migrate(*admin, { schema, false });
    addUnfinished(*admin, schema, unfinished);

    std::printf("| rows | unfinished | export ms (median) | each run | read ms | write ms | peak RSS MB | bundle kB |"
                " seq scans | count(*) ms |\n|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
    long long have = unfinished;
    std::vector<double> exportMedians, countMedians;
    for (const long long size : sizes) {
        std::cerr << "growing to " << size << " rows\n";
        const auto tg = Clock::now();
        addSucceeded(*admin, schema, have, size);
        std::cerr << "  took " << msSince(tg) / 1000 << " s\n";
        have = size;
        std::vector<Export> runs;
        std::vector<double> counts;
        for (int r = 0; r < repeat; ++r) {
            runs.push_back(
                runChild(*admin, dsn, schema.name(), "/tmp/idem-bench-snapshot-" + std::to_string(::getpid())));
            const auto tc = Clock::now();
            pqxx::read_transaction t(*admin);
            t.exec("SELECT count(*) FROM " + schema.qualify("task_idempotency"));
            counts.push_back(msSince(tc));
        }
        std::vector<double> total, read, write;
        std::vector<long> rss;
        std::string each;
        long long scans = 0;
        for (const auto& e : runs) {
            total.push_back(e.totalMs);
            read.push_back(e.readMs);
            write.push_back(e.writeMs);
            rss.push_back(e.maxRssKb);
            scans += e.seqScans;
            each += (each.empty() ? "" : " ") + std::to_string(static_cast<long>(e.totalMs));
        }
        exportMedians.push_back(median(total));
        countMedians.push_back(median(counts));
        std::printf("| %lld | %lld | %.0f | %s | %.0f | %.0f | %.1f | %ju | %lld | %.0f |\n", size, unfinished,
            median(total), each.c_str(), median(read), median(write), static_cast<double>(median(rss)) / 1024.0,
            runs.front().bytes / 1024, scans, median(counts));
        std::fflush(stdout);
    }
    if (sizes.size() > 1)
        std::printf("\nexport %lld / %lld rows: %.2fx; full count(*): %.2fx\n", sizes.back(), sizes.front(),
            exportMedians.back() / exportMedians.front(), countMedians.back() / countMedians.front());
    if (!keep)
        pqxx::nontransaction(*admin).exec("DROP SCHEMA " + schema.quoted() + " CASCADE");
    return 0;
}
