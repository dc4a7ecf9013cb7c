#include "operations/events.h"

#include <stdexcept>

#include <pqxx/pqxx>

#include "operations/actions.h"
#include "operations/pauses.h"
#include "operations/readframe.h"

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

namespace {
    std::string eventsSql(const SchemaName& schema, const std::string& args)
    {
        return "SELECT e.id, " + updatedAtMicrosSql("e.at")
            + ", e.action, e.tenant, e.operation, e.actor, e.text, e.worker, e.old_version, e.new_version FROM "
            + schema.qualify("idem_events") + args + " e";
    }
    std::string paramArgs() { return "(" + microsParamSql(1) + ", " + microsParamSql(2) + ", $3, $4, $5)"; }

    // The rows of eventsSql() into out; whether a source came back full (what it left out is then
    // counted by one more statement).
    template <typename Result> bool eventsFrom(const Result& r, int limit, EventList& out)
    {
        const auto text = [](const auto& f) { return f.is_null() ? std::string() : f.template as<std::string>(); };
        int audit = 0, deploys = 0, failovers = 0;
        for (std::size_t i = 0; i < r.size(); ++i) {
            const auto row = r[i];
            out.events.push_back({ row[0].template as<std::int64_t>(), row[1].template as<std::int64_t>(),
                row[2].template as<std::string>(), row[3].template as<std::string>(),
                row[4].template as<std::string>(), row[5].template as<std::string>(),
                row[6].template as<std::string>(), text(row[7]), text(row[8]), text(row[9]) });
            const auto& action = out.events.back().action;
            ++(action == "deploy" ? deploys : action == "failover" ? failovers : audit);
        }
        return audit >= limit || deploys >= limit || failovers >= limit || r.size() >= std::size_t(limit);
    }

    template <typename Result> void omittedFrom(const Result& r, EventList& out)
    {
        for (std::size_t i = 0; i < r.size(); ++i) {
            const auto row = r[i];
            const auto source = row[0].template as<std::string>();
            const auto n = row[1].template as<std::int64_t>();
            (source == "deploy" ? out.omittedDeploys : source == "failover" ? out.omittedFailovers : out.omittedAudit)
                += n;
        }
    }

    std::string omittedSignature(const SchemaName& schema)
    {
        return schema.qualify("idem_events_omitted") + "(timestamptz, timestamptz, text, text, integer)";
    }
} // namespace

EventList readEvents(pqxx::transaction_base& tx, const SchemaName& schema, std::int64_t fromUs, std::int64_t toUs,
    const std::string& tenant, const std::string& operation, int limit)
{
    checkQuery(fromUs, toUs, tenant, operation, limit);
    // The caller's transaction goes on after this read: its path is put back as it was.
    const auto path = tx.exec("SELECT pg_catalog.current_setting('search_path')")[0][0].as<std::string>();
    catalogPath(tx);
    const std::string args = paramArgs();
    const auto r = tx.exec_params(eventsSql(schema, args), fromUs, toUs, orNull(tenant), orNull(operation), limit);
    EventList out;
    if (eventsFrom(r, limit, out)) {
        // A source came back full: what did its bound leave out? (Before schema v24 the server
        // has no count, and one bound for all sources.)
        if (tx.exec_params("SELECT pg_catalog.to_regprocedure($1) IS NOT NULL", omittedSignature(schema))[0][0]
                .as<bool>()) {
            omittedFrom(tx.exec_params("SELECT o.source, o.omitted FROM " + schema.qualify("idem_events_omitted")
                                + args + " o",
                            fromUs, toUs, orNull(tenant), orNull(operation), limit),
                out);
        } else {
            out.omittedUncounted = true;
        }
    }
    tx.exec_params("SELECT pg_catalog.set_config('search_path', $1, true)", path);
    return out;
}

RecentEvents readRecentEvents(pqxx::connection& conn, const SchemaName& schema, std::int64_t beforeUs,
    std::int64_t afterUs, const std::string& tenant, const std::string& operation, int limit, int statementTimeoutMs)
{
    if (beforeUs < 0 || afterUs < 0)
        throw std::invalid_argument("an event window reaches back and ahead of now, not the other way");
    checkQuery(0, beforeUs + afterUs, tenant, operation, limit);
    RecentEvents out;
    if (!directReads(conn)) {
        // Statement by statement, as a transaction pooler needs it.
        pqxx::read_transaction tx(conn);
        tx.exec_params("SELECT pg_catalog.set_config('statement_timeout', $1, true)", std::to_string(statementTimeoutMs));
        const auto nowUs = tx.exec("SELECT " + updatedAtMicrosSql("now()")).at(0).at(0).as<std::int64_t>();
        out.fromUs = nowUs - beforeUs;
        out.toUs = nowUs + afterUs;
        out.list = readEvents(tx, schema, out.fromUs, out.toUs, tenant, operation, limit);
        tx.commit();
        return out;
    }
    // One round trip: the window is the transaction's now() less and plus the bound spans, the
    // same instants the statement by statement form binds.
    FrameTransaction options;
    options.statementTimeoutMs = statementTimeoutMs;
    ReadFrame frame(options);
    frame.add("SELECT " + updatedAtMicrosSql("now()"));
    frame.add(eventsSql(schema,
                  "(now() - $1::bigint * interval '1 microsecond', now() + $2::bigint * interval '1 microsecond',"
                  " $3, $4, $5)"),
        beforeUs, afterUs, orNull(tenant), orNull(operation), limit);
    const auto r = frame.run(conn);
    const auto nowUs = r[0].at(0)[0].as<std::int64_t>();
    out.fromUs = nowUs - beforeUs;
    out.toUs = nowUs + afterUs;
    if (eventsFrom(r[1], limit, out.list)) {
        // Full (rare): what the bound left out, in one more round trip.
        ReadFrame check(options);
        check.add("SELECT pg_catalog.to_regprocedure($1) IS NOT NULL", omittedSignature(schema));
        if (check.run(conn)[0].at(0)[0].as<bool>()) {
            ReadFrame omitted(options);
            omitted.add("SELECT o.source, o.omitted FROM " + schema.qualify("idem_events_omitted") + paramArgs() + " o",
                out.fromUs, out.toUs, orNull(tenant), orNull(operation), limit);
            omittedFrom(omitted.run(conn)[0], out.list);
        } else {
            out.list.omittedUncounted = true;
        }
    }
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
