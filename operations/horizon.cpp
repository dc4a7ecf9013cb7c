#include "operations/horizon.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <pqxx/pqxx>

#include "core/utf8.h"
#include "operations/stats.h"

namespace idem {

namespace {
    constexpr const char* utc = R"( AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))";
    std::string iso(const std::string& column) { return "to_char(" + column + utc; }
    std::string text(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }

    std::string ageText(double seconds)
    {
        const auto s = static_cast<std::int64_t>(std::llround(std::max(0.0, seconds)));
        if (s < 120)
            return std::to_string(s) + " s";
        if (s < 2 * 3600)
            return std::to_string(s / 60) + " min";
        if (s < 2 * 86400)
            return std::to_string(s / 3600) + " h " + std::to_string((s % 3600) / 60) + " min";
        return std::to_string(s / 86400) + " d " + std::to_string((s % 86400) / 3600) + " h";
    }
} // namespace

const HorizonHolder* HorizonReading::oldest() const
{
    for (const auto& h : holders)
        if (h.kind != "slot_catalog")
            return &h;
    return nullptr;
}

const HorizonHolder* HorizonReading::oldestTimed() const
{
    const HorizonHolder* best = nullptr;
    for (const auto& h : holders)
        if (h.ageSeconds && (!best || *h.ageSeconds > *best->ageSeconds))
            best = &h;
    return best;
}

HorizonReading readHorizon(pqxx::transaction_base& tx, const SchemaName& schema, int limit, int sampleHours)
{
    if (limit < 1 || limit > 50)
        throw std::invalid_argument("the holders listed must be 1 to 50");
    if (sampleHours < 1 || sampleHours > 2160)
        throw std::invalid_argument("the dead rows' sample window must be 1 to 2160 hours");
    HorizonReading out;
    const std::string fn = schema.qualify("idem_horizon_holders") + "(integer)";
    const auto probe = tx.exec_params("SELECT " + iso("now()") + ", to_regprocedure($1) IS NOT NULL,"
                                      " pg_catalog.pg_has_role(session_user, 'pg_read_all_stats', 'USAGE'),"
                                      " (SELECT pg_catalog.pg_has_role(p.proowner, 'pg_read_all_stats', 'USAGE')"
                                      "    FROM pg_catalog.pg_proc p WHERE p.oid = to_regprocedure($1))",
        fn);
    out.asOf = probe[0][0].as<std::string>();
    out.available = probe[0][1].as<bool>();
    if (!out.available)
        return out;
    out.loginSeesAll = probe[0][2].as<bool>();
    out.ownerSeesAll = probe[0][3].as<bool>(false);

    for (const auto& r : tx.exec_params("SELECT h.kind, h.pid, h.role, h.application, h.client, h.state, h.backend_type, "
                 + iso("h.xact_start") + " AS xs, " + iso("h.query_start")
                 + " AS qs, h.xid_age, h.age_seconds, h.name, h.query, h.query_hidden FROM "
                 + schema.qualify("idem_horizon_holders") + "($1) h",
             limit)) {
        HorizonHolder h;
        h.kind = r["kind"].as<std::string>();
        if (!r["pid"].is_null())
            h.pid = r["pid"].as<int>();
        h.role = text(r["role"]);
        h.application = text(r["application"]);
        h.client = text(r["client"]);
        h.state = text(r["state"]);
        h.backendType = text(r["backend_type"]);
        h.xactStart = text(r["xs"]);
        h.queryStart = text(r["qs"]);
        h.xidAge = r["xid_age"].is_null() ? 0 : r["xid_age"].as<std::int64_t>();
        if (!r["age_seconds"].is_null())
            h.ageSeconds = r["age_seconds"].as<double>();
        h.name = text(r["name"]);
        h.query = text(r["query"]);
        h.queryHidden = r["query_hidden"].as<bool>(false);
        out.holders.push_back(std::move(h));
    }
    const HorizonHolder* timed = out.oldestTimed();
    const std::string since = timed ? timed->xactStart : std::string();

    // The statistics views every role may read; the Idem tables as idem_storage_tables names them.
    for (const auto& r : tx.exec_params(
             "SELECT s.relname::text, s.n_dead_tup, s.n_live_tup, s.vacuum_count + s.autovacuum_count, "
                 + iso("GREATEST(s.last_vacuum, s.last_autovacuum)")
                 + ", $2 <> '' AND GREATEST(s.last_vacuum, s.last_autovacuum) > NULLIF($2, '')::timestamptz"
                   "  FROM pg_catalog.pg_stat_user_tables s"
                   " WHERE s.schemaname = $1 AND (s.relname = 'task_idempotency'"
                   "       OR s.relname LIKE 'task\\_idempotency\\_%' OR s.relname LIKE 'idem\\_%')"
                   " ORDER BY s.n_dead_tup DESC, s.relname",
             schema.name(), since)) {
        HorizonTable t;
        t.name = r[0].as<std::string>();
        t.deadTuples = r[1].as<std::int64_t>();
        t.liveTuples = r[2].as<std::int64_t>();
        t.vacuums = r[3].as<std::int64_t>();
        t.lastVacuum = text(r[4]);
        t.vacuumedDuringHold = r[5].as<bool>(false);
        out.deadTotal += t.deadTuples;
        if (t.vacuumedDuringHold)
            out.keptAtLeast += t.deadTuples;
        if (t.name == "task_idempotency")
            out.taskDeadNow = t.deadTuples;
        out.tables.push_back(std::move(t));
    }

    for (const auto& r : tx.exec_params("SELECT " + iso("s.taken_at") + ", s.dead_tuples, s.vacuums FROM "
                 + schema.qualify("idem_storage_samples")
                 + " s WHERE s.taken_at > now() - make_interval(hours => $1) AND s.dead_tuples IS NOT NULL"
                   " ORDER BY s.taken_at",
             sampleHours))
        out.samples.push_back({ r[0].as<std::string>(), r[1].as<std::int64_t>(), r[2].as<std::int64_t>(0) });
    for (std::size_t i = 1; i < out.samples.size(); ++i) {
        const auto& a = out.samples[i - 1];
        const auto& b = out.samples[i];
        if (b.vacuums > a.vacuums) {
            out.vacuumsInSamples += static_cast<int>(b.vacuums - a.vacuums);
            if (b.deadTuples >= a.deadTuples && b.deadTuples > 0)
                ++out.fruitlessIntervals;
        }
    }
    if (!since.empty()) {
        const auto r = tx.exec_params("SELECT " + iso("s.taken_at") + ", s.dead_tuples FROM "
                + schema.qualify("idem_storage_samples")
                + " s WHERE s.taken_at <= $1::timestamptz AND s.dead_tuples IS NOT NULL ORDER BY s.taken_at DESC LIMIT 1",
            since);
        if (!r.empty()) {
            out.taskDeadBeforeAt = r[0][0].as<std::string>();
            out.taskDeadBefore = r[0][1].as<std::int64_t>();
        }
    }
    return out;
}

HorizonReading readHorizon(pqxx::connection& conn, const SchemaName& schema, int statementTimeoutMs, int limit)
{
    pqxx::read_transaction tx(conn);
    boundRead(tx, statementTimeoutMs);
    tx.exec("SELECT pg_catalog.set_config('lock_timeout', '1000', true)");
    auto out = readHorizon(tx, schema, limit);
    tx.commit();
    return out;
}

HorizonVerdict judgeHorizon(const HorizonReading& r, double heldAfterSeconds, std::int64_t heldAfterXids,
    std::optional<std::int64_t> deadBefore, const std::string& deadBeforeAt)
{
    HorizonVerdict v;
    if (const auto* t = r.oldestTimed(); t && *t->ageSeconds >= heldAfterSeconds)
        v.held = true;
    for (const auto& h : r.holders)
        if (!h.ageSeconds && h.kind != "slot_catalog" && h.xidAge >= heldAfterXids)
            v.held = true;
    if (deadBefore) {
        v.grewBy = r.deadTotal - *deadBefore;
        v.since = deadBeforeAt;
    } else if (r.taskDeadBefore) {
        v.grewBy = r.taskDeadNow - *r.taskDeadBefore;
        v.since = r.taskDeadBeforeAt;
    }
    v.growing = v.grewBy > 0;
    return v;
}

HorizonVerdict HorizonMemory::judge(const HorizonReading& r, double heldAfterSeconds, std::int64_t heldAfterXids)
{
    const auto* h = r.oldest();
    const std::string key = h ? h->kind + '|' + (h->pid ? std::to_string(*h->pid) : std::string()) + '|' + h->xactStart
            + '|' + h->name
                              : std::string();
    if (key != m_key) {
        m_key = key;
        m_dead = r.deadTotal;
        m_at = r.asOf;
    }
    auto v = judgeHorizon(r, heldAfterSeconds, heldAfterXids);
    if (!v.growing && h) {
        const auto remembered = judgeHorizon(r, heldAfterSeconds, heldAfterXids, m_dead, m_at);
        if (remembered.growing)
            v = remembered;
    }
    return v;
}

std::string horizonKindName(const std::string& kind)
{
    if (kind == "session")
        return "session";
    if (kind == "prepared")
        return "prepared transaction";
    if (kind == "slot")
        return "replication slot";
    if (kind == "slot_catalog")
        return "replication slot (catalogues only)";
    if (kind == "standby")
        return "standby feedback";
    return kind;
}

std::string describeHolder(const HorizonHolder& h)
{
    std::string s = horizonKindName(h.kind);
    if (!h.name.empty())
        s += " " + displaySafe(h.name, 200);
    if (h.pid)
        s += " pid " + std::to_string(*h.pid);
    std::vector<std::string> parts;
    if (!h.role.empty())
        parts.push_back("role " + displaySafe(h.role, 64));
    if (!h.application.empty())
        parts.push_back("application " + displaySafe(h.application, 64));
    if (!h.client.empty())
        parts.push_back("from " + displaySafe(h.client, 80));
    else if (h.queryHidden)
        parts.push_back("client hidden");
    if (!h.state.empty())
        parts.push_back(displaySafe(h.state, 40));
    if (!h.xactStart.empty())
        parts.push_back("transaction began " + h.xactStart);
    if (h.ageSeconds)
        parts.push_back(ageText(*h.ageSeconds) + " ago");
    parts.push_back(std::to_string(h.xidAge) + " xids");
    s += " (";
    for (std::size_t i = 0; i < parts.size(); ++i)
        s += (i ? ", " : "") + parts[i];
    return s + ")";
}

} // namespace idem
