#include "operations/scenarios.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <latch>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include <cerrno>
#include <csignal>
#include <unistd.h>

#include "core/runner.h"
#include "core/sha256.h"
#include "operations/scenarioenv.h"
#include "schema/migrate.h"

namespace idem::verify {

void ScenarioEnv::acknowledge(const TaskKey& key, const RunOutcome& outcome) const
{
    if (outcome.kind != RunOutcome::Kind::Succeeded && outcome.kind != RunOutcome::Kind::Replayed)
        return;
    std::lock_guard lock(ledger->mutex);
    ledger->told.emplace(
        key.str(), std::make_pair(scenario, nlohmann::json::parse(outcome.resultJson, nullptr, false)));
}

long long ScenarioEnv::effects(pqxx::connection& c, const TaskKey& key) const
{
    pqxx::read_transaction t(c);
    return t
        .exec_params("SELECT count(*) FROM " + table("verify_effects") + " WHERE idempotency_key = $1", key.str())[0][0]
        .as<long long>();
}

std::string ScenarioEnv::rowJson(pqxx::connection& c, const TaskKey& key) const
{
    pqxx::read_transaction t(c);
    const auto r = t.exec_params(
        "SELECT row_to_json(t)::text FROM " + table("task_idempotency") + " t WHERE idempotency_key = $1", key.str());
    return r.empty() ? std::string() : r[0][0].as<std::string>();
}

void ScenarioEnv::insertEffect(pqxx::work& tx, const TaskKey& key, const std::string& note) const
{
    tx.exec_params(
        "INSERT INTO " + table("verify_effects") + " (idempotency_key, note) VALUES ($1, $2)", key.str(), note);
}

void ScenarioEnv::callDownstream(pqxx::connection& c, const TaskKey& key) const
{
    pqxx::work w(c);
    w.exec_params("INSERT INTO " + table("verify_downstream")
            + " AS d (idempotency_key, calls) VALUES ($1, 1)"
              " ON CONFLICT (idempotency_key) DO UPDATE SET calls = d.calls + 1",
        key.str());
    w.commit();
}

namespace {

    std::string digestOf(const std::string& request) { return "v1:" + sha256Hex(request); }

} // namespace

// 1. Concurrent duplicates with the same digest, released together: one executor, one effect.
std::string scenario1(const ScenarioEnv& env, int threads, int rounds)
{
    std::vector<std::unique_ptr<pqxx::connection>> conns;
    std::vector<std::unique_ptr<TaskStore>> stores;
    for (int i = 0; i < threads; ++i) {
        conns.push_back(env.connect());
        stores.push_back(std::make_unique<TaskStore>(*conns.back(), env.storeOptions()));
    }
    auto check = env.connect();
    int inProgress = 0, replayed = 0;
    for (int round = 0; round < rounds; ++round) {
        const TaskKey key(env.tenant, "s1", "order-" + std::to_string(round));
        const std::string digest = digestOf("s1:" + std::to_string(round));
        std::vector<RunOutcome> outcomes(static_cast<std::size_t>(threads));
        std::vector<std::string> errors(static_cast<std::size_t>(threads));
        // A lost connection (a failover) in a claimer's thread: rethrown after the join, so the run
        // reads it as a scenario cut short (run again) rather than a claimer that misbehaved.
        std::vector<std::exception_ptr> lost(static_cast<std::size_t>(threads));
        std::latch start(threads);
        std::vector<std::thread> pool;
        for (int i = 0; i < threads; ++i) {
            pool.emplace_back([&, i] {
                const auto idx = static_cast<std::size_t>(i);
                start.arrive_and_wait();
                try {
                    outcomes[idx] = runTask(
                        *stores[idx], key, digest,
                        [&](pqxx::work& tx, const TaskContext&) {
                            env.insertEffect(tx, key, "s1");
                            // Hold the task open long enough for every other thread to see it running.
                            std::this_thread::sleep_for(std::chrono::milliseconds(20));
                            return R"({"charged":)" + std::to_string(round) + "}";
                        },
                        env.runOptions());
                } catch (const DatabaseUnavailable&) {
                    lost[idx] = std::current_exception();
                } catch (const pqxx::broken_connection&) {
                    lost[idx] = std::current_exception();
                } catch (const std::exception& e) {
                    errors[idx] = e.what();
                }
            });
        }
        for (auto& t : pool)
            t.join();
        for (const auto& error : lost)
            if (error)
                std::rethrow_exception(error);
        int executed = 0;
        std::string winnerResult;
        for (std::size_t i = 0; i < outcomes.size(); ++i) {
            expect(errors[i].empty(), "round " + std::to_string(round) + ": a claimer threw: " + errors[i]);
            if (outcomes[i].kind == RunOutcome::Kind::Succeeded) {
                ++executed;
                winnerResult = outcomes[i].resultJson;
            }
        }
        expect(executed == 1, "round " + std::to_string(round) + ": " + std::to_string(executed) + " executors, not 1");
        for (const auto& o : outcomes) {
            env.acknowledge(key, o);
            if (o.kind == RunOutcome::Kind::Replayed) {
                ++replayed;
                expect(nlohmann::json::parse(o.resultJson) == nlohmann::json::parse(winnerResult),
                    "a replay returned " + o.resultJson + " instead of " + winnerResult);
            } else if (o.kind == RunOutcome::Kind::InProgress) {
                ++inProgress;
            } else {
                expect(o.kind == RunOutcome::Kind::Succeeded,
                    std::string("unexpected outcome ") + runOutcomeName(o.kind) + ": " + o.error);
            }
        }
        expect(env.effects(*check, key) == 1, "round " + std::to_string(round) + ": business effects != 1");
        const auto row = nlohmann::json::parse(env.rowJson(*check, key));
        expect(row["status"] == "succeeded" && row["attempts"] == 1,
            "round " + std::to_string(round) + ": record is " + row.dump());
    }
    return std::to_string(threads) + " threads x " + std::to_string(rounds)
        + " rounds: 1 executor and 1 effect per key; " + std::to_string(inProgress) + " saw in_progress, "
        + std::to_string(replayed) + " replayed the same result";
}

// 2. Concurrent requests with one key and different digests: conflict, the first stays.
std::string scenario2(const ScenarioEnv& env)
{
    constexpr int threads = 16;
    std::vector<std::unique_ptr<pqxx::connection>> conns;
    std::vector<std::unique_ptr<TaskStore>> stores;
    for (int i = 0; i < threads; ++i) {
        conns.push_back(env.connect());
        stores.push_back(std::make_unique<TaskStore>(*conns.back(), env.storeOptions()));
    }
    auto check = env.connect();
    int conflicts = 0;
    for (int round = 0; round < 10; ++round) {
        const TaskKey key(env.tenant, "s2", "order-" + std::to_string(round));
        std::vector<RunOutcome> outcomes(threads);
        std::vector<std::exception_ptr> errors(threads);
        std::latch start(threads);
        std::vector<std::thread> pool;
        for (int i = 0; i < threads; ++i) {
            pool.emplace_back([&, i] {
                const auto idx = static_cast<std::size_t>(i);
                start.arrive_and_wait();
                // Every thread's exception is caught here (a lost connection throws
                // DatabaseUnavailable): one escaping a thread ends the process without a table.
                try {
                    const std::string amount = std::to_string(100 + i);
                    outcomes[idx] = runTask(
                        *stores[idx], key, digestOf("s2:" + amount),
                        [&](pqxx::work& tx, const TaskContext&) {
                            env.insertEffect(tx, key, amount);
                            return R"({"amount":)" + amount + "}";
                        },
                        env.runOptions());
                } catch (...) {
                    errors[idx] = std::current_exception();
                }
            });
        }
        for (auto& t : pool)
            t.join();
        for (const auto& error : errors)
            if (error)
                std::rethrow_exception(error); // the run says it in words, as for any scenario
        int winner = -1;
        for (int i = 0; i < threads; ++i) {
            const auto& o = outcomes[static_cast<std::size_t>(i)];
            env.acknowledge(key, o);
            if (o.kind == RunOutcome::Kind::Succeeded) {
                expect(winner < 0, "two requests with different digests both executed");
                winner = i;
            } else {
                expect(o.kind == RunOutcome::Kind::Conflict,
                    std::string("a different digest got ") + runOutcomeName(o.kind) + ", not conflict");
                ++conflicts;
            }
        }
        expect(winner >= 0, "nobody executed");
        const std::string winnerDigest = digestOf("s2:" + std::to_string(100 + winner));
        for (const auto& o : outcomes)
            if (o.kind == RunOutcome::Kind::Conflict)
                expect(o.claim.storedDigest.empty(), "a conflict revealed the stored digest to its claimer");
        const std::string before = env.rowJson(*check, key);
        const auto row = nlohmann::json::parse(before);
        expect(row["request_hash"] == winnerDigest, "stored digest is not the executor's");
        // Another conflicting request after the fact changes nothing either.
        const auto late = runTask(
            *stores[0], key, digestOf("s2:late"),
            [&](pqxx::work& tx, const TaskContext&) {
                env.insertEffect(tx, key, "late");
                return std::string("{}");
            },
            env.runOptions());
        expect(late.kind == RunOutcome::Kind::Conflict, "a late different digest was not a conflict");
        expect(env.rowJson(*check, key) == before, "a conflict changed the stored record");
        expect(env.effects(*check, key) == 1, "business effects != 1 after conflicts");
    }
    return "10 rounds x 16 digests: one executed, " + std::to_string(conflicts)
        + " conflicts; stored digest, result and updated_at unchanged; 1 effect per key";
}

// 3. Repeating a succeeded request replays the stored result and writes nothing.
std::string scenario3(const ScenarioEnv& env)
{
    auto conn = env.connect();
    TaskStore store(*conn, env.storeOptions());
    const TaskKey key(env.tenant, "s3", "order-1");
    const std::string digest = digestOf("s3");
    int calls = 0;
    const auto task = [&](pqxx::work& tx, const TaskContext&) {
        ++calls;
        env.insertEffect(tx, key, "s3");
        return std::string(R"({"receipt":"r-1","amount":{"value":"12.50","currency":"EUR"}})");
    };
    const auto first = runTask(store, key, digest, task, env.runOptions());
    expect(first.kind == RunOutcome::Kind::Succeeded, std::string("first run: ") + runOutcomeName(first.kind));
    env.acknowledge(key, first);
    const std::string before = env.rowJson(*conn, key);
    for (int i = 0; i < 10; ++i) {
        const auto again = runTask(store, key, digest, task, env.runOptions());
        env.acknowledge(key, again);
        expect(again.kind == RunOutcome::Kind::Replayed, std::string("repeat: ") + runOutcomeName(again.kind));
        expect(nlohmann::json::parse(again.resultJson) == nlohmann::json::parse(first.resultJson),
            "replayed result differs: " + again.resultJson);
    }
    expect(calls == 1, "the task body ran " + std::to_string(calls) + " times");
    expect(env.effects(*conn, key) == 1, "business effects != 1");
    expect(env.rowJson(*conn, key) == before, "a replay changed the record");
    return "10 repeats replayed the stored result; task body ran once; 1 effect; record unchanged";
}

// A succeeded row never changes: not by a claim, a fail, a heartbeat or a fence.
std::string scenarioImmutable(const ScenarioEnv& env)
{
    auto conn = env.connect();
    TaskStore store(*conn, env.storeOptions());
    const TaskKey key(env.tenant, "immutable", "order-1");
    ClaimResult claimed;
    if (env.oneTransaction) {
        pqxx::work tx(*conn);
        claimed = store.claimInTransaction(tx, key, digestOf("imm"), std::chrono::milliseconds(5000));
        expect(claimed.decision == Decision::Acquired, "first claim did not acquire");
        env.insertEffect(tx, key, "imm");
        store.complete(tx, key, claimed.token, R"({"ok":true})");
        tx.commit();
    } else {
        claimed = store.claim(key, digestOf("imm"));
        expect(claimed.decision == Decision::Acquired, "first claim did not acquire");
        pqxx::work tx(*conn);
        store.fence(tx, key, claimed.token);
        env.insertEffect(tx, key, "imm");
        store.complete(tx, key, claimed.token, R"({"ok":true})");
        tx.commit();
    }
    const std::string before = env.rowJson(*conn, key);
    expect(store.claim(key, digestOf("imm")).decision == Decision::Replay, "same digest did not replay");
    expect(store.claim(key, digestOf("other")).decision == Decision::Conflict, "other digest did not conflict");
    int refused = 0;
    try {
        store.fail(key, claimed.token, 1, FailureClass::Permanent, "late failure");
    } catch (const LostOwnership&) {
        ++refused;
    }
    try {
        store.heartbeat(key, claimed.token);
    } catch (const LostOwnership&) {
        ++refused;
    }
    try {
        pqxx::work tx(*conn);
        store.fence(tx, key, claimed.token);
    } catch (const LostOwnership&) {
        ++refused;
    }
    expect(refused == 3, "a fail, heartbeat or fence on a succeeded row was not refused");
    expect(env.rowJson(*conn, key) == before, "the succeeded record changed");
    expect(env.effects(*conn, key) == 1, "business effects != 1");
    return "claim (same and other digest), fail, heartbeat and fence left the succeeded row byte-identical";
}

const std::vector<std::string>& scenarioNames()
{
    static const std::vector<std::string> names = {
        "concurrent duplicates, same digest",
        "concurrent duplicates, different digests",
        "repeat after success",
        "worker killed after claiming",
        "worker killed before commit; unknown outcome",
        "backoff, permanent errors, exhaustion",
        "succeeded rows never change",
    };
    return names;
}

namespace {
    // The client-side ledger held against the database after the last scenario: every key a client
    // was told had succeeded is still succeeded with the result it was given. Each scenario's result
    // says how many of its acknowledgements it checked, or fails naming the keys.
    void checkLedger(pqxx::connection& conn, const ScenarioEnv& env, std::vector<ScenarioResult>& results)
    {
        std::map<std::string, std::pair<int, nlohmann::json>> told;
        {
            std::lock_guard lock(env.ledger->mutex);
            told = env.ledger->told;
        }
        nlohmann::json keys = nlohmann::json::array();
        for (const auto& entry : told)
            keys.push_back(entry.first);
        std::map<int, int> checked;
        std::map<int, std::vector<std::string>> lost;
        pqxx::read_transaction t(conn);
        const auto rows = t.exec_params("SELECT k.key, t.status, t.result_json::text"
                                        "  FROM jsonb_array_elements_text($1::jsonb) k(key) LEFT JOIN "
                + env.table("task_idempotency") + " t ON t.idempotency_key = k.key",
            keys.dump());
        for (const auto& row : rows) {
            const auto key = row[0].as<std::string>();
            const auto& [scenario, result] = told.at(key);
            ++checked[scenario];
            if (row[1].is_null())
                lost[scenario].push_back(key + " (no record)");
            else if (row[1].as<std::string>() != "succeeded")
                lost[scenario].push_back(key + " (now " + row[1].as<std::string>() + ")");
            else if (nlohmann::json::parse(row[2].is_null() ? "null" : row[2].as<std::string>(), nullptr, false)
                != result)
                lost[scenario].push_back(key + " (another result)");
        }
        for (auto& r : results) {
            if (!checked.count(r.number))
                continue;
            if (const auto l = lost.find(r.number); l != lost.end()) {
                std::string keysText;
                for (std::size_t i = 0; i < l->second.size() && i < 5; ++i)
                    keysText += (i ? ", " : "") + l->second[i];
                r.passed = false;
                r.detail += "; LOST ACKNOWLEDGED SUCCESSES: " + std::to_string(l->second.size()) + " of "
                    + std::to_string(checked[r.number]) + " keys told succeeded are not any more: " + keysText;
            } else {
                r.detail += "; ledger: all " + std::to_string(checked[r.number])
                    + " acknowledged successes still recorded with the result given";
            }
        }
    }
} // namespace

std::string ScenarioEnv::workerNames() const
{
    std::string out;
    for (const auto& w : workers) {
        if (!out.empty())
            out += ", ";
        // idemctl by its name, not its path; the others as given.
        const auto slash = w[0].rfind('/');
        out += &w == &workers.front() && slash != std::string::npos ? w[0].substr(slash + 1) : w[0];
        for (std::size_t i = 1; i < w.size(); ++i)
            out += ' ' + w[i];
    }
    return out;
}

namespace {

    // The first key of a run's session advisory lock on its scratch schema; the second is
    // hashtext(schema name). Held by the run's admin connection while it lives.
    constexpr int ownerLockClass = 0x1de7;
    // A leftover schema not known to be dead by its pid is dropped once nothing was written in it
    // for this long: longer than any live run goes without writing.
    constexpr double leftoverIdleSeconds = 3600;

    std::string thisHost()
    {
        char buf[256] = {};
        if (::gethostname(buf, sizeof buf - 1) != 0)
            return {};
        return buf;
    }

    std::string minutesText(double seconds) { return std::to_string(static_cast<long long>(seconds / 60)) + " min"; }

    // The run's own connection (the schema, the ledger, the drop): opened again when lost,
    // waiting for the primary a minute at most, and then taking the run's lock again.
    class AdminConnection {
    public:
        AdminConnection(std::string conninfo, std::function<void(const std::string&)> notice)
            : m_conninfo(std::move(conninfo))
            , m_notice(std::move(notice))
        {
            // The first connect fails at once (a wrong DSN is not a failover).
            m_conn = connectPrimary(m_conninfo, { "idemctl verify" });
            m_pooled = behindPooler(*m_conn);
        }

        pqxx::connection& get()
        {
            if (m_conn && m_conn->is_open())
                return *m_conn;
            m_conn.reset();
            std::string said;
            m_conn = connectPrimaryWaiting(
                m_conninfo, { "idemctl verify" }, std::chrono::seconds(60), [this, &said](const ConnectError& e) {
                    if (e.what() != said)
                        say(std::string("waiting for the primary: ") + e.what());
                    said = e.what();
                });
            if (!m_owned.empty())
                lock(m_owned);
            return *m_conn;
        }

        // Holds the run's lock on `schema` from now on (not behind a pooler, where a session lock
        // would stay on whichever server connection took it).
        void own(const std::string& schema)
        {
            m_owned = schema;
            lock(schema);
        }

        // f(connection), again once on a new connection if the first one is lost meanwhile.
        template <typename F> auto run(F&& f)
        {
            try {
                return f(get());
            } catch (const pqxx::broken_connection& e) {
                lost(e.what());
            }
            return f(get());
        }

        void lost(const std::string& what)
        {
            say("lost the connection to the database server: " + describeLostConnection(what) + "; reconnecting");
            m_conn.reset();
        }

        void say(const std::string& line) const
        {
            if (m_notice)
                m_notice(line);
        }

    private:
        void lock(const std::string& schema)
        {
            if (m_pooled)
                return;
            pqxx::nontransaction n(*m_conn);
            n.exec_params("SELECT pg_try_advisory_lock($1, hashtext($2))", ownerLockClass, schema);
        }

        std::string m_conninfo;
        std::function<void(const std::string&)> m_notice;
        std::unique_ptr<pqxx::connection> m_conn;
        bool m_pooled = false;
        std::string m_owned;
    };

    // Drops the scratch schemas of earlier runs that are gone (see runVerification's comment).
    // A schema of this pattern counts only when it holds verify's own tables; each is decided
    // under the run lock's key, taken for the transaction: a live run holds it for its session.
    void dropLeftovers(AdminConnection& admin, const std::string& own)
    {
        std::vector<std::string> names;
        admin.run([&](pqxx::connection& c) {
            names.clear();
            pqxx::read_transaction t(c);
            for (const auto& row : t.exec_params(
                     "SELECT n.nspname FROM pg_namespace n WHERE n.nspname ~ '^idem_verify_[0-9]+$' AND n.nspname <> $1"
                     " AND CASE WHEN has_schema_privilege(n.oid, 'USAGE') THEN"
                     "   to_regclass(quote_ident(n.nspname) || '.verify_owner') IS NOT NULL"
                     "   OR to_regclass(quote_ident(n.nspname) || '.verify_effects') IS NOT NULL ELSE false END"
                     " ORDER BY 1",
                     own))
                names.push_back(row[0].as<std::string>());
            return 0;
        });
        const std::string host = thisHost();
        for (const auto& name : names) {
            const SchemaName schema(name);
            try {
                admin.run([&](pqxx::connection& c) {
                    pqxx::work w(c);
                    if (!w.exec_params("SELECT pg_try_advisory_xact_lock($1, hashtext($2))", ownerLockClass, name)[0][0]
                             .as<bool>())
                        return 0; // its run holds it: alive
                    std::string ownerHost;
                    long long ownerPid = 0;
                    if (!w.exec_params("SELECT to_regclass($1) IS NOT NULL", schema.qualify("verify_owner"))[0][0]
                             .as<bool>()) {
                        // An older idemctl's scratch schema: no owner recorded.
                    } else if (const auto o
                               = w.exec("SELECT host, pid FROM " + schema.qualify("verify_owner") + " LIMIT 1");
                               !o.empty()) {
                        ownerHost = o[0][0].as<std::string>();
                        ownerPid = o[0][1].as<long long>();
                    }
                    const auto lastWrite = [&](const char* table, const char* column) {
                        return "(SELECT max(" + std::string(column) + ") FROM " + schema.qualify(table) + ")";
                    };
                    std::string idleSql = "SELECT extract(epoch FROM now() - greatest(";
                    bool first = true;
                    for (const auto& [table, column] : { std::pair { "task_idempotency", "updated_at" },
                             std::pair { "verify_effects", "at" }, std::pair { "verify_owner", "started" } }) {
                        if (!w.exec_params("SELECT to_regclass($1) IS NOT NULL", schema.qualify(table))[0][0]
                                 .as<bool>())
                            continue;
                        idleSql += (first ? "" : ", ") + lastWrite(table, column);
                        first = false;
                    }
                    idleSql += first ? "NULL::timestamptz))::float8" : "))::float8";
                    const auto idleField = w.exec(idleSql)[0][0];
                    const double idle = idleField.is_null() ? leftoverIdleSeconds : idleField.as<double>();
                    const bool sameHost = !ownerHost.empty() && ownerHost == host && ownerPid > 0;
                    const bool pidGone = sameHost && ::kill(static_cast<pid_t>(ownerPid), 0) != 0 && errno == ESRCH;
                    const std::string whose = ownerHost.empty() ? std::string("an earlier run")
                                                                : "the run of pid " + std::to_string(ownerPid)
                            + (sameHost ? " on this host" : " on " + ownerHost);
                    if (!pidGone && idle < leftoverIdleSeconds) {
                        // Same host, pid alive: its run is there (reconnecting, or behind a pooler).
                        if (!sameHost)
                            admin.say("left the scratch schema " + name + " alone: not held by a connected run, but "
                                + whose + " wrote in it " + minutesText(idle)
                                + " ago (it may be reconnecting); it is dropped once idle for an hour");
                        return 0;
                    }
                    w.exec("DROP SCHEMA " + schema.quoted() + " CASCADE");
                    w.commit();
                    admin.say("dropped the scratch schema " + name + " left by " + whose + ", which is gone"
                        + (pidGone ? std::string() : " (nothing written in it for " + minutesText(idle) + ")"));
                    return 0;
                });
            } catch (const pqxx::sql_error& e) {
                admin.say("could not drop the leftover scratch schema " + name + ": " + e.what());
            }
        }
    }

    // A scenario's end by an exception, in words: a lost connection is not libpqxx's "Could not
    // obtain client encoding", a read-only server not a bare SQLSTATE.
    std::string failureText(const std::exception_ptr& error, bool& connectionLost, const std::string& cut)
    {
        connectionLost = false;
        try {
            std::rethrow_exception(error);
        } catch (const pqxx::broken_connection& e) {
            connectionLost = true;
            return "lost the connection to the database server: " + describeLostConnection(e.what()) + cut;
        } catch (const DatabaseUnavailable& e) {
            connectionLost = true;
            return std::string(e.what()) + cut;
        } catch (const ConnectError& e) {
            connectionLost = true;
            return std::string("cannot connect (") + connectErrorKindName(e.kind()) + "): " + e.what();
        } catch (const pqxx::sql_error& e) {
            if (isReadOnlyRefusal(e)) {
                connectionLost = true;
                return describeReadOnly(e.what()) + cut;
            }
            return e.what();
        } catch (const std::exception& e) {
            return e.what();
        }
    }

} // namespace

std::vector<ScenarioResult> runVerification(const VerifyOptions& options, const std::vector<int>& only)
{
    std::random_device rd;
    ScenarioEnv env { options.conninfo,
        SchemaName(!options.schema.empty()
                ? options.schema
                : "idem_verify_" + std::to_string(std::uniform_int_distribution<int>(100000, 999999)(rd))),
        options.workerExecutable };
    if (!options.workerExecutable.empty())
        env.workers.push_back({ options.workerExecutable, "scenario-worker" });
    for (const auto& command : options.workerCommands) {
        std::vector<std::string> words;
        std::istringstream in(command);
        for (std::string word; in >> word;)
            words.push_back(word);
        if (words.empty())
            throw std::invalid_argument("a worker command is empty");
        env.workers.push_back(std::move(words));
    }
    env.oneTransaction = options.oneTransaction || options.recordAtCommit;
    env.recordAtCommit = options.recordAtCommit;
    AdminConnection admin(options.conninfo, options.notice);
    admin.own(env.schema.name());
    const auto& names = scenarioNames();
    const auto selected = [&](int n) { return only.empty() || std::find(only.begin(), only.end(), n) != only.end(); };
    // A failover while the scratch schema is made is the run's failure in words, with its table:
    // every scenario not run, and the schema dropped (or named) as after a run.
    std::string setupFailure;
    bool schemaMade = false;
    try {
        // The schema first, with its owner: whatever happens after, a later run can tell whose it is.
        admin.run([&](pqxx::connection& c) {
            pqxx::work w(c);
            try {
                w.exec("CREATE SCHEMA " + env.schema.quoted());
            } catch (const pqxx::insufficient_privilege&) {
                // The console's operator and reader logins hold no CREATE on the database, by design.
                throw pqxx::insufficient_privilege(
                    std::string("permission denied to create the scratch schema verify runs in: ")
                        + "the login needs CREATE on database " + c.dbname()
                        + " (the console's operator and reader logins have none, by design). Run verify as a login"
                        + " that has it, e.g. after GRANT CREATE ON DATABASE " + c.quote_name(c.dbname())
                        + " TO <verify login>. Nothing was changed.\n",
                    "CREATE SCHEMA", "42501");
            }
            schemaMade = true;
            w.exec("CREATE TABLE " + env.table("verify_owner")
                + " (host text NOT NULL, pid bigint NOT NULL, started timestamptz NOT NULL DEFAULT now())");
            w.exec_params("INSERT INTO " + env.table("verify_owner") + " (host, pid) VALUES ($1, $2)", thisHost(),
                static_cast<long long>(::getpid()));
            w.commit();
            return 0;
        });
        dropLeftovers(admin, env.schema.name());
        admin.run([&](pqxx::connection& c) {
            migrate(c, { env.schema, false });
            pqxx::work w(c);
            w.exec("CREATE TABLE IF NOT EXISTS " + env.table("verify_effects")
                + " (id bigserial PRIMARY KEY, idempotency_key text NOT NULL, note text, at timestamptz DEFAULT "
                  "now())");
            w.exec("CREATE TABLE IF NOT EXISTS " + env.table("verify_downstream")
                + " (idempotency_key text PRIMARY KEY, calls integer NOT NULL)");
            w.commit();
            return 0;
        });
    } catch (const std::exception& e) {
        // Refused the schema itself: nothing was made; the caller says what the login lacks (exit 3).
        if (!schemaMade && dynamic_cast<const pqxx::insufficient_privilege*>(&e))
            throw;
        bool lost = false;
        setupFailure = failureText(std::current_exception(), lost, "");
        admin.say("could not make the scratch schema " + env.schema.name() + ": " + setupFailure);
    }

    const std::vector<std::function<std::string()>> scenarios = {
        [&] { return scenario1(env, options.threads, options.rounds); },
        [&] { return scenario2(env); },
        [&] { return scenario3(env); },
        [&] { return scenario4(env); },
        [&] { return scenario5(env); },
        [&] { return scenario6(env); },
        [&] { return scenarioImmutable(env); },
    };
    std::vector<ScenarioResult> results;
    for (int n = 1; n <= static_cast<int>(names.size()); ++n) {
        if (!selected(n))
            continue;
        ScenarioResult r { n, names[static_cast<std::size_t>(n - 1)] };
        if (!setupFailure.empty()) {
            r.detail = "not run: the scratch schema could not be made (" + setupFailure + ")";
            results.push_back(std::move(r));
            continue;
        }
        env.scenario = n;
        const auto started = std::chrono::steady_clock::now();
        try {
            r.detail = scenarios[static_cast<std::size_t>(n - 1)]();
            r.passed = true;
        } catch (const std::exception&) {
            bool lost = false;
            r.detail = failureText(std::current_exception(), lost, "; the scenario was cut short");
            if (lost) {
                // A failover or a switchover cut it short: it says nothing of the protocol. Run
                // once more on the primary, on keys of its own (the first run's acknowledged
                // successes are still held to the ledger below); a second cut fails it.
                admin.say("scenario " + std::to_string(n) + ": " + r.detail + "; running it again on the primary");
                const std::string first = r.detail;
                env.tenant = "verifyagain";
                try {
                    r.detail
                        = scenarios[static_cast<std::size_t>(n - 1)]() + " (run again: the first run " + first + ")";
                    r.passed = true;
                } catch (const std::exception&) {
                    bool lostAgain = false;
                    r.detail = failureText(std::current_exception(), lostAgain, "; the scenario was cut short again")
                        + " (the first run " + first + ")";
                    if (lostAgain)
                        admin.say("scenario " + std::to_string(n) + ": " + r.detail + "; the next one reconnects");
                }
                env.tenant = "verify";
            }
        }
        r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
        results.push_back(std::move(r));
    }
    try {
        // Nothing ran when the schema could not be made: nothing to hold to the database.
        if (setupFailure.empty() && options.beforeLedgerCheck)
            admin.run([&](pqxx::connection& c) {
                options.beforeLedgerCheck(c, env.schema);
                return 0;
            });
        if (setupFailure.empty())
            admin.run([&](pqxx::connection& c) {
                checkLedger(c, env, results);
                return 0;
            });
    } catch (const std::exception&) {
        // Not checked is not passed: the scenarios' answers were not held to the database.
        bool lost = false;
        const std::string why = failureText(std::current_exception(), lost, "");
        for (auto& r : results) {
            r.passed = false;
            r.detail += "; ledger NOT CHECKED: " + why;
        }
    }

    if (!options.keepSchema) {
        try {
            admin.run([&](pqxx::connection& c) {
                pqxx::work w(c);
                w.exec("DROP SCHEMA IF EXISTS " + env.schema.quoted() + " CASCADE");
                w.commit();
                return 0;
            });
        } catch (const std::exception& e) {
            admin.say("could not drop the scratch schema " + env.schema.name() + " (" + e.what()
                + "): a later idemctl verify drops it once this run is gone, or DROP SCHEMA " + env.schema.quoted()
                + " CASCADE");
        }
    }
    return results;
}

} // namespace idem::verify
