#include "operations/breakdown.h"

#include <algorithm>
#include <stdexcept>

#include <pqxx/pqxx>

namespace idem {

namespace {
    constexpr std::int64_t maxCap = 1000000;
    constexpr int maxWindowMinutes = 44640; // 31 days, as the latency reads
    constexpr int maxTopErrors = 100;

    void checkQuery(const BreakdownQuery& q)
    {
        if (q.windowMinutes < 1 || q.windowMinutes > maxWindowMinutes)
            throw std::invalid_argument(
                "the window must be 1 to 44640 minutes (31 days), not " + std::to_string(q.windowMinutes));
        if (q.cap < 1 || q.cap > maxCap)
            throw std::invalid_argument("the cap must be 1 to 1000000 rows, not " + std::to_string(q.cap));
        if (q.topErrors < 0 || q.topErrors > maxTopErrors)
            throw std::invalid_argument("top errors must be 0 to 100, not " + std::to_string(q.topErrors));
        if (q.statementTimeoutMs < 1)
            throw std::invalid_argument("the statement timeout must be positive");
    }

    const char* nullIfEmpty(const std::string& s) { return s.empty() ? nullptr : s.c_str(); }
} // namespace

std::string breakdownSql(const SchemaName& schema)
{
    const auto q = [&schema](const char* name) { return schema.qualify(name); };
    // The tenant and operation of a key are its first two fields (tenant:operation:business_id).
    // Each source is read up to $5 rows BEFORE anything is grouped, so what one tick costs does
    // not depend on how many rows, tenants or operations there are; a source that filled its
    // cap makes its figures lower bounds. Only exact-type operators (no mixed numeric and float
    // arithmetic a planted operator could take over).
    return R"(
WITH w AS (
    SELECT date_trunc('minute', now()) - make_interval(mins => $1::int - 1) AS since,
           (SELECT s.folded_to FROM )"
        + q("idem_latency_state") + R"( s LIMIT 1) AS folded_to
),
proc_scan AS (
    SELECT t.idempotency_key AS k FROM )"
        + q("task_idempotency") + R"( t
     WHERE t.status = 'processing' LIMIT $5::bigint
),
proc AS (
    SELECT CASE WHEN $2::bool THEN split_part(p.k, ':', 1) ELSE '' END AS tenant,
           split_part(p.k, ':', 2) AS operation, count(*)::bigint AS n
      FROM proc_scan p
     WHERE ($3::text IS NULL OR split_part(p.k, ':', 1) = $3::text)
       AND ($4::text IS NULL OR split_part(p.k, ':', 2) = $4::text)
     GROUP BY 1, 2
),
cnt_scan AS (
    SELECT c.tenant, c.operation, c.outcome, c.n FROM )"
        + q("idem_counters") + R"( c CROSS JOIN w
     WHERE c.bucket >= w.since AND c.bucket <= now()
       AND c.outcome IN ('failed_retryable', 'failed_permanent', 'failed_unknown',
                         'reacquired_lease', 'reacquired_retry', 'conflict')
       AND ($3::text IS NULL OR c.tenant = $3::text) AND ($4::text IS NULL OR c.operation = $4::text)
     LIMIT $5::bigint
),
cnt AS (
    SELECT CASE WHEN $2::bool THEN c.tenant ELSE '' END AS tenant, c.operation,
           least(coalesce(sum(c.n) FILTER (WHERE c.outcome IN ('failed_retryable', 'failed_permanent', 'failed_unknown')), 0),
                 9223372036854775807)::bigint AS failed,
           least(coalesce(sum(c.n) FILTER (WHERE c.outcome IN ('reacquired_lease', 'reacquired_retry')), 0),
                 9223372036854775807)::bigint AS retries,
           least(coalesce(sum(c.n) FILTER (WHERE c.outcome = 'conflict'), 0), 9223372036854775807)::bigint AS conflicts
      FROM cnt_scan c GROUP BY 1, 2
),
lat_scan AS (
    -- the window's folded minutes, as the latency tile reads them: [folded_to - $1 min, folded_to)
    SELECT l.tenant, l.operation, l.slots, l.counts FROM )"
        + q("idem_latency") + R"( l CROSS JOIN w
     WHERE l.bucket >= w.folded_to - make_interval(mins => $1::int) AND l.bucket < w.folded_to AND l.kind = 'run'
       AND ($3::text IS NULL OR l.tenant = $3::text) AND ($4::text IS NULL OR l.operation = $4::text)
     LIMIT $5::bigint
),
lat_cells AS (
    SELECT CASE WHEN $2::bool THEN l.tenant ELSE '' END AS tenant, l.operation, u.s, sum(u.c)::bigint AS c
      FROM lat_scan l CROSS JOIN LATERAL unnest(l.slots, l.counts) u(s, c)
     GROUP BY 1, 2, 3
),
lat AS (
    SELECT c.tenant, c.operation, sum(c.c)::bigint AS runs,
           )"
        + q("idem_latency_quantile")
        + R"(('run', array_agg(c.s ORDER BY c.s), array_agg(c.c ORDER BY c.s), 0.95::float8)
               / 1000::float8 AS p95_ms
      FROM lat_cells c WHERE c.c > 0 GROUP BY 1, 2
),
err_scan AS (
    -- the newest unfinished rows of the window (the unfinished partial index on updated_at)
    SELECT t.idempotency_key AS k, t.error_message AS m FROM )"
        + q("task_idempotency") + R"( t CROSS JOIN w
     WHERE t.status <> 'succeeded' AND t.updated_at >= w.since
     ORDER BY t.updated_at DESC LIMIT $5::bigint
),
err AS (
    SELECT CASE WHEN $2::bool THEN split_part(e.k, ':', 1) ELSE '' END AS tenant,
           split_part(e.k, ':', 2) AS operation, left(e.m, 200) AS message, count(*)::bigint AS n
      FROM err_scan e
     WHERE e.m IS NOT NULL AND btrim(e.m) <> ''
       AND ($3::text IS NULL OR split_part(e.k, ':', 1) = $3::text)
       AND ($4::text IS NULL OR split_part(e.k, ':', 2) = $4::text)
     GROUP BY 1, 2, 3
),
keys AS (
    SELECT tenant, operation FROM proc UNION SELECT tenant, operation FROM cnt
    UNION SELECT tenant, operation FROM lat UNION SELECT tenant, operation FROM err
)
SELECT 'meta' AS kind, '' AS tenant, '' AS operation,
       ((SELECT count(*) FROM proc_scan) >= $5::bigint)::int::bigint,
       ((SELECT count(*) FROM cnt_scan) >= $5::bigint)::int::bigint,
       ((SELECT count(*) FROM lat_scan) >= $5::bigint)::int::bigint,
       ((SELECT count(*) FROM err_scan) >= $5::bigint)::int::bigint,
       NULL::float8, (extract(epoch FROM now()) * 1000::numeric)::bigint, NULL::text
UNION ALL
(SELECT 'row', k.tenant, k.operation, coalesce(p.n, 0), coalesce(c.failed, 0), coalesce(c.retries, 0),
        coalesce(c.conflicts, 0), l.p95_ms, coalesce(l.runs, 0), NULL::text
   FROM keys k
   LEFT JOIN proc p ON p.tenant = k.tenant AND p.operation = k.operation
   LEFT JOIN cnt c ON c.tenant = k.tenant AND c.operation = k.operation
   LEFT JOIN lat l ON l.tenant = k.tenant AND l.operation = k.operation
  ORDER BY coalesce(c.failed, 0) DESC, coalesce(p.n, 0) DESC, k.operation, k.tenant
  LIMIT 1000)
UNION ALL
(SELECT 'error', e.tenant, e.operation, e.n, 0, 0, 0, NULL::float8, 0, e.message
   FROM err e ORDER BY e.n DESC, e.operation, e.tenant, e.message LIMIT $6::int))";
}

Breakdown readBreakdown(pqxx::connection& conn, const SchemaName& schema, const BreakdownQuery& query)
{
    checkQuery(query); // before any I/O
    const auto sql = breakdownSql(schema);
    const auto run = [&](pqxx::transaction_base& tx) {
        return tx.exec_params(sql, query.windowMinutes, query.byTenant, nullIfEmpty(query.tenant),
            nullIfEmpty(query.operation), query.cap, query.topErrors);
    };
    pqxx::result r;
    if (query.noSessionState) {
        pqxx::read_transaction tx(conn);
        tx.exec_params(
            "SELECT pg_catalog.set_config('statement_timeout', $1, true)", std::to_string(query.statementTimeoutMs));
        r = run(tx);
        tx.commit();
    } else {
        pqxx::nontransaction tx(conn);
        r = run(tx);
    }
    Breakdown out;
    for (const auto& row : r) {
        const auto kind = row[0].as<std::string>();
        if (kind == "meta") {
            out.processingCapped = row[3].as<std::int64_t>() != 0;
            out.countersCapped = row[4].as<std::int64_t>() != 0;
            out.latencyCapped = row[5].as<std::int64_t>() != 0;
            out.errorsCapped = row[6].as<std::int64_t>() != 0;
            out.serverNowMs = row[8].as<std::int64_t>();
        } else if (kind == "row") {
            BreakdownRow b;
            b.tenant = row[1].as<std::string>();
            b.operation = row[2].as<std::string>();
            b.processing = row[3].as<std::int64_t>();
            b.failed = row[4].as<std::int64_t>();
            b.retries = row[5].as<std::int64_t>();
            b.conflicts = row[6].as<std::int64_t>();
            if (!row[7].is_null())
                b.p95Ms = row[7].as<double>();
            b.latencyRuns = row[8].as<std::int64_t>();
            out.rows.push_back(std::move(b));
        } else {
            BreakdownError e;
            e.tenant = row[1].as<std::string>();
            e.operation = row[2].as<std::string>();
            e.rows = row[3].as<std::int64_t>();
            e.message = row[9].as<std::string>();
            out.errors.push_back(std::move(e));
        }
    }
    return out;
}

} // namespace idem
