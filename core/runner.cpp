#include "core/runner.h"

#include "core/connection.h"

#include <exception>
#include <utility>
#include <pqxx/pqxx>

namespace idem {

const char* runOutcomeName(RunOutcome::Kind kind)
{
    using K = RunOutcome::Kind;
    switch (kind) {
    case K::Succeeded:
        return "succeeded";
    case K::Replayed:
        return "replayed";
    case K::InProgress:
        return "in_progress";
    case K::Conflict:
        return "conflict";
    case K::RetryLater:
        return "retry_later";
    case K::Failed:
        return "failed";
    case K::WillRetry:
        return "will_retry";
    case K::LostOwnership:
        return "lost_ownership";
    case K::Paused:
        return "paused";
    }
    return "unknown";
}

RunOutcome outcomeOfClaim(const ClaimResult& c)
{
    RunOutcome out;
    out.claim = c;
    switch (c.decision) {
    case Decision::Replay:
        out.kind = RunOutcome::Kind::Replayed;
        out.resultJson = c.resultJson;
        break;
    case Decision::InProgress:
        out.kind = RunOutcome::Kind::InProgress;
        break;
    case Decision::Conflict:
        out.kind = RunOutcome::Kind::Conflict;
        out.error = c.storedDigest.empty() ? std::string("key already used with another request digest")
                                           : "key already used with request digest " + c.storedDigest;
        break;
    case Decision::RetryLater:
        out.kind = RunOutcome::Kind::RetryLater;
        out.error = c.errorMessage;
        break;
    case Decision::Failed:
        out.kind = RunOutcome::Kind::Failed;
        out.error = c.errorMessage;
        break;
    case Decision::Paused:
        out.kind = RunOutcome::Kind::Paused;
        out.error = "paused (" + c.detail + "): " + c.errorMessage;
        break;
    case Decision::Acquired:
    case Decision::Reacquired:
        break;
    }
    return out;
}

namespace {

    // RunOptions::reconnect, counted: whether the step that failed may be done again on a new connection.
    class Reconnects {
    public:
        Reconnects(TaskStore& store, const RunOptions& options)
            : m_store(store)
            , m_options(options)
        {
        }
        bool again(const DatabaseUnavailable& why)
        {
            if (!m_options.reconnect || m_used >= m_options.maxReconnects)
                return false;
            ++m_used;
            m_store.rebind(m_options.reconnect(why));
            return true;
        }

    private:
        TaskStore& m_store;
        const RunOptions& m_options;
        int m_used = 0;
    };

    ClaimResult claimWithReconnects(TaskStore& store, const TaskKey& key, const std::string& requestDigest,
        const std::string& request, Reconnects& reconnects)
    {
        for (;;) {
            try {
                return store.claim(key, requestDigest, request);
            } catch (const DatabaseUnavailable& e) {
                if (!reconnects.again(e))
                    throw;
            }
        }
    }

    // A failed attempt recorded with the token of `claim`, after its transaction rolled back.
    RunOutcome recordFailure(TaskStore& store, const TaskKey& key, const ClaimResult& claim, FailureClass cls,
        const std::string& message, Reconnects& reconnects)
    {
        RunOutcome out;
        out.claim = claim;
        out.error = message;
        for (;;) {
            try {
                out.failure = store.fail(key, claim.token, claim.attempts, cls, message);
                break;
            } catch (const LostOwnership& e) {
                out.kind = RunOutcome::Kind::LostOwnership;
                out.error = message + "; and the lease was lost before the failure was recorded: " + e.what();
                return out;
            } catch (const NotPrimary& e) {
                if (!reconnects.again(e))
                    throw;
            }
        }
        out.kind = out.failure.status == "failed" ? RunOutcome::Kind::Failed : RunOutcome::Kind::WillRetry;
        return out;
    }

    // What the fenced transaction's try came to when it did not succeed.
    enum class Attempt { Failed, Again };

    RunOutcome runClaimed(TaskStore& store, const TaskKey& key, const ClaimResult& claim, const DownstreamCall* call,
        const RecordFunction& record, Reconnects& reconnects, bool fenceInComplete)
    {
        RunOutcome out;
        out.claim = claim;
        // An executor whose lease ran out recorded nothing: its request may have left, just as
        // with a recorded unknown (the SQL classes such an attempt unknown when it exhausts).
        const bool previousUnknown = claim.errorClass == "unknown" || claim.detail == "lease_expired";
        const TaskContext ctx { key, key.str(), claim.token, claim.attempts, previousUnknown };

        FailureClass cls = FailureClass::Retryable;
        std::string message;
        bool failed = false;
        const auto classify = [&](const std::exception_ptr& error) {
            failed = true;
            try {
                std::rethrow_exception(error);
            } catch (const TaskFailure& e) {
                cls = e.failureClass();
                message = e.what();
            } catch (const std::invalid_argument& e) {
                // Bad output (an oversize result) will be just as bad next time.
                cls = FailureClass::Permanent;
                message = e.what();
            } catch (const std::exception& e) {
                message = e.what();
            }
        };

        // The downstream call, once: a fenced transaction tried again on a new connection keeps its answer.
        std::string answer;
        if (call) {
            try {
                try {
                    answer = (*call)(ctx);
                } catch (const pqxx::broken_connection& e) {
                    // The call's own connection: whether the other side acted is not known.
                    throw TaskFailure(FailureClass::Unknown, std::string("downstream connection lost: ") + e.what());
                }
            } catch (const DatabaseUnavailable&) {
                throw;
            } catch (const std::exception&) {
                classify(std::current_exception());
            }
        }

        while (!failed) {
            try {
                pqxx::work tx(store.connection());
                if (!fenceInComplete)
                    store.fence(tx, key, claim.token);
                std::string result = record(tx, ctx, answer);
                store.complete(tx, key, claim.token, result);
                tx.commit();
                store.countSucceeded(key);
                out.kind = RunOutcome::Kind::Succeeded;
                out.resultJson = std::move(result);
                return out;
            } catch (const LostOwnership& e) {
                out.kind = RunOutcome::Kind::LostOwnership;
                out.error = e.what();
                return out;
            } catch (const pqxx::in_doubt_error& e) {
                throw DatabaseUnavailable(
                    describeLostConnection(e.what()) + " during the commit: its outcome is unknown");
            } catch (const DatabaseUnavailable& e) {
                // The transaction is gone without a commit: the same token's fence decides again.
                if (!reconnects.again(e))
                    throw;
            } catch (const pqxx::broken_connection& e) {
                const DatabaseUnavailable lost(describeLostConnection(e.what()));
                if (!reconnects.again(lost))
                    throw lost;
            } catch (const pqxx::sql_error& e) {
                // A statement of the task's own refused by a read-only server is not the task's
                // failure: nothing was written, and the primary is elsewhere.
                if (!isReadOnlyRefusal(e)) {
                    classify(std::current_exception());
                } else {
                    const NotPrimary readOnly(describeReadOnly(e.what()));
                    if (!reconnects.again(readOnly))
                        throw readOnly;
                }
            } catch (const std::exception&) {
                classify(std::current_exception());
            }
        }

        // The business transaction is gone (rolled back) by now; record the failure on its own.
        return recordFailure(store, key, claim, cls, message, reconnects);
    }

    // What a task's exception amounts to: its class and message.
    std::pair<FailureClass, std::string> classifyFailure(const std::exception_ptr& error)
    {
        try {
            std::rethrow_exception(error);
        } catch (const TaskFailure& e) {
            return { e.failureClass(), e.what() };
        } catch (const std::invalid_argument& e) {
            return { FailureClass::Permanent, e.what() }; // bad output is just as bad next time
        } catch (const std::exception& e) {
            return { FailureClass::Retryable, e.what() };
        }
    }

    // One transaction for local effects: claim, the task and complete in one transaction. A
    // failure is recorded after the rollback, by a claim of its own (the rolled-back one left
    // no row, or the row as it was) and fail(), so it counts an attempt as the two-step run does.
    RunOutcome runInOneTransaction(TaskStore& store, const TaskKey& key, const std::string& requestDigest,
        const TaskFunction& task, const RunOptions& options, Reconnects& reconnects)
    {
        std::pair<FailureClass, std::string> failure;
        for (bool failed = false; !failed;) {
            try {
                pqxx::work tx(store.connection());
                const ClaimResult claim = store.claimInTransaction(tx, key, requestDigest, options.duplicateWait);
                if (!claim.mayExecute()) {
                    // What claim() wrote for such an answer (a conflict's record, an exhaustion)
                    // stands; after a wait that ran out tx is aborted and rolls back.
                    if (claim.detail != "wait_timeout")
                        tx.commit();
                    return outcomeOfClaim(claim);
                }
                const bool previousUnknown = claim.errorClass == "unknown" || claim.detail == "lease_expired";
                const TaskContext ctx { key, key.str(), claim.token, claim.attempts, previousUnknown };
                RunOutcome out;
                out.claim = claim;
                try {
                    out.resultJson = task(tx, ctx);
                    store.complete(tx, key, claim.token, out.resultJson);
                } catch (const DatabaseUnavailable&) {
                    throw;
                } catch (const LostOwnership&) {
                    throw;
                } catch (const pqxx::broken_connection&) {
                    throw;
                } catch (const pqxx::sql_error& e) {
                    if (isReadOnlyRefusal(e))
                        throw;
                    failure = classifyFailure(std::current_exception());
                    failed = true;
                    continue; // tx rolls back
                } catch (const std::exception&) {
                    failure = classifyFailure(std::current_exception());
                    failed = true;
                    continue;
                }
                tx.commit();
                store.countClaim(key, claim);
                store.countSucceeded(key);
                out.kind = RunOutcome::Kind::Succeeded;
                return out;
            } catch (const LostOwnership& e) {
                // Only an operator's release could take the row from under its lock; nothing committed.
                RunOutcome out;
                out.kind = RunOutcome::Kind::LostOwnership;
                out.error = e.what();
                return out;
            } catch (const pqxx::in_doubt_error& e) {
                throw DatabaseUnavailable(
                    describeLostConnection(e.what()) + " during the commit: its outcome is unknown");
            } catch (const DatabaseUnavailable& e) {
                // Before the commit: all of it rolled back, so the whole run may be done again.
                if (!reconnects.again(e))
                    throw;
            } catch (const pqxx::broken_connection& e) {
                const DatabaseUnavailable lost(describeLostConnection(e.what()));
                if (!reconnects.again(lost))
                    throw lost;
            } catch (const pqxx::sql_error& e) {
                if (!isReadOnlyRefusal(e))
                    throw;
                const NotPrimary readOnly(describeReadOnly(e.what()));
                if (!reconnects.again(readOnly))
                    throw readOnly;
            }
        }

        // The transaction rolled back: the key is absent or as it was. Claim it on its own and
        // record the failure, fenced by that claim's token.
        const ClaimResult claim = claimWithReconnects(store, key, requestDigest, options.request, reconnects);
        if (!claim.mayExecute()) {
            // Someone else claimed or finished it meanwhile (or a pause began): theirs is the answer.
            RunOutcome out = outcomeOfClaim(claim);
            out.error = failure.second + "; not recorded: the key was " + decisionName(claim.decision)
                + " when the failure was to be recorded";
            return out;
        }
        return recordFailure(store, key, claim, failure.first, failure.second, reconnects);
    }

    // A statement of the task met a concurrent transaction's write: a unique row another run of
    // the same key inserted first (23505), or writes that crossed (40P01, 40001).
    bool isCollision(const std::string& state)
    {
        return state == "23505" || state == "40P01" || state == "40001";
    }

    // Record at commit (docs/workers-guide.md): the task's writes, then idem_record_local, one
    // commit. A run whose record did not answer recorded is rolled back and idem_peek_local (on
    // its own) decides; so does a collision of the task's writes with a concurrent duplicate's.
    RunOutcome runRecordingAtCommit(TaskStore& store, const TaskKey& key, const std::string& requestDigest,
        const TaskFunction& task, const RunOptions& options, Reconnects& reconnects)
    {
        constexpr int maxRounds = 3;
        std::pair<FailureClass, std::string> failure;
        std::exception_ptr collision; // the task's 23505 / 40P01 / 40001 of the last round
        bool failed = false;
        for (int round = 0; !failed;) {
            try {
                ClaimResult ahead;
                ahead.decision = Decision::Acquired;
                ahead.detail = "new";
                if (options.checkFirst || round > 0) {
                    ahead = store.peekLocal(key, requestDigest);
                    if (!ahead.mayExecute()) {
                        store.countClaim(key, ahead);
                        return outcomeOfClaim(ahead);
                    }
                    if (collision) {
                        // The key is free: the unique row the task met is not a duplicate's.
                        const std::exception_ptr why = std::exchange(collision, nullptr);
                        try {
                            std::rethrow_exception(why);
                        } catch (const pqxx::sql_error& e) {
                            if (e.sqlstate() == "23505") {
                                failure = classifyFailure(why);
                                failed = true;
                                continue;
                            }
                        } catch (...) {
                        }
                    }
                }
                if (round++ >= maxRounds) {
                    ClaimResult busy;
                    busy.decision = Decision::InProgress;
                    busy.detail = "contended";
                    busy.retryAfter = std::chrono::milliseconds(50);
                    busy.maxAttempts = ahead.maxAttempts;
                    store.countClaim(key, busy);
                    return outcomeOfClaim(busy);
                }
                const bool previousUnknown = ahead.errorClass == "unknown" || ahead.detail == "lease_expired";
                const TaskContext ctx { key, key.str(), std::string(), ahead.attempts + 1, previousUnknown };
                pqxx::work tx(store.connection());
                RunOutcome out;
                ClaimResult recorded;
                try {
                    out.resultJson = task(tx, ctx);
                    recorded = store.recordInTransaction(tx, key, requestDigest, out.resultJson, options.duplicateWait);
                } catch (const DatabaseUnavailable&) {
                    throw;
                } catch (const pqxx::broken_connection&) {
                    throw;
                } catch (const pqxx::serialization_failure&) {
                    collision = std::current_exception();
                    continue; // tx rolls back; the peek decides
                } catch (const pqxx::deadlock_detected&) {
                    collision = std::current_exception();
                    continue;
                } catch (const pqxx::sql_error& e) {
                    if (isReadOnlyRefusal(e))
                        throw;
                    if (isCollision(e.sqlstate())) {
                        collision = std::current_exception();
                        continue;
                    }
                    failure = classifyFailure(std::current_exception());
                    failed = true;
                    continue;
                } catch (const std::exception&) {
                    failure = classifyFailure(std::current_exception());
                    failed = true;
                    continue;
                }
                if (recorded.mayExecute()) {
                    tx.commit();
                    store.countClaim(key, recorded);
                    store.countSucceeded(key);
                    out.claim = recorded;
                    out.kind = RunOutcome::Kind::Succeeded;
                    return out;
                }
                tx.abort();
                if (recorded.decision == Decision::Replay || recorded.detail == "wait_timeout") {
                    store.countClaim(key, recorded);
                    return outcomeOfClaim(recorded);
                }
                // Another answer from the stored row: the peek gives it, with claim()'s writes for it.
            } catch (const pqxx::in_doubt_error& e) {
                throw DatabaseUnavailable(
                    describeLostConnection(e.what()) + " during the commit: its outcome is unknown");
            } catch (const DatabaseUnavailable& e) {
                if (!reconnects.again(e))
                    throw;
            } catch (const pqxx::broken_connection& e) {
                const DatabaseUnavailable lost(describeLostConnection(e.what()));
                if (!reconnects.again(lost))
                    throw lost;
            } catch (const pqxx::sql_error& e) {
                if (!isReadOnlyRefusal(e))
                    throw;
                const NotPrimary readOnly(describeReadOnly(e.what()));
                if (!reconnects.again(readOnly))
                    throw readOnly;
            }
        }

        // Rolled back: record the failure as one transaction for local effects does.
        const ClaimResult claim = claimWithReconnects(store, key, requestDigest, options.request, reconnects);
        if (!claim.mayExecute()) {
            RunOutcome out = outcomeOfClaim(claim);
            out.error = failure.second + "; not recorded: the key was " + decisionName(claim.decision)
                + " when the failure was to be recorded";
            return out;
        }
        return recordFailure(store, key, claim, failure.first, failure.second, reconnects);
    }

} // namespace

RunOutcome runTask(TaskStore& store, const TaskKey& key, const std::string& requestDigest, const TaskFunction& task,
    const RunOptions& options)
{
    Reconnects reconnects(store, options);
    if (options.oneTransaction && options.recordAtCommit)
        throw std::invalid_argument("oneTransaction and recordAtCommit are two forms of one transaction for local"
                                    " effects: choose one");
    if (options.recordAtCommit)
        return runRecordingAtCommit(store, key, requestDigest, task, options, reconnects);
    if (options.oneTransaction)
        return runInOneTransaction(store, key, requestDigest, task, options, reconnects);
    const ClaimResult claim = claimWithReconnects(store, key, requestDigest, options.request, reconnects);
    if (!claim.mayExecute())
        return outcomeOfClaim(claim);
    return runClaimed(
        store, key, claim, nullptr,
        [&task](pqxx::work& tx, const TaskContext& ctx, const std::string&) { return task(tx, ctx); }, reconnects,
        options.fenceInComplete);
}

RunOutcome runTask(TaskStore& store, const TaskKey& key, const std::string& requestDigest, const DownstreamCall& call,
    const RecordFunction& record, const RunOptions& options)
{
    if (options.oneTransaction || options.recordAtCommit)
        throw std::invalid_argument("one transaction is only for a task whose effects are all in this database; "
                                    "a task that calls another service runs in two steps");
    Reconnects reconnects(store, options);
    const ClaimResult claim = claimWithReconnects(store, key, requestDigest, options.request, reconnects);
    if (!claim.mayExecute())
        return outcomeOfClaim(claim);
    return runClaimed(store, key, claim, &call, record, reconnects, options.fenceInComplete);
}

} // namespace idem
