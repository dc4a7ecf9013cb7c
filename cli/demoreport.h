#pragma once

#include <iosfwd>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/connection>

#include "cli/demo.h"

namespace idem::cli::demo {

// Creates the demo's downstream and business tables in the Idem schema when missing.
void createDemoTables(pqxx::connection& conn, const SchemaName& schema);

// Processing rows in the whole table right now, and how many of them have an expired lease.
std::pair<long long, long long> processingCounts(pqxx::connection& conn, const SchemaName& schema);

// What the database says about a finished run, read independently of the demo's own counts.
struct Verification {
    std::vector<std::pair<std::string, long long>> duplicateEffects; // key, effect rows (> 1)
    long long duplicateKeys = 0; // all of them, duplicateEffects holds the first few
    std::vector<std::string> violations; // other broken invariants, one line each
    std::vector<std::pair<std::string, long long>> states; // status of this run's records
    long long expiredLeases = 0; // processing records of this run whose lease has run out
    long long payments = 0; // this run's rows in demo_payments
    long long effects = 0; // this run's rows in demo_orders_effects

    // The client-side ledger held against the database: keys acknowledged as succeeded whose
    // record is gone or not succeeded (lost), or succeeded with another execution's result (run
    // again after being forgotten), and keys a client was told two different results for.
    long long acknowledged = 0;
    long long lostAcknowledged = 0;
    long long reexecutedAfterAck = 0;
    long long contradictions = 0;
    std::vector<std::string> lostKeys; // the first few of both kinds, "key (what the database holds)"

    // Keys of this run whose succeeded record a purge removed (an audited run of idem_purge_runs
    // whose walk of the key's operation reached past the key's completion): not lost, expired by
    // the retention horizon. Per purge run: the keys and the horizon it applied.
    struct PurgeRun {
        long long keys = 0;
        std::string operation;
        long long horizonSeconds = 0;
    };
    std::map<long long, PurgeRun> purgedBy; // purge run id -> what it removed of this run
    long long purgedKeys = 0;
    long long purgedAcknowledged = 0; // of the ledger's keys, gone (or run again) after a purge

    // What the run did to its clients: requests dropped on an unexpected error (no answer, not
    // retried: the demo's Errors), and keys of the run left processing with an expired lease
    // and no request of the demo's for them queued at exit, whoever claimed them (the demo's
    // clients, or workers in another language on its keys): nobody takes them over.
    long long droppedRequests = 0;
    long long stuckKeys = 0;
    std::vector<std::string> stuckExamples; // the first few

    bool ledgerClean() const { return lostAcknowledged == 0 && reexecutedAfterAck == 0 && contradictions == 0; }
    bool clean() const
    {
        return duplicateEffects.empty() && violations.empty() && ledgerClean() && droppedRequests == 0
            && stuckKeys == 0;
    }
};

// What the demo's clients did, for the check: the requests it dropped and the keys still queued
// for a retry at exit (their clients would ask again).
struct ClientSide {
    long long droppedRequests = 0;
    std::set<std::string> queued;
};

Verification verify(pqxx::connection& conn, const Options& options, const Ledger& ledger, const ClientSide& clients);

// Holds what clients were told (key -> result) against the database; fills the ledger fields.
// Also what `idemctl verify` uses for the answers its scenarios were given.
// contradicted: keys a client was given two different results for; those a purge explains
// (removed, then run again as a new key) are counted as purged, the rest as contradictions.
void checkLedger(pqxx::connection& conn, const SchemaName& schema, const std::map<std::string, nlohmann::json>& told,
    Verification& v, const std::set<std::string>& contradicted = {});

struct RunSummary {
    const Options& options;
    Stats::Snapshot totals;
    double seconds = 0; // from start to the stop request
    double drainSeconds = 0; // then waiting for running tasks to finish
    std::size_t pendingRetries = 0;
    bool countersFlushed = true;
    const Verification& verification;
};

void printSummary(std::ostream& out, const RunSummary& s);
nlohmann::json summaryJson(const RunSummary& s);

} // namespace idem::cli::demo
