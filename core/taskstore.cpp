#include "core/taskstore.h"

#include <array>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <thread>

#include <openssl/rand.h>

#include "core/connection.h"
#include "core/counters.h"
#include "core/utf8.h"

namespace idem {

namespace {

    const char* classOutcome(FailureClass c)
    {
        switch (c) {
        case FailureClass::Retryable:
            return outcome::FailedRetryable;
        case FailureClass::Permanent:
            return outcome::FailedPermanent;
        case FailureClass::Unknown:
            return outcome::FailedUnknown;
        }
        return outcome::FailedRetryable;
    }

    // A token as claim() hands it out: a UUID in its 8-4-4-4-12 hex form.
    void requireToken(const std::string& token)
    {
        bool ok = token.size() == 36;
        for (std::size_t i = 0; ok && i < token.size(); ++i) {
            const char c = token[i];
            ok = (i == 8 || i == 13 || i == 18 || i == 23)
                ? c == '-'
                : (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        }
        if (!ok)
            throw std::invalid_argument(token.empty()
                    ? std::string("no owner token: only a claim that acquired the key may fence, complete, "
                                  "heartbeat or fail it")
                    : "owner token '" + token.substr(0, 64) + "' is not a UUID");
    }

    void requireDigest(const std::string& digest)
    {
        if (digest.empty() || digest.size() > limits::maxDigestBytes)
            throw std::invalid_argument("request digest must be 1 to " + std::to_string(limits::maxDigestBytes)
                                        + " bytes, not " + std::to_string(digest.size()));
        for (const char c : digest)
            if (c < '!' || c > '~')
                throw std::invalid_argument("request digest must be visible ASCII (no spaces)");
    }

    [[noreturn]] void rethrowProtocolError(const pqxx::sql_error& e)
    {
        const std::string state = e.sqlstate();
        if (state == sqlstate::LostOwnership || state == sqlstate::NoRecord)
            throw LostOwnership(e.what());
        if (state == sqlstate::InvalidArgument)
            throw std::invalid_argument(e.what());
        if (state == sqlstate::Refused)
            throw Refused(e.what());
        if (state == sqlstate::ReadOnlyTransaction)
            throw NotPrimary(describeReadOnly(e.what()));
        throw;
    }

} // namespace

const char* decisionName(Decision d)
{
    switch (d) {
    case Decision::Acquired:
        return "acquired";
    case Decision::Reacquired:
        return "reacquired";
    case Decision::Replay:
        return "replay";
    case Decision::InProgress:
        return "in_progress";
    case Decision::Conflict:
        return "conflict";
    case Decision::RetryLater:
        return "retry_later";
    case Decision::Failed:
        return "failed";
    case Decision::Paused:
        return "paused";
    }
    return "unknown";
}

const char* failureClassName(FailureClass c)
{
    switch (c) {
    case FailureClass::Retryable:
        return "retryable";
    case FailureClass::Permanent:
        return "permanent";
    case FailureClass::Unknown:
        return "unknown";
    }
    return "retryable";
}

TaskStore::TaskStore(pqxx::connection& conn, StoreOptions options, OutcomeCounters* counters)
    : m_conn(&conn)
    , m_options(std::move(options))
    , m_counters(counters)
    , m_rng(std::random_device {}())
{
    m_options.retry.validate();
    if (m_options.lease.count() <= 0 || m_options.lease > limits::maxLease)
        throw std::invalid_argument("lease must be 1 to " + std::to_string(limits::maxLease.count()) + " ms");
    if (m_options.maxResultBytes < 1 || m_options.maxResultBytes > limits::maxResultBytes)
        throw std::invalid_argument("maxResultBytes must be 1 to " + std::to_string(limits::maxResultBytes));
    if (m_options.retry.maxAttempts > limits::maxAttempts)
        throw std::invalid_argument("retry policy: maxAttempts must be at most " + std::to_string(limits::maxAttempts));
    if (m_options.retry.maxDelay > limits::maxRetryDelay)
        throw std::invalid_argument(
            "retry policy: maxDelay must be at most " + std::to_string(limits::maxRetryDelay.count()) + " ms");
    if (m_options.retry.maxAge > limits::maxAge)
        throw std::invalid_argument(
            "retry policy: maxAge must be at most " + std::to_string(limits::maxAge.count()) + " ms");
}

std::string TaskStore::newToken()
{
    std::array<unsigned char, 16> b {};
    if (RAND_bytes(b.data(), static_cast<int>(b.size())) != 1)
        throw std::runtime_error("OpenSSL RAND_bytes failed");
    b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40); // version 4
    b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80); // RFC 4122 variant
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out.push_back('-');
        out.push_back(hex[b[i] >> 4]);
        out.push_back(hex[b[i] & 0x0f]);
    }
    return out;
}

template <typename Fn>
auto TaskStore::withRetry(Fn&& fn)
{
    for (int attempt = 0;; ++attempt) {
        try {
            return fn();
        } catch (const pqxx::broken_connection& e) {
            throw DatabaseUnavailable(describeLostConnection(e.what()));
        } catch (const pqxx::serialization_failure&) {
            // libpqxx 6 reports 40001 and 40P01 as these, which are not sql_errors there.
            if (attempt >= m_options.maxSerializationRetries)
                throw;
        } catch (const pqxx::deadlock_detected&) {
            if (attempt >= m_options.maxSerializationRetries)
                throw;
        } catch (const pqxx::sql_error& e) {
            const std::string state = e.sqlstate();
            const bool transient = state == "40001" || state == "40P01";
            if (!transient || attempt >= m_options.maxSerializationRetries)
                rethrowProtocolError(e);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1 << std::min(attempt, 6)));
    }
}

void TaskStore::count(const TaskKey& key, const char* what)
{
    if (m_counters)
        m_counters->add(key.tenant(), key.operation(), what);
}

namespace {

    // The columns claim() and idem_claim_local() answer, as the store reads them.
    const char* const claimColumns
        = "SELECT decision, detail, owner_token, attempts, max_attempts, retry_after_ms,"
          "       result_json, request_hash, error_class, error_message,"
          "       CASE WHEN decision = 'paused' AND lease_until IS NOT NULL"
          "            THEN GREATEST(1, ceil(extract(epoch FROM lease_until - now()) OPERATOR(pg_catalog.*) 1000::numeric))::bigint"
          "       END FROM ";

    ClaimResult claimFromRow(const pqxx::row& row)
    {
        ClaimResult c;
        const std::string decision = row[0].as<std::string>();
        c.detail = row[1].is_null() ? std::string() : row[1].as<std::string>();
        c.attempts = row[3].as<int>();
        c.maxAttempts = row[4].as<int>();
        c.retryAfter = std::chrono::milliseconds(row[5].as<long long>());
        if (!row[8].is_null())
            c.errorClass = row[8].as<std::string>();
        if (!row[9].is_null())
            c.errorMessage = row[9].as<std::string>();
        if (decision == "recorded" || decision == "run") {
            // Record at commit (idem_record_local, idem_peek_local): the key recorded, or free to
            // be; as an acquisition (new) or a takeover, with no token.
            c.decision = c.detail == "new" ? Decision::Acquired : Decision::Reacquired;
        } else if (decision == "acquired") {
            c.decision = Decision::Acquired;
            c.token = row[2].as<std::string>();
        } else if (decision == "reacquired") {
            c.decision = Decision::Reacquired;
            c.token = row[2].as<std::string>();
        } else if (decision == "replay") {
            c.decision = Decision::Replay;
            c.resultJson = row[6].is_null() ? "null" : row[6].as<std::string>();
        } else if (decision == "in_progress") {
            c.decision = Decision::InProgress;
        } else if (decision == "conflict") {
            c.decision = Decision::Conflict;
            // Empty since schema v13: a conflict does not reveal the stored digest (docs/deployment.md, "Who can read what").
            c.storedDigest = row[7].is_null() ? std::string() : row[7].as<std::string>();
        } else if (decision == "retry_later") {
            c.decision = Decision::RetryLater;
        } else if (decision == "failed") {
            c.decision = Decision::Failed;
        } else if (decision == "paused") {
            c.decision = Decision::Paused;
            if (!row[10].is_null())
                c.pausedFor = std::chrono::milliseconds(row[10].as<long long>());
        } else {
            throw std::runtime_error("claim returned an unknown decision '" + decision + "'; is the schema newer?");
        }
        return c;
    }

} // namespace

void TaskStore::countClaim(const TaskKey& key, const ClaimResult& c)
{
    switch (c.decision) {
    case Decision::Acquired:
        return count(key, outcome::Acquired);
    case Decision::Reacquired:
        return count(key, c.detail == "lease_expired" ? outcome::ReacquiredLease : outcome::ReacquiredRetry);
    case Decision::Replay:
        return count(key, outcome::Replayed);
    case Decision::InProgress:
        return count(key, outcome::InProgress);
    case Decision::Conflict:
        return count(key, outcome::Conflict);
    case Decision::RetryLater:
        return count(key, outcome::RetryLater);
    case Decision::Failed:
        return count(key, c.detail == "exhausted" ? outcome::Exhausted : outcome::RejectedFailed);
    case Decision::Paused:
        return count(key, outcome::Paused);
    }
}

ClaimResult TaskStore::claim(const TaskKey& key, const std::string& requestDigest)
{
    return claim(key, requestDigest, std::string());
}

bool TaskStore::storesRequests(const TaskKey& key) const
{
    return !m_options.storeRequestsOf.empty() && m_options.storeRequestsOf.count(key.operation()) > 0;
}

ClaimResult TaskStore::claim(const TaskKey& key, const std::string& requestDigest, const std::string& canonicalRequest)
{
    requireDigest(requestDigest);
    const bool stored = storesRequests(key);
    if (stored && canonicalRequest.empty())
        throw std::invalid_argument("operation " + key.operation()
            + " is re-drivable (StoreOptions::storeRequestsOf): its claims store the request, so the canonical"
              " request is required");
    const std::string token = newToken();
    const auto maxAge = m_options.retry.maxAge.count();
    const pqxx::result r = withRetry([&] {
        // One statement is its own transaction: no BEGIN and COMMIT round trips around it
        // (pqxx::work would send both, tripling a replay's round trips).
        pqxx::nontransaction w(*m_conn);
        const std::string ageText = std::to_string(maxAge);
        const char* age = maxAge > 0 ? ageText.c_str() : nullptr;
        if (stored)
            return w.exec_params(claimColumns + m_options.schema.qualify("idem_claim_stored")
                    + "($1, $2, $3::uuid, $4, $5, $6, $7)",
                key.str(), requestDigest, token, static_cast<long long>(m_options.lease.count()),
                m_options.retry.maxAttempts, age, canonicalRequest);
        return w.exec_params(claimColumns + m_options.schema.qualify("claim") + "($1, $2, $3::uuid, $4, $5, $6)",
            key.str(), requestDigest, token, static_cast<long long>(m_options.lease.count()),
            m_options.retry.maxAttempts, age);
    });
    const ClaimResult c = claimFromRow(r[0]);
    countClaim(key, c);
    return c;
}

ClaimResult TaskStore::claimInTransaction(
    pqxx::work& tx, const TaskKey& key, const std::string& requestDigest, std::chrono::milliseconds wait)
{
    requireDigest(requestDigest);
    if (storesRequests(key))
        throw std::invalid_argument("operation " + key.operation()
            + " is re-drivable (StoreOptions::storeRequestsOf): its claims store the request, which one"
              " transaction for local effects does not do yet; run it in two steps");
    if (wait.count() < 1 || wait > limits::maxDuplicateWait)
        throw std::invalid_argument(
            "the wait for a duplicate must be 1 to " + std::to_string(limits::maxDuplicateWait.count()) + " ms");
    const std::string token = newToken();
    const auto maxAge = m_options.retry.maxAge.count();
    ClaimResult c;
    try {
        const pqxx::result r = tx.exec_params(claimColumns + m_options.schema.qualify("idem_claim_local")
                + "($1, $2, $3::uuid, $4, $5, $6, $7)",
            key.str(), requestDigest, token, static_cast<long long>(m_options.lease.count()),
            m_options.retry.maxAttempts,
            maxAge > 0 ? std::to_string(maxAge).c_str() : static_cast<const char*>(nullptr),
            static_cast<int>(wait.count()));
        c = claimFromRow(r[0]);
    } catch (const pqxx::broken_connection& e) {
        throw DatabaseUnavailable(describeLostConnection(e.what()));
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() != sqlstate::LockNotAvailable)
            rethrowProtocolError(e);
        // Another transaction held the key for the whole wait; tx is aborted (it holds nothing).
        c.decision = Decision::InProgress;
        c.detail = "wait_timeout";
        c.retryAfter = std::chrono::milliseconds(50);
        c.maxAttempts = m_options.retry.maxAttempts;
    }
    // An acquisition counts once it committed (the caller counts it then, or the failure's own
    // claim does): a run rolled back left nothing, not even a count.
    if (!c.mayExecute())
        countClaim(key, c);
    return c;
}

void TaskStore::requireResult(const std::string& resultJson) const
{
    if (resultJson.size() > m_options.maxResultBytes)
        throw std::invalid_argument("result is " + std::to_string(resultJson.size()) + " bytes, more than the "
                                    + std::to_string(m_options.maxResultBytes) + " allowed");
    // libpq sends a text parameter up to its first NUL, so {"a":1}\0... would be stored as
    // {"a":1}; nlohmann's accept() takes the NUL for the end of the input and says yes.
    if (const auto nul = resultJson.find('\0'); nul != std::string::npos)
        throw std::invalid_argument(
            "result is not valid JSON: unexpected byte 0x00 at offset " + std::to_string(nul));
    if (!nlohmann::json::accept(resultJson))
        throw std::invalid_argument("result is not valid JSON");
}

ClaimResult TaskStore::peekLocal(const TaskKey& key, const std::string& requestDigest)
{
    requireDigest(requestDigest);
    const auto maxAge = m_options.retry.maxAge.count();
    const pqxx::result r = withRetry([&] {
        pqxx::nontransaction w(*m_conn);
        return w.exec_params(claimColumns + m_options.schema.qualify("idem_peek_local") + "($1, $2, $3, $4)",
            key.str(), requestDigest, m_options.retry.maxAttempts,
            maxAge > 0 ? std::to_string(maxAge).c_str() : static_cast<const char*>(nullptr));
    });
    return claimFromRow(r[0]);
}

ClaimResult TaskStore::recordInTransaction(pqxx::work& tx, const TaskKey& key, const std::string& requestDigest,
    const std::string& resultJson, std::chrono::milliseconds wait)
{
    requireDigest(requestDigest);
    if (storesRequests(key))
        throw std::invalid_argument("operation " + key.operation()
            + " is re-drivable (StoreOptions::storeRequestsOf): its claims store the request, which one"
              " transaction for local effects does not do yet; run it in two steps");
    if (wait.count() < 1 || wait > limits::maxDuplicateWait)
        throw std::invalid_argument(
            "the wait for a duplicate must be 1 to " + std::to_string(limits::maxDuplicateWait.count()) + " ms");
    requireResult(resultJson);
    const auto maxAge = m_options.retry.maxAge.count();
    ClaimResult c;
    try {
        const pqxx::result r = tx.exec_params(claimColumns + m_options.schema.qualify("idem_record_local")
                + "($1, $2, $3::jsonb, $4, $5, $6, $7)",
            key.str(), requestDigest, resultJson, m_options.retry.maxAttempts,
            maxAge > 0 ? std::to_string(maxAge).c_str() : static_cast<const char*>(nullptr),
            static_cast<int>(wait.count()), static_cast<long long>(m_options.maxResultBytes));
        c = claimFromRow(r[0]);
    } catch (const pqxx::broken_connection& e) {
        throw DatabaseUnavailable(describeLostConnection(e.what()));
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() != sqlstate::LockNotAvailable)
            rethrowProtocolError(e);
        c.decision = Decision::InProgress;
        c.detail = "wait_timeout";
        c.retryAfter = std::chrono::milliseconds(50);
        c.maxAttempts = m_options.retry.maxAttempts;
    }
    return c;
}

void TaskStore::fence(pqxx::work& tx, const TaskKey& key, const std::string& token)
{
    requireToken(token);
    try {
        tx.exec_params("SELECT 1 FROM " + m_options.schema.qualify("fence") + "($1, $2::uuid)", key.str(), token);
    } catch (const pqxx::broken_connection& e) {
        throw DatabaseUnavailable(describeLostConnection(e.what()));
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() == sqlstate::LostOwnership || e.sqlstate() == sqlstate::NoRecord)
            count(key, outcome::StaleToken);
        rethrowProtocolError(e);
    }
}

void TaskStore::complete(pqxx::work& tx, const TaskKey& key, const std::string& token, const std::string& resultJson)
{
    requireToken(token);
    requireResult(resultJson);
    try {
        tx.exec_params("SELECT " + m_options.schema.qualify("complete") + "($1, $2::uuid, $3::jsonb, $4)", key.str(),
                       token, resultJson, static_cast<long long>(m_options.maxResultBytes));
    } catch (const pqxx::broken_connection& e) {
        throw DatabaseUnavailable(describeLostConnection(e.what()));
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() == sqlstate::LostOwnership)
            count(key, outcome::StaleToken);
        rethrowProtocolError(e);
    }
}

void TaskStore::countSucceeded(const TaskKey& key)
{
    count(key, outcome::Succeeded);
}

std::chrono::system_clock::time_point TaskStore::heartbeat(const TaskKey& key, const std::string& token)
{
    requireToken(token);
    try {
        const auto r = withRetry([&] {
            pqxx::nontransaction w(*m_conn); // one statement: no BEGIN/COMMIT round trips
            auto res = w.exec_params("SELECT extract(epoch FROM " + m_options.schema.qualify("heartbeat")
                                         + "($1, $2::uuid, $3))::float8",
                                     key.str(), token, static_cast<long long>(m_options.lease.count()));
            return res;
        });
        const auto seconds = r[0][0].as<double>();
        return std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(seconds)));
    } catch (const LostOwnership&) {
        count(key, outcome::StaleToken);
        throw;
    }
}

FailResult TaskStore::fail(const TaskKey& key, const std::string& token, int attempt, FailureClass cls,
                           const std::string& message)
{
    requireToken(token);
    // PostgreSQL text holds neither NUL nor ill-formed UTF-8, and a task's exception text may
    // carry any bytes: escape such a message rather than lose the failure it describes.
    const bool storable = message.find('\0') == std::string::npos && !utf8Problem(message);
    const std::string text = storable ? message : quoteForMessage(message, 8192);
    FailResult out;
    out.retryDelay = m_options.retry.delayAfter(attempt, m_rng);
    const auto maxAge = m_options.retry.maxAge.count();
    try {
        const auto r = withRetry([&] {
            pqxx::nontransaction w(*m_conn); // one statement: no BEGIN/COMMIT round trips
            auto res = w.exec_params("SELECT status, attempts, exhausted FROM " + m_options.schema.qualify("fail")
                                         + "($1, $2::uuid, $3, $4, $5, $6)",
                                     key.str(), token, failureClassName(cls), text,
                                     static_cast<long long>(out.retryDelay.count()),
                                     maxAge > 0 ? std::to_string(maxAge).c_str() : static_cast<const char*>(nullptr));
            return res;
        });
        out.status = r[0][0].as<std::string>();
        out.attempts = r[0][1].as<int>();
        out.exhausted = r[0][2].as<bool>();
    } catch (const LostOwnership&) {
        count(key, outcome::StaleToken);
        throw;
    }
    count(key, classOutcome(cls));
    // The row's attempts are this attempt's number (claim counted it): past the first, the
    // failure is a failed retry.
    if (out.attempts >= 2)
        count(key, outcome::RetryFailed);
    if (out.exhausted)
        count(key, outcome::Exhausted);
    return out;
}

} // namespace idem
