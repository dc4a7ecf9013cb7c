#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"
#include "operations/actions.h"
#include "operations/taskfilter.h"

namespace idem {

// Recovery jobs (schema v19, resources/sql/migrations/0019_recovery_jobs.sql): one recovery
// action (requeue, release, fail) applied by the database to every task a TaskFilter matched as
// of the job's start, in batches that commit on their own, each row under the single actions'
// compare-and-set guard (a row that moved on since the start is refused and listed, never
// changed), one audit entry per changed row linked to the job, two for the job itself (start,
// end). A job survives its runner: killed, cancelled or disconnected, anyone with idem_operator
// resumes it from its last committed batch. Started with idem_job_start, run with
// CALL idem_job_run (or idem_job_attach / idem_job_batch / idem_job_detach), cancelled with
// idem_job_cancel; read from idem_jobs and idem_job_items (idem_reader). No Qt.

struct JobLimits {
    static constexpr std::int64_t maxCap = 1'000'000; // rows one job may match (the SQL refuses more)
    static constexpr std::int64_t defaultCap = 10'000; // idemctl's and the console's default
    static constexpr int maxBatch = 10'000;
    static constexpr int defaultBatch = 100;
    static constexpr double defaultDuty = 0.2; // batches take at most this share of the time (bench/README.md, Session 14)
    static constexpr int busyTries = 5; // a row found locked this many times is refused as busy
};

// The filter as idem_job_filter_check takes it: a JSON object with the set fields of `filter`
// (snake_case names; failedSince as failed_since_us, microseconds since the epoch). Throws
// std::invalid_argument for what validateTaskQuery refuses (before any I/O).
std::string jobFilterJson(const TaskFilter& filter);
// The TaskFilter a job's filter JSON describes (what idem_jobs.filter holds). Throws
// std::invalid_argument for anything else.
TaskFilter taskFilterFromJobJson(const std::string& json);
// One line for people: "status failed, tenant t1" or "every task".
std::string describeJobFilter(const TaskFilter& filter);

struct JobRequest {
    RecoveryAction action = RecoveryAction::Requeue;
    TaskFilter filter;
    std::int64_t cap = JobLimits::defaultCap; // 1..JobLimits::maxCap: more matching rows refuse the job
    int extraAttempts = 1; // requeue only: 1..1000
    std::string reason; // the recovery actions' rules (validateReasonAndActor)
    std::string actor; // empty: localActor()
    // The caller runs the job at once through this connection (idemctl job start, the console's
    // "run it from this console"): behind a transaction pooler its runner cannot hold the job, so
    // startJob refuses (JobNeedsDirectConnection) before anything is written.
    bool runsHere = false;
    // Requeue only (schema v25, docs/redrive.md): each row the job requeues also gets a re-drive
    // item, run by a re-driver of its operation with the stored request.
    bool reexecute = false;
};

// The job would run here through a connection pooler: nothing was written.
struct JobNeedsDirectConnection : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws std::invalid_argument, before any I/O, for what idem_job_start would refuse as bad input.
void validateJobRequest(const JobRequest& request);

// The database refused to start, run or cancel a job, and changed nothing: no such job, the
// filter matches no task, the action applies to none of them (ID002); a bad argument (ID003);
// more rows than the cap, rows another open job has still to do, a job that has ended, waits for
// approval or another session runs (ID004). what() is the server's message (and hint); quote it
// through displaySafe. sqlstate: which of the three.
struct JobRefused : std::runtime_error {
    JobRefused(const std::string& message, std::string state) : std::runtime_error(message), sqlstate(std::move(state)) { }
    std::string sqlstate;
};

struct JobPreview {
    std::int64_t momentUs = 0;
    std::int64_t matched = 0; // up to the limit
    std::int64_t applicable = 0; // of those, the ones the action applies to
    bool more = false; // more rows than the limit match
};

// What startJob would match now, changing nothing (idem_job_preview; idem_reader suffices).
JobPreview previewJob(pqxx::connection& conn, const SchemaName& schema, RecoveryAction action, const TaskFilter& filter,
    std::int64_t limit = JobLimits::maxCap);

struct JobStart {
    std::int64_t jobId = 0;
    std::int64_t momentUs = 0;
    std::int64_t matched = 0;
    std::int64_t pending = 0; // rows the action applies to: the job's work
    std::int64_t skipped = 0; // matched rows the action does not apply to (not_applicable)
    std::string specSha256;
    std::int64_t auditId = 0; // the job's start entry
    bool awaitingApproval = false; // schema v21: more rows than the approval policy's threshold
    std::string approvalWhy; // schema v23: rows (over job_rows), budget (over the login's budget); empty: none
    std::optional<std::int64_t> approvalRequestId; // schema v28: its request, which another login approves
};

// Starts a job (one transaction; no task row changes yet). Throws std::invalid_argument for bad
// input (nothing sent), JobRefused, pqxx::insufficient_privilege for a role without idem_operator.
JobStart startJob(pqxx::connection& conn, const SchemaName& schema, const JobRequest& request);

struct JobStatus {
    std::int64_t id = 0;
    std::string state; // awaiting_approval, active, finished, cancelled
    std::string action;
    std::optional<int> extraAttempts;
    std::string filterJson;
    std::int64_t momentUs = 0;
    std::int64_t cap = 0;
    std::string specSha256;
    std::string reason;
    std::string dbRole;
    std::string actor;
    std::string application;
    std::int64_t matched = 0;
    std::int64_t changed = 0;
    std::int64_t refusedMovedOn = 0;
    std::int64_t refusedBusy = 0;
    std::int64_t refusedGone = 0;
    std::int64_t skippedNotApplicable = 0;
    std::int64_t skippedCancelled = 0;
    std::int64_t batches = 0;
    int attaches = 0;
    bool runnerAlive = false; // a session runs it right now
    std::optional<int> runnerPid; // the live runner's backend
    std::string runnerRole; // the last runner's (alive or not); empty when never run
    std::string runnerActor;
    std::optional<std::int64_t> runnerSinceUs;
    std::optional<std::int64_t> lastBatchAtUs;
    std::optional<std::int64_t> finishedAtUs;
    std::string cancelledBy;
    std::string cancelReason;
    std::optional<std::int64_t> startAuditId;
    std::optional<std::int64_t> endAuditId;
    std::int64_t serverNowUs = 0;
    // Schema v21: the role whose rights the rows are applied with, and the job's approval.
    std::string starterRole;
    bool needsApproval = false;
    std::optional<std::int64_t> approvalThreshold;
    std::optional<std::int64_t> approvalRequestedUntilUs; // approvable until then
    std::string approvedLogin; // empty: not approved
    std::string approvedRole;
    std::string approvedActor;
    std::optional<std::int64_t> approvedAtUs;
    std::optional<std::int64_t> approvalExpiresAtUs; // may start or resume until then
    std::string approvalWhy; // schema v23: rows or budget; empty before v23 or when not needed
    std::optional<std::int64_t> approvalRequestId; // schema v28: its request (operations/approvals.h)
    bool redrive = false; // schema v25: a requeue job that re-executes what it requeues

    std::int64_t refused() const { return refusedMovedOn + refusedBusy + refusedGone; }
    std::int64_t skipped() const { return skippedNotApplicable + skippedCancelled; }
    std::int64_t pending() const { return matched - changed - refused() - skipped(); }
    bool ended() const { return state == "finished" || state == "cancelled"; }
};

// One job, or nullopt when there is none with that id. Read-only (idem_reader suffices).
std::optional<JobStatus> readJob(pqxx::connection& conn, const SchemaName& schema, std::int64_t id);
// The open jobs (awaiting approval, active), then the newest ended ones, at most `limit` (1..1000).
std::vector<JobStatus> listJobs(pqxx::connection& conn, const SchemaName& schema, int limit = 20);

struct JobRunOptions {
    int batch = JobLimits::defaultBatch; // 1..JobLimits::maxBatch
    double duty = JobLimits::defaultDuty; // 0.01..1
    // Each CALL idem_job_run lasts about this long; the status is read (and `progress` called)
    // between two. A shorter call costs an attach each time, a longer one slower progress.
    int callSeconds = 2; // 1..3600
    std::string actor; // empty: localActor()
    // Called with the job's status after each call; return false to stop running it (it stays
    // active: resume it later).
    std::function<bool(const JobStatus&)> progress;
    const std::atomic<bool>* stop = nullptr; // set: stop after the current call, as progress returning false
};

// Runs (or resumes) job `id` until it has ended, by CALL idem_job_run: this session becomes its
// runner (refused with JobRefused while another runs it, or once it has ended). Needs a direct
// connection (a session advisory lock marks the runner: refused behind a pooler) and sets the
// session's client_connection_check_interval to 1 s, so that the server stops running the job
// within a second of this process dying. Returns the job's status when it ended or was stopped.
JobStatus runRecoveryJob(pqxx::connection& conn, const SchemaName& schema, std::int64_t id, const JobRunOptions& options = {});

struct JobCancel {
    std::string state; // cancelled
    std::int64_t skippedCancelled = 0;
    std::int64_t auditId = 0;
};

// Cancels job `id` (idem_job_cancel): waits for the batch in flight, then records the rows not
// done as skipped (cancelled) with the job's closing audit entry. Throws JobRefused for no such
// job or one that has ended.
JobCancel cancelJob(pqxx::connection& conn, const SchemaName& schema, std::int64_t id, const std::string& reason,
    const std::string& actor = {});

// Schema v23: whether `rows` more task rows changed now by this login, by a job ("job") or single
// actions ("requeue", "release", "fail"), would need another login's approval
// (idem_approval_needed, the rule the database applies when they start). Read-only.
struct ApprovalNeed {
    bool known = false; // false: the schema predates v23 (only a job's threshold applies there)
    std::string why; // empty: no approval needed; "rows": over the job threshold; "budget": over the budget
    std::optional<std::int64_t> jobRows;
    std::optional<std::int64_t> budgetRows;
    int windowSeconds = 3600;
    std::int64_t used = 0; // this login's rows changed without approval within the window
    std::optional<std::int64_t> freesAtUs; // when the oldest of those leaves the window
    bool needed() const { return !why.empty(); }
};
ApprovalNeed approvalNeeded(pqxx::connection& conn, const SchemaName& schema, const std::string& kind, std::int64_t rows);
// One sentence for people: why it needs approval and who gives it; empty when it needs none.
std::string approvalNeedWords(const ApprovalNeed& need, std::int64_t rows);

struct JobItem {
    std::int64_t seq = 0;
    std::string key;
    std::string state; // pending, changed, refused, skipped
    std::string why; // refused: moved_on, busy, gone; skipped: not_applicable, cancelled
    std::string seenStatus; // at the job's moment
    std::int64_t seenUpdatedAtUs = 0;
    std::string nowStatus; // moved_on: as the job found the row; changed: after the action
    std::optional<std::int64_t> nowUpdatedAtUs;
    int tries = 0; // times the row was found locked
    std::optional<std::int64_t> doneAtUs;
    std::optional<std::int64_t> auditId; // changed: its entry
};

// A job's rows in one state (refused by default), in key order after seq `afterSeq`, at most
// `limit` (1..10000). Read-only (idem_reader suffices).
std::vector<JobItem> listJobItems(pqxx::connection& conn, const SchemaName& schema, std::int64_t id,
    const std::string& state = "refused", std::int64_t afterSeq = 0, int limit = 1000);

// The CSV of refused rows idemctl job refused --csv writes: a header, then one line per row.
std::string jobItemsCsvHeader();
std::string jobItemCsvLine(const JobItem& item);

} // namespace idem
