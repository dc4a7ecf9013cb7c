#include "cli/demoreport.h"

#include <iomanip>
#include <ostream>
#include <pqxx/pqxx>

namespace idem::cli::demo {

namespace {
    constexpr int listed = 20; // offenders printed per check

    // This run's keys: their business id starts with the run's prefix (letters, digits and '-'
    // only, so nothing in it is a LIKE wildcard).
    std::string runKeyPattern(const Options& o) { return o.businessIdPrefix() + "%"; }

    const Tally outcomeTallies[] = { Tally::Succeeded, Tally::Replayed, Tally::InProgress, Tally::Conflict,
        Tally::RetryLater, Tally::Failed, Tally::WillRetry, Tally::LostOwnership, Tally::Paused };
    // Each purge run's walk per operation (idem_purge_runs.operations): it removed the
    // operation's succeeded rows completed up to `upto`. Only runs that removed something.
    std::string purgeWalks(const SchemaName& schema)
    {
        return "(SELECT r.id AS run, o.key AS operation, (o.value ->> 'from')::timestamptz AS upto,"
               " (o.value ->> 'horizon_seconds')::bigint AS horizon_seconds FROM "
            + schema.qualify("idem_purge_runs")
            + " r CROSS JOIN LATERAL jsonb_each(r.operations) o WHERE (o.value ->> 'removed')::bigint > 0)";
    }

    // The first purge run that removed the incarnation of key `key` whose business effect was
    // written at `at` (the completion's transaction: the effect's created_at is the record's
    // updated_at), as a LATERAL join p(run, operation, horizon_seconds). An effect is that of the
    // live record when the record is succeeded with that updated_at: a purge did not remove it.
    std::string purgedByJoin(const SchemaName& schema, const std::string& key, const std::string& at)
    {
        return " LEFT JOIN LATERAL (SELECT w.run, w.operation, w.horizon_seconds FROM " + purgeWalks(schema)
            + " w WHERE w.operation = split_part(" + key + ", ':', 2) AND w.upto >= " + at
            + " ORDER BY w.run LIMIT 1) p ON true";
    }
    // The effect e belongs to a record a purge removed (t: the key's record now, may be absent):
    // it is not the live record's (whose effect was written between its claim and its completion:
    // since schema v13 the completion is stamped by clock_timestamp(), after the effect's now()), and a purge walk of its operation reached past it. A CASE, so
    // the purge runs are looked at only for effects that are not the live record's.
    std::string purgedEffect(const SchemaName& schema)
    {
        return "(CASE WHEN t.status IS NOT DISTINCT FROM 'succeeded' AND e.created_at BETWEEN t.created_at AND t.updated_at"
               " THEN false ELSE EXISTS (SELECT 1 FROM "
            + purgeWalks(schema)
            + " w WHERE w.operation = split_part(e.idempotency_key, ':', 2) AND w.upto >= e.created_at) END)";
    }

    const Tally eventTallies[] = { Tally::Died, Tally::StaleAttempts, Tally::DownstreamPaid, Tally::DownstreamDeduped,
        Tally::RetriesAbandoned, Tally::DatabaseErrors, Tally::NotPrimary, Tally::CutAtStop, Tally::Errors };
} // namespace

void createDemoTables(pqxx::connection& conn, const SchemaName& schema)
{
    pqxx::work w(conn);
    // Two demos starting together would race on CREATE TABLE IF NOT EXISTS (a unique violation
    // in pg_type); the lock makes the second wait and then find the tables.
    w.exec("SELECT pg_advisory_xact_lock(hashtext('idemctl demo tables'))");
    // The payment service's own dedup: one payment per idempotency key, whatever the caller does.
    w.exec("CREATE TABLE IF NOT EXISTS " + schema.qualify("demo_payments")
        + " (idempotency_key text PRIMARY KEY, amount_cents bigint NOT NULL, currency text NOT NULL,"
          "  target text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())");
    // The business effect, written in the business transaction. No unique constraint on
    // purpose: a double execution must be able to show here.
    w.exec("CREATE TABLE IF NOT EXISTS " + schema.qualify("demo_orders_effects")
        + " (id bigserial PRIMARY KEY, idempotency_key text NOT NULL, run_id text NOT NULL,"
          "  worker integer NOT NULL, attempt integer NOT NULL, amount_cents bigint NOT NULL,"
          "  currency text NOT NULL, target text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())");
    w.exec("CREATE INDEX IF NOT EXISTS demo_orders_effects_key ON " + schema.qualify("demo_orders_effects")
        + " (idempotency_key)");
    w.exec(
        "CREATE INDEX IF NOT EXISTS demo_orders_effects_run ON " + schema.qualify("demo_orders_effects") + " (run_id)");
    w.commit();
}

std::pair<long long, long long> processingCounts(pqxx::connection& conn, const SchemaName& schema)
{
    pqxx::read_transaction t(conn);
    const auto r = t.exec("SELECT count(*), count(*) FILTER (WHERE lease_until <= now()) FROM "
        + schema.qualify("task_idempotency") + " WHERE status = 'processing'");
    return { r[0][0].as<long long>(), r[0][1].as<long long>() };
}

void checkLedger(pqxx::connection& conn, const SchemaName& schema, const std::map<std::string, nlohmann::json>& told,
    Verification& v, const std::set<std::string>& contradicted)
{
    v.acknowledged = static_cast<long long>(told.size());
    const std::string tasks = schema.qualify("task_idempotency");
    constexpr std::size_t chunk = 5000; // keys per statement, as one JSON array parameter
    auto it = told.begin();
    pqxx::read_transaction t(conn);
    while (it != told.end()) {
        nlohmann::json keys = nlohmann::json::array();
        for (std::size_t i = 0; i < chunk && it != told.end(); ++i, ++it)
            keys.push_back(it->first);
        // purged: some incarnation of the key was removed by a purge (its effect is not the live record's).
        const auto rows = t.exec_params(
            "SELECT k.key, t.status, t.result_json::text, EXISTS (SELECT 1 FROM "
                + schema.qualify("demo_orders_effects") + " e WHERE e.idempotency_key = k.key AND " + purgedEffect(schema)
                + ") FROM jsonb_array_elements_text($1::jsonb) k(key)"
                  " LEFT JOIN "
                + tasks + " t ON t.idempotency_key = k.key",
            keys.dump());
        for (const auto& row : rows) {
            const std::string key = row[0].as<std::string>();
            const bool present = !row[1].is_null();
            const bool succeeded = present && row[1].as<std::string>() == "succeeded";
            const bool purged = row[3].as<bool>();
            const bool sameResult = succeeded
                && nlohmann::json::parse(row[2].is_null() ? "null" : row[2].as<std::string>(), nullptr, false)
                    == told.at(key);
            if (contradicted.count(key) && !purged)
                ++v.contradictions;
            std::string holds;
            if (purged && (!sameResult || contradicted.count(key))) {
                // Expired by retention, perhaps claimed and run again since: a documented
                // lifecycle, not a loss (the summary names the purge runs).
                ++v.purgedAcknowledged;
            } else if (!succeeded) {
                ++v.lostAcknowledged;
                holds = present ? "now " + row[1].as<std::string>() : "no record";
            } else if (!sameResult) {
                ++v.reexecutedAfterAck;
                holds = "succeeded again by another execution";
            }
            if (!holds.empty() && v.lostKeys.size() < listed)
                v.lostKeys.push_back(key + " (" + holds + ")");
        }
    }
}

Verification verify(pqxx::connection& conn, const Options& options, const Ledger& ledger, const ClientSide& clients)
{
    const auto& s = options.schema;
    const std::string tasks = s.qualify("task_idempotency");
    const std::string effects = s.qualify("demo_orders_effects");
    const std::string payments = s.qualify("demo_payments");
    const std::string pattern = runKeyPattern(options);
    const std::string limit = " LIMIT " + std::to_string(listed);
    Verification v;
    pqxx::read_transaction t(conn);

    // Over the whole table, not only this run: a double effect is a bug whenever it happened.
    // An effect of a record a purge removed is not a second one: the key ran again after it expired.
    for (const auto& row : t.exec("SELECT idempotency_key, n, count(*) OVER () FROM (SELECT e.idempotency_key,"
                                  " count(*) FILTER (WHERE NOT " + purgedEffect(s) + ") n FROM "
             + effects + " e LEFT JOIN " + tasks + " t ON t.idempotency_key = e.idempotency_key WHERE e.idempotency_key IN"
             + " (SELECT idempotency_key FROM " + effects + " GROUP BY 1 HAVING count(*) > 1)"
             + " GROUP BY 1 HAVING count(*) FILTER (WHERE NOT " + purgedEffect(s) + ") > 1) d ORDER BY n DESC, 1" + limit)) {
        v.duplicateEffects.emplace_back(row[0].as<std::string>(), row[1].as<long long>());
        v.duplicateKeys = row[2].as<long long>();
    }

    for (const auto& row :
        t.exec_params("SELECT t.idempotency_key, count(e.id) FILTER (WHERE NOT " + purgedEffect(s) + ") FROM " + tasks
                + " t LEFT JOIN " + effects + " e ON e.idempotency_key = t.idempotency_key"
                + " WHERE t.status = 'succeeded' AND split_part(t.idempotency_key, ':', 3) LIKE $1"
                  " GROUP BY 1 HAVING count(e.id) FILTER (WHERE NOT "
                + purgedEffect(s) + ") <> 1 ORDER BY 1" + limit,
            pattern))
        v.violations.push_back("succeeded record " + row[0].as<std::string>() + " has " + row[1].as<std::string>()
            + " effect rows, not 1");

    for (const auto& row : t.exec_params("SELECT e.idempotency_key, coalesce(t.status, 'no record') FROM " + effects
                 + " e LEFT JOIN " + tasks + " t ON t.idempotency_key = e.idempotency_key"
                 + " WHERE e.run_id = $1 AND t.status IS DISTINCT FROM 'succeeded' AND NOT " + purgedEffect(s)
                 + " ORDER BY 1" + limit,
             options.runId))
        v.violations.push_back("effect row for " + row[0].as<std::string>() + " whose record is "
            + row[1].as<std::string>() + ", not succeeded");

    // Every successful execution called the payment service before its business write.
    for (const auto& row : t.exec_params("SELECT t.idempotency_key FROM " + tasks + " t LEFT JOIN " + payments
                 + " p ON p.idempotency_key = t.idempotency_key"
                   " WHERE t.status = 'succeeded' AND split_part(t.idempotency_key, ':', 3) LIKE $1"
                   "   AND p.idempotency_key IS NULL ORDER BY 1"
                 + limit,
             pattern))
        v.violations.push_back("succeeded record " + row[0].as<std::string>() + " has no payment");

    for (const auto& row : t.exec_params("SELECT status, count(*), count(*) FILTER (WHERE status = 'processing'"
                                         " AND lease_until <= now()) FROM "
                 + tasks + " WHERE split_part(idempotency_key, ':', 3) LIKE $1 GROUP BY 1 ORDER BY 1",
             pattern)) {
        v.states.emplace_back(row[0].as<std::string>(), row[1].as<long long>());
        v.expiredLeases += row[2].as<long long>();
    }
    // This run's keys a purge removed, per purge run, with the horizon it applied.
    for (const auto& row : t.exec_params("SELECT p.run, min(p.operation), min(p.horizon_seconds),"
                                         " count(DISTINCT e.idempotency_key) FROM "
                 + effects + " e LEFT JOIN " + tasks + " t ON t.idempotency_key = e.idempotency_key"
                 + purgedByJoin(s, "e.idempotency_key", "e.created_at") + " WHERE e.run_id = $1 AND p.run IS NOT NULL AND "
                 + purgedEffect(s) + " GROUP BY 1 ORDER BY 1",
             options.runId)) {
        auto& run = v.purgedBy[row[0].as<long long>()];
        run.operation = row[1].as<std::string>();
        run.horizonSeconds = row[2].as<long long>();
        run.keys = row[3].as<long long>();
        v.purgedKeys += run.keys;
    }
    v.payments
        = t.exec_params(
               "SELECT count(*) FROM " + payments + " WHERE split_part(idempotency_key, ':', 3) LIKE $1", pattern)[0][0]
              .as<long long>();
    v.effects
        = t.exec_params("SELECT count(*) FROM " + effects + " WHERE run_id = $1", options.runId)[0][0].as<long long>();
    // Keys of this run left processing with an expired lease that no request queued at exit will
    // take over: whichever client claimed them, the demo's own or a worker in another language on
    // the same keys (clients/python/examples/demo_worker.py), whose requests the demo cannot see.
    v.droppedRequests = clients.droppedRequests;
    nlohmann::json queued = nlohmann::json::array();
    for (const auto& key : clients.queued)
        queued.push_back(key);
    for (const auto& row : t.exec_params("SELECT t.idempotency_key, count(*) OVER () FROM " + tasks
                 + " t WHERE split_part(t.idempotency_key, ':', 3) LIKE $1"
                   " AND t.status = 'processing' AND t.lease_until <= now()"
                   " AND t.idempotency_key NOT IN (SELECT jsonb_array_elements_text($2::jsonb)) ORDER BY 1"
                 + limit,
             pattern, queued.dump())) {
        v.stuckExamples.push_back(row[0].as<std::string>());
        v.stuckKeys = row[1].as<long long>();
    }
    t.commit();
    checkLedger(conn, s, ledger.entries(), v, ledger.contradicted());
    return v;
}

namespace {
    std::string horizonText(long long seconds)
    {
        if (seconds % 86400 == 0)
            return std::to_string(seconds / 86400) + " d";
        if (seconds % 3600 == 0)
            return std::to_string(seconds / 3600) + " h";
        return std::to_string(seconds) + " s";
    }
} // namespace

void printSummary(std::ostream& out, const RunSummary& s)
{
    const auto& o = s.options;
    const auto& v = s.verification;
    const long long requests = at(s.totals, Tally::Requests);
    out << "\nrun " << o.runId << " (seed " << o.seed << "): " << std::fixed << std::setprecision(1) << s.seconds
        << " s (+" << s.drainSeconds << " s letting running tasks finish), " << o.workers << " workers, " << requests
        << " requests (" << (s.seconds > 0 ? static_cast<double>(requests) / s.seconds : 0.0) << "/s)\n";
    out << "outcomes:";
    for (const auto t : outcomeTallies)
        out << ' ' << tallyName(t) << ' ' << at(s.totals, t);
    out << "\nevents:  ";
    for (const auto t : eventTallies)
        out << ' ' << tallyName(t) << ' ' << at(s.totals, t);
    out << "\nrecords of this run:";
    if (v.states.empty())
        out << " none";
    for (const auto& [status, n] : v.states)
        out << ' ' << status << ' ' << n;
    if (v.expiredLeases > 0)
        out << " (" << v.expiredLeases << " processing with an expired lease)";
    out << "\nretries still queued at exit: " << s.pendingRetries;
    out << "\ndownstream: " << v.payments << " payments, one per key (demo_payments' primary key); " << v.effects
        << " business effect rows\n";
    if (!s.countersFlushed)
        out << "warning: some outcome counters could not be written to idem_counters\n";

    if (v.duplicateEffects.empty()) {
        out << "check: no duplicate effects in demo_orders_effects\n";
    } else {
        out << "check: DUPLICATE EFFECTS for " << v.duplicateKeys << " keys in demo_orders_effects:\n";
        for (const auto& [key, n] : v.duplicateEffects)
            out << "  " << key << ": " << n << " rows\n";
    }
    if (v.violations.empty()) {
        out << "check: every succeeded record has exactly one effect row and a payment; every effect row's record "
               "succeeded\n";
    } else {
        for (const auto& line : v.violations)
            out << "check: VIOLATION: " << line << '\n';
    }
    if (v.purgedKeys > 0) {
        out << "retention: " << v.purgedKeys
            << " keys of this run were purged by retention, not lost (a purged key runs again if retried):";
        const char* separator = " ";
        for (const auto& [run, p] : v.purgedBy) {
            out << separator << "purge run " << run << " removed " << p.keys << " (operation " << p.operation
                << ", horizon " << horizonText(p.horizonSeconds) << ")";
            separator = "; ";
        }
        out << '\n';
    }
    if (v.droppedRequests > 0)
        out << "check: DROPPED REQUESTS: " << v.droppedRequests
            << " requests ended in an unexpected error (on stderr) and were not retried: their clients got no answer\n";
    if (v.stuckKeys > 0) {
        out << "check: STUCK KEYS: " << v.stuckKeys
            << " keys of this run are left processing with an expired lease (claimed by this demo's clients or by "
               "workers in another language on its keys), and no request for them is queued: nobody takes them over\n";
        for (const auto& key : v.stuckExamples)
            out << "  " << key << '\n';
    }
    if (v.ledgerClean()) {
        out << "check: all " << v.acknowledged - v.purgedAcknowledged
            << " successes acknowledged to clients are in the database with the result they were given";
        if (v.purgedAcknowledged > 0)
            out << " (and " << v.purgedAcknowledged << " more were purged by retention since)";
        out << '\n';
    } else {
        out << "check: LOST ACKNOWLEDGED SUCCESSES: of " << v.acknowledged << " keys acknowledged as succeeded, "
            << v.lostAcknowledged << " are no longer succeeded and " << v.reexecutedAfterAck
            << " succeeded again by another execution, and no purge run explains them (a failover to a standby "
               "that had not received them?); "
            << v.contradictions << " keys were answered with two different results\n";
        for (const auto& key : v.lostKeys)
            out << "  " << key << '\n';
    }
    out << (v.clean() ? "clean: the business table shows exactly one effect per succeeded key, every "
                        "acknowledged success is still there or was purged by retention, and every request was "
                        "answered or is still queued for a retry\n"
                      : "NOT CLEAN: see the violations above\n");
}

nlohmann::json summaryJson(const RunSummary& s)
{
    const auto& v = s.verification;
    nlohmann::json outcomes = nlohmann::json::object();
    for (const auto t : outcomeTallies)
        outcomes[tallyName(t)] = at(s.totals, t);
    nlohmann::json events = nlohmann::json::object();
    for (const auto t : eventTallies)
        events[tallyName(t)] = at(s.totals, t);
    nlohmann::json states = nlohmann::json::object();
    for (const auto& [status, n] : v.states)
        states[status] = n;
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& [run, p] : v.purgedBy)
        runs.push_back({ { "run", run }, { "keys", p.keys }, { "operation", p.operation },
            { "horizon_seconds", p.horizonSeconds } });
    const nlohmann::json purged = { { "keys", v.purgedKeys }, { "runs", runs } };
    nlohmann::json duplicates = nlohmann::json::array();
    for (const auto& [key, n] : v.duplicateEffects)
        duplicates.push_back({ { "key", key }, { "rows", n } });
    return {
        { "run", s.options.runId },
        { "seed", s.options.seed },
        { "seconds", s.seconds },
        { "drain_seconds", s.drainSeconds },
        { "workers", s.options.workers },
        { "requests", at(s.totals, Tally::Requests) },
        { "outcomes", outcomes },
        { "events", events },
        { "states", states },
        { "expired_leases", v.expiredLeases },
        { "pending_retries", s.pendingRetries },
        { "payments", v.payments },
        { "effects", v.effects },
        { "counters_flushed", s.countersFlushed },
        { "duplicate_effects", duplicates },
        { "duplicate_keys", v.duplicateKeys },
        { "violations", v.violations },
        { "ledger",
            { { "acknowledged", v.acknowledged }, { "lost_acknowledged", v.lostAcknowledged },
                { "reexecuted_after_ack", v.reexecutedAfterAck }, { "contradictions", v.contradictions },
                { "lost_keys", v.lostKeys }, { "purged_acknowledged", v.purgedAcknowledged } } },
        { "purged", purged },
        { "dropped_requests", v.droppedRequests },
        { "stuck_keys", v.stuckKeys },
        { "stuck_examples", v.stuckExamples },
        { "clean", v.clean() },
    };
}

} // namespace idem::cli::demo
