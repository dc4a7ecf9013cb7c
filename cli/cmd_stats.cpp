#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/metrics.h"
#include "core/connection.h"
#include "core/timeline.h"
#include "core/utf8.h"
#include "operations/stats.h"

namespace idem::cli {

namespace {
    constexpr const char* statsHelp = R"(Usage: idemctl stats [--dsn DSN] [--schema S] [--window MIN] [--long-after MIN]
                     [--tenant T] [--operation O] [--timeout-ms MS] [--exact] [--no-refresh]
                     [--json | --prometheus]

Prints the figures the console's dashboard shows, each with what it is. Row figures are counted
up to 10,000 rows each through their own index (a tick's cost does not grow with the table);
one that reached the cap is a lower bound ("at least 10000"), shown beside the exact count of
the shared exact refresh and its age. The bounded figures are shared by every reader of the
database for about a second; the exact refresh runs at most once per period (50x its cost,
20 s to 15 min) for everyone, and this command runs it when it is due and nobody else is.
Counter figures are sums of the per-minute counters (over all tenants from their totals);
total rows is the planner's estimate. Nothing here scans succeeded rows.

  --dsn DSN         libpq conninfo, URI or service=NAME (default: $IDEM_DSN, then PG* variables);
                    a standby works (replication lag is shown; row figures and lease
                    expiry are as of its replay point)
  --schema S        schema holding the Idem tables (default: idem)
  --window MIN      minutes of counters for the duplicate ratio and the sums (default: 15)
  --long-after MIN  an unfinished task first seen this long ago is long-unfinished (default: 60)
  --tenant T        only keys of this tenant
  --operation O     only keys of this operation
  --timeout-ms MS   statement timeout (default: 5000)
  --exact           count every row figure exactly now: one pass over the unfinished rows
                    (what the shared refresh does; at 10M rows with 300k unfinished ~0.5 s)
  --no-refresh      never run the shared exact refresh, even when it is due
  --json            one JSON object, a field per figure
  --prometheus      Prometheus text exposition format

The audit head (the newest audit entry's id and hash, printed as ID:HASH, the form
`idemctl audit verify --expect-head` takes) is the whole trail's, whatever the filter. Ids only
grow: a scraper that alerts when idem_audit_head_id decreases is a witness that nobody removed
the newest entries, which no hash chain shows from the inside.
)";

    StatsOptions optionsFrom(const Args& args)
    {
        StatsOptions options;
        options.windowMinutes = static_cast<int>(args.intValue("window", 15, 1, 7 * 24 * 60));
        options.longUnfinishedAfterMinutes = static_cast<int>(args.intValue("long-after", 60, 1, 365 * 24 * 60));
        options.statementTimeoutMs = static_cast<int>(args.intValue("timeout-ms", 5000, 1, 3'600'000));
        options.tenant = args.value("tenant");
        options.operation = args.value("operation");
        return options;
    }

    // The figures as the dashboard reads them. A reader of the primary records a timeline it is
    // the first to see (schema v20), as the console and the exporter do: a failover found here is
    // marked on every console's charts. The figures are printed whatever this says.
    struct Reading {
        StatsReading s;
        ReadStatsOptions how;
        bool ownExact = false; // a session holds the shared exact refresh past its due time: counted here
    };

    Reading read(pqxx::connection& conn, const SchemaName& schema, const StatsOptions& options, const Args& args)
    {
        Reading r;
        r.how.exactRows = args.flag("exact");
        r.how.refreshShared = !args.flag("no-refresh") && !r.how.exactRows;
        r.s = readStats(conn, schema, options, r.how);
        r.ownExact = r.s.exactHolder && !r.how.exactRows;
        if (r.ownExact)
            attachExact(r.s, readOwnExact(conn, schema, options, options.statementTimeoutMs));
        if (!r.s.inRecovery) {
            try {
                noteTimeline(conn, schema);
            } catch (const pqxx::undefined_function&) {
                // A schema before v20: there is nothing to record into.
            } catch (const pqxx::sql_error& e) {
                std::cerr << "idemctl stats: cannot record the primary's timeline (the figures follow): " << e.what()
                          << '\n';
            }
        }
        return r;
    }

    nlohmann::json statsJson(const SchemaName& schema, const StatsOptions& options, const Reading& reading)
    {
        const StatsReading& s = reading.s;
        const bool ownExact = reading.ownExact;
        nlohmann::json j = nlohmann::json::object();
        j["schema"] = schema.name();
        j["window_minutes"] = options.windowMinutes;
        j["long_unfinished_after_minutes"] = options.longUnfinishedAfterMinutes;
        j["tenant"] = options.tenant ? nlohmann::json(*options.tenant) : nlohmann::json(nullptr);
        j["operation"] = options.operation ? nlohmann::json(*options.operation) : nlohmann::json(nullptr);
        const auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
        j["processing"] = s.processing;
        j["expired_leases"] = s.expiredLeases;
        j["oldest_processing_age_seconds"] = opt(s.oldestProcessingAgeSeconds);
        j["retryable_failed"] = s.retryableFailed;
        j["uncertain"] = s.uncertain;
        j["failed_permanent"] = s.failedPermanent;
        j["failed_exhausted"] = s.failedExhausted;
        j["long_unfinished"] = s.longUnfinished;
        j["duplicate_ratio"] = opt(s.duplicateRatio);
        j["claims"] = s.claims;
        j["retries"] = s.retries;
        j["failed_retries"] = s.failedRetries;
        j["digest_conflicts"] = s.digestConflicts;
        j["stale_token_rejections"] = s.staleTokenRejections;
        j["total_rows_estimate"] = opt(s.totalRowsEstimate);
        j["as_of"] = s.asOf;
        j["in_recovery"] = s.inRecovery;
        j["replication_lag_seconds"] = opt(s.replicationLagSeconds);
        j["audit_head_id"] = s.auditHeadId;
        j["audit_head_hash"] = s.auditHeadHash.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.auditHeadHash);
        // What each number above is: its quality, when it held, and beside a lower bound the
        // shared refresh's exact count.
        nlohmann::json figures = nlohmann::json::object();
        for (int i = 0; i < figureCount; ++i) {
            const auto f = static_cast<Figure>(i);
            const auto& l = s.label(f);
            nlohmann::json o = { { "value", j[figureKey(f)] }, { "quality", qualityName(l.quality) },
                { "observed_at", l.observedAt } };
            if (l.exact) {
                o["exact"] = *l.exact;
                o["exact_observed_at"] = l.exactAsOf;
                o["exact_age_seconds"] = opt(l.exactAgeSeconds);
            }
            if (!l.source.empty())
                o["source"] = l.source;
            figures[figureKey(f)] = std::move(o);
        }
        j["figures"] = std::move(figures);
        j["cap"] = boundedCountCap;
        j["row_figures"] = { { "observed_at", s.liveTakenAt }, { "shared", s.liveShared },
            { "cost_ms", s.liveCostMs }, { "computations", s.liveComputations } };
        if (s.exact)
            j["exact_refresh"] = { { "taken_at", s.exact->takenAt }, { "age_seconds", s.exact->ageSeconds },
                { "cost_ms", s.exact->costMs }, { "period_seconds", s.exact->periodSeconds },
                { "refreshes", s.exact->refreshes }, { "taken_by", s.exact->takenBy } };
        else
            j["exact_refresh"] = nullptr;
        if (s.exact && ownExact)
            j["exact_refresh"]["counted_by_this_command"] = true;
        j["exact_refresh_holder"] = s.exactHolder
            ? nlohmann::json { { "pid", s.exactHolder->pid }, { "role", s.exactHolder->role },
                  { "application", s.exactHolder->application },
                  { "since", s.exactHolder->since.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.exactHolder->since) } }
            : nlohmann::json(nullptr);
        const auto& r = s.refusedFlushes;
        j["counter_flushes_refused"] = { { "last_24h", r.last24h }, { "kept", r.kept },
            { "last", r.lastAt.empty() ? nlohmann::json(nullptr)
                                       : nlohmann::json { { "at", r.lastAt }, { "role", r.lastRole },
                                             { "application", r.lastApplication },
                                             { "client_addr", r.lastClientAddr.empty() ? nlohmann::json(nullptr)
                                                                                       : nlohmann::json(r.lastClientAddr) },
                                             { "reason", r.lastReason } } } };
        return j;
    }

    std::string prometheusText(const SchemaName& schema, const StatsOptions& options, const StatsReading& s)
    {
        MetricLabels labels { { "schema", schema.name() } };
        if (options.tenant)
            labels.push_back({ "tenant", *options.tenant });
        if (options.operation)
            labels.push_back({ "operation", *options.operation });
        return exposition(statsFamilies(s, labels));
    }

    // The figures, one a line, each with what it is.
    void printFigures(const SchemaName& schema, const StatsOptions& options, const Reading& reading)
    {
        const StatsReading& s = reading.s;
        const ReadStatsOptions& how = reading.how;
        std::printf("Idem stats for schema %s as of %s%s\n", schema.name().c_str(), s.asOf.c_str(),
            s.inRecovery ? " (standby)" : "");
        if (options.tenant || options.operation)
            std::printf("filter: tenant %s, operation %s\n", options.tenant ? options.tenant->c_str() : "(all)",
                options.operation ? options.operation->c_str() : "(all)");
        std::printf(
            "window %d min, long-unfinished after %d min\n\n", options.windowMinutes, options.longUnfinishedAfterMinutes);
        const auto line
            = [](const char* label, const std::string& value) { std::printf("  %-34s %s\n", label, value.c_str()); };
        const auto count = [](std::int64_t v) { return std::to_string(v); };
        // People read the table: one decimal is enough; --json and --prometheus keep full precision.
        const auto fixed1 = [](double v) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.1f", v);
            return std::string(buf);
        };
        const auto optional = [&](const std::optional<double>& v, const char* unit) {
            return v ? fixed1(*v) + unit : std::string("-");
        };
        // "12", or "at least 10000 (exact 312457, 20 s ago)" when the count stopped at the cap.
        const auto figure = [&](Figure f, const std::string& value) {
            const auto& l = s.label(f);
            if (l.quality != FigureQuality::LowerBound)
                return value;
            std::string out = "at least " + value;
            if (l.exact)
                out += " (exact " + (f == Figure::OldestProcessingAge ? fixed1(*l.exact) + " s" : count(std::int64_t(*l.exact)))
                    + ", " + fixed1(l.exactAgeSeconds.value_or(0)) + " s ago)";
            else
                out += " (exact count not taken yet)";
            return out;
        };
        line("processing (live leases)", figure(Figure::Processing, count(s.processing)));
        line("expired leases", figure(Figure::ExpiredLeases, count(s.expiredLeases)));
        line("oldest processing age", figure(Figure::OldestProcessingAge, optional(s.oldestProcessingAgeSeconds, " s")));
        line("retryable failed", figure(Figure::RetryableFailed, count(s.retryableFailed)));
        line("uncertain outcomes", figure(Figure::Uncertain, count(s.uncertain)));
        line("failed, permanent", figure(Figure::FailedPermanent, count(s.failedPermanent)));
        line("failed, exhausted", figure(Figure::FailedExhausted, count(s.failedExhausted)));
        line("long-unfinished (in flight)", figure(Figure::LongUnfinished, count(s.longUnfinished)));
        line("duplicate ratio (window)",
            s.duplicateRatio ? fixed1(*s.duplicateRatio * 100) + " % of " + count(s.claims) + " claims" : std::string("-"));
        line("retries (window)", count(s.retries));
        line("failed retries (window)", count(s.failedRetries));
        line("digest conflicts (window)", count(s.digestConflicts));
        line("stale-token rejections (window)", count(s.staleTokenRejections));
        line("total rows (estimate)", s.totalRowsEstimate ? count(*s.totalRowsEstimate) : std::string("unknown"));
        if (s.inRecovery) {
            line("replication lag", optional(s.replicationLagSeconds, " s"));
            // The row figures hold at the standby's replay point: a lease is live or expired as of
            // then, not by this server's clock.
            line("leases judged as of",
                s.liveTakenAt + (how.exactRows ? " (this server's clock: --exact counts now)" : " (the replay point)"));
        }
        // As `idemctl audit verify --expect-head` takes it.
        line("audit head (whole trail)",
            s.auditHeadId == 0 ? std::string("none (empty trail)") : count(s.auditHeadId) + ':' + s.auditHeadHash);
    }

    // Where the figures came from: the row figures' count, the exact refresh, refused flushes.
    void printSources(const StatsOptions& options, const Reading& reading)
    {
        const StatsReading& s = reading.s;
        const ReadStatsOptions& how = reading.how;
        const bool ownExact = reading.ownExact;
        std::printf("\nrow figures %s, counted %s%s (%.1f ms)\n", s.liveTakenAt.c_str(),
            s.liveShared ? "by the database's shared count" : "by this command",
            s.anyLowerBound() ? "; some stopped at the 10000 cap" : "", s.liveCostMs);
        if (s.exactHolder)
            std::printf("exact refresh held by pid %d (role %s, application %s) since %s, past its due time: %s\n",
                s.exactHolder->pid, idem::displaySafe(s.exactHolder->role, 200).c_str(),
                idem::displaySafe(s.exactHolder->application, 200).c_str(),
                s.exactHolder->since.empty() ? "(not visible to this role)" : s.exactHolder->since.c_str(),
                ownExact ? "exact figures counted by this command" : "the figures above are exact");
        if (s.exact && ownExact)
            std::printf("exact figures %s, counted by this command (%.1f ms)\n", s.exact->takenAt.c_str(), s.exact->costMs);
        else if (s.exact)
            std::printf("exact refresh %s (%.0f s ago, cost %.1f ms, every %.0f s; %lld so far)\n",
                s.exact->takenAt.c_str(), s.exact->ageSeconds, s.exact->costMs, s.exact->periodSeconds,
                static_cast<long long>(s.exact->refreshes));
        else if (!options.tenant && !options.operation && !how.exactRows)
            std::printf("exact refresh: none yet\n");
        if (const auto& r = s.refusedFlushes; !r.lastAt.empty())
            std::printf(
                "counter flushes refused as implausible: %lld in the last 24 h; last at %s by role %s (application %s, "
                "from %s): %s\n",
                static_cast<long long>(r.last24h), r.lastAt.c_str(), idem::displaySafe(r.lastRole, 200).c_str(),
                idem::displaySafe(r.lastApplication, 200).c_str(),
                r.lastClientAddr.empty() ? "local socket" : r.lastClientAddr.c_str(),
                idem::displaySafe(r.lastReason, 200).c_str());
    }

} // namespace

int runStats(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema", "window", "long-after", "tenant", "operation", "timeout-ms" },
        { "json", "prometheus", "help", "exact", "no-refresh" });
    if (args.flag("help")) {
        std::cout << statsHelp;
        return ExitOk;
    }
    if (args.flag("json") && args.flag("prometheus"))
        throw UsageError("--json and --prometheus exclude each other");
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    const StatsOptions options = optionsFrom(args);
    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl stats" });
    const Reading reading = read(*conn, schema, options, args);
    if (args.flag("json"))
        std::cout << statsJson(schema, options, reading).dump(2) << '\n';
    else if (args.flag("prometheus"))
        std::cout << prometheusText(schema, options, reading.s);
    else {
        printFigures(schema, options, reading);
        printSources(options, reading);
    }
    return ExitOk;
}

} // namespace idem::cli
