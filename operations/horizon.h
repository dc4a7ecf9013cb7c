#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>
#include <pqxx/transaction_base>

#include "core/identifier.h"

namespace idem {

// The table's health (issue 46 item 1): who holds back the database's transaction horizon
// (idem_horizon_holders, schema v26), the dead rows the Idem tables keep meanwhile, and whether
// autovacuum keeps up. VACUUM removes a dead row version only when no snapshot still in use may
// see it: a transaction left open, a replication slot, a standby's hot_standby_feedback or a
// prepared transaction keeps every row that died after it, while the claims keep making more.
//
// The figures say what they are: the holders as pg_stat_activity, pg_prepared_xacts,
// pg_replication_slots and pg_stat_replication show them now; the dead rows as the statistics
// collector estimates them (n_dead_tup); what the horizon keeps as a range: at least the dead
// rows of the tables vacuumed since it began (that vacuum removed what it could), at most every
// dead row now.

struct HorizonHolder {
    std::string kind; // session, prepared, slot, slot_catalog (holds back the catalogues only), standby
    std::optional<int> pid; // the backend, walsender or a slot's active process
    std::string role; // empty for a slot
    std::string application; // application_name (a standby's name), control characters as spaces
    std::string client; // "host:port" or "local"; empty when hidden from this login, or for a slot
    std::string state; // active, idle in transaction, prepared, streaming, inactive ...
    std::string backendType;
    std::string xactStart; // ISO 8601 UTC; empty for a slot or a standby (their snapshots carry no time)
    std::string queryStart;
    std::int64_t xidAge = 0; // transaction ids since what it holds
    std::optional<double> ageSeconds; // since its transaction (or the prepared one) began
    std::string name; // a slot's name, a prepared transaction's gid
    std::string query; // its query, up to 200 characters; empty when hidden
    bool queryHidden = false; // the query and client are another role's and this login lacks pg_read_all_stats
};

struct HorizonTable {
    std::string name;
    std::int64_t deadTuples = 0; // n_dead_tup
    std::int64_t liveTuples = 0;
    std::int64_t vacuums = 0; // vacuum_count + autovacuum_count since the statistics were reset
    std::string lastVacuum; // the newer of last_vacuum and last_autovacuum; empty: never
    bool vacuumedDuringHold = false; // its last vacuum ran after the oldest holder's transaction began
};

// task_idempotency's dead rows over time, from the size samples (schema v26 on).
struct DeadRowsSample {
    std::string takenAt;
    std::int64_t deadTuples = 0;
    std::int64_t vacuums = 0;
};

struct HorizonReading {
    std::string asOf; // server now(), ISO 8601 UTC
    bool available = false; // the schema has idem_horizon_holders (v26); nothing else is set without it
    std::vector<HorizonHolder> holders; // oldest first, at most the limit read
    // The function's owner may read every role's snapshot (pg_read_all_stats or a superuser):
    // without it, other roles' sessions are missing from the holders.
    bool ownerSeesAll = false;
    // This login may read other roles' query text and client address (pg_read_all_stats).
    bool loginSeesAll = false;
    std::vector<HorizonTable> tables; // the schema's Idem tables, most dead rows first
    std::int64_t deadTotal = 0; // sum of n_dead_tup over them (an estimate)
    std::int64_t keptAtLeast = 0; // dead rows of the tables vacuumed since the oldest timed holder began
    std::vector<DeadRowsSample> samples; // oldest first, the sample window
    int vacuumsInSamples = 0; // vacuums of task_idempotency between the first and last sample
    int fruitlessIntervals = 0; // sample intervals with a vacuum after which the dead rows did not fall
    // task_idempotency's dead rows in the newest sample taken before the oldest timed holder
    // began, and when: what "growing" is judged against by a reader without a memory of its own.
    std::optional<std::int64_t> taskDeadBefore;
    std::string taskDeadBeforeAt;
    std::int64_t taskDeadNow = 0;

    // The oldest holder of the user tables' horizon (slot_catalog rows excluded), if any.
    const HorizonHolder* oldest() const;
    // The oldest holder with a time (a session or a prepared transaction).
    const HorizonHolder* oldestTimed() const;
};

// Reads the holders (up to limit, 1..50), the Idem tables' statistics and the samples of the
// last sampleHours (1..2160). Before schema v26: available false, the rest empty. Read-only.
HorizonReading readHorizon(pqxx::transaction_base& tx, const SchemaName& schema, int limit = 5, int sampleHours = 24);
// The same in its own READ ONLY transaction with the statement and lock timeouts.
HorizonReading readHorizon(
    pqxx::connection& conn, const SchemaName& schema, int statementTimeoutMs = 5000, int limit = 5);

// Whether the horizon is held past heldAfterSeconds (by a timed holder's age, or an untimed
// one's transaction ids past heldAfterXids) while the Idem tables' dead rows grow: against
// deadBefore when the caller remembers an earlier total for the same holder, else
// task_idempotency's dead rows against the sample before the holder began.
struct HorizonVerdict {
    bool held = false;
    bool growing = false;
    std::int64_t grewBy = 0;
    std::string since; // when the figure it grew from was taken (ISO 8601 UTC), if known
    bool alert() const { return held && growing; }
};
constexpr double defaultHeldAfterSeconds = 300;
constexpr std::int64_t defaultHeldAfterXids = 10'000'000;
HorizonVerdict judgeHorizon(const HorizonReading& r, double heldAfterSeconds = defaultHeldAfterSeconds,
    std::int64_t heldAfterXids = defaultHeldAfterXids, std::optional<std::int64_t> deadBefore = std::nullopt,
    const std::string& deadBeforeAt = {});

// A reader that reads again and again (the console) remembers the Idem tables' dead rows when it
// first saw the oldest holder: "growing" is judged against the size sample before the holder
// began, or, when that says nothing, against what this reader first saw while it held.
class HorizonMemory {
public:
    HorizonVerdict judge(const HorizonReading& r, double heldAfterSeconds = defaultHeldAfterSeconds,
        std::int64_t heldAfterXids = defaultHeldAfterXids);

private:
    std::string m_key; // the oldest holder when m_dead was read
    std::int64_t m_dead = 0;
    std::string m_at;
};

// "session", "prepared transaction", ... for people.
std::string horizonKindName(const std::string& kind);
// One line naming a holder: "session pid 4242 (role app, application report, from 10.0.0.5:5433,
// idle in transaction, transaction began 2026-..., 12 min ago, 35,120 xids)", text escaped.
std::string describeHolder(const HorizonHolder& h);

} // namespace idem
