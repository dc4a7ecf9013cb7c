#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include <pqxx/transaction>

#include "core/taskstore.h"

namespace idem {

// What a task throws to say how it failed. Anything else it throws counts as retryable.
class TaskFailure : public std::runtime_error {
public:
    TaskFailure(FailureClass cls, const std::string& message)
        : std::runtime_error(message)
        , m_class(cls)
    {
    }
    FailureClass failureClass() const { return m_class; }

private:
    FailureClass m_class;
};

struct TaskContext {
    const TaskKey& key;
    // Pass this downstream as the request's idempotency key: a retry after an unknown outcome
    // must reach the downstream with the same key so that its own dedup keeps one effect.
    std::string idempotencyKey;
    std::string token;
    int attempt = 1;
    // The last attempt's outcome is unknown (recorded as such, or its lease expired): the
    // downstream may already have acted on idempotencyKey.
    bool previousOutcomeUnknown = false;
};

// The task body. It runs inside the business transaction, after the fence: its writes commit
// together with the success record or not at all. It returns the result as JSON text.
using TaskFunction = std::function<std::string(pqxx::work& tx, const TaskContext& ctx)>;

struct RunOutcome {
    enum class Kind {
        Succeeded, // this call executed the task and committed it
        Replayed, // an earlier execution succeeded; resultJson is its stored result
        InProgress, // someone else is executing it; retry after claim.retryAfter
        Conflict, // the key was used with another request
        RetryLater, // in backoff; retry after claim.retryAfter
        Failed, // permanent or exhausted (now or earlier)
        WillRetry, // this attempt failed and was recorded as retryable
        LostOwnership, // the lease was lost before commit: the business writes were rolled back
        Paused, // an operator paused the key's tenant or operation: nothing ran; retry after
                // claim.retryAfter (error: the pause's reason, claim.detail: its scope)
    };
    Kind kind = Kind::InProgress;
    ClaimResult claim;
    std::string resultJson;
    std::string error;
    FailResult failure; // for WillRetry and a Failed that this call recorded
};

const char* runOutcomeName(RunOutcome::Kind kind);

// How runTask carries on after the connection broke or the server turned out read-only (a
// switchover: NotPrimary). Without `reconnect` it throws DatabaseUnavailable (NotPrimary) as it
// always did. With it, it calls reconnect(why), moves the store to the connection returned (the
// caller owns it; the old one may be closed by then) and does the step again, at most
// maxReconnects times per call:
// - the claim: safe whatever happened (a claim that did land and was not heard holds the key
//   until its lease expires; the retry is answered in_progress, and takes it over after that);
// - the fenced transaction (fence, the task's writes or `record`, complete), with the same token:
//   its fence decides. If the lease was taken over meanwhile it refuses (LostOwnership) and the
//   other executor's success stands, so there is never a second one. The downstream call is not
//   made again: its answer is kept. Not after a commit whose answer was lost (pqxx::in_doubt_error):
//   that outcome is unknown, and DatabaseUnavailable is thrown;
// - the recording of a failure, after NotPrimary only (which wrote nothing); a broken connection
//   there leaves it unknown whether it landed, and the lease decides.
// reconnect may throw (no primary found, the worker stopping): runTask throws that.
struct RunOptions {
    std::function<pqxx::connection&(const DatabaseUnavailable& why)> reconnect;
    int maxReconnects = 3;
    // One transaction for local effects (docs/workers-guide.md): the claim, the task's writes and
    // the completion are one transaction and one commit. Only for a task whose every effect is a
    // write to this database through tx (the call-then-record form refuses it): a concurrent
    // duplicate waits up to duplicateWait for the run to end, then replays its result (or answers
    // InProgress), and a crash or a lost connection rolls everything back, the claim included
    // (nothing to wait out; no attempt counted). A task that fails is rolled back and its failure
    // recorded after, on its own: the key is claimed again and failed, as the two-step run does.
    bool oneTransaction = false;
    std::chrono::milliseconds duplicateWait { 2000 }; // 1 ms .. limits::maxDuplicateWait
    // Record at commit (docs/workers-guide.md, "Record at commit"): the same mode without a claim
    // before the task. The task's writes run first, then one statement (idem_record_local) records
    // the key succeeded with the result, then the one commit: one row write and one Idem statement
    // per new key. A concurrent duplicate's record waits up to duplicateWait for the first's
    // commit and replays it (its writes rolled back), and so does a duplicate whose own write met
    // the first's uncommitted unique row (23505; 40P01 and 40001 likewise): rolled back, decided
    // from the stored row. A failure is recorded as oneTransaction does. Not with oneTransaction.
    bool recordAtCommit = false;
    // With recordAtCommit: read the key's row before the task (idem_peek_local, one primary-key
    // read), so a replay, a conflict or a pause is answered without running the task. Off, a
    // duplicate of a finished key runs the task and learns it is a replay at the record.
    bool checkFirst = true;
    // Issue 45 item 2: the two-step run's business transaction without the fence before the task:
    // BEGIN, the task's writes, complete, COMMIT (one statement fewer). complete() checks the owner
    // token under the row lock its UPDATE takes, so a stale attempt (the lease taken over while the
    // task ran) is refused there and its writes roll back with it (LostOwnership), as with the
    // fence. What the fence adds and this gives up: the row is not locked while the task runs, so a
    // lease that runs out mid-task may be taken over and the new executor's task may run beside the
    // old one until the old one's complete() refuses (only one commits). For tasks well inside their
    // lease. oneTransaction has no fence to leave out.
    bool fenceInComplete = false;
    // Schema v25 (docs/redrive.md): the request's canonical JSON text (the text whose v1 digest is
    // the request digest). Needed for an operation in StoreOptions::storeRequestsOf, whose claim
    // stores it (TaskStore::claim's third argument); ignored for others.
    std::string request;
};

// The outcome a claim that may not execute amounts to (replay, in progress, conflict, ...).
RunOutcome outcomeOfClaim(const ClaimResult& claim);

// Claim, execute in a fenced transaction, complete or classify the failure: the whole
// sequence, so a worker does not hand-roll it. Throws DatabaseUnavailable when the connection
// breaks (the outcome is then decided by the next claim after the lease) and NotPrimary when the
// server is read-only, unless RunOptions::reconnect carries on. For a task that only writes to
// this database; one that calls another service takes the form below. A statement of the task
// refused because the server is read-only (25006) is NotPrimary too, not a failure of the task.
RunOutcome runTask(TaskStore& store, const TaskKey& key, const std::string& requestDigest, const TaskFunction& task,
    const RunOptions& options = {});

// A task that calls another service (a payment provider, another team's API), in the order
// that keeps transactions short: first the call, with NO transaction open, passing
// ctx.idempotencyKey so the other service dedups a retry; then `record` writes the local
// effects in a short fenced transaction that also records the success. Holding the business
// transaction across the call would pin its row lock and, behind a pooler, a server connection
// for as long as the other service takes; with a small pool that deadlocks. The call returns
// what the other service answered (passed to record); it throws TaskFailure as the task does
// (a pqxx::broken_connection from the call's own connection counts as an unknown outcome). If
// the lease lapsed during the call and another executor took the key over, the fence refuses
// and the outcome is LostOwnership: the other service saw the same key twice and kept one.
using DownstreamCall = std::function<std::string(const TaskContext& ctx)>;
using RecordFunction
    = std::function<std::string(pqxx::work& tx, const TaskContext& ctx, const std::string& downstreamAnswer)>;
RunOutcome runTask(TaskStore& store, const TaskKey& key, const std::string& requestDigest, const DownstreamCall& call,
    const RecordFunction& record, const RunOptions& options = {});

} // namespace idem
