// Scenarios 4-6: crashes, unknown outcomes and backoff. 4 and 5 kill a real worker process.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "core/runner.h"
#include "core/sha256.h"
#include "operations/scenarioenv.h"
#include "operations/scenarios.h"

extern char** environ;

namespace idem::verify {

namespace {

    std::string digestOf(const std::string& request) { return "v1:" + sha256Hex(request); }

    // A child worker process: idemctl running `scenario-worker`, or another implementation of that
    // interface (VerifyOptions::workerCommands). The DSN travels in the environment, not argv, so
    // it never shows in a process listing.
    class WorkerProcess {
    public:
        WorkerProcess(const ScenarioEnv& env, const std::vector<std::string>& command, const TaskKey& key,
            const std::string& digest, long long leaseMs, const char* mode)
        {
            expect(!command.empty() && !command[0].empty(), "no worker executable to start (idemctl path unknown)");
            int fds[2];
            expect(::pipe(fds) == 0, "pipe failed");
            posix_spawn_file_actions_t actions;
            posix_spawn_file_actions_init(&actions);
            posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
            posix_spawn_file_actions_addclose(&actions, fds[0]);
            posix_spawn_file_actions_addclose(&actions, fds[1]);
            std::vector<std::string> args = command;
            for (const std::string& a : { std::string("--schema"), env.schema.name(), std::string("--key"), key.str(),
                     std::string("--digest"), digest, std::string("--lease-ms"), std::to_string(leaseMs),
                     std::string("--mode"), std::string(mode) })
                args.push_back(a);
            std::vector<std::string> envStrings;
            for (char** e = environ; *e; ++e)
                if (std::strncmp(*e, "IDEM_DSN=", 9) != 0)
                    envStrings.emplace_back(*e);
            envStrings.push_back("IDEM_DSN=" + env.conninfo);
            std::vector<char*> argv, envp;
            for (auto& a : args)
                argv.push_back(a.data());
            argv.push_back(nullptr);
            for (auto& e : envStrings)
                envp.push_back(e.data());
            envp.push_back(nullptr);
            // spawnp: a command such as "python3 -m ..." is found on PATH, as a shell would.
            const int rc = posix_spawnp(&m_pid, command[0].c_str(), &actions, nullptr, argv.data(), envp.data());
            posix_spawn_file_actions_destroy(&actions);
            ::close(fds[1]);
            if (rc != 0) {
                ::close(fds[0]);
                throw ScenarioFailed("cannot start " + command[0] + ": " + std::strerror(rc));
            }
            m_out = ::fdopen(fds[0], "r");
        }
        ~WorkerProcess()
        {
            kill();
            if (m_out)
                std::fclose(m_out);
        }
        WorkerProcess(const WorkerProcess&) = delete;
        WorkerProcess& operator=(const WorkerProcess&) = delete;

        // The first line the worker prints: "<what> <token>", or throws if it died first.
        std::string readLine()
        {
            char buf[512];
            expect(m_out && std::fgets(buf, sizeof buf, m_out), "the worker process exited before reporting");
            std::string line(buf);
            while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
                line.pop_back();
            return line;
        }
        void kill()
        {
            if (m_pid > 0) {
                ::kill(m_pid, SIGKILL);
                int status = 0;
                ::waitpid(m_pid, &status, 0);
                m_pid = -1;
            }
        }

    private:
        pid_t m_pid = -1;
        FILE* m_out = nullptr;
    };

    std::string tokenFrom(const std::string& line, const std::string& what, const std::string& worker)
    {
        expect(line.rfind(what + " ", 0) == 0,
            "the " + worker + " worker said '" + line + "', expected '" + what + " <token>'");
        return line.substr(what.size() + 1);
    }

    // Claims until the expired lease is taken over; every claim before that must say in_progress.
    ClaimResult claimAfterExpiry(TaskStore& store, const TaskKey& key, const std::string& digest)
    {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        for (;;) {
            auto c = store.claim(key, digest);
            if (c.decision != Decision::InProgress)
                return c;
            expect(std::chrono::steady_clock::now() < deadline, "the dead worker's lease never expired");
            std::this_thread::sleep_for(
                std::min(c.retryAfter, std::chrono::milliseconds(100)) + std::chrono::milliseconds(5));
        }
    }

    // Waits until the row's lease has run out by the server's clock, so that the next worker
    // process takes the key over instead of being told in_progress.
    void waitForLeaseEnd(const ScenarioEnv& env, pqxx::connection& conn, const TaskKey& key)
    {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        for (;;) {
            pqxx::read_transaction t(conn);
            const auto r = t.exec_params(
                "SELECT lease_until <= now() FROM " + env.table("task_idempotency") + " WHERE idempotency_key = $1",
                key.str());
            t.commit();
            if (!r.empty() && !r[0][0].is_null() && r[0][0].as<bool>())
                return;
            expect(std::chrono::steady_clock::now() < deadline, "the dead worker's lease never expired");
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }

    std::string commandName(const ScenarioEnv& env, const std::vector<std::string>& command)
    {
        return &command == &env.workers.front() ? std::string("idemctl") : command[0];
    }

} // namespace

int scenarioWorkerMain(const std::string& conninfo, const SchemaName& schema, const std::string& key,
    const std::string& digest, long long leaseMs, const std::string& mode)
{
    auto conn = connect(conninfo, { "idem scenario worker" });
    StoreOptions options;
    options.schema = schema;
    options.lease = std::chrono::milliseconds(leaseMs);
    TaskStore store(*conn, options);
    const TaskKey taskKey = TaskKey::parse(key);
    if (mode == "claim-rec" || mode == "write-rec") {
        // Record at commit: the write (for write-rec) and the record inside one transaction,
        // killed before its commit. It has no token: a fresh one stands for it (nothing holds it).
        pqxx::work tx(*conn);
        if (mode == "write-rec")
            tx.exec_params(
                "INSERT INTO " + schema.qualify("verify_effects") + " (idempotency_key, note) VALUES ($1, $2)", key,
                "written by the worker that is about to die");
        const auto recorded
            = store.recordInTransaction(tx, taskKey, digest, R"({"worker":"killed"})", std::chrono::milliseconds(20'000));
        if (!recorded.mayExecute()) {
            std::cout << "not-claimed " << decisionName(recorded.decision) << std::endl;
            return 1;
        }
        const std::string token = tx.exec("SELECT gen_random_uuid()::text")[0][0].as<std::string>();
        std::cout << (mode == "claim-rec" ? "claimed " : "written ") << token << std::endl;
        for (;;)
            std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (mode == "claim-1tx" || mode == "write-1tx") {
        // One transaction for local effects: the claim (and the write) inside it, killed before its commit.
        pqxx::work tx(*conn);
        const auto claim = store.claimInTransaction(tx, taskKey, digest, std::chrono::milliseconds(20'000));
        if (!claim.mayExecute()) {
            std::cout << "not-claimed " << decisionName(claim.decision) << std::endl;
            return 1;
        }
        if (mode == "write-1tx")
            tx.exec_params(
                "INSERT INTO " + schema.qualify("verify_effects") + " (idempotency_key, note) VALUES ($1, $2)", key,
                "written by the worker that is about to die");
        std::cout << (mode == "claim-1tx" ? "claimed " : "written ") << claim.token << std::endl;
        for (;;)
            std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    const auto claim = store.claim(taskKey, digest);
    if (!claim.mayExecute()) {
        std::cout << "not-claimed " << decisionName(claim.decision) << std::endl;
        return 1;
    }
    if (mode == "claim") {
        std::cout << "claimed " << claim.token << std::endl;
        for (;;)
            std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    pqxx::work tx(*conn);
    store.fence(tx, taskKey, claim.token);
    tx.exec_params("INSERT INTO " + schema.qualify("verify_effects") + " (idempotency_key, note) VALUES ($1, $2)", key,
        "written by the worker that is about to die");
    std::cout << "written " << claim.token << std::endl;
    for (;;) // killed here: after the business write, before the commit
        std::this_thread::sleep_for(std::chrono::seconds(1));
}

namespace {
    std::string killedBeforeCommitInOneTransaction(const ScenarioEnv& env, pqxx::connection& conn, TaskStore& store,
        const TaskKey& key, const std::string& digest);
    std::string killedBeforeCommit(const ScenarioEnv& env, pqxx::connection& conn, TaskStore& store, const TaskKey& key,
        const std::string& digest);
    std::string unknownOutcomeRetried(const ScenarioEnv& env, pqxx::connection& conn);
    void expectHeldInvisibly(const ScenarioEnv& env, pqxx::connection& conn, TaskStore& store, const TaskKey& key,
        const std::string& digest, const std::string& before, const std::string& worker);
    void expectRunsAtOnce(const ScenarioEnv& env, pqxx::connection& conn, TaskStore& store, const TaskKey& key,
        const std::string& digest, int attempts, const std::vector<std::string>& deadTokens);

    // Scenario 4 in one transaction: each worker claims the key in its one transaction and is killed;
    // its claim goes with it, so the next claim is not kept waiting for a lease and counts attempt 1.
    std::string scenario4OneTransaction(const ScenarioEnv& env)
    {
        const TaskKey key(env.tenant, "s4", "order-1");
        const std::string digest = digestOf("s4");
        expect(!env.workers.empty(), "no worker executable to start (idemctl path unknown)");
        auto conn = env.connect();
        TaskStore store(*conn, env.storeOptions());
        std::vector<std::string> deadTokens;
        for (const auto& command : env.workers) {
            {
                WorkerProcess worker(env, command, key, digest, 1500, env.workerMode("claim").c_str());
                deadTokens.push_back(tokenFrom(worker.readLine(), "claimed", commandName(env, command)));
                expectHeldInvisibly(env, *conn, store, key, digest, "", commandName(env, command));
            } // SIGKILL
        }
        expectRunsAtOnce(env, *conn, store, key, digest, 1, deadTokens);
        return "workers " + env.workerNames()
            + " each claimed the key in one transaction and were SIGKILLed; a duplicate "
            + "waited and said in_progress while each ran, nothing showed; after the kills no lease to wait out: the "
              "next "
              "run went at once, attempt 1; every dead token was refused; 1 effect";
    }
} // namespace

// 4. A worker process killed after claiming: after its lease another claims with a new token
// and attempts + 1; the dead worker's token can no longer commit anything. With several worker
// implementations (VerifyOptions::workerCommands) each one claims the same key in turn after the
// last one's lease ran out, and is killed; the takeover then counts one attempt more than them.
std::string scenario4(const ScenarioEnv& env)
{
    if (env.oneTransaction)
        return scenario4OneTransaction(env);
    const TaskKey key(env.tenant, "s4", "order-1");
    const std::string digest = digestOf("s4");
    expect(!env.workers.empty(), "no worker executable to start (idemctl path unknown)");
    auto conn = env.connect();
    TaskStore store(*conn, env.storeOptions());
    std::vector<std::string> deadTokens;
    for (const auto& command : env.workers) {
        if (!deadTokens.empty())
            waitForLeaseEnd(env, *conn, key);
        {
            WorkerProcess worker(env, command, key, digest, 1500, "claim");
            deadTokens.push_back(tokenFrom(worker.readLine(), "claimed", commandName(env, command)));
        } // SIGKILL
        const auto early = store.claim(key, digest);
        expect(early.decision == Decision::InProgress && early.retryAfter.count() > 0,
            "while the lease of the killed " + commandName(env, command) + " worker is live a claim said "
                + decisionName(early.decision));
    }
    const int workers = static_cast<int>(deadTokens.size());
    const auto taken = claimAfterExpiry(store, key, digest);
    expect(taken.decision == Decision::Reacquired && taken.detail == "lease_expired",
        std::string("after expiry the claim said ") + decisionName(taken.decision) + " " + taken.detail);
    expect(taken.attempts == workers + 1,
        "attempts after takeover is " + std::to_string(taken.attempts) + ", not " + std::to_string(workers + 1));
    for (const auto& deadToken : deadTokens) {
        expect(taken.token != deadToken, "the takeover reused a dead token");
        bool fenced = false;
        try {
            pqxx::work tx(*conn);
            store.fence(tx, key, deadToken);
            env.insertEffect(tx, key, "dead executor");
            store.complete(tx, key, deadToken, "{}");
            tx.commit();
        } catch (const LostOwnership&) {
            fenced = true;
        }
        expect(fenced, "a dead worker's token could still complete");
    }
    expect(env.effects(*conn, key) == 0, "a dead token's business write landed");
    {
        pqxx::work tx(*conn);
        store.fence(tx, key, taken.token);
        env.insertEffect(tx, key, "new executor");
        store.complete(tx, key, taken.token, R"({"ok":true})");
        tx.commit();
    }
    expect(env.effects(*conn, key) == 1, "business effects != 1 after the new executor");
    const auto row = nlohmann::json::parse(env.rowJson(*conn, key));
    expect(row["status"] == "succeeded" && row["attempts"] == workers + 1, "record is " + row.dump());
    if (workers == 1)
        return "SIGKILLed after claim; in_progress until the lease ran out; taken over with a new token at attempt "
               "2; the dead token was refused; 1 effect";
    return "workers " + env.workerNames() + " each claimed the key after the last one's lease and were SIGKILLed; "
        + "in_progress while each lease was live; taken over at attempt " + std::to_string(workers + 1)
        + "; every dead token was refused; 1 effect";
}

// 5. A worker killed after its business write, before commit: neither lands. Then an external
// side effect whose answer is lost: retried with the same key, the downstream keeps one effect.
// With several worker implementations each writes and is killed in turn on the same key.
std::string scenario5(const ScenarioEnv& env)
{
    const TaskKey key(env.tenant, "s5", "order-1");
    const std::string digest = digestOf("s5");
    expect(!env.workers.empty(), "no worker executable to start (idemctl path unknown)");
    auto conn = env.connect();
    TaskStore store(*conn, env.storeOptions());
    std::string killed;
    if (env.oneTransaction)
        killed = killedBeforeCommitInOneTransaction(env, *conn, store, key, digest);
    else
        killed = killedBeforeCommit(env, *conn, store, key, digest);
    return killed + unknownOutcomeRetried(env, *conn);
}

namespace {

    // Scenario 5's first half in two steps: a worker killed after its business write, before commit.
    std::string killedBeforeCommit(const ScenarioEnv& env, pqxx::connection& connRef, TaskStore& store,
        const TaskKey& key, const std::string& digest)
    {
        pqxx::connection* conn = &connRef;
        int workers = 0;
        for (const auto& command : env.workers) {
            if (workers > 0)
                waitForLeaseEnd(env, *conn, key);
            {
                WorkerProcess worker(env, command, key, digest, 1500, "write");
                tokenFrom(worker.readLine(), "written", commandName(env, command));
                const auto busy = store.claim(key, digest);
                expect(busy.decision == Decision::InProgress,
                    "a claim during the " + commandName(env, command)
                        + " worker's transaction did not say in_progress");
            } // SIGKILL: the open transaction dies with the process
            ++workers;
            expect(env.effects(*conn, key) == 0,
                "the killed " + commandName(env, command) + " worker's uncommitted business write landed");
            const auto row = nlohmann::json::parse(env.rowJson(*conn, key));
            expect(row["status"] == "processing" && row["attempts"] == workers,
                "after the killed " + commandName(env, command) + " worker the record is " + row.dump());
        }
        const auto retried = runTask(store, key, digest, [&](pqxx::work& tx, const TaskContext&) {
            env.insertEffect(tx, key, "too early");
            return std::string("{}");
        });
        expect(retried.kind == RunOutcome::Kind::InProgress, "the dead worker's lease was not respected");
        const auto taken = claimAfterExpiry(store, key, digest);
        expect(taken.decision == Decision::Reacquired && taken.attempts == workers + 1,
            std::string("after expiry the claim said ") + decisionName(taken.decision) + " at attempt "
                + std::to_string(taken.attempts));
        {
            pqxx::work tx(*conn);
            store.fence(tx, key, taken.token);
            env.insertEffect(tx, key, "after crash");
            store.complete(tx, key, taken.token, R"({"ok":true})");
            tx.commit();
        }
        expect(env.effects(*conn, key) == 1, "business effects != 1 after the takeover");
        return workers == 1
            ? std::string(
                "SIGKILLed after the business write: no write, no success, in_progress until the lease ran out; ")
            : "workers " + env.workerNames() + " each wrote on the key after the last one's lease and were SIGKILLed "
                + "before commit: no write, no success, in_progress while each lease was live, taken over at attempt "
                + std::to_string(workers + 1) + "; ";
    }

    // Scenario 5's second half: an external side effect whose answer is lost, retried with the same
    // key; the downstream keeps one effect.
    std::string unknownOutcomeRetried(const ScenarioEnv& env, pqxx::connection& connRef)
    {
        pqxx::connection* conn = &connRef;
        StoreOptions fast = env.storeOptions();
        fast.retry.baseDelay = std::chrono::milliseconds(10);
        fast.retry.maxDelay = std::chrono::milliseconds(10);
        TaskStore quick(*conn, fast);
        auto downstream = env.connect();
        const TaskKey payKey(env.tenant, "s5", "payment-1");
        const std::string payDigest = digestOf("s5-pay");
        std::vector<std::string> keysSent;
        const auto pay = [&](pqxx::work& tx, const TaskContext& ctx) {
            keysSent.push_back(ctx.idempotencyKey);
            env.callDownstream(*downstream, TaskKey::parse(ctx.idempotencyKey));
            if (ctx.attempt == 1)
                throw TaskFailure(FailureClass::Unknown, "timeout after the payment request was sent");
            expect(ctx.previousOutcomeUnknown, "the retry was not told the last outcome was unknown");
            env.insertEffect(tx, payKey, "paid");
            return std::string(R"({"paid":true})");
        };
        const auto first = runTask(quick, payKey, payDigest, pay, env.runOptions());
        expect(first.kind == RunOutcome::Kind::WillRetry,
            std::string("unknown outcome gave ") + runOutcomeName(first.kind));
        const auto row = nlohmann::json::parse(env.rowJson(*conn, payKey));
        expect(row["status"] == "retryable_failed" && row["error_class"] == "unknown",
            "record after unknown: " + row.dump());
        RunOutcome second;
        for (int i = 0; i < 100; ++i) {
            second = runTask(quick, payKey, payDigest, pay, env.runOptions());
            if (second.kind != RunOutcome::Kind::RetryLater)
                break;
            std::this_thread::sleep_for(second.claim.retryAfter + std::chrono::milliseconds(2));
        }
        expect(
            second.kind == RunOutcome::Kind::Succeeded, std::string("the retry gave ") + runOutcomeName(second.kind));
        env.acknowledge(payKey, second);
        expect(keysSent.size() == 2 && keysSent[0] == keysSent[1] && keysSent[0] == payKey.str(),
            "the retry did not reach the downstream with the same key");
        pqxx::read_transaction t(*conn);
        const auto d = t.exec_params(
            "SELECT count(*), max(calls) FROM " + env.table("verify_downstream") + " WHERE idempotency_key = $1",
            payKey.str());
        expect(d[0][0].as<long long>() == 1 && d[0][1].as<int>() == 2,
            "downstream holds " + d[0][0].as<std::string>() + " effects after " + d[0][1].as<std::string>() + " calls");
        t.commit();
        expect(env.effects(*conn, payKey) == 1, "business effects != 1 for the payment");
        return "unknown outcome retried with the same key: 2 downstream calls, 1 downstream effect, 1 business effect";
    }

    // While a worker holds the key in its one transaction, a one-transaction claim waits for it; its
    // short wait running out says in_progress, and nothing of the worker's shows.
    void expectHeldInvisibly(const ScenarioEnv& env, pqxx::connection& conn, TaskStore& store, const TaskKey& key,
        const std::string& digest, const std::string& before, const std::string& worker)
    {
        pqxx::work tx(conn);
        const auto busy = store.claimInTransaction(tx, key, digest, std::chrono::milliseconds(300));
        tx.abort();
        expect(busy.decision == Decision::InProgress && busy.detail == "wait_timeout",
            "a claim during the " + worker + " worker's one transaction said " + decisionName(busy.decision) + " "
                + busy.detail);
        expect(env.rowJson(conn, key) == before, "the " + worker + " worker's uncommitted claim showed");
        expect(env.effects(conn, key) == 0, "the " + worker + " worker's uncommitted business write showed");
    }

    // After the kill the next run goes at once: nothing to wait out. Its run succeeds at `attempts`.
    void expectRunsAtOnce(const ScenarioEnv& env, pqxx::connection& conn, TaskStore& store, const TaskKey& key,
        const std::string& digest, int attempts, const std::vector<std::string>& deadTokens)
    {
        const auto out = runTask(
            store, key, digest,
            [&](pqxx::work& tx, const TaskContext& ctx) {
                expect(std::find(deadTokens.begin(), deadTokens.end(), ctx.token) == deadTokens.end(),
                    "a dead token was reused");
                env.insertEffect(tx, key, "after the kill");
                return std::string(R"({"ok":true})");
            },
            env.runOptions());
        expect(out.kind == RunOutcome::Kind::Succeeded,
            std::string("the run after the kill said ") + runOutcomeName(out.kind) + " " + out.claim.detail + ": "
                + out.error);
        env.acknowledge(key, out);
        for (const auto& deadToken : deadTokens) {
            bool fenced = false;
            try {
                pqxx::work tx(conn);
                store.fence(tx, key, deadToken);
                env.insertEffect(tx, key, "dead executor");
                store.complete(tx, key, deadToken, "{}");
                tx.commit();
            } catch (const LostOwnership&) {
                fenced = true;
            }
            expect(fenced, "a dead worker's token could still complete");
        }
        expect(env.effects(conn, key) == 1, "business effects != 1 after the run that followed the kill");
        const auto row = nlohmann::json::parse(env.rowJson(conn, key));
        expect(row["status"] == "succeeded" && row["attempts"] == attempts, "record is " + row.dump());
    }

    // Scenario 5's first half in one transaction: each worker writes on the key in its one
    // transaction and is killed before the commit; nothing of it lands, not even its claim.
    std::string killedBeforeCommitInOneTransaction(
        const ScenarioEnv& env, pqxx::connection& conn, TaskStore& store, const TaskKey& key, const std::string& digest)
    {
        std::vector<std::string> deadTokens;
        for (const auto& command : env.workers) {
            const std::string before = env.rowJson(conn, key);
            {
                WorkerProcess worker(env, command, key, digest, 1500, env.workerMode("write").c_str());
                deadTokens.push_back(tokenFrom(worker.readLine(), "written", commandName(env, command)));
                expectHeldInvisibly(env, conn, store, key, digest, before, commandName(env, command));
            } // SIGKILL: the open transaction dies with the process
        }
        expect(env.rowJson(conn, key).empty(), "a killed worker's claim remained");
        expectRunsAtOnce(env, conn, store, key, digest, 1, deadTokens);
        return "workers " + env.workerNames() + " each wrote on the key in one transaction and were SIGKILLed before "
            + "commit: a duplicate waited and said in_progress, nothing showed, nothing remained (no claim, no write, "
              "no "
              "lease); the next run went at once, attempt 1; ";
    }

} // namespace

// 6. Transient errors back off with bounded jitter and every claimer respects next_attempt_at;
// permanent errors stop at once; exhaustion ends in failed with the last error and attempts.
std::string scenario6(const ScenarioEnv& env)
{
    StoreOptions o = env.storeOptions();
    o.retry.maxAttempts = 5;
    o.retry.baseDelay = std::chrono::milliseconds(40);
    o.retry.maxDelay = std::chrono::milliseconds(1000);
    constexpr int keys = 12;
    std::map<int, std::vector<double>> delaysByAttempt;
    std::mutex m;
    std::vector<std::thread> pool;
    std::vector<std::string> errors(keys);
    for (int k = 0; k < keys; ++k) {
        pool.emplace_back([&, k] {
            try {
                auto conn = env.connect();
                TaskStore worker(*conn, o);
                TaskStore other(*conn, o);
                const TaskKey key(env.tenant, "s6", "flaky-" + std::to_string(k));
                const std::string digest = digestOf("s6-" + std::to_string(k));
                int failures = 0;
                for (int guard = 0; guard < 500; ++guard) {
                    const auto out = runTask(
                        worker, key, digest,
                        [&](pqxx::work& tx, const TaskContext& ctx) {
                            env.insertEffect(tx, key, "never commits");
                            throw TaskFailure(
                                FailureClass::Retryable, "transient failure #" + std::to_string(ctx.attempt));
                            return std::string();
                        },
                        env.runOptions());
                    if (out.kind == RunOutcome::Kind::Failed && failures > 0)
                        break;
                    if (out.kind == RunOutcome::Kind::RetryLater) {
                        std::this_thread::sleep_for(std::min(out.claim.retryAfter, std::chrono::milliseconds(20)));
                        continue;
                    }
                    expect(out.kind == RunOutcome::Kind::WillRetry || out.kind == RunOutcome::Kind::Failed,
                        std::string("unexpected ") + runOutcomeName(out.kind));
                    ++failures;
                    // Reads the backoff the last failure set, checks it against the policy's window
                    // and returns its next_attempt_at, or "" once the record has failed for good.
                    const auto recordBackoff = [&]() -> std::string {
                        pqxx::read_transaction t(*conn);
                        const auto r = t.exec_params(
                            "SELECT status, extract(epoch FROM next_attempt_at - updated_at) * 1000, attempts,"
                            " next_attempt_at::text FROM "
                                + env.table("task_idempotency") + " WHERE idempotency_key = $1",
                            key.str());
                        t.commit();
                        if (r[0][0].as<std::string>() == "failed")
                            return {};
                        const double delay = r[0][1].as<double>();
                        const int attempt = r[0][2].as<int>();
                        const double ceiling = static_cast<double>(o.retry.ceilingAfter(attempt).count());
                        expect(delay >= 0 && delay <= ceiling + 1,
                            "delay " + std::to_string(delay) + " ms outside [0, " + std::to_string(ceiling) + "]");
                        std::lock_guard lock(m);
                        delaysByAttempt[attempt].push_back(delay);
                        return r[0][3].as<std::string>();
                    };
                    const std::string nextAttemptAt = recordBackoff();
                    if (nextAttemptAt.empty())
                        break;
                    // Every other claimer must wait for next_attempt_at too.
                    const auto c = other.claim(key, digest);
                    if (c.decision == Decision::Reacquired) {
                        // Only legal once the backoff has elapsed: the claim's own time (updated_at)
                        // must not precede the next_attempt_at it replaced.
                        pqxx::read_transaction t2(*conn);
                        const bool due = t2.exec_params("SELECT updated_at >= $2::timestamptz FROM "
                                                   + env.table("task_idempotency") + " WHERE idempotency_key = $1",
                                               key.str(), nextAttemptAt)[0][0]
                                             .as<bool>();
                        t2.commit();
                        expect(due, "a claimer took the row before next_attempt_at " + nextAttemptAt);
                        other.fail(key, c.token, c.attempts, FailureClass::Retryable,
                            "transient failure #" + std::to_string(c.attempts));
                        if (recordBackoff().empty())
                            break;
                    } else {
                        expect(c.decision == Decision::RetryLater,
                            std::string("a claimer during backoff got ") + decisionName(c.decision));
                    }
                }
                pqxx::read_transaction t(*conn);
                const auto r = t.exec_params("SELECT status, attempts, error_message, jsonb_array_length(errors) FROM "
                        + env.table("task_idempotency") + " WHERE idempotency_key = $1",
                    key.str());
                expect(r[0][0].as<std::string>() == "failed" && r[0][1].as<int>() == 5
                        && r[0][2].as<std::string>() == "transient failure #5" && r[0][3].as<int>() == 5,
                    "exhausted record: " + r[0][0].as<std::string>() + ", attempts " + r[0][1].as<std::string>() + ", '"
                        + r[0][2].as<std::string>() + "'");
            } catch (const std::exception& e) {
                errors[static_cast<std::size_t>(k)] = e.what();
            }
        });
    }
    for (auto& t : pool)
        t.join();
    for (const auto& e : errors)
        expect(e.empty(), e);
    const auto mean = [&](int attempt) {
        const auto& v = delaysByAttempt[attempt];
        double sum = 0;
        for (double d : v)
            sum += d;
        return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
    };
    expect(mean(4) > mean(1),
        "mean delay did not grow: attempt 1 " + std::to_string(mean(1)) + " ms, attempt 4 " + std::to_string(mean(4))
            + " ms");

    auto conn = env.connect();
    TaskStore store(*conn, o);
    const TaskKey bad(env.tenant, "s6", "invalid-card");
    const auto perm = runTask(
        store, bad, digestOf("s6-bad"),
        [&](pqxx::work& tx, const TaskContext&) -> std::string {
            env.insertEffect(tx, bad, "never commits");
            throw TaskFailure(FailureClass::Permanent, "card declined");
        },
        env.runOptions());
    expect(
        perm.kind == RunOutcome::Kind::Failed && perm.failure.attempts == 1, "a permanent error did not stop at once");
    const auto after = store.claim(bad, digestOf("s6-bad"));
    expect(after.decision == Decision::Failed && after.errorMessage == "card declined",
        "a claim after a permanent error was not refused as failed");
    expect(env.effects(*conn, bad) == 0, "a failed attempt's business write landed");
    char summary[200];
    std::snprintf(summary, sizeof summary,
        "%d keys to exhaustion at 5 attempts; mean delay %.0f/%.0f/%.0f/%.0f ms after attempts 1-4 "
        "(ceilings 40/80/160/320); permanent error failed at attempt 1; no effects",
        keys, mean(1), mean(2), mean(3), mean(4));
    return summary;
}

} // namespace idem::verify
