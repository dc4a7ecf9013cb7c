// idemctl job: how a job is said, as JSON (--json) and as text (schema v19, operations/jobs.h).
#include <cstdio>
#include <exception>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/job.h"
#include "core/utf8.h"

namespace idem::cli::job {

nlohmann::json opt(const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json optTime(const std::optional<std::int64_t>& us)
{
    return us ? nlohmann::json(formatMicros(*us)) : nlohmann::json(nullptr);
}
nlohmann::json optText(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

namespace {

    nlohmann::json outcomesJson(const JobStatus& s, const std::optional<RedriveOutcomes>& outcomes)
    {
        if (!s.redrive || !outcomes)
            return nullptr;
        const auto& o = *outcomes;
        return { { "queued", o.queued }, { "running", o.running }, { "succeeded", o.succeeded },
            { "failed", o.failed }, { "conflict", o.conflict }, { "gone", o.gone },
            { "summary", redriveOutcomeSentence(s.changed, o) } };
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

} // namespace

nlohmann::json statusJson(const JobStatus& s, const std::optional<RedriveOutcomes>& outcomes)
{
    return { { "id", s.id }, { "re_execute", s.redrive }, { "re_executions", outcomesJson(s, outcomes) }, { "state", s.state }, { "action", s.action },
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

std::string safe(const std::string& s, std::size_t n) { return displaySafe(s, n); }

std::string filterWords(const std::string& json)
{
    try {
        return describeJobFilter(taskFilterFromJobJson(json));
    } catch (const std::exception&) {
        return json;
    }
}

void printStatus(const JobStatus& s, const std::optional<RedriveOutcomes>& outcomes)
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
    if (s.redrive && outcomes)
        std::printf("  re-execute %s\n", redriveOutcomeSentence(s.changed, *outcomes).c_str());
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

int refused(const JobRefused& e, const char* what)
{
    std::cerr << "idemctl job " << what << ": refused (SQLSTATE " << e.sqlstate
              << "): " << displaySafe(e.what(), messageDisplay) << "\nnothing changed\n";
    return ExitRefused;
}

} // namespace idem::cli::job
