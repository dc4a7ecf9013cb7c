#include "operations/jobs.h"

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <string_view>

#include "core/connection.h"
#include "core/utf8.h"
#include "operations/csv.h"
#include "operations/tasklist.h"
#include "operations/wording.h"

namespace idem {

namespace {

    constexpr std::int64_t maxMinutes = 5'256'000; // ten years, as idem_job_filter_check
    constexpr int maxMinAttempts = 1'000'000;
    constexpr std::size_t maxNameBytes = 1024;

    std::optional<std::int64_t> optionalInt(const pqxx::field& f)
    {
        return f.is_null() ? std::nullopt : std::optional<std::int64_t>(f.as<std::int64_t>());
    }

    std::string text(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }

    std::string micros(const std::string& column) { return updatedAtMicrosSql(column); }

    // The server's words: its message and, when it gave one, its hint.
    JobRefused refusal(const pqxx::sql_error& e) { return JobRefused(serverWords(e), e.sqlstate()); }

    std::string jobColumns(const SchemaName& schema)
    {
        return "j.id, j.state, j.action, j.extra_attempts, j.filter::text, " + micros("j.moment")
            + ", j.cap, COALESCE(j.spec_sha256, ''), j.reason, j.db_role, j.actor, j.application, j.matched,"
              " j.changed, j.refused_moved_on, j.refused_busy, j.refused_gone, j.skipped_not_applicable,"
              " j.skipped_cancelled, j.batches, j.attaches, "
            + schema.qualify("idem_job_runner_alive") + "(j), j.runner_pid, j.runner_role, j.runner_actor, "
            + micros("j.runner_since") + ", " + micros("j.last_batch_at") + ", " + micros("j.finished_at")
            + ", j.cancelled_by, j.cancel_reason, j.start_audit_id, j.end_audit_id, " + micros("clock_timestamp()")
            + ", COALESCE(j.starter_role, j.db_role), j.needs_approval, j.approval_threshold, "
            // Schema v28: the job's request (idem_approval_requests a, see jobsFrom).
            + micros("a.approvable_until") + ", a.approved_login, a.approved_role, a.approved_actor, "
            + micros("a.approved_at") + ", " + micros("a.approval_expires_at")
            + ", COALESCE(j.approval_why, ''), j.redrive, a.id";
    }

    // The jobs with their approval requests (a), for jobColumns.
    std::string jobsFrom(const SchemaName& schema)
    {
        return schema.qualify("idem_jobs") + " j LEFT JOIN " + schema.qualify("idem_approval_requests")
            + " a ON a.job_id = j.id";
    }

    JobStatus statusFrom(const pqxx::row& r)
    {
        JobStatus s;
        s.id = r[0].as<std::int64_t>();
        s.state = r[1].as<std::string>();
        s.action = r[2].as<std::string>();
        if (!r[3].is_null())
            s.extraAttempts = r[3].as<int>();
        s.filterJson = r[4].as<std::string>();
        s.momentUs = r[5].as<std::int64_t>();
        s.cap = r[6].as<std::int64_t>();
        s.specSha256 = r[7].as<std::string>();
        s.reason = r[8].as<std::string>();
        s.dbRole = r[9].as<std::string>();
        s.actor = r[10].as<std::string>();
        s.application = r[11].as<std::string>();
        s.matched = r[12].as<std::int64_t>();
        s.changed = r[13].as<std::int64_t>();
        s.refusedMovedOn = r[14].as<std::int64_t>();
        s.refusedBusy = r[15].as<std::int64_t>();
        s.refusedGone = r[16].as<std::int64_t>();
        s.skippedNotApplicable = r[17].as<std::int64_t>();
        s.skippedCancelled = r[18].as<std::int64_t>();
        s.batches = r[19].as<std::int64_t>();
        s.attaches = r[20].as<int>();
        s.runnerAlive = r[21].as<bool>();
        if (s.runnerAlive && !r[22].is_null())
            s.runnerPid = r[22].as<int>();
        s.runnerRole = text(r[23]);
        s.runnerActor = text(r[24]);
        s.runnerSinceUs = optionalInt(r[25]);
        s.lastBatchAtUs = optionalInt(r[26]);
        s.finishedAtUs = optionalInt(r[27]);
        s.cancelledBy = text(r[28]);
        s.cancelReason = text(r[29]);
        s.startAuditId = optionalInt(r[30]);
        s.endAuditId = optionalInt(r[31]);
        s.serverNowUs = r[32].as<std::int64_t>();
        s.starterRole = r[33].as<std::string>();
        s.needsApproval = r[34].as<bool>();
        s.approvalThreshold = optionalInt(r[35]);
        s.approvalRequestedUntilUs = optionalInt(r[36]);
        s.approvedLogin = text(r[37]);
        s.approvedRole = text(r[38]);
        s.approvedActor = text(r[39]);
        s.approvedAtUs = optionalInt(r[40]);
        s.approvalExpiresAtUs = optionalInt(r[41]);
        s.approvalWhy = r[42].as<std::string>();
        s.redrive = r[43].as<bool>();
        s.approvalRequestId = optionalInt(r[44]);
        return s;
    }

    void checkBytes(const char* what, const std::optional<std::string>& v)
    {
        if (v && v->size() > maxNameBytes)
            throw std::invalid_argument(std::string(what) + " is " + std::to_string(v->size()) + " bytes, more than the "
                + std::to_string(maxNameBytes) + " a job's filter takes");
    }

    void checkMinutes(const char* what, const std::optional<int>& v)
    {
        if (v && *v > maxMinutes)
            throw std::invalid_argument(std::string(what) + " must be at most " + std::to_string(maxMinutes) + " minutes");
    }

    // A text cell as idem's CSV files write them (operations/csv.cpp): display controls escaped,
    // a formula's first character defused with '. --json carries the exact values.
    std::optional<std::string> textCell(const std::string& v)
    {
        std::string out = displaySafe(v, reportDisplay);
        if (!out.empty() && std::string_view("=+-@\t\r").find(out.front()) != std::string_view::npos)
            out.insert(out.begin(), '\'');
        return out;
    }

    std::optional<std::string> timeCell(const std::optional<std::int64_t>& us)
    {
        return us ? std::optional<std::string>(formatMicros(*us)) : std::nullopt;
    }

} // namespace

std::string jobFilterJson(const TaskFilter& f)
{
    validateTaskQuery(f, TaskSort {});
    checkBytes("the tenant", f.tenant);
    checkBytes("the operation", f.operation);
    checkBytes("the key prefix", f.keyPrefix);
    if (f.minAttempts && *f.minAttempts > maxMinAttempts)
        throw std::invalid_argument("attempts at least must be at most " + std::to_string(maxMinAttempts));
    checkMinutes("unfinished for minutes", f.unfinishedForMinutes);
    checkMinutes("updated within minutes", f.updatedWithinMinutes);
    checkMinutes("a conflict within minutes", f.conflictWithinMinutes);
    nlohmann::json j = nlohmann::json::object();
    if (!f.statuses.empty())
        j["statuses"] = f.statuses;
    if (f.tenant)
        j["tenant"] = *f.tenant;
    if (f.operation)
        j["operation"] = *f.operation;
    if (f.keyPrefix)
        j["key_prefix"] = *f.keyPrefix;
    if (f.minAttempts)
        j["min_attempts"] = *f.minAttempts;
    if (f.expiredLease)
        j["expired_lease"] = true;
    if (f.liveLease)
        j["live_lease"] = true;
    if (f.uncertain)
        j["uncertain"] = true;
    if (f.errorClass)
        j["error_class"] = *f.errorClass;
    if (f.exhausted)
        j["exhausted"] = true;
    if (f.failedSince)
        j["failed_since_us"] = *parseIsoMicros(*f.failedSince); // validated above
    if (f.unfinishedForMinutes)
        j["unfinished_for_minutes"] = *f.unfinishedForMinutes;
    if (f.digestConflicts)
        j["digest_conflicts"] = true;
    if (f.updatedWithinMinutes)
        j["updated_within_minutes"] = *f.updatedWithinMinutes;
    if (f.conflictWithinMinutes)
        j["conflict_within_minutes"] = *f.conflictWithinMinutes;
    if (f.failedRetryInWindow)
        j["failed_retry_in_window"] = true;
    if (f.errorContains)
        j["error_contains"] = *f.errorContains;
    return j.dump();
}

TaskFilter taskFilterFromJobJson(const std::string& json)
{
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(json);
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("a job's filter is not JSON: ") + e.what());
    }
    if (!j.is_object())
        throw std::invalid_argument("a job's filter is a JSON object");
    TaskFilter f;
    try {
        for (const auto& [key, v] : j.items()) {
            if (v.is_null())
                continue;
            if (key == "statuses")
                f.statuses = v.get<std::vector<std::string>>();
            else if (key == "tenant")
                f.tenant = v.get<std::string>();
            else if (key == "operation")
                f.operation = v.get<std::string>();
            else if (key == "key_prefix")
                f.keyPrefix = v.get<std::string>();
            else if (key == "min_attempts")
                f.minAttempts = v.get<int>();
            else if (key == "expired_lease")
                f.expiredLease = v.get<bool>();
            else if (key == "live_lease")
                f.liveLease = v.get<bool>();
            else if (key == "uncertain")
                f.uncertain = v.get<bool>();
            else if (key == "error_class")
                f.errorClass = v.get<std::string>();
            else if (key == "exhausted")
                f.exhausted = v.get<bool>();
            else if (key == "failed_since_us")
                f.failedSince = formatMicros(v.get<std::int64_t>());
            else if (key == "unfinished_for_minutes")
                f.unfinishedForMinutes = v.get<int>();
            else if (key == "digest_conflicts")
                f.digestConflicts = v.get<bool>();
            else if (key == "updated_within_minutes")
                f.updatedWithinMinutes = v.get<int>();
            else if (key == "conflict_within_minutes")
                f.conflictWithinMinutes = v.get<int>();
            else if (key == "failed_retry_in_window")
                f.failedRetryInWindow = v.get<bool>();
            else if (key == "error_contains")
                f.errorContains = v.get<std::string>();
            else
                throw std::invalid_argument("a job's filter has an unknown key " + quoteForMessage(key));
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("a job's filter has a value of the wrong type: ") + e.what());
    }
    return f;
}

std::string describeJobFilter(const TaskFilter& f)
{
    std::string out;
    for (const auto& term : filterTerms(f)) {
        std::string values;
        for (const auto& v : term.values)
            values += (values.empty() ? "" : orWords) + v;
        out += (out.empty() ? "" : termSeparatorWords) + fillWords(term.words, { values });
    }
    return out.empty() ? everyTaskWords : out;
}

void validateJobRequest(const JobRequest& r)
{
    ActionOptions o;
    o.reason = r.reason;
    o.actor = r.actor;
    o.extraAttempts = r.extraAttempts;
    o.reexecute = r.reexecute; // only a requeue re-executes
    validateActionOptions(r.action, o);
    if (r.cap < 1 || r.cap > JobLimits::maxCap)
        throw std::invalid_argument("a job's cap must be 1 to " + std::to_string(JobLimits::maxCap) + " rows, not "
            + std::to_string(r.cap));
    jobFilterJson(r.filter);
}

JobPreview previewJob(
    pqxx::connection& conn, const SchemaName& schema, RecoveryAction action, const TaskFilter& filter, std::int64_t limit)
{
    const std::string json = jobFilterJson(filter);
    if (limit < 1 || limit > JobLimits::maxCap)
        throw std::invalid_argument("a preview counts up to 1 to " + std::to_string(JobLimits::maxCap) + " rows");
    pqxx::read_transaction t(conn);
    const auto r = t.exec_params("SELECT " + micros("p.moment") + ", p.matched, p.applicable, p.more FROM "
                                     + schema.qualify("idem_job_preview") + "($1, $2::jsonb, $3) p",
                        std::string(actionName(action)), json, limit)
                       .at(0);
    t.commit();
    return { r[0].as<std::int64_t>(), r[1].as<std::int64_t>(), r[2].as<std::int64_t>(), r[3].as<bool>() };
}

JobStart startJob(pqxx::connection& conn, const SchemaName& schema, const JobRequest& request)
{
    validateJobRequest(request);
    const std::string json = jobFilterJson(request.filter);
    // Its runner holds the job with a session lock: behind a transaction pooler the run would
    // fail after the job was recorded (active, audited, holding its rows from the next job).
    if (request.runsHere && behindPooler(conn))
        throw JobNeedsDirectConnection(
            "running a job needs a direct connection to the server, not one through a connection pooler "
            "(PgBouncer): its runner holds a session lock. Nothing was started. Connect to the server itself, or "
            "start it without running it here (idemctl job start --detach) and run it where the server is direct "
            "(idemctl job resume ID, or CALL idem_job_run(ID) under pg_cron).");
    const std::optional<int> extra
        = request.action == RecoveryAction::Requeue ? std::optional<int>(request.extraAttempts) : std::nullopt;
    pqxx::work w(conn);
    pqxx::result r;
    try {
        const std::string head = "SELECT s.job_id, " + micros("s.moment")
            + ", s.matched, s.pending, s.skipped, s.spec_sha256, s.audit_id FROM " + schema.qualify("idem_job_start");
        // Schema v25's p_redrive only when asked for: a plain job starts on an older schema too.
        if (request.reexecute)
            r = w.exec_params(head + "($1, $2::jsonb, $3, $4, $5, $6, true) s", std::string(actionName(request.action)),
                json, request.cap, request.reason, request.actor.empty() ? localActor() : request.actor, extra);
        else
            r = w.exec_params(head + "($1, $2::jsonb, $3, $4, $5, $6) s", std::string(actionName(request.action)),
                json, request.cap, request.reason, request.actor.empty() ? localActor() : request.actor, extra);
    } catch (const pqxx::sql_error& e) {
        if (isIdemRefusal(e.sqlstate()))
            throw refusal(e);
        throw;
    }
    const auto row = r.at(0);
    // The job's row as the start left it (a statement of its own: the start's own statement does
    // not see what the function wrote).
    const auto state = w.exec_params("SELECT j.state = 'awaiting_approval', COALESCE(j.approval_why, ''), a.id"
                                     " FROM " + jobsFrom(schema) + " WHERE j.id = $1",
                             row[0].as<std::int64_t>())
                           .at(0);
    w.commit();
    return { row[0].as<std::int64_t>(), row[1].as<std::int64_t>(), row[2].as<std::int64_t>(),
        row[3].as<std::int64_t>(), row[4].as<std::int64_t>(), row[5].as<std::string>(), row[6].as<std::int64_t>(),
        state[0].as<bool>(), state[1].as<std::string>(), optionalInt(state[2]) };
}

std::optional<JobStatus> readJob(pqxx::connection& conn, const SchemaName& schema, std::int64_t id)
{
    pqxx::read_transaction t(conn);
    const auto r = t.exec_params(
        "SELECT " + jobColumns(schema) + " FROM " + jobsFrom(schema) + " WHERE j.id = $1", id);
    t.commit();
    if (r.empty())
        return std::nullopt;
    return statusFrom(r[0]);
}

namespace {
    // The jobs `tail` (a WHERE and ORDER BY over idem_jobs j, no value in it) selects, `limit` at
    // most; `what` names the list in the error a bad limit gets.
    std::vector<JobStatus> readJobs(
        pqxx::connection& conn, const SchemaName& schema, const std::string& tail, int limit, const char* what)
    {
        if (limit < 1 || limit > 1000)
            throw std::invalid_argument(std::string(what) + " holds 1 to 1000 jobs, not " + std::to_string(limit));
        pqxx::read_transaction t(conn);
        const auto r = t.exec_params(
            "SELECT " + jobColumns(schema) + " FROM " + jobsFrom(schema) + " " + tail + " LIMIT $1", limit);
        t.commit();
        std::vector<JobStatus> out;
        for (const auto& row : r)
            out.push_back(statusFrom(row));
        return out;
    }
} // namespace

std::vector<JobStatus> listJobs(pqxx::connection& conn, const SchemaName& schema, int limit)
{
    return readJobs(conn, schema, "ORDER BY (j.state IN ('awaiting_approval', 'active')) DESC, j.id DESC", limit,
        "a job list");
}

JobStatus runRecoveryJob(pqxx::connection& conn, const SchemaName& schema, std::int64_t id, const JobRunOptions& o)
{
    if (o.batch < 1 || o.batch > JobLimits::maxBatch)
        throw std::invalid_argument("a job's batch must be 1 to " + std::to_string(JobLimits::maxBatch) + " rows, not "
            + std::to_string(o.batch));
    if (!(o.duty >= 0.01 && o.duty <= 1))
        throw std::invalid_argument("the duty must be 0.01 to 1");
    if (o.callSeconds < 1 || o.callSeconds > 3600)
        throw std::invalid_argument("a call lasts 1 to 3600 seconds");
    validateReasonAndActor("run", o.actor);
    // The runner is a session advisory lock: behind a transaction pooler it would stay on
    // whichever server backend took it.
    if (behindPooler(conn))
        throw std::runtime_error("running a job needs a direct connection to the server, not one through a connection "
                                 "pooler (PgBouncer): its runner holds a session lock. Nothing was changed. Connect to "
                                 "the server itself, or CALL idem_job_run() in the database (pg_cron).");
    // Should this process die, the server notices within a second (at its next check, even
    // asleep between batches) and ends the session: the job keeps what committed and is
    // resumable at once, instead of running on for a client nobody hears.
    if (conn.server_version() >= 140000)
        pqxx::nontransaction(conn).exec("SET client_connection_check_interval = 1000");
    const std::string actor = o.actor.empty() ? localActor() : o.actor;
    // Attached once for the whole run (so no other runner slips in between two calls): each call
    // finds this session its runner already, and leaves it attached while the job is active.
    try {
        pqxx::work w(conn);
        w.exec_params("SELECT " + schema.qualify("idem_job_attach") + "($1, $2)", id, actor);
        w.commit();
    } catch (const pqxx::sql_error& e) {
        if (isIdemRefusal(e.sqlstate()))
            throw refusal(e);
        throw;
    }
    const auto detach = [&] {
        pqxx::work w(conn);
        w.exec_params("SELECT " + schema.qualify("idem_job_detach") + "($1)", id);
        w.commit();
    };
    const std::string call = "CALL " + schema.qualify("idem_job_run") + "($1, $2, $3, $4, $5, true)";
    try {
        for (;;) {
            try {
                pqxx::nontransaction n(conn);
                n.exec_params(call, id, o.batch, o.duty, o.callSeconds, actor);
            } catch (const pqxx::sql_error& e) {
                if (isIdemRefusal(e.sqlstate()))
                    throw refusal(e);
                throw;
            }
            auto status = readJob(conn, schema, id);
            if (!status)
                throw JobRefused("there is no job " + std::to_string(id), "ID002");
            const bool goOn = !o.progress || o.progress(*status);
            if (status->ended() || !goOn || (o.stop && o.stop->load())) {
                if (status->ended())
                    return *status;
                detach();
                return readJob(conn, schema, id).value_or(*status); // as it is now: not running
            }
        }
    } catch (const pqxx::broken_connection&) {
        throw; // the session and its lock are gone: the job is resumable as it is
    } catch (...) {
        try {
            detach();
        } catch (...) {
        }
        throw;
    }
}

JobCancel cancelJob(pqxx::connection& conn, const SchemaName& schema, std::int64_t id, const std::string& reason,
    const std::string& actor)
{
    validateReasonAndActor(reason, actor);
    pqxx::work w(conn);
    pqxx::result r;
    try {
        r = w.exec_params("SELECT c.state, c.skipped_cancelled, c.audit_id FROM " + schema.qualify("idem_job_cancel")
                + "($1, $2, $3) c",
            id, reason, actor.empty() ? localActor() : actor);
    } catch (const pqxx::sql_error& e) {
        if (isIdemRefusal(e.sqlstate()))
            throw refusal(e);
        throw;
    }
    w.commit();
    const auto row = r.at(0);
    return { row[0].as<std::string>(), row[1].as<std::int64_t>(), row[2].as<std::int64_t>() };
}

ApprovalNeed approvalNeeded(pqxx::connection& conn, const SchemaName& schema, const std::string& kind, std::int64_t rows)
{
    if (kind != "job" && kind != "requeue" && kind != "release" && kind != "fail")
        throw std::invalid_argument("a change under the approval policy is a job, requeue, release or fail");
    if (rows < 0 || rows > JobLimits::maxCap)
        throw std::invalid_argument("rows must be 0 to " + std::to_string(JobLimits::maxCap));
    ApprovalNeed need;
    pqxx::read_transaction t(conn);
    if (t.exec_params("SELECT to_regprocedure($1) IS NULL", schema.qualify("idem_approval_needed") + "(text, bigint)")
            .at(0)
            .at(0)
            .as<bool>())
        return need; // before v23
    const auto r = t.exec_params("SELECT COALESCE(n.why, ''), n.job_rows, n.budget_rows, n.window_seconds, n.used, "
            + micros("n.frees_at") + " FROM " + schema.qualify("idem_approval_needed") + "($1, $2) n",
        kind, rows)
                       .at(0);
    t.commit();
    need.known = true;
    need.why = r[0].as<std::string>();
    need.jobRows = optionalInt(r[1]);
    need.budgetRows = optionalInt(r[2]);
    need.windowSeconds = r[3].as<int>();
    need.used = r[4].as<std::int64_t>();
    need.freesAtUs = optionalInt(r[5]);
    return need;
}

std::string approvalNeedWords(const ApprovalNeed& need, std::int64_t rows)
{
    if (need.why == "rows")
        return "it needs another login's approval: " + std::to_string(rows) + " rows to act on, more than the approval "
            "policy's " + std::to_string(need.jobRows.value_or(0)) + " for a job without one; a login holding the "
            "approve right (role idem_may_approve) approves it";
    if (need.why == "budget")
        return "it needs another login's approval: this login changed " + std::to_string(need.used)
            + " task row(s) without one in the last " + std::to_string(need.windowSeconds) + " s, and "
            + std::to_string(rows) + " more would pass the approval policy's budget of "
            + std::to_string(need.budgetRows.value_or(0)) + " in any " + std::to_string(need.windowSeconds)
            + " s; a login holding the approve right (role idem_may_approve) approves it";
    return {};
}

std::vector<JobItem> listJobItems(pqxx::connection& conn, const SchemaName& schema, std::int64_t id,
    const std::string& state, std::int64_t afterSeq, int limit)
{
    if (state != "pending" && state != "changed" && state != "refused" && state != "skipped")
        throw std::invalid_argument("a job's rows are pending, changed, refused or skipped, not " + quoteForMessage(state));
    if (limit < 1 || limit > 10000)
        throw std::invalid_argument("a page holds 1 to 10000 rows, not " + std::to_string(limit));
    pqxx::read_transaction t(conn);
    const auto r = t.exec_params("SELECT i.seq, i.idempotency_key, i.state, COALESCE(i.why, ''), i.seen_status, "
            + micros("i.seen_updated_at") + ", COALESCE(i.now_status, ''), " + micros("i.now_updated_at")
            + ", i.tries, " + micros("i.done_at") + ", i.audit_id FROM " + schema.qualify("idem_job_items")
            + " i WHERE i.job_id = $1 AND i.state = $2 AND i.seq > $3 ORDER BY i.seq LIMIT $4",
        id, state, afterSeq, limit);
    t.commit();
    std::vector<JobItem> out;
    out.reserve(r.size());
    for (const auto& row : r) {
        JobItem it;
        it.seq = row[0].as<std::int64_t>();
        it.key = row[1].as<std::string>();
        it.state = row[2].as<std::string>();
        it.why = row[3].as<std::string>();
        it.seenStatus = row[4].as<std::string>();
        it.seenUpdatedAtUs = row[5].as<std::int64_t>();
        it.nowStatus = row[6].as<std::string>();
        it.nowUpdatedAtUs = optionalInt(row[7]);
        it.tries = row[8].as<int>();
        it.doneAtUs = optionalInt(row[9]);
        it.auditId = optionalInt(row[10]);
        out.push_back(std::move(it));
    }
    return out;
}

std::string jobItemsCsvHeader()
{
    return csvLine({ "seq", "idempotency_key", "state", "why", "seen_status", "seen_updated_at", "seen_updated_at_us",
        "now_status", "now_updated_at", "tries", "done_at" });
}

std::string jobItemCsvLine(const JobItem& it)
{
    return csvLine({ std::to_string(it.seq), textCell(it.key), it.state, it.why, it.seenStatus,
        formatMicros(it.seenUpdatedAtUs), std::to_string(it.seenUpdatedAtUs),
        it.nowStatus.empty() ? std::nullopt : std::optional<std::string>(it.nowStatus), timeCell(it.nowUpdatedAtUs),
        std::to_string(it.tries), timeCell(it.doneAtUs) });
}

} // namespace idem
