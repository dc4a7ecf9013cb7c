// idemctl latency: run time, time to success and attempts per operation (schema v17,
// operations/latency.h).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/key.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/duration.h"
#include "operations/events.h"
#include "operations/latency.h"

namespace idem::cli {

namespace {

    constexpr const char* latencyHelp = R"(Usage: idemctl latency [--minutes N] [--tenant T] [--operation O] [--all] [--per-minute]
                      [--json] [--dsn DSN] [--schema S]

Latency per operation over the last N folded minutes (default 60, 1 to 44640), by the server's
clock, for every worker (the library and the SQL API alike):
  run       each attempt, from the claim that acquired or took over its key to complete() or
            fail() (an attempt whose lease ran out with no outcome has no run time)
  to success each key, from its first claim to complete(), across retries and takeovers
  attempts  the attempts a success took
p50, p95 and p99 are nearest-rank percentiles from log-spaced histograms, each within 3.7 % of
the exact value (attempts: exact). A minute is folded, and shown, once it has been closed for a
minute; a completion committed more than a minute after complete() ran is not counted. This
command folds what is due first.

  --tenant T      only keys of tenant T        --operation O   only operation O
  --all           one figure for everything selected instead of one per operation
  --per-minute    one figure per minute
  --json          an object with the window, server_now and figures (durations in ms)
Needs idem_reader.
)";

    std::string figure(const LatencyHistogram& h, double v)
    {
        if (h.kind != LatencyKind::Attempts)
            return formatDuration(v, DurationForm::Precise);
        char b[32];
        std::snprintf(b, sizeof b, "%.3g", v);
        return b;
    }

    const char* kindLabel(LatencyKind k)
    {
        switch (k) {
        case LatencyKind::Run:
            return "run";
        case LatencyKind::TimeToSuccess:
            return "to success";
        case LatencyKind::Attempts:
            return "attempts";
        }
        return "";
    }

    constexpr const char* annotateHelp = R"(Usage: idemctl annotate --text TEXT [--tenant T] [--operation O] [--actor NAME] [--json]
                       [--dsn DSN] [--schema S]

Marks the time axis of the console's charts and `idemctl events` with TEXT (a deploy, a vendor's
incident, a configuration change), now by the server's clock, for a tenant, an operation or all
('*', the default for either). One audit entry (action annotate), on the same hash chain as the
recovery actions; TEXT follows their reason rules. Needs idem_operator.
)";

    constexpr const char* eventsHelp = R"(Usage: idemctl events [--minutes N] [--tenant T] [--operation O] [--limit N] [--json]
                     [--dsn DSN] [--schema S]

The events of the last N minutes (default 60, 1 to 44640) that explain a change in a chart,
oldest first: recovery actions (requeue, release, fail), retention changes and purges, pauses and
resumes, annotations, and deploys (a worker reporting a version the fleet had not run before:
the worker, the old and the new version), and failovers (schema v20: a new primary's timeline
after another one, first seen by any client), each with the tenant and operation it concerns ('*':
all) and its text. With --tenant or --operation, only those concerning them ('*' included). At
most --limit (default 1000) of each kind (operator actions, deploys, failovers), its newest when
it has more, so workers' reports never crowd an operator's action out; a last line says how many
each kind left out (--json: "truncated" and "omitted"). Needs idem_reader.
)";

} // namespace

int runAnnotate(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema", "text", "tenant", "operation", "actor" }, { "json", "help" });
    if (args.flag("help")) {
        std::cout << annotateHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("annotate takes no positional argument");
    Annotation a;
    a.text = args.valueOr("text", "");
    a.actor = args.valueOr("actor", "");
    a.tenant = args.valueOr("tenant", "*");
    a.operation = args.valueOr("operation", "*");
    try {
        validateReasonAndActor(a.text, a.actor);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--text: ") + e.what());
    }
    for (const auto& [name, value] : { std::pair { "tenant", &a.tenant }, std::pair { "operation", &a.operation } })
        if (!(*value == "*" || isKeyName(*value)))
            throw UsageError(std::string("--") + name + " must be '*' or 1 to 64 visible ASCII characters without ':', not '"
                + quoteForMessage(*value) + "'");
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl annotate" });
    const auto e = annotate(*conn, schema, a);
    if (args.flag("json")) {
        std::cout << nlohmann::json({ { "audit_id", e.auditId }, { "at", formatMicros(e.atUs) }, { "tenant", e.tenant },
                                        { "operation", e.operation }, { "text", e.text }, { "actor", e.actor } })
                         .dump(2)
                  << '\n';
        return ExitOk;
    }
    std::printf("annotated %s:%s at %s (audit entry %lld)\n", displaySafe(e.tenant, 70).c_str(),
        displaySafe(e.operation, 70).c_str(), formatMicros(e.atUs).c_str(), static_cast<long long>(e.auditId));
    return ExitOk;
}

int runEvents(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema", "minutes", "tenant", "operation", "limit" }, { "json", "help" });
    if (args.flag("help")) {
        std::cout << eventsHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("events takes no positional argument");
    const auto minutes = args.intValue("minutes", 60, 1, 44640);
    const int limit = static_cast<int>(args.intValue("limit", 1000, 1, 10000));
    const std::string tenant = args.valueOr("tenant", "");
    const std::string operation = args.valueOr("operation", "");
    for (const auto& [name, value] : { std::pair { "tenant", &tenant }, std::pair { "operation", &operation } })
        if (args.value(name) && !isKeyName(*value))
            throw UsageError(std::string("--") + name + " must be 1 to 64 visible ASCII characters without ':', not '"
                + quoteForMessage(*value) + "'");
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl events" });
    std::int64_t nowUs = 0;
    {
        pqxx::read_transaction tx(*conn);
        // pg_catalog's operators, not a shadow planted on the caller's path (tst_lowroles).
        tx.exec("SELECT pg_catalog.set_config('search_path', 'pg_catalog', true)");
        nowUs = tx.exec("SELECT " + updatedAtMicrosSql("clock_timestamp()")).at(0)[0].as<std::int64_t>();
    }
    const auto list = readEvents(*conn, schema, nowUs - minutes * 60'000'000, nowUs + 1, tenant, operation, limit);
    const auto& events = list.events;
    if (args.flag("json")) {
        nlohmann::json jsonEvents = nlohmann::json::array();
        for (const auto& e : events) {
            nlohmann::json item { { e.isDeploy() ? "deploy_id" : "audit_id", e.auditId },
                { "at", formatMicros(e.atUs) }, { "action", e.action }, { "tenant", e.tenant },
                { "operation", e.operation }, { "actor", e.actor }, { "text", e.text } };
            if (e.isDeploy()) {
                item["worker"] = e.worker;
                item["old_version"] = e.oldVersion.empty() ? nlohmann::json() : nlohmann::json(e.oldVersion);
                item["new_version"] = e.newVersion;
            }
            jsonEvents.push_back(std::move(item));
        }
        // What each source's bound (--limit, its newest events) left out; null when the server
        // (before schema v24) cannot count it.
        const auto count = [&](std::int64_t n) { return list.omittedUncounted ? nlohmann::json() : nlohmann::json(n); };
        std::cout << nlohmann::json({ { "server_now", formatMicros(nowUs) }, { "minutes", minutes },
                                        { "limit", limit }, { "truncated", list.truncated() },
                                        { "omitted",
                                            { { "audit", count(list.omittedAudit) },
                                                { "deploy", count(list.omittedDeploys) },
                                                { "failover", count(list.omittedFailovers) } } },
                                        { "events", jsonEvents } })
                         .dump(2)
                  << '\n';
        return ExitOk;
    }
    if (events.empty()) {
        std::printf("no event in the last %lld min (server time %s)\n", minutes, formatMicros(nowUs).c_str());
        return ExitOk;
    }
    for (const auto& e : events)
        std::printf("%s  %-9s %s:%s  %s: %s\n", formatMicros(e.atUs).substr(0, 19).c_str(), e.action.c_str(),
            displaySafe(e.tenant, 40).c_str(), displaySafe(e.operation, 40).c_str(), displaySafe(e.actor, 60).c_str(),
            displaySafe(e.text, 300).c_str());
    if (list.omittedUncounted)
        std::printf("more events not listed: the list is full (--limit %d) and this server (before schema v24) does"
                    " not count the rest; narrow the window or raise --limit\n",
            limit);
    else if (list.truncated())
        std::printf("%lld more events not listed (%lld operator actions, %lld deploys, %lld failovers): each kind shows"
                    " its newest %d (--limit); narrow the window or raise --limit\n",
            static_cast<long long>(list.omitted()), static_cast<long long>(list.omittedAudit),
            static_cast<long long>(list.omittedDeploys), static_cast<long long>(list.omittedFailovers), limit);
    return ExitOk;
}

int runLatency(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema", "minutes", "tenant", "operation" }, { "json", "help", "all", "per-minute" });
    if (args.flag("help")) {
        std::cout << latencyHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("latency takes no positional argument");
    LatencyQuery q;
    q.minutes = static_cast<int>(args.intValue("minutes", 60, 1, 44640));
    q.tenant = args.valueOr("tenant", "");
    q.operation = args.valueOr("operation", "");
    q.byOperation = !args.flag("all");
    q.perMinute = args.flag("per-minute");
    for (const auto* name : { "tenant", "operation" })
        if (const auto v = args.value(name); v && (v->empty() || !isKeyName(*v)))
            throw UsageError(std::string("--") + name + " must be 1 to 64 visible ASCII characters without ':', not '"
                + quoteForMessage(*v) + "'");
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl latency" });
    const auto report = readLatency(*conn, schema, q);

    if (args.flag("json")) {
        nlohmann::json figures = nlohmann::json::array();
        for (const auto& h : report.histograms) {
            nlohmann::json f { { "operation", h.operation }, { "kind", latencyKindName(h.kind) }, { "count", h.count },
                { "mean", h.mean }, { "p50", h.p50 }, { "p95", h.p95 }, { "p99", h.p99 },
                { "unit", h.kind == LatencyKind::Attempts ? "attempts" : "ms" } };
            if (h.minuteUs)
                f["minute"] = formatMicros(*h.minuteUs);
            figures.push_back(std::move(f));
        }
        nlohmann::json j { { "schema", schema.name() }, { "from", formatMicros(report.fromUs) },
            { "to", formatMicros(report.toUs) }, { "server_now", formatMicros(report.serverNowUs) },
            { "minutes", q.minutes }, { "tenant", q.tenant.empty() ? nlohmann::json() : nlohmann::json(q.tenant) },
            { "operation", q.operation.empty() ? nlohmann::json() : nlohmann::json(q.operation) },
            { "figures", figures } };
        std::cout << j.dump(2) << '\n';
        return ExitOk;
    }

    std::printf("latency from %s to %s (server time %s; minutes after that are not folded yet)\n",
        formatMicros(report.fromUs).c_str(), formatMicros(report.toUs).c_str(),
        formatMicros(report.serverNowUs).c_str());
    if (report.histograms.empty()) {
        std::printf("no attempt completed or failed in that window%s%s\n", q.tenant.empty() ? "" : " for tenant ",
            q.tenant.c_str());
        return ExitOk;
    }
    std::printf("\n%s%-17s %-11s %9s %10s %10s %10s %10s\n", q.perMinute ? "minute (UTC)      " : "", "operation", "",
        "count", "mean", "p50", "p95", "p99");
    for (const auto& h : report.histograms) {
        const std::string minute = h.minuteUs ? formatMicros(*h.minuteUs).substr(0, 16) + "  " : "";
        std::printf("%s%-17s %-11s %9lld %10s %10s %10s %10s\n", minute.c_str(), displaySafe(h.operation, 17).c_str(),
            kindLabel(h.kind), static_cast<long long>(h.count), figure(h, h.mean).c_str(), figure(h, h.p50).c_str(),
            figure(h, h.p95).c_str(), figure(h, h.p99).c_str());
    }
    return ExitOk;
}

} // namespace idem::cli
