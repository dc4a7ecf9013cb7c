// idem-bench-exporter: what `idemctl exporter` scraped 20 times a second costs the claim path.
// One exporter reads the claim benchmark's own schema while runOnce (unchanged) runs beside it, in
// three rotated settings: exporter stopped (SIGSTOP), exporter reading but not scraped, exporter
// reading and scraped at --scrape-rate. Also what the exporter's database reading costs per interval
// in each setting (its backend's CPU, its reads), which must not follow the scrapes. See README.md.
#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <pqxx/pqxx>

#include "bench/bench.h"
#include "bench/cpuclock.h"
#include "core/connection.h"
#include "core/digest.h"
#include "schema/migrate.h"

using namespace idem;
using namespace idem::bench;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
    std::string dsn;
    std::string idemctl; // default: the idemctl built beside this benchmark (defaultIdemctl)
    int seconds = 10;
    int repeat = 3;
    int connections = 4;
    int scrapeRate = 20;
    std::string interval = "1s";
};

[[noreturn]] void usage(int code)
{
    std::fprintf(code ? stderr : stdout,
        "usage: idem-bench-exporter --dsn DSN [--idemctl PATH] [--seconds 10] [--repeat 3] [--connections 4]\n"
        "                           [--scrape-rate 20] [--interval 1s]\n"
        "Creates a scratch schema, runs the claim benchmark (library, counters on, fresh keys) beside one\n"
        "idemctl exporter reading that schema, stopped / idle / scraped in rotation; drops the schema.\n");
    std::exit(code);
}

// One HTTP/1.0 GET of /metrics; the body's size, or -1.
long scrape(int port, std::string* body = nullptr)
{
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    sockaddr_in addr {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    long size = -1;
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        const char req[] = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
        if (write(fd, req, sizeof req - 1) == static_cast<ssize_t>(sizeof req - 1)) {
            std::string all;
            char buf[16384];
            for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
                all.append(buf, static_cast<std::size_t>(n));
            if (all.starts_with("HTTP/1.1 200") || all.starts_with("HTTP/1.0 200"))
                size = static_cast<long>(all.size());
            if (body)
                *body = std::move(all);
        }
    }
    close(fd);
    return size;
}

double sample(const std::string& text, const std::string& series)
{
    const auto at = text.find('\n' + series + ' ');
    return at == std::string::npos ? -1 : std::atof(text.c_str() + at + series.size() + 2);
}

struct Exporter {
    pid_t pid = 0;
    int port = 0;
    int stderrFd = -1;
    std::thread drain;
};

// Starts `idemctl exporter` on port 0 and learns the port from its first stderr line; later
// stderr lines are passed on with a prefix.
void startExporter(Exporter& e, const Options& o, const SchemaName& schema)
{
    int pipefd[2];
    if (pipe(pipefd) != 0)
        throw std::runtime_error("pipe failed");
    e.pid = fork();
    if (e.pid == 0) {
        dup2(pipefd[1], STDERR_FILENO);
        close(pipefd[0]);
        close(pipefd[1]);
        execl(o.idemctl.c_str(), o.idemctl.c_str(), "exporter", "--dsn", o.dsn.c_str(), "--schema",
            schema.name().c_str(), "--listen", "127.0.0.1:0", "--interval", o.interval.c_str(),
            static_cast<char*>(nullptr));
        std::fprintf(stderr, "exec %s: %s\n", o.idemctl.c_str(), std::strerror(errno));
        _exit(127);
    }
    close(pipefd[1]);
    e.stderrFd = pipefd[0];
    std::string line;
    char c = 0;
    while (read(e.stderrFd, &c, 1) == 1 && c != '\n')
        line += c;
    const auto at = line.find("127.0.0.1:");
    if (at == std::string::npos)
        throw std::runtime_error("exporter did not start: " + line);
    e.port = std::atoi(line.c_str() + at + 10);
    std::fprintf(stderr, "%s\n", line.c_str());
    e.drain = std::thread([fd = e.stderrFd] {
        std::string pending;
        char buf[4096];
        for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
            pending.append(buf, static_cast<std::size_t>(n));
            for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1))
                std::fprintf(stderr, "  [exporter] %s\n", pending.substr(0, nl).c_str());
        }
    });
}

enum class Setting { Stopped, Idle, Scraped };
const char* settingLabel(Setting s)
{
    switch (s) {
    case Setting::Stopped:
        return "exporter stopped (SIGSTOP)";
    case Setting::Idle:
        return "exporter reading, no scrapes";
    case Setting::Scraped:
        return "exporter reading, scraped";
    }
    return "?";
}

struct Tally {
    std::vector<double> rate, srvUs;
    std::vector<double> scrapes, reads, exporterProcMsPerS, scrapeBytes;
    // Summed over the repeats: /proc counts CPU in 10 ms ticks, more than one reading costs.
    double readsSum = 0, dbUsSum = 0;
};

// build/<preset>/cli/idemctl beside build/<preset>/bench/idem-bench-exporter: found at run time, since a
// path compiled in would differ in every clone and defeat ccache.
std::string defaultIdemctl()
{
    std::error_code error;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
    return error ? std::string("idemctl") : (self.parent_path().parent_path() / "cli" / "idemctl").string();
}

} // namespace

int main(int argc, char** argv)
{
    Options o;
    o.idemctl = defaultIdemctl();
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                usage(2);
            return argv[++i];
        };
        if (a == "--dsn")
            o.dsn = value();
        else if (a == "--idemctl")
            o.idemctl = value();
        else if (a == "--seconds")
            o.seconds = std::stoi(value());
        else if (a == "--repeat")
            o.repeat = std::stoi(value());
        else if (a == "--connections")
            o.connections = std::stoi(value());
        else if (a == "--scrape-rate")
            o.scrapeRate = std::stoi(value());
        else if (a == "--interval")
            o.interval = value();
        else if (a == "--help")
            usage(0);
        else
            usage(2);
    }
    if (o.dsn.empty())
        usage(2);
    std::signal(SIGPIPE, SIG_IGN);

    const SchemaName schema("idem_bench_exp_" + std::to_string(getpid()));
    auto admin = connect(o.dsn, { "idem-bench admin" });
    migrate(*admin, MigrateOptions { schema, false });
    createBenchTable(*admin, schema);

    Exporter exporter;
    int status = 0;
    try {
        startExporter(exporter, o, schema);
        // The exporter's backend, to read its CPU from /proc (same machine only).
        int exporterBackend = 0;
        for (int tries = 0; tries < 100 && exporterBackend == 0; ++tries) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            pqxx::read_transaction t(*admin);
            const auto r = t.exec("SELECT pid FROM pg_stat_activity WHERE application_name = 'idemctl exporter'"
                                  " AND datname = current_database() ORDER BY backend_start DESC LIMIT 1");
            if (!r.empty())
                exporterBackend = r[0][0].as<int>();
        }
        const auto exporterState = [&](double& reads, double& dbUs, double& procUs) {
            std::string body;
            scrape(exporter.port, &body);
            reads = sample(body, "idem_exporter_reads_total{schema=\"" + schema.name() + "\"}");
            dbUs = backendCpuUs(exporterBackend);
            procUs = backendCpuUs(exporter.pid); // any process's /proc stat: the exporter's own CPU
        };

        RunSpec spec;
        spec.dsn = o.dsn;
        spec.mode = Mode::Library;
        spec.workload = Workload::Fresh;
        spec.schema = schema;
        spec.digest = requestDigestFromText(R"({"order":"bench-1","amount":100,"currency":"EUR"})");
        spec.connections = o.connections;
        spec.duration = std::chrono::seconds(o.seconds);

        const Setting order[] = { Setting::Stopped, Setting::Idle, Setting::Scraped };
        Tally tallies[3];
        for (int rep = 0; rep < o.repeat; ++rep) {
            for (int k = 0; k < 3; ++k) {
                const Setting s = order[(k + rep) % 3];
                auto& tally = tallies[static_cast<int>(s)];
                if (s == Setting::Stopped) {
                    // Stopped just after a reading, so never inside its transaction (whose lock
                    // would hold up the run's TRUNCATE).
                    double r0 = 0, r1 = 0, x = 0;
                    exporterState(r0, x, x);
                    for (r1 = r0; r1 == r0; exporterState(r1, x, x))
                        std::this_thread::sleep_for(std::chrono::milliseconds(2));
                    kill(exporter.pid, SIGSTOP);
                }
                double reads0 = 0, db0 = 0, proc0 = 0;
                if (s != Setting::Stopped)
                    exporterState(reads0, db0, proc0);
                std::atomic<bool> stop { false };
                std::atomic<long> scrapes { 0 }, bytes { 0 };
                std::thread scraper;
                if (s == Setting::Scraped)
                    scraper = std::thread([&] {
                        const auto period = std::chrono::microseconds(1'000'000 / o.scrapeRate);
                        auto next = Clock::now();
                        while (!stop.load()) {
                            const long n = scrape(exporter.port);
                            if (n > 0) {
                                ++scrapes;
                                bytes += n;
                            }
                            next += period;
                            std::this_thread::sleep_until(next);
                        }
                    });
                std::fprintf(stderr, "run %d: %s\n", rep + 1, settingLabel(s));
                const auto t0 = Clock::now();
                const RunResult r = runOnce(*admin, spec);
                const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
                stop = true;
                if (scraper.joinable())
                    scraper.join();
                if (!r.problem.empty()) {
                    std::fprintf(stderr, "  check failed: %s\n", r.problem.c_str());
                    status = 1;
                }
                tally.rate.push_back(r.perSecond);
                tally.srvUs.push_back(r.serverCpuUs);
                if (s == Setting::Stopped) {
                    kill(exporter.pid, SIGCONT);
                    // Its catch-up reading happens now, not in the next setting's window.
                    double r0 = 0, r1 = 0, x = 0;
                    exporterState(r0, x, x);
                    for (r1 = r0; r1 == r0; exporterState(r1, x, x))
                        std::this_thread::sleep_for(std::chrono::milliseconds(20));
                    continue;
                }
                double reads1 = 0, db1 = 0, proc1 = 0;
                exporterState(reads1, db1, proc1);
                const double reads = reads1 - reads0;
                tally.reads.push_back(reads / wall);
                tally.scrapes.push_back(static_cast<double>(scrapes.load()) / wall);
                tally.scrapeBytes.push_back(
                    scrapes ? static_cast<double>(bytes.load()) / static_cast<double>(scrapes.load()) : 0);
                if (db0 >= 0 && db1 >= 0) {
                    tally.readsSum += reads;
                    tally.dbUsSum += db1 - db0;
                }
                tally.exporterProcMsPerS.push_back(proc0 >= 0 ? (proc1 - proc0) / wall / 1000.0 : -1);
            }
        }

        std::printf("\n== claim benchmark (library, counters on, fresh keys, %d connections, %d s) beside one idemctl "
                    "exporter (--interval %s) reading its schema; %d repeats, rotated\n",
            o.connections, o.seconds, o.interval.c_str(), o.repeat);
        std::printf("  %-32s %9s %8s  %9s %9s %12s %12s  runs (tasks/s)\n", "setting", "tasks/s", "srv us", "scrapes/s",
            "reads/s", "db ms/read", "exp. ms/s");
        for (const Setting s : order) {
            const auto& t = tallies[static_cast<int>(s)];
            std::string runs;
            for (double v : t.rate)
                runs += std::to_string(static_cast<long>(v)) + ' ';
            if (s == Setting::Stopped)
                std::printf("  %-32s %9.0f %8.0f  %9s %9s %12s %12s  %s\n", settingLabel(s), medianOf(t.rate),
                    medianOf(t.srvUs), "-", "-", "-", "-", runs.c_str());
            else
                std::printf("  %-32s %9.0f %8.0f  %9.1f %9.2f %12.3f %12.2f  %s\n", settingLabel(s), medianOf(t.rate),
                    medianOf(t.srvUs), medianOf(t.scrapes), medianOf(t.reads),
                    t.readsSum > 0 ? t.dbUsSum / t.readsSum / 1000.0 : -1, medianOf(t.exporterProcMsPerS),
                    runs.c_str());
        }
        const auto& scraped = tallies[static_cast<int>(Setting::Scraped)];
        const auto& idle = tallies[static_cast<int>(Setting::Idle)];
        const auto& stopped = tallies[static_cast<int>(Setting::Stopped)];
        std::printf("  (a scrape is %.0f bytes; db ms/read: the exporter's backend CPU per reading over all repeats;\n"
                    "   exp. ms/s: the exporter process's own CPU per second)\n",
            medianOf(scraped.scrapeBytes));
        printRatio(
            "claim rate, scraped / not scraped", medianOf(scraped.rate), medianOf(idle.rate), "(target >= 0.99)");
        printRatio("claim rate, scraped / exporter stopped", medianOf(scraped.rate), medianOf(stopped.rate), "");
        printRatio("server CPU per task, scraped / not scraped", medianOf(scraped.srvUs), medianOf(idle.srvUs),
            "(target <= 1.01)");
        printRatio("exporter readings per second, scraped / not", medianOf(scraped.reads), medianOf(idle.reads),
            "(1.00: scrapes add none)");
        const auto perRead = [](const Tally& t) { return t.readsSum > 0 ? t.dbUsSum / t.readsSum : 0; };
        printRatio("exporter db CPU per reading, scraped / not", perRead(scraped), perRead(idle),
            "(1.00: a scrape reads nothing)");
        // The scrapes' whole cost to the claims is the exporter's own CPU, taken from the machine.
        // Rates drift with the shared machine's load from one rotation to the next, so each
        // rotation's scraped run is compared with its own idle run, and the median ratio is shown.
        std::vector<double> paired;
        for (std::size_t i = 0; i < scraped.rate.size() && i < idle.rate.size(); ++i)
            if (idle.rate[i] > 0)
                paired.push_back(scraped.rate[i] / idle.rate[i]);
        std::string pairs;
        for (double v : paired) {
            char buf[16];
            std::snprintf(buf, sizeof buf, "%.3f ", v);
            pairs += buf;
        }
        std::printf("  %-52s %6.3fx   per rotation: %s\n", "claim rate, scraped / not scraped, paired median",
            medianOf(paired), pairs.c_str());
        const double cores = static_cast<double>(std::max(1u, std::thread::hardware_concurrency()));
        std::printf("  %-52s %6.2f %%   (%.2f ms of CPU per second on %.0f cores: all the scrapes can take)\n",
            "exporter CPU when scraped, share of the machine", medianOf(scraped.exporterProcMsPerS) / cores / 10.0,
            medianOf(scraped.exporterProcMsPerS), cores);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "idem-bench-exporter: %s\n", e.what());
        status = 1;
    }
    if (exporter.pid > 0) {
        kill(exporter.pid, SIGCONT);
        kill(exporter.pid, SIGTERM);
        waitpid(exporter.pid, nullptr, 0);
    }
    if (exporter.drain.joinable())
        exporter.drain.join();
    {
        pqxx::work w(*admin);
        w.exec("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
        w.commit();
    }
    return status;
}
