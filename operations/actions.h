#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>
#include <pqxx/except>

#include "core/identifier.h"

namespace idem {

// Audited manual recovery actions (DESIGN section 5). Each action is one SECURITY DEFINER SQL
// function in resources/sql/migrations/0003_actions.sql (idem_requeue, idem_release, idem_fail) that checks
// the row still has the status and updated_at the operator saw, changes it and appends a
// hash-chained audit entry, in one transaction. Nothing here deletes a row or touches a
// succeeded one. No Qt: the console calls this from its worker thread, idemctl directly.
enum class RecoveryAction {
    Requeue, // failed | retryable_failed -> retryable_failed, due now, max_attempts = attempts + N
    Release, // processing -> lease expired now, owner token revoked (the old executor gets ID001)
    Fail, // processing | retryable_failed -> failed (class permanent), token revoked: no more retries
};

const char* actionName(RecoveryAction a); // "requeue", "release", "fail" (as in the audit's action column)
std::optional<RecoveryAction> parseAction(const std::string& name);
// The statuses an action applies to; anything else (succeeded always) is refused as WrongState.
bool actionAppliesTo(RecoveryAction a, const std::string& status);

// The version of a row the operator saw. updated_at travels as integer microseconds since the
// Unix epoch (PostgreSQL's own resolution), so comparing it is exact: read it with
// updatedAtMicrosSql() (or readRowVersions), never through a float or a formatted timestamp.
struct RowVersion {
    std::string key;
    std::string status;
    std::int64_t updatedAtUs = 0;
};

// "(extract(epoch FROM updated_at) * 1000000)::bigint" for a column or qualified column.
std::string updatedAtMicrosSql(const std::string& column = "updated_at");
// The timestamptz of bound parameter $n given as integer microseconds since the Unix epoch
// (the inverse of updatedAtMicrosSql: exact, no text or float between), parenthesised.
std::string microsParamSql(int n);
// ISO 8601 UTC with microseconds, e.g. 2024-05-01T10:00:00.123456Z, for messages and output.
std::string formatMicros(std::int64_t us);

struct ActionOptions {
    static constexpr int maxReasonChars = 16384; // characters (code points); the SQL enforces the same
    static constexpr int maxExtraAttempts = 1000;
    static constexpr int maxActorChars = 256;

    std::string reason; // mandatory: a visible character (see reasonIsBlank), no NUL, valid UTF-8
    int extraAttempts = 1; // Requeue: the row may run this many more times (1..maxExtraAttempts)
    // Who is acting, as the client knows it (recorded in the audit's os_user; unverified by the
    // server, which records session_user and the client address itself). Empty: localActor().
    std::string actor;
    // How long to wait, for each lock: the task's row (its executor holds it while completing)
    // and the audit trail (another action holds it from its append until its transaction ends).
    int lockTimeoutMs = 5000;
    // Requeue only (schema v25, docs/redrive.md): also queue a re-execution of the stored request
    // (idem_requeue_reexecute); a key with no stored request is refused as NotRedrivable.
    bool reexecute = false;
};

// Whether a reason has no visible character: every code point is White_Space, a control (Cc) or
// one rendered invisible (Default_Ignorable_Code_Point, e.g. U+00AD, U+180E, U+200B-U+200F,
// U+2060-U+206F, U+FEFF, variation selectors, plane 14 tags; also U+FFF9-U+FFFB and the braille
// blank U+2800). The SQL functions refuse the same reasons (audit_reason_blank in
// resources/sql/migrations/0007_audit_hardening.sql holds the same list). One visible character is enough,
// and the reason is then kept exactly as given. Ill-formed UTF-8 is not blank: validation
// reports the encoding instead.
bool reasonIsBlank(const std::string& reason);

// login@hostname of this process (getpwuid / gethostname), for ActionOptions::actor.
std::string localActor();

// Throws std::invalid_argument with the reason, before any I/O, for options the SQL would refuse
// (SQLSTATE ID003): blank (reasonIsBlank) or oversize reason, NUL bytes, invalid UTF-8, extra attempts out of range.
void validateActionOptions(RecoveryAction a, const ActionOptions& options);

// The reason and actor rules alone (validateActionOptions' first checks), for the other audited
// changes: retention, purge, pauses. Throws std::invalid_argument before any I/O.
void validateReasonAndActor(const std::string& reason, const std::string& actor);

enum class ActionOutcome {
    Applied, // changed, audit entry auditId appended
    Stale, // the row changed since it was read (status or updated_at differ): nothing changed
    WrongState, // the row is as seen, but the action does not apply to its status: nothing changed
    NotFound, // no row with that key: nothing changed
    Denied, // SQLSTATE 42501: this role may not run the action (not idem_operator)
    // SQLSTATE ID004 (schema v23): over the approval policy's budget, this login may change no more
    // rows without a second person's approval (the message says how to get it approved)
    NeedsApproval,
    // Schema v25: a requeue with re-execute for a key without a stored request (its operation was
    // not re-drivable when it was claimed): nothing changed
    NotRedrivable,
    Error, // any other failure for this key (message, sqlstate); nothing of it committed
    Skipped, // bulk only: not attempted (stopped by the caller or after a lost connection)
};
constexpr std::size_t actionOutcomeCount = 9; // the values above, for tables indexed by them

// The server's words for a refusal: its message and hint, without where in a function it was
// raised (CONTEXT) or trailing blanks. Quote it through displaySafe.
std::string serverWords(const pqxx::sql_error& e);

// Idem's refusals in words, each of which changed nothing: ID002 (the thing named does not
// exist), ID003 (a bad argument), ID004 (refused by a state or a policy). docs/development.md,
// "Errors the functions raise", lists them.
bool isIdemRefusal(const std::string& sqlstate);

// applied, stale, wrong_state, not_found, denied, needs_approval, not_redrivable, error, skipped
const char* outcomeName(ActionOutcome o);
// Stale, WrongState, NotFound, Denied, NeedsApproval, NotRedrivable: the database said no, nothing changed
bool isRefusal(ActionOutcome o);

struct ActionResult {
    std::string key;
    ActionOutcome outcome = ActionOutcome::Error;
    // Applied: the row after the action. Stale / WrongState: the row as it is now (so the
    // operator sees what changed). Unset for NotFound / Denied / Error / Skipped.
    std::string status;
    std::optional<std::int64_t> updatedAtUs;
    std::string rowImage; // the row as JSON (result_json replaced by its SHA-256), same as the audit's images
    std::optional<std::int64_t> auditId; // Applied only
    std::string message; // one line for people: what happened and, on refusal, what changed
    std::string sqlstate; // Denied / Error, when the server gave one
    std::optional<std::int64_t> redriveItemId; // Applied with ActionOptions::reexecute: the re-drive item queued
};

// Runs one action on one key, in its own transaction (READ COMMITTED), retrying 40001/40P01.
// Refusals are results, not exceptions. Throws std::invalid_argument for bad options (nothing
// sent), DatabaseUnavailable (core/taskstore.h) when the connection broke (the outcome is then
// unknown: look the key up in the audit), and std::runtime_error when the schema has no
// recovery actions yet (migrate to version 3). SQL errors for the key become Denied / Error.
ActionResult applyAction(pqxx::connection& conn, const SchemaName& schema, RecoveryAction action,
    const RowVersion& expected, const ActionOptions& options);

// Called after each key; return false to stop (the rest are reported Skipped).
using ActionProgress = std::function<bool(std::size_t done, std::size_t total, const ActionResult& last)>;

// applyAction per key, in order, one transaction each (no transaction spans keys); one result
// per key in the same order. Validates the options once before anything is sent. A lost
// connection ends the run: that key is Error (outcome unknown), the rest Skipped.
std::vector<ActionResult> applyBulk(pqxx::connection& conn, const SchemaName& schema, RecoveryAction action,
    const std::vector<RowVersion>& expected, const ActionOptions& options, const ActionProgress& progress = {});

// The current (status, updated_at) of each key, in the order given; unset when there is no such
// row. Read-only, keys bound as one JSON array parameter per chunk of 1000 keys. This is what
// idemctl acts on ("what is there now"): it reads, then acts on what it read.
std::vector<std::optional<RowVersion>> readRowVersions(
    pqxx::connection& conn, const SchemaName& schema, const std::vector<std::string>& keys);

} // namespace idem
