#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem::verify {

struct ScenarioResult {
    int number = 0;
    std::string name;
    bool passed = false;
    std::string detail; // what was checked, or what went wrong
    std::chrono::milliseconds elapsed { 0 };
};

struct VerifyOptions {
    std::string conninfo;
    // The idemctl binary: scenarios 4 and 5 start it as a real worker process and SIGKILL it.
    std::string workerExecutable;
    // Other implementations of the scenario-worker interface (`idemctl scenario-worker`'s arguments,
    // stdout lines and exit codes), each a command split at spaces, e.g. "python3 -m
    // idem_client.scenario_worker". Scenarios 4 and 5, the ones that start worker processes, start
    // one per implementation on the same key, idemctl's first, each killed in turn.
    std::vector<std::string> workerCommands;
    int threads = 32; // scenario 1
    int rounds = 50; // scenario 1
    bool keepSchema = false; // leave the scratch schema for inspection
    // One transaction for local effects (RunOptions::oneTransaction): every run of a task, and the
    // worker processes of scenarios 4 and 5, claim, write and complete in one transaction; the
    // scenarios then hold the database to that mode's promises (a duplicate waits and replays, a
    // killed worker leaves nothing and no lease).
    bool oneTransaction = false;
    // Its record-at-commit form (RunOptions::recordAtCommit; implies oneTransaction): the task's
    // write first, then idem_record_local, one commit; the worker processes likewise.
    bool recordAtCommit = false;
    std::string schema; // the scratch schema's name; empty picks idem_verify_<random>
    // What the run says on the way, one line each: a connection lost and found again, a scratch
    // schema of an earlier run that is gone dropped, its own left behind. Empty: said nowhere.
    std::function<void(const std::string&)> notice;
    // Tests only: runs after the last scenario, before the ledger of acknowledged successes is
    // held against the database (a test removes a record there to see the loss reported).
    std::function<void(pqxx::connection&, const SchemaName&)> beforeLedgerCheck;
};

// The article's six verification scenarios plus the immutability of succeeded rows, each
// checking the idempotency records and the business tables' row counts. Runs in a scratch
// schema it creates (migrated, without roles) and drops. `only` picks scenario numbers. After
// the last one, every success a scenario's clients were told about (its ledger) must still be
// succeeded with the result they were given, or that scenario fails naming the keys.
// A connection lost mid-run (a failover, a terminated backend) fails the scenario it cut short, in
// words; the run reconnects (waiting for the primary up to a minute), goes on, checks the ledger
// and drops its schema. The schema names its owner (host and pid, in its table verify_owner) and
// the run holds a session advisory lock on it; a later run drops a leftover idem_verify_NNNNNN
// whose lock is free and whose run is gone: its pid no longer exists on this host, or (another
// host, or an older idemctl's schema) nothing was written in it for an hour.
std::vector<ScenarioResult> runVerification(const VerifyOptions& options, const std::vector<int>& only = {});

// The scenario names, by number (1-based), for tables and help.
const std::vector<std::string>& scenarioNames();

// The worker process that scenarios 4 and 5 kill: claims the key, optionally writes the
// business row inside the fenced transaction, says so on stdout, then waits to be killed.
// mode: "claim" or "write"; "claim-1tx" and "write-1tx" do the same inside one transaction
// (TaskStore::claimInTransaction), killed before its commit.
int scenarioWorkerMain(const std::string& conninfo, const SchemaName& schema, const std::string& key,
                       const std::string& digest, long long leaseMs, const std::string& mode);

} // namespace idem::verify
