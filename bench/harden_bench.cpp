// The "harden" section of idem-bench-claim (bench/README.md, "Session 4"): what schema v6 costs
// the claim path. Three variants of the protocol functions, each in its own scratch schema, run
// in rotation in one process: v6 as shipped, v6 with SECURITY INVOKER, and v6 with v5's
// insert-first claim() (same checks, definer). (v5 as it was, the fourth until v14, lives in git
// history only since each function is one file.)
#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include <pqxx/pqxx>

#include "bench/bench.h"
#include "bench/cpuclock.h"
#include "schema/migrate.h"

namespace idem::bench {

namespace {

    // One function's definition as shipped (resources/sql/functions/NAME.sql), for one schema.
    std::string functionText(const std::string& name, const SchemaName& schema)
    {
        for (const auto& f : bundledFunctions())
            if (f.name == name)
                return functionSqlFor(f, schema);
        throw std::runtime_error("no function file defines " + name);
    }

    void replaceOnce(std::string& text, const std::string& from, const std::string& to, const char* what)
    {
        const auto at = text.find(from);
        if (at == std::string::npos)
            throw std::runtime_error(std::string("claim(): no ") + what + " to replace; update harden_bench.cpp");
        text.replace(at, from.size(), to);
    }


} // namespace

const char* protocolVariantLabel(ProtocolVariant v)
{
    switch (v) {
    case ProtocolVariant::Shipped:
        return "v6 shipped (definer, read-first)";
    case ProtocolVariant::Invoker:
        return "v6, SECURITY INVOKER";
    case ProtocolVariant::InsertFirst:
        return "v6, insert-first claim()";
    }
    return "?";
}

void installProtocolVariant(pqxx::connection& conn, const SchemaName& schema, ProtocolVariant variant)
{
    pqxx::work w(conn);
    // SET search_path FROM CURRENT in the functions captures this.
    w.exec_params("SELECT set_config('search_path', $1, true)", schema.quoted() + ", pg_temp");
    switch (variant) {
    case ProtocolVariant::Shipped:
        break;
    case ProtocolVariant::Invoker:
        for (const char* f : { "claim(text, text, uuid, bigint, integer, bigint)", "fence(text, uuid)",
                 "complete(text, uuid, jsonb, integer)" })
            w.exec("ALTER FUNCTION " + schema.quoted() + "." + f + " SECURITY INVOKER");
        break;
    case ProtocolVariant::InsertFirst: {
        // v6's body with the first read taken out: the insert is tried first, as in v5.
        std::string body = functionText("claim", schema);
        replaceOnce(body,
            "SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key;\n    IF NOT FOUND THEN",
            "IF true THEN", "read-first block");
        w.exec(body);
        break;
    }
    }
    // A loop that times claim() inside the backend: no client, no network, no TLS.
    w.exec(R"(
        CREATE OR REPLACE FUNCTION bench_claim_loop(p_keys text[], p_digest text, p_rounds integer,
                                                    p_complete boolean)
        RETURNS float8 LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
        DECLARE
            t0 timestamptz := clock_timestamp();
            n integer := array_length(p_keys, 1);
            d text;
            tok uuid;
        BEGIN
            FOR i IN 0 .. p_rounds - 1 LOOP
                SELECT c.decision, c.owner_token INTO d, tok
                  FROM claim(p_keys[1 + i % n], p_digest, gen_random_uuid(), 30000) c;
                IF p_complete THEN
                    PERFORM fence(p_keys[1 + i % n], tok);
                    PERFORM complete(p_keys[1 + i % n], tok, '{"receipt": "r"}');
                END IF;
            END LOOP;
            RETURN extract(epoch FROM clock_timestamp() - t0) * 1e6 / p_rounds;
        END $$)");
    w.commit();
}

LoopCost serverLoop(pqxx::connection& conn, const SchemaName& schema, const std::string& digest, int replays,
    int newKeys, int round)
{
    resetTables(conn, schema);
    const int pid = backendPid(conn);
    LoopCost out;
    {
        // 100 succeeded keys, written directly: the replays must not depend on who wrote them.
        pqxx::work w(conn);
        w.exec_params("INSERT INTO " + schema.qualify("task_idempotency")
                + " (idempotency_key, request_hash, status, result_json, attempts)"
                  " SELECT 'bench:loop:' || i, $1, 'succeeded', '{\"receipt\": \"r\"}', 1 FROM generate_series(1, 100) i",
            digest);
        w.commit();
    }
    // Statistics as of the reset, the same each round: without them the loop's plans were made
    // for whatever the last round left behind (the task loop's time swung 5x between rounds).
    pqxx::nontransaction(conn).exec(
        "ANALYZE " + schema.qualify("task_idempotency") + ", " + schema.qualify("bench_effects"));
    const auto timed = [&](const std::string& keysSql, int calls, bool complete, double& wall, double& cpu) {
        pqxx::work w(conn);
        const double c0 = pid ? backendCpuUs(pid) : -1;
        wall = w.exec_params("SELECT " + schema.qualify("bench_claim_loop") + "(ARRAY(" + keysSql + "), $1, $2, $3)",
                    digest, calls, complete)[0][0]
                   .as<double>();
        const double c1 = pid ? backendCpuUs(pid) : -1;
        cpu = c0 >= 0 && c1 >= 0 ? (c1 - c0) / calls : -1;
        w.commit();
    };
    const auto fresh = [&](const char* tag, int n) {
        return "SELECT 'bench:" + std::string(tag) + ":" + std::to_string(round) + ":' || i FROM generate_series(1, "
            + std::to_string(n) + ") i";
    };
    timed("SELECT 'bench:loop:' || i FROM generate_series(1, 100) i", replays, false, out.replayWallUs,
        out.replayCpuUs);
    timed(fresh("new", newKeys), newKeys, false, out.newWallUs, out.newCpuUs);
    timed(fresh("task", newKeys / 2), newKeys / 2, true, out.taskWallUs, out.taskCpuUs);
    return out;
}

void printLoopTable(const std::vector<std::pair<ProtocolVariant, std::vector<LoopCost>>>& results)
{
    std::printf("\n== claim() inside the backend (plpgsql loop, no client): us per call, medians ==\n");
    std::printf("%-36s %8s %8s %8s %8s %8s %8s  %s\n", "variant", "replay", "cpu", "new key", "cpu", "task", "cpu",
        "replay wall, each round");
    std::vector<std::pair<ProtocolVariant, LoopCost>> medians;
    for (const auto& [variant, runs] : results) {
        std::vector<double> rw, rc, nw, nc, tw, tc;
        std::string each;
        for (const auto& r : runs) {
            rw.push_back(r.replayWallUs);
            rc.push_back(r.replayCpuUs);
            nw.push_back(r.newWallUs);
            nc.push_back(r.newCpuUs);
            tw.push_back(r.taskWallUs);
            tc.push_back(r.taskCpuUs);
            char b[16];
            std::snprintf(b, sizeof b, "%s%.1f", each.empty() ? "" : " ", r.replayWallUs);
            each += b;
        }
        const LoopCost m { medianOf(rw), medianOf(rc), medianOf(nw), medianOf(nc), medianOf(tw), medianOf(tc) };
        medians.emplace_back(variant, m);
        std::printf("%-36s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f  %s\n", protocolVariantLabel(variant), m.replayWallUs,
            m.replayCpuUs, m.newWallUs, m.newCpuUs, m.taskWallUs, m.taskCpuUs, each.c_str());
    }
    const auto of = [&](ProtocolVariant v) {
        for (const auto& [variant, m] : medians)
            if (variant == v)
                return m;
        return LoopCost {};
    };
    // Wall and backend CPU side by side: CPU is what a busy machine disturbs least.
    const auto ratio = [](const char* what, double wallNum, double wallDen, double cpuNum, double cpuDen) {
        std::printf("  %-52s wall %5.2fx", what, wallDen > 0 ? wallNum / wallDen : 0.0);
        if (cpuNum > 0 && cpuDen > 0)
            std::printf("   cpu %5.2fx", cpuNum / cpuDen);
        std::printf("\n");
    };
    const auto s = of(ProtocolVariant::Shipped), inv = of(ProtocolVariant::Invoker),
               ins = of(ProtocolVariant::InsertFirst);
    const auto three = [&](const char* what, const LoopCost& a, const LoopCost& b) {
        ratio((std::string("replay: ") + what).c_str(), a.replayWallUs, b.replayWallUs, a.replayCpuUs, b.replayCpuUs);
        ratio((std::string("new key: ") + what).c_str(), a.newWallUs, b.newWallUs, a.newCpuUs, b.newCpuUs);
        ratio((std::string("task: ") + what).c_str(), a.taskWallUs, b.taskWallUs, a.taskCpuUs, b.taskCpuUs);
    };
    three("definer / invoker (v6)", s, inv);
    three("read-first / insert-first (v6, definer)", s, ins);
    std::fflush(stdout);
}

} // namespace idem::bench
