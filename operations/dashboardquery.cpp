#include "operations/dashboardquery.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/sha256.h"
#include "operations/outcomeseries.h"

namespace idem {

namespace {
    const char* orNull(const std::optional<std::string>& v)
    {
        return v ? v->c_str() : static_cast<const char*>(nullptr);
    }
} // namespace

std::optional<double> CounterBucket::duplicateRatio() const
{
    const auto claims = acquired + duplicates();
    if (claims == 0)
        return std::nullopt;
    return static_cast<double>(duplicates()) / static_cast<double>(claims);
}

std::optional<std::int64_t> CounterBucket::count(Figure figure) const
{
    switch (figure) {
    case Figure::Claims:
        return acquired + duplicates();
    case Figure::Retries:
        return reclaims();
    case Figure::FailedRetries:
        return failedRetries();
    case Figure::DigestConflicts:
        return conflict;
    case Figure::StaleTokenRejections:
        return staleToken;
    default:
        return std::nullopt;
    }
}

std::string dashboardSql(const SchemaName& schema)
{
    // The figures are statsSql() verbatim, as a subquery; what is added is chart data only:
    // per-minute outcome sums for the last $5 buckets, over every tenant and operation from
    // idem_counters_total (at most $5 x 15 rows), filtered from the detailed idem_counters.
    return "WITH stats AS (" + statsSql(schema) + R"(),
history AS (
    SELECT c.bucket, c.outcome, c.n FROM )"
        + schema.qualify("idem_counters_total") + R"( c
     WHERE $1::text IS NULL AND $2::text IS NULL AND c.minutes = 1
       AND c.bucket >= date_trunc('minute', now()) - make_interval(mins => $5::int - 1) AND c.bucket <= now()
    UNION ALL
    SELECT c.bucket, c.outcome, least(sum(c.n), 9223372036854775807)::bigint FROM )"
        + schema.qualify("idem_counters") + R"( c
     WHERE NOT ($1::text IS NULL AND $2::text IS NULL)
       AND c.bucket >= date_trunc('minute', now()) - make_interval(mins => $5::int - 1) AND c.bucket <= now()
       AND ($1::text IS NULL OR c.tenant = $1::text)
       AND ($2::text IS NULL OR c.operation = $2::text)
     GROUP BY c.bucket, c.outcome
)
SELECT stats.*,
       (extract(epoch FROM now()) OPERATOR(pg_catalog.*) 1000::numeric)::bigint AS server_now_ms,
       (SELECT coalesce(json_agg(json_build_array(extract(epoch FROM h.bucket)::bigint, h.outcome, h.n)
                                 ORDER BY h.bucket), '[]'::json)
          FROM history h) AS buckets,
       )" + reconcileTotalsColumnSql(schema) + R"( AS reconcile
FROM stats
)";
}

void prepareDashboardConnection(pqxx::connection& conn, int statementTimeoutMs)
{
    pqxx::nontransaction n(conn);
    // Session-wide (is_local false): this connection's later statements, the ticks, are bounded
    // without a BEGIN / SET LOCAL / COMMIT around each.
    n.exec_params("SELECT set_config('statement_timeout', $1, false)", std::to_string(statementTimeoutMs));
}

std::string unfilteredDashboardSql(const SchemaName& schema) { return withoutFilterParameters(dashboardSql(schema), 5); }

namespace {
    DashboardReading fromDashboardRow(const pqxx::row& row);

    // The tick as a pooler allows it: SET LOCAL ends with the transaction, an unnamed statement
    // with the next one, so the server backend is left as it was found.
    pqxx::result readWithoutSessionState(
        pqxx::connection& conn, const SchemaName& schema, const DashboardOptions& options, bool filtered)
    {
        // Read-write (READ COMMITTED): idem_live_stats() may store the shared figures.
        pqxx::work tx(conn);
        tx.exec_params(
            "SELECT set_config('statement_timeout', $1, true)", std::to_string(options.stats.statementTimeoutMs));
        const auto r = filtered
            ? tx.exec_params(dashboardSql(schema), orNull(options.stats.tenant), orNull(options.stats.operation),
                options.stats.windowMinutes, options.stats.longUnfinishedAfterMinutes,
                std::max(1, options.historyMinutes))
            : tx.exec_params(unfilteredDashboardSql(schema), options.stats.windowMinutes,
                options.stats.longUnfinishedAfterMinutes, std::max(1, options.historyMinutes));
        tx.commit();
        return r;
    }
} // namespace

DashboardReading readDashboard(pqxx::connection& conn, const SchemaName& schema, const DashboardOptions& options)
{
    // The headline view is polled every second by every console: planning its statement each
    // time was most of a tick's cost (bench/README.md). Named after its text, so another schema
    // on the same connection gets its own.
    const bool filtered = options.stats.tenant || options.stats.operation;
    if (options.noSessionState)
        return fromDashboardRow(readWithoutSessionState(conn, schema, options, filtered).at(0));
    std::string prepared;
    if (!filtered) {
        const std::string sql = unfilteredDashboardSql(schema);
        prepared = "idem_tick_" + sha256Hex(sql).substr(0, 16);
        conn.prepare(prepared, sql);
    }
    // No BEGIN: one statement in autocommit is one snapshot and one round trip (and, read-write,
    // may store the shared bounded figures).
    pqxx::nontransaction n(conn);
    const pqxx::result r = filtered
        ? n.exec_params(dashboardSql(schema), orNull(options.stats.tenant), orNull(options.stats.operation),
            options.stats.windowMinutes, options.stats.longUnfinishedAfterMinutes, std::max(1, options.historyMinutes))
        : n.exec_prepared(prepared, options.stats.windowMinutes, options.stats.longUnfinishedAfterMinutes,
            std::max(1, options.historyMinutes));
    return fromDashboardRow(r.at(0));
}

namespace {
    DashboardReading fromDashboardRow(const pqxx::row& row)
    {
        DashboardReading out;
        out.stats = statsFromRow(row);
        out.serverNowMs = row["server_now_ms"].as<std::int64_t>();
        for (const auto& item : nlohmann::json::parse(row["buckets"].as<std::string>())) {
            const auto minute = item.at(0).get<std::int64_t>();
            if (out.buckets.empty() || out.buckets.back().minuteEpoch != minute) {
                out.buckets.emplace_back();
                out.buckets.back().minuteEpoch = minute;
            }
            if (const auto field = outcomeField(item.at(1).get<std::string>()))
                out.buckets.back().*field += item.at(2).get<std::int64_t>();
        }
        if (out.stats.exact)
            out.attempts = out.stats.exact->attempts;
        out.reconcile = reconcileTotalsFromJson(row["reconcile"].as<std::string>());
        return out;
    }
} // namespace

} // namespace idem
