#include <climits>
#include <cstdio>
#include <iostream>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/utf8.h"
#include "operations/scenarios.h"

namespace idem::cli {

namespace {
    constexpr const char* verifyHelp
        = R"(Usage: idemctl verify [--dsn DSN] [--only N]... [--threads N] [--rounds N] [--keep]
                      [--worker-command CMD]... [--one-transaction]
                      [--record-at-commit]

Runs seven verification scenarios against a database (the article's six, 1 to 6, and
Idem's own seventh: succeeded rows never change): in a scratch schema it
creates (idem_verify_NNNNNN, migrated without roles) and drops afterwards. Each scenario
checks the idempotency records and the business tables' row counts, and prints a line of
a pass/fail table. Scenarios 4 and 5 start this idemctl as a worker process and SIGKILL it.
A connection lost mid-run (a failover), in any of a scenario's threads, cuts the scenario
short: it is run once more on the primary, on keys of its own (a second cut fails it); the run
reconnects, waiting for the primary up to a minute, checks the ledger (the first run's
acknowledged successes too), prints the table and drops its schema (or names it when it cannot). A scratch
schema left by an earlier run that is gone (its pid no longer exists on this host, or
nothing was written in it for an hour) is dropped at the start.

  1  concurrent duplicates with the same digest (--threads x --rounds, default 32 x 50)
  2  concurrent duplicates with different digests
  3  repeat after success
  4  worker killed after claiming
  5  worker killed before commit; unknown outcome retried with the same key
  6  backoff with jitter, permanent errors, exhaustion
  7  succeeded rows never change

  --dsn DSN     libpq conninfo, URI or service=NAME (default: $IDEM_DSN, then PG* variables);
                the role needs CREATE on the database (the console's operator and
                reader logins have none: verify says so and changes nothing)
  --only N      run only scenario N (repeatable)
  --threads N   concurrent claimers in scenario 1 (2..128, default 32)
  --rounds N    rounds of scenario 1 (1..10000, default 50)
  --keep        keep the scratch schema for inspection
  --worker-command CMD
                another implementation of `idemctl scenario-worker` (the same arguments,
                stdout lines and exit codes), split at spaces, found on PATH; repeatable,
                up to 3. Scenarios 4 and 5, which start worker processes, then start this
                idemctl's and each CMD's in turn on the same key, killing each; e.g.
                --worker-command 'python3 -m idem_client.scenario_worker'
                --worker-command 'node clients/node/dist/scenario-worker.js'
                The other scenarios run their workers as threads in this process.
  --one-transaction
                run every task in one transaction for local effects (claim, business
                write and completion in one commit): a duplicate waits for the run it
                duplicates and replays it; a worker killed in scenarios 4 and 5 leaves
                nothing behind, no claim and no lease, and the next run goes at once
  --record-at-commit
                the same in its record-at-commit form: the business write first, then
                one statement records the key succeeded (idem_record_local), one commit;
                the killed workers of scenarios 4 and 5 are killed after that record

Exit status: 0 when every scenario passed, 1 otherwise.
)";

    std::string selfExecutable()
    {
        char buf[PATH_MAX];
        const auto n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
        return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
    }
} // namespace

int runVerify(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "threads", "rounds" }, { "keep", "help", "one-transaction", "record-at-commit" }, { "only", "worker-command" });
    if (args.flag("help")) {
        std::cout << verifyHelp;
        return ExitOk;
    }
    verify::VerifyOptions options;
    options.conninfo = dsnFrom(args);
    options.workerExecutable = selfExecutable();
    options.threads = static_cast<int>(args.intValue("threads", 32, 2, 128));
    options.rounds = static_cast<int>(args.intValue("rounds", 50, 1, 10000));
    options.keepSchema = args.flag("keep");
    options.oneTransaction = args.flag("one-transaction");
    options.recordAtCommit = args.flag("record-at-commit");
    options.notice = [](const std::string& line) {
        std::cerr << "idemctl verify: " << displaySafe(line, messageDisplay) << std::endl;
    };
    options.workerCommands = args.values("worker-command");
    // Each worker process claims the key once more; with the protocol's default of 5 attempts,
    // idemctl, 3 others and the final takeover use them all.
    if (options.workerCommands.size() > 3)
        throw UsageError("--worker-command is allowed at most 3 times");
    for (const auto& command : options.workerCommands)
        if (command.find_first_not_of(" \t") == std::string::npos)
            throw UsageError("--worker-command is empty");
    std::vector<int> only;
    for (const auto& v : args.values("only")) {
        Args one({ "--n", v }, { "n" }, {});
        only.push_back(static_cast<int>(one.intValue("n", 0, 1, static_cast<long long>(verify::scenarioNames().size()))));
    }

    const auto results = verify::runVerification(options, only);
    int failed = 0;
    std::printf(" #  %-46s %-6s %8s  %s\n", "scenario", "result", "time", "detail");
    for (const auto& r : results) {
        std::printf("%2d  %-46s %-6s %7.1fs  %s\n", r.number, r.name.c_str(), r.passed ? "PASS" : "FAIL",
                    static_cast<double>(r.elapsed.count()) / 1000.0, r.detail.c_str());
        failed += r.passed ? 0 : 1;
    }
    std::printf("%zu passed, %d failed\n", results.size() - static_cast<std::size_t>(failed), failed);
    return failed == 0 ? ExitOk : ExitFailure;
}

int runScenarioWorker(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema", "key", "digest", "lease-ms", "mode" }, {});
    const auto mode = args.valueOr("mode", "claim");
    if (mode != "claim" && mode != "write" && mode != "claim-1tx" && mode != "write-1tx" && mode != "claim-rec"
        && mode != "write-rec")
        throw UsageError("--mode is claim, write, claim-1tx, write-1tx, claim-rec or write-rec");
    return verify::scenarioWorkerMain(dsnFrom(args), SchemaName(args.valueOr("schema", SchemaName::defaultName)),
                                      args.valueOr("key", ""), args.valueOr("digest", ""),
                                      args.intValue("lease-ms", 1500, 1, 3'600'000), mode);
}

} // namespace idem::cli
