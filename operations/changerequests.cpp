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

ChangePolicy readChangePolicy(pqxx::connection& conn, const SchemaName& schema)
{
    ChangePolicy p;
    for (const auto& k : readApprovalKinds(conn, schema)) {
        if (k.kind == "retention") {
            p.retentionChanges = k.gated;
            p.ttlSeconds = k.ttlSeconds;
        } else if (k.kind == "purge")
            p.manualPurges = k.gated;
    }
    return p;
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

ChangeUse useRetentionRequest(pqxx::connection& conn, const SchemaName& schema, std::int64_t id,
    const std::string& specSha256, const std::string& actor)
{
    validateReasonAndActor("use", actor);
    checkSha(specSha256, "the use of a request");
    return refusedAsJobRefused([&] {
        pqxx::work w(conn);
        const auto k
            = w.exec_params("SELECT r.kind FROM " + schema.qualify("idem_approval_requests") + " r WHERE r.id = $1", id);
        if (!k.empty() && k[0][0].as<std::string>() != "retention")
            throw JobRefused("change request " + std::to_string(id) + " is a " + k[0][0].as<std::string>()
                    + ", not a retention change: run it with idemctl purge --request",
                "ID004");
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

} // namespace idem
