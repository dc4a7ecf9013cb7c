// idemctl fencing: proof that fencing works, and the lease advisor (schema v31,
// operations/fencing.h).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/fencing.h"

namespace idem::cli {

namespace {

    constexpr const char* fencingHelp
        = R"(Usage: idemctl fencing [--minutes N] [--limit N] [--json] [--dsn DSN] [--schema S]

Proof that fencing works, and the lease advisor. A worker whose lease ran out while it still
worked loses the key to another claim (a takeover); its late complete, fail, heartbeat or fence
is then refused (a stale token): the fence held, and the other attempt's outcome stands. Over the
last N minutes, per operation: the takeovers and the late calls refused (as the workers'
libraries counted and flushed them), the run time's p50, p95 and p99 (from the latency
histograms, within 3.7 %), the lease the claims asked for (schema v31 records it), and how many
of the succeeded attempts ran longer than their lease, as a sentence:
  charge: p99 run time 41 s exceeds the 30 s lease: 3.1 % of attempts outlive their lease
Then per worker (the application_name its library flushed its counters under): its takeovers
and its late calls refused. What to do: docs/operators-guide.md, "Fencing and leases".

  --minutes N  the window, the last N minutes (default 60, 1 to 1440)
  --limit N    operations and workers listed at most, each (default 50, 1 to 1000)
  --json       the figures as JSON
Needs idem_reader. Exit 3 when the schema predates v31 (idemctl migrate).
)";

    std::string safe(const std::string& s, std::size_t n = 100) { return displaySafe(s, n); }

    std::string count(std::int64_t n) { return std::to_string(n); }

} // namespace

int runFencing(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema", "minutes", "limit" }, { "json", "help" });
    if (args.flag("help")) {
        std::cout << fencingHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("fencing takes no positional argument");
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    const int minutes = static_cast<int>(args.intValue("minutes", defaultFencingMinutes, 1, maxFencingMinutes));
    const int limit = static_cast<int>(args.intValue("limit", defaultFencingLimit, 1, 1000));
    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl fencing" });
    const auto r = readFencing(*conn, schema, minutes, limit, 5000);
    if (!r.available) {
        std::cerr << "idemctl fencing: schema " << schema.name()
                  << " predates v31, which records the leases and the workers' refused calls (idemctl migrate)\n";
        return ExitRefused;
    }
    if (args.flag("json")) {
        auto doc = nlohmann::json::parse(fencingJson(r));
        doc["schema"] = schema.name();
        std::cout << doc.dump(2) << '\n';
        return ExitOk;
    }
    std::printf("fencing in the last %d min (as of %s): %s takeovers of expired leases, %s late calls refused\n",
        r.minutes, formatMicros(r.asOfUs).c_str(), count(r.takeovers).c_str(), count(r.refused).c_str());
    if (r.refused > 0)
        std::printf(
            "  the fence held: each refused call's attempt had lost its key, and its transaction was rolled back\n");
    if (r.operations.empty())
        std::printf("no takeovers, refused calls or run times in the window\n");
    else {
        std::printf("\n%-24s %10s %8s %8s %10s %10s %10s %9s\n", "operation", "takeovers", "refused", "runs", "p50",
            "p99", "lease", "overrun");
        for (const auto& o : r.operations) {
            const auto p = o.overrunPercent();
            char percent[32] = "-";
            if (p)
                std::snprintf(percent, sizeof percent, "%.1f %%", *p);
            std::printf("%-24s %10lld %8lld %8lld %10s %10s %10s %9s\n", safe(o.operation, 24).c_str(),
                static_cast<long long>(o.takeovers), static_cast<long long>(o.refused), static_cast<long long>(o.runs),
                o.runP50Ms ? fencingDuration(*o.runP50Ms).c_str() : "-",
                o.runP99Ms ? fencingDuration(*o.runP99Ms).c_str() : "-",
                o.leaseMs ? fencingDuration(static_cast<double>(*o.leaseMs)).c_str() : "-", percent);
        }
        if (r.operationsOmitted > 0)
            std::printf("(%lld more operations: --limit)\n", static_cast<long long>(r.operationsOmitted));
        std::printf("\nlease advice:\n");
        for (const auto& o : r.operations) {
            FencingOperation shown = o;
            shown.operation = safe(o.operation, 64);
            std::printf("  %s%s\n", o.leaseTooShort() ? "! " : "", leaseAdvice(shown).c_str());
        }
    }
    if (!r.workers.empty()) {
        std::printf("\n%-32s %-24s %10s %8s\n", "worker", "operation", "takeovers", "refused");
        for (const auto& w : r.workers)
            std::printf("%-32s %-24s %10lld %8lld\n", safe(w.worker, 32).c_str(), safe(w.operation, 24).c_str(),
                static_cast<long long>(w.takeovers), static_cast<long long>(w.refused));
        if (r.workersOmitted > 0)
            std::printf("(%lld more workers: --limit)\n", static_cast<long long>(r.workersOmitted));
    }
    return ExitOk;
}

} // namespace idem::cli
