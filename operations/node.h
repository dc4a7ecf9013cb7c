#pragma once

#include <cstdint>
#include <map>
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
        std::int64_t silentMs = -1; // since its last reply (by the primary's clock); -1: never replied
        std::int64_t replayBehindBytes = -1; // WAL written here and not replayed there; -1: not known
    };
    std::vector<Standby> standbys;
    int hiddenStandbys = 0;
};

// Reads it in the caller's transaction (read-only is fine); every function guarded by its privilege.
NodeIdentity readNodeIdentity(pqxx::transaction_base& tx);

// What a reader of the at-risk figure keeps between its readings (issue 40 item A): the primary's
// WAL position at each reading with the server's time (so a standby's flushed point maps to a
// time at or before which everything later is missing from it), and every standby seen in
// pg_stat_replication, so that one whose walsender timed out (gone from the view) is still
// counted: Patroni keeps it as a failover candidate. Forgotten when the primary changes. Not
// thread-safe: one reader (the console's worker thread, the exporter) uses it at a time.
struct AtRiskMemory {
    struct Sample {
        std::int64_t lsn = 0; // pg_current_wal_lsn() as bytes
        std::int64_t atUs = 0; // the server's now(), microseconds since the epoch
    };
    struct Seen {
        std::string syncState;
        std::string slot; // the physical slot it streamed through, when it had one
        std::int64_t flushLsn = -1;
        std::int64_t replyUs = -1; // its last reply_time
        std::int64_t flushLagUs = -1;
        std::int64_t lastSeenUs = 0; // the last reading that saw it
    };
    std::string primary; // the server these belong to (address and timeline)
    std::vector<Sample> samples; // ascending; at most maxSamples, the oldest dropped
    std::map<std::string, Seen> standbys; // by application_name
    static constexpr std::size_t maxSamples = 8640; // a day of readings every 10 s

    // The latest reading's time at which the primary's WAL had not passed lsn (so lsn was written
    // then or later); -1 when every sample is past it.
    std::int64_t timeAtOrBefore(std::int64_t lsn) const;
};

// The acknowledged successes a failover could lose (issues #29, 40): with asynchronous replication
// a standby promoted now lacks what it had not flushed yet, and a succeeded key lost that way runs
// again when its client retries. Read on the primary, from the WAL distance between
// pg_current_wal_lsn() and each standby's flushed point: a standby at the primary's position
// holds everything; one behind lacks the successes acknowledged since that point was written,
// counted by idem_successes_since from a time that errs early (see sinceUs). A standby that stopped
// replying (its flush_lag goes NULL) keeps its last flushed point; one no longer in
// pg_stat_replication (its walsender timed out) is counted from its physical replication slot's
// restart_lsn, or from what the memory saw of it. Commits that wait for a synchronous standby put
// nothing at risk.
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
    std::int64_t nowUs = 0; // the server's now() of the reading
    std::int64_t firstSampleUs = 0; // the memory's oldest reading (this reading's without memory)
    enum class Presence {
        Streaming, // in pg_stat_replication, caught up or replying
        Silent, // in pg_stat_replication, behind, and no reply for more than silentAfterUs
        Disconnected, // not in pg_stat_replication: its slot or the memory says it
    };
    struct Standby {
        std::string name; // application_name (Patroni: the member's name); a slot's name when only it is known
        std::string syncState; // async, potential, sync, quorum; empty when not connected
        std::int64_t flushLagUs = -1; // microseconds; -1: none reported (caught up and idle)
        // Successes acknowledged since sinceUs; -1: not counted (caught up, a synchronous standby, no function).
        std::int64_t successes = -1;
        Presence presence = Presence::Streaming;
        std::int64_t behindBytes = -1; // WAL written on the primary and not flushed there; -1: not known
        std::int64_t replyAgeUs = -1; // since its last reply (the server's clock against reply_time); -1: none
        std::int64_t lastSeenUs = -1; // Disconnected: the last reading that saw it connected; -1: never
        std::string slot; // its physical slot, when known
        // The time counted from (server clock, µs since the epoch). A streaming standby: its last
        // reply minus its flush lag. A silent or disconnected one: the earliest of that and the
        // last reading at which the primary's WAL had not yet passed its flushed point, so the
        // count errs towards more. -1: not counted.
        std::int64_t sinceUs = -1;
        // False when no reading of the memory is old enough to bound its flushed point: counted
        // from the memory's first reading, the figure is a lower bound ("at least").
        bool sinceBounded = true;
        // Behind and not streaming: its successes are lost by a failover to it (alert).
        bool alert() const { return presence != Presence::Streaming && behindBytes > 0; }
    };
    std::vector<Standby> standbys;
    int hiddenStandbys = 0; // rows the role may not look into (needs pg_read_all_stats)
    std::int64_t cap = 0; // successes above cap mean "more than cap"
    bool alert() const;
};

// A standby behind the primary with no reply for this long is silent (a streaming one replies as
// it flushes; an idle caught-up one, every wal_receiver_status_interval, is not behind).
constexpr std::int64_t silentAfterUs = 5'000'000;

// One read in the caller's transaction (read-only is fine), bounded by cap rows per standby.
// memory, when given, is read and updated (the caller keeps it between readings).
AtRiskReading readAtRisk(
    pqxx::transaction_base& tx, const SchemaName& schema, int cap = 100000, AtRiskMemory* memory = nullptr);

} // namespace idem
