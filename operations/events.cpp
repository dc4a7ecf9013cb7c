#include "operations/events.h"

#include <stdexcept>

#include <pqxx/pqxx>

#include "operations/actions.h"
#include "operations/pauses.h"

namespace idem {

namespace {
    std::optional<std::string> orNull(const std::string& s) { return s.empty() ? std::nullopt : std::optional(s); }

    // What these statements call besides the functions they name with the schema (extract, *, +,
    // to_timestamp) resolves in pg_catalog for this transaction, never in a schema on the caller's
    // path that another role may write (public before PostgreSQL 15; tst_lowroles plants there).
    void catalogPath(pqxx::transaction_base& tx)
    {
        tx.exec("SELECT pg_catalog.set_config('search_path', 'pg_catalog', true)");
    }

    // Bad input is refused before any I/O.
    void checkQuery(std::int64_t fromUs, std::int64_t toUs, const std::string& tenant, const std::string& operation,
        int limit)
    {
        if (toUs < fromUs || toUs - fromUs > 31LL * 24 * 3600 * 1000000)
            throw std::invalid_argument("an event window is 0 to 31 days long");
        if (limit < 1 || limit > 10000)
            throw std::invalid_argument("an event list holds 1 to 10000 events, not " + std::to_string(limit));
        for (const auto* name : { &tenant, &operation })
            if (!name->empty() && !validPauseName(*name))
                throw std::invalid_argument("'" + *name + "' is not a tenant or operation name");
    }
} // namespace

std::vector<Event> listEvents(pqxx::connection& conn, const SchemaName& schema, std::int64_t fromUs, std::int64_t toUs,
    const std::string& tenant, const std::string& operation, int limit)
{
    return readEvents(conn, schema, fromUs, toUs, tenant, operation, limit).events;
}

std::vector<Event> listEvents(pqxx::transaction_base& tx, const SchemaName& schema, std::int64_t fromUs,
    std::int64_t toUs, const std::string& tenant, const std::string& operation, int limit)
{
    return readEvents(tx, schema, fromUs, toUs, tenant, operation, limit).events;
}

EventList readEvents(pqxx::connection& conn, const SchemaName& schema, std::int64_t fromUs, std::int64_t toUs,
    const std::string& tenant, const std::string& operation, int limit)
{
    pqxx::read_transaction tx(conn);
    auto out = readEvents(tx, schema, fromUs, toUs, tenant, operation, limit);
    tx.commit();
    return out;
}

EventList readEvents(pqxx::transaction_base& tx, const SchemaName& schema, std::int64_t fromUs, std::int64_t toUs,
    const std::string& tenant, const std::string& operation, int limit)
{
    checkQuery(fromUs, toUs, tenant, operation, limit);
    // The caller's transaction goes on after this read: its path is put back as it was.
    const auto path = tx.exec("SELECT pg_catalog.current_setting('search_path')")[0][0].as<std::string>();
    catalogPath(tx);
    const std::string args = "(" + microsParamSql(1) + ", " + microsParamSql(2) + ", $3, $4, $5)";
    const auto r = tx.exec_params("SELECT e.id, " + updatedAtMicrosSql("e.at")
            + ", e.action, e.tenant, e.operation, e.actor, e.text, e.worker, e.old_version, e.new_version FROM "
            + schema.qualify("idem_events") + args + " e",
        fromUs, toUs, orNull(tenant), orNull(operation), limit);
    EventList out;
    const auto text = [](const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); };
    int audit = 0, deploys = 0, failovers = 0;
    for (const auto& row : r) {
        out.events.push_back({ row[0].as<std::int64_t>(), row[1].as<std::int64_t>(), row[2].as<std::string>(),
            row[3].as<std::string>(), row[4].as<std::string>(), row[5].as<std::string>(), row[6].as<std::string>(),
            text(row[7]), text(row[8]), text(row[9]) });
        const auto& action = out.events.back().action;
        ++(action == "deploy" ? deploys : action == "failover" ? failovers : audit);
    }
    if (audit >= limit || deploys >= limit || failovers >= limit || r.size() >= std::size_t(limit)) {
        // A source came back full: what did its bound leave out? (Before schema v24 the server
        // has no count, and one bound for all sources.)
        const auto omitted = schema.qualify("idem_events_omitted");
        if (tx.exec_params("SELECT pg_catalog.to_regprocedure($1) IS NOT NULL",
                  omitted + "(timestamptz, timestamptz, text, text, integer)")[0][0]
                .as<bool>()) {
            for (const auto& row : tx.exec_params("SELECT o.source, o.omitted FROM " + omitted + args + " o", fromUs,
                     toUs, orNull(tenant), orNull(operation), limit)) {
                const auto source = row[0].as<std::string>();
                const auto n = row[1].as<std::int64_t>();
                (source == "deploy" ? out.omittedDeploys : source == "failover" ? out.omittedFailovers : out.omittedAudit)
                    += n;
            }
        } else {
            out.omittedUncounted = true;
        }
    }
    tx.exec_params("SELECT pg_catalog.set_config('search_path', $1, true)", path);
    return out;
}

Event annotate(pqxx::connection& conn, const SchemaName& schema, const Annotation& a)
{
    validateReasonAndActor(a.text, a.actor);
    if (!validPauseName(a.tenant) || !validPauseName(a.operation))
        throw std::invalid_argument("an annotation's tenant and operation are '*' or names as keys carry them");
    const std::string actor = a.actor.empty() ? localActor() : a.actor;
    pqxx::work w(conn);
    catalogPath(w);
    const auto row = w.exec_params("SELECT n.audit_id, " + updatedAtMicrosSql("n.at") + " FROM "
                                       + schema.qualify("idem_annotate") + "($1, $2, $3, $4) n",
                         a.text, actor, a.tenant, a.operation)
                         .at(0);
    w.commit();
    Event e;
    e.auditId = row[0].as<std::int64_t>();
    e.atUs = row[1].as<std::int64_t>();
    e.action = "annotate";
    e.tenant = a.tenant;
    e.operation = a.operation;
    e.actor = actor;
    e.text = a.text;
    return e;
}

} // namespace idem
