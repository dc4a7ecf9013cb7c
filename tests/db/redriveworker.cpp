// A worker process for tst_redrive (schema v25, docs/redrive.md), linked with idem_core alone, so
// that the test can kill it with SIGKILL in the middle of a batch. It connects with
// $IDEM_REDRIVE_DSN (the password stays out of argv). The business effect of key K is one row
// (K, WHO) inserted into public.redrive_effects inside the fenced transaction, with no unique
// constraint: a second effect of a key would be a second row, which the test counts.
//
//   idem-t-redriver redrive TENANT OPERATION WORKER LISTEN(1|0) [ITEM_LEASE_MS]
//       registers nothing (the test did), runs an idem::Redriver until SIGTERM; prints
//       "ready" once it reported its presence, and "stats TAKEN SUCCEEDED FAILED LATER STALE" at the end.
//   idem-t-redriver client TENANT OPERATION FIRST COUNT SEED DEADLINE_S
//       the original client: retries keys TENANT:OPERATION:k-FIRST.. with their requests
//       ({"amount": i, "card": "4242-i", "currency": "EUR"}), in an order of its own (SEED),
//       through the ordinary path (runTask, storing the request), until each key succeeded or
//       replayed, or the deadline; prints "done N" with the keys it saw succeed.
// Leases are short (3 s), so what a killed process held is taken again soon.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/digest.h"
#include "core/redrive.h"
#include "core/runner.h"

namespace {

std::atomic<idem::Redriver*> g_redriver { nullptr };
std::atomic<bool> g_stop { false };

extern "C" void onStop(int)
{
    g_stop = true;
    if (auto* r = g_redriver.load())
        r->stop();
}

[[noreturn]] void die(const std::string& what)
{
    std::cerr << "idem-t-redriver: " << what << std::endl;
    std::exit(1);
}

nlohmann::json requestOf(int i)
{
    return { { "amount", i }, { "card", "4242-" + std::to_string(i) }, { "currency", "EUR" } };
}

idem::StoreOptions storeOptions(const std::string& operation)
{
    idem::StoreOptions o;
    o.lease = std::chrono::seconds(3);
    o.retry.maxAttempts = 50;
    o.retry.baseDelay = std::chrono::milliseconds(50);
    o.retry.maxDelay = std::chrono::milliseconds(200);
    o.storeRequestsOf = { operation };
    return o;
}

std::string effect(pqxx::work& tx, const idem::TaskContext& ctx, const std::string& who)
{
    tx.exec_params("INSERT INTO public.redrive_effects (idempotency_key, by_whom) VALUES ($1, $2)", ctx.key.str(), who);
    return nlohmann::json({ { "charged", ctx.key.businessId() }, { "by", who } }).dump();
}

int redrive(int argc, char** argv, const char* dsn)
{
    if (argc < 6)
        die("usage: idem-t-redriver redrive TENANT OPERATION WORKER LISTEN [ITEM_LEASE_MS]");
    const std::string tenant = argv[2], operation = argv[3], worker = argv[4];
    idem::RedriveOptions options;
    options.version = "redrive-test-1";
    options.listen = std::string(argv[5]) == "1";
    options.poll = std::chrono::milliseconds(options.listen ? 2000 : 200);
    options.batch = 10;
    options.itemLease = std::chrono::milliseconds(argc > 6 ? std::atoi(argv[6]) : 3000);
    options.presenceEvery = std::chrono::seconds(2);
    auto conn = idem::connect(dsn, { "idem-t-redriver" });
    idem::Redriver redriver(*conn, storeOptions(operation), tenant, operation, worker,
        [&](pqxx::work& tx, const idem::TaskContext& ctx, const nlohmann::json& request) {
            if (!request.contains("amount"))
                throw idem::TaskFailure(idem::FailureClass::Permanent, "no amount");
            return effect(tx, ctx, worker);
        },
        options);
    g_redriver = &redriver;
    std::signal(SIGTERM, onStop);
    std::signal(SIGINT, onStop);
    // The first presence report, then "ready": the test starts what must meet an online re-driver.
    redriver.runOnce();
    std::cout << "ready" << std::endl;
    redriver.run();
    const auto& s = redriver.stats();
    std::cout << "stats " << s.taken << ' ' << s.succeeded << ' ' << s.failed << ' ' << s.later << ' ' << s.stale
              << std::endl;
    g_redriver = nullptr;
    return 0;
}

int client(int argc, char** argv, const char* dsn)
{
    if (argc != 8)
        die("usage: idem-t-redriver client TENANT OPERATION FIRST COUNT SEED DEADLINE_S");
    const std::string tenant = argv[2], operation = argv[3];
    const int first = std::atoi(argv[4]), count = std::atoi(argv[5]);
    std::mt19937 rng(static_cast<unsigned>(std::atoi(argv[6])));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(argv[7]));
    std::signal(SIGTERM, onStop);
    auto conn = idem::connect(dsn, { "idem-t-redriver client" });
    idem::TaskStore store(*conn, storeOptions(operation));
    std::vector<int> todo;
    for (int i = first; i < first + count; ++i)
        todo.push_back(i);
    int done = 0;
    while (!todo.empty() && !g_stop && std::chrono::steady_clock::now() < deadline) {
        std::shuffle(todo.begin(), todo.end(), rng);
        std::vector<int> left;
        for (int i : todo) {
            const idem::TaskKey key(tenant, operation, "k-" + std::to_string(i));
            const auto request = requestOf(i);
            idem::RunOptions run;
            run.request = idem::canonicalRequest(request);
            const auto out = idem::runTask(store, key, idem::requestDigest(request),
                [&](pqxx::work& tx, const idem::TaskContext& ctx) { return effect(tx, ctx, "client"); }, run);
            if (out.kind == idem::RunOutcome::Kind::Succeeded || out.kind == idem::RunOutcome::Kind::Replayed)
                ++done;
            else
                left.push_back(i); // failed (not requeued yet), in progress, in backoff: later
        }
        todo = std::move(left);
        if (!todo.empty())
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::cout << "done " << done << std::endl;
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    const char* dsn = std::getenv("IDEM_REDRIVE_DSN");
    if (!dsn)
        die("IDEM_REDRIVE_DSN is not set");
    if (argc < 2)
        die("usage: idem-t-redriver redrive|client ...");
    try {
        const std::string mode = argv[1];
        if (mode == "redrive")
            return redrive(argc, argv, dsn);
        if (mode == "client")
            return client(argc, argv, dsn);
        die("unknown mode " + mode);
    } catch (const std::exception& e) {
        die(e.what());
    }
}
