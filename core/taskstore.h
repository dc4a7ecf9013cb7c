#pragma once

#include <chrono>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

#include <pqxx/connection>
#include <pqxx/transaction>

#include "core/identifier.h"
#include "core/key.h"
#include "core/retrypolicy.h"

namespace idem {

class OutcomeCounters;

// Idem's own SQLSTATEs (the list, and what a caller does about each: docs/development.md, "Errors
// the functions raise"), and PostgreSQL's that the store acts on.
namespace sqlstate {
    inline constexpr const char* LostOwnership = "ID001";
    inline constexpr const char* NoRecord = "ID002"; // the thing named does not exist
    inline constexpr const char* InvalidArgument = "ID003"; // NULL, out of range, malformed
    inline constexpr const char* Refused = "ID004"; // the arguments are fine; a state or a policy refuses
    inline constexpr const char* ReadOnlyTransaction = "25006"; // PostgreSQL's read_only_sql_transaction
    inline constexpr const char* LockNotAvailable = "55P03"; // lock_timeout ran out
}

// The token no longer owns the row: its lease was taken over or released, or the row already
// finished. Whatever the caller did in the same transaction must not commit (it cannot: the
// transaction is aborted).
class LostOwnership : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// SQLSTATE ID004: the arguments are fine, but the database's state or a policy refuses the call
// (an operation not registered as re-drivable, a re-driver that has not reported itself online).
// Nothing changed; the same call succeeds once that state changes, so it is no bug in the call.
// what(): the server's message.
class Refused : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The connection broke. Whether the last statement took effect is unknown; the lease will
// expire and a later claim decides from the stored state.
class DatabaseUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The server refused the statement because it is read-only (SQLSTATE 25006): a standby, a primary
// demoted by a switchover (behind HAProxy, for the seconds the proxy takes to notice), or one with
// default_transaction_read_only on. Unlike a broken connection, nothing of the statement took
// effect. A kind of DatabaseUnavailable, so a worker that reconnects after one does so after this
// too: reconnect (a multi-host conninfo with target_session_attrs=read-write, or the proxy, finds
// the primary; idem::connectPrimary refuses a read-only server) and retry; runTask does with
// RunOptions::reconnect. what(): "the server is read-only (not the primary): <the server's reason>".
class NotPrimary : public DatabaseUnavailable {
public:
    using DatabaseUnavailable::DatabaseUnavailable;
};

enum class Decision {
    Acquired, // new key: this caller executes
    Reacquired, // lease expired or retry due: this caller executes, attempts + 1, new token
    Replay, // succeeded before: the stored result is the answer
    InProgress, // someone else holds a live lease: ask again after retryAfter
    Conflict, // same key, different request digest: nothing stored changed
    RetryLater, // a retryable failure whose backoff has not elapsed
    Failed, // permanent or exhausted: only an operator can reopen it
    Paused, // an operator paused the key's tenant or operation (schema v15): nothing changed, no
            // attempt counted; ask again after retryAfter (at most 5 s, never past the pause's end)
};

const char* decisionName(Decision d);

enum class FailureClass {
    Retryable, // definitely failed, safe to retry
    Permanent, // will never succeed: stop
    Unknown, // the request left and the answer was lost: retry with the same key only
};

const char* failureClassName(FailureClass c);

struct ClaimResult {
    Decision decision = Decision::InProgress;
    std::string detail; // new, lease_expired, retry_due, lease_live, locked, exhausted, ...; Paused: tenant:operation
                        // of the pause ('*' for all)
    std::string token; // set when this caller may execute
    int attempts = 0;
    int maxAttempts = 0;
    std::chrono::milliseconds retryAfter { 0 };
    std::string resultJson; // Replay: the stored result as JSON text ("null" when none)
    std::string storedDigest; // Conflict: empty since schema v13 (the stored digest is not revealed)
    std::string errorClass; // Failed / RetryLater
    std::string errorMessage; // Failed / RetryLater: the last error; Paused: the pause's reason
    // Paused: when the pause ends by the server's clock, as milliseconds from the claim's answer
    // (retryAfter never exceeds it); 0 for a pause until resumed.
    std::chrono::milliseconds pausedFor { 0 };

    bool mayExecute() const { return decision == Decision::Acquired || decision == Decision::Reacquired; }
};

struct FailResult {
    std::string status; // retryable_failed or failed
    int attempts = 0;
    bool exhausted = false;
    std::chrono::milliseconds retryDelay { 0 };
};

// The bounds the SQL functions enforce (resources/sql/migrations/0006_protocol_hardening.sql, ID003
// outside them). The store refuses options outside them when it is made and arguments outside
// them before any I/O, with std::invalid_argument.
namespace limits {
    inline constexpr std::chrono::milliseconds maxLease { 86'400'000 }; // 24 h (claim, heartbeat)
    inline constexpr std::chrono::milliseconds maxRetryDelay { 604'800'000 }; // 7 days
    inline constexpr std::chrono::milliseconds maxAge { 31'536'000'000 }; // 365 days
    inline constexpr int maxAttempts = 1000;
    inline constexpr std::size_t maxResultBytes = 64 << 20; // 64 MiB
    inline constexpr std::size_t maxDigestBytes = 256; // visible ASCII; a v1 digest is 67
    inline constexpr std::chrono::milliseconds maxDuplicateWait { 60'000 }; // idem_claim_local
}

struct StoreOptions {
    SchemaName schema;
    std::chrono::milliseconds lease { 30'000 }; // 1 ms .. limits::maxLease
    RetryPolicy retry; // maxAttempts <= limits::maxAttempts, maxDelay <= maxRetryDelay, maxAge <= limits::maxAge
    std::size_t maxResultBytes = 1 << 20; // 1 .. limits::maxResultBytes
    int maxSerializationRetries = 5; // SQLSTATE 40001 / 40P01
    // Schema v25 (docs/redrive.md): operations registered as re-drivable (idem::registerRedrivable).
    // Their claims go through idem_claim_stored, which stores the canonical request beside the key
    // when it is acquired, and need that request (claim's third argument, RunOptions::request).
    // Claims of other operations call claim() as before.
    std::set<std::string> storeRequestsOf;
    // Schema v32 (docs/workers-guide.md, "Which field differed"): operations whose claims keep a
    // keyed fingerprint per top-level field of the request (idem::fieldFingerprints, keyed by
    // fieldKey, 16 to 1024 bytes, the same for every worker of the operation), so that a digest
    // conflict shows which fields differed. Their claims go through idem_claim_fields and need the
    // canonical request (claim's third argument, RunOptions::request). Claims of other operations
    // call claim() as before and pay nothing for it.
    std::set<std::string> fingerprintFieldsOf;
    std::string fieldKey;
};

// The protocol on one connection (a connection belongs to one thread; use one store per
// worker thread). Every call is one round trip to one SQL function.
class TaskStore {
public:
    TaskStore(pqxx::connection& conn, StoreOptions options = {}, OutcomeCounters* counters = nullptr);

    const StoreOptions& options() const { return m_options; }
    pqxx::connection& connection() { return *m_conn; }
    // Moves the store to another connection (a new one, after the old one broke or turned out
    // read-only); options, counters and the jitter's state stay.
    void rebind(pqxx::connection& conn) { m_conn = &conn; }

    // Each call throws DatabaseUnavailable when the connection breaks and NotPrimary (a kind of
    // it) when the server is read-only.

    // Decides, from the stored state, what this caller does with the key (DESIGN section 3).
    // A digest that is not 1 to 256 bytes of visible ASCII is std::invalid_argument.
    ClaimResult claim(const TaskKey& key, const std::string& requestDigest);
    // The same, with the request's canonical JSON text (canonicalJson of the request without its
    // ignored fields: the text whose v1 digest is requestDigest). For an operation in
    // storeRequestsOf it is stored when the key is acquired; a request that is empty there is
    // std::invalid_argument before any I/O, one over the operation's bound or not matching the
    // digest is refused by the server (std::invalid_argument, nothing claimed or stored). For
    // other operations the request is not sent.
    ClaimResult claim(const TaskKey& key, const std::string& requestDigest, const std::string& canonicalRequest);
    // Whether claims of key's operation store their request (StoreOptions::storeRequestsOf).
    bool storesRequests(const TaskKey& key) const;
    // Whether claims of key's operation keep field fingerprints (StoreOptions::fingerprintFieldsOf).
    bool fingerprintsFields(const TaskKey& key) const;

    // One transaction for local effects (docs/workers-guide.md): the claim inside the caller's
    // business transaction tx (READ COMMITTED), through idem_claim_local. A concurrent holder of
    // the key (another such transaction, or an executor completing) is waited for up to `wait`
    // (1 ms .. limits::maxDuplicateWait), then the answer is what it left: a replay, or the key.
    // When the wait runs out the answer is InProgress [wait_timeout] and tx is aborted (it held
    // nothing): the caller only rolls it back; after any other answer that does not execute the
    // caller commits tx, which keeps what claim() records (a conflict, an exhaustion). An acquisition is not counted here (it is undone
    // if tx rolls back): count it with countClaim once tx committed. Run with fence not needed:
    // tx holds the row's lock from the claim to its commit.
    ClaimResult claimInTransaction(
        pqxx::work& tx, const TaskKey& key, const std::string& requestDigest, std::chrono::milliseconds wait);
    // Record at commit (docs/workers-guide.md, "Record at commit"), idem_peek_local: what the
    // stored row says a run of requestDigest should do, in a statement of its own, without taking
    // the key: Acquired [new] / Reacquired [retry_due, lease_expired] with no token (run the task,
    // then recordInTransaction), or claim()'s other answers (and its writes for them: a
    // conflict's record, an exhaustion). Not counted: the caller counts the answer it returns.
    ClaimResult peekLocal(const TaskKey& key, const std::string& requestDigest);
    // idem_record_local inside tx (READ COMMITTED), after the task's writes: records the key
    // succeeded with resultJson. Acquired [new] / Reacquired [retry_due, lease_expired] (no
    // token): commit tx. Any other answer wrote nothing: roll tx back (InProgress [wait_timeout]
    // after a wait that ran out aborted it), then ask peekLocal for the final answer (a replay's
    // result is in this one already). Not counted here. resultJson is checked as complete() does.
    ClaimResult recordInTransaction(pqxx::work& tx, const TaskKey& key, const std::string& requestDigest,
        const std::string& resultJson, std::chrono::milliseconds wait);
    // Counts what a claim decided (claim() does so itself).
    void countClaim(const TaskKey& key, const ClaimResult& claim);

    // fence, complete, heartbeat and fail take the token of a claim that may execute; any other
    // (the empty token of a claim that did not acquire the key) is std::invalid_argument, thrown
    // before any I/O, so a business transaction stays usable.

    // In the caller's business transaction, before its writes: lock the row, check the token.
    // Throws LostOwnership.
    void fence(pqxx::work& tx, const TaskKey& key, const std::string& token);
    // In the same transaction, after the business writes: mark succeeded with the result.
    // Throws LostOwnership (the transaction is then aborted) or std::invalid_argument for a
    // result that is not JSON or is larger than maxResultBytes, before any I/O.
    void complete(pqxx::work& tx, const TaskKey& key, const std::string& token, const std::string& resultJson);
    // Counts a success once the caller's transaction has committed (runTask does this; callers
    // driving complete() themselves call it after their commit, so a failed commit never counts).
    void countSucceeded(const TaskKey& key);
    // Extends the lease. Throws LostOwnership.
    std::chrono::system_clock::time_point heartbeat(const TaskKey& key, const std::string& token);
    // Records a failed attempt (`attempt` as the claim returned it); the retry delay is drawn
    // from the policy's jitter window for that attempt. Throws LostOwnership.
    FailResult fail(const TaskKey& key, const std::string& token, int attempt, FailureClass cls,
                    const std::string& message);

    // Tokens are made here, not by the database, so the statement that claims can be retried
    // and distributed without a volatile default.
    static std::string newToken();

private:
    template <typename Fn>
    auto withRetry(Fn&& fn);
    void count(const TaskKey& key, const char* outcome);
    // A result as complete() takes it: JSON, no NUL, at most maxResultBytes (std::invalid_argument).
    void requireResult(const std::string& resultJson) const;

    pqxx::connection* m_conn;
    StoreOptions m_options;
    OutcomeCounters* m_counters;
    std::mt19937_64 m_rng;
};

} // namespace idem
