#include "operations/storagehistory.h"

#include <algorithm>
#include <stdexcept>

namespace idem {

RowsHistory readRowsHistory(pqxx::transaction_base& tx, const SchemaName& schema, int days)
{
    if (days < 1 || days > 3650)
        throw std::invalid_argument("the rows history must cover 1 to 3650 days");
    // Bucket by bucket (an hour, or ten minutes in the last two days, where the counters still
    // have their minutes): what the claims created and the purges removed in it. A purge that is
    // still running (or was abandoned) counts what its committed batches removed, at its last batch.
    const std::string bucketOf = "CASE WHEN %1 >= now() - interval '2 days'"
                                 " THEN date_bin('10 minutes', %1, timestamptz '2000-01-01 00:00:00+00')"
                                 " ELSE date_trunc('hour', %1) END";
    const auto bucket = [&](const std::string& column) {
        std::string out = bucketOf;
        for (std::size_t at; (at = out.find("%1")) != std::string::npos;)
            out.replace(at, 2, column);
        return out;
    };
    const std::string purgedAt = "coalesce(p.finished_at, p.last_batch_at, p.started_at)";
    const auto r = tx.exec_params(R"(
WITH starts AS (
    SELECT h AS b, h + interval '1 hour' AS e
      FROM generate_series(date_trunc('hour', now() - make_interval(days => $1)),
                           date_trunc('hour', now() - interval '2 days'), interval '1 hour') AS h
     WHERE h + interval '1 hour' <= now() - interval '2 days'
    UNION ALL
    SELECT m, m + interval '10 minutes'
      FROM generate_series()" + bucket("greatest(now() - interval '2 days', now() - make_interval(days => $1))")
        + R"(, now(), interval '10 minutes') AS m
), created AS (
    SELECT )" + bucket("c.bucket") + R"( AS b, sum(c.n)::bigint AS n
      FROM )" + schema.qualify("idem_counters_total") + R"( c
     WHERE c.outcome = 'acquired' AND c.bucket >= date_trunc('hour', now() - make_interval(days => $1))
     GROUP BY 1
), purged AS (
    SELECT )" + bucket(purgedAt) + R"( AS b, sum(p.rows_removed)::bigint AS n
      FROM )" + schema.qualify("idem_purge_runs") + R"( p
     WHERE )" + purgedAt + R"( >= date_trunc('hour', now() - make_interval(days => $1))
     GROUP BY 1
)
SELECT to_char(least(starts.e, now()) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       coalesce(created.n, 0), coalesce(purged.n, 0),
       (SELECT coalesce(nullif(greatest(c.reltuples, -1), -1)::bigint, s.n_live_tup)
          FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
         WHERE c.oid = $2::regclass),
       to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
  FROM starts LEFT JOIN created USING (b) LEFT JOIN purged USING (b)
 ORDER BY starts.b)",
        days, schema.qualify("task_idempotency"));
    RowsHistory out;
    if (r.empty())
        return out;
    out.asOf = r[0][4].as<std::string>();
    out.rowsNow = r[0][3].is_null() ? 0 : r[0][3].as<std::int64_t>();
    out.points.resize(r.size());
    // Backwards from now: before an hour's creations and after its purges.
    std::int64_t rows = out.rowsNow;
    for (std::size_t i = r.size(); i-- > 0;) {
        auto& p = out.points[i];
        p.at = r[static_cast<int>(i)][0].as<std::string>();
        p.created = r[static_cast<int>(i)][1].as<std::int64_t>();
        p.purged = r[static_cast<int>(i)][2].as<std::int64_t>();
        p.rows = std::max<std::int64_t>(0, rows);
        rows = rows - p.created + p.purged;
    }
    const auto first = std::find_if(
        out.points.begin(), out.points.end(), [](const RowsHistoryPoint& p) { return p.created || p.purged; });
    // One point before the first activity, where the line starts.
    out.points.erase(out.points.begin(), first == out.points.begin() || first == out.points.end() ? first : first - 1);
    return out;
}

} // namespace idem
