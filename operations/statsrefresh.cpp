// The shared refresh protocol: how a reader reads (bounded, in its own transaction, prepared
// where it may), when the shared exact refresh is due and who runs it, and when a reader counts
// for itself. The statements are statssql.cpp, row-to-figures statsrow.cpp.
#include "operations/stats.h"
#include "operations/statsinternal.h"

#include <algorithm>
#include <chrono>

#include <pqxx/pqxx>

#include "core/sha256.h"

namespace idem {

namespace {
    const char* orNull(const std::optional<std::string>& v)
    {
        return v ? v->c_str() : static_cast<const char*>(nullptr);
    }
} // namespace

double exactRefreshPeriodSeconds(double costMs)
{
    // As idem_exact_refresh_finish() (0008): 50x the cost, 20 s to 15 min.
    return std::clamp(costMs / 1000.0 * 50.0, 20.0, 900.0);
}

void boundRead(pqxx::transaction_base& tx, int statementTimeoutMs)
{
    // search_path pg_catalog (for this transaction): what these reads and the SQL functions
    // inlined into them call resolves there and in the schema they name, never in a schema on the
    // caller's path that another role may write (public before PostgreSQL 15).
    tx.exec_params("SELECT pg_catalog.set_config('statement_timeout', $1, true),"
                   " pg_catalog.set_config('max_parallel_workers_per_gather', '0', true),"
                   " pg_catalog.set_config('search_path', 'pg_catalog', true),"
                   // a reading is a few index probes: compiling it would cost more than running it
                   " pg_catalog.set_config('jit', 'off', true)",
        std::to_string(statementTimeoutMs));
}

StatsReading readStats(
    pqxx::connection& conn, const SchemaName& schema, const StatsOptions& options, const ReadStatsOptions& how)
{
    const auto once = [&] {
        // READ COMMITTED and read-write: idem_live_stats() stores the shared figures when this
        // reader is the one to count them.
        pqxx::work tx(conn);
        boundRead(tx, options.statementTimeoutMs);
        StatsReading s = how.prepared && !how.exactRows ? readStatsPrepared(tx, schema, options)
                                                         : readStats(tx, schema, options, how.exactRows);
        tx.commit();
        return s;
    };
    StatsReading s = once();
    if (how.refreshShared && s.exactDue
        && refreshSharedExact(conn, schema, options.longUnfinishedAfterMinutes, how.refreshTimeoutMs))
        s = once();
    return s;
}

StatsReading readStats(
    pqxx::transaction_base& tx, const SchemaName& schema, const StatsOptions& options, bool exactRows)
{
    const pqxx::result r = tx.exec_params(statsSql(schema, exactRows), orNull(options.tenant),
        orNull(options.operation), options.windowMinutes, options.longUnfinishedAfterMinutes);
    return statsFromRow(r.at(0));
}

StatsReading readStatsPrepared(pqxx::transaction_base& tx, const SchemaName& schema, const StatsOptions& options)
{
    if (options.tenant || options.operation)
        return readStats(tx, schema, options);
    const std::string sql = withoutFilterParameters(statsSql(schema), 4);
    const std::string name = "idem_stats_" + sha256Hex(sql).substr(0, 16);
    tx.conn().prepare(name, sql); // once per connection: again with the same text is nothing
    return statsFromRow(
        tx.exec_prepared(name, options.windowMinutes, options.longUnfinishedAfterMinutes).at(0));
}

bool refreshSharedExact(pqxx::connection& conn, const SchemaName& schema, int longUnfinishedAfterMinutes, int timeoutMs)
{
    std::string token;
    {
        // The attempt is marked in a transaction of its own, committed before the count
        // starts: a count that dies still took its turn.
        pqxx::work tx(conn);
        boundRead(tx, 5000);
        const auto r = tx.exec(exactRefreshBeginSql(schema));
        tx.commit();
        if (r.at(0)[0].is_null())
            return false;
        token = r.at(0)[0].as<std::string>();
    }
    pqxx::work tx(conn);
    boundRead(tx, timeoutMs);
    const auto r = tx.exec_params(exactRefreshFinishSql(schema), token, longUnfinishedAfterMinutes);
    tx.commit();
    return r.at(0)[0].as<bool>();
}

bool needsOwnExact(const StatsReading& s, bool filtered)
{
    return filtered || s.exactHolder
        || (s.inRecovery && (!s.exact || s.exact->ageSeconds > std::max(60.0, 2 * s.exact->periodSeconds)));
}

ExactFigures readOwnExact(pqxx::connection& conn, const SchemaName& schema, const StatsOptions& options, int timeoutMs)
{
    pqxx::read_transaction tx(conn);
    boundRead(tx, timeoutMs);
    const auto started = std::chrono::steady_clock::now();
    const auto r = tx.exec_params(ownExactSql(schema), orNull(options.tenant), orNull(options.operation),
        options.longUnfinishedAfterMinutes);
    tx.commit();
    ExactFigures e = ownExactFromRow(r.at(0));
    e.costMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    e.periodSeconds = exactRefreshPeriodSeconds(e.costMs);
    e.longUnfinishedAfterMinutes = options.longUnfinishedAfterMinutes;
    return e;
}

} // namespace idem
