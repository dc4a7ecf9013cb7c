// idem-bench-redrive (schema v25, issue 42; bench/README.md "Session 17"): re-execution.
//
//   idem-bench-redrive --dsn DSN [--keys N] [--redrivers R] [--claims N] [--rounds N]
//
// In a scratch schema it migrates (and drops at the end):
// 1. Throughput: N (default 4000) failed keys of a re-drivable operation with stored requests,
//    requeued with re-execute in one statement; R (default 4) idem::Redriver threads, each on its
//    own connection (batch 10, polling), run them all (claim, fenced business write, complete,
//    finish). Keys re-executed per second, from the first take to the last finish.
// 2. The claim path: claims of new keys plus their complete, through TaskStore on one
//    connection, alternating ABBA over --rounds (default 7) rounds of --claims (default 2000):
//    (a) a re-drivable operation, whose claims store a 200-byte request (idem_claim_stored),
//        against the same store's claims of an operation not registered (claim());
//    (b) an operation not registered, through a store that stores the requests of another
//        operation (storeRequestsOf non-empty), against a store without any (the v24 path).
//    Each ratio is the median over the rounds of (throughput of the first) / (the second).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/digest.h"
#include "core/redrive.h"
#include "core/runner.h"
#include "schema/migrate.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
    std::string dsn;
    int keys = 4000;
    int redrivers = 4;
    int claims = 2000;
    int rounds = 7;
};

Args parse(int argc, char** argv)
{
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--dsn")
            a.dsn = v;
        else if (k == "--keys")
            a.keys = std::stoi(v);
        else if (k == "--redrivers")
            a.redrivers = std::stoi(v);
        else if (k == "--claims")
            a.claims = std::stoi(v);
        else if (k == "--rounds")
            a.rounds = std::stoi(v);
        else
            throw std::invalid_argument("unknown option " + k);
    }
    if (a.dsn.empty())
        throw std::invalid_argument("usage: idem-bench-redrive --dsn DSN [--keys N] [--redrivers R] [--claims N] [--rounds N]");
    return a;
}

nlohmann::json requestOf(long long i)
{
    // About 200 bytes of canonical JSON, like a payment request.
    return { { "amount_cents", 1000 + i }, { "currency", "EUR" }, { "target", "acct-" + std::to_string(i % 977) },
        { "customer", { { "id", "cus-" + std::to_string(i) }, { "email", "someone" + std::to_string(i) + "@example.com" } } },
        { "description", "order " + std::to_string(i) + " of the benchmark, paid by card" } };
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Claims of new keys of `operation` plus complete, one round; returns tasks per second.
double claimRun(idem::TaskStore& store, const std::string& operation, int n, long long& next, bool stored)
{
    const auto start = Clock::now();
    for (int i = 0; i < n; ++i) {
        const long long id = next++;
        const auto request = requestOf(id);
        idem::RunOptions run;
        if (stored)
            run.request = idem::canonicalRequest(request);
        const auto out = idem::runTask(store, idem::TaskKey("b", operation, std::to_string(id)), idem::requestDigest(request),
            [](pqxx::work&, const idem::TaskContext&) { return std::string("{}"); }, run);
        if (out.kind != idem::RunOutcome::Kind::Succeeded)
            throw std::runtime_error(std::string("unexpected outcome ") + idem::runOutcomeName(out.kind));
    }
    return n / std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

int main(int argc, char** argv)
{
    try {
        const Args a = parse(argc, argv);
        const idem::SchemaName schema("idem_bench_redrive");
        auto conn = idem::connect(a.dsn, { "idem-bench-redrive" });
        pqxx::nontransaction(*conn).exec("DROP SCHEMA IF EXISTS " + schema.quoted() + " CASCADE");
        idem::migrate(*conn, { schema, false });
        idem::registerRedrivable(*conn, schema, { "b", "rd", 65536, {} });
        pqxx::nontransaction(*conn).exec("CREATE TABLE " + schema.qualify("bench_redrive_effects")
            + " (idempotency_key text NOT NULL, worker text NOT NULL)");

        // 1. Plant N failed keys with stored requests, requeue them with re-execute.
        {
            nlohmann::json keys = nlohmann::json::array(), hashes = nlohmann::json::array(),
                           requests = nlohmann::json::array();
            for (int i = 0; i < a.keys; ++i) {
                keys.push_back("b:rd:k-" + std::to_string(i));
                hashes.push_back(idem::requestDigest(requestOf(i)));
                requests.push_back(idem::canonicalRequest(requestOf(i)));
            }
            pqxx::work w(*conn);
            w.exec_params("SELECT count(*) FROM jsonb_array_elements_text($1::jsonb) WITH ORDINALITY k(key, n), LATERAL "
                    + schema.qualify("idem_claim_stored")
                    + "(k.key, $2::jsonb ->> (k.n - 1)::int, gen_random_uuid(), 60000, 3, NULL, $3::jsonb ->> (k.n - 1)::int) c",
                keys.dump(), hashes.dump(), requests.dump());
            w.exec("UPDATE " + schema.qualify("task_idempotency")
                + " SET status = 'failed', owner_token = NULL, lease_until = NULL, updated_at = now()");
            w.commit();
            pqxx::nontransaction(*conn).exec("SELECT count(*) FROM " + schema.qualify("task_idempotency") + " t, LATERAL "
                + schema.qualify("idem_requeue_reexecute")
                + "(t.idempotency_key, t.status, (extract(epoch FROM t.updated_at) * 1000000)::bigint, 1, 'bench', 'bench') r");
        }
        std::atomic<long long> firstTakeNs { 0 };
        const auto t0 = Clock::now();
        std::vector<std::thread> threads;
        std::vector<long long> done(static_cast<std::size_t>(a.redrivers));
        for (int r = 0; r < a.redrivers; ++r) {
            threads.emplace_back([&, r] {
                auto c = idem::connect(a.dsn, { "idem-bench-redrive " + std::to_string(r) });
                idem::StoreOptions store;
                store.schema = schema;
                store.storeRequestsOf = { "rd" };
                idem::RedriveOptions options;
                options.listen = false;
                options.poll = std::chrono::milliseconds(20);
                options.version = "bench";
                const std::string worker = "bench-" + std::to_string(r);
                idem::Redriver redriver(*c, store, "b", "rd", worker,
                    [&](pqxx::work& tx, const idem::TaskContext& ctx, const nlohmann::json&) {
                        tx.exec_params("INSERT INTO " + schema.qualify("bench_redrive_effects") + " VALUES ($1, $2)",
                            ctx.key.str(), worker);
                        return std::string("{}");
                    },
                    options);
                bool counted = false;
                for (;;) {
                    const int taken = redriver.runOnce();
                    if (taken > 0 && !counted) {
                        counted = true;
                        long long expected = 0;
                        firstTakeNs.compare_exchange_strong(expected,
                            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
                    }
                    if (taken == 0)
                        break;
                }
                done[static_cast<std::size_t>(r)] = redriver.stats().succeeded;
            });
        }
        for (auto& t : threads)
            t.join();
        const double seconds
            = std::chrono::duration<double>(Clock::now() - t0).count() - static_cast<double>(firstTakeNs.load()) / 1e9;
        long long total = 0;
        for (auto d : done)
            total += d;
        const auto effects = pqxx::nontransaction(*conn)
                                 .exec("SELECT count(*), count(DISTINCT idempotency_key) FROM "
                                     + schema.qualify("bench_redrive_effects"))[0];
        std::printf("re-drive: %lld keys re-executed by %d re-drivers in %.2f s: %.0f keys/s (effects %s, distinct %s)\n",
            total, a.redrivers, seconds, total / seconds, effects[0].c_str(), effects[1].c_str());

        // 2. The claim path, ABBA.
        idem::StoreOptions withStore;
        withStore.schema = schema;
        withStore.storeRequestsOf = { "rd" };
        idem::StoreOptions without;
        without.schema = schema;
        idem::TaskStore storing(*conn, withStore);
        idem::TaskStore plain(*conn, without);
        long long next = 0;
        claimRun(storing, "rd", a.claims / 4, next, true); // warm both paths
        claimRun(plain, "other", a.claims / 4, next, false);
        std::vector<double> stored, others;
        for (int round = 0; round < a.rounds; ++round) {
            const bool abba = round % 2 == 0;
            double s = 0, p = 0, o = 0, q = 0;
            // (a) a re-drivable operation storing its request / a plain one, same store
            if (abba) {
                s = claimRun(storing, "rd", a.claims, next, true);
                p = claimRun(storing, "other", a.claims, next, false);
            } else {
                p = claimRun(storing, "other", a.claims, next, false);
                s = claimRun(storing, "rd", a.claims, next, true);
            }
            // (b) an operation not registered: a store that stores another's / one that stores none
            if (abba) {
                o = claimRun(storing, "other", a.claims, next, false);
                q = claimRun(plain, "other", a.claims, next, false);
            } else {
                q = claimRun(plain, "other", a.claims, next, false);
                o = claimRun(storing, "other", a.claims, next, false);
            }
            stored.push_back(s / p);
            others.push_back(o / q);
            std::printf("round %d: stored %.0f/s vs plain %.0f/s (%.3fx); others %.0f/s vs v24 path %.0f/s (%.3fx)\n",
                round + 1, s, p, s / p, o, q, o / q);
        }
        std::printf("claim path, median of %d rounds of %d claims + completes: re-drivable operation storing its"
                    " request %.3fx of a plain claim; other operations %.3fx\n",
            a.rounds, a.claims, median(stored), median(others));
        pqxx::nontransaction(*conn).exec("DROP SCHEMA " + schema.quoted() + " CASCADE");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "idem-bench-redrive: %s\n", e.what());
        return 1;
    }
}
