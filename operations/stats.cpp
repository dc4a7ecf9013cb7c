#include "operations/stats.h"

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

// Every figure is defined here, once. The row part reads only rows with status <> 'succeeded'
// (the predicate of task_idempotency_unfinished_idx, which holds every other partial index's
// rows too), so its cost follows the unfinished set and not the table. Since 0004 that index
// includes every column the row part reads, so it is an index-only scan that visits no heap page
// once the table is vacuumed: a figure that reads another column brings back one heap fetch per
// unfinished row (tst_statsindex checks). The statement is planned with its parameters bound,
// so with no tenant / operation set the `$1 IS NULL OR ...` filters fold away and split_part()
// runs only for a filtered view. (Grouping the rows first and summing the groups, or mapping the
// status to an integer once per row, measured no cheaper: bench/README.md.) The counter part
// reads idem_counters by its bucket-leading primary key. Tenant and operation are the first two
// fields of the key (tenant:operation:business_id) on rows, and columns on counters.
std::string statsSql(const SchemaName& schema)
{
    const auto tasks = schema.qualify("task_idempotency");
    const auto counters = schema.qualify("idem_counters");
    const auto audit = schema.qualify("task_idempotency_audit");
    return R"(
WITH live AS (
    SELECT
        -- processing: a lease that has not run out, i.e. a worker presumably still on it
        count(*) FILTER (WHERE t.status = 'processing' AND t.lease_until > now()) AS processing,
        -- expired leases: processing rows whose lease ran out; the next claim takes them over
        count(*) FILTER (WHERE t.status = 'processing' AND (t.lease_until IS NULL OR t.lease_until <= now()))
            AS expired_leases,
        -- oldest processing age: seconds since the oldest processing row was first seen
        -- (created_at; updated_at moves with every heartbeat)
        extract(epoch FROM now() - min(t.created_at) FILTER (WHERE t.status = 'processing'))::float8
            AS oldest_processing_age_s,
        -- retryable: failed with a retryable or unknown outcome, waiting for its backoff or a claim
        count(*) FILTER (WHERE t.status = 'retryable_failed') AS retryable_failed,
        -- uncertain outcomes: retryable rows whose last attempt's effect is unknown
        count(*) FILTER (WHERE t.status = 'retryable_failed' AND t.error_class = 'unknown') AS uncertain,
        -- failed, permanent: the task itself said it cannot succeed
        count(*) FILTER (WHERE t.status = 'failed' AND t.error_class = 'permanent') AS failed_permanent,
        -- failed, exhausted: out of attempts or too old (any other class, NULL included)
        count(*) FILTER (WHERE t.status = 'failed' AND t.error_class IS DISTINCT FROM 'permanent')
            AS failed_exhausted,
        -- long-unfinished: not succeeded (any other status) and first seen more than $4 minutes ago
        count(*) FILTER (WHERE t.created_at < now() - $4::int * interval '1 minute') AS long_unfinished
    FROM )"
        + tasks + R"( t
    WHERE t.status <> 'succeeded'
      AND ($1::text IS NULL OR split_part(t.idempotency_key, ':', 1) = $1::text)
      AND ($2::text IS NULL OR split_part(t.idempotency_key, ':', 2) = $2::text)
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
),
audit_head AS (
    -- audit head: the newest audit entry by its primary key, one index probe whatever the
    -- trail's length; the whole trail, whatever the filter (there is one chain)
    SELECT a.id, a.entry_hash FROM )"
        + audit + R"( a ORDER BY a.id DESC LIMIT 1
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
       -- replication lag (NULL on a primary): 0 on a standby that streams and has replayed all it
       -- received (an idle primary writes nothing, so the age of the last replayed transaction
       -- grows without any lag); otherwise that age, never negative (clocks differ)
       CASE WHEN pg_is_in_recovery() THEN
            CASE WHEN pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn() AND EXISTS (SELECT FROM pg_stat_wal_receiver)
                 THEN 0::float8
                 ELSE greatest(0, extract(epoch FROM now() - pg_last_xact_replay_timestamp()))::float8 END
       END AS replication_lag_s,
       coalesce(audit_head.id, 0) AS audit_head_id, audit_head.entry_hash AS audit_head_hash
FROM live, counted LEFT JOIN audit_head ON true
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
    s.auditHeadId = row["audit_head_id"].as<std::int64_t>();
    s.auditHeadHash = row["audit_head_hash"].is_null() ? std::string() : row["audit_head_hash"].as<std::string>();
    return s;
}

} // namespace idem
