// idem-bench-stats' result tables: text on stdout, and JSON for --json.
#include "bench/stats_bench.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

namespace idem::bench::stats {

namespace {

    std::string cpuText(double ms)
    {
        char b[32] = "n/a";
        if (ms >= 0)
            std::snprintf(b, sizeof b, "%.1f", ms);
        return b;
    }

    nlohmann::json timingJson(const Timing& t)
    {
        return { { "first_ms", t.firstMs }, { "p50_ms", t.pct(0.5) }, { "p95_ms", t.pct(0.95) }, { "cpu_ms", t.cpuMs },
            { "warm_ms", t.warmMs } };
    }

} // namespace

double Timing::pct(double p) const
{
    if (warmMs.empty())
        return 0;
    std::vector<double> v = warmMs;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

void printSnapshots(const std::vector<SnapshotRow>& rows, int reps)
{
    std::printf("\n== the tick (readStats: shared bounded figures) vs naive GROUP BY status vs the bounded count\n"
                "   forced (idem_live_stats, what one reader pays once per period for all); %d runs each, interleaved ==\n",
        reps);
    std::printf("first = first run on a new connection; p50/p95 over the other %d; cpu = backend CPU ms per warm run;\n"
                "index = the unfinished index: 0004 covering (migrated) or 0001 (updated_at only, put back)\n",
        reps - 1);
    std::printf("%10s %10s %-9s %5s %8s | %8s %8s %8s %6s | %8s %8s %8s %6s | %7s %7s %6s | %8s\n", "rows",
        "unfinished", "layout", "index", "idx size", "snap 1st", "p50", "p95", "cpu", "naive1st", "p50", "p95", "cpu",
        "countp50", "p95", "cpu", "naive/snap");
    for (const auto& r : rows) {
        std::printf(
            "%10lld %10lld %-9s %5s %8s | %8.2f %8.2f %8.2f %6s | %8.1f %8.1f %8.1f %6s | %7.2f %7.2f %6s | %7.1fx%s\n",
            r.pop.rows, r.pop.unfinished, layoutName(r.pop.layout), r.index.c_str(), r.unfinishedIndexSize.c_str(),
            r.snapshot.firstMs, r.snapshot.pct(0.5), r.snapshot.pct(0.95), cpuText(r.snapshot.cpuMs).c_str(),
            r.naive.firstMs, r.naive.pct(0.5), r.naive.pct(0.95), cpuText(r.naive.cpuMs).c_str(), r.histogram.pct(0.5),
            r.histogram.pct(0.95), cpuText(r.histogram.cpuMs).c_str(), r.naive.pct(0.5) / r.snapshot.pct(0.5),
            r.check.empty() ? "" : "  !");
    }
    for (const auto& r : rows)
        std::printf("  %lld rows / %lld unfinished: bounded count p50 %.2f ms (cpu %s), naive / count %.1fx;"
                    " the tick as a reader p50 %.2f ms (cpu %s), naive / tick %.1fx\n",
            r.pop.rows, r.pop.unfinished, r.histogram.pct(0.5), cpuText(r.histogram.cpuMs).c_str(),
            r.naive.pct(0.5) / r.histogram.pct(0.5), r.snapshot.pct(0.5), cpuText(r.snapshot.cpuMs).c_str(),
            r.naive.pct(0.5) / r.snapshot.pct(0.5));
    for (const auto& r : rows)
        if (!r.check.empty())
            std::printf("  ! %lld rows: %s\n", r.pop.rows, r.check.c_str());
    // Flatness: the same unfinished set in tables of different sizes, same index.
    for (std::size_t a = 0; a < rows.size(); ++a)
        for (std::size_t b = a + 1; b < rows.size(); ++b)
            if (rows[a].pop.unfinished == rows[b].pop.unfinished && rows[a].pop.rows != rows[b].pop.rows
                && rows[a].index == rows[b].index)
                std::printf("same %lld unfinished rows, index %s: snapshot p50 at %lld rows / at %lld rows = %.2fx"
                            " (naive: %.1fx)\n",
                    rows[a].pop.unfinished, rows[a].index.c_str(), rows[b].pop.rows, rows[a].pop.rows,
                    rows[b].snapshot.pct(0.5) / rows[a].snapshot.pct(0.5),
                    rows[b].naive.pct(0.5) / rows[a].naive.pct(0.5));
    std::fflush(stdout);
}

void printLoad(const std::vector<LoadRow>& rows, int claimConnections, int loadSeconds, int pollers)
{
    if (rows.empty())
        return;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::printf("\n== claim benchmark (library, counters on, fresh keys, %d connections, %d s) beside %d consoles"
                " polling every 1 s ==\n",
        claimConnections, loadSeconds, pollers);
    std::printf("consoles read: 'claim table' = the claim benchmark's own schema (the issue's setting), else a"
                " populated table (rows/unfinished)\n"
                "srv/cli ms = the pollers' backend / client CPU per poll; cpu%% = their CPU per second of polling"
                " as a share of this machine's %u cores;\n"
                "cpu est%% = their CPU / (theirs + the claim benchmark's, same run): the claim rate lost if CPU is"
                " the limit and is shared in proportion\n",
        cores);
    std::printf("%-18s %-34s | %8s  %-32s | %7s %8s %8s %5s %5s %7s %7s %6s %8s\n", "consoles read", "consoles",
        "tasks/s", "each run", "polls", "poll p50", "poll p95", "t/o", "late", "srv ms", "cli ms", "cpu%", "cpu est%");
    for (const auto& r : rows) {
        std::vector<double> rates, p50, p95, cpu, cli, share, estimate;
        long long polls = 0, timeouts = 0, late = 0;
        std::string each;
        bool problem = false;
        for (const auto& run : r.runs) {
            problem = problem || !run.claim.problem.empty();
            rates.push_back(run.claim.perSecond);
            p50.push_back(run.pollP50ms);
            p95.push_back(run.pollP95ms);
            cpu.push_back(run.pollCpuMs);
            cli.push_back(run.pollClientCpuMs);
            if (run.seconds > 0 && run.pollCpuMs >= 0) {
                // CPU ms per second: the consoles', and the claim benchmark's (its backends and threads).
                const double consoles
                    = (run.pollCpuMs + run.pollClientCpuMs) * static_cast<double>(run.polls) / run.seconds;
                share.push_back(consoles / (10.0 * cores));
                if (run.claim.serverCpuUs >= 0)
                    estimate.push_back(100.0 * consoles
                        / (consoles + run.claim.perSecond * (run.claim.serverCpuUs + run.claim.clientCpuUs) / 1000.0));
            }
            polls += run.polls;
            timeouts += run.timeouts;
            late += run.late;
            each += (each.empty() ? "" : " ") + std::to_string(static_cast<long long>(run.claim.perSecond + 0.5));
        }
        const bool none = r.console == Console::None;
        char shareText[16] = "", estimateText[16] = "";
        if (!none && !share.empty())
            std::snprintf(shareText, sizeof shareText, "%.1f", medianOf(share));
        if (!none && !estimate.empty())
            std::snprintf(estimateText, sizeof estimateText, "%.1f", medianOf(estimate));
        std::printf("%-18s %-34s | %8.0f  %-32s | %7lld %8.1f %8.1f %5lld %5lld %7s %7s %6s %8s%s\n", r.target.c_str(),
            consoleLabel(r.console), medianOf(rates), each.c_str(), polls, medianOf(p50), medianOf(p95), timeouts, late,
            none ? "" : cpuText(medianOf(cpu)).c_str(), none ? "" : cpuText(medianOf(cli)).c_str(), shareText,
            estimateText, problem ? "  !" : "");
    }
    // Ratios against the baseline of the same target: per pair (run i with consoles / run i
    // without, adjacent in time) and of the medians.
    for (const auto& base : rows) {
        if (base.console != Console::None)
            continue;
        for (const auto& r : rows) {
            if (r.console == Console::None || r.target != base.target)
                continue;
            std::vector<double> pair, with, without;
            std::string each;
            for (std::size_t i = 0; i < r.runs.size() && i < base.runs.size(); ++i) {
                pair.push_back(r.runs[i].claim.perSecond / base.runs[i].claim.perSecond);
                char b[16];
                std::snprintf(b, sizeof b, "%.3f", pair.back());
                each += (each.empty() ? "" : " ") + std::string(b);
            }
            for (const auto& run : r.runs)
                with.push_back(run.claim.perSecond);
            for (const auto& run : base.runs)
                without.push_back(run.claim.perSecond);
            const double ratio = medianOf(with) / medianOf(without);
            std::printf("%s, %s: claim rate %.3fx of no consoles (cost %.1f%%); per pair %s (median %.3f, cost"
                        " %.1f%%)%s\n",
                r.target.c_str(), consoleLabel(r.console), ratio, (1 - ratio) * 100, each.c_str(), medianOf(pair),
                (1 - medianOf(pair)) * 100, r.console == Console::Naive ? "" : "  target: cost < 3%");
        }
    }
    // The watches' reads in one round trip each against the same reads statement by statement
    // (issue 45 item 3): claim rate and the consoles' server and client CPU per poll, per pair.
    for (const auto& framed : rows) {
        if (framed.console != Console::WatchedFramed)
            continue;
        for (const auto& waiting : rows) {
            if (waiting.console != Console::WatchedWaiting || waiting.target != framed.target)
                continue;
            std::string rate, server, client;
            for (std::size_t i = 0; i < framed.runs.size() && i < waiting.runs.size(); ++i) {
                char b[64];
                std::snprintf(b, sizeof b, "%.3f", framed.runs[i].claim.perSecond / waiting.runs[i].claim.perSecond);
                rate += (rate.empty() ? "" : " ") + std::string(b);
                std::snprintf(b, sizeof b, "%.2f", framed.runs[i].pollCpuMs / waiting.runs[i].pollCpuMs);
                server += (server.empty() ? "" : " ") + std::string(b);
                std::snprintf(b, sizeof b, "%.2f", framed.runs[i].pollClientCpuMs / waiting.runs[i].pollClientCpuMs);
                client += (client.empty() ? "" : " ") + std::string(b);
            }
            std::printf("%s, watches framed / waiting: claim rate per pair %s; consoles' server CPU per poll %s;"
                        " client CPU per poll %s\n",
                framed.target.c_str(), rate.c_str(), server.c_str(), client.c_str());
        }
    }
    std::fflush(stdout);
}

void writeJson(const std::string& path, const std::vector<SnapshotRow>& snaps, const std::vector<LoadRow>& loads)
{
    nlohmann::json j;
    j["snapshots"] = nlohmann::json::array();
    for (const auto& r : snaps)
        j["snapshots"].push_back(
            { { "rows", r.pop.rows }, { "unfinished", r.pop.unfinished }, { "layout", layoutName(r.pop.layout) },
                { "index", r.index }, { "unfinished_index_size", r.unfinishedIndexSize },
                { "readstats", timingJson(r.snapshot) }, { "naive_group_by", timingJson(r.naive) },
                { "attempts_histogram", timingJson(r.histogram) }, { "populate_seconds", r.populated.seconds },
                { "reused", r.populated.reused }, { "heap_pages", r.populated.heapPages }, { "check", r.check } });
    j["load"] = nlohmann::json::array();
    for (const auto& r : loads) {
        nlohmann::json runs = nlohmann::json::array();
        for (const auto& run : r.runs)
            runs.push_back({ { "claims_per_s", run.claim.perSecond }, { "polls", run.polls },
                { "timeouts", run.timeouts }, { "late", run.late }, { "poll_p50_ms", run.pollP50ms },
                { "poll_p95_ms", run.pollP95ms }, { "poll_cpu_ms", run.pollCpuMs },
                { "poll_client_cpu_ms", run.pollClientCpuMs }, { "seconds", run.seconds },
                { "exact_shared_refreshes", run.sharedRefreshes }, { "exact_shared_last_cost_ms", run.sharedLastCostMs },
                { "exact_own_refreshes", run.ownRefreshes }, { "exact_own_ms", run.ownRefreshMs },
                { "oldest_exact_shown_s", run.oldestExactShownS } });
        j["load"].push_back({ { "target", r.target }, { "rows", r.pop.rows }, { "unfinished", r.pop.unfinished },
            { "consoles", consoleLabel(r.console) }, { "runs", runs } });
    }
    std::ofstream(path) << j.dump(2) << '\n';
}

} // namespace idem::bench::stats
