// The result tables: medians over the repeated runs of each mode and connection count.
#include "bench/bench.h"

#include <algorithm>
#include <cstdio>

namespace idem::bench {

// The median of some runs' figures (0 for none); every benchmark's tables use this one.
double medianOf(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

RunResult median(const std::vector<RunResult>& runs)
{
    RunResult out;
    std::vector<double> rate, p50, p99, cli, srv;
    for (const auto& r : runs) {
        rate.push_back(r.perSecond);
        p50.push_back(r.p50ms);
        p99.push_back(r.p99ms);
        cli.push_back(r.clientCpuUs);
        srv.push_back(r.serverCpuUs);
        out.requests += r.requests;
        out.executed += r.executed;
        out.replayed += r.replayed;
        out.other += r.other;
        if (!r.problem.empty())
            out.problem += (out.problem.empty() ? "" : "; ") + r.problem;
    }
    out.perSecond = medianOf(rate);
    out.p50ms = medianOf(p50);
    out.p99ms = medianOf(p99);
    out.clientCpuUs = medianOf(cli);
    out.serverCpuUs = medianOf(srv);
    return out;
}

void printSection(const std::vector<Row>& rows, const std::string& section, const std::string& title, const char* unit)
{
    std::printf("\n%s\n", title.c_str());
    std::printf("%-36s %5s %9s %7s %7s %7s %7s %7s  %s\n", "mode", "conns", unit, "p50 ms", "p99 ms", "replays",
        "cli us", "srv us", "each run (/s)");
    std::vector<std::string> problems;
    int lastConns = -1;
    for (const auto& row : rows) {
        if (row.section != section)
            continue;
        if (lastConns != -1 && row.connections != lastConns)
            std::printf("\n");
        lastConns = row.connections;
        const RunResult m = median(row.runs);
        std::string each;
        for (const auto& r : row.runs) {
            if (!each.empty())
                each += ' ';
            each += std::to_string(static_cast<long long>(r.perSecond + 0.5));
        }
        const double replayShare
            = m.requests ? 100.0 * static_cast<double>(m.replayed) / static_cast<double>(m.requests) : 0;
        char srv[32] = "n/a";
        if (m.serverCpuUs >= 0)
            std::snprintf(srv, sizeof srv, "%.0f", m.serverCpuUs);
        std::printf("%-36s %5d %9.0f %7.2f %7.2f %6.1f%% %7.0f %7s  %s%s\n", row.label.c_str(), row.connections,
            m.perSecond, m.p50ms, m.p99ms, replayShare, m.clientCpuUs, srv, each.c_str(),
            m.problem.empty() ? "" : "  !");
        if (!m.problem.empty())
            problems.push_back(row.label + " @" + std::to_string(row.connections) + ": " + m.problem);
    }
    for (const auto& p : problems)
        std::printf("  ! %s\n", p.c_str());
    std::fflush(stdout);
}

double rateOf(const std::vector<Row>& rows, const std::string& section, const std::string& label, int connections)
{
    for (const auto& row : rows)
        if (row.section == section && row.label == label && row.connections == connections)
            return median(row.runs).perSecond;
    return 0;
}

void printRatio(const std::string& what, double num, double den, const std::string& target)
{
    if (num <= 0 || den <= 0) {
        std::printf("  %-52s   n/a\n", what.c_str());
        return;
    }
    std::printf("  %-52s %6.2fx   %s\n", what.c_str(), num / den, target.c_str());
}

} // namespace idem::bench
