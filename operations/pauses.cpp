#include "operations/pauses.h"

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/key.h"
#include "operations/actions.h"
#include "operations/pauseramp.h"
#include "operations/readframe.h"

namespace idem {

namespace {
    std::optional<std::int64_t> optionalInt(const pqxx::field& f)
    {
        if (f.is_null())
            return std::nullopt;
        return f.as<std::int64_t>();
    }

    std::string micros(const std::string& column) { return updatedAtMicrosSql(column); }

    // Also: what the statements call besides the functions they name with the schema (extract, *)
    // resolves in pg_catalog for the rest of the transaction, never in a schema on the caller's
    // path that another role may write (public before PostgreSQL 15; tst_lowroles plants there).
    void setLockTimeout(pqxx::work& w, int ms)
    {
        if (ms < 1)
            throw std::invalid_argument("the lock timeout must be positive");
        w.exec_params("SELECT pg_catalog.set_config('lock_timeout', $1, true),"
                      " pg_catalog.set_config('search_path', 'pg_catalog', true)",
            std::to_string(ms));
    }

    void checkMinutes(int minutes)
    {
        if (minutes < 1 || minutes > 1440)
            throw std::invalid_argument("the window must be 1 to 1440 minutes, not " + std::to_string(minutes));
    }
} // namespace

std::optional<double> Ramp::failureRate() const
{
    if (claimed <= 0)
        return std::nullopt;
    return double(failed) / double(claimed);
}

bool PauseList::anyActive() const
{
    return std::any_of(pauses.begin(), pauses.end(), [](const Pause& p) { return p.active; });
}

std::vector<const Pause*> PauseList::covering(const std::string& tenant, const std::string& operation) const
{
    std::vector<const Pause*> out;
    const auto meets = [](const std::string& pause, const std::string& asked) {
        return pause == "*" || asked == "*" || pause == asked;
    };
    for (const auto& p : pauses)
        if (p.active && meets(p.tenant, tenant) && meets(p.operation, operation))
            out.push_back(&p);
    return out;
}

bool validPauseName(const std::string& name) { return name == "*" || isKeyName(name); }

void validatePauseRequest(const PauseRequest& r)
{
    validatePauseScope(r.tenant, r.operation);
    validateReasonAndActor(r.reason, r.actor);
    if (r.lengthMs && r.endUs)
        throw std::invalid_argument("give a pause a length or an end, not both");
    if (r.lengthMs && (*r.lengthMs < PauseRequest::minLengthMs || *r.lengthMs > PauseRequest::maxLengthMs))
        throw std::invalid_argument("a pause lasts 1 s to 365 days, not " + std::to_string(*r.lengthMs) + " ms");
    if (r.lockTimeoutMs < 1)
        throw std::invalid_argument("the lock timeout must be positive");
}

namespace {
    std::string pauseListSql(const SchemaName& schema)
    {
        return "SELECT l.tenant, l.operation, l.reason, l.paused_by, " + micros("l.paused_at") + ", "
            + micros("l.changed_at") + ", " + micros("l.until") + ", l.active, l.remaining_ms, l.turned_away, l.seen,"
              " l.audit_id, pg_catalog.array_to_string(l.ramp_steps, ','), l.ramp_step_ms, "
            + micros("l.ramp_started_at")
            + ", l.ramp_abort_above, l.ramp_min_claims, l.ramp_step, l.ramp_percent, l.ramp_claimed, l.ramp_failed, "
            + micros("l.ramp_aborted_at") + " FROM "
            + schema.qualify("idem_pause_list") + "($1) l";
    }

    template <typename Result> void pausesFrom(const Result& r, PauseList& out)
    {
        for (std::size_t i = 0; i < r.size(); ++i) {
            const auto row = r[i];
            Pause p;
            p.tenant = row[0].template as<std::string>();
            p.operation = row[1].template as<std::string>();
            p.reason = row[2].template as<std::string>();
            p.pausedBy = row[3].template as<std::string>();
            p.pausedAtUs = row[4].template as<std::int64_t>();
            p.changedAtUs = row[5].template as<std::int64_t>();
            p.untilUs = row[6].is_null() ? std::nullopt : std::optional(row[6].template as<std::int64_t>());
            p.active = row[7].template as<bool>();
            p.remainingMs = row[8].is_null() ? std::nullopt : std::optional(row[8].template as<std::int64_t>());
            p.turnedAway = row[9].template as<std::int64_t>();
            p.seen = row[10].template as<bool>();
            p.auditId = row[11].template as<std::int64_t>();
            if (!row[12].is_null()) {
                Ramp ramp;
                const auto steps = row[12].template as<std::string>();
                for (std::size_t at = 0; at <= steps.size();) {
                    const auto comma = std::min(steps.find(',', at), steps.size());
                    ramp.steps.push_back(std::stoi(steps.substr(at, comma - at)));
                    at = comma + 1;
                }
                ramp.stepMs = row[13].template as<std::int64_t>();
                ramp.startedAtUs = row[14].template as<std::int64_t>();
                ramp.abortAbove = row[15].template as<double>();
                ramp.minClaims = row[16].template as<int>();
                ramp.step = row[17].template as<int>();
                ramp.percent = row[18].template as<int>();
                ramp.claimed = row[19].template as<std::int64_t>();
                ramp.failed = row[20].template as<std::int64_t>();
                p.ramp = std::move(ramp);
            }
            if (!row[21].is_null())
                p.rampAbortedAtUs = row[21].template as<std::int64_t>();
            out.pauses.push_back(std::move(p));
        }
    }
} // namespace

PauseList listPauses(pqxx::connection& conn, const SchemaName& schema, int minutes)
{
    checkMinutes(minutes); // before any I/O
    if (directReads(conn)) {
        // The console's poll on a direct connection: the same transaction in one round trip.
        ReadFrame frame;
        frame.add(pauseListSql(schema), minutes);
        frame.add("SELECT " + micros("clock_timestamp()"));
        const auto r = frame.run(conn);
        PauseList out;
        out.minutes = minutes;
        out.serverNowUs = r[1].at(0)[0].as<std::int64_t>();
        pausesFrom(r[0], out);
        return out;
    }
    pqxx::read_transaction tx(conn);
    PauseList out = listPauses(tx, schema, minutes);
    tx.commit();
    return out;
}

PauseList listPauses(pqxx::transaction_base& tx, const SchemaName& schema, int minutes)
{
    checkMinutes(minutes);
    tx.exec("SELECT pg_catalog.set_config('search_path', 'pg_catalog', true)"); // as setLockTimeout says
    const auto r = tx.exec_params(pauseListSql(schema), minutes);
    PauseList out;
    out.minutes = minutes;
    out.serverNowUs = tx.exec("SELECT " + micros("clock_timestamp()"))[0][0].as<std::int64_t>();
    pausesFrom(r, out);
    return out;
}

PauseChange setPause(pqxx::connection& conn, const SchemaName& schema, const PauseRequest& request)
{
    validatePauseRequest(request);
    const std::string actor = request.actor.empty() ? localActor() : request.actor;
    pqxx::work w(conn);
    setLockTimeout(w, request.lockTimeoutMs);
    // The end travels as integer microseconds and becomes a timestamptz on the server: exact.
    const auto r = w.exec_params("SELECT p.audit_id, p.tenant, p.operation, p.reason, p.paused_by, "
            + micros("p.paused_at") + ", " + micros("p.changed_at") + ", " + micros("p.until") + ", "
            + micros("p.previous_until") + ", p.was_paused, " + micros("now()") + " FROM "
            + schema.qualify("idem_pause")
            + "($1, $2, $3, $4, $5, CASE WHEN $6::bigint IS NULL THEN NULL"
              " ELSE to_timestamp(0) + $6::bigint * interval '1 microsecond' END) p",
        request.tenant, request.operation, request.reason, actor, request.lengthMs, request.endUs);
    w.commit();
    const auto row = r.at(0);
    PauseChange out;
    out.auditId = row[0].as<std::int64_t>();
    out.pause.tenant = row[1].as<std::string>();
    out.pause.operation = row[2].as<std::string>();
    out.pause.reason = row[3].as<std::string>();
    out.pause.pausedBy = row[4].as<std::string>();
    out.pause.pausedAtUs = row[5].as<std::int64_t>();
    out.pause.changedAtUs = row[6].as<std::int64_t>();
    out.pause.untilUs = optionalInt(row[7]);
    out.pause.active = true;
    if (out.pause.untilUs)
        out.pause.remainingMs = std::max<std::int64_t>(0, (*out.pause.untilUs - row[10].as<std::int64_t>() + 999) / 1000);
    out.pause.auditId = out.auditId;
    out.previousUntilUs = optionalInt(row[8]);
    out.wasPaused = row[9].as<bool>();
    return out;
}

ResumeChange resumePause(pqxx::connection& conn, const SchemaName& schema, const std::string& tenant,
    const std::string& operation, const std::string& reason, const std::string& actor, int lockTimeoutMs)
{
    validatePauseScope(tenant, operation);
    validateReasonAndActor(reason, actor);
    pqxx::work w(conn);
    setLockTimeout(w, lockTimeoutMs);
    pqxx::result r;
    try {
        r = w.exec_params("SELECT r.audit_id, r.tenant, r.operation, " + micros("r.paused_at") + ", "
                + micros("r.until") + ", r.was_active, r.still_paused_by::text FROM " + schema.qualify("idem_resume")
                + "($1, $2, $3, $4) r",
            tenant, operation, reason, actor.empty() ? localActor() : actor);
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() == "ID002")
            throw PauseNotFound("there is no pause of tenant '" + tenant + "' and operation '" + operation
                + "' (a pause is lifted with the tenant and operation it was set with, '*' included); nothing changed");
        throw;
    }
    w.commit();
    const auto row = r.at(0);
    ResumeChange out;
    out.auditId = row[0].as<std::int64_t>();
    out.tenant = row[1].as<std::string>();
    out.operation = row[2].as<std::string>();
    out.pausedAtUs = row[3].as<std::int64_t>();
    out.untilUs = optionalInt(row[4]);
    out.wasActive = row[5].as<bool>();
    for (const auto& s : nlohmann::json::parse(row[6].as<std::string>()))
        out.stillPausedBy.emplace_back(s.at("tenant").get<std::string>(), s.at("operation").get<std::string>());
    return out;
}

std::string formatPauseLength(std::int64_t ms)
{
    if (ms < 0)
        ms = 0;
    std::int64_t s = (ms + 999) / 1000;
    const std::int64_t d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60;
    s %= 60;
    const auto part = [](std::int64_t n, const char* unit) { return std::to_string(n) + unit; };
    if (d > 0)
        return part(d, "d") + (h ? " " + part(h, "h") : "");
    if (h > 0)
        return part(h, "h") + (m ? " " + part(m, "m") : "");
    if (m > 0)
        return part(m, "m") + (s ? " " + part(s, "s") : "");
    return part(s, "s");
}

std::vector<EndedPause> listEndedPauses(pqxx::connection& conn, const SchemaName& schema, int hours, int limit)
{
    if (hours < 1 || hours > 8760)
        throw std::invalid_argument("the history covers 1 to 8760 hours");
    if (limit < 1 || limit > 1000)
        throw std::invalid_argument("the history lists 1 to 1000 pauses");
    pqxx::read_transaction t(conn);
    // The image's times are JSON text: read back as timestamptz, then as the others are.
    const auto r = t.exec_params("SELECT a.after_image ->> 'tenant', a.after_image ->> 'operation',"
                                 " coalesce(p.image ->> 'reason', ''), coalesce(p.image ->> 'paused_by', ''), "
            + micros("(p.image ->> 'paused_at')::timestamptz") + ", " + micros("(p.image ->> 'until')::timestamptz")
            + ", " + micros("a.at")
            + ", a.db_role || ' (' || a.os_user || '@' || a.client_host || ')', a.reason, a.id"
              " FROM "
            + schema.qualify("task_idempotency_audit")
            + " a, LATERAL (SELECT CASE WHEN jsonb_typeof(a.before_image -> 'pause') = 'object'"
              " THEN a.before_image -> 'pause' END AS image) p"
              " WHERE a.idempotency_key = '' AND a.action = 'resume'"
              " AND a.at >= now() - $1::int * interval '1 hour' ORDER BY a.id DESC LIMIT $2::int",
        hours, limit);
    t.commit();
    std::vector<EndedPause> out;
    for (const auto& row : r) {
        EndedPause e;
        e.pause.tenant = row[0].is_null() ? std::string() : row[0].as<std::string>();
        e.pause.operation = row[1].is_null() ? std::string() : row[1].as<std::string>();
        e.pause.reason = row[2].as<std::string>();
        e.pause.pausedBy = row[3].as<std::string>();
        e.pause.pausedAtUs = row[4].is_null() ? 0 : row[4].as<std::int64_t>();
        if (!row[5].is_null())
            e.pause.untilUs = row[5].as<std::int64_t>();
        e.resumedAtUs = row[6].as<std::int64_t>();
        e.resumedBy = row[7].as<std::string>();
        e.resumeReason = row[8].as<std::string>();
        e.resumeAuditId = row[9].as<std::int64_t>();
        out.push_back(std::move(e));
    }
    return out;
}

} // namespace idem
