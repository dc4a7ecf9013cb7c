#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"
#include "operations/fencing.h"
#include "operations/horizon.h"
#include "operations/reconcile.h"
#include "operations/snapshotfields.h"
#include "operations/stats.h"

namespace idem {

// An incident snapshot as plain values: what `idemctl snapshot export` and the console read
// from the database in one read-only REPEATABLE READ transaction, what snapshot.json holds
// (docs/snapshot-format.md) and what loadSnapshotJson() gives back. Timestamps are ISO 8601
// UTC text as the server rendered them; optional fields are NULL in the database.

// One task_idempotency row. With redaction, resultJson, errorMessage and the messages inside
// errorsJson are replaced by "redacted:sha256:<hex>:<bytes>" of the original text.
struct SnapshotTaskRow {
    std::string key;
    std::string status;
    std::string requestHash;
    std::optional<std::string> resultJson; // jsonb as text
    std::optional<std::string> errorMessage;
    std::optional<std::string> errorClass;
    std::optional<std::string> ownerToken;
    std::optional<std::string> leaseUntil;
    std::optional<std::string> nextAttemptAt;
    int attempts = 0;
    int maxAttempts = 0;
    std::string createdAt;
    std::string updatedAt;
    std::string errorsJson; // jsonb array as text
};

// A bounded set of rows: at most `limit` in `rows`, `total` of them in the database at the
// snapshot's instant, `truncated` when total > limit.
struct SnapshotRowSet {
    std::string name; // expired_leases, longest_running, failed, uncertain
    std::string description; // the predicate, in words
    std::string order; // the ORDER BY, in words
    int limit = 0;
    std::int64_t total = 0;
    bool truncated = false;
    std::vector<SnapshotTaskRow> rows;
};

// One idem_counters row (per minute, tenant, operation, outcome).
struct SnapshotCounter {
    std::string bucket;
    std::string tenant;
    std::string operation;
    std::string outcome;
    std::int64_t n = 0;
};

struct SnapshotCounterSet {
    std::string name; // counters_history, recent_conflicts
    std::string description;
    int limit = 0;
    std::int64_t total = 0; // rows in the database
    bool truncated = false;
    std::vector<SnapshotCounter> rows;
};

// One idem_latency row (schema v17): a folded minute's histogram of one tenant, operation and
// kind (run, tts, attempts); see operations/latency.h for the slots.
struct SnapshotLatencyRow {
    std::string bucket;
    std::string tenant;
    std::string operation;
    std::string kind;
    std::int64_t n = 0;
    double total = 0; // sum of the values: microseconds, or attempts
    std::vector<std::pair<int, std::int64_t>> slotCounts; // ascending slot
};

struct SnapshotLatencySet {
    std::string description;
    int limit = 0;
    std::int64_t total = 0; // rows in the database
    bool truncated = false;
    std::string foldedTo; // where the roll-up stood: later minutes were not folded yet
    std::vector<SnapshotLatencyRow> rows; // oldest first
};

// One event that explains a change in a chart (schema v17, idem_events: a recovery action, a pause,
// a resume, an annotation, a deploy …), with the names `idemctl events --json` gives them.
struct SnapshotEvent {
    std::int64_t auditId = 0; // 0: an event with no audit entry of its own
    std::string at;
    std::string action; // its kind: requeue, pause, annotate, deploy, …; readers draw kinds they do not know too
    std::string tenant; // "*" for all
    std::string operation;
    std::string actor;
    std::string text;
};

struct SnapshotEventSet {
    std::string description;
    int limit = 0;
    bool truncated = false; // more than `limit` in the window: the newest are missing
    std::vector<SnapshotEvent> rows; // oldest first
};

// The rows processing at the snapshot's instant, counted back over its history window (what the
// database holds of processing over time: no table keeps past counts). At each point, `processing`
// is the rows whose current attempt had started and whose lease had not run out by then, `expired`
// those whose lease had run out (and had not been renewed since). Rows that finished before the
// instant are not counted: a lower bound for past minutes, exact at the instant (the last point,
// at taken_at, equals figures.processing and figures.expired_leases).
struct SnapshotProcessingPoint {
    std::string at;
    std::int64_t processing = 0;
    std::int64_t expired = 0;
};

struct SnapshotProcessingHistory {
    std::string description;
    std::vector<SnapshotProcessingPoint> points; // oldest first: each minute of the window, then taken_at
};

// A pause of intake (schema v15): one in idem_pauses at the snapshot's instant (in force, or past
// its end and not lifted yet), or one lifted within the history window (from its resume entry).
struct SnapshotPause {
    std::string tenant; // "*" for all
    std::string operation;
    std::string reason; // why it was set
    std::string pausedBy; // "db_role (actor)"
    std::string pausedAt;
    std::optional<std::string> until; // its set end; none: until resumed
    bool active = false; // in force at taken_at
    std::optional<std::string> endedAt; // lifted (or ran out) at; none while in force
    std::optional<std::string> endedBy; // who lifted it, "db_role (actor)"; none when it ran out
    std::optional<std::string> endReason; // why it was lifted
    std::int64_t auditId = 0; // the entry that set it last, or the resume entry
    std::optional<std::string> ramp; // a resume in steps under way, or the ramp abort that set it (v33), in words
};

struct SnapshotPauseSet {
    std::string description;
    int limit = 0;
    std::int64_t total = 0; // matching at the instant
    bool truncated = false;
    std::vector<SnapshotPause> rows; // in force first, then newest first
};

// A recovery job (schema v19): open at the instant, or ended within the history window.
struct SnapshotJob {
    std::int64_t id = 0;
    std::string state; // awaiting_approval, active, finished, cancelled
    std::string action; // requeue, release, fail
    std::string filter; // JSON text, as the job holds it
    std::string startedAt; // the instant its filter matched the rows
    std::string startedBy; // "db_role (actor)"
    std::string reason;
    std::int64_t cap = 0;
    std::int64_t matched = 0;
    std::int64_t changed = 0;
    std::int64_t refusedMovedOn = 0;
    std::int64_t refusedBusy = 0;
    std::int64_t refusedGone = 0;
    std::int64_t skipped = 0; // not applicable, or cancelled
    bool needsApproval = false;
    std::optional<std::string> approvedBy; // "login (actor)" (schema v21)
    std::optional<std::string> approvedAt;
    std::optional<std::string> lastBatchAt;
    std::optional<std::string> finishedAt;
    std::optional<std::string> cancelledBy;
    std::optional<std::string> cancelReason;
};

struct SnapshotJobSet {
    std::string description;
    int limit = 0;
    std::int64_t total = 0;
    bool truncated = false;
    std::vector<SnapshotJob> rows; // newest first
};

// Re-execution (schema v25, docs/redrive.md): one re-drive item, open at the instant or asked for
// within the history window. The stored request's content only when the exporting role holds
// read_requests (the database decides; redacted fields as it returns them), and never in a
// redacted snapshot.
struct SnapshotRedriveItem {
    std::int64_t id = 0;
    std::string key;
    std::string tenant;
    std::string operation;
    std::optional<std::int64_t> jobId;
    std::string state; // queued, running, succeeded, failed, conflict, gone
    std::optional<std::string> worker;
    int tries = 0;
    std::string requestedAt;
    std::string requestedBy; // "role (actor)"
    std::optional<std::string> takenAt;
    std::optional<std::string> finishedAt;
    std::optional<std::string> detail;
    bool requestStored = false;
    std::optional<std::int64_t> requestBytes;
    std::optional<std::string> request; // JSON text; unset without read_requests
};

// A re-driver that reported itself (online: seen within 30 s of the instant).
struct SnapshotRedriver {
    std::string tenant;
    std::string operation;
    std::string worker;
    std::string version;
    std::string lastSeen;
    bool online = false;
};

struct SnapshotRedriveSet {
    std::string description;
    int limit = 0;
    std::int64_t total = 0; // items matching at the instant
    bool truncated = false;
    bool requestsReadable = false; // the exporting role held read_requests
    std::vector<SnapshotRedriveItem> rows; // open first, then newest first
    std::vector<SnapshotRedriver> redrivers; // every registered operation's, at most `limit`
};

struct SnapshotAuditEntry {
    std::int64_t id = 0;
    std::string at;
    std::string key;
    std::string action;
    std::string reason;
    std::string dbRole;
    std::string osUser;
    std::string clientHost;
    std::string beforeImage; // jsonb as text (redacted like rows when asked)
    std::string afterImage;
    std::string prevHash;
    std::string entryHash;
    std::optional<std::string> application; // application_name of the acting client (schema v3 on)
};

struct SnapshotAudit {
    int limit = 0;
    std::int64_t total = 0;
    bool truncated = false;
    std::optional<std::int64_t> headId; // newest entry; unset when the audit is empty
    std::optional<std::string> headHash; // its entry_hash: the chain head
    std::vector<SnapshotAuditEntry> tail; // newest first
};

struct SnapshotThreshold {
    std::string metric; // a figure's JSON name, e.g. expired_leases
    std::optional<double> warning;
    std::optional<double> critical;
};

struct SnapshotPollSettings {
    int intervalMs = 0;
    int statementTimeoutMs = 0;
    int wideRefreshMs = 0; // the slower refresh of wide aggregates; 0 when not used
};

// What the exporting program knows and the database does not. The console fills in its
// thresholds, poll settings and the admin connection it uses; idemctl leaves them empty.
struct SnapshotContext {
    std::string producer; // e.g. "idemctl 0.1.0"
    std::string conninfo; // stored only through redactConninfo()
    std::optional<std::string> adminConninfo; // the console's admin connection, if separate
    std::optional<std::string> adminRole; // its role, if the console knows it
    std::vector<SnapshotThreshold> thresholds;
    std::optional<SnapshotPollSettings> poll;
};

struct SnapshotOptions {
    SchemaName schema;
    StatsOptions stats; // window, long-unfinished threshold, tenant/operation filter, statement timeout
    int historyMinutes = 60; // counters history for the charts (the window is StatsOptions::windowMinutes)
    int rowLimit = 1000; // per task row set
    int counterLimit = 100000; // counter rows (history, conflicts)
    int auditLimit = 200;
    int eventLimit = 1000; // the history window's events (1 to 9999)
    int pauseLimit = 200; // pauses in force or lifted within the history window
    int jobLimit = 200; // recovery jobs open or ended within the history window
    int redriveLimit = 200; // re-drive items open or asked for within the history window (schema v25)
    bool redact = false;
};

struct SnapshotData {
    int formatVersion = 0; // of the snapshot.json it came from (or will be written as)
    std::string producer;
    std::string takenAt; // server now() of the snapshot transaction
    std::string schema;
    std::optional<std::string> tenant;
    std::optional<std::string> operation;
    int windowMinutes = 0;
    int longUnfinishedAfterMinutes = 0;
    int historyMinutes = 0;
    bool redacted = false;

    // Server and connection.
    std::string conninfo; // redacted
    std::optional<std::string> adminConninfo; // redacted
    std::string serverVersion;
    int serverVersionNum = 0;
    std::string database;
    std::string currentRole; // the monitor role: the connection that read the snapshot
    std::string sessionRole;
    bool superuser = false;
    bool memberReader = false; // idem_reader privileges (or superuser)
    bool memberOperator = false;
    std::optional<std::string> adminRole;
    bool inRecovery = false;
    int schemaVersion = 0; // highest applied migration
    int schemaLatestKnown = 0; // what the exporting binary ships

    std::vector<SnapshotThreshold> thresholds;
    std::optional<SnapshotPollSettings> poll;

    StatsReading figures;
    SnapshotCounterSet history;
    SnapshotCounterSet conflicts;
    // Schema v32: which fields the window's fingerprinted conflicts changed (absent before v32, and
    // in snapshots written before it was added within format 1).
    std::optional<SnapshotFieldConflictSet> fieldConflicts;
    // The folded latency minutes of the history window (schema v17 on; absent before, and in
    // snapshots written before it was added within format 1).
    std::optional<SnapshotLatencySet> latency;
    // The events of the history window that explain a change (schema v17 on; absent before, and
    // in snapshots written before it was added within format 1).
    std::optional<SnapshotEventSet> events;
    std::vector<SnapshotRowSet> rowSets;
    // Pauses and recovery jobs (added within format 1: absent in bundles written before, and
    // before schema v15 / v19).
    std::optional<SnapshotPauseSet> pauses;
    std::optional<SnapshotProcessingHistory> processingHistory; // added within format 1
    std::optional<SnapshotJobSet> jobs;
    // Who held back the transaction horizon at the instant, and the Idem tables' dead rows
    // (schema v26 on; added within format 1: absent before). Redacted: the query text and client.
    std::optional<HorizonReading> horizon;
    // The reconcile probes and each one's last run at the instant (schema v30 on; added within
    // format 1: absent before). Redacted: the offenders' error messages (they may quote values).
    std::optional<ReconcileReading> reconcile;
    // Takeovers, late calls refused and the lease advice over the history window, at most 24 h
    // (schema v31 on; added within format 1: absent before).
    std::optional<FencingReading> fencing;
    // Re-drive items and re-drivers (added within format 1: absent before, and before schema v25).
    std::optional<SnapshotRedriveSet> redrive;
    SnapshotAudit audit;

    // Set by the bundle writer when it signs: the fingerprint of the key it will sign with.
    std::optional<std::string> signingKeyFingerprint;

    const SnapshotRowSet* rowSet(std::string_view name) const;
};

// Progress and cancellation for a worker thread: progress(stage, 0..1) is called from the
// thread doing the work; a set cancel flag stops it at the next step with SnapshotCancelled.
struct SnapshotProgress {
    std::function<void(std::string_view stage, double fraction)> progress;
    const std::atomic<bool>* cancel = nullptr;

    void report(std::string_view stage, double fraction) const;
    void checkCancel() const; // throws SnapshotCancelled
};

class SnapshotCancelled : public std::runtime_error {
public:
    SnapshotCancelled()
        : std::runtime_error("snapshot export cancelled")
    {
    }
};

// Replaces text by "redacted:sha256:<hex>:<bytes>".
std::string redactedText(std::string_view text);

// Reads everything in one read-only REPEATABLE READ transaction on conn (never scanning
// succeeded rows: every set is bounded and served by the partial indexes). Throws
// std::invalid_argument for bad options, pqxx errors from the database.
SnapshotData readSnapshot(pqxx::connection& conn, const SnapshotOptions& options, const SnapshotContext& context,
    const SnapshotProgress& progress = {});

} // namespace idem
