#pragma once

// Shared plumbing of the verification scenarios (operations/scenarios*.cpp); not a public API.

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/identifier.h"
#include "core/key.h"
#include "core/runner.h"
#include "core/taskstore.h"

namespace idem::verify {

class ScenarioFailed : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline void expect(bool condition, const std::string& what)
{
    if (!condition)
        throw ScenarioFailed(what);
}

// One scratch schema with the Idem tables and the two business tables the scenarios count:
// verify_effects (inside the business transaction, deliberately without a unique key so a
// double effect shows as two rows) and verify_downstream (an external service that is itself
// idempotent by key and counts the calls it received).
// What the scenarios' clients were told: every success or replay by key, with the result and
// the scenario that heard it. runVerification holds the database to it after the last scenario.
struct AckLedger {
    std::mutex mutex;
    std::map<std::string, std::pair<int, nlohmann::json>> told;
};

struct ScenarioEnv {
    std::string conninfo;
    SchemaName schema;
    std::string workerExecutable;
    // The worker processes' command lines without their arguments: idemctl scenario-worker first,
    // then each VerifyOptions::workerCommands entry (runVerification fills it).
    std::vector<std::vector<std::string>> workers;
    // "idemctl, python3 -m ..., ...": for the scenarios' details.
    std::string workerNames() const;
    std::shared_ptr<AckLedger> ledger = std::make_shared<AckLedger>();
    int scenario = 0; // the one running, for the ledger
    // The tenant of the scenarios' keys: "verify", and "verifyagain" for a scenario run again
    // after a lost connection cut its first run short (its keys then differ from the first run's).
    std::string tenant = "verify";
    bool oneTransaction = false; // VerifyOptions::oneTransaction
    bool recordAtCommit = false; // VerifyOptions::recordAtCommit (oneTransaction too)

    // How the scenarios run a task: in two steps, or in one transaction with a duplicate waiting
    // up to 20 s for the run it duplicates.
    RunOptions runOptions() const
    {
        RunOptions o;
        o.oneTransaction = oneTransaction && !recordAtCommit;
        o.recordAtCommit = recordAtCommit;
        o.duplicateWait = std::chrono::milliseconds(20'000);
        return o;
    }
    // The worker process's mode for scenarios 4 and 5 ("claim" or "write", "-1tx" in one
    // transaction, "-rec" recording at commit).
    std::string workerMode(const char* mode) const
    {
        return std::string(mode) + (recordAtCommit ? "-rec" : oneTransaction ? "-1tx" : "");
    }

    // Records a success or a replay as told to the client (other outcomes are ignored).
    void acknowledge(const TaskKey& key, const RunOutcome& outcome) const;

    // A connection to the primary; while a failover is under way, waited for (30 s at most).
    std::unique_ptr<pqxx::connection> connect() const
    {
        return idem::connectPrimaryWaiting(conninfo, { "idemctl verify" }, std::chrono::seconds(30));
    }
    StoreOptions storeOptions() const
    {
        StoreOptions o;
        o.schema = schema;
        return o;
    }
    std::string table(const char* name) const { return schema.qualify(name); }

    long long effects(pqxx::connection& c, const TaskKey& key) const;
    std::string rowJson(pqxx::connection& c, const TaskKey& key) const; // the whole record, or "" when absent
    void insertEffect(pqxx::work& tx, const TaskKey& key, const std::string& note) const;
    // The external call: committed on its own connection the moment it is made.
    void callDownstream(pqxx::connection& c, const TaskKey& key) const;
};

std::string scenario1(const ScenarioEnv& env, int threads, int rounds);
std::string scenario2(const ScenarioEnv& env);
std::string scenario3(const ScenarioEnv& env);
std::string scenario4(const ScenarioEnv& env);
std::string scenario5(const ScenarioEnv& env);
std::string scenario6(const ScenarioEnv& env);
std::string scenarioImmutable(const ScenarioEnv& env);

} // namespace idem::verify
