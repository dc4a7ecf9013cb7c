// The statements' text: the reading (statsSql() and its unfiltered form) and the exact refresh's
// calls. Row-to-figures is statsrow.cpp, the refresh protocol statsrefresh.cpp.
#include "operations/stats.h"
#include "operations/statsinternal.h"

namespace idem {

namespace {
    // The exact row figures' columns, from idem_exact_stats() (e) or idem_stats_exact (x),
    // with the ages taken at this statement's now().
    constexpr const char* utc = R"( AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))";
} // namespace

std::string totalRowsEstimateColumns()
{
    // The planner's estimate (never a count). Before the first ANALYZE, on a primary, the
    // statistics collector's live rows (a standby's collector has none: NULL).
    return "CASE WHEN rel.reltuples >= 0::real THEN rel.reltuples::bigint"
           " WHEN NOT pg_is_in_recovery() THEN pg_stat_get_live_tuples(rel.oid) END AS total_rows_estimate,"
           " rel.reltuples < 0::real AS total_rows_unanalysed";
}

// The row figures come from idem_live_stats() (bounded, shared; see 0008_stats_at_scale.sql) or,
// for exactRows, idem_exact_stats(); both are defined there, once. The counter part sums
// idem_counters_total (over every tenant and operation, at most $3 x 15 rows) when nothing is
// filtered, and the detailed idem_counters otherwise: $1 and $2 are bound when the statement is
// planned, so the branch that does not apply folds away to a one-time filter. The shared exact
// figures ride along (idem_stats_exact, one row), unfiltered only.
std::string statsSql(const SchemaName& schema, bool exactRows)
{
    const auto q = [&schema](const char* name) { return schema.qualify(name); };
    const std::string live = exactRows ? R"(
    SELECT e.processing, false AS processing_capped, e.expired_leases, false AS expired_leases_capped,
           e.oldest_processing_created_at, false AS oldest_processing_capped, e.retryable_failed,
           false AS retryable_failed_capped, e.uncertain, false AS uncertain_capped, e.failed_permanent,
           false AS failed_permanent_capped, e.failed_exhausted, false AS failed_exhausted_capped, e.long_unfinished,
           false AS long_unfinished_capped, )" + q("idem_data_time") + R"(() AS taken_at, false AS shared,
           0::float8 AS cost_ms
      FROM )" + q("idem_exact_stats")
            + "($1::text, $2::text, $4::int) e"
                                       : "    SELECT * FROM " + q("idem_live_stats") + "($1::text, $2::text, $4::int)";
    return R"(
WITH live AS (
)" + live + R"(
    LIMIT 1 -- each CTE is one row: so the planner knows, or the product of its guesses
            -- (1000 rows a function, ~100 a table) passes jit_above_cost and JIT costs a second
),
counts AS (
    SELECT c.outcome, c.n FROM )"
        + q("idem_counters_total") + R"( c
     WHERE $1::text IS NULL AND $2::text IS NULL AND c.minutes = 1
       AND c.bucket >= date_trunc('minute', now()) - make_interval(mins => $3::int - 1) AND c.bucket <= now()
    UNION ALL
    SELECT c.outcome, c.n FROM )"
        + q("idem_counters") + R"( c
     WHERE NOT ($1::text IS NULL AND $2::text IS NULL)
       AND c.bucket >= date_trunc('minute', now()) - make_interval(mins => $3::int - 1) AND c.bucket <= now()
       AND ($1::text IS NULL OR c.tenant = $1::text)
       AND ($2::text IS NULL OR c.operation = $2::text)
),
counted AS (
    -- The window: the last $3 minute buckets, the current (partial) one included, none after
    -- now. Sums saturate at bigint's top rather than fail (22003): no flush can black out a tick.
    SELECT least(coalesce(sum(c.n) FILTER (WHERE c.outcome = 'acquired'), 0), 9223372036854775807)::bigint AS acquired,
           least(coalesce(sum(c.n) FILTER (WHERE c.outcome IN ('replayed', 'in_progress', 'conflict')), 0), 9223372036854775807)::bigint
               AS duplicates,
           -- retries: claims that took a row over again (expired lease or elapsed backoff)
           least(coalesce(sum(c.n) FILTER (WHERE c.outcome IN ('reacquired_lease', 'reacquired_retry')), 0), 9223372036854775807)::bigint
               AS retries,
           -- failed retries: failures of attempt 2 or later, whatever their class (retryable,
           -- unknown, permanent); the worker counts retry_failed beside the failure's own
           -- outcome (schema v10; minutes before it have none). A first attempt's failure is
           -- not a failed retry.
           least(coalesce(sum(c.n) FILTER (WHERE c.outcome = 'retry_failed'), 0), 9223372036854775807)::bigint AS failed_retries,
           -- digest conflicts: the same key claimed with a different request digest
           least(coalesce(sum(c.n) FILTER (WHERE c.outcome = 'conflict'), 0), 9223372036854775807)::bigint AS digest_conflicts,
           -- stale-token rejections: complete/fail/heartbeat by a token that had lost the row
           least(coalesce(sum(c.n) FILTER (WHERE c.outcome = 'stale_token'), 0), 9223372036854775807)::bigint AS stale_token
    FROM counts c
),
audit_head AS (
    -- audit head: the newest audit entry by its primary key, one index probe whatever the
    -- trail's length; the whole trail, whatever the filter (there is one chain)
    SELECT a.id, a.entry_hash FROM )"
        + q("task_idempotency_audit") + R"( a ORDER BY a.id DESC LIMIT 1
),
ex AS (
    SELECT x.* FROM )"
        + q("idem_stats_exact") + R"( x WHERE $1::text IS NULL AND $2::text IS NULL AND x.taken_at > '-infinity'
     LIMIT 1
),
refused AS (
    -- counter flushes refused as implausible (schema v13; at most 1000 rows kept)
    SELECT count(*) FILTER (WHERE r.at > now() - interval '24 hours') AS n24, count(*) AS kept, max(r.id) AS last_id
      FROM )" + q("idem_counters_refused") + R"( r
),
holder AS (
    -- who holds the shared exact refresh (its row's lock: the row's xmax is a transaction that
    -- pg_locks shows alive), asked only when it is a minute past due on a primary; as
    -- idem_exact_refresh_holder() (0013), with this reader's own view of pg_stat_activity
    SELECT h.* FROM )" + q("idem_stats_exact") + R"( d
     CROSS JOIN LATERAL (
        SELECT l.pid, coalesce(a.usename::text, '') AS db_role, coalesce(a.application_name, '') AS application,
               coalesce(a.xact_start, a.backend_start) AS since
          FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
           AND l.transactionid = d.xmax AND l.pid <> pg_backend_pid()
           -- a one-time filter: pg_locks is not read on a tick that does not need it
           AND d.taken_at + d.period_s * interval '1 second' < now() - interval '60 seconds'
         LIMIT 1) h
     WHERE $1::text IS NULL AND $2::text IS NULL AND NOT pg_is_in_recovery()
     LIMIT 1
),
rel AS (
    -- the task table's statistics, for the total rows
    SELECT pc.oid, pc.reltuples FROM pg_class pc WHERE pc.oid = to_regclass(')"
        + q("task_idempotency") + R"(')
)
SELECT live.processing, live.processing_capped, live.expired_leases, live.expired_leases_capped,
       -- on a standby as of the row figures' time, its replay point (idem_live_stats)
       extract(epoch FROM CASE WHEN pg_is_in_recovery() THEN live.taken_at ELSE now() END
                          - live.oldest_processing_created_at)::float8 AS oldest_processing_age_s,
       live.oldest_processing_capped, live.retryable_failed, live.retryable_failed_capped,
       live.uncertain, live.uncertain_capped, live.failed_permanent, live.failed_permanent_capped,
       live.failed_exhausted, live.failed_exhausted_capped, live.long_unfinished, live.long_unfinished_capped,
       to_char(live.taken_at)" + utc + R"( AS live_taken_at, live.shared AS live_shared, live.cost_ms AS live_cost_ms,
       (SELECT l.computations FROM )"
        + q("idem_stats_live") + R"( l) AS live_computations,
       -- duplicate ratio: claims answered from an existing key (replay, in progress, conflict)
       -- over all first claims of a key plus those; NULL when nothing was claimed
       CASE WHEN counted.acquired::numeric + counted.duplicates > 0
            THEN counted.duplicates::float8 / (counted.acquired::float8 + counted.duplicates::float8) END AS duplicate_ratio,
       least(counted.acquired::numeric + counted.duplicates, 9223372036854775807)::bigint AS claims,
       counted.retries, counted.failed_retries, counted.digest_conflicts, counted.stale_token,
       -- total rows: see totalRowsEstimateColumns()
       )" + totalRowsEstimateColumns() + R"(,
       to_char(now())" + utc + R"( AS as_of, $4::int AS long_unfinished_after_minutes,
       pg_is_in_recovery() AS in_recovery,
       -- replication lag (NULL on a primary): 0 on a standby that streams and has replayed all it
       -- received (an idle primary writes nothing, so the age of the last replayed transaction
       -- grows without any lag); otherwise that age, never negative (clocks differ). The row
       -- figures' lease expiry is judged at now() minus this lag (idem_live_stats: keep the two alike)
       CASE WHEN pg_is_in_recovery() THEN
            CASE WHEN pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn() AND EXISTS (SELECT FROM pg_stat_wal_receiver)
                 THEN 0::float8
                 ELSE greatest(0, extract(epoch FROM now() - pg_last_xact_replay_timestamp()))::float8 END
       END AS replication_lag_s,
       coalesce(audit_head.id, 0) AS audit_head_id, audit_head.entry_hash AS audit_head_hash,
       ex.one IS NOT NULL AS ex_present, to_char(ex.taken_at)" + utc + R"( AS ex_taken_at,
       extract(epoch FROM now() - ex.taken_at)::float8 AS ex_age_s, ex.cost_ms AS ex_cost_ms,
       ex.period_s AS ex_period_s, ex.refreshes AS ex_refreshes, ex.taken_by AS ex_taken_by,
       ex.long_unfinished_after_minutes AS ex_long_after, ex.processing AS ex_processing,
       ex.expired_leases AS ex_expired_leases,
       extract(epoch FROM now() - ex.oldest_processing_created_at)::float8 AS ex_oldest_processing_age_s,
       ex.retryable_failed AS ex_retryable_failed, ex.uncertain AS ex_uncertain,
       ex.failed_permanent AS ex_failed_permanent, ex.failed_exhausted AS ex_failed_exhausted,
       ex.long_unfinished AS ex_long_unfinished, ex.attempts_histogram::text AS ex_attempts,
       -- due: unfiltered, on a primary, past its period and no attempt under way (as
       -- idem_exact_refresh_begin() decides; it decides again under its lock)
       ($1::text IS NULL AND $2::text IS NULL AND NOT pg_is_in_recovery()
        AND EXISTS (SELECT FROM )"
        + q("idem_stats_exact") + R"( d
                     WHERE d.taken_at + d.period_s * interval '1 second' < now()
                       -- an attempt's lease is at least this long (v24: longer after a
                       -- takeover, which begin() judges; columns of every version are read here)
                       AND (d.attempt_token IS NULL
                            OR d.attempt_at < now() - greatest(10, 4 * d.cost_ms / 1000) * interval '1 second'))) AS exact_due,
       holder.pid AS holder_pid, holder.db_role AS holder_role, holder.application AS holder_application,
       to_char(holder.since)" + utc + R"( AS holder_since,
       refused.n24 AS refused_24h, refused.kept AS refused_kept, to_char(rl.at)" + utc + R"( AS refused_last_at,
       rl.db_role AS refused_last_role, rl.application AS refused_last_application,
       host(rl.client_addr) AS refused_last_addr, rl.reason AS refused_last_reason
FROM live, counted LEFT JOIN audit_head ON true LEFT JOIN ex ON true LEFT JOIN rel ON true
     LEFT JOIN holder ON true CROSS JOIN refused
     LEFT JOIN )" + q("idem_counters_refused") + R"( rl ON rl.id = refused.last_id
)";
}

std::string withoutFilterParameters(std::string sql, int params)
{
    const auto replaceAll = [&sql](const std::string& from, const std::string& to) {
        for (auto at = sql.find(from); at != std::string::npos; at = sql.find(from, at + to.size()))
            sql.replace(at, from.size(), to);
    };
    replaceAll("$1::text", "NULL::text");
    replaceAll("$2::text", "NULL::text");
    for (int i = 3; i <= params; ++i)
        replaceAll("$" + std::to_string(i) + "::", "$" + std::to_string(i - 2) + "::");
    return sql;
}

std::string ownExactSql(const SchemaName& schema)
{
    // As of the data's time (a lagging standby's replay point), at which the figures were judged.
    return std::string("SELECT e.*, to_char(d.at") + utc + " AS taken_at,"
        + " extract(epoch FROM d.at - e.oldest_processing_created_at)::float8 AS oldest_age_s,"
          " e.attempts_histogram::text AS attempts_text FROM (SELECT "
        + schema.qualify("idem_data_time") + "() AS at) d, " + schema.qualify("idem_exact_stats")
        + "($1::text, $2::text, $3::int) e";
}

std::string exactRefreshBeginSql(const SchemaName& schema)
{
    return "SELECT " + schema.qualify("idem_exact_refresh_begin") + "()::text";
}

std::string exactRefreshFinishSql(const SchemaName& schema)
{
    return "SELECT " + schema.qualify("idem_exact_refresh_finish") + "($1::uuid, $2::int)";
}

} // namespace idem
