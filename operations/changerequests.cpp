#include "operations/changerequests.h"

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

    // The server's words without where in the function it was raised.
    JobRefused refusal(const pqxx::sql_error& e) { return JobRefused(serverWords(e), e.sqlstate()); }

    template <typename F> auto refusedAsJobRefused(F&& f)
    {
        try {
            return f();
        } catch (const pqxx::sql_error& e) {
            if (isIdemRefusal(e.sqlstate()))
                throw refusal(e);
            throw;
        }
    }

    std::string requestColumns()
    {
        return "r.id, r.kind, r.spec::text, r.spec_sha256, r.state, r.requested_login, r.requested_role,"
               " r.requested_actor, r.requested_reason, "
            + micros("r.requested_at") + ", " + micros("r.approvable_until")
            + ", r.approved_login, r.approved_role, r.approved_actor, " + micros("r.approved_at") + ", "
            + micros("r.approval_expires_at") + ", " + micros("r.used_at") + ", r.purge_run_id, r.used_login, "
            + micros("clock_timestamp()");
    }

    ChangeRequest requestFrom(const pqxx::row& r)
    {
        ChangeRequest c;
        c.id = r[0].as<std::int64_t>();
        c.kind = r[1].as<std::string>();
        c.specJson = r[2].as<std::string>();
        c.specSha256 = r[3].as<std::string>();
        c.state = r[4].as<std::string>();
        c.requestedLogin = r[5].as<std::string>();
        c.requestedRole = r[6].as<std::string>();
        c.requestedActor = r[7].as<std::string>();
        c.requestedReason = r[8].as<std::string>();
        c.requestedAtUs = r[9].as<std::int64_t>();
        c.approvableUntilUs = r[10].as<std::int64_t>();
        c.approvedLogin = text(r[11]);
        c.approvedRole = text(r[12]);
        c.approvedActor = text(r[13]);
        c.approvedAtUs = optionalInt(r[14]);
        c.approvalExpiresAtUs = optionalInt(r[15]);
        c.usedAtUs = optionalInt(r[16]);
        c.purgeRunId = optionalInt(r[17]);
        c.usedLogin = text(r[18]);
        c.nowUs = r[19].as<std::int64_t>();
        return c;
    }

    bool hasChangeRequests(pqxx::transaction_base& t, const SchemaName& schema)
    {
        return !t.exec_params("SELECT to_regclass($1)", schema.qualify("idem_change_requests"))[0][0].is_null();
    }

    ChangeRequested requestedFrom(const pqxx::row& r)
    {
        return { r[0].as<std::int64_t>(), r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<std::int64_t>(),
            r[4].as<std::int64_t>() };
    }

    void checkSha(const std::string& specSha256, const char* what)
    {
        if (!isSpecSha256(specSha256))
            throw std::invalid_argument(
                std::string(what) + " names the request's spec: its spec_sha256, 64 lower-case hex digits");
    }

} // namespace

bool isSpecSha256(const std::string& s)
{
    return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

bool ChangeRequest::expired() const
{
    if (state == "awaiting_approval")
        return approvableUntilUs <= nowUs;
    if (state == "approved")
        return approvalExpiresAtUs && *approvalExpiresAtUs <= nowUs;
    return false;
}

std::string ChangeRequest::what() const
{
    const auto spec = nlohmann::json::parse(specJson, nullptr, false);
    if (spec.is_discarded() || !spec.is_object())
        return kind + ": " + specJson;
    if (kind == "retention") {
        const auto op = spec.value("operation", std::string("?"));
        if (spec.value("change", std::string()) == "clear")
            return "retention: clear " + op + " (back to the default)";
        const auto& h = spec["horizon_seconds"];
        return "retention: set " + op + " to " + (h.is_number_integer() ? formatHorizon(h.get<std::int64_t>()) : "?");
    }
    const auto seconds = spec.value("max_seconds", std::int64_t(0));
    char duty[32];
    std::snprintf(duty, sizeof duty, "%g", spec.value("duty", 0.0));
    return "purge: batches of " + std::to_string(spec.value("batch", std::int64_t(0))) + ", "
        + (seconds > 0 ? "at most " + std::to_string(seconds) + " s" : std::string("until nothing is due")) + ", duty "
        + duty;
}

ChangePolicy readChangePolicy(pqxx::connection& conn, const SchemaName& schema)
{
    pqxx::read_transaction t(conn);
    ChangePolicy p;
    if (!hasChangeRequests(t, schema))
        return p;
    const auto r
        = t.exec("SELECT p.retention_changes_need_approval, p.manual_purges_need_approval, p.change_ttl_seconds"
                 " FROM "
            + schema.qualify("idem_approval_policy") + " p");
    t.commit();
    p.known = true;
    if (r.empty())
        return p;
    p.retentionChanges = r[0][0].as<bool>();
    p.manualPurges = r[0][1].as<bool>();
    p.ttlSeconds = r[0][2].as<int>();
    return p;
}

std::int64_t setChangePolicy(pqxx::connection& conn, const SchemaName& schema, bool retentionChanges, bool manualPurges,
    int ttlSeconds, const std::string& reason, const std::string& actor)
{
    validateReasonAndActor(reason, actor);
    if (ttlSeconds < ChangeLimits::minTtlSeconds || ttlSeconds > ChangeLimits::maxTtlSeconds)
        throw std::invalid_argument("a change request's time to live must be "
            + std::to_string(ChangeLimits::minTtlSeconds) + " to " + std::to_string(ChangeLimits::maxTtlSeconds)
            + " seconds, not " + std::to_string(ttlSeconds));
    return refusedAsJobRefused([&] {
        pqxx::work w(conn);
        const auto r = w.exec_params(
            "SELECT s.audit_id FROM " + schema.qualify("idem_set_change_approval") + "($1, $2, $3, $4, $5) s",
            retentionChanges, manualPurges, ttlSeconds, reason, actor.empty() ? localActor() : actor);
        w.commit();
        return r.at(0)[0].as<std::int64_t>();
    });
}

ChangeRequested requestRetentionChange(pqxx::connection& conn, const SchemaName& schema, const std::string& operation,
    std::optional<std::int64_t> horizonSeconds, const std::string& reason, const std::string& actor)
{
    validateReasonAndActor(reason, actor);
    return refusedAsJobRefused([&] {
        pqxx::work w(conn);
        const auto sql = "SELECT q.request_id, q.spec::text, q.spec_sha256, " + micros("q.approvable_until")
            + ", q.audit_id FROM " + schema.qualify("idem_request_retention") + "($1, $2, $3, $4, $5) q";
        const auto who = actor.empty() ? localActor() : actor;
        const auto r = horizonSeconds ? w.exec_params(sql, std::string("set"), operation, *horizonSeconds, reason, who)
                                      : w.exec_params(sql, std::string("clear"), operation, nullptr, reason, who);
        w.commit();
        return requestedFrom(r.at(0));
    });
}

ChangeRequested requestPurge(pqxx::connection& conn, const SchemaName& schema, int batch, int maxSeconds, double duty,
    const std::string& reason, const std::string& actor)
{
    validateReasonAndActor(reason, actor);
    if (batch < 1 || batch > 100000)
        throw std::invalid_argument("the batch must be 1 to 100000 rows, not " + std::to_string(batch));
    if (maxSeconds < 0 || maxSeconds > 86400)
        throw std::invalid_argument("--max-seconds must be 0 (no limit) to 86400");
    if (!(duty >= 0.01 && duty <= 1))
        throw std::invalid_argument("the duty must be 0.01 to 1");
    return refusedAsJobRefused([&] {
        pqxx::work w(conn);
        const auto r = w.exec_params("SELECT q.request_id, q.spec::text, q.spec_sha256, " + micros("q.approvable_until")
                + ", q.audit_id FROM " + schema.qualify("idem_request_purge") + "($1, $2, $3, $4, $5) q",
            batch, maxSeconds, duty, reason, actor.empty() ? localActor() : actor);
        w.commit();
        return requestedFrom(r.at(0));
    });
}

ChangeApproval approveChange(pqxx::connection& conn, const SchemaName& schema, std::int64_t id,
    const std::string& specSha256, const std::string& reason, const std::string& actor)
{
    validateReasonAndActor(reason, actor);
    checkSha(specSha256, "an approval");
    return refusedAsJobRefused([&] {
        pqxx::work w(conn);
        const auto r = w.exec_params("SELECT a.request_id, " + micros("a.approved_at") + ", " + micros("a.expires_at")
                + ", a.audit_id FROM " + schema.qualify("idem_change_approve") + "($1, $2, $3, $4) a",
            id, specSha256, reason, actor.empty() ? localActor() : actor);
        w.commit();
        const auto row = r.at(0);
        return ChangeApproval { row[0].as<std::int64_t>(), row[1].as<std::int64_t>(), row[2].as<std::int64_t>(),
            row[3].as<std::int64_t>() };
    });
}

ChangeUse useRetentionRequest(pqxx::connection& conn, const SchemaName& schema, std::int64_t id,
    const std::string& specSha256, const std::string& actor)
{
    validateReasonAndActor("use", actor);
    checkSha(specSha256, "the use of a request");
    return refusedAsJobRefused([&] {
        pqxx::work w(conn);
        const auto k
            = w.exec_params("SELECT r.kind FROM " + schema.qualify("idem_change_requests") + " r WHERE r.id = $1", id);
        if (!k.empty() && k[0][0].as<std::string>() != "retention")
            throw JobRefused("change request " + std::to_string(id) + " is a " + k[0][0].as<std::string>()
                    + ", not a retention change: run it with idemctl purge --request",
                "ID003");
        const auto r = w.exec_params("SELECT u.request_id, u.kind, u.spec::text, u.audit_id, u.applied_audit_id,"
                                     " u.purge_run_id FROM "
                + schema.qualify("idem_change_use") + "($1, $2, $3) u",
            id, specSha256, actor.empty() ? localActor() : actor);
        w.commit();
        const auto row = r.at(0);
        ChangeUse u;
        u.id = row[0].as<std::int64_t>();
        u.kind = row[1].as<std::string>();
        u.specJson = row[2].as<std::string>();
        u.auditId = row[3].as<std::int64_t>();
        u.appliedAuditId = optionalInt(row[4]);
        if (u.appliedAuditId && *u.appliedAuditId == 0)
            u.appliedAuditId.reset();
        u.purgeRunId = optionalInt(row[5]);
        return u;
    });
}

std::vector<ChangeRequest> listOpenChangeRequests(pqxx::connection& conn, const SchemaName& schema, int limit)
{
    if (limit < 1 || limit > 1000)
        throw std::invalid_argument("a list of change requests holds 1 to 1000, not " + std::to_string(limit));
    pqxx::read_transaction t(conn);
    std::vector<ChangeRequest> out;
    if (!hasChangeRequests(t, schema))
        return out;
    const auto r = t.exec_params("SELECT " + requestColumns() + " FROM " + schema.qualify("idem_change_requests")
            + " r WHERE r.state <> 'used'"
              " AND COALESCE(r.approval_expires_at, r.approvable_until) > clock_timestamp() - interval '1 day'"
              " ORDER BY r.id LIMIT $1",
        limit);
    t.commit();
    out.reserve(r.size());
    for (const auto& row : r)
        out.push_back(requestFrom(row));
    return out;
}

std::optional<ChangeRequest> readChangeRequest(pqxx::connection& conn, const SchemaName& schema, std::int64_t id)
{
    pqxx::read_transaction t(conn);
    if (!hasChangeRequests(t, schema))
        return std::nullopt;
    const auto r = t.exec_params(
        "SELECT " + requestColumns() + " FROM " + schema.qualify("idem_change_requests") + " r WHERE r.id = $1", id);
    t.commit();
    if (r.empty())
        return std::nullopt;
    return requestFrom(r[0]);
}

} // namespace idem
