#include "core/stats.h"

#include <pqxx/pqxx>

namespace idem {

namespace {
    const char* orNull(const std::optional<std::string>& v)
    {
        return v ? v->c_str() : static_cast<const char*>(nullptr);
    }

    std::optional<std::int64_t> optionalInt(const pqxx::field& f)
    {
        return f.is_null() ? std::nullopt : std::optional<std::int64_t>(f.as<std::int64_t>());
    }

    std::optional<double> optionalDouble(const pqxx::field& f)
    {
        return f.is_null() ? std::nullopt : std::optional<double>(f.as<double>());
    }
} // namespace

// Every figure is defined here, once, in two equal forms; the parameters pick one and the other
// is never executed (each branch carries its condition as WHERE and HAVING: with the parameters
// bound the planner turns them into a one-time filter, and the HAVING drops the branch's row).
//
// Unfiltered (the headline view, $1 and $2 NULL): the status counts come from
// task_idempotency_gauges (schema v6), kept by triggers in the same transaction as every row
// change, so they are exact in this snapshot; the figures that move with time count their small
// side through an index: live leases (bounded by the running workers; expired = processing -
// live), rows created within the long-unfinished threshold (long-unfinished = unfinished -
// those), the first processing row by created_at. Nothing here grows with the rows that piled up.
//
// Filtered by tenant or operation: the gauges are not per tenant, so the row part reads every
// unfinished row (task_idempotency_unfinished_idx, which includes every column read here since
// v4: an index-only scan; split_part() on the included key). Its cost follows the unfinished
// set and not the table.
//
// The counter part reads idem_counters by its bucket-leading primary key. Tenant and operation
// are the first two fields of the key (tenant:operation:business_id) on rows, and columns on
// counters.
std::string statsSql(const SchemaName& schema)
{
    const auto tasks = schema.qualify("task_idempotency");
    const auto gauges = schema.qualify("task_idempotency_gauges");
    const auto counters = schema.qualify("idem_counters");
    return R"(
WITH live AS (
    SELECT
        -- processing: a lease that has not run out, i.e. a worker presumably still on it
        lv.n AS processing,
        -- expired leases: processing rows whose lease ran out (or was released); the next claim
        -- takes them over
        g.processing - lv.n AS expired_leases,
        -- oldest processing age: seconds since the oldest processing row was first seen
        -- (created_at; updated_at moves with every heartbeat)
        extract(epoch FROM now() - op.oldest)::float8 AS oldest_processing_age_s,
        -- retryable: failed with a retryable or unknown outcome, waiting for its backoff or a claim
        g.retryable_failed,
        -- uncertain outcomes: retryable rows whose last attempt's effect is unknown
        g.uncertain,
        -- failed, permanent: the task itself said it cannot succeed
        g.failed_permanent,
        -- failed, exhausted: out of attempts or too old (any other class, NULL included)
        g.failed_other AS failed_exhausted,
        -- long-unfinished: not succeeded (any other status) and first seen more than $4 minutes ago
        g.processing + g.retryable_failed + g.failed_permanent + g.failed_other - rc.n AS long_unfinished
    FROM (SELECT coalesce(sum(x.processing), 0)::bigint AS processing,
                 coalesce(sum(x.retryable_failed), 0)::bigint AS retryable_failed,
                 coalesce(sum(x.uncertain), 0)::bigint AS uncertain,
                 coalesce(sum(x.failed_permanent), 0)::bigint AS failed_permanent,
                 coalesce(sum(x.failed_other), 0)::bigint AS failed_other
            FROM )"
        + gauges + R"( x) g,
         (SELECT count(*) AS n FROM )"
        + tasks + R"( t WHERE t.status = 'processing' AND t.lease_until > now()) lv,
         (SELECT min(t.created_at) AS oldest FROM )"
        + tasks + R"( t WHERE t.status = 'processing') op,
         (SELECT count(*) AS n FROM )"
        + tasks + R"( t
           WHERE t.status IN ('processing', 'retryable_failed', 'failed')
             AND t.created_at >= now() - $4::int * interval '1 minute') rc
    WHERE $1::text IS NULL AND $2::text IS NULL
    UNION ALL
    SELECT
        count(*) FILTER (WHERE t.status = 'processing' AND t.lease_until > now()),
        count(*) FILTER (WHERE t.status = 'processing' AND (t.lease_until IS NULL OR t.lease_until <= now())),
        extract(epoch FROM now() - min(t.created_at) FILTER (WHERE t.status = 'processing'))::float8,
        count(*) FILTER (WHERE t.status = 'retryable_failed'),
        count(*) FILTER (WHERE t.status = 'retryable_failed' AND t.error_class = 'unknown'),
        count(*) FILTER (WHERE t.status = 'failed' AND t.error_class = 'permanent'),
        count(*) FILTER (WHERE t.status = 'failed' AND t.error_class IS DISTINCT FROM 'permanent'),
        count(*) FILTER (WHERE t.created_at < now() - $4::int * interval '1 minute')
    FROM )"
        + tasks + R"( t
    WHERE t.status <> 'succeeded'
      AND ($1::text IS NOT NULL OR $2::text IS NOT NULL)
      AND ($1::text IS NULL OR split_part(t.idempotency_key, ':', 1) = $1::text)
      AND ($2::text IS NULL OR split_part(t.idempotency_key, ':', 2) = $2::text)
    HAVING $1::text IS NOT NULL OR $2::text IS NOT NULL
),
counted AS (
    -- The window: the last $3 minute buckets, the current (partial) one included.
    SELECT coalesce(sum(c.n) FILTER (WHERE c.outcome = 'acquired'), 0)::bigint AS acquired,
           coalesce(sum(c.n) FILTER (WHERE c.outcome IN ('replayed', 'in_progress', 'conflict')), 0)::bigint
               AS duplicates,
           -- retries: claims that took a row over again (expired lease or elapsed backoff)
           coalesce(sum(c.n) FILTER (WHERE c.outcome IN ('reacquired_lease', 'reacquired_retry')), 0)::bigint
               AS retries,
           -- failed retries: attempts that ended without success and left the task to retry or
           -- gave it up (retryable, unknown, exhausted). The counters do not record the attempt
           -- number, so a first attempt's failure counts here too; a permanent failure does not.
           coalesce(sum(c.n) FILTER (WHERE c.outcome IN ('failed_retryable', 'failed_unknown', 'exhausted')), 0)::bigint
               AS failed_retries,
           -- digest conflicts: the same key claimed with a different request digest
           coalesce(sum(c.n) FILTER (WHERE c.outcome = 'conflict'), 0)::bigint AS digest_conflicts,
           -- stale-token rejections: complete/fail/heartbeat by a token that had lost the row
           coalesce(sum(c.n) FILTER (WHERE c.outcome = 'stale_token'), 0)::bigint AS stale_token
    FROM )"
        + counters + R"( c
    WHERE c.bucket >= date_trunc('minute', now()) - ($3::int - 1) * interval '1 minute'
      AND ($1::text IS NULL OR c.tenant = $1::text)
      AND ($2::text IS NULL OR c.operation = $2::text)
)
SELECT live.processing, live.expired_leases, live.oldest_processing_age_s, live.retryable_failed,
       live.uncertain, live.failed_permanent, live.failed_exhausted, live.long_unfinished,
       -- duplicate ratio: claims answered from an existing key (replay, in progress, conflict)
       -- over all first claims of a key plus those; NULL when nothing was claimed
       CASE WHEN counted.acquired + counted.duplicates > 0
            THEN counted.duplicates::float8 / (counted.acquired + counted.duplicates) END AS duplicate_ratio,
       counted.acquired + counted.duplicates AS claims,
       counted.retries, counted.failed_retries, counted.digest_conflicts, counted.stale_token,
       -- total rows: the planner's estimate (never a count); NULL before the first ANALYZE
       (SELECT CASE WHEN pc.reltuples >= 0 THEN pc.reltuples::bigint END
          FROM pg_class pc WHERE pc.oid = to_regclass(')"
        + tasks + R"(')) AS total_rows_estimate,
       to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS as_of,
       pg_is_in_recovery() AS in_recovery,
       -- replication lag: on a standby, how old the last replayed transaction is; NULL on a primary
       CASE WHEN pg_is_in_recovery()
            THEN extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 END AS replication_lag_s
FROM live, counted
)";
}

StatsSnapshot readStats(pqxx::connection& conn, const SchemaName& schema, const StatsOptions& options)
{
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(conn);
    // SET LOCAL, as a bound value: it ends with this transaction. No parallel workers: a poll that
    // fans out into three processes costs the database more CPU for a handful of milliseconds less
    // wall time, and 20 consoles multiply it (bench/README.md measured serial as cheaper and, up to
    // tens of thousands of unfinished rows, also faster on a loaded machine).
    tx.exec_params("SELECT set_config('statement_timeout', $1, true),"
                   " set_config('max_parallel_workers_per_gather', '0', true)",
        std::to_string(options.statementTimeoutMs));
    StatsSnapshot s = readStats(tx, schema, options);
    tx.commit();
    return s;
}

StatsSnapshot readStats(pqxx::transaction_base& tx, const SchemaName& schema, const StatsOptions& options)
{
    const pqxx::result r = tx.exec_params(statsSql(schema), orNull(options.tenant), orNull(options.operation),
        options.windowMinutes, options.longUnfinishedAfterMinutes);
    return statsFromRow(r.at(0));
}

std::vector<GaugeCheck> checkGauges(pqxx::connection& conn, const SchemaName& schema, int statementTimeoutMs)
{
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(conn);
    tx.exec_params("SELECT set_config('statement_timeout', $1, true)", std::to_string(statementTimeoutMs));
    // The count is the one the gauges were first filled with (0006_gauges.sql, idem_gauges_recount).
    const pqxx::row r
        = tx.exec("SELECT g.*, c.* FROM (SELECT coalesce(sum(processing), 0)::bigint,"
                  " coalesce(sum(retryable_failed), 0)::bigint, coalesce(sum(uncertain), 0)::bigint,"
                  " coalesce(sum(failed_permanent), 0)::bigint, coalesce(sum(failed_other), 0)::bigint"
                  " FROM "
                + schema.qualify("task_idempotency_gauges")
                + ") g, (SELECT count(*) FILTER (WHERE t.status = 'processing'),"
                  " count(*) FILTER (WHERE t.status = 'retryable_failed'),"
                  " count(*) FILTER (WHERE t.status = 'retryable_failed' AND t.error_class = 'unknown'),"
                  " count(*) FILTER (WHERE t.status = 'failed' AND t.error_class = 'permanent'),"
                  " count(*) FILTER (WHERE t.status = 'failed' AND t.error_class IS DISTINCT FROM 'permanent')"
                  " FROM "
                + schema.qualify("task_idempotency") + " t WHERE t.status <> 'succeeded') c")
              .at(0);
    tx.commit();
    static const char* const names[]
        = { "processing", "retryable_failed", "uncertain", "failed_permanent", "failed_other" };
    std::vector<GaugeCheck> out;
    for (int i = 0; i < 5; ++i)
        out.push_back({ names[i], r[i].as<std::int64_t>(), r[i + 5].as<std::int64_t>() });
    return out;
}

StatsSnapshot statsFromRow(const pqxx::row& row)
{
    StatsSnapshot s;
    s.processing = row["processing"].as<std::int64_t>();
    s.expiredLeases = row["expired_leases"].as<std::int64_t>();
    s.oldestProcessingAgeSeconds = optionalDouble(row["oldest_processing_age_s"]);
    s.retryableFailed = row["retryable_failed"].as<std::int64_t>();
    s.uncertain = row["uncertain"].as<std::int64_t>();
    s.failedPermanent = row["failed_permanent"].as<std::int64_t>();
    s.failedExhausted = row["failed_exhausted"].as<std::int64_t>();
    s.longUnfinished = row["long_unfinished"].as<std::int64_t>();
    s.duplicateRatio = optionalDouble(row["duplicate_ratio"]);
    s.claims = row["claims"].as<std::int64_t>();
    s.retries = row["retries"].as<std::int64_t>();
    s.failedRetries = row["failed_retries"].as<std::int64_t>();
    s.digestConflicts = row["digest_conflicts"].as<std::int64_t>();
    s.staleTokenRejections = row["stale_token"].as<std::int64_t>();
    s.totalRowsEstimate = optionalInt(row["total_rows_estimate"]);
    s.asOf = row["as_of"].as<std::string>();
    s.inRecovery = row["in_recovery"].as<bool>();
    s.replicationLagSeconds = optionalDouble(row["replication_lag_s"]);
    return s;
}

} // namespace idem
