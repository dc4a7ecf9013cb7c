#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <pqxx/connection>
#include <pqxx/transaction_base>

#include "core/identifier.h"

namespace idem {

// Continuous reconciliation (schema v30, resources/sql/migrations/0030_reconcile.sql): per
// operation, a probe the owner of the Idem schema registered counts the business effect of one key
// (its business id, the part of the key after the second ':', bound as $1). A run samples the
// operation's recently succeeded keys and runs the query for each as role idem_reconcile, in a
// READ ONLY transaction under the probe's statement timeout; exactly one effect is ok, none is
// missing, more than one is duplicated. No Qt: idemctl reconcile, the exporter and the console's
// worker thread call these.
struct ReconcileProbe {
    std::string operation;
    std::string query;
    int sampleSize = 500; // keys a run samples at most (1 to 1000)
    int windowSeconds = 3600; // keys that succeeded this recently (60 to 30 days)
    int everySeconds = 300; // a run this often (60 to 86400)
    int timeoutMs = 1000; // each query's statement timeout (10 to 60000)
    std::int64_t createdAtUs = 0;
    std::string createdBy; // "session_user (actor)"
    std::int64_t nextRunAtUs = 0;
};

// A key whose count was not one: its count (0, or more than 1), or the error of its query.
struct ReconcileOffender {
    std::string key;
    std::optional<std::int64_t> count;
    std::string error; // set when count is not
};

struct ReconcileRun {
    std::int64_t id = 0;
    std::string operation;
    std::int64_t startedAtUs = 0;
    std::optional<std::int64_t> finishedAtUs;
    std::string runner; // "login (runner)"
    int sampleSize = 0;
    std::int64_t sampled = 0, ok = 0, missing = 0, duplicated = 0, errors = 0;
    std::vector<ReconcileOffender> offenders; // the first 50 keys that were not ok
    std::string problem; // why the run stopped before it probed every sampled key; empty when it did not
};

struct ReconcileStatus {
    ReconcileProbe probe;
    std::optional<ReconcileRun> last; // the last finished run; none before the first
};

// Every probe (at most maxReconcileProbes, by operation) with its last finished run.
struct ReconcileReading {
    std::int64_t serverNowUs = 0;
    std::vector<ReconcileStatus> probes;

    // Over the probes' last runs.
    std::int64_t missing() const;
    std::int64_t duplicated() const;
    std::int64_t sampled() const;
    std::int64_t errors() const;
};

// The dashboard's Reconcile tile: the probes' last runs summed, read by the tick
// (dashboardSql(), one column; filtered by the dashboard's operation).
struct ReconcileTotals {
    std::int64_t probes = 0; // registered
    std::int64_t run = 0; // of those, with a finished run
    std::int64_t sampled = 0, missing = 0, duplicated = 0, errors = 0; // over their last runs
    std::optional<std::int64_t> oldestFinishedMs; // the oldest of those runs' finish, epoch ms
    std::string worst; // the run probe with the most keys not ok (the first by name on a tie); empty: none run
    std::int64_t operationsNotOk = 0; // operations whose last run found a key not ok
    std::int64_t notOk() const { return missing + duplicated; }
};
// The tick's column (an expression over $2::text, the dashboard's operation filter).
std::string reconcileTotalsColumnSql(const SchemaName& schema);
ReconcileTotals reconcileTotalsFromJson(const std::string& json);
// The same totals from a full reading (an incident snapshot's).
ReconcileTotals reconcileTotals(const ReconcileReading& reading);

constexpr int maxReconcileProbes = 200;
constexpr int reconcileStopAfterErrors = 5; // a run stops after this many keys' queries failed

struct ReconcileProbeSpec {
    std::string operation;
    std::string query;
    int sampleSize = 500;
    int windowSeconds = 3600;
    int everySeconds = 300;
    int timeoutMs = 1000;
    std::string reason;
    std::string actor;
};

struct ReconcileProbeAdded {
    std::int64_t auditId = 0;
    bool replaced = false;
};

class ReconcileNotFound : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One statement each. A schema before v30 throws pqxx::undefined_table / undefined_function.
ReconcileReading readReconcile(pqxx::connection& conn, const SchemaName& schema);
ReconcileReading readReconcile(pqxx::transaction_base& tx, const SchemaName& schema);
// The operation's runs, newest first (limit 1 to 100), finished or not.
std::vector<ReconcileRun> listReconcileRuns(
    pqxx::connection& conn, const SchemaName& schema, const std::string& operation, int limit);

// idem_reconcile_add / idem_reconcile_remove (audited; the Idem schema's owner only: another role
// gets 42501). A bad argument: pqxx::sql_error with SQLSTATE ID003; remove of an operation
// without a probe: ReconcileNotFound.
ReconcileProbeAdded addReconcileProbe(pqxx::connection& conn, const SchemaName& schema, const ReconcileProbeSpec& spec);
std::int64_t removeReconcileProbe(pqxx::connection& conn, const SchemaName& schema, const std::string& operation,
    const std::string& reason, const std::string& actor);

// One run: the operation's probe (ReconcileNotFound when it has none) or, without one, the probe
// due longest; unless `force`, only when it is due. None when nothing was due (or another runner
// took it). Needs idem_reconcile. The probe's query never runs as the caller's own role: each key
// in its own READ ONLY transaction, SET LOCAL ROLE idem_reconcile, under the probe's statement
// timeout, its business id bound as $1; a result other than one row of one integer column (or a
// NULL, a negative count) is that key's error. After reconcileStopAfterErrors errors, or when the
// role cannot be taken, the run stops and says why. `runner` names who ran it (1 to 200
// characters).
std::optional<ReconcileRun> runReconcileProbe(pqxx::connection& conn, const SchemaName& schema,
    const std::optional<std::string>& operation, bool force, const std::string& runner);

// "charge: 2 keys with no effect, 1 with two or more, 0 errors in the last 500 sampled": the
// sentence idemctl and the exporter's log write for a run.
std::string reconcileRunSentence(const ReconcileRun& run);

} // namespace idem
