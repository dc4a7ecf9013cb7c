#include "operations/actions.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <string_view>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <pwd.h>
#include <thread>
#include <unistd.h>

#include "core/taskstore.h"
#include "core/utf8.h"

namespace idem {

namespace {

    constexpr int maxTransientRetries = 5;
    constexpr std::size_t readChunk = 1000;

    std::size_t codePoints(const std::string& s)
    {
        std::size_t n = 0;
        for (unsigned char c : s)
            if ((c & 0xC0) != 0x80)
                ++n;
        return n;
    }

    // What audit_reason_blank (resources/sql/0007_audit_hardening.sql) matches, range for range
    // and in the same order: keep the two identical (tst_actions compares them code point by
    // code point). Controls and White_Space, then Default_Ignorable_Code_Point and the other
    // characters that render as nothing.
    struct CodePointRange {
        char32_t from;
        char32_t to;
    };
    constexpr CodePointRange invisibleRanges[] = {
        { 0x0000, 0x0020 }, { 0x007F, 0x00A0 }, { 0x00AD, 0x00AD }, { 0x034F, 0x034F }, { 0x061C, 0x061C },
        { 0x115F, 0x1160 }, { 0x1680, 0x1680 }, { 0x17B4, 0x17B5 }, { 0x180B, 0x180F }, { 0x2000, 0x200F },
        { 0x2028, 0x202F }, { 0x205F, 0x206F }, { 0x2800, 0x2800 }, { 0x3000, 0x3000 }, { 0x3164, 0x3164 },
        { 0xFE00, 0xFE0F }, { 0xFEFF, 0xFEFF }, { 0xFFA0, 0xFFA0 }, { 0xFFF0, 0xFFFB }, { 0x1BCA0, 0x1BCA3 },
        { 0x1D173, 0x1D17A }, { 0xE0000, 0xE0FFF },
    };

    bool invisible(char32_t cp)
    {
        for (const auto& r : invisibleRanges)
            if (cp >= r.from && cp <= r.to)
                return true;
        return false;
    }

    std::string optionalText(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }

    const char* functionOf(RecoveryAction a)
    {
        switch (a) {
        case RecoveryAction::Requeue:
            return "idem_requeue";
        case RecoveryAction::Release:
            return "idem_release";
        case RecoveryAction::Fail:
            return "idem_fail";
        }
        return "idem_fail";
    }

    ActionOutcome outcomeFromSql(const std::string& s)
    {
        if (s == "applied")
            return ActionOutcome::Applied;
        if (s == "stale")
            return ActionOutcome::Stale;
        if (s == "wrong_state")
            return ActionOutcome::WrongState;
        if (s == "not_found")
            return ActionOutcome::NotFound;
        throw std::runtime_error("recovery action returned an unknown outcome '" + s + "'; is the schema newer?");
    }

    void checkKey(const std::string& key)
    {
        if (key.empty())
            throw std::invalid_argument("a key is required");
        if (key.find('\0') != std::string::npos)
            throw std::invalid_argument("the key " + quoteForMessage(key) + " contains a NUL byte");
        if (auto problem = utf8Problem(key))
            throw std::invalid_argument("the key " + quoteForMessage(key) + " is not valid UTF-8: " + *problem);
    }

    // One statement, one transaction (the function's): lock timeout first, in the same transaction.
    pqxx::result callAction(pqxx::connection& conn, const SchemaName& schema, RecoveryAction action,
        const RowVersion& expected, const ActionOptions& options, const std::string& actor)
    {
        pqxx::work w(conn);
        w.exec_params("SELECT set_config('lock_timeout', $1, true)", std::to_string(options.lockTimeoutMs) + "ms");
        const std::string head = "SELECT outcome, status, updated_at_us, row_image::text, audit_id, message FROM "
            + schema.qualify(functionOf(action));
        pqxx::result r;
        if (action == RecoveryAction::Requeue)
            r = w.exec_params(head + "($1, $2, $3, $4, $5, $6)", expected.key, expected.status,
                static_cast<long long>(expected.updatedAtUs), options.extraAttempts, options.reason, actor);
        else
            r = w.exec_params(head + "($1, $2, $3, $4, $5)", expected.key, expected.status,
                static_cast<long long>(expected.updatedAtUs), options.reason, actor);
        w.commit();
        return r;
    }

    ActionResult errorResult(
        const std::string& key, ActionOutcome outcome, std::string sqlstate, const std::string& what)
    {
        ActionResult res;
        res.key = key;
        res.outcome = outcome;
        res.sqlstate = std::move(sqlstate);
        res.message = what;
        while (!res.message.empty() && (res.message.back() == '\n' || res.message.back() == ' '))
            res.message.pop_back();
        return res;
    }

} // namespace

const char* actionName(RecoveryAction a)
{
    switch (a) {
    case RecoveryAction::Requeue:
        return "requeue";
    case RecoveryAction::Release:
        return "release";
    case RecoveryAction::Fail:
        return "fail";
    }
    return "fail";
}

std::optional<RecoveryAction> parseAction(const std::string& name)
{
    for (auto a : { RecoveryAction::Requeue, RecoveryAction::Release, RecoveryAction::Fail })
        if (name == actionName(a))
            return a;
    return std::nullopt;
}

bool actionAppliesTo(RecoveryAction a, const std::string& status)
{
    switch (a) {
    case RecoveryAction::Requeue:
        return status == "failed" || status == "retryable_failed";
    case RecoveryAction::Release:
        return status == "processing";
    case RecoveryAction::Fail:
        return status == "processing" || status == "retryable_failed";
    }
    return false;
}

std::string updatedAtMicrosSql(const std::string& column)
{
    return "(extract(epoch FROM " + column + ") * 1000000)::bigint";
}

std::string formatMicros(std::int64_t us)
{
    std::int64_t secs = us / 1'000'000;
    std::int64_t frac = us % 1'000'000;
    if (frac < 0) {
        frac += 1'000'000;
        --secs;
    }
    const std::time_t t = static_cast<std::time_t>(secs);
    std::tm tm {};
    gmtime_r(&t, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
        tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(frac));
    return buf;
}

std::string localActor()
{
    std::string user;
    if (const passwd* pw = getpwuid(geteuid()); pw && pw->pw_name)
        user = pw->pw_name;
    else
        user = "uid" + std::to_string(geteuid());
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
        return user;
    return user + '@' + host;
}

bool reasonIsBlank(const std::string& reason)
{
    if (utf8Problem(reason))
        return false;
    for (const char32_t cp : utf8ToCodePoints(reason))
        if (!invisible(cp))
            return false;
    return true;
}

void validateActionOptions(RecoveryAction a, const ActionOptions& options)
{
    const std::string& reason = options.reason;
    if (auto problem = utf8Problem(reason))
        throw std::invalid_argument("the reason is not valid UTF-8: " + *problem);
    if (reasonIsBlank(reason))
        throw std::invalid_argument("a reason is required (it goes into the audit trail): it needs a visible "
                                    "character, not only white space or invisible characters");
    if (reason.find('\0') != std::string::npos)
        throw std::invalid_argument("the reason contains a NUL byte");
    if (codePoints(reason) > static_cast<std::size_t>(ActionOptions::maxReasonChars))
        throw std::invalid_argument("the reason is " + std::to_string(codePoints(reason))
            + " characters, more than the " + std::to_string(ActionOptions::maxReasonChars) + " allowed");
    if (a == RecoveryAction::Requeue
        && (options.extraAttempts < 1 || options.extraAttempts > ActionOptions::maxExtraAttempts))
        throw std::invalid_argument("extra attempts must be 1 to " + std::to_string(ActionOptions::maxExtraAttempts)
            + ", not " + std::to_string(options.extraAttempts));
    if (options.actor.find('\0') != std::string::npos || utf8Problem(options.actor)
        || codePoints(options.actor) > static_cast<std::size_t>(ActionOptions::maxActorChars))
        throw std::invalid_argument("the actor name must be valid UTF-8 of at most "
            + std::to_string(ActionOptions::maxActorChars) + " characters");
    if (options.lockTimeoutMs < 1)
        throw std::invalid_argument("the lock timeout must be positive");
}

const char* outcomeName(ActionOutcome o)
{
    switch (o) {
    case ActionOutcome::Applied:
        return "applied";
    case ActionOutcome::Stale:
        return "stale";
    case ActionOutcome::WrongState:
        return "wrong_state";
    case ActionOutcome::NotFound:
        return "not_found";
    case ActionOutcome::Denied:
        return "denied";
    case ActionOutcome::Error:
        return "error";
    case ActionOutcome::Skipped:
        return "skipped";
    }
    return "error";
}

bool isRefusal(ActionOutcome o)
{
    return o == ActionOutcome::Stale || o == ActionOutcome::WrongState || o == ActionOutcome::NotFound
        || o == ActionOutcome::Denied;
}

ActionResult applyAction(pqxx::connection& conn, const SchemaName& schema, RecoveryAction action,
    const RowVersion& expected, const ActionOptions& options)
{
    validateActionOptions(action, options);
    checkKey(expected.key);
    if (expected.status.empty())
        throw std::invalid_argument("the status the operator saw is required");
    const std::string actor = options.actor.empty() ? localActor() : options.actor;

    for (int attempt = 0;; ++attempt) {
        try {
            const pqxx::result r = callAction(conn, schema, action, expected, options, actor);
            const auto row = r.at(0);
            ActionResult res;
            res.key = expected.key;
            res.outcome = outcomeFromSql(row[0].as<std::string>());
            res.status = optionalText(row[1]);
            if (!row[2].is_null())
                res.updatedAtUs = row[2].as<std::int64_t>();
            res.rowImage = optionalText(row[3]);
            if (!row[4].is_null())
                res.auditId = row[4].as<std::int64_t>();
            res.message = optionalText(row[5]);
            return res;
        } catch (const pqxx::broken_connection& e) {
            throw DatabaseUnavailable(std::string("database connection lost; whether the ") + actionName(action)
                + " of this key took effect is unknown (see idemctl audit list --key): " + e.what());
        } catch (const pqxx::in_doubt_error& e) {
            throw DatabaseUnavailable(
                std::string("the commit's outcome is unknown (see idemctl audit list --key): ") + e.what());
        } catch (const pqxx::statement_completion_unknown& e) {
            throw DatabaseUnavailable(
                std::string("the statement's outcome is unknown (see idemctl audit list --key): ") + e.what());
        } catch (const pqxx::serialization_failure& e) {
            // libpqxx 6 reports 40001 as this, outside sql_error's sqlstate() path.
            if (attempt >= maxTransientRetries)
                return errorResult(expected.key, ActionOutcome::Error, "40001", e.what());
        } catch (const pqxx::deadlock_detected& e) {
            if (attempt >= maxTransientRetries)
                return errorResult(expected.key, ActionOutcome::Error, "40P01", e.what());
        } catch (const pqxx::transaction_rollback& e) {
            return errorResult(expected.key, ActionOutcome::Error, {}, e.what());
        } catch (const pqxx::insufficient_privilege& e) {
            // libpqxx 6.4 leaves sqlstate() empty on this class; it is only ever 42501.
            return errorResult(expected.key, ActionOutcome::Denied, "42501",
                std::string("permission denied (this role is not idem_operator): ") + e.what());
        } catch (const pqxx::undefined_function& e) {
            throw std::runtime_error("schema " + schema.name()
                + " has no recovery actions (schema version 3); run idemctl migrate first (" + e.what() + ")");
        } catch (const pqxx::sql_error& e) {
            const std::string state = e.sqlstate();
            if (state == "42501")
                return errorResult(expected.key, ActionOutcome::Denied, state, e.what());
            if (state == "42883")
                throw std::runtime_error("schema " + schema.name()
                    + " has no recovery actions (schema version 3); run idemctl migrate first");
            if (state == "55P03") {
                // Schema 7 names the lock it timed out on; before, only the row could be meant.
                const std::string waited = std::to_string(options.lockTimeoutMs) + " ms";
                if (std::string_view(e.what()).find("audit trail") != std::string_view::npos)
                    return errorResult(expected.key, ActionOutcome::Error, state,
                        "the audit trail stayed locked for " + waited
                            + ": another recovery action has appended to it and its transaction has not ended "
                              "(an open transaction that called idem_requeue, idem_release or idem_fail?); "
                              "nothing changed: retry once it has ended");
                return errorResult(expected.key, ActionOutcome::Error, state,
                    "the task's row stayed locked for " + waited
                        + " (by its executor, completing it right now, or by another action on this key); "
                          "nothing changed: read it again and retry");
            }
            if ((state != "40001" && state != "40P01") || attempt >= maxTransientRetries)
                return errorResult(expected.key, ActionOutcome::Error, state, e.what());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1 << std::min(attempt, 6)));
    }
}

std::vector<ActionResult> applyBulk(pqxx::connection& conn, const SchemaName& schema, RecoveryAction action,
    const std::vector<RowVersion>& expected, const ActionOptions& options, const ActionProgress& progress)
{
    validateActionOptions(action, options);
    ActionOptions resolved = options;
    if (resolved.actor.empty())
        resolved.actor = localActor();
    std::vector<ActionResult> out;
    out.reserve(expected.size());
    bool stop = false;
    for (const auto& e : expected) {
        if (stop) {
            out.push_back(errorResult(e.key, ActionOutcome::Skipped, {}, "not attempted"));
            continue;
        }
        try {
            out.push_back(applyAction(conn, schema, action, e, resolved));
        } catch (const DatabaseUnavailable& ex) {
            out.push_back(errorResult(e.key, ActionOutcome::Error, "08006", ex.what()));
            stop = true;
        } catch (const std::invalid_argument& ex) {
            out.push_back(errorResult(e.key, ActionOutcome::Error, {}, ex.what())); // a bad key: the others go on
        }
        if (!stop && progress && !progress(out.size(), expected.size(), out.back()))
            stop = true;
    }
    return out;
}

std::vector<std::optional<RowVersion>> readRowVersions(
    pqxx::connection& conn, const SchemaName& schema, const std::vector<std::string>& keys)
{
    for (const auto& k : keys)
        checkKey(k);
    std::vector<std::optional<RowVersion>> out(keys.size());
    pqxx::read_transaction t(conn);
    const std::string sql = "SELECT t.idempotency_key, t.status, " + updatedAtMicrosSql("t.updated_at") + " FROM "
        + schema.qualify("task_idempotency")
        + " t WHERE t.idempotency_key = ANY (ARRAY(SELECT jsonb_array_elements_text($1::jsonb)))";
    for (std::size_t from = 0; from < keys.size(); from += readChunk) {
        const std::size_t to = std::min(keys.size(), from + readChunk);
        nlohmann::json arr = nlohmann::json::array();
        std::multimap<std::string, std::size_t> index;
        for (std::size_t i = from; i < to; ++i) {
            arr.push_back(keys[i]);
            index.emplace(keys[i], i);
        }
        for (const auto& row : t.exec_params(sql, arr.dump())) {
            RowVersion v { row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::int64_t>() };
            auto [b, e] = index.equal_range(v.key);
            for (auto it = b; it != e; ++it)
                out[it->second] = v;
        }
    }
    return out;
}

} // namespace idem
