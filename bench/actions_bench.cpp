// idem-bench-actions: bulk recovery actions through the library (idem::applyBulk: one audited
// SECURITY DEFINER call per key, each its own transaction) against the cheapest per-key write
// measured in the same run on the same rows: one bare version-checked UPDATE per key, no audit.
// Then the C++ verification of the resulting audit chain. Links idem_core only. See README.md.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <pqxx/pqxx>
#include <string>
#include <unistd.h>
#include <vector>

#include "operations/actions.h"
#include "operations/audit.h"
#include "core/connection.h"
#include "schema/migrate.h"

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Options {
    std::string dsn;
    int keys = 10000;
    int repeats = 3;
    bool keepSchema = false;
};

void usage()
{
    std::puts("Usage: idem-bench-actions [--dsn DSN] [--keys N] [--repeats N] [--keep-schema]\n\n"
              "Plants N failed tasks in a scratch schema and requeues them all, per key: (a) one bare\n"
              "version-checked UPDATE per key (no audit), (b) idem::applyBulk (audited function per key).\n"
              "Each repeat resets the rows to failed first. Prints keys/s, medians and the ratio.");
}

Options parse(int argc, char** argv)
{
    Options o;
    if (const char* env = std::getenv("IDEM_DSN"))
        o.dsn = env;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                usage();
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--dsn")
            o.dsn = next();
        else if (a == "--keys")
            o.keys = std::max(1, std::atoi(next().c_str()));
        else if (a == "--repeats")
            o.repeats = std::max(1, std::atoi(next().c_str()));
        else if (a == "--keep-schema")
            o.keepSchema = true;
        else {
            usage();
            std::exit(a == "--help" ? 0 : 2);
        }
    }
    return o;
}

// Every planted row back to failed and exhausted, with a distinct updated_at (as real rows have).
void resetRows(pqxx::connection& c, const idem::SchemaName& s, int keys)
{
    pqxx::work w(c);
    w.exec_params("INSERT INTO " + s.qualify("task_idempotency")
            + " AS t (idempotency_key, request_hash, status, attempts, max_attempts, error_class, error_message,"
              " updated_at)"
              " SELECT 'bench:requeue:' || lpad(g::text, 8, '0'), 'v1:bench', 'failed', 5, 5, 'retryable',"
              "        'gateway timeout', now() - g * interval '1 millisecond'"
              " FROM generate_series(1, $1) g"
              " ON CONFLICT (idempotency_key) DO UPDATE SET status = 'failed', attempts = 5, max_attempts = 5,"
              "   next_attempt_at = NULL, updated_at = EXCLUDED.updated_at",
        keys);
    w.commit();
    pqxx::nontransaction n(c);
    n.exec("VACUUM ANALYZE " + s.qualify("task_idempotency"));
}

std::vector<std::string> keyList(int keys)
{
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(keys));
    char buf[32];
    for (int g = 1; g <= keys; ++g) {
        std::snprintf(buf, sizeof buf, "bench:requeue:%08d", g);
        out.emplace_back(buf);
    }
    return out;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv)
{
    const Options opt = parse(argc, argv);
    const idem::SchemaName schema("idem_bench_act_" + std::to_string(getpid()));
    auto conn = idem::connect(opt.dsn, { "idem-bench-actions" });
    idem::migrate(*conn, { schema, false });
    const auto keys = keyList(opt.keys);
    std::printf("idem-bench-actions: %d keys, %d repeats, schema %s, server %d\n", opt.keys, opt.repeats,
        schema.name().c_str(), conn->server_version());

    std::vector<double> bare, read, lib, verify;
    for (int r = 0; r < opt.repeats; ++r) {
        // (a) the floor: one autocommit UPDATE per key, checking the same version, no audit.
        resetRows(*conn, schema, opt.keys);
        auto versions = idem::readRowVersions(*conn, schema, keys);
        auto t = Clock::now();
        long applied = 0;
        const std::string sql = "UPDATE " + schema.qualify("task_idempotency")
            + " SET status = 'retryable_failed', next_attempt_at = now(), max_attempts = attempts + 1,"
              " updated_at = now() WHERE idempotency_key = $1 AND status = $2 AND "
            + idem::updatedAtMicrosSql("updated_at") + " = $3";
        for (const auto& v : versions) {
            pqxx::nontransaction n(*conn);
            applied += n.exec_params(sql, v->key, v->status, static_cast<long long>(v->updatedAtUs)).affected_rows();
        }
        bare.push_back(secondsSince(t));
        if (applied != opt.keys) {
            std::fprintf(stderr, "baseline applied %ld of %d\n", applied, opt.keys);
            return 1;
        }

        // (b) the library: read the versions (what idemctl does), then one audited call per key.
        resetRows(*conn, schema, opt.keys);
        t = Clock::now();
        versions = idem::readRowVersions(*conn, schema, keys);
        read.push_back(secondsSince(t));
        std::vector<idem::RowVersion> targets;
        for (const auto& v : versions)
            targets.push_back(*v);
        idem::ActionOptions o;
        o.reason = "bench: bulk requeue after an outage";
        o.actor = "bench@" + idem::localActor();
        t = Clock::now();
        const auto results = idem::applyBulk(*conn, schema, idem::RecoveryAction::Requeue, targets, o);
        lib.push_back(secondsSince(t));
        const auto ok = std::count_if(results.begin(), results.end(),
            [](const idem::ActionResult& x) { return x.outcome == idem::ActionOutcome::Applied; });
        if (ok != opt.keys) {
            std::fprintf(stderr, "library applied %ld of %d\n", static_cast<long>(ok), opt.keys);
            return 1;
        }

        t = Clock::now();
        const auto rep = idem::verifyChain(*conn, schema);
        verify.push_back(secondsSince(t));
        if (!rep.ok()) {
            std::fprintf(stderr, "chain broken: %s\n", rep.detail.c_str());
            return 1;
        }
        std::printf("repeat %d: bare %.2f s (%.0f keys/s), read %.3f s, library %.2f s (%.0f keys/s), "
                    "verify %lld entries %.3f s\n",
            r + 1, bare.back(), opt.keys / bare.back(), read.back(), lib.back(), opt.keys / lib.back(),
            static_cast<long long>(rep.checked), verify.back());
    }

    const double b = median(bare), l = median(lib);
    std::printf("\nmedian of %d: bare UPDATE %.0f keys/s; library applyBulk %.0f keys/s (%.2f s for %d keys); "
                "library / bare time %.2f; readRowVersions %.3f s; verifyChain %.3f s (last repeat: %d x %d "
                "entries)\n",
        opt.repeats, opt.keys / b, opt.keys / l, l, opt.keys, l / b, median(read), median(verify), opt.repeats,
        opt.keys);

    if (!opt.keepSchema) {
        pqxx::work w(*conn);
        w.exec("DROP SCHEMA " + schema.quoted() + " CASCADE");
        w.commit();
    }
    return 0;
}
