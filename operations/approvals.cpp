#include "operations/approvals.h"

#include <cstdio>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "operations/actions.h"
#include "operations/jobs.h"
#include "operations/storage.h"

namespace idem {

namespace {

    std::optional<std::int64_t> optionalInt(const pqxx::field& f)
    {
        return f.is_null() ? std::nullopt : std::optional<std::int64_t>(f.as<std::int64_t>());
    }

    std::string text(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }

    std::string micros(const std::string& column) { return updatedAtMicrosSql(column); }

    // The server's words (message and hint) for a refusal of argument, existence, state or policy.
    template <typename F> auto refusedAsJobRefused(F&& f)
    {
        try {
            return f();
        } catch (const pqxx::sql_error& e) {
            if (e.sqlstate() == "ID002" || e.sqlstate() == "ID003" || e.sqlstate() == "ID004")
                throw JobRefused(serverWords(e), e.sqlstate());
            throw;
        }
    }

    std::string requestSql(const SchemaName& schema)
    {
        return "SELECT r.id, r.kind, r.job_id, r.spec::text, r.spec_sha256, r.state, r.requested_login,"
               " r.requested_role, r.requested_actor, r.requested_reason, "
            + micros("r.requested_at") + ", " + micros("r.approvable_until")
            + ", r.approved_login, r.approved_role, r.approved_actor, " + micros("r.approved_at") + ", "
            + micros("r.approval_expires_at") + ", " + micros("r.used_at") + ", r.purge_run_id, r.used_login, "
            + "r.declined_login, r.declined_reason, " + micros("r.declined_at") + ", COALESCE(j.state, ''), "
            + micros("clock_timestamp()") + " FROM " + schema.qualify("idem_approval_requests") + " r LEFT JOIN "
            + schema.qualify("idem_jobs") + " j ON j.id = r.job_id ";
    }

    ApprovalRequest requestFrom(const pqxx::row& r)
    {
        ApprovalRequest c;
        c.id = r[0].as<std::int64_t>();
        c.kind = r[1].as<std::string>();
        c.jobId = optionalInt(r[2]);
        c.specJson = r[3].as<std::string>();
        c.specSha256 = r[4].as<std::string>();
        c.state = r[5].as<std::string>();
        c.requestedLogin = r[6].as<std::string>();
        c.requestedRole = r[7].as<std::string>();
        c.requestedActor = r[8].as<std::string>();
        c.requestedReason = r[9].as<std::string>();
        c.requestedAtUs = r[10].as<std::int64_t>();
        c.approvableUntilUs = r[11].as<std::int64_t>();
        c.approvedLogin = text(r[12]);
        c.approvedRole = text(r[13]);
        c.approvedActor = text(r[14]);
        c.approvedAtUs = optionalInt(r[15]);
        c.approvalExpiresAtUs = optionalInt(r[16]);
        c.usedAtUs = optionalInt(r[17]);
        c.purgeRunId = optionalInt(r[18]);
        c.usedLogin = text(r[19]);
        c.declinedLogin = text(r[20]);
        c.declinedReason = text(r[21]);
        c.declinedAtUs = optionalInt(r[22]);
        c.jobState = r[23].as<std::string>();
        c.nowUs = r[24].as<std::int64_t>();
        return c;
    }

    void checkId(std::int64_t id)
    {
        if (id < 1)
            throw std::invalid_argument("a request's id is a positive number, not " + std::to_string(id));
    }

} // namespace

bool isSpecSha256(const std::string& s)
{
    return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

bool ApprovalRequest::expired() const
{
    if (state == "awaiting_approval")
        return approvableUntilUs <= nowUs;
    if (state == "approved")
        return approvalExpiresAtUs && *approvalExpiresAtUs <= nowUs;
    return false;
}

std::string ApprovalRequest::what() const
{
    const auto spec = nlohmann::json::parse(specJson, nullptr, false);
    if (spec.is_discarded() || !spec.is_object())
        return kind + ": " + specJson;
    if (kind == "job") {
        std::string action = spec.value("action", std::string("?"));
        if (spec.contains("extra_attempts") && spec["extra_attempts"].is_number_integer())
            action += " (+" + std::to_string(spec["extra_attempts"].get<int>()) + ")";
        if (spec.value("redrive", false))
            action += ", re-executed";
        std::string filter;
        try {
            filter = describeJobFilter(taskFilterFromJobJson(spec.value("filter", nlohmann::json::object()).dump()));
        } catch (const std::exception&) {
            filter = spec.value("filter", nlohmann::json::object()).dump();
        }
        return "job " + (jobId ? std::to_string(*jobId) : std::string("?")) + ": " + action + " of the "
            + std::to_string(spec.value("matched", std::int64_t(0))) + " row(s) matched by " + filter;
    }
    if (kind == "retention") {
        const auto op = spec.value("operation", std::string("?"));
        if (spec.value("change", std::string()) == "clear")
            return "retention: clear " + op + " (back to the default)";
        const auto& h = spec["horizon_seconds"];
        return "retention: set " + op + " to " + (h.is_number_integer() ? formatHorizon(h.get<std::int64_t>()) : "?");
    }
    if (kind == "purge") {
        const auto seconds = spec.value("max_seconds", std::int64_t(0));
        char duty[32];
        std::snprintf(duty, sizeof duty, "%g", spec.value("duty", 0.0));
        return "purge: batches of " + std::to_string(spec.value("batch", std::int64_t(0))) + ", "
            + (seconds > 0 ? "at most " + std::to_string(seconds) + " s" : std::string("until nothing is due"))
            + ", duty " + duty;
    }
    return kind + ": " + specJson;
}

std::vector<ApprovalKind> readApprovalKinds(pqxx::connection& conn, const SchemaName& schema)
{
    pqxx::read_transaction t(conn);
    const auto r = t.exec("SELECT k.kind, k.gated, k.over_rows, k.ttl_seconds, k.what, COALESCE(k.updated_by, ''), "
        + micros("k.updated_at") + " FROM " + schema.qualify("idem_approval_kinds") + " k ORDER BY k.kind");
    t.commit();
    std::vector<ApprovalKind> out;
    for (const auto& row : r)
        out.push_back({ row[0].as<std::string>(), row[1].as<bool>(), optionalInt(row[2]), row[3].as<int>(),
            row[4].as<std::string>(), row[5].as<std::string>(), optionalInt(row[6]) });
    return out;
}

std::int64_t setApprovalKindPolicy(pqxx::connection& conn, const SchemaName& schema, const std::string& kind,
    bool gated, std::optional<std::int64_t> overRows, int ttlSeconds, const std::string& reason,
    const std::string& actor)
{
    validateReasonAndActor(reason, actor);
    if (overRows && (*overRows < 0 || *overRows > ApprovalLimits::maxJobRows))
        throw std::invalid_argument("the approval threshold must be 0 to " + std::to_string(ApprovalLimits::maxJobRows)
            + " rows, not " + std::to_string(*overRows));
    if (ttlSeconds < ApprovalLimits::minTtlSeconds || ttlSeconds > ApprovalLimits::maxTtlSeconds)
        throw std::invalid_argument("an approval's time to live must be " + std::to_string(ApprovalLimits::minTtlSeconds)
            + " to " + std::to_string(ApprovalLimits::maxTtlSeconds) + " seconds, not " + std::to_string(ttlSeconds));
    return refusedAsJobRefused([&] {
        pqxx::work w(conn);
        const auto r = w.exec_params(
            "SELECT s.audit_id FROM " + schema.qualify("idem_set_approval_policy") + "($1, $2, $3, $4, $5, $6) s", kind,
            gated, overRows, ttlSeconds, reason, actor.empty() ? localActor() : actor);
        w.commit();
        return r.at(0)[0].as<std::int64_t>();
    });
}

std::vector<ApprovalRequest> listApprovalRequests(pqxx::connection& conn, const SchemaName& schema, bool all, int limit)
{
    if (limit < 1 || limit > 1000)
        throw std::invalid_argument("a list of requests holds 1 to 1000, not " + std::to_string(limit));
    pqxx::read_transaction t(conn);
    const auto r = t.exec_params(requestSql(schema)
            + (all ? std::string("ORDER BY r.id DESC LIMIT $1")
                   : std::string("WHERE r.state IN ('awaiting_approval', 'approved')"
                                 " AND (r.job_id IS NULL OR j.state IN ('awaiting_approval', 'active'))"
                                 " AND COALESCE(r.approval_expires_at, r.approvable_until)"
                                 " > clock_timestamp() - interval '1 day' ORDER BY r.id LIMIT $1")),
        limit);
    t.commit();
    std::vector<ApprovalRequest> out;
    out.reserve(r.size());
    for (const auto& row : r)
        out.push_back(requestFrom(row));
    return out;
}

std::optional<ApprovalRequest> readApprovalRequest(pqxx::connection& conn, const SchemaName& schema, std::int64_t id)
{
    pqxx::read_transaction t(conn);
    const auto r = t.exec_params(requestSql(schema) + "WHERE r.id = $1", id);
    t.commit();
    if (r.empty())
        return std::nullopt;
    return requestFrom(r[0]);
}

ApprovalDecision approveRequest(pqxx::connection& conn, const SchemaName& schema, std::int64_t id,
    const std::string& specSha256, const std::string& reason, const std::string& actor)
{
    checkId(id);
    validateReasonAndActor(reason, actor);
    if (!isSpecSha256(specSha256))
        throw std::invalid_argument("an approval names the request's spec: its spec_sha256, 64 lower-case hex digits");
    return refusedAsJobRefused([&] {
        pqxx::work w(conn);
        const auto row = w.exec_params("SELECT a.request_id, a.kind, a.job_id, " + micros("a.approved_at") + ", "
                + micros("a.expires_at") + ", a.audit_id FROM " + schema.qualify("idem_approval_approve")
                + "($1, $2, $3, $4) a",
            id, specSha256, reason, actor.empty() ? localActor() : actor)
                             .at(0);
        w.commit();
        return ApprovalDecision { row[0].as<std::int64_t>(), row[1].as<std::string>(), optionalInt(row[2]),
            row[3].as<std::int64_t>(), optionalInt(row[4]), row[5].as<std::int64_t>() };
    });
}

ApprovalDecision declineRequest(pqxx::connection& conn, const SchemaName& schema, std::int64_t id,
    const std::string& reason, const std::string& actor)
{
    checkId(id);
    validateReasonAndActor(reason, actor);
    return refusedAsJobRefused([&] {
        pqxx::work w(conn);
        const auto row = w.exec_params("SELECT d.request_id, d.kind, d.job_id, " + micros("d.declined_at")
                + ", d.audit_id FROM " + schema.qualify("idem_approval_decline") + "($1, $2, $3) d",
            id, reason, actor.empty() ? localActor() : actor)
                             .at(0);
        w.commit();
        return ApprovalDecision { row[0].as<std::int64_t>(), row[1].as<std::string>(), optionalInt(row[2]),
            row[3].as<std::int64_t>(), std::nullopt, row[4].as<std::int64_t>() };
    });
}

ApprovalBudget readApprovalBudget(pqxx::connection& conn, const SchemaName& schema)
{
    pqxx::read_transaction t(conn);
    const auto r = t.exec("SELECT p.budget_rows, p.budget_window_seconds, COALESCE(p.updated_by, ''), "
        + micros("p.updated_at") + " FROM " + schema.qualify("idem_approval_policy") + " p");
    t.commit();
    ApprovalBudget b;
    if (r.empty())
        return b;
    b.budgetRows = optionalInt(r[0][0]);
    b.budgetWindowSeconds = r[0][1].as<int>();
    b.updatedBy = r[0][2].as<std::string>();
    b.updatedAtUs = optionalInt(r[0][3]);
    return b;
}

std::int64_t setApprovalBudget(pqxx::connection& conn, const SchemaName& schema, std::optional<std::int64_t> budgetRows,
    int windowSeconds, const std::string& reason, const std::string& actor)
{
    validateReasonAndActor(reason, actor);
    if (budgetRows && (*budgetRows < 0 || *budgetRows > ApprovalLimits::maxJobRows))
        throw std::invalid_argument("the budget must be 0 to " + std::to_string(ApprovalLimits::maxJobRows)
            + " rows, not " + std::to_string(*budgetRows));
    if (windowSeconds < ApprovalLimits::minTtlSeconds || windowSeconds > ApprovalLimits::maxTtlSeconds)
        throw std::invalid_argument("the budget's window must be " + std::to_string(ApprovalLimits::minTtlSeconds)
            + " to " + std::to_string(ApprovalLimits::maxTtlSeconds) + " seconds, not " + std::to_string(windowSeconds));
    return refusedAsJobRefused([&] {
        pqxx::work w(conn);
        const auto r
            = w.exec_params("SELECT s.audit_id FROM " + schema.qualify("idem_set_approval_budget") + "($1, $2, $3, $4) s",
                budgetRows, windowSeconds, reason, actor.empty() ? localActor() : actor);
        w.commit();
        return r.at(0)[0].as<std::int64_t>();
    });
}

} // namespace idem
