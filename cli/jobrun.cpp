// idemctl job start and resume: a recovery job started and run here, with its progress on stderr
// (schema v19, operations/jobs.h).
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/job.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/jobs.h"
#include "operations/redrive.h"

namespace idem::cli::job {

namespace {

    std::atomic<bool> g_stop { false };
    extern "C" void onJobStopSignal(int) { g_stop = true; }

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
        const auto outcomes = s.redrive ? std::optional(readRedriveOutcomes(conn, schema, id)) : std::nullopt;
        if (args.flag("json"))
            std::cout << statusJson(s, outcomes).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        else
            printStatus(s, outcomes);
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

} // namespace

int start(const std::vector<std::string>& argv)
{
    Args args(argv,
        { "dsn", "schema", "action", "reason", "actor", "cap", "attempts", "batch", "duty", "status", "tenant",
            "operation", "key-prefix", "min-attempts", "error-class", "failed-since", "unfinished-for",
            "updated-within", "error-contains" },
        { "help", "json", "dry-run", "detach", "quiet", "expired-lease", "live-lease", "uncertain", "exhausted",
            "digest-conflicts", "re-execute" },
        { "status" });
    if (args.flag("help")) {
        std::cout << help;
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

int resume(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema", "batch", "duty", "actor" }, { "help", "json", "quiet" });
    if (args.flag("help")) {
        std::cout << help;
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

} // namespace idem::cli::job
