// idem-bench-snapshot: the incident snapshot export (read + signed bundle; idemctl's and the
// console's, which adds report.pdf) at growing table sizes with the same unfinished set (the
// stats benchmark's generator), against a full count(*) of the same table as the scaling
// reference measured in the same run. Each export runs in a child process (this binary
// re-executed), so its peak RSS (wait4's ru_maxrss) is its own. See README.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <QGuiApplication>

#include <pqxx/pqxx>

#include "bench/stats_bench.h"
#include "core/connection.h"
#include "schema/migrate.h"
#include "operations/signing.h"
#include "operations/snapshot.h"
#include "operations/snapshotbundle.h"
#include "models/snapshotexport.h"

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// The child: one export, timings on stdout as "read_ms write_ms bundle_bytes". "core" is
// idemctl's export (readSnapshot + writeSnapshotBundle: JSON, CSV, SVG, HTML, signed); "console"
// is the console's worker job (runSnapshotExport: the same plus report.pdf drawn by QTextDocument
// onto QPdfWriter), chart PNGs left out (they are drawn on the UI thread before the job).
int childExport(int argc, char** argv, const std::string& mode, const std::string& dsn, const std::string& schema,
    const std::string& out)
{
    const auto t0 = Clock::now();
    auto conn = idem::connect(dsn);
    idem::SnapshotOptions options;
    options.schema = idem::SchemaName(schema);
    idem::SnapshotContext context;
    context.producer = "idem-bench-snapshot";
    context.conninfo = dsn;
    const auto key = idem::SigningKey::generate();
    double readMs = 0, writeMs = 0;
    if (mode == "console") {
        qputenv("QT_QPA_PLATFORM", "offscreen");
        QGuiApplication app(argc, argv); // fonts for the PDF
        const std::string keyFile = out + ".key";
        key.save(keyFile, true);
        idem::console::SnapshotExportRequest request;
        request.target = QString::fromStdString(out);
        request.options = options;
        request.context = context;
        request.signingKeyPath = QString::fromStdString(keyFile);
        request.pdf = true;
        Clock::time_point readDone;
        idem::SnapshotProgress progress;
        progress.progress = [&](std::string_view stage, double) {
            if (stage == "writing the chart images")
                readDone = Clock::now();
        };
        idem::console::runSnapshotExport(*conn, options.schema, request, progress);
        readMs = std::chrono::duration<double, std::milli>(readDone - t0).count();
        writeMs = msSince(readDone);
        std::filesystem::remove(keyFile);
    } else {
        auto data = idem::readSnapshot(*conn, options, context);
        conn.reset();
        readMs = msSince(t0);
        const auto t1 = Clock::now();
        idem::writeSnapshotBundle(out, data, false, &key);
        writeMs = msSince(t1);
    }
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

Export runChild(pqxx::connection& admin, const std::string& mode, const std::string& dsn, const std::string& schema,
    const std::string& out)
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
        ::execl("/proc/self/exe", "idem-bench-snapshot", "--child-export", mode.c_str(), dsn.c_str(), schema.c_str(),
            out.c_str(), static_cast<char*>(nullptr));
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

// The counters and audit tail beside the population's rows (stats' ensurePopulation makes the
// task table): an hour of counters for 8 tenants and 3 operations, 500 audit entries.
void addCountersAndAudit(pqxx::connection& c, const idem::SchemaName& s)
{
    pqxx::work w(c);
    w.exec("DELETE FROM " + s.qualify("idem_counters"));
    w.exec("DELETE FROM " + s.qualify("task_idempotency_audit"));
    w.exec("INSERT INTO " + s.qualify("idem_counters")
        + " (bucket, tenant, operation, outcome, n)"
          " SELECT date_trunc('minute', now()) - m * interval '1 minute', 'tenant-' || t, op, oc, 1 + (m * t) % 50"
          " FROM generate_series(0, 59) m, generate_series(0, 7) t, unnest(ARRAY['charge','refund','ship']) op,"
          " unnest(ARRAY['acquired','replayed','conflict','succeeded','failed_retryable','reacquired_lease']) oc");
    w.exec("INSERT INTO " + s.qualify("task_idempotency_audit")
        + " (at, idempotency_key, action, reason, db_role, os_user, client_host, before_image, after_image,"
          " prev_hash, entry_hash)"
          " SELECT now() - (500 - i) * interval '1 minute', 'tenant-1:charge:order-' || i, 'requeue', 'bench', 'op',"
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
    if (args.size() == 5 && args[0] == "--child-export")
        return childExport(argc, argv, args[1], args[2], args[3], args[4]);
    std::string dsn;
    std::vector<long long> sizes = { 1'000'000, 10'000'000 };
    long long unfinished = 10'000;
    long long batch = 1'000'000;
    int repeat = 3;
    std::string prefix = "idem_snapbench";
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
        else if (args[i] == "--batch")
            batch = std::stoll(next());
        else if (args[i] == "--schema-prefix")
            prefix = next();
        else if (args[i] == "--keep")
            keep = true;
        else {
            std::cerr << "usage: idem-bench-snapshot [--dsn DSN] [--rows N,N...] [--unfinished N] [--repeat N]"
                         " [--batch N] [--schema-prefix P] [--keep]\n";
            return 2;
        }
    }
    std::sort(sizes.begin(), sizes.end());
    auto admin = idem::connect(dsn);

    std::printf("| rows | unfinished | export | ms (median) | each run | read ms | write ms | peak RSS MB | bundle kB |"
                " seq scans | count(*) ms |\n|---:|---:|---|---:|---|---:|---:|---:|---:|---:|---:|\n");
    std::map<std::string, std::vector<double>> exportMedians;
    std::vector<double> countMedians;
    for (const long long size : sizes) {
        // The stats benchmark's table generator: the same unfinished set (scattered over the heap,
        // the pessimistic layout) at every size; only succeeded rows grow.
        const idem::SchemaName schema(prefix + "_" + std::to_string(size));
        idem::bench::stats::Population pop;
        pop.rows = size;
        pop.unfinished = unfinished;
        pop.layout = idem::bench::stats::Layout::Scattered;
        std::cerr << "population " << size << " rows, " << unfinished << " unfinished\n";
        const auto populated = idem::bench::stats::ensurePopulation(
            *admin, schema, pop, batch, [](const std::string& line) { std::cerr << line << '\n'; });
        std::cerr << "  " << (populated.reused ? "reused" : "generated") << " in " << populated.seconds << " s, table "
                  << populated.tableSize << '\n';
        addCountersAndAudit(*admin, schema);
        // The baseline first: its (parallel) sequential scans must have reached the statistics
        // before the exports' own are counted.
        std::vector<double> counts;
        for (int r = 0; r < repeat; ++r) {
            const auto tc = Clock::now();
            pqxx::read_transaction t(*admin);
            t.exec("SELECT count(*) FROM " + schema.qualify("task_idempotency"));
            counts.push_back(msSince(tc));
        }
        ::usleep(1'200'000);
        for (const std::string mode : { "core", "console" }) {
            std::vector<Export> runs;
            for (int r = 0; r < repeat; ++r)
                runs.push_back(runChild(
                    *admin, mode, dsn, schema.name(), "/tmp/idem-bench-snapshot-" + std::to_string(::getpid())));
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
            exportMedians[mode].push_back(median(total));
            std::printf("| %lld | %lld | %s | %.0f | %s | %.0f | %.0f | %.1f | %ju | %lld | %.0f |\n", size, unfinished,
                mode.c_str(), median(total), each.c_str(), median(read), median(write),
                static_cast<double>(median(rss)) / 1024.0, runs.front().bytes / 1024, scans, median(counts));
            std::fflush(stdout);
        }
        countMedians.push_back(median(counts));
        if (!keep)
            pqxx::nontransaction(*admin).exec("DROP SCHEMA " + schema.quoted() + " CASCADE");
    }
    if (sizes.size() > 1) {
        std::printf("\n%lld / %lld rows:", sizes.back(), sizes.front());
        for (const auto& [mode, m] : exportMedians)
            std::printf(" %s export %.2fx;", mode.c_str(), m.back() / m.front());
        std::printf(" full count(*) %.2fx\n", countMedians.back() / countMedians.front());
    }
    return 0;
}
