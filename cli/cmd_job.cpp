// idemctl job: server-side recovery jobs (schema v19, operations/jobs.h).
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <limits>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/jobs.h"
#include "operations/redrive.h"

namespace idem::cli {

namespace {

    constexpr const char* jobHelp
        = R"(Usage: idemctl job start --action requeue|release|fail --reason TEXT [FILTER...] [--cap N]
                        [--attempts N] [--re-execute] [--dry-run | --detach] [RUN OPTIONS] [--json]
       idemctl job status [ID] [--limit N] [--json]
       idemctl job resume ID [RUN OPTIONS] [--json]
       idemctl job cancel ID --reason TEXT [--actor A] [--json]
       idemctl job refused ID [--json | --csv]

A recovery job applies one audited recovery action to every task a filter matches as of the
job's start, however many, in the database, in batches that commit on their own. Each row gets
the single actions' check: it must still have the status and updated_at it had at the start, or
it is refused as moved on and nothing changes; a row somebody holds locked is tried again 4
times, then refused as busy; a row deleted since is refused as gone. Matched rows the action
does not apply to (requeue: failed, retryable_failed; release: processing; fail: processing,
retryable_failed) are skipped. Every changed row has its audit entry, linked to the job ("job_id"
in its after image); the job has two of its own (action job: start, and finish or cancel).

start    records the job and the rows it matched (nothing changes yet), then runs it here until
         it ends, printing its progress on standard error. Refused, with nothing written (exit
         3): a filter matching no task, none the action applies to, more than --cap rows, rows
         another open job has still to do. --dry-run only counts what it would match.
         --detach leaves it for a runner: `idemctl job resume ID`, or CALL idem_job_run(ID) in
         the database (pg_cron: CALL idem_job_run(NULL) runs the oldest job nobody runs).
resume   runs a job that is not running (its runner was stopped, killed or lost its
         connection) from its last committed batch; anyone with idem_operator may. One runner
         per job: refused while another session runs it.
status   one job in detail, or the open jobs and the latest ones.
cancel   stops a job at its next batch: the rows not yet done are recorded as skipped.
refused  the rows a job refused, with why, in key order.

If this process stops (Ctrl-C, its terminal closes, it is killed), the server stops running the
job within a second, at a batch boundary: every batch that committed is recorded, the one in
flight is not, and `idemctl job resume ID` goes on from there.

Filters (as idemctl tasks and the console's Tasks page; each narrows, none: every task):
  --status S             processing, succeeded, retryable_failed or failed (repeat for several)
  --tenant T             keys of this tenant      --operation O    keys of this operation
  --key-prefix P         keys starting with P, literally
  --min-attempts N       attempts >= N            --error-class C  retryable, permanent or unknown
  --expired-lease        processing whose lease had ended     --live-lease   ... still running
  --uncertain            retryable_failed with an unknown outcome
  --exhausted            failed for a reason other than a permanent error
  --failed-since TIME    failed, updated at or after TIME (ISO 8601, e.g. 2024-05-01T10:00Z)
  --unfinished-for MIN   not succeeded, first seen at least MIN minutes before the start
  --updated-within MIN   updated within the last MIN minutes
  --digest-conflicts     keys with a recorded digest conflict
  --error-contains TEXT  not succeeded, the last error message contains TEXT (literally, any case)

  --action A             requeue, release or fail
  --reason TEXT          why (mandatory, a visible character, up to 16384 characters; audited)
  --attempts N           requeue: attempts granted to each row (1..1000, default 1)
  --re-execute           requeue: also re-execute each row it requeues with its stored request,
                         run by a registered re-driver of its operation (schema v25,
                         docs/redrive.md); rows without a stored request end 'gone' and wait for
                         their client. Says first how many re-drivers are online; status shows
                         what became of them ("191 requeued: 185 succeeded, 4 failed, 2 running")
  --cap N                the most rows the job may match, 1 to 1000000 (default 10000): a filter
                         matching more refuses the job; count first with --dry-run
  --actor NAME           who is acting, for the audit (default: login@hostname)
Run options:
  --batch N              rows per batch, 1 to 10000 (default 100); each batch is one transaction
  --duty F               batches take at most this share of the time, 0.01 to 1 (default 0.2):
                         after a batch of t ms the job sleeps t * (1 - F) / F ms, holding no lock
  --quiet                no progress lines
Other:
  --limit N              status: jobs listed (1..1000, default 20)
  --json                 one JSON document on standard output
  --csv                  refused: CSV (the key as a spreadsheet may show it; --json has it exactly)
  --dsn DSN              libpq conninfo, URI or service=NAME (default: $IDEM_DSN, then PG*);
                         start, resume and cancel need idem_operator, status and refused idem_reader
  --schema S             schema holding the Idem tables (default: idem)

Rights (schema v21): starting, running and cancelling a job needs the right of its action (roles
idem_may_requeue, idem_may_release, idem_may_fail; idem_operator holds all), checked for the
role that calls and, at each batch, for the role that started it: a job's rows are applied with
its starter's rights.

Approval (schema v21; one mechanism for jobs and changes since v28, `idemctl approvals`): with
gated kind 'job' on (idemctl approvals policy job --on --over-rows N, the schema owner's), a job
that would act on more than N rows starts waiting for approval and does not run; so does one past
this login's budget (approvals policy --budget N --window S: single actions and jobs together,
counted per login over the window). Another login with the approve right (idem_may_approve)
approves its request naming its spec sha256 (idemctl approvals list, approvals approve ID --spec
SHA256: nothing else runs under that approval), or declines it (approvals decline ID), which
cancels the job. The requester never approves. A job started here without --detach runs as soon as
it is approved. An approval lets the job start or resume until it expires; an approved job that
runs is stopped with cancel, by its action's right, never by the approve right. A job that will run
here (no --detach) is refused before anything is written when the connection goes through a pooler
(PgBouncer): its runner needs a direct connection. --dry-run says whether the job would need
approval. `job pending`, `job approve` and `job policy` moved to idemctl approvals.

Exit codes: 0 done (a job that ran to its end, whatever it refused), 1 failure or stopped before
the end (the job stays active: resume it), 2 usage error, 3 refused by the database (nothing
changed), or the job was cancelled.
)";

    std::atomic<bool> g_stop { false };
    extern "C" void onJobStopSignal(int) { g_stop = true; }

    nlohmann::json opt(const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
    nlohmann::json optTime(const std::optional<std::int64_t>& us)
    {
        return us ? nlohmann::json(formatMicros(*us)) : nlohmann::json(nullptr);
    }
    nlohmann::json optText(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

    // Schema v25: what became of a job's re-executions (read only for a job that re-executes).
    std::optional<RedriveOutcomes> g_outcomes;

    nlohmann::json outcomesJson(const JobStatus& s)
    {
        if (!s.redrive || !g_outcomes)
            return nullptr;
        const auto& o = *g_outcomes;
        return { { "queued", o.queued }, { "running", o.running }, { "succeeded", o.succeeded },
            { "failed", o.failed }, { "conflict", o.conflict }, { "gone", o.gone },
            { "summary", redriveOutcomeSentence(s.changed, o) } };
    }

    nlohmann::json statusJson(const JobStatus& s)
    {
        return { { "id", s.id }, { "re_execute", s.redrive }, { "re_executions", outcomesJson(s) }, { "state", s.state }, { "action", s.action },
            { "extra_attempts", s.extraAttempts ? nlohmann::json(*s.extraAttempts) : nlohmann::json(nullptr) },
            { "filter", nlohmann::json::parse(s.filterJson) }, { "moment", formatMicros(s.momentUs) },
            { "moment_us", s.momentUs }, { "cap", s.cap }, { "spec_sha256", s.specSha256 }, { "reason", s.reason },
            { "db_role", s.dbRole }, { "actor", s.actor }, { "application", s.application }, { "matched", s.matched },
            { "changed", s.changed },
            { "refused",
                { { "total", s.refused() }, { "moved_on", s.refusedMovedOn }, { "busy", s.refusedBusy },
                    { "gone", s.refusedGone } } },
            { "skipped",
                { { "total", s.skipped() }, { "not_applicable", s.skippedNotApplicable },
                    { "cancelled", s.skippedCancelled } } },
            { "pending", s.pending() }, { "batches", s.batches }, { "attaches", s.attaches },
            { "running", s.runnerAlive },
            { "runner",
                { { "pid", s.runnerPid ? nlohmann::json(*s.runnerPid) : nlohmann::json(nullptr) },
                    { "db_role", optText(s.runnerRole) }, { "actor", optText(s.runnerActor) },
                    { "since", optTime(s.runnerSinceUs) } } },
            { "last_batch_at", optTime(s.lastBatchAtUs) }, { "finished_at", optTime(s.finishedAtUs) },
            { "cancelled_by", optText(s.cancelledBy) }, { "cancel_reason", optText(s.cancelReason) },
            { "start_audit_id", opt(s.startAuditId) }, { "end_audit_id", opt(s.endAuditId) },
            { "server_now", formatMicros(s.serverNowUs) }, { "starter_role", s.starterRole },
            { "approval",
                s.needsApproval
                    ? nlohmann::json { { "threshold", opt(s.approvalThreshold) },
                          { "requested_until", optTime(s.approvalRequestedUntilUs) },
                          { "approved_login", optText(s.approvedLogin) }, { "approved_role", optText(s.approvedRole) },
                          { "approved_actor", optText(s.approvedActor) }, { "approved_at", optTime(s.approvedAtUs) },
                          { "expires_at", optTime(s.approvalExpiresAtUs) } }
                    : nlohmann::json(nullptr) } };
    }

    std::string safe(const std::string& s, std::size_t n = 200) { return displaySafe(s, n); }

    std::string filterWords(const std::string& json)
    {
        try {
            return describeJobFilter(taskFilterFromJobJson(json));
        } catch (const std::exception&) {
            return json;
        }
    }

    std::string actionWords(const JobStatus& s)
    {
        if (s.action == "requeue" && s.extraAttempts)
            return "requeue (+" + std::to_string(*s.extraAttempts) + " attempt" + (*s.extraAttempts == 1 ? "" : "s") + ")"
                + (s.redrive ? " and re-execute" : "");
        return s.action;
    }

    std::string runnerWords(const JobStatus& s)
    {
        if (s.state == "active" && s.runnerAlive)
            return "running (pid " + std::to_string(s.runnerPid.value_or(0)) + ", " + safe(s.runnerRole, 64) + " ("
                + safe(s.runnerActor, 80) + ") since " + (s.runnerSinceUs ? formatMicros(*s.runnerSinceUs) : "?") + ")";
        if (s.state == "active")
            return "not running: `idemctl job resume " + std::to_string(s.id) + "` continues it"
                + (s.runnerRole.empty() ? std::string(" (never run yet)")
                                        : " (last run by " + safe(s.runnerRole, 64) + " (" + safe(s.runnerActor, 80) + "))");
        if (s.state == "awaiting_approval")
            return "waiting for approval by another login: `idemctl approvals approve "
                + std::to_string(s.approvalRequestId.value_or(0)) + " --spec " + s.specSha256 + " --reason ...`";
        return s.finishedAtUs ? "at " + formatMicros(*s.finishedAtUs) : std::string();
    }

    void printStatus(const JobStatus& s)
    {
        std::printf("job %lld: %s, %s\n", static_cast<long long>(s.id), s.state.c_str(), runnerWords(s).c_str());
        std::printf("  action    %s\n", actionWords(s).c_str());
        std::printf("  filter    %s\n", safe(filterWords(s.filterJson), 400).c_str());
        std::printf("  as of     %s (the start: rows changed since are refused)\n", formatMicros(s.momentUs).c_str());
        std::printf("  reason    %s\n", safe(s.reason, 400).c_str());
        std::printf("  started   by %s (%s), %s\n", safe(s.dbRole, 64).c_str(), safe(s.actor, 80).c_str(),
            safe(s.application, 64).c_str());
        std::printf("  matched   %lld (cap %lld)\n", static_cast<long long>(s.matched), static_cast<long long>(s.cap));
        std::printf("  changed   %lld\n", static_cast<long long>(s.changed));
        if (s.redrive && g_outcomes)
            std::printf("  re-execute %s\n", redriveOutcomeSentence(s.changed, *g_outcomes).c_str());
        std::printf("  refused   %lld (moved on %lld, busy %lld, gone %lld)%s\n", static_cast<long long>(s.refused()),
            static_cast<long long>(s.refusedMovedOn), static_cast<long long>(s.refusedBusy),
            static_cast<long long>(s.refusedGone),
            s.refused() > 0 ? ("; the list: idemctl job refused " + std::to_string(s.id)).c_str() : "");
        std::printf("  skipped   %lld (not applicable %lld, cancelled %lld)\n", static_cast<long long>(s.skipped()),
            static_cast<long long>(s.skippedNotApplicable), static_cast<long long>(s.skippedCancelled));
        std::printf("  pending   %lld\n", static_cast<long long>(s.pending()));
        std::printf("  batches   %lld%s\n", static_cast<long long>(s.batches),
            s.lastBatchAtUs ? (", the last at " + formatMicros(*s.lastBatchAtUs)).c_str() : "");
        if (s.state == "cancelled")
            std::printf("  cancelled by %s: %s\n", safe(s.cancelledBy, 120).c_str(), safe(s.cancelReason, 400).c_str());
        std::printf("  spec      sha256 %s\n", s.specSha256.c_str());
        if (s.needsApproval) {
            if (s.approvedAtUs)
                std::printf("  approval  by %s as %s (%s) at %s, valid until %s\n", safe(s.approvedLogin, 64).c_str(),
                    safe(s.approvedRole, 64).c_str(), safe(s.approvedActor, 80).c_str(), formatMicros(*s.approvedAtUs).c_str(),
                    s.approvalExpiresAtUs ? formatMicros(*s.approvalExpiresAtUs).c_str() : "?");
            else
                std::printf("  approval  needed (%s) from a holder of approve, another login; approvable until %s\n",
                    s.approvalWhy == "budget"
                        ? "its login's budget of rows changed without approval had no room for it"
                        : ("more than " + std::to_string(s.approvalThreshold.value_or(0)) + " rows to act on").c_str(),
                    s.approvalRequestedUntilUs ? formatMicros(*s.approvalRequestedUntilUs).c_str() : "?");
        }
        std::printf("  audit     start entry %s%s\n", s.startAuditId ? std::to_string(*s.startAuditId).c_str() : "-",
            s.endAuditId ? (", end entry " + std::to_string(*s.endAuditId)).c_str() : "");
    }

    std::int64_t jobId(const Args& args)
    {
        if (args.positional().size() != 1)
            throw UsageError("name one job by its id");
        std::size_t used = 0;
        long long id = 0;
        try {
            id = std::stoll(args.positional()[0], &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != args.positional()[0].size() || id < 1)
            throw UsageError("a job id is a positive whole number, not '" + args.positional()[0] + "'");
        return id;
    }

    JobRunOptions runOptions(const Args& args)
    {
        JobRunOptions o;
        o.batch = static_cast<int>(args.intValue("batch", JobLimits::defaultBatch, 1, JobLimits::maxBatch));
        if (const auto d = args.value("duty")) {
            try {
                o.duty = std::stod(*d);
            } catch (const std::exception&) {
                throw UsageError("--duty must be a number from 0.01 to 1, not '" + *d + "'");
            }
            if (!(o.duty >= 0.01 && o.duty <= 1))
                throw UsageError("--duty must be 0.01 to 1, not '" + *d + "'");
        }
        o.actor = args.valueOr("actor", localActor());
        return o;
    }

    // Runs the job here with a progress line per call on stderr; what the command exits with.
    int runHere(pqxx::connection& conn, const SchemaName& schema, std::int64_t id, JobRunOptions o, const Args& args)
    {
        std::signal(SIGINT, onJobStopSignal);
        std::signal(SIGTERM, onJobStopSignal);
        std::signal(SIGHUP, onJobStopSignal);
        o.stop = &g_stop;
        const bool quiet = args.flag("quiet");
        std::optional<std::pair<std::int64_t, std::int64_t>> last; // server time, rows done
        o.progress = [&](const JobStatus& s) {
            const std::int64_t done = s.matched - s.skippedNotApplicable - s.pending();
            const std::int64_t todo = s.matched - s.skippedNotApplicable;
            if (!quiet && !s.ended()) {
                std::string rate;
                if (last && s.serverNowUs > last->first) {
                    const double perSecond = double(done - last->second) * 1e6 / double(s.serverNowUs - last->first);
                    char b[96];
                    if (perSecond > 0)
                        std::snprintf(b, sizeof b, ", %.0f rows/s, about %.0f s left", perSecond,
                            double(s.pending()) / perSecond);
                    else
                        std::snprintf(b, sizeof b, ", waiting for rows found locked");
                    rate = b;
                }
                std::fprintf(stderr, "job %lld: %lld of %lld done (changed %lld, refused %lld)%s\n",
                    static_cast<long long>(s.id), static_cast<long long>(done), static_cast<long long>(todo),
                    static_cast<long long>(s.changed), static_cast<long long>(s.refused()), rate.c_str());
            }
            last = std::make_pair(s.serverNowUs, done);
            return true;
        };
        JobStatus s;
        try {
            s = runRecoveryJob(conn, schema, id, o);
        } catch (const JobRefused&) {
            throw;
        } catch (const std::exception& e) {
            // A failover, a switchover, a server restart, a lost network: the job keeps every
            // batch that committed and is resumable at once (its runner's lock went with the session).
            const bool lost = dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr;
            std::fprintf(stderr,
                "idemctl job: running job %lld stopped: %s\njob %lld stays active with every batch that committed; "
                "`idemctl job resume %lld` continues it (connected to the primary)\n",
                static_cast<long long>(id),
                displaySafe(lost ? "lost the connection to the database server: " + describeLostConnection(e.what())
                                 : std::string(e.what()),
                    messageDisplay)
                    .c_str(),
                static_cast<long long>(id), static_cast<long long>(id));
            return ExitFailure;
        }
        if (s.redrive)
            g_outcomes = readRedriveOutcomes(conn, schema, id);
        if (args.flag("json"))
            std::cout << statusJson(s).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        else
            printStatus(s);
        if (s.state == "finished")
            return ExitOk;
        if (s.state == "cancelled")
            return ExitRefused;
        std::fprintf(stderr,
            "idemctl job: stopped; job %lld is active with %lld row(s) to do: `idemctl job resume %lld` continues it, "
            "`idemctl job cancel %lld --reason ...` ends it\n",
            static_cast<long long>(s.id), static_cast<long long>(s.pending()), static_cast<long long>(s.id),
            static_cast<long long>(s.id));
        return ExitFailure;
    }

    int refused(const JobRefused& e, const char* what)
    {
        std::cerr << "idemctl job " << what << ": refused (SQLSTATE " << e.sqlstate
                  << "): " << displaySafe(e.what(), messageDisplay) << "\nnothing changed\n";
        return ExitRefused;
    }

    TaskFilter filterFrom(const Args& args)
    {
        TaskFilter f;
        for (const auto& s : args.values("status")) {
            if (s != "processing" && s != "succeeded" && s != "retryable_failed" && s != "failed")
                throw UsageError("--status must be processing, succeeded, retryable_failed or failed, not '" + s + "'");
            f.statuses.push_back(s);
        }
        f.tenant = args.value("tenant");
        f.operation = args.value("operation");
        f.keyPrefix = args.value("key-prefix");
        if (args.value("min-attempts"))
            f.minAttempts = static_cast<int>(args.intValue("min-attempts", 0, 0, 1'000'000));
        f.errorClass = args.value("error-class");
        f.expiredLease = args.flag("expired-lease");
        f.liveLease = args.flag("live-lease");
        f.uncertain = args.flag("uncertain");
        f.exhausted = args.flag("exhausted");
        f.failedSince = args.value("failed-since");
        if (args.value("unfinished-for"))
            f.unfinishedForMinutes = static_cast<int>(args.intValue("unfinished-for", 0, 0, 5'256'000));
        if (args.value("updated-within"))
            f.updatedWithinMinutes = static_cast<int>(args.intValue("updated-within", 1, 1, 5'256'000));
        f.digestConflicts = args.flag("digest-conflicts");
        f.errorContains = args.value("error-contains");
        return f;
    }

    int jobStart(const std::vector<std::string>& argv)
    {
        Args args(argv,
            { "dsn", "schema", "action", "reason", "actor", "cap", "attempts", "batch", "duty", "status", "tenant",
                "operation", "key-prefix", "min-attempts", "error-class", "failed-since", "unfinished-for",
                "updated-within", "error-contains" },
            { "help", "json", "dry-run", "detach", "quiet", "expired-lease", "live-lease", "uncertain", "exhausted",
                "digest-conflicts", "re-execute" },
            { "status" });
        if (args.flag("help")) {
            std::cout << jobHelp;
            return ExitOk;
        }
        if (!args.positional().empty())
            throw UsageError("unexpected argument '" + args.positional().front() + "'");
        if (args.flag("dry-run") && args.flag("detach"))
            throw UsageError("--dry-run and --detach exclude each other");
        const auto actionName = args.value("action");
        if (!actionName)
            throw UsageError("--action is required: requeue, release or fail");
        const auto action = parseAction(*actionName);
        if (!action)
            throw UsageError("--action must be requeue, release or fail, not '" + *actionName + "'");
        if (args.value("attempts") && *action != RecoveryAction::Requeue)
            throw UsageError("--attempts is for requeue");
        if (args.flag("re-execute") && *action != RecoveryAction::Requeue)
            throw UsageError("--re-execute is for requeue");
        JobRequest r;
        r.reexecute = args.flag("re-execute");
        r.action = *action;
        r.filter = filterFrom(args);
        r.cap = args.intValue("cap", JobLimits::defaultCap, 1, JobLimits::maxCap);
        r.extraAttempts = static_cast<int>(args.intValue("attempts", 1, 1, ActionOptions::maxExtraAttempts));
        r.actor = args.valueOr("actor", localActor());
        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));

        if (args.flag("dry-run")) {
            jobFilterJson(r.filter); // a bad filter is a usage error before connecting
            auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl job" });
            const auto p = previewJob(*conn, schema, r.action, r.filter, JobLimits::maxCap);
            const auto need = approvalNeeded(*conn, schema, "job", std::min(p.applicable, JobLimits::maxCap));
            if (args.flag("json")) {
                std::cout << nlohmann::json({ { "schema", schema.name() }, { "action", *actionName },
                                                { "filter", nlohmann::json::parse(jobFilterJson(r.filter)) },
                                                { "moment", formatMicros(p.momentUs) }, { "matched", p.matched },
                                                { "applicable", p.applicable }, { "more", p.more },
                                                { "cap", r.cap }, { "over_cap", p.matched > r.cap || p.more },
                                                { "needs_approval",
                                                    need.needed() ? nlohmann::json(need.why) : nlohmann::json(nullptr) } })
                                 .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                          << '\n';
            } else {
                std::printf("as of %s: %s%lld task(s) match %s; %s applies to %lld of them%s\n",
                    formatMicros(p.momentUs).c_str(), p.more ? "more than " : "", static_cast<long long>(p.matched),
                    safe(describeJobFilter(r.filter), 400).c_str(), actionName->c_str(),
                    static_cast<long long>(p.applicable),
                    (p.matched > r.cap || p.more) ? ("; more than the cap of " + std::to_string(r.cap)
                                                        + ": the job would be refused (raise --cap)")
                                                        .c_str()
                                                  : "");
                if (need.needed())
                    std::printf("if started now, %s\n", approvalNeedWords(need, p.applicable).c_str());
            }
            return ExitOk;
        }

        r.reason = args.value("reason").value_or("");
        if (!args.value("reason"))
            throw UsageError("--reason is required (it goes into the audit trail)");
        validateJobRequest(r);
        r.runsHere = !args.flag("detach");
        const auto run = runOptions(args);
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl job" });
        if (r.reexecute) {
            // Said before it starts: who will re-execute (or that nobody is there to).
            FILE* out = args.flag("json") ? stderr : stdout;
            const auto statuses = readRedriveStatus(*conn, schema, r.filter.tenant.value_or(std::string()),
                r.filter.operation.value_or(std::string()));
            if (statuses.empty())
                std::fprintf(out, "re-execute: no operation is re-drivable%s: the keys wait for their clients\n",
                    r.filter.operation ? (" as " + safe(*r.filter.operation, 64)).c_str() : "");
            for (const auto& st : statuses)
                std::fprintf(out, "re-execute: %s\n", safe(redriveAvailability(st), 200).c_str());
        }
        JobStart started;
        try {
            started = startJob(*conn, schema, r);
        } catch (const JobRefused& e) {
            return refused(e, "start");
        } catch (const JobNeedsDirectConnection& e) {
            std::fprintf(stderr, "idemctl job start: %s\n", e.what());
            return ExitFailure;
        }
        if (!args.flag("json") || args.flag("detach"))
            std::fprintf(args.flag("json") ? stderr : stdout,
                "job %lld started: %s of %lld task(s) matched as of %s: %lld to do%s; spec sha256 %s; audit entry "
                "%lld\n",
                static_cast<long long>(started.jobId), actionName->c_str(), static_cast<long long>(started.matched),
                formatMicros(started.momentUs).c_str(), static_cast<long long>(started.pending),
                started.skipped > 0 ? (", " + std::to_string(started.skipped) + " skipped (" + *actionName
                                          + " does not apply to their status)")
                                          .c_str()
                                    : "",
                started.specSha256.c_str(), static_cast<long long>(started.auditId));
        if (started.awaitingApproval) {
            if (args.flag("json")) {
                const auto s = readJob(*conn, schema, started.jobId);
                std::cout << statusJson(*s).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
            } else {
                std::printf("waiting for approval by another login holding the approve right (role idem_may_approve): "
                            "%s; it runs `idemctl approvals approve %lld --spec %s --reason ...`, then `idemctl job "
                            "resume %lld` runs it\n",
                    started.approvalWhy == "budget"
                        ? "over this login's budget of rows changed without a second person (idemctl approvals policy)"
                        : "more rows to act on than the approval policy allows a job without one",
                    static_cast<long long>(started.approvalRequestId.value_or(0)), started.specSha256.c_str(),
                    static_cast<long long>(started.jobId));
            }
            return ExitOk;
        }
        if (args.flag("detach")) {
            if (args.flag("json")) {
                const auto s = readJob(*conn, schema, started.jobId);
                std::cout << statusJson(*s).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
            } else {
                std::printf("not run here (--detach): `idemctl job resume %lld` or CALL idem_job_run(%lld) runs it\n",
                    static_cast<long long>(started.jobId), static_cast<long long>(started.jobId));
            }
            return ExitOk;
        }
        try {
            return runHere(*conn, schema, started.jobId, run, args);
        } catch (const JobRefused& e) {
            return refused(e, "start");
        }
    }

    int jobResume(const std::vector<std::string>& argv)
    {
        Args args(argv, { "dsn", "schema", "batch", "duty", "actor" }, { "help", "json", "quiet" });
        if (args.flag("help")) {
            std::cout << jobHelp;
            return ExitOk;
        }
        const auto id = jobId(args);
        const auto run = runOptions(args);
        validateReasonAndActor("resume", run.actor);
        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl job" });
        try {
            return runHere(*conn, schema, id, run, args);
        } catch (const JobRefused& e) {
            return refused(e, "resume");
        }
    }

    int jobStatus(const std::vector<std::string>& argv)
    {
        Args args(argv, { "dsn", "schema", "limit" }, { "help", "json" });
        if (args.flag("help")) {
            std::cout << jobHelp;
            return ExitOk;
        }
        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
        if (args.positional().size() > 1)
            throw UsageError("name at most one job");
        const int limit = static_cast<int>(args.intValue("limit", 20, 1, 1000));
        if (!args.positional().empty()) {
            const auto id = jobId(args);
            auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl job" });
            const auto s = readJob(*conn, schema, id);
            if (!s) {
                std::cerr << "idemctl job status: there is no job " << id << '\n';
                return ExitFailure;
            }
            if (s->redrive)
                g_outcomes = readRedriveOutcomes(*conn, schema, id);
            if (args.flag("json"))
                std::cout << statusJson(*s).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
            else
                printStatus(*s);
            return ExitOk;
        }
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl job" });
        const auto jobs = listJobs(*conn, schema, limit);
        if (args.flag("json")) {
            nlohmann::json j = { { "schema", schema.name() }, { "jobs", nlohmann::json::array() } };
            for (const auto& s : jobs)
                j["jobs"].push_back(statusJson(s));
            std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
            return ExitOk;
        }
        if (jobs.empty()) {
            std::printf("no jobs\n");
            return ExitOk;
        }
        std::printf("%6s  %-10s %-8s %8s %8s %8s %8s %8s  %s\n", "ID", "STATE", "ACTION", "MATCHED", "CHANGED",
            "REFUSED", "SKIPPED", "PENDING", "RUNNER / FILTER");
        for (const auto& s : jobs) {
            const std::string state = s.state == "awaiting_approval" ? "approval" : s.state;
            std::printf("%6lld  %-10s %-8s %8lld %8lld %8lld %8lld %8lld  %s\n", static_cast<long long>(s.id),
                state.c_str(), s.action.c_str(), static_cast<long long>(s.matched), static_cast<long long>(s.changed),
                static_cast<long long>(s.refused()), static_cast<long long>(s.skipped()),
                static_cast<long long>(s.pending()),
                (s.state == "active" ? (s.runnerAlive ? "running (pid " + std::to_string(s.runnerPid.value_or(0)) + ")"
                                                      : std::string("not running"))
                                           + ": "
                                     : std::string())
                    .append(safe(filterWords(s.filterJson), 120))
                    .c_str());
        }
        return ExitOk;
    }

    int jobCancel(const std::vector<std::string>& argv)
    {
        Args args(argv, { "dsn", "schema", "reason", "actor" }, { "help", "json" });
        if (args.flag("help")) {
            std::cout << jobHelp;
            return ExitOk;
        }
        const auto id = jobId(args);
        if (!args.value("reason"))
            throw UsageError("--reason is required (it goes into the audit trail)");
        const std::string reason = *args.value("reason");
        const std::string actor = args.valueOr("actor", localActor());
        validateReasonAndActor(reason, actor);
        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl job" });
        JobCancel c;
        try {
            c = cancelJob(*conn, schema, id, reason, actor);
        } catch (const JobRefused& e) {
            return refused(e, "cancel");
        }
        const auto s = readJob(*conn, schema, id);
        if (args.flag("json")) {
            std::cout << nlohmann::json({ { "audit_id", c.auditId }, { "skipped_cancelled", c.skippedCancelled },
                                            { "job", statusJson(*s) } })
                             .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                      << '\n';
            return ExitOk;
        }
        std::printf("job %lld cancelled: %lld row(s) not done are skipped; it had changed %lld and refused %lld; "
                    "audit entry %lld%s\n",
            static_cast<long long>(id), static_cast<long long>(c.skippedCancelled), static_cast<long long>(s->changed),
            static_cast<long long>(s->refused()), static_cast<long long>(c.auditId),
            s->runnerAlive ? "; its runner stops at its next batch" : "");
        return ExitOk;
    }

    int jobRefusedList(const std::vector<std::string>& argv)
    {
        Args args(argv, { "dsn", "schema" }, { "help", "json", "csv" });
        if (args.flag("help")) {
            std::cout << jobHelp;
            return ExitOk;
        }
        const auto id = jobId(args);
        if (args.flag("json") && args.flag("csv"))
            throw UsageError("--json and --csv exclude each other");
        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl job" });
        const auto s = readJob(*conn, schema, id);
        if (!s) {
            std::cerr << "idemctl job refused: there is no job " << id << '\n';
            return ExitFailure;
        }
        nlohmann::json rows = nlohmann::json::array();
        if (args.flag("csv"))
            std::cout << jobItemsCsvHeader();
        else if (!args.flag("json"))
            std::printf("%8s  %-8s %-16s %-27s %-16s %-27s %5s  %s\n", "SEQ", "WHY", "SEEN_STATUS", "SEEN_UPDATED_AT",
                "NOW_STATUS", "NOW_UPDATED_AT", "TRIES", "KEY");
        std::int64_t after = 0, n = 0;
        for (;;) {
            const auto page = listJobItems(*conn, schema, id, "refused", after, 5000);
            for (const auto& it : page) {
                ++n;
                if (args.flag("csv")) {
                    std::cout << jobItemCsvLine(it);
                } else if (args.flag("json")) {
                    rows.push_back({ { "seq", it.seq }, { "key", it.key }, { "why", it.why },
                        { "seen_status", it.seenStatus }, { "seen_updated_at", formatMicros(it.seenUpdatedAtUs) },
                        { "seen_updated_at_us", it.seenUpdatedAtUs }, { "now_status", optText(it.nowStatus) },
                        { "now_updated_at", optTime(it.nowUpdatedAtUs) }, { "now_updated_at_us", opt(it.nowUpdatedAtUs) },
                        { "tries", it.tries }, { "done_at", optTime(it.doneAtUs) } });
                } else {
                    std::printf("%8lld  %-8s %-16s %-27s %-16s %-27s %5d  %s\n", static_cast<long long>(it.seq),
                        it.why.c_str(), it.seenStatus.c_str(), formatMicros(it.seenUpdatedAtUs).c_str(),
                        it.nowStatus.empty() ? "-" : it.nowStatus.c_str(),
                        it.nowUpdatedAtUs ? formatMicros(*it.nowUpdatedAtUs).c_str() : "-", it.tries,
                        safe(it.key).c_str());
                }
            }
            if (page.size() < 5000)
                break;
            after = page.back().seq;
        }
        if (args.flag("json"))
            std::cout << nlohmann::json({ { "schema", schema.name() }, { "job_id", id }, { "state", s->state },
                                            { "refused", rows } })
                             .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                      << '\n';
        else if (!args.flag("csv") && n == 0)
            std::printf("job %lld refused no row%s\n", static_cast<long long>(id),
                s->ended() ? "" : " so far");
        return ExitOk;
    }

} // namespace

int runJob(const std::vector<std::string>& argv)
{
    if (argv.empty())
        throw UsageError("name a subcommand: start, status, resume, cancel or refused");
    const std::vector<std::string> rest(argv.begin() + 1, argv.end());
    if (argv[0] == "start")
        return jobStart(rest);
    if (argv[0] == "status")
        return jobStatus(rest);
    if (argv[0] == "resume")
        return jobResume(rest);
    if (argv[0] == "cancel")
        return jobCancel(rest);
    if (argv[0] == "refused")
        return jobRefusedList(rest);
    // Schema v28: one approval mechanism for jobs and changes, under idemctl approvals.
    if (argv[0] == "pending" || argv[0] == "approve" || argv[0] == "policy")
        throw UsageError("idemctl job " + argv[0] + " moved: idemctl approvals "
            + (argv[0] == "pending" ? std::string("list") : argv[0])
            + " (approvals approve and decline take the request's id, as approvals list shows it)");
    if (argv[0] == "--help" || argv[0] == "-h") {
        std::cout << jobHelp;
        return ExitOk;
    }
    throw UsageError("unknown job subcommand '" + argv[0] + "' (start, status, resume, cancel or refused)");
}

} // namespace idem::cli
