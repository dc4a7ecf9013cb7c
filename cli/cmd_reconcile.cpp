// idemctl reconcile add | list | remove | run: continuous reconciliation (schema v30,
// operations/reconcile.h).
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/duration.h"
#include "operations/reconcile.h"

namespace idem::cli {

namespace {

    constexpr const char* reconcileHelp = R"(Usage: idemctl reconcile add --operation O --query SQL --reason TEXT [--sample N]
                              [--window-seconds S] [--every-seconds S] [--timeout-ms MS]
                              [--actor NAME] [--json] [--dsn DSN] [--schema S]
       idemctl reconcile list [--operation O [--runs N]] [--json] [--dsn DSN] [--schema S]
       idemctl reconcile remove --operation O --reason TEXT [--actor NAME] [--json] [--dsn DSN] [--schema S]
       idemctl reconcile run [--operation O] [--force] [--runner NAME] [--json] [--dsn DSN] [--schema S]

Checks business effects against the records continuously: per operation, a probe counts the
effect of one succeeded key in the business tables, e.g.
  SELECT count(*) FROM shop.payments WHERE order_id = $1
where $1 is the key's business id (the part of tenant:operation:business_id after the second
':'), always a bound parameter. Exactly one effect is ok; none is missing; more than one is
duplicated. The exporter runs the probes that are due (idemctl exporter, --no-reconcile to
not), and so does `reconcile run`; the console's dashboard, idemctl stats and the incident
snapshot show the last run of each.

add      registers (or replaces) the operation's probe; the first run is due at once. The query
         must be one SELECT (or WITH ... SELECT) returning one integer, naming $1 and no other
         parameter. One audit entry (action reconcile_probe). Only the owner of the Idem schema
         may register or remove probes (another role: exit 3).
  --sample N           keys a run samples at most, newest first (default 500, 1 to 1000)
  --window-seconds S   keys that succeeded in the last S seconds (default 3600, 60 to 2592000)
  --every-seconds S    a run this often (default 300, 60 to 86400)
  --timeout-ms MS      each query's statement timeout (default 1000, 10 to 60000)
list     every probe and its last run: sampled, ok, missing, duplicated, errors and the keys that
         were not ok (at most 50); with --operation and --runs N (1 to 100), that probe's last N
         runs. Needs idem_reader.
remove   removes the operation's probe and its runs (audited; exit 3 when it has none).
run      runs the operation's probe now if it is due (with --force: whether due or not), or,
         without --operation, every probe that is due, once each. Each query runs as role
         idem_reconcile in a READ ONLY transaction under the probe's statement timeout; a result
         other than one row of one integer is that key's error, and a run stops after 5 errors.
         Needs idem_reconcile (GRANT idem_reconcile TO the login), which also needs SELECT on the
         business tables the queries read. --runner names the runner in the run's record
         (default: idemctl on this host). Exit 1 when a run found a key that is not ok (missing,
         duplicated or its query failed), 0 when every key sampled was ok or nothing was due.
)";

    std::string safe(const std::string& s, std::size_t n = 200) { return displaySafe(s, n); }

    nlohmann::json offendersJson(const std::vector<ReconcileOffender>& list)
    {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& o : list)
            out.push_back(o.count ? nlohmann::json { { "key", o.key }, { "count", *o.count } }
                                  : nlohmann::json { { "key", o.key }, { "error", o.error } });
        return out;
    }

    nlohmann::json runJson(const ReconcileRun& r)
    {
        return { { "id", r.id }, { "operation", r.operation }, { "started_at", formatMicros(r.startedAtUs) },
            { "finished_at", r.finishedAtUs ? nlohmann::json(formatMicros(*r.finishedAtUs)) : nlohmann::json(nullptr) },
            { "runner", r.runner }, { "sample_size", r.sampleSize }, { "sampled", r.sampled }, { "ok", r.ok },
            { "missing", r.missing }, { "duplicated", r.duplicated }, { "errors", r.errors },
            { "offenders", offendersJson(r.offenders) },
            { "problem", r.problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.problem) } };
    }

    nlohmann::json probeJson(const ReconcileProbe& p)
    {
        return { { "operation", p.operation }, { "query", p.query }, { "sample_size", p.sampleSize },
            { "window_seconds", p.windowSeconds }, { "every_seconds", p.everySeconds }, { "timeout_ms", p.timeoutMs },
            { "created_at", formatMicros(p.createdAtUs) }, { "created_by", p.createdBy },
            { "next_run_at", formatMicros(p.nextRunAtUs) } };
    }

    void printOffenders(const ReconcileRun& r)
    {
        for (const auto& o : r.offenders) {
            if (!o.count)
                std::printf("    error        %s: %s\n", safe(o.key).c_str(), safe(o.error, 300).c_str());
            else if (*o.count == 0)
                std::printf("    no effect    %s\n", safe(o.key).c_str());
            else
                std::printf("    %lld effects    %s\n", static_cast<long long>(*o.count), safe(o.key).c_str());
        }
        const auto notOk = r.missing + r.duplicated + r.errors;
        if (notOk > static_cast<std::int64_t>(r.offenders.size()))
            std::printf("    (%lld more not listed: a run keeps the first %zu)\n",
                static_cast<long long>(notOk - static_cast<std::int64_t>(r.offenders.size())), r.offenders.size());
    }

    void printRun(const ReconcileRun& r, std::int64_t nowUs)
    {
        const auto at = r.finishedAtUs.value_or(r.startedAtUs);
        std::printf("  %s\n", safe(reconcileRunSentence(r), 1200).c_str());
        std::printf("    run %lld by %s, %s ago%s\n", static_cast<long long>(r.id), safe(r.runner).c_str(),
            formatDuration(static_cast<double>(std::max<std::int64_t>(0, nowUs - at)) / 1000.0).c_str(),
            r.finishedAtUs ? "" : " (not finished)");
        printOffenders(r);
    }

    int refused(const char* verb, const pqxx::sql_error& e)
    {
        const std::string state = dynamic_cast<const pqxx::insufficient_privilege*>(&e) ? std::string("42501") : e.sqlstate();
        if (state == "42501")
            std::cerr << "idemctl reconcile " << verb << ": refused (SQLSTATE 42501): "
                      << (std::string(verb) == "run" ? "running probes needs idem_reconcile (GRANT idem_reconcile TO "
                                                       "the login)"
                                                     : "only the owner of the Idem schema registers or removes probes")
                      << "; nothing changed\n";
        else
            std::cerr << "idemctl reconcile " << verb << ": refused (SQLSTATE " << state
                      << "): " << displaySafe(e.what(), messageDisplay) << "nothing changed\n";
        return ExitRefused;
    }

    int add(const Args& args, const SchemaName& schema)
    {
        ReconcileProbeSpec s;
        const auto op = args.value("operation");
        const auto query = args.value("query");
        const auto reason = args.value("reason");
        if (!op || !query || !reason)
            throw UsageError("reconcile add needs --operation, --query and --reason");
        s.operation = *op;
        s.query = *query;
        s.reason = *reason;
        s.actor = args.valueOr("actor", localActor());
        s.sampleSize = static_cast<int>(args.intValue("sample", 500, 1, 1000));
        s.windowSeconds = static_cast<int>(args.intValue("window-seconds", 3600, 60, 2592000));
        s.everySeconds = static_cast<int>(args.intValue("every-seconds", 300, 60, 86400));
        s.timeoutMs = static_cast<int>(args.intValue("timeout-ms", 1000, 10, 60000));
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl reconcile" });
        ReconcileProbeAdded a;
        try {
            a = addReconcileProbe(*conn, schema, s);
        } catch (const pqxx::sql_error& e) {
            if (e.sqlstate() != "ID003" && !dynamic_cast<const pqxx::insufficient_privilege*>(&e))
                throw;
            return refused("add", e);
        }
        if (args.flag("json")) {
            std::cout << nlohmann::json({ { "schema", schema.name() }, { "audit_id", a.auditId },
                                            { "replaced", a.replaced }, { "operation", s.operation } })
                             .dump(2)
                      << '\n';
            return ExitOk;
        }
        std::printf("%s the reconcile probe of %s (audit entry %lld): %d keys of the last %s, every %s; the first run "
                    "is due now\n",
            a.replaced ? "replaced" : "registered", safe(s.operation, 70).c_str(), static_cast<long long>(a.auditId),
            s.sampleSize, formatDuration(s.windowSeconds * 1000.0).c_str(),
            formatDuration(s.everySeconds * 1000.0).c_str());
        return ExitOk;
    }

    int remove(const Args& args, const SchemaName& schema)
    {
        const auto op = args.value("operation");
        const auto reason = args.value("reason");
        if (!op || !reason)
            throw UsageError("reconcile remove needs --operation and --reason");
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl reconcile" });
        std::int64_t id = 0;
        try {
            id = removeReconcileProbe(*conn, schema, *op, *reason, args.valueOr("actor", localActor()));
        } catch (const ReconcileNotFound& e) {
            std::cerr << "idemctl reconcile remove: " << displaySafe(e.what(), messageDisplay) << '\n';
            return ExitRefused;
        } catch (const pqxx::sql_error& e) {
            if (e.sqlstate() != "ID003" && !dynamic_cast<const pqxx::insufficient_privilege*>(&e))
                throw;
            return refused("remove", e);
        }
        if (args.flag("json")) {
            std::cout << nlohmann::json({ { "schema", schema.name() }, { "audit_id", id }, { "operation", *op } }).dump(2)
                      << '\n';
            return ExitOk;
        }
        std::printf("removed the reconcile probe of %s and its runs (audit entry %lld)\n", safe(*op, 70).c_str(),
            static_cast<long long>(id));
        return ExitOk;
    }

    int list(const Args& args, const SchemaName& schema)
    {
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl reconcile" });
        if (args.value("runs")) {
            const auto op = args.value("operation");
            if (!op)
                throw UsageError("--runs needs --operation");
            const int n = static_cast<int>(args.intValue("runs", 10, 1, 100));
            const auto runs = listReconcileRuns(*conn, schema, *op, n);
            const auto now = readReconcile(*conn, schema).serverNowUs;
            if (args.flag("json")) {
                nlohmann::json out = nlohmann::json::array();
                for (const auto& r : runs)
                    out.push_back(runJson(r));
                std::cout << nlohmann::json({ { "schema", schema.name() }, { "runs", out } }).dump(2) << '\n';
                return ExitOk;
            }
            if (runs.empty())
                std::printf("no runs of %s's probe yet\n", safe(*op, 70).c_str());
            for (const auto& r : runs)
                printRun(r, now);
            return ExitOk;
        }
        if (args.value("operation"))
            throw UsageError("--operation goes with --runs in reconcile list");
        const auto reading = readReconcile(*conn, schema);
        if (args.flag("json")) {
            nlohmann::json probes = nlohmann::json::array();
            for (const auto& s : reading.probes) {
                auto p = probeJson(s.probe);
                p["last_run"] = s.last ? runJson(*s.last) : nlohmann::json(nullptr);
                probes.push_back(std::move(p));
            }
            std::cout << nlohmann::json({ { "schema", schema.name() }, { "server_now", formatMicros(reading.serverNowUs) },
                                            { "sampled", reading.sampled() }, { "missing", reading.missing() },
                                            { "duplicated", reading.duplicated() }, { "errors", reading.errors() },
                                            { "probes", probes } })
                             .dump(2)
                      << '\n';
            return ExitOk;
        }
        if (reading.probes.empty()) {
            std::printf("no reconcile probes (idemctl reconcile add registers one)\n");
            return ExitOk;
        }
        for (const auto& s : reading.probes) {
            const auto& p = s.probe;
            const auto dueIn = p.nextRunAtUs - reading.serverNowUs;
            std::printf("%s: %d keys of the last %s, every %s, timeout %d ms; next run %s\n", safe(p.operation, 70).c_str(),
                p.sampleSize, formatDuration(p.windowSeconds * 1000.0).c_str(),
                formatDuration(p.everySeconds * 1000.0).c_str(), p.timeoutMs,
                dueIn <= 0 ? "due now" : ("in " + formatDuration(static_cast<double>(dueIn) / 1000.0)).c_str());
            std::printf("  query: %s\n", safe(p.query, 4000).c_str());
            if (s.last)
                printRun(*s.last, reading.serverNowUs);
            else
                std::printf("  not run yet\n");
        }
        return ExitOk;
    }

    int run(const Args& args, const SchemaName& schema)
    {
        const auto op = args.value("operation");
        if (args.flag("force") && !op)
            throw UsageError("--force needs --operation");
        const std::string runner = args.valueOr("runner", "idemctl reconcile run");
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl reconcile" });
        std::vector<ReconcileRun> runs;
        try {
            if (op) {
                if (auto r = runReconcileProbe(*conn, schema, op, args.flag("force"), runner))
                    runs.push_back(std::move(*r));
            } else {
                // Each due probe once: a run moves its probe's next run a period ahead.
                for (int i = 0; i < maxReconcileProbes; ++i) {
                    auto r = runReconcileProbe(*conn, schema, std::nullopt, false, runner);
                    if (!r)
                        break;
                    runs.push_back(std::move(*r));
                }
            }
        } catch (const ReconcileNotFound& e) {
            std::cerr << "idemctl reconcile run: " << displaySafe(e.what(), messageDisplay) << '\n';
            return ExitRefused;
        } catch (const pqxx::sql_error& e) {
            if (e.sqlstate() != "ID003" && !dynamic_cast<const pqxx::insufficient_privilege*>(&e))
                throw;
            return refused("run", e);
        }
        // A script (or cron) that runs the probes learns from the exit status that one found keys
        // that are not ok, as `idemctl verify` tells it: 1, whatever the output's form.
        const bool allOk = std::all_of(
            runs.begin(), runs.end(), [](const ReconcileRun& r) { return !r.missing && !r.duplicated && !r.errors; });
        const int status = allOk ? ExitOk : ExitFailure;
        if (args.flag("json")) {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& r : runs)
                out.push_back(runJson(r));
            std::cout << nlohmann::json({ { "schema", schema.name() }, { "runs", out } }).dump(2) << '\n';
            return status;
        }
        if (runs.empty())
            std::printf(op ? "the probe of %s is not due yet (--force runs it now)\n" : "no probe is due%s\n",
                op ? safe(*op, 70).c_str() : "");
        for (const auto& r : runs) {
            std::printf("%s\n", safe(reconcileRunSentence(r), 1200).c_str());
            printOffenders(r);
        }
        return status;
    }

} // namespace

int runReconcile(const std::vector<std::string>& argv)
{
    Args args(argv,
        { "dsn", "schema", "operation", "query", "reason", "actor", "sample", "window-seconds", "every-seconds",
            "timeout-ms", "runs", "runner" },
        { "json", "help", "force" });
    if (args.flag("help") || args.positional().empty()) {
        std::cout << reconcileHelp;
        return args.flag("help") ? ExitOk : ExitUsage;
    }
    if (args.positional().size() != 1)
        throw UsageError("reconcile takes one of add, list, remove, run");
    const std::string verb = args.positional()[0];
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    if (verb == "add")
        return add(args, schema);
    if (verb == "list")
        return list(args, schema);
    if (verb == "remove")
        return remove(args, schema);
    if (verb == "run")
        return run(args, schema);
    throw UsageError("reconcile takes one of add, list, remove, run, not '" + verb + "'");
}

} // namespace idem::cli
