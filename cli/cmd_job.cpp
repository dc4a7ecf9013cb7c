// idemctl job: server-side recovery jobs (schema v19, operations/jobs.h): the command, a job's
// status, its cancel and its refused rows; start and resume are in jobrun.cpp, the words in jobtext.cpp.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/job.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/jobs.h"
#include "operations/redrive.h"

namespace idem::cli {

namespace job {

    const char* const help
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

} // namespace job

namespace {

    using namespace job;

    int jobStatus(const std::vector<std::string>& argv)
    {
        Args args(argv, { "dsn", "schema", "limit" }, { "help", "json" });
        if (args.flag("help")) {
            std::cout << help;
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
            const auto outcomes = s->redrive ? std::optional(readRedriveOutcomes(*conn, schema, id)) : std::nullopt;
            if (args.flag("json"))
                std::cout << statusJson(*s, outcomes).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
            else
                printStatus(*s, outcomes);
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
            std::cout << help;
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
            std::cout << help;
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
        return job::start(rest);
    if (argv[0] == "status")
        return jobStatus(rest);
    if (argv[0] == "resume")
        return job::resume(rest);
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
        std::cout << job::help;
        return ExitOk;
    }
    throw UsageError("unknown job subcommand '" + argv[0] + "' (start, status, resume, cancel or refused)");
}

} // namespace idem::cli

