#include "operations/node.h"

#include <pqxx/pqxx>

namespace idem {

NodeIdentity readNodeIdentity(pqxx::transaction_base& tx)
{
    // The control functions may have had EXECUTE revoked from PUBLIC: the server checks that when
    // it prepares a statement, whatever a CASE around the call would decide, so each is called in
    // a statement of its own, only when allowed. CASE keeps pg_current_wal_lsn() (an error in
    // recovery) to a primary.
    const auto row
        = tx.exec("SELECT host(inet_server_addr()), inet_server_port(), pg_is_in_recovery(),"
                  "       has_function_privilege('pg_catalog.pg_control_system()', 'EXECUTE'),"
                  "       has_function_privilege('pg_catalog.pg_control_checkpoint()', 'EXECUTE'),"
                  "       CASE WHEN NOT pg_is_in_recovery()"
                  "            THEN ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer END,"
                  "       (extract(epoch FROM pg_postmaster_start_time()) OPERATOR(pg_catalog.*) 1000000::numeric)::bigint")[0];
    NodeIdentity n;
    if (!row[0].is_null())
        n.serverAddress = row[0].as<std::string>() + ":" + row[1].as<std::string>();
    n.inRecovery = row[2].as<bool>();
    n.systemAllowed = row[3].as<bool>();
    n.checkpointAllowed = row[4].as<bool>();
    if (!row[5].is_null())
        n.timeline = row[5].as<int>();
    n.postmasterStartUs = row[6].as<std::int64_t>();
    if (n.systemAllowed)
        n.systemIdentifier
            = tx.exec("SELECT system_identifier::text FROM pg_catalog.pg_control_system()")[0][0].as<std::string>();
    if (n.inRecovery && n.checkpointAllowed)
        n.timeline = tx.exec("SELECT timeline_id FROM pg_catalog.pg_control_checkpoint()")[0][0].as<int>();
    if (!n.inRecovery) {
        for (const auto& r : tx.exec("SELECT application_name, sync_state, state,"
                                     "       (extract(epoch FROM replay_lag) OPERATOR(pg_catalog.*) 1000::numeric)::bigint"
                                     "  FROM pg_catalog.pg_stat_replication ORDER BY application_name")) {
            if (r[1].is_null()) {
                ++n.hiddenStandbys;
                continue;
            }
            NodeIdentity::Standby s;
            s.name = r[0].is_null() ? std::string() : r[0].as<std::string>();
            s.syncState = r[1].as<std::string>();
            s.state = r[2].is_null() ? std::string() : r[2].as<std::string>();
            s.replayLagMs = r[3].is_null() ? -1 : r[3].as<std::int64_t>();
            n.standbys.push_back(std::move(s));
        }
    }
    return n;
}

AtRiskReading readAtRisk(pqxx::transaction_base& tx, const SchemaName& schema, int cap)
{
    AtRiskReading out;
    out.cap = cap;
    // The function's existence and EXECUTE first, in a statement that names it only as text: a
    // statement calling a function that is not there fails as a whole (and aborts the transaction).
    const std::string signature = schema.qualify("idem_successes_since(timestamptz, integer)");
    const auto head = tx.exec_params("SELECT pg_is_in_recovery(), to_regprocedure($1) IS NOT NULL,"
                                     "       coalesce(has_function_privilege(to_regprocedure($1), 'EXECUTE'), false),"
                                     "       current_setting('synchronous_standby_names'),"
                                     "       current_setting('synchronous_commit')",
        signature)[0];
    out.inRecovery = head[0].as<bool>();
    out.functionMissing = !head[1].as<bool>();
    out.functionAllowed = head[2].as<bool>();
    out.synchronousNames = head[3].as<std::string>();
    const std::string commit = head[4].as<std::string>();
    out.synchronous
        = !out.synchronousNames.empty() && (commit == "on" || commit == "remote_write" || commit == "remote_apply");
    if (out.inRecovery)
        return out;
    // A standby counts only when it lags and does not hold every acknowledged commit anyway; the
    // window ends now(), by the server's clock, as the successes' times do.
    const bool count = !out.functionMissing && out.functionAllowed && !out.synchronous;
    const std::string successes = count
        ? "CASE WHEN r.flush_lag > interval '0' AND r.sync_state IN ('async', 'potential')"
          "     THEN "
            + schema.qualify("idem_successes_since") + "(now() - r.flush_lag, $1) END"
        : std::string("NULL::bigint");
    const auto rows = tx.exec_params("SELECT r.application_name, r.sync_state,"
                                     "       (extract(epoch FROM r.flush_lag) * 1000000)::bigint, "
            + successes
            + "  FROM pg_catalog.pg_stat_replication r WHERE $1::integer IS NOT NULL ORDER BY r.application_name",
        cap);
    for (const auto& r : rows) {
        if (r[1].is_null()) {
            ++out.hiddenStandbys;
            continue;
        }
        AtRiskReading::Standby s;
        s.name = r[0].is_null() ? std::string() : r[0].as<std::string>();
        s.syncState = r[1].as<std::string>();
        s.flushLagUs = r[2].is_null() ? -1 : r[2].as<std::int64_t>();
        s.successes = r[3].is_null() ? -1 : r[3].as<std::int64_t>();
        out.standbys.push_back(std::move(s));
    }
    return out;
}

} // namespace idem
