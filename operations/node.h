#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <pqxx/connection>
#include <pqxx/transaction_base>

#include "core/identifier.h"
#include "core/timeline.h" // noteTimeline: the console and the exporter call it too

namespace idem {

// Which server a connection reached, as the server itself says (issue #29): behind HAProxy or a
// multi-host conninfo the address a client was given names no node, and after a failover the
// same address reaches another one. No Qt: the console's worker thread and the exporter call it.
struct NodeIdentity {
    // The server's side of the connection, inet_server_addr():inet_server_port(); empty on a
    // Unix socket.
    std::string serverAddress;
    // pg_control_system(): the same on a primary and its standbys, another on another cluster.
    // Empty when the role may not call it (EXECUTE revoked; systemAllowed false).
    std::string systemIdentifier;
    bool systemAllowed = false;
    // The WAL timeline: a primary's insert timeline (from its current WAL file name), a standby's
    // last restartpoint's (pg_control_checkpoint(), which needs EXECUTE: checkpointAllowed); 0 when
    // not known. A promotion starts a new one.
    int timeline = 0;
    bool checkpointAllowed = false;
    bool inRecovery = false;
    std::int64_t postmasterStartUs = 0; // pg_postmaster_start_time(), the server's clock

    // A primary's standbys as pg_stat_replication shows them now. Without pg_read_all_stats (or
    // pg_monitor) a role sees a row per standby and nothing in it: hiddenStandbys counts those.
    struct Standby {
        std::string name; // application_name (Patroni: the member's name)
        std::string syncState; // async, potential, sync, quorum
        std::string state; // streaming, catchup, ...
        std::int64_t replayLagMs = -1; // -1: not known (idle standbys report none)
    };
    std::vector<Standby> standbys;
    int hiddenStandbys = 0;
};

// Reads it in the caller's transaction (read-only is fine); every function guarded by its privilege.
NodeIdentity readNodeIdentity(pqxx::transaction_base& tx);

// The acknowledged successes a failover could lose (issue #29): with asynchronous replication a
// standby promoted now lacks what it had not flushed yet, and a succeeded key lost that way runs
// again when its client retries. Read on the primary: per asynchronous standby its flush lag (from
// pg_stat_replication) and the keys that succeeded within that much of now
// (idem_successes_since). Commits that wait for a synchronous standby put nothing at risk.
struct AtRiskReading {
    bool inRecovery = false; // a standby: its own primary's console says it
    // idem_successes_since is not in the schema (a schema from before it: idemctl migrate), or the
    // role may not call it (grant idem_reader). The lags are still read.
    bool functionMissing = false;
    bool functionAllowed = false;
    // synchronous_standby_names set and synchronous_commit waiting for it (on, remote_write,
    // remote_apply): an acknowledged commit is on a synchronous standby, or nothing is acknowledged.
    bool synchronous = false;
    std::string synchronousNames; // synchronous_standby_names as set
    struct Standby {
        std::string name; // application_name (Patroni: the member's name)
        std::string syncState; // async, potential, sync, quorum
        std::int64_t flushLagUs = -1; // microseconds; -1: none reported (caught up and idle)
        // Successes within the lag; -1: not counted (no lag, a synchronous standby, no function).
        std::int64_t successes = -1;
    };
    std::vector<Standby> standbys;
    int hiddenStandbys = 0; // rows the role may not look into (needs pg_read_all_stats)
    std::int64_t cap = 0; // successes above cap mean "more than cap"
};

// One read in the caller's transaction (read-only is fine), bounded by cap rows per standby.
AtRiskReading readAtRisk(pqxx::transaction_base& tx, const SchemaName& schema, int cap = 100000);

} // namespace idem
