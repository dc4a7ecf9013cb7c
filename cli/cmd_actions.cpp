#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <set>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/redrive.h"
#include "schema/migrate.h"

namespace idem::cli {

namespace {

    constexpr const char* actionsHelp
        = R"(Usage: idemctl requeue KEY... --reason TEXT [--attempts N] [--re-execute] [options]
       idemctl release KEY... --reason TEXT [options]
       idemctl fail    KEY... --reason TEXT [options]

Audited recovery actions, the same SQL functions the console runs (idem_requeue, idem_release,
idem_fail). Each key is acted on in its own transaction, which checks the row still has the
status and updated_at it was read with, changes it and appends an entry to the hash-chained
audit trail (actor: database role, OS user@host, application, client address; the reason; the
row before and after). No action deletes a task or touches a succeeded one.

  requeue   failed | retryable_failed -> retryable_failed, due now, with N more attempts
            (max_attempts becomes attempts + N)
  release   processing -> lease expired now; the old owner token is revoked, so the executor
            still running can no longer commit (its fence/complete fail with ID001); the next
            claim takes over
  fail      processing | retryable_failed -> failed (class permanent): no more retries

idemctl reads each key's current status and updated_at, then acts on what it read: a row that
changes in between is refused as stale, not overwritten. Scripts that acted on an earlier read
pass it with --expect-status and --expect-updated-at (one key).

  --reason TEXT           why (mandatory, with a visible character, up to 16384 characters;
                          recorded in the audit)
  --attempts N            requeue: attempts granted (1..1000, default 1)
  --re-execute            requeue: also re-execute each key now with its stored request, run by a
                          registered re-driver of its operation (schema v25, idem_requeue_reexecute,
                          docs/redrive.md). Says first, per operation, who will ("3 workers of
                          charge are online") or that nobody is online to ("no re-driver for ship
                          is online: the key waits for its client"); a key without a stored
                          request is refused as not_redrivable, nothing changed. idemctl tasks show
                          KEY follows each re-execution
  --keys-from FILE        read more keys from FILE, one per line ('-': standard input)
  --expect-status S       the status the row was seen with (needs --expect-updated-at, one key)
  --expect-updated-at US  its updated_at in microseconds since the Unix epoch (idemctl tasks shows it)
  --actor NAME            who is acting, for the audit (default: login@hostname of this process)
  --lock-timeout-ms MS    how long to wait for a row its executor holds locked, and for the
                          audit trail another action holds until it commits (default: 5000)
  --dsn DSN               libpq conninfo, URI or service=NAME (default: $IDEM_DSN, then PG*);
                          the role needs idem_operator
  --schema S              schema holding the Idem tables (default: idem)
  --json                  one JSON object with a result per key

One line per key: applied, stale (changed since read: nothing changed, what it is now is shown),
wrong_state (the action does not apply to its status), not_found, not_redrivable (--re-execute:
no stored request for the key; nothing changed), denied (the role may not run
actions), needs_approval (schema v23: this login is past the approval policy's budget of rows
changed without a second person, `idemctl approvals policy`; nothing changed: start a recovery job over
the rows, which waits for another login's approval, and the message says how), error. Exit codes: 0 every key applied, 3 any refused by the database (nothing changed
for those keys), 1 any error, 2 usage error.
)";

    std::vector<std::string> keysFromFile(const std::string& path)
    {
        std::vector<std::string> keys;
        std::ifstream file;
        std::istream* in = &std::cin;
        if (path != "-") {
            file.open(path);
            if (!file)
                throw UsageError("cannot read keys from " + path);
            in = &file;
        }
        for (std::string line; std::getline(*in, line);) {
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            if (!line.empty())
                keys.push_back(line);
        }
        return keys;
    }

    nlohmann::json resultJson(const ActionResult& r)
    {
        const auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
        nlohmann::json j = { { "key", r.key }, { "outcome", outcomeName(r.outcome) },
            { "status", r.status.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.status) },
            { "updated_at_us", opt(r.updatedAtUs) },
            { "updated_at", r.updatedAtUs ? nlohmann::json(formatMicros(*r.updatedAtUs)) : nlohmann::json(nullptr) },
            { "audit_id", opt(r.auditId) }, { "message", r.message },
            { "sqlstate", r.sqlstate.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.sqlstate) },
            { "redrive_item_id", opt(r.redriveItemId) } };
        if (!r.rowImage.empty())
            j["row"] = nlohmann::json::parse(r.rowImage);
        return j;
    }

    int runAction(RecoveryAction action, const std::vector<std::string>& argv)
    {
        Args args(argv,
            { "dsn", "schema", "reason", "attempts", "keys-from", "expect-status", "expect-updated-at", "actor",
                "lock-timeout-ms" },
            { "json", "help", "re-execute" });
        if (args.flag("help")) {
            std::cout << actionsHelp;
            return ExitOk;
        }
        std::vector<std::string> keys = args.positional();
        if (auto file = args.value("keys-from")) {
            auto more = keysFromFile(*file);
            keys.insert(keys.end(), more.begin(), more.end());
        }
        if (keys.empty())
            throw UsageError("name at least one key");
        if (!args.value("reason"))
            throw UsageError("--reason is required: it goes into the audit trail");
        if (action != RecoveryAction::Requeue && args.value("attempts"))
            throw UsageError("--attempts applies to requeue only");
        if (action != RecoveryAction::Requeue && args.flag("re-execute"))
            throw UsageError("--re-execute applies to requeue only");
        const bool expectGiven = args.value("expect-status") || args.value("expect-updated-at");
        if (expectGiven && (!args.value("expect-status") || !args.value("expect-updated-at") || keys.size() != 1))
            throw UsageError("--expect-status and --expect-updated-at go together, with exactly one key");

        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
        ActionOptions options;
        options.reason = *args.value("reason");
        options.extraAttempts = static_cast<int>(args.intValue("attempts", 1, 1, ActionOptions::maxExtraAttempts));
        options.actor = args.valueOr("actor", localActor());
        options.lockTimeoutMs = static_cast<int>(args.intValue("lock-timeout-ms", 5000, 1, 600'000));
        options.reexecute = args.flag("re-execute");
        validateActionOptions(action, options); // std::invalid_argument: a usage error, before connecting

        auto conn = connect(dsnFrom(args), ConnectOptions { std::string("idemctl ") + actionName(action) });
        // As the console: never act on a schema this binary does not know, nor on one without actions.
        const SchemaState state = inspectSchema(*conn, schema);
        if (state.newer() || state.version < 3) {
            std::cerr << "idemctl " << actionName(action) << ": refused: schema " << schema.name() << " is at version "
                      << state.version << ", this idemctl knows " << state.latest
                      << (state.newer() ? " (upgrade idemctl)" : " (run idemctl migrate)") << "; nothing changed\n";
            return ExitRefused;
        }

        // What is there now, unless the caller says what it saw.
        std::vector<ActionResult> results(keys.size());
        std::vector<RowVersion> targets;
        std::vector<std::size_t> slots;
        if (expectGiven) {
            targets.push_back({ keys[0], *args.value("expect-status"),
                args.intValue("expect-updated-at", 0, std::numeric_limits<long long>::min(),
                    std::numeric_limits<long long>::max()) });
            slots.push_back(0);
        } else {
            const auto seen = readRowVersions(*conn, schema, keys);
            for (std::size_t i = 0; i < keys.size(); ++i) {
                if (seen[i]) {
                    targets.push_back(*seen[i]);
                    slots.push_back(i);
                } else {
                    results[i].key = keys[i];
                    results[i].outcome = ActionOutcome::NotFound;
                    results[i].message = "no task with that key";
                }
            }
        }
        // Who will re-execute, per operation of the keys, said before anything changes.
        nlohmann::json redrivers = nlohmann::json::array();
        if (options.reexecute) {
            std::set<std::pair<std::string, std::string>> scopes;
            for (const auto& k : keys) {
                const auto a = k.find(':');
                const auto b = a == std::string::npos ? a : k.find(':', a + 1);
                if (b != std::string::npos)
                    scopes.emplace(k.substr(0, a), k.substr(a + 1, b - a - 1));
            }
            for (const auto& [tenant, operation] : scopes) {
                if (scopes.size() > 20)
                    break; // a bulk over many operations: the per-key results say the rest
                try {
                    for (const auto& st : readRedriveStatus(*conn, schema, tenant, operation)) {
                        nlohmann::json seen = nlohmann::json::array();
                        for (const auto& r : st.redrivers)
                            seen.push_back({ { "worker", r.worker }, { "version", r.version },
                                { "last_seen", r.lastSeen }, { "online", r.online } });
                        redrivers.push_back({ { "tenant", st.tenant }, { "operation", st.operation },
                            { "registered", st.registered }, { "online_workers", st.onlineWorkers },
                            { "last_seen", st.lastSeen.empty() ? nlohmann::json() : nlohmann::json(st.lastSeen) },
                            { "redrivers", seen }, { "message", redriveAvailability(st) } });
                        if (!args.flag("json"))
                            std::cout << "re-execute " << displaySafe(tenant, 64) << ':' << displaySafe(operation, 64)
                                      << ": " << displaySafe(redriveAvailability(st), 200) << '\n';
                    }
                } catch (const pqxx::sql_error&) {
                    // not a key the status can name (bad tenant or operation), or a schema before
                    // v25: the key's own result says so
                }
            }
        }
        if (!args.flag("json"))
            std::cout << actionName(action) << ": " << keys.size() << " key(s)"
                      << (expectGiven ? ", as seen by the caller" : ", each as read just now")
                      << "; reason: " << displaySafe(options.reason, 120) << '\n';

        const auto done = applyBulk(*conn, schema, action, targets, options);
        for (std::size_t i = 0; i < done.size(); ++i)
            results[slots[i]] = done[i];

        std::map<std::string, int> counts;
        bool anyError = false, anyRefused = false;
        for (const auto& r : results) {
            ++counts[outcomeName(r.outcome)];
            anyError = anyError || r.outcome == ActionOutcome::Error || r.outcome == ActionOutcome::Skipped;
            anyRefused = anyRefused || isRefusal(r.outcome);
        }

        if (args.flag("json")) {
            nlohmann::json j
                = { { "action", actionName(action) }, { "schema", schema.name() }, { "reason", options.reason },
                      { "actor", options.actor }, { "results", nlohmann::json::array() }, { "summary", counts } };
            if (action == RecoveryAction::Requeue)
                j["attempts"] = options.extraAttempts;
            if (options.reexecute) {
                j["re_execute"] = true;
                j["redrivers"] = redrivers;
            }
            for (const auto& r : results)
                j["results"].push_back(resultJson(r));
            std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        } else {
            std::string approvalWords; // the policy's refusal, with how to get approval: said once
            for (const auto& r : results) {
                std::cout << outcomeName(r.outcome) << "  " << displaySafe(r.key, 120);
                if (r.outcome == ActionOutcome::Applied)
                    std::cout << "  -> " << r.status << ", audit entry " << (r.auditId ? *r.auditId : 0);
                if (r.outcome == ActionOutcome::NeedsApproval) {
                    if (approvalWords.empty())
                        approvalWords = r.message;
                    std::cout << "  over this login's budget without a second person's approval (below)\n";
                    continue;
                }
                std::cout << "  " << displaySafe(r.message, 400) << '\n';
            }
            std::cout << "summary:";
            for (const auto& [name, n] : counts)
                std::cout << ' ' << name << ' ' << n;
            std::cout << '\n';
            if (!approvalWords.empty())
                std::cerr << "idemctl " << actionName(action) << ": refused by the approval policy (SQLSTATE ID004): "
                          << displaySafe(approvalWords, messageDisplay) << '\n';
        }
        return anyError ? ExitFailure : anyRefused ? ExitRefused : ExitOk;
    }

} // namespace

int runRequeue(const std::vector<std::string>& args) { return runAction(RecoveryAction::Requeue, args); }
int runRelease(const std::vector<std::string>& args) { return runAction(RecoveryAction::Release, args); }
int runFail(const std::vector<std::string>& args) { return runAction(RecoveryAction::Fail, args); }

} // namespace idem::cli
