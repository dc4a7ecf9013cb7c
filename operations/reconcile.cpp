#include "operations/reconcile.h"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "operations/actions.h"

namespace idem {

namespace {

    // PostgreSQL's integer types (pg_type.oid): what a probe's count may be.
    constexpr pqxx::oid int2Oid = 21, int4Oid = 23, int8Oid = 20;

    std::string probeColumns()
    {
        return "p.operation, p.query, p.sample_size, p.window_seconds, p.every_seconds, p.timeout_ms, "
            + updatedAtMicrosSql("p.created_at") + ", p.created_by, " + updatedAtMicrosSql("p.next_run_at");
    }

    std::string runColumns()
    {
        return "r.id, r.operation, " + updatedAtMicrosSql("r.started_at") + ", " + updatedAtMicrosSql("r.finished_at")
            + ", r.runner, r.sample_size, r.sampled, r.ok, r.missing, r.duplicated, r.errors, r.offenders::text, r.problem";
    }

    std::vector<ReconcileOffender> offendersFrom(const std::string& json)
    {
        std::vector<ReconcileOffender> out;
        const auto list = nlohmann::json::parse(json);
        for (const auto& o : list) {
            ReconcileOffender x;
            x.key = o.value("key", std::string());
            if (o.contains("count") && o["count"].is_number_integer())
                x.count = o["count"].get<std::int64_t>();
            else
                x.error = o.value("error", std::string());
            out.push_back(std::move(x));
        }
        return out;
    }

    ReconcileRun runFrom(const pqxx::row& r, int at)
    {
        ReconcileRun x;
        x.id = r[at].as<std::int64_t>();
        x.operation = r[at + 1].as<std::string>();
        x.startedAtUs = r[at + 2].as<std::int64_t>();
        if (!r[at + 3].is_null())
            x.finishedAtUs = r[at + 3].as<std::int64_t>();
        x.runner = r[at + 4].as<std::string>();
        x.sampleSize = r[at + 5].as<int>();
        const auto n = [&](int i) { return r[at + i].is_null() ? std::int64_t { 0 } : r[at + i].as<std::int64_t>(); };
        x.sampled = n(6);
        x.ok = n(7);
        x.missing = n(8);
        x.duplicated = n(9);
        x.errors = n(10);
        x.offenders = offendersFrom(r[at + 11].as<std::string>());
        x.problem = r[at + 12].is_null() ? std::string() : r[at + 12].as<std::string>();
        return x;
    }

    // libpqxx 6.4 leaves sqlstate() empty on some of its own exception classes.
    std::string stateOf(const pqxx::sql_error& e)
    {
        if (!e.sqlstate().empty())
            return e.sqlstate();
        if (dynamic_cast<const pqxx::insufficient_privilege*>(&e))
            return "42501";
        if (dynamic_cast<const pqxx::undefined_table*>(&e))
            return "42P01";
        if (dynamic_cast<const pqxx::undefined_function*>(&e))
            return "42883";
        if (dynamic_cast<const pqxx::syntax_error*>(&e))
            return "42601";
        return "unknown";
    }

    // One key's query, in a transaction of its own that is rolled back: READ ONLY before anything
    // else, the statement timeout, then the role, so that the query runs with idem_reconcile's
    // grants only. Returns the count, or throws ProbeFailure with what went wrong.
    struct ProbeFailure : std::runtime_error {
        using std::runtime_error::runtime_error;
    };
    struct RoleRefused : std::runtime_error {
        using std::runtime_error::runtime_error;
    };

    std::int64_t probeOne(pqxx::connection& conn, const std::string& query, int timeoutMs, const std::string& businessId)
    {
        pqxx::work tx(conn);
        tx.exec("SET TRANSACTION READ ONLY");
        tx.exec_params("SELECT pg_catalog.set_config('statement_timeout', $1, true)", std::to_string(timeoutMs) + "ms");
        try {
            tx.exec("SET LOCAL ROLE idem_reconcile");
        } catch (const pqxx::sql_error& e) {
            throw RoleRefused("cannot run the probe as role idem_reconcile (SQLSTATE " + stateOf(e) + "): " + e.what());
        }
        pqxx::result r;
        try {
            // Extended protocol: one statement only, the business id a bound parameter.
            r = tx.exec_params(query, businessId);
        } catch (const pqxx::broken_connection&) {
            throw;
        } catch (const pqxx::sql_error& e) {
            throw ProbeFailure("SQLSTATE " + stateOf(e) + ": " + e.what());
        }
        tx.abort();
        if (r.columns() != 1)
            throw ProbeFailure("the query returned " + std::to_string(r.columns()) + " columns, not one count");
        if (r.size() != 1)
            throw ProbeFailure("the query returned " + std::to_string(r.size()) + " rows, not one count");
        const auto type = r.column_type(0);
        if (type != int2Oid && type != int4Oid && type != int8Oid)
            throw ProbeFailure("the query returned a column of type oid " + std::to_string(type)
                + ", not an integer count (count(*) is bigint)");
        if (r[0][0].is_null())
            throw ProbeFailure("the query returned NULL, not a count");
        const auto n = r[0][0].as<std::int64_t>();
        if (n < 0)
            throw ProbeFailure("the query returned " + std::to_string(n) + ", a negative count");
        return n;
    }

    std::string firstLine(std::string s)
    {
        while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
            s.pop_back();
        for (auto& c : s)
            if (c == '\n' || c == '\r' || c == '\t')
                c = ' ';
        return s;
    }

} // namespace

std::int64_t ReconcileReading::missing() const
{
    std::int64_t n = 0;
    for (const auto& p : probes)
        n += p.last ? p.last->missing : 0;
    return n;
}

std::int64_t ReconcileReading::duplicated() const
{
    std::int64_t n = 0;
    for (const auto& p : probes)
        n += p.last ? p.last->duplicated : 0;
    return n;
}

std::int64_t ReconcileReading::sampled() const
{
    std::int64_t n = 0;
    for (const auto& p : probes)
        n += p.last ? p.last->sampled : 0;
    return n;
}

std::int64_t ReconcileReading::errors() const
{
    std::int64_t n = 0;
    for (const auto& p : probes)
        n += p.last ? p.last->errors : 0;
    return n;
}

ReconcileReading readReconcile(pqxx::transaction_base& tx, const SchemaName& schema)
{
    ReconcileReading out;
    // One statement whatever the probes: the server's time rides on a row of its own when there is none.
    const auto rows = tx.exec_params("SELECT x.*, n.now_us FROM (SELECT "
            + updatedAtMicrosSql("pg_catalog.clock_timestamp()") + " AS now_us) n LEFT JOIN (SELECT " + probeColumns()
            + ", " + runColumns() + " FROM " + schema.qualify("idem_reconcile_probes")
            + " p LEFT JOIN LATERAL (SELECT * FROM " + schema.qualify("idem_reconcile_runs")
            + " r WHERE r.operation = p.operation AND r.finished_at IS NOT NULL ORDER BY r.id DESC LIMIT 1) r ON true"
              " ORDER BY p.operation LIMIT $1) x ON true ORDER BY 1",
        maxReconcileProbes);
    for (const auto& r : rows) {
        out.serverNowUs = r[22].as<std::int64_t>();
        if (r[0].is_null())
            continue;
        ReconcileStatus s;
        s.probe.operation = r[0].as<std::string>();
        s.probe.query = r[1].as<std::string>();
        s.probe.sampleSize = r[2].as<int>();
        s.probe.windowSeconds = r[3].as<int>();
        s.probe.everySeconds = r[4].as<int>();
        s.probe.timeoutMs = r[5].as<int>();
        s.probe.createdAtUs = r[6].as<std::int64_t>();
        s.probe.createdBy = r[7].as<std::string>();
        s.probe.nextRunAtUs = r[8].as<std::int64_t>();
        if (!r[9].is_null())
            s.last = runFrom(r, 9);
        out.probes.push_back(std::move(s));
    }
    return out;
}

ReconcileReading readReconcile(pqxx::connection& conn, const SchemaName& schema)
{
    pqxx::read_transaction tx(conn);
    auto out = readReconcile(tx, schema);
    tx.commit();
    return out;
}

std::vector<ReconcileRun> listReconcileRuns(
    pqxx::connection& conn, const SchemaName& schema, const std::string& operation, int limit)
{
    if (limit < 1 || limit > 100)
        throw std::invalid_argument("list 1 to 100 runs");
    pqxx::read_transaction tx(conn);
    std::vector<ReconcileRun> out;
    for (const auto& r : tx.exec_params("SELECT " + runColumns() + " FROM " + schema.qualify("idem_reconcile_runs")
                 + " r WHERE r.operation = $1 ORDER BY r.id DESC LIMIT $2",
             operation, limit))
        out.push_back(runFrom(r, 0));
    tx.commit();
    return out;
}

ReconcileProbeAdded addReconcileProbe(pqxx::connection& conn, const SchemaName& schema, const ReconcileProbeSpec& s)
{
    pqxx::work tx(conn);
    const auto r = tx.exec_params1("SELECT a.audit_id, a.replaced FROM "
            + schema.qualify("idem_reconcile_add") + "($1, $2, $3, $4, $5, $6, $7, $8) a",
        s.operation, s.query, s.sampleSize, s.windowSeconds, s.everySeconds, s.timeoutMs, s.reason, s.actor);
    ReconcileProbeAdded out { r[0].as<std::int64_t>(), r[1].as<bool>() };
    tx.commit();
    return out;
}

std::int64_t removeReconcileProbe(pqxx::connection& conn, const SchemaName& schema, const std::string& operation,
    const std::string& reason, const std::string& actor)
{
    try {
        pqxx::work tx(conn);
        const auto id = tx.exec_params1("SELECT " + schema.qualify("idem_reconcile_remove") + "($1, $2, $3)",
                              operation, reason, actor)[0]
                            .as<std::int64_t>();
        tx.commit();
        return id;
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() == "ID002")
            throw ReconcileNotFound(e.what());
        throw;
    }
}

std::optional<ReconcileRun> runReconcileProbe(pqxx::connection& conn, const SchemaName& schema,
    const std::optional<std::string>& operation, bool force, const std::string& runner)
{
    nlohmann::json begun;
    try {
        pqxx::work tx(conn);
        const auto r = tx.exec_params1("SELECT " + schema.qualify("idem_reconcile_begin") + "($1, $2, $3)::text",
            operation ? operation->c_str() : static_cast<const char*>(nullptr), force, runner);
        if (r[0].is_null())
            return std::nullopt;
        begun = nlohmann::json::parse(r[0].as<std::string>());
        tx.commit();
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() == "ID002")
            throw ReconcileNotFound(e.what());
        throw;
    }
    const std::int64_t run = begun.at("run").get<std::int64_t>();
    const std::string query = begun.at("query").get<std::string>();
    const int timeoutMs = begun.at("timeout_ms").get<int>();
    nlohmann::json results = nlohmann::json::array();
    std::string problem;
    int errors = 0;
    for (const auto& k : begun.at("keys")) {
        const std::string key = k.at("key").get<std::string>();
        try {
            const auto n = probeOne(conn, query, timeoutMs, k.at("business_id").get<std::string>());
            results.push_back({ { "key", key }, { "count", n } });
        } catch (const RoleRefused& e) {
            problem = firstLine(e.what());
            break;
        } catch (const ProbeFailure& e) {
            results.push_back({ { "key", key }, { "error", firstLine(e.what()) } });
            if (++errors >= reconcileStopAfterErrors) {
                problem = "stopped after " + std::to_string(errors) + " keys' queries failed; the last: "
                    + firstLine(e.what());
                break;
            }
        }
    }
    if (problem.size() > 1000)
        problem.resize(1000);
    // Each query's transaction was rolled back, and its settings with it; a session-level
    // advisory lock a query took would outlive it: none stays on this connection.
    pqxx::nontransaction(conn).exec("SELECT pg_catalog.pg_advisory_unlock_all()");
    pqxx::work tx(conn);
    const auto r = tx.exec_params1("SELECT " + runColumns() + " FROM " + schema.qualify("idem_reconcile_finish")
            + "($1, $2::jsonb, $3) r",
        run, results.dump(), problem.empty() ? static_cast<const char*>(nullptr) : problem.c_str());
    auto out = runFrom(r, 0);
    tx.commit();
    return out;
}

std::string reconcileTotalsColumnSql(const SchemaName& schema)
{
    // The probes (at most a few hundred) each with its last finished run: one index probe each.
    return R"((SELECT json_build_object('probes', count(*), 'run', count(r.id),
                        'sampled', coalesce(sum(r.sampled), 0), 'missing', coalesce(sum(r.missing), 0),
                        'duplicated', coalesce(sum(r.duplicated), 0), 'errors', coalesce(sum(r.errors), 0),
                        'oldest_ms', (extract(epoch FROM min(r.finished_at)) OPERATOR(pg_catalog.*) 1000::numeric)::bigint,
                        'not_ok_operations', count(*) FILTER (WHERE r.missing + r.duplicated > 0),
                        'worst', (array_agg(p.operation ORDER BY r.missing + r.duplicated DESC, p.operation)
                                  FILTER (WHERE r.id IS NOT NULL))[1])::text
          FROM )" + schema.qualify("idem_reconcile_probes") + R"( p
          LEFT JOIN LATERAL (SELECT x.id, x.sampled, x.missing, x.duplicated, x.errors, x.finished_at FROM )"
        + schema.qualify("idem_reconcile_runs") + R"( x
                              WHERE x.operation = p.operation AND x.finished_at IS NOT NULL
                              ORDER BY x.id DESC LIMIT 1) r ON true
         WHERE $2::text IS NULL OR p.operation = $2::text))";
}

ReconcileTotals reconcileTotalsFromJson(const std::string& json)
{
    const auto j = nlohmann::json::parse(json);
    ReconcileTotals t;
    t.probes = j.value("probes", std::int64_t { 0 });
    t.run = j.value("run", std::int64_t { 0 });
    t.sampled = j.value("sampled", std::int64_t { 0 });
    t.missing = j.value("missing", std::int64_t { 0 });
    t.duplicated = j.value("duplicated", std::int64_t { 0 });
    t.errors = j.value("errors", std::int64_t { 0 });
    if (j.contains("oldest_ms") && j["oldest_ms"].is_number_integer())
        t.oldestFinishedMs = j["oldest_ms"].get<std::int64_t>();
    if (j.contains("worst") && j["worst"].is_string())
        t.worst = j["worst"].get<std::string>();
    t.operationsNotOk = j.value("not_ok_operations", std::int64_t { 0 });
    return t;
}

ReconcileTotals reconcileTotals(const ReconcileReading& reading)
{
    ReconcileTotals t;
    std::int64_t worst = -1;
    for (const auto& p : reading.probes) {
        ++t.probes;
        if (!p.last)
            continue;
        const auto& r = *p.last;
        ++t.run;
        t.sampled += r.sampled;
        t.missing += r.missing;
        t.duplicated += r.duplicated;
        t.errors += r.errors;
        if (r.finishedAtUs)
            t.oldestFinishedMs = std::min(t.oldestFinishedMs.value_or(*r.finishedAtUs / 1000), *r.finishedAtUs / 1000);
        const auto notOk = r.missing + r.duplicated;
        if (notOk > 0)
            ++t.operationsNotOk;
        if (notOk > worst) {
            worst = notOk;
            t.worst = p.probe.operation;
        }
    }
    return t;
}

std::string reconcileRunSentence(const ReconcileRun& run)
{
    const auto keys = [](std::int64_t n) { return std::to_string(n) + (n == 1 ? " key" : " keys"); };
    std::string s = run.operation + ": " + keys(run.missing) + " with no effect, " + std::to_string(run.duplicated)
        + " with two or more, " + std::to_string(run.errors) + (run.errors == 1 ? " error" : " errors")
        + " in the last " + std::to_string(run.sampled) + " sampled";
    if (!run.problem.empty())
        s += " (" + run.problem + ")";
    return s;
}

} // namespace idem
