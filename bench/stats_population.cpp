// The scratch table of idem-bench-stats: generated in batches by INSERT ... SELECT over
// generate_series with the table's indexes dropped and rebuilt afterwards (a 10M-row table
// in minutes, not an hour of random B-tree inserts), then VACUUM ANALYZE.
#include "bench/stats_bench.h"

#include <chrono>
#include <fstream>
#include <numeric>
#include <sstream>
#include <unistd.h>

#include <pqxx/pqxx>

#include "schema/migrate.h"

namespace idem::bench::stats {

namespace {

    using Clock = std::chrono::steady_clock;

    // Bumped whenever the generator below changes, so an old scratch table is regenerated.
    constexpr int generatorVersion = 1;

    // A multiplier coprime with rows near rows times the golden ratio: then the rows with
    // (i * m) mod rows < u are spread evenly (three-gap theorem), not in clumps.
    long long scatterMultiplier(long long rows)
    {
        auto m = static_cast<long long>(static_cast<double>(rows) * 0.6180339887498949);
        if (m < 1)
            m = 1;
        while (std::gcd(m, rows) != 1)
            ++m;
        return m;
    }

    // p, the row's rank for "unfinished first", from its number i (a bigint expression), with
    // the parameters holding the table's row count, the multiplier and "Recent layout".
    std::string rankSql(const std::string& i, const char* rows, const char* multiplier, const char* recent)
    {
        return std::string("(CASE WHEN ") + recent + "::bool THEN " + rows + "::bigint - 1 - " + i + " ELSE (" + i
            + " * " + multiplier + "::bigint) % " + rows + "::bigint END)";
    }

    // Rows $1 <= i < $2 of a table of $3 rows with $4 unfinished. Columns as the shipped
    // schema has them; widths as a real deployment's (key ~30 bytes, v1 digest, small result).
    std::string generateSql(const SchemaName& schema)
    {
        return "INSERT INTO " + schema.qualify("task_idempotency") + R"(
    (idempotency_key, request_hash, status, result_json, error_message, owner_token, lease_until, attempts,
     updated_at, created_at, next_attempt_at, max_attempts, error_class, errors)
SELECT 'tenant-' || (i % 8) || ':' || (ARRAY['charge', 'refund', 'ship'])[i % 3 + 1] || ':order-' || i,
       'v1:' || md5(i::text) || md5(p::text),
       CASE WHEN NOT u THEN 'succeeded' WHEN c < 4 THEN 'processing' WHEN c < 8 THEN 'retryable_failed'
            ELSE 'failed' END,
       CASE WHEN NOT u THEN jsonb_build_object('charged', 100, 'currency', 'EUR', 'order', i) END,
       CASE WHEN u AND c >= 4 THEN 'upstream answered 503' END,
       CASE WHEN u AND c < 4 THEN md5(i::text)::uuid END,
       CASE WHEN u AND c < 2 THEN now() + interval '1 day'
            WHEN u AND c < 4 THEN now() - interval '5 minutes' END,
       CASE WHEN NOT u THEN 1 + (i % 10 = 0)::int WHEN c >= 10 THEN 5 ELSE 1 + (p / 12) % 4 END,
       t + interval '2 seconds', t,
       CASE WHEN u AND c BETWEEN 4 AND 7 THEN t + interval '1 minute' END,
       5,
       ec,
       CASE WHEN u AND c >= 4 THEN jsonb_build_array(jsonb_build_object('attempt', 1, 'at', t, 'class', ec,
                                                                        'message', 'upstream answered 503'))
            ELSE '[]'::jsonb END
  FROM (SELECT i, p, u, c,
               CASE WHEN NOT u OR c < 4 THEN NULL WHEN c IN (7, 11) THEN 'unknown' WHEN c IN (8, 9) THEN 'permanent'
                    ELSE 'retryable' END AS ec,
               now() - (($3::bigint - i)::float8 / $3::bigint) * interval '7 days' AS t
          FROM (SELECT i, p, p < $4::bigint AS u, p % 12 AS c
                  FROM (SELECT i, )"
            + rankSql("i", "$3", "$5", "$6") + R"( AS p
                          FROM generate_series($1::bigint, $2::bigint - 1) AS i) AS ranked) AS kinds) AS g
)";
    }

    std::string metaTable(const SchemaName& schema) { return schema.qualify("statsbench_population"); }

    struct Meta {
        bool present = false;
        long long rows = 0, unfinished = 0, multiplier = 0;
        std::string layout;
        int version = 0;
    };

    Meta readMeta(pqxx::connection& conn, const SchemaName& schema)
    {
        Meta m;
        pqxx::read_transaction t(conn);
        if (t.exec_params("SELECT to_regclass($1) IS NOT NULL", metaTable(schema)).at(0).at(0).as<bool>() == false)
            return m;
        const auto r = t.exec("SELECT rows, unfinished, multiplier, layout, version FROM " + metaTable(schema));
        if (r.empty())
            return m;
        m.present = true;
        m.rows = r[0][0].as<long long>();
        m.unfinished = r[0][1].as<long long>();
        m.multiplier = r[0][2].as<long long>();
        m.layout = r[0][3].as<std::string>();
        m.version = r[0][4].as<int>();
        return m;
    }

    void writeMeta(pqxx::work& w, const SchemaName& schema, const Population& pop, long long multiplier)
    {
        w.exec("CREATE TABLE IF NOT EXISTS " + metaTable(schema)
            + " (rows BIGINT NOT NULL, unfinished BIGINT NOT NULL, multiplier BIGINT NOT NULL,"
              " layout TEXT NOT NULL, version INTEGER NOT NULL)");
        w.exec("DELETE FROM " + metaTable(schema));
        w.exec_params("INSERT INTO " + metaTable(schema) + " VALUES ($1, $2, $3, $4, $5)", pop.rows, pop.unfinished,
            multiplier, std::string(layoutName(pop.layout)), generatorVersion);
    }

    void vacuumAnalyze(pqxx::connection& conn, const SchemaName& schema)
    {
        pqxx::nontransaction n(conn);
        n.exec("VACUUM (ANALYZE) " + schema.qualify("task_idempotency"));
        n.exec("VACUUM (ANALYZE) " + schema.qualify("idem_counters"));
    }

    double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

    void generate(pqxx::connection& conn, const SchemaName& schema, const Population& pop, long long multiplier,
        long long batchRows, const std::function<void(const std::string&)>& progress)
    {
        {
            pqxx::work w(conn);
            w.exec("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
            w.commit();
        }
        migrate(conn, MigrateOptions { schema, false });

        // The table's indexes as the migrations made them, rebuilt from their own definitions.
        struct Index {
            std::string name, definition, constraintDefinition;
        };
        std::vector<Index> indexes;
        {
            pqxx::work w(conn);
            const auto r = w.exec_params("SELECT ci.relname, pg_get_indexdef(x.indexrelid), pg_get_constraintdef(k.oid)"
                                         "  FROM pg_index x JOIN pg_class ci ON ci.oid = x.indexrelid"
                                         "  LEFT JOIN pg_constraint k ON k.conindid = x.indexrelid"
                                         "       AND k.conrelid = x.indrelid"
                                         " WHERE x.indrelid = to_regclass($1) ORDER BY 1",
                schema.qualify("task_idempotency"));
            for (const auto& row : r)
                indexes.push_back({ row[0].as<std::string>(), row[1].as<std::string>(),
                    row[2].is_null() ? std::string() : row[2].as<std::string>() });
            for (const auto& ix : indexes) {
                if (!ix.constraintDefinition.empty())
                    w.exec("ALTER TABLE " + schema.qualify("task_idempotency") + " DROP CONSTRAINT "
                        + w.quote_name(ix.name));
                else
                    w.exec("DROP INDEX " + schema.qualify(w.quote_name(ix.name)));
            }
            w.commit();
        }

        const std::string insert = generateSql(schema);
        for (long long lo = 0; lo < pop.rows; lo += batchRows) {
            const long long hi = std::min(pop.rows, lo + batchRows);
            pqxx::work w(conn);
            w.exec("SET LOCAL synchronous_commit = off");
            w.exec_params(insert, lo, hi, pop.rows, pop.unfinished, multiplier, pop.layout == Layout::Recent);
            w.commit();
            progress("  generated " + std::to_string(hi) + " / " + std::to_string(pop.rows) + " rows");
        }

        pqxx::work w(conn);
        w.exec("SET LOCAL maintenance_work_mem = '512MB'");
        for (const auto& ix : indexes) {
            if (!ix.constraintDefinition.empty())
                w.exec("ALTER TABLE " + schema.qualify("task_idempotency") + " ADD CONSTRAINT " + w.quote_name(ix.name)
                    + ' ' + ix.constraintDefinition);
            else
                w.exec(ix.definition);
        }
        writeMeta(w, schema, pop, multiplier);
        w.commit();
        progress("  indexes rebuilt: " + std::to_string(indexes.size()));
    }

    // Completes the unfinished rows ranked at or past pop.unfinished, found through the
    // unfinished partial index; the ones that stay are not touched, so they keep their place.
    void lower(pqxx::connection& conn, const SchemaName& schema, const Population& pop, long long multiplier)
    {
        pqxx::work w(conn);
        const std::string i = "split_part(idempotency_key, ':order-', 2)::bigint";
        w.exec_params("UPDATE " + schema.qualify("task_idempotency")
                + " SET status = 'succeeded', result_json = jsonb_build_object('charged', 100, 'currency', 'EUR'),"
                  " error_message = NULL, owner_token = NULL, lease_until = NULL, next_attempt_at = NULL,"
                  " error_class = NULL, errors = '[]'::jsonb, updated_at = now()"
                  " WHERE status <> 'succeeded' AND "
                + rankSql(i, "$1", "$3", "$4") + " >= $2::bigint",
            pop.rows, pop.unfinished, multiplier, pop.layout == Layout::Recent);
        writeMeta(w, schema, pop, multiplier);
        w.commit();
    }

    std::string savedIndexTable(const SchemaName& schema) { return schema.qualify("statsbench_saved_index"); }

    // Drops task_idempotency_unfinished_idx and creates it from `definition`, in one transaction.
    void rebuildUnfinishedIndex(pqxx::work& w, const SchemaName& schema, const std::string& definition)
    {
        w.exec("SET LOCAL maintenance_work_mem = '256MB'");
        w.exec("DROP INDEX " + schema.qualify("task_idempotency_unfinished_idx"));
        w.exec(definition);
    }

} // namespace

double useV1UnfinishedIndex(pqxx::connection& conn, const SchemaName& schema)
{
    const auto t0 = Clock::now();
    pqxx::work w(conn);
    w.exec("CREATE TABLE IF NOT EXISTS " + savedIndexTable(schema) + " (definition TEXT NOT NULL)");
    if (!w.exec("SELECT 1 FROM " + savedIndexTable(schema)).empty())
        return 0; // already in place (and the migrated definition saved)
    w.exec_params("INSERT INTO " + savedIndexTable(schema) + " SELECT pg_get_indexdef(to_regclass($1))",
        schema.qualify("task_idempotency_unfinished_idx"));
    // 0001_initial.sql's definition.
    rebuildUnfinishedIndex(w, schema,
        "CREATE INDEX task_idempotency_unfinished_idx ON " + schema.qualify("task_idempotency")
            + " (updated_at) WHERE status <> 'succeeded'");
    w.commit();
    return since(t0);
}

double restoreUnfinishedIndex(pqxx::connection& conn, const SchemaName& schema)
{
    const auto t0 = Clock::now();
    pqxx::work w(conn);
    if (!w.exec_params("SELECT to_regclass($1)", savedIndexTable(schema)).at(0).at(0).is_null()) {
        const auto r = w.exec("SELECT definition FROM " + savedIndexTable(schema));
        if (!r.empty()) {
            rebuildUnfinishedIndex(w, schema, r[0][0].as<std::string>());
            w.exec("DELETE FROM " + savedIndexTable(schema));
            w.commit();
            return since(t0);
        }
    }
    return 0;
}

std::string unfinishedIndexSize(pqxx::connection& conn, const SchemaName& schema)
{
    pqxx::read_transaction t(conn);
    return t
        .exec_params("SELECT pg_size_pretty(pg_relation_size(to_regclass($1)))",
            schema.qualify("task_idempotency_unfinished_idx"))
        .at(0)
        .at(0)
        .as<std::string>();
}

const char* layoutName(Layout layout) { return layout == Layout::Recent ? "recent" : "scattered"; }

PopulateReport ensurePopulation(pqxx::connection& conn, const SchemaName& schema, const Population& pop,
    long long batchRows, const std::function<void(const std::string&)>& progress)
{
    PopulateReport report;
    const auto t0 = Clock::now();
    const long long multiplier = scatterMultiplier(pop.rows);
    const Meta meta = readMeta(conn, schema);
    const bool sameTable = meta.present && meta.version == generatorVersion && meta.rows == pop.rows
        && meta.multiplier == multiplier && meta.layout == layoutName(pop.layout);
    if (meta.present)
        restoreUnfinishedIndex(conn, schema); // an interrupted --compare-v1-index run
    if (sameTable && meta.unfinished == pop.unfinished) {
        report.reused = true;
        migrate(conn, MigrateOptions { schema, false }); // a newer bundled migration, if any
    } else if (sameTable && meta.unfinished > pop.unfinished) {
        progress("  completing unfinished rows in place: " + std::to_string(meta.unfinished) + " -> "
            + std::to_string(pop.unfinished));
        migrate(conn, MigrateOptions { schema, false });
        lower(conn, schema, pop, multiplier);
        vacuumAnalyze(conn, schema);
        report.lowered = true;
    } else {
        generate(conn, schema, pop, multiplier, batchRows, progress);
        progress("  VACUUM ANALYZE");
        vacuumAnalyze(conn, schema);
    }
    report.seconds = since(t0);

    pqxx::read_transaction t(conn);
    const auto r = t.exec_params("SELECT relpages, pg_size_pretty(pg_table_size(oid)),"
                                 " pg_size_pretty(pg_indexes_size(oid)) FROM pg_class WHERE oid = to_regclass($1)",
        schema.qualify("task_idempotency"));
    report.heapPages = r.at(0)[0].as<long long>();
    report.tableSize = r[0][1].as<std::string>();
    report.indexSize = r[0][2].as<std::string>();
    return report;
}

std::string naiveCountSql(const SchemaName& schema)
{
    return "SELECT status, count(*) FROM " + schema.qualify("task_idempotency") + " GROUP BY status";
}

std::string histogramSql(const SchemaName& schema)
{
    return "SELECT attempts, count(*) FROM " + schema.qualify("task_idempotency")
        + " WHERE status <> 'succeeded' GROUP BY attempts ORDER BY attempts";
}

} // namespace idem::bench::stats
