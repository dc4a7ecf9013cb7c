#include "operations/node.h"

#include <pqxx/pqxx>

#include <algorithm>
#include <iterator>

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
        // replay_lag is the last one reported: a standby that stopped replying keeps its old
        // (or a NULL) value, so the time since its last reply and how far its replay is behind
        // come too (issue 40 item A: "replay lag 0.0 s" beside the successes it lacked).
        for (const auto& r : tx.exec(
                 "SELECT application_name, sync_state, state,"
                 "       (extract(epoch FROM replay_lag) OPERATOR(pg_catalog.*) 1000::numeric)::bigint,"
                 "       (extract(epoch FROM pg_catalog.now() OPERATOR(pg_catalog.-) reply_time)"
                 "            OPERATOR(pg_catalog.*) 1000::numeric)::bigint,"
                 "       pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), replay_lsn)::bigint"
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
            s.silentMs = r[4].is_null() ? -1 : r[4].as<std::int64_t>();
            s.replayBehindBytes = r[5].is_null() ? -1 : r[5].as<std::int64_t>();
            n.standbys.push_back(std::move(s));
        }
    }
    return n;
}

std::int64_t AtRiskMemory::timeAtOrBefore(std::int64_t lsn) const
{
    // Samples ascend in both: the last one not past lsn.
    const auto past = std::upper_bound(
        samples.begin(), samples.end(), lsn, [](std::int64_t l, const Sample& s) { return l < s.lsn; });
    return past == samples.begin() ? -1 : std::prev(past)->atUs;
}

bool AtRiskReading::alert() const
{
    return std::any_of(standbys.begin(), standbys.end(), [](const Standby& s) { return s.alert(); });
}

namespace {
    // Microseconds since the epoch of a timestamptz, and of an interval, as bigint; operators
    // named in pg_catalog (tst_lowroles plants shadows in public).
    std::string epochUs(const std::string& expr)
    {
        return "(extract(epoch FROM " + expr + ") OPERATOR(pg_catalog.*) 1000000::numeric)::bigint";
    }
    std::string lsnBytes(const std::string& expr)
    {
        return "pg_catalog.pg_wal_lsn_diff(" + expr + ", '0/0'::pg_lsn)::bigint";
    }
    std::int64_t orMinus(const pqxx::field& f) { return f.is_null() ? -1 : f.as<std::int64_t>(); }
    std::string orEmpty(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }
} // namespace

AtRiskReading readAtRisk(pqxx::transaction_base& tx, const SchemaName& schema, int cap, AtRiskMemory* memory)
{
    AtRiskReading out;
    out.cap = cap;
    // The function's existence and EXECUTE first, in a statement that names it only as text: a
    // statement calling a function that is not there fails as a whole (and aborts the transaction).
    const std::string signature = schema.qualify("idem_successes_since(timestamptz, integer)");
    const auto head = tx.exec_params("SELECT pg_is_in_recovery(), to_regprocedure($1) IS NOT NULL,"
                                     "       coalesce(has_function_privilege(to_regprocedure($1), 'EXECUTE'), false),"
                                     "       current_setting('synchronous_standby_names'),"
                                     "       current_setting('synchronous_commit'), "
            + epochUs("now()") + ", CASE WHEN NOT pg_is_in_recovery() THEN " + lsnBytes("pg_current_wal_lsn()")
            + " END,"
              "       concat_ws('/', coalesce(host(inet_server_addr()), 'local'), inet_server_port()::text,"
              "                 CASE WHEN NOT pg_is_in_recovery() THEN substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) END)",
        signature)[0];
    out.inRecovery = head[0].as<bool>();
    out.functionMissing = !head[1].as<bool>();
    out.functionAllowed = head[2].as<bool>();
    out.synchronousNames = head[3].as<std::string>();
    const std::string commit = head[4].as<std::string>();
    out.synchronous
        = !out.synchronousNames.empty() && (commit == "on" || commit == "remote_write" || commit == "remote_apply");
    out.nowUs = head[5].as<std::int64_t>();
    out.firstSampleUs = out.nowUs;
    if (out.inRecovery)
        return out;
    const std::int64_t current = head[6].as<std::int64_t>();
    AtRiskMemory scratch;
    AtRiskMemory& mem = memory ? *memory : scratch;
    if (const std::string primary = orEmpty(head[7]); mem.primary != primary) {
        mem = AtRiskMemory();
        mem.primary = primary;
    }
    if (!mem.samples.empty())
        out.firstSampleUs = mem.samples.front().atUs;

    // Every standby in the view (with the physical slot it streams through), then the physical
    // slots nobody streams through now: a standby whose walsender ended keeps its slot's point.
    const auto rows = tx.exec("SELECT r.application_name, r.sync_state, " + epochUs("r.flush_lag") + ", "
        + lsnBytes("r.flush_lsn") + ", " + epochUs("r.reply_time")
        + ", (SELECT s.slot_name::text FROM pg_catalog.pg_replication_slots s WHERE s.active_pid = r.pid LIMIT 1)"
          "  FROM pg_catalog.pg_stat_replication r ORDER BY r.application_name");
    const auto slots = tx.exec("SELECT s.slot_name::text, " + lsnBytes("s.restart_lsn")
        + "  FROM pg_catalog.pg_replication_slots s"
          " WHERE s.slot_type = 'physical' AND s.restart_lsn IS NOT NULL"
          "   AND (s.active_pid IS NULL OR s.active_pid NOT IN (SELECT pid FROM pg_catalog.pg_stat_replication"
          "                                                     WHERE pid IS NOT NULL))"
          " ORDER BY 1");

    // The time from which a standby flushed to flushLsn lacks successes: for one not streaming,
    // the earliest of its last reply minus its lag and the memory's bound, so it errs early.
    const auto since = [&](AtRiskReading::Standby& s, std::int64_t flushLsn, std::int64_t replyUs, std::int64_t lagUs) {
        const std::int64_t estimate = replyUs >= 0 ? replyUs - std::max<std::int64_t>(lagUs, 0) : -1;
        if (s.presence == AtRiskReading::Presence::Streaming) {
            s.sinceUs = std::min(estimate >= 0 ? estimate : out.nowUs - std::max<std::int64_t>(lagUs, 0), out.nowUs);
            return;
        }
        const std::int64_t bound = mem.timeAtOrBefore(flushLsn);
        if (bound >= 0) {
            s.sinceUs = estimate >= 0 ? std::min(bound, estimate) : bound;
        } else {
            // No reading this old: from the first one, and the figure is a lower bound.
            s.sinceUs = estimate >= 0 ? std::min(estimate, out.firstSampleUs) : out.firstSampleUs;
            s.sinceBounded = false;
        }
        s.sinceUs = std::min(s.sinceUs, out.nowUs);
    };

    std::map<std::string, bool> inView;
    for (const auto& r : rows) {
        if (r[1].is_null()) {
            ++out.hiddenStandbys;
            continue;
        }
        AtRiskReading::Standby s;
        s.name = orEmpty(r[0]);
        s.syncState = r[1].as<std::string>();
        s.flushLagUs = orMinus(r[2]);
        const std::int64_t flushLsn = orMinus(r[3]);
        const std::int64_t replyUs = orMinus(r[4]);
        s.slot = orEmpty(r[5]);
        s.behindBytes = flushLsn >= 0 ? std::max<std::int64_t>(current - flushLsn, 0) : -1;
        s.replyAgeUs = replyUs >= 0 ? std::max<std::int64_t>(out.nowUs - replyUs, 0) : -1;
        const bool behind = s.behindBytes != 0; // unknown counts as behind
        if (behind && (s.replyAgeUs < 0 || s.replyAgeUs > silentAfterUs))
            s.presence = AtRiskReading::Presence::Silent;
        if (behind)
            since(s, flushLsn >= 0 ? flushLsn : 0, replyUs, s.flushLagUs);
        inView[s.name] = true;
        auto& seen = mem.standbys[s.name];
        seen.syncState = s.syncState;
        if (!s.slot.empty())
            seen.slot = s.slot;
        seen.flushLsn = flushLsn;
        seen.replyUs = replyUs;
        seen.flushLagUs = s.flushLagUs;
        seen.lastSeenUs = out.nowUs;
        out.standbys.push_back(std::move(s));
    }
    // Gone from the view: by its slot, else as the memory last saw it.
    std::map<std::string, bool> slotTaken;
    const auto disconnected
        = [&](const std::string& name, const AtRiskMemory::Seen* seen, const std::string& slot, std::int64_t flushLsn) {
              AtRiskReading::Standby s;
              s.name = name;
              s.presence = AtRiskReading::Presence::Disconnected;
              s.slot = slot;
              s.behindBytes = std::max<std::int64_t>(current - flushLsn, 0);
              if (seen) {
                  s.lastSeenUs = seen->lastSeenUs;
                  s.replyAgeUs = seen->replyUs >= 0 ? std::max<std::int64_t>(out.nowUs - seen->replyUs, 0) : -1;
              }
              // The slot may have moved on since the memory saw it: the memory's reply then says nothing.
              const bool sameLsn = seen && seen->flushLsn == flushLsn;
              if (s.behindBytes > 0)
                  since(s, flushLsn, sameLsn ? seen->replyUs : -1, sameLsn ? seen->flushLagUs : -1);
              out.standbys.push_back(std::move(s));
          };
    for (const auto& r : slots) {
        const std::string slot = r[0].as<std::string>();
        const AtRiskMemory::Seen* seen = nullptr;
        std::string name = slot;
        for (const auto& [n, v] : mem.standbys)
            if (v.slot == slot && !inView.count(n)) {
                seen = &v;
                name = n;
            }
        slotTaken[name] = true;
        disconnected(name, seen, slot, r[1].as<std::int64_t>());
    }
    for (const auto& [name, seen] : mem.standbys)
        if (!inView.count(name) && !slotTaken.count(name) && seen.flushLsn >= 0)
            disconnected(name, &seen, std::string(), seen.flushLsn);
    std::sort(out.standbys.begin(), out.standbys.end(),
        [](const AtRiskReading::Standby& a, const AtRiskReading::Standby& b) { return a.name < b.name; });

    // Each standby behind counts from its time; a synchronous one (and everything, when commits
    // wait for one) holds every acknowledged commit.
    const bool count = !out.functionMissing && out.functionAllowed && !out.synchronous;
    for (auto& s : out.standbys) {
        if (!count || s.syncState == "sync" || s.syncState == "quorum" || s.behindBytes == 0 || s.sinceUs < 0)
            continue;
        s.successes = tx.exec_params("SELECT " + schema.qualify("idem_successes_since")
                                + "(pg_catalog.to_timestamp($1::float8 OPERATOR(pg_catalog./) 1000000::float8), $2)",
                            s.sinceUs, cap)[0][0]
                          .as<std::int64_t>();
    }

    if (mem.samples.empty() || current > mem.samples.back().lsn)
        mem.samples.push_back({ current, out.nowUs });
    if (mem.samples.size() > AtRiskMemory::maxSamples)
        mem.samples.erase(mem.samples.begin());
    return out;
}

} // namespace idem
