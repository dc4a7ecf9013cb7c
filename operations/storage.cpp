#include "operations/storage.h"

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/key.h"
#include "operations/actions.h"

namespace idem {

namespace {
    constexpr const char* utc = R"( AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))";

    std::string iso(const std::string& column) { return "to_char(" + column + utc; }

    std::string text(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }

    std::optional<std::int64_t> optionalInt(const pqxx::field& f)
    {
        return f.is_null() ? std::nullopt : std::optional<std::int64_t>(f.as<std::int64_t>());
    }

    std::string plural(std::int64_t n, const char* unit)
    {
        return std::to_string(n) + ' ' + unit + (n == 1 ? "" : "s");
    }

    void validateChange(const std::string& operation, bool allowDefault, const std::string& reason,
        const std::string& actor)
    {
        if (!allowDefault && operation == "*")
            throw std::invalid_argument("the '*' default cannot be removed: set it to another horizon instead");
        if (operation != "*" && !isKeyName(operation))
            throw std::invalid_argument(std::string("the operation must be ") + (allowDefault ? "'*' or " : "")
                + "1 to 64 visible ASCII characters without ':', not '" + operation + "'");
        validateReasonAndActor(reason, actor); // the recovery actions' rules (the SQL applies the same)
    }

    PurgeRun runFromRow(const pqxx::row& r)
    {
        PurgeRun run;
        run.id = r["id"].as<std::int64_t>();
        run.state = r["state"].as<std::string>();
        run.startedAt = text(r["started_at"]);
        run.finishedAt = text(r["finished_at"]);
        run.durationSeconds = r["duration_s"].is_null() ? 0 : r["duration_s"].as<double>();
        run.rowsRemoved = r["rows_removed"].as<std::int64_t>();
        run.batches = r["batches"].as<std::int64_t>();
        run.dbRole = r["db_role"].as<std::string>();
        run.actor = r["actor"].as<std::string>();
        run.application = r["application"].as<std::string>();
        run.auditId = optionalInt(r["audit_id"]);
        run.removedByOperation = removedByOperation(r["operations"].as<std::string>());
        return run;
    }

    RetentionPolicy policyFromRow(const pqxx::row& r)
    {
        return { r["operation"].as<std::string>(), r["horizon_seconds"].as<std::int64_t>(), text(r["changed_at"]),
            r["changed_by"].as<std::string>() };
    }

    std::string policySql(const SchemaName& schema, const std::string& where)
    {
        return "SELECT p.operation, extract(epoch FROM p.horizon)::bigint AS horizon_seconds, " + iso("p.changed_at")
            + " AS changed_at, p.changed_by FROM " + schema.qualify("idem_retention_policy") + " p " + where
            + " ORDER BY p.operation <> '*', p.operation";
    }

    void readStatusRows(pqxx::transaction_base& tx, const SchemaName& schema, StorageReport& out)
    {
        // The bounded figures (shared, at most a second old, or counted now up to the cap) beside
        // the shared exact refresh; the succeeded rows only as the planner's estimate minus those.
        const auto r = tx.exec_params(
            "SELECT l.processing + l.expired_leases AS processing, l.processing_capped OR l.expired_leases_capped AS pc,"
            "       l.retryable_failed, l.retryable_failed_capped AS rc,"
            "       l.failed_permanent + l.failed_exhausted AS failed, l.failed_permanent_capped OR l.failed_exhausted_capped AS fc, "
                + iso("l.taken_at") + " AS live_at,"
                  "       x.taken_at > '-infinity' AS has_exact, x.processing + x.expired_leases AS xp, x.retryable_failed AS xr,"
                  "       x.failed_permanent + x.failed_exhausted AS xf, "
                + iso("x.taken_at") + " AS exact_at, CASE WHEN x.taken_at > '-infinity' THEN extract(epoch FROM now() - x.taken_at)::float8 END AS exact_age,"
                  "       (SELECT CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint END FROM pg_class c"
                  "         WHERE c.oid = $1::regclass) AS reltuples,"
                  "       (SELECT s.n_live_tup FROM pg_stat_user_tables s WHERE s.relid = $1::regclass) AS live_tuples"
                  "  FROM "
                + schema.qualify("idem_live_stats") + "(NULL, NULL, 60) l, " + schema.qualify("idem_stats_exact") + " x",
            schema.qualify("task_idempotency"));
        const auto& row = r[0];
        const bool hasExact = row["has_exact"].as<bool>(false);
        std::int64_t unfinished = 0;
        const auto add = [&](const char* status, const char* value, const char* capped, const char* exact) {
            StatusRows s;
            s.status = status;
            s.rows = row[value].as<std::int64_t>();
            s.label.observedAt = text(row["live_at"]);
            if (row[capped].as<bool>()) {
                s.label.quality = FigureQuality::LowerBound;
                if (hasExact && !row[exact].is_null()) {
                    s.label.exact = row[exact].as<double>();
                    s.label.exactAsOf = text(row["exact_at"]);
                    s.label.exactAgeSeconds = row["exact_age"].as<double>();
                }
            }
            unfinished += s.label.exact ? std::max<std::int64_t>(s.rows, std::int64_t(*s.label.exact)) : s.rows;
            out.rowsByStatus.push_back(std::move(s));
        };
        add("processing", "processing", "pc", "xp");
        add("retryable_failed", "retryable_failed", "rc", "xr");
        add("failed", "failed", "fc", "xf");
        StatusRows succeeded;
        succeeded.status = "succeeded";
        succeeded.label.quality = FigureQuality::Estimate;
        succeeded.label.observedAt = out.asOf;
        // The statistics collector's live rows follow every committed insert and delete;
        // reltuples only moves with ANALYZE, so between two of them it minus the (live) unfinished
        // rows fell while succeeded rows were being added. reltuples stands in when the
        // collector has nothing (before its first report, after a statistics reset).
        const auto live = optionalInt(row["live_tuples"]);
        const auto est = optionalInt(row["reltuples"]);
        if (live && (*live > 0 || !est)) {
            succeeded.rows = std::max<std::int64_t>(0, *live - unfinished);
            succeeded.label.source = "statistics collector (n_live_tup) minus the unfinished rows";
        } else if (est) {
            succeeded.rows = std::max<std::int64_t>(0, *est - unfinished);
            succeeded.label.source = "planner statistics (pg_class.reltuples) minus the unfinished rows";
        } else
            succeeded.label.source = "no estimate before the first ANALYZE";
        out.rowsByStatus.push_back(std::move(succeeded));
    }
} // namespace

std::vector<std::pair<std::string, std::int64_t>> removedByOperation(const std::string& operationsJson)
{
    std::vector<std::pair<std::string, std::int64_t>> out;
    const nlohmann::json j = nlohmann::json::parse(operationsJson);
    for (auto it = j.begin(); it != j.end(); ++it)
        if (const auto n = it.value().value("removed", std::int64_t(0)); n > 0)
            out.emplace_back(it.key(), n);
    return out;
}

std::string formatHorizon(std::int64_t s)
{
    if (s > 0 && s % 86400 == 0)
        return plural(s / 86400, "day");
    if (s > 0 && s % 3600 == 0)
        return plural(s / 3600, "hour");
    if (s > 0 && s % 60 == 0)
        return plural(s / 60, "minute");
    return plural(s, "second");
}

std::string retentionSentence(const std::string& operation, std::int64_t horizonSeconds)
{
    // "an `email` key", "a `charge` key"
    const bool vowel = !operation.empty() && std::string("aeiouAEIOU").find(operation[0]) != std::string::npos;
    const std::string which
        = operation == "*" ? std::string("any other key") : (vowel ? "an `" : "a `") + operation + "` key";
    return "a retry of " + which + " older than " + formatHorizon(horizonSeconds) + " executes again";
}

std::vector<RetentionPolicy> readRetention(pqxx::transaction_base& tx, const SchemaName& schema)
{
    std::vector<RetentionPolicy> out;
    for (const auto& r : tx.exec(policySql(schema, "")))
        out.push_back(policyFromRow(r));
    return out;
}

std::vector<RetentionPolicy> readRetention(pqxx::connection& conn, const SchemaName& schema)
{
    pqxx::read_transaction tx(conn);
    return readRetention(tx, schema);
}

RetentionDue readRetentionDue(
    pqxx::transaction_base& tx, const SchemaName& schema, std::int64_t cap, const std::string& asOf)
{
    if (cap < 1 || cap > 10'000'000)
        throw std::invalid_argument("the due cap must be 1 to 10000000 rows");
    RetentionDue out;
    for (const auto& r : tx.exec_params("SELECT d.operation, d.policy_operation, d.horizon_seconds, " + iso("d.cutoff")
                 + " AS cutoff, " + iso("d.oldest_completed_at") + " AS oldest,"
                 " extract(epoch FROM now() - d.oldest_completed_at)::float8 AS oldest_age, d.due, d.due_capped, "
                 + iso("d.policy_changed_at") + " AS changed_at, d.policy_changed_by FROM "
                 + schema.qualify("idem_retention_due") + "($1) d ORDER BY d.operation",
             cap)) {
        OperationRetention o;
        o.operation = r["operation"].as<std::string>();
        o.policyOperation = r["policy_operation"].as<std::string>();
        o.horizonSeconds = r["horizon_seconds"].as<std::int64_t>();
        o.cutoff = text(r["cutoff"]);
        o.oldestCompletedAt = text(r["oldest"]);
        if (!r["oldest_age"].is_null())
            o.oldestAgeSeconds = r["oldest_age"].as<double>();
        o.due = r["due"].as<std::int64_t>();
        o.dueLabel.observedAt = asOf;
        if (r["due_capped"].as<bool>()) {
            o.dueLabel.quality = FigureQuality::LowerBound;
            out.totalLowerBound = true;
        }
        o.policyChangedAt = text(r["changed_at"]);
        o.policyChangedBy = text(r["policy_changed_by"]);
        out.total += o.due;
        out.operations.push_back(std::move(o));
    }

    return out;
}

StorageReport readStorage(pqxx::transaction_base& tx, const SchemaName& schema, const StorageOptions& options)
{
    if (options.dueCap < 1 || options.dueCap > 10'000'000)
        throw std::invalid_argument("the due cap must be 1 to 10000000 rows");
    if (options.sampleDays < 1 || options.sampleDays > 3650)
        throw std::invalid_argument("the sample window must be 1 to 3650 days");
    StorageReport out;
    out.asOf = tx.exec("SELECT " + iso("now()"))[0][0].as<std::string>();
    out.dueCap = options.dueCap;
    out.samplePeriodSeconds = 900;

    for (const auto& r : tx.exec("SELECT t.*, " + iso("t.last_vacuum") + " AS v, " + iso("t.last_autovacuum") + " AS av, "
             + iso("t.last_analyze") + " AS an FROM " + schema.qualify("idem_storage_tables") + "() t")) {
        StorageTable t;
        t.name = r["name"].as<std::string>();
        t.tableBytes = r["table_bytes"].as<std::int64_t>();
        t.indexBytes = r["index_bytes"].as<std::int64_t>();
        t.totalBytes = r["total_bytes"].as<std::int64_t>();
        t.rowsEstimate = optionalInt(r["rows_estimate"]);
        t.liveTuples = r["live_tuples"].as<std::int64_t>();
        t.deadTuples = r["dead_tuples"].as<std::int64_t>();
        t.lastVacuum = text(r["v"]);
        t.lastAutovacuum = text(r["av"]);
        t.lastAnalyze = text(r["an"]);
        out.tables.push_back(std::move(t));
    }

    readStatusRows(tx, schema, out);
    out.policies = readRetention(tx, schema);

    auto due = readRetentionDue(tx, schema, options.dueCap, out.asOf);
    out.operations = std::move(due.operations);
    out.dueTotal = due.total;
    out.dueTotalLowerBound = due.totalLowerBound;

    const std::string runColumns = "r.id, r.state, " + iso("r.started_at") + " AS started_at, " + iso("r.finished_at")
        + " AS finished_at, extract(epoch FROM COALESCE(r.finished_at, r.last_batch_at) - r.started_at)::float8 AS duration_s,"
          " r.rows_removed, r.batches, r.db_role, r.actor, r.application, r.audit_id, r.operations::text AS operations FROM "
        + schema.qualify("idem_purge_runs") + " r";
    if (const auto r = tx.exec("SELECT " + runColumns + " WHERE r.state <> 'running' ORDER BY r.id DESC LIMIT 1"); !r.empty())
        out.lastRun = runFromRow(r[0]);
    if (const auto r = tx.exec("SELECT CASE WHEN pg_is_in_recovery() THEN NULL ELSE " + schema.qualify("idem_purge_alive")
                + "(r) END AS alive, " + runColumns + " WHERE r.state = 'running' ORDER BY r.id DESC LIMIT 1");
        !r.empty()) {
        out.running = runFromRow(r[0]);
        if (!r[0]["alive"].is_null())
            out.running->alive = r[0]["alive"].as<bool>();
    }

    for (const auto& r : tx.exec_params("SELECT " + iso("s.taken_at") + ", s.table_bytes, s.index_bytes, s.rows_estimate FROM "
                 + schema.qualify("idem_storage_samples")
                 + " s WHERE s.taken_at > now() - $1 * interval '1 day' ORDER BY s.taken_at",
             options.sampleDays))
        out.samples.push_back({ r[0].as<std::string>(), r[1].as<std::int64_t>(), r[2].as<std::int64_t>(), optionalInt(r[3]) });
    // Schema v28: the registry of gated kinds.
    for (const auto& k : tx.exec("SELECT k.kind, k.gated FROM " + schema.qualify("idem_approval_kinds")
             + " k WHERE k.kind IN ('retention', 'purge')")) {
        if (k[0].as<std::string>() == "retention")
            out.retentionChangesNeedApproval = k[1].as<bool>();
        else
            out.manualPurgesNeedApproval = k[1].as<bool>();
    }
    out.horizon = readHorizon(tx, schema, 5, std::clamp(options.sampleDays, 1, 90) * 24);
    return out;
}

StorageReport readStorage(pqxx::connection& conn, const SchemaName& schema, const StorageOptions& options)
{
    if (options.takeSample) {
        // Its own short transaction: a standby or a read-only session just takes no sample.
        pqxx::work w(conn);
        w.exec_params("SELECT set_config('statement_timeout', $1, true)", std::to_string(options.statementTimeoutMs));
        w.exec("SELECT " + schema.qualify("idem_storage_sample") + "()");
        w.commit();
    }
    pqxx::read_transaction tx(conn);
    boundRead(tx, options.statementTimeoutMs);
    tx.exec("SELECT pg_catalog.set_config('lock_timeout', '1000', true)");
    return readStorage(tx, schema, options);
}

RetentionChange setRetention(pqxx::connection& conn, const SchemaName& schema, const std::string& operation,
    std::int64_t horizonSeconds, const std::string& reason, const std::string& actor)
{
    validateChange(operation, true, reason, actor);
    if (horizonSeconds < minHorizonSeconds || horizonSeconds > maxHorizonSeconds)
        throw std::invalid_argument("the horizon must be 1 hour to 3650 days (3600 to 315360000 seconds), not "
            + std::to_string(horizonSeconds) + " seconds");
    RetentionChange out;
    pqxx::work w(conn);
    w.exec("SELECT set_config('lock_timeout', '5000', true)");
    if (const auto r = w.exec_params(policySql(schema, "WHERE p.operation = $1"), operation); !r.empty())
        out.before = policyFromRow(r[0]);
    const auto r = w.exec_params("SELECT s.audit_id FROM " + schema.qualify("idem_set_retention") + "($1, $2, $3, $4) s",
        operation, horizonSeconds, reason, actor.empty() ? localActor() : actor);
    out.auditId = r[0][0].as<std::int64_t>();
    out.after = policyFromRow(w.exec_params(policySql(schema, "WHERE p.operation = $1"), operation)[0]);
    w.commit();
    return out;
}

RetentionChange clearRetention(pqxx::connection& conn, const SchemaName& schema, const std::string& operation,
    const std::string& reason, const std::string& actor)
{
    validateChange(operation, false, reason, actor);
    RetentionChange out;
    pqxx::work w(conn);
    w.exec("SELECT set_config('lock_timeout', '5000', true)");
    if (const auto r = w.exec_params(policySql(schema, "WHERE p.operation = $1"), operation); !r.empty())
        out.before = policyFromRow(r[0]);
    const auto r = w.exec_params("SELECT c.audit_id FROM " + schema.qualify("idem_clear_retention") + "($1, $2, $3) c",
        operation, reason, actor.empty() ? localActor() : actor);
    out.auditId = r[0][0].is_null() ? 0 : r[0][0].as<std::int64_t>();
    w.commit();
    return out;
}

} // namespace idem
