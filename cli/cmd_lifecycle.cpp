#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/changerequests.h"
#include "operations/jobs.h"
#include "operations/purge.h"
#include "operations/storage.h"

namespace idem::cli {

namespace {
    constexpr const char* purgeHelp
        = R"(Usage: idemctl purge [--dsn DSN] [--schema S] [--dry-run] [--batch N] [--max-seconds S]
                     [--duty F] [--pause-ms MS] [--reason R] [--actor A] [--cap N] [--json]
       idemctl purge --request N --spec SHA256 [--actor A] [--json]

Removes succeeded keys completed longer ago than their operation's retention horizon
(`idemctl retention show`). Processing, retryable and failed rows are never removed. A request
that comes again with a purged key executes again: it is a new key.

Runs in small batches, each its own short transaction: rows a claim or anyone else holds are
skipped, never waited for, and no lock is held longer than 100 ms. Safe to run from two places
at once. Killed, it leaves every finished batch counted; the next run closes the killed one
(its audit entry says "abandoned") and goes on. One audit entry per run (action purge: the
policy, each operation's cutoff, rows removed, the actor). Needs idem_operator. Ctrl-C stops
after the current batch and finishes the run.

  --dsn DSN          libpq conninfo, URI or service=NAME (default: $IDEM_DSN, then PG* variables);
                     connect directly, not through a transaction pooler (the run's session lock)
  --schema S         schema holding the Idem tables (default: idem)
  --dry-run          say what would be removed per operation (counted up to --cap each); change nothing
  --batch N          rows per batch, 1..100000 (default: 1000)
  --max-seconds S    start no batch after S seconds (default: 0, until nothing is due)
  --duty F           batches take at most this share of the time: after a batch of t ms it
                     pauses t*(1-F)/F ms, holding no lock, and so backs off by itself when the
                     database is busy (default: 0.1; 1: full speed, which on a small machine
                     takes CPU from the workers)
  --pause-ms MS      pause at least this long between batches (default: 0)
  --reason R         for the audit entry (default: "idemctl purge")
  --actor A          who is acting, for the audit (default: login@hostname of this process)
  --cap N            --dry-run counts up to N rows per operation (default: 1000000)
  --json             one JSON object at the end
  --request N        run approved purge request N (with --spec, its spec sha256), once

Approval (schema v22): with gated kind 'purge' on (`idemctl approvals policy purge --on`, the
schema owner's), a purge is not run at once: this command requests it (its batch, --max-seconds
and --duty are the request's spec) and prints 'awaiting approval: request N (sha256 ...)'. Another
login with the approve right approves it (`idemctl approvals approve N --spec SHA256`); then
`idemctl purge --request N --spec SHA256` runs it, once, before the approval expires, as it was
approved: the database refuses a larger batch, a batch past --max-seconds or one sooner than the
duty allows (SQLSTATE ID004), so --request takes none of --batch, --max-seconds, --duty or
--pause-ms. Scheduled purges (pg_cron, below) keep running.

Scheduled in the database instead (pg_cron):
  SELECT cron.schedule('idem-purge', '*/10 * * * *', 'CALL idem.idem_purge_run(1000, 300)');
  (batch 1000, at most 300 s, then reason, actor, duty: defaults 'scheduled purge', the
  session's application_name, 0.1)
)";

    constexpr const char* retentionHelp = R"(Usage: idemctl retention show [--dsn DSN] [--schema S] [--json]
       idemctl retention set OPERATION DURATION --reason R [--actor A] [--dsn DSN] [--schema S]
       idemctl retention unset OPERATION --reason R [--actor A] [--dsn DSN] [--schema S]
       idemctl retention apply --request N --spec SHA256 [--actor A] [--dsn DSN] [--schema S]

How long succeeded keys are kept, per operation (the second part of tenant:operation:id), and
the default '*' for every other operation. A retry of a key older than its horizon executes
again: the purge has removed the key it would have replayed.

show    each policy row, with when and by whom it was last changed
set     OPERATION's horizon ('*': the default); DURATION is Nd (days), Nh (hours) or N (days),
        1 hour to 3650 days. One audit entry (action retention). Needs idem_operator.
unset   OPERATION falls back to '*' (which cannot be removed). Audited as set.
apply   applies approved change request N, naming its spec sha256, once.

Approval (schema v22): with gated kind 'retention' on (`idemctl approvals policy retention --on`,
the schema owner's), set and unset change nothing: they request the change and print 'awaiting
approval: request N (sha256 ...)'. Another login with the approve right approves it (`idemctl
approvals approve N --spec SHA256`), then `retention apply`
applies it, before the approval expires. Exit 3 when the database refuses (nothing changed).
)";

    constexpr const char* storageHelp = R"(Usage: idemctl storage [--dsn DSN] [--schema S] [--cap N] [--days N] [--held-after SECONDS]
                       [--no-sample] [--json]

What the Idem tables hold and what a purge would do: table and index sizes, dead tuples and the
last (auto)vacuum of each table, rows by status (the unfinished ones counted up to 10000 each or
the shared exact count; succeeded as the planner's estimate), per operation its horizon, oldest
succeeded key and the rows due for purge (counted up to --cap, default 10000: past it "at least"),
the last purge run and the table's size over time. Nothing is scanned beyond those counts.
The transaction horizon (schema v26): who holds back the oldest snapshot in the database (a
session: pid, role, application, client, state, times, age in time and transaction ids; a
prepared transaction, a replication slot or a standby's feedback), the dead rows the Idem tables
keep meanwhile, the vacuums that removed nothing, and "HELD" when it is held past --held-after
while task_idempotency's dead rows grew since the size sample before it began. Another role's
client and query text show only to a login with pg_read_all_stats.

  --cap N       count due rows up to N per operation (default: 10000)
  --days N      size samples of the last N days (default: 90)
  --held-after SECONDS  a horizon older than this is held (default: 300; 1 to 604800)
  --no-sample   do not take a size sample (one is taken if the last is 15 minutes old)
  --json        one JSON object
)";

    std::atomic<bool> g_stop { false };
    extern "C" void onStopSignal(int) { g_stop = true; }

    nlohmann::json opt(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

    nlohmann::json horizonJson(const HorizonReading& h, const HorizonVerdict& v, double heldAfter)
    {
        if (!h.available)
            return nullptr;
        nlohmann::json holders = nlohmann::json::array();
        for (const auto& x : h.holders)
            holders.push_back({ { "kind", x.kind }, { "pid", x.pid ? nlohmann::json(*x.pid) : nlohmann::json(nullptr) },
                { "role", opt(x.role) }, { "application", x.application }, { "client", opt(x.client) },
                { "state", opt(x.state) }, { "backend_type", opt(x.backendType) }, { "xact_start", opt(x.xactStart) },
                { "query_start", opt(x.queryStart) }, { "xid_age", x.xidAge },
                { "age_seconds", x.ageSeconds ? nlohmann::json(*x.ageSeconds) : nlohmann::json(nullptr) },
                { "name", opt(x.name) }, { "query", opt(x.query) }, { "query_hidden", x.queryHidden } });
        nlohmann::json tables = nlohmann::json::array();
        for (const auto& t : h.tables)
            tables.push_back({ { "name", t.name }, { "dead_tuples", t.deadTuples }, { "live_tuples", t.liveTuples },
                { "vacuums", t.vacuums }, { "last_vacuum", opt(t.lastVacuum) },
                { "vacuumed_during_hold", t.vacuumedDuringHold } });
        nlohmann::json samples = nlohmann::json::array();
        for (const auto& x : h.samples)
            samples.push_back({ { "taken_at", x.takenAt }, { "dead_tuples", x.deadTuples }, { "vacuums", x.vacuums } });
        return { { "holders", holders }, { "owner_sees_all", h.ownerSeesAll }, { "login_sees_all", h.loginSeesAll },
            { "tables", tables }, { "dead_total", h.deadTotal }, { "dead_total_quality", "estimate" },
            { "dead_total_source", "pg_stat_user_tables.n_dead_tup" }, { "kept_at_least", h.keptAtLeast },
            { "kept_at_most", h.deadTotal }, { "dead_samples", samples }, { "vacuums_in_samples", h.vacuumsInSamples },
            { "fruitless_vacuum_intervals", h.fruitlessIntervals }, { "held_after_seconds", heldAfter },
            { "held", v.held }, { "dead_rows_growing", v.growing }, { "dead_rows_grew_by", v.grewBy },
            { "grew_since", opt(v.since) }, { "alert", v.alert() } };
    }

    void printHorizon(const HorizonReading& h, const HorizonVerdict& v, double heldAfter)
    {
        std::printf("\ntransaction horizon%s\n", v.alert() ? ": HELD while dead rows grow" : "");
        if (!h.available) {
            std::printf("  not available before schema v26 (idemctl migrate)\n");
            return;
        }
        if (!h.ownerSeesAll)
            std::printf("  (idem_horizon_holders' owner lacks pg_read_all_stats: other roles' sessions are missing)\n");
        if (h.holders.empty())
            std::printf("  no other transaction, slot or standby holds a snapshot\n");
        for (const auto& x : h.holders) {
            std::printf("  %s\n", describeHolder(x).c_str());
            if (!x.query.empty())
                std::printf("      query: %s\n", displaySafe(x.query, 200).c_str());
            else if (x.queryHidden)
                std::printf("      query: hidden (another role's; pg_read_all_stats shows it)\n");
        }
        std::printf("  dead rows in the Idem tables: about %lld (n_dead_tup); the horizon keeps at least %lld "
                    "(tables vacuumed since it began), at most %lld\n",
            static_cast<long long>(h.deadTotal), static_cast<long long>(h.keptAtLeast),
            static_cast<long long>(h.deadTotal));
        for (const auto& t : h.tables)
            if (t.deadTuples > 0)
                std::printf("    %-28s %10lld dead  %lld vacuums, last %s%s\n", t.name.c_str(),
                    static_cast<long long>(t.deadTuples), static_cast<long long>(t.vacuums),
                    t.lastVacuum.empty() ? "never" : t.lastVacuum.c_str(),
                    t.vacuumedDuringHold ? " (during the hold: it could not remove them)" : "");
        std::printf("  autovacuum: %d vacuums of task_idempotency between the samples, %d sample intervals with a "
                    "vacuum after which the dead rows did not fall\n",
            h.vacuumsInSamples, h.fruitlessIntervals);
        if (v.held)
            std::printf("  held past %.0f s%s\n", heldAfter,
                v.growing ? (", while task_idempotency's dead rows grew by " + std::to_string(v.grewBy) + " since "
                                + v.since)
                                .c_str()
                          : (v.since.empty() ? "; no size sample before it began to tell whether dead rows grow"
                                             : "; dead rows did not grow since the sample before it began"));
    }

    nlohmann::json runJson(const PurgeRun& r)
    {
        nlohmann::json by = nlohmann::json::object();
        for (const auto& [op, n] : r.removedByOperation)
            by[op] = n;
        return { { "id", r.id }, { "state", r.state }, { "started_at", r.startedAt }, { "finished_at", opt(r.finishedAt) },
            { "duration_seconds", r.durationSeconds }, { "rows_removed", r.rowsRemoved }, { "batches", r.batches },
            { "db_role", r.dbRole }, { "actor", r.actor }, { "application", r.application },
            { "audit_id", r.auditId ? nlohmann::json(*r.auditId) : nlohmann::json(nullptr) },
            { "removed_by_operation", by },
            { "session_alive", r.alive ? nlohmann::json(*r.alive) : nlohmann::json(nullptr) } };
    }

    nlohmann::json operationsJson(const std::vector<OperationRetention>& ops)
    {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& o : ops)
            out.push_back({ { "operation", o.operation }, { "policy_operation", o.policyOperation },
                { "horizon_seconds", o.horizonSeconds }, { "horizon", formatHorizon(o.horizonSeconds) },
                { "cutoff", o.cutoff }, { "oldest_completed_at", opt(o.oldestCompletedAt) },
                { "oldest_age_seconds", o.oldestAgeSeconds ? nlohmann::json(*o.oldestAgeSeconds) : nlohmann::json(nullptr) },
                { "due", o.due }, { "due_quality", qualityName(o.dueLabel.quality) },
                { "policy_changed_at", opt(o.policyChangedAt) }, { "policy_changed_by", opt(o.policyChangedBy) },
                { "meaning", retentionSentence(o.operation, o.horizonSeconds) } });
        return out;
    }

    std::string bytes(std::int64_t n)
    {
        const char* units[] = { "B", "kB", "MB", "GB", "TB" };
        double v = static_cast<double>(n);
        int u = 0;
        while (v >= 1024 && u < 4) {
            v /= 1024;
            ++u;
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
        return buf;
    }

    std::string dueText(const OperationRetention& o)
    {
        return (o.dueLabel.quality == FigureQuality::LowerBound ? "at least " : "") + std::to_string(o.due);
    }

    // Nd, Nh or N (days).
    std::int64_t parseDuration(const std::string& s)
    {
        std::size_t used = 0;
        long long n = 0;
        try {
            n = std::stoll(s, &used);
        } catch (const std::exception&) {
            throw UsageError("DURATION must be Nd, Nh or N (days), not '" + s + "'");
        }
        const std::string unit = s.substr(used);
        if (n <= 0 || (unit != "" && unit != "d" && unit != "h"))
            throw UsageError("DURATION must be a positive Nd, Nh or N (days), not '" + s + "'");
        if (n > 3650LL * 24)
            throw UsageError("DURATION is more than 3650 days: '" + s + "'");
        return unit == "h" ? n * 3600 : n * 86400;
    }

    int purgeDryRun(pqxx::connection& conn, const SchemaName& schema, const Args& args)
    {
        const auto p = previewPurge(conn, schema, args.intValue("cap", 1000000, 1, 10000000));
        if (args.flag("json")) {
            nlohmann::json j = { { "schema", schema.name() }, { "dry_run", true }, { "as_of", p.asOf }, { "cap", p.cap },
                { "would_remove", p.total }, { "would_remove_quality", p.totalLowerBound ? "lower_bound" : "exact" },
                { "operations", operationsJson(p.operations) } };
            std::cout << j.dump(2) << '\n';
            return ExitOk;
        }
        std::printf("dry run, schema %s, as of %s: nothing is changed\n\n", schema.name().c_str(), p.asOf.c_str());
        std::printf("  %-24s %-10s %-28s %s\n", "operation", "horizon", "completed before (cutoff)", "would remove");
        for (const auto& o : p.operations)
            std::printf("  %-24s %-10s %-28s %s\n", displaySafe(o.operation, 200).c_str(),
                (formatHorizon(o.horizonSeconds) + (o.policyOperation == "*" ? "*" : "")).c_str(), o.cutoff.c_str(),
                dueText(o).c_str());
        std::printf("\nwould remove %s%lld rows (* = the default horizon). A retry of a removed key executes again.\n",
            p.totalLowerBound ? "at least " : "", static_cast<long long>(p.total));
        return ExitOk;
    }

    // A change the approval policy holds: what was requested, and what comes next.
    int awaitingApproval(const char* what, const ChangeRequested& q, bool json, const SchemaName& schema)
    {
        if (json) {
            std::cout << nlohmann::json(
                { { "schema", schema.name() }, { "awaiting_approval", true }, { "request_id", q.id },
                    { "spec_sha256", q.specSha256 }, { "spec", nlohmann::json::parse(q.specJson) },
                    { "approvable_until", formatMicros(q.approvableUntilUs) }, { "audit_id", q.auditId } })
                             .dump(2)
                      << '\n';
            return ExitOk;
        }
        std::printf(
            "awaiting approval: request %lld (sha256 %s)\n", static_cast<long long>(q.id), q.specSha256.c_str());
        std::printf("  %s needs a second person's approval (the approval policy); nothing changed yet\n", what);
        std::printf("  spec %s\n", q.specJson.c_str());
        std::printf("  another login with the approve right, until %s: idemctl approvals approve %lld --spec %s "
                    "--reason ...\n",
            formatMicros(q.approvableUntilUs).c_str(), static_cast<long long>(q.id), q.specSha256.c_str());
        std::printf("  then: idemctl %s --request %lld --spec %s\n",
            std::string(what) == "purge" ? "purge" : "retention apply", static_cast<long long>(q.id),
            q.specSha256.c_str());
        std::printf("  audit entry %lld\n", static_cast<long long>(q.auditId));
        return ExitOk;
    }

    int retentionApply(const Args& args, const SchemaName& schema)
    {
        if (args.positional().size() != 1)
            throw UsageError("retention apply takes --request N --spec SHA256, no other argument");
        if (!args.value("request") || !args.value("spec"))
            throw UsageError(
                "retention apply needs --request N and --spec SHA256 (as `idemctl approvals list` shows them)");
        if (args.value("reason"))
            throw UsageError("retention apply takes no --reason: the request's reason is the one audited");
        const auto id = args.intValue("request", 0, 1, std::numeric_limits<std::int64_t>::max());
        const std::string spec = *args.value("spec");
        if (!isSpecSha256(spec))
            throw UsageError("--spec is the request's spec sha256: 64 lower-case hex digits");
        const auto actor = args.valueOr("actor", localActor());
        validateReasonAndActor("apply", actor);
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl retention" });
        ChangeUse u;
        try {
            u = useRetentionRequest(*conn, schema, id, spec, actor);
        } catch (const JobRefused& e) {
            std::cerr << "idemctl retention apply: refused (SQLSTATE " << e.sqlstate
                      << "): " << displaySafe(e.what(), messageDisplay) << "\nnothing changed\n";
            return ExitRefused;
        }
        ApprovalRequest c;
        c.kind = u.kind;
        c.specJson = u.specJson;
        if (args.flag("json")) {
            std::cout << nlohmann::json(
                { { "schema", schema.name() }, { "request_id", u.id }, { "spec", nlohmann::json::parse(u.specJson) },
                    { "use_audit_id", u.auditId },
                    { "audit_id", u.appliedAuditId ? nlohmann::json(*u.appliedAuditId) : nlohmann::json(nullptr) } })
                             .dump(2)
                      << '\n';
            return ExitOk;
        }
        std::printf("request %lld applied: %s (audit entries %lld, %s)\n", static_cast<long long>(u.id),
            displaySafe(c.what(), 200).c_str(), static_cast<long long>(u.auditId),
            u.appliedAuditId ? std::to_string(*u.appliedAuditId).c_str() : "none: the operation had no row of its own");
        return ExitOk;
    }
} // namespace

int runPurge(const std::vector<std::string>& argv)
{
    Args args(argv,
        { "dsn", "schema", "batch", "max-seconds", "duty", "pause-ms", "reason", "actor", "cap", "request", "spec" },
        { "dry-run", "json", "help" });
    if (args.flag("help")) {
        std::cout << purgeHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("unexpected argument '" + args.positional()[0] + "'");
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    PurgeOptions o;
    o.batch = static_cast<int>(args.intValue("batch", 1000, 1, 100000));
    o.maxSeconds = static_cast<double>(args.intValue("max-seconds", 0, 0, 86400));
    o.pauseMs = static_cast<int>(args.intValue("pause-ms", 0, 0, 60000));
    if (const auto d = args.value("duty")) {
        try {
            o.duty = std::stod(*d);
        } catch (const std::exception&) {
            throw UsageError("--duty must be a number from 0.01 to 1, not '" + *d + "'");
        }
        if (!(o.duty >= 0.01 && o.duty <= 1))
            throw UsageError("--duty must be 0.01 to 1, not '" + *d + "'");
    }
    o.reason = args.valueOr("reason", "idemctl purge");
    o.actor = args.valueOr("actor", localActor());
    if (args.value("request")) {
        // The database holds the run to the approved batch, time and duty (idem_purge_spec_check):
        // nothing here may ask for another pace, slower included.
        if (args.flag("dry-run") || args.value("batch") || args.value("max-seconds") || args.value("duty")
            || args.value("pause-ms") || args.value("reason") || args.value("cap"))
            throw UsageError("--request runs the approved request as it was approved: no --dry-run, --batch, "
                             "--max-seconds, --duty, --pause-ms, --reason or --cap with it");
        o.requestId = args.intValue("request", 0, 1, std::numeric_limits<std::int64_t>::max());
        if (!args.value("spec"))
            throw UsageError("--spec is required with --request: the request's spec sha256 as `idemctl approvals "
                             "list` shows it");
        o.requestSha256 = *args.value("spec");
        if (!isSpecSha256(o.requestSha256))
            throw UsageError("--spec is the request's spec sha256: 64 lower-case hex digits");
    } else if (args.value("spec"))
        throw UsageError("--spec goes with --request N");
    validateReasonAndActor(o.reason, o.actor);
    const std::string dsn = dsnFrom(args);
    if (args.flag("dry-run")) {
        auto conn = connect(dsn, ConnectOptions { "idemctl purge" });
        return purgeDryRun(*conn, schema, args);
    }
    // A purge writes: a read-only server (a standby) is refused at once, in words.
    auto conn = connectPrimary(dsn, ConnectOptions { "idemctl purge" });
    if (o.requestId == 0 && readChangePolicy(*conn, schema).manualPurges) {
        ChangeRequested q;
        try {
            q = requestPurge(*conn, schema, o.batch, static_cast<int>(o.maxSeconds), o.duty, o.reason, o.actor);
        } catch (const JobRefused& e) {
            std::cerr << "idemctl purge: refused (SQLSTATE " << e.sqlstate
                      << "): " << displaySafe(e.what(), messageDisplay) << "\nnothing changed\n";
            return ExitRefused;
        }
        return awaitingApproval("purge", q, args.flag("json"), schema);
    }

    std::signal(SIGINT, onStopSignal);
    std::signal(SIGTERM, onStopSignal);
    o.stop = &g_stop;
    const bool json = args.flag("json");
    o.progress = [json](std::int64_t run, std::int64_t batches, std::int64_t rows, double ms) {
        if (!json)
            std::fprintf(stderr, "run %lld: batch %lld, %lld rows removed (last batch %.1f ms)\n",
                static_cast<long long>(run), static_cast<long long>(batches), static_cast<long long>(rows), ms);
    };
    // A connection lost, or a server turned read-only (a switchover), mid-run: what committed is
    // counted in the cut run's row, which the next run's begin closes as abandoned; so the purge
    // reconnects (waiting for the primary a minute at most) and carries on as a new run.
    constexpr int maxReconnects = 3;
    PurgeResult r;
    for (int reconnects = 0;; ++reconnects) {
        std::string why;
        try {
            r = idem::runPurge(*conn, schema, o);
            break;
        } catch (const JobRefused& e) {
            std::cerr << "idemctl purge: refused (SQLSTATE " << e.sqlstate
                      << "): " << displaySafe(e.what(), messageDisplay) << "\nnothing changed\n";
            return ExitRefused;
        } catch (const pqxx::broken_connection& e) {
            why = "lost the connection to the database server: " + describeLostConnection(e.what());
        } catch (const pqxx::sql_error& e) {
            if (!isReadOnlyRefusal(e))
                throw;
            why = describeReadOnly(e.what());
        }
        // A request is used once: its run, cut, is not begun again (the next purge closes it).
        if (g_stop.load() || reconnects >= maxReconnects || o.requestId != 0)
            throw std::runtime_error(why
                + (g_stop.load() ? std::string("; stopped")
                                 : "; gave up after " + std::to_string(maxReconnects) + " reconnects"));
        std::fprintf(stderr, "idemctl purge: %s; reconnecting (the next run closes the cut one as abandoned)\n",
            displaySafe(why, messageDisplay).c_str());
        std::string said;
        conn = connectPrimaryWaiting(
            dsn, ConnectOptions { "idemctl purge" }, std::chrono::seconds(60), [&said](const ConnectError& e) {
                if (e.what() != said)
                    std::fprintf(stderr, "idemctl purge: waiting for the primary: %s\n",
                        displaySafe(e.what(), messageDisplay).c_str());
                said = e.what();
            });
    }
    const double rate = r.durationMs > 0 ? static_cast<double>(r.rowsRemoved) / (r.durationMs / 1000) : 0;
    if (json) {
        nlohmann::json by = nlohmann::json::object();
        for (const auto& [op, n] : r.removedByOperation)
            by[op] = n;
        std::cout << nlohmann::json(
            { { "schema", schema.name() }, { "dry_run", false }, { "run_id", r.runId },
                { "rows_removed", r.rowsRemoved }, { "batches", r.batches }, { "duration_ms", r.durationMs },
                { "rows_per_second", rate }, { "longest_batch_ms", r.longestBatchMs }, { "audit_id", r.auditId },
                { "stopped_early", r.stoppedByTime }, { "removed_by_operation", by },
                { "request_id", o.requestId != 0 ? nlohmann::json(o.requestId) : nlohmann::json(nullptr) } })
                         .dump(2)
                  << '\n';
        return ExitOk;
    }
    std::printf("purge run %lld: %lld rows removed in %lld batches, %.1f s (%.0f rows/s, longest batch %.1f ms)%s\n",
        static_cast<long long>(r.runId), static_cast<long long>(r.rowsRemoved), static_cast<long long>(r.batches),
        r.durationMs / 1000, rate, r.longestBatchMs,
        r.stoppedByTime ? "; stopped early, more may be due" : "");
    for (const auto& [op, n] : r.removedByOperation)
        std::printf("  %-24s %lld\n", displaySafe(op, 200).c_str(), static_cast<long long>(n));
    std::printf("audit entry %lld\n", static_cast<long long>(r.auditId));
    return ExitOk;
}

int runRetention(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema", "reason", "actor", "request", "spec" }, { "json", "help" });
    if (args.flag("help")) {
        std::cout << retentionHelp;
        return ExitOk;
    }
    const auto& pos = args.positional();
    const std::string verb = pos.empty() ? std::string("show") : pos[0];
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    if ((args.value("request") || args.value("spec")) && verb != "apply")
        throw UsageError("--request and --spec go with retention apply");
    if (verb == "apply")
        return retentionApply(args, schema);
    if (verb == "show") {
        if (pos.size() > 1)
            throw UsageError("retention show takes no argument");
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl retention" });
        const auto policies = readRetention(*conn, schema);
        if (args.flag("json")) {
            nlohmann::json j = nlohmann::json::array();
            for (const auto& p : policies)
                j.push_back({ { "operation", p.operation }, { "horizon_seconds", p.horizonSeconds },
                    { "horizon", formatHorizon(p.horizonSeconds) }, { "changed_at", p.changedAt },
                    { "changed_by", p.changedBy }, { "meaning", retentionSentence(p.operation, p.horizonSeconds) } });
            std::cout << nlohmann::json({ { "schema", schema.name() }, { "policies", j } }).dump(2) << '\n';
            return ExitOk;
        }
        for (const auto& p : policies)
            std::printf("  %-24s %-10s changed %s by %s\n      %s\n", displaySafe(p.operation, 200).c_str(),
                formatHorizon(p.horizonSeconds).c_str(), p.changedAt.c_str(), displaySafe(p.changedBy, 200).c_str(),
                displaySafe(retentionSentence(p.operation, p.horizonSeconds), 400).c_str());
        return ExitOk;
    }
    if (verb != "set" && verb != "unset")
        throw UsageError("retention takes show, set, unset or apply, not '" + verb + "'");
    if (pos.size() != (verb == "set" ? 3u : 2u))
        throw UsageError(verb == "set" ? "retention set takes OPERATION DURATION" : "retention unset takes OPERATION");
    const auto reason = args.value("reason");
    if (!reason)
        throw UsageError("--reason is required (it goes into the audit trail)");
    const std::int64_t seconds = verb == "set" ? parseDuration(pos[2]) : 0;
    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl retention" });
    const auto actor = args.valueOr("actor", localActor());
    if (readChangePolicy(*conn, schema).retentionChanges) {
        ChangeRequested q;
        try {
            q = requestRetentionChange(*conn, schema, pos[1],
                verb == "set" ? std::optional<std::int64_t>(seconds) : std::nullopt, *reason, actor);
        } catch (const JobRefused& e) {
            std::cerr << "idemctl retention: refused (SQLSTATE " << e.sqlstate
                      << "): " << displaySafe(e.what(), messageDisplay) << "\nnothing changed\n";
            return ExitRefused;
        }
        return awaitingApproval("retention", q, args.flag("json"), schema);
    }
    const auto change = verb == "set" ? setRetention(*conn, schema, pos[1], seconds, *reason, actor)
                                      : clearRetention(*conn, schema, pos[1], *reason, actor);
    const auto before = change.before ? formatHorizon(change.before->horizonSeconds) : std::string("(default)");
    if (verb == "set")
        std::printf("%s: %s -> %s (audit entry %lld)\n%s\n", displaySafe(pos[1], 200).c_str(), before.c_str(),
            formatHorizon(seconds).c_str(), static_cast<long long>(change.auditId),
            displaySafe(retentionSentence(pos[1], seconds), 400).c_str());
    else if (change.before)
        std::printf("%s: %s -> the default (audit entry %lld)\n", displaySafe(pos[1], 200).c_str(), before.c_str(),
            static_cast<long long>(change.auditId));
    else
        std::printf("%s had no policy of its own: nothing changed\n", displaySafe(pos[1], 200).c_str());
    return ExitOk;
}

int runStorage(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema", "cap", "days", "held-after" }, { "json", "no-sample", "help" });
    if (args.flag("help")) {
        std::cout << storageHelp;
        return ExitOk;
    }
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    StorageOptions o;
    o.dueCap = args.intValue("cap", 10000, 1, 10000000);
    o.sampleDays = static_cast<int>(args.intValue("days", 90, 1, 3650));
    o.takeSample = !args.flag("no-sample");
    const auto heldAfter = static_cast<double>(args.intValue("held-after", 300, 1, 604800));
    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl storage" });
    const auto s = readStorage(*conn, schema, o);
    const auto verdict = judgeHorizon(s.horizon, heldAfter);
    if (args.flag("json")) {
        nlohmann::json tables = nlohmann::json::array();
        for (const auto& t : s.tables)
            tables.push_back({ { "name", t.name }, { "table_bytes", t.tableBytes }, { "index_bytes", t.indexBytes },
                { "total_bytes", t.totalBytes },
                { "rows_estimate", t.rowsEstimate ? nlohmann::json(*t.rowsEstimate) : nlohmann::json(nullptr) },
                { "live_tuples", t.liveTuples }, { "dead_tuples", t.deadTuples }, { "last_vacuum", opt(t.lastVacuum) },
                { "last_autovacuum", opt(t.lastAutovacuum) }, { "last_analyze", opt(t.lastAnalyze) } });
        nlohmann::json status = nlohmann::json::object();
        for (const auto& r : s.rowsByStatus) {
            nlohmann::json f = { { "value", r.rows }, { "quality", qualityName(r.label.quality) },
                { "observed_at", r.label.observedAt } };
            if (r.label.exact)
                f["exact"] = *r.label.exact, f["exact_observed_at"] = r.label.exactAsOf;
            if (!r.label.source.empty())
                f["source"] = r.label.source;
            status[r.status] = f;
        }
        nlohmann::json policies = nlohmann::json::array();
        for (const auto& p : s.policies)
            policies.push_back({ { "operation", p.operation }, { "horizon_seconds", p.horizonSeconds },
                { "changed_at", p.changedAt }, { "changed_by", p.changedBy } });
        nlohmann::json samples = nlohmann::json::array();
        for (const auto& x : s.samples)
            samples.push_back({ { "taken_at", x.takenAt }, { "table_bytes", x.tableBytes }, { "index_bytes", x.indexBytes },
                { "rows_estimate", x.rowsEstimate ? nlohmann::json(*x.rowsEstimate) : nlohmann::json(nullptr) } });
        std::cout << nlohmann::json({ { "schema", schema.name() }, { "as_of", s.asOf }, { "tables", tables },
                                        { "rows_by_status", status }, { "policies", policies },
                                        { "operations", operationsJson(s.operations) }, { "due_cap", s.dueCap },
                                        { "due_total", s.dueTotal },
                                        { "due_total_quality", s.dueTotalLowerBound ? "lower_bound" : "exact" },
                                        { "last_purge_run", s.lastRun ? runJson(*s.lastRun) : nlohmann::json(nullptr) },
                                        { "running_purge", s.running ? runJson(*s.running) : nlohmann::json(nullptr) },
                                        { "samples", samples }, { "sample_period_seconds", s.samplePeriodSeconds },
                                        { "horizon", horizonJson(s.horizon, verdict, heldAfter) } })
                         .dump(2)
                  << '\n';
        return ExitOk;
    }
    std::printf("Idem storage for schema %s as of %s\n\n", schema.name().c_str(), s.asOf.c_str());
    std::printf("  %-28s %10s %10s %12s %10s  %s\n", "table", "table", "indexes", "rows (est.)", "dead", "last vacuum");
    for (const auto& t : s.tables) {
        const auto& v = t.lastAutovacuum > t.lastVacuum ? t.lastAutovacuum : t.lastVacuum;
        std::printf("  %-28s %10s %10s %12s %10lld  %s\n", t.name.c_str(), bytes(t.tableBytes).c_str(),
            bytes(t.indexBytes).c_str(), t.rowsEstimate ? std::to_string(*t.rowsEstimate).c_str() : "-",
            static_cast<long long>(t.deadTuples), v.empty() ? "never" : v.c_str());
    }
    std::printf("\nrows by status\n");
    for (const auto& r : s.rowsByStatus) {
        std::string v = std::to_string(r.rows);
        if (r.label.quality == FigureQuality::LowerBound)
            v = "at least " + v + (r.label.exact ? " (exact " + std::to_string(std::int64_t(*r.label.exact)) + " as of "
                                                         + r.label.exactAsOf + ")"
                                                   : std::string());
        else if (r.label.quality == FigureQuality::Estimate)
            v = "about " + v + " (estimate: " + r.label.source + ")";
        std::printf("  %-18s %s\n", r.status.c_str(), v.c_str());
    }
    std::printf("\nretention (due: succeeded rows completed before the cutoff; counted up to %lld)\n",
        static_cast<long long>(s.dueCap));
    for (const auto& op : s.operations)
        std::printf("  %-24s %-10s oldest %-28s due %s\n      %s\n", displaySafe(op.operation, 200).c_str(),
            (formatHorizon(op.horizonSeconds) + (op.policyOperation == "*" ? "*" : "")).c_str(),
            op.oldestCompletedAt.empty() ? "-" : op.oldestCompletedAt.c_str(), dueText(op).c_str(),
            displaySafe(retentionSentence(op.operation, op.horizonSeconds), 400).c_str());
    if (s.operations.empty())
        std::printf("  no succeeded rows\n");
    const auto run = [](const char* label, const PurgeRun& r) {
        std::printf("%s: run %lld %s, started %s, %lld rows in %lld batches, %.1f s, by %s (%s)\n", label,
            static_cast<long long>(r.id), r.state.c_str(), r.startedAt.c_str(), static_cast<long long>(r.rowsRemoved),
            static_cast<long long>(r.batches), r.durationSeconds, displaySafe(r.dbRole, 200).c_str(),
            displaySafe(r.actor, 200).c_str());
    };
    std::printf("\n");
    if (s.lastRun)
        run("last purge", *s.lastRun);
    else
        std::printf("last purge: none yet\n");
    if (s.running && s.running->alive == false)
        run("stopped purge (its session is gone: a failover, a restart or a killed process; the next purge closes it"
            " as abandoned)",
            *s.running);
    else if (s.running)
        run(s.running->alive ? "running purge" : "running purge (as of the replay point: a standby cannot see the"
                                                 " primary's sessions)",
            *s.running);
    std::printf("size samples: %zu in the last %d days\n", s.samples.size(), o.sampleDays);
    printHorizon(s.horizon, verdict, heldAfter);
    return ExitOk;
}

} // namespace idem::cli
