#include "operations/snapshot.h"

#include <algorithm>
#include <cstdint>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/connection.h"
#include "operations/actions.h"
#include "operations/events.h"
#include "operations/latency.h"
#include "operations/pauses.h"
#include "operations/tasklist.h"
#include "schema/migrate.h"
#include "core/sha256.h"

namespace idem {

namespace {
    const char* orNull(const std::optional<std::string>& v)
    {
        return v ? v->c_str() : static_cast<const char*>(nullptr);
    }

    std::optional<std::string> optText(const pqxx::field& f)
    {
        return f.is_null() ? std::nullopt : std::optional<std::string>(f.as<std::string>());
    }

    // Timestamps leave the server as UTC ISO 8601, whatever the session's TimeZone.
    std::string ts(const std::string& expr)
    {
        return "to_char(" + expr + " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')";
    }

    // The key filter of statsSql(): tenant and operation are the key's first two fields.
    constexpr const char* keyFilter = "($1::text IS NULL OR split_part(t.idempotency_key, ':', 1) = $1::text)"
                                      " AND ($2::text IS NULL OR split_part(t.idempotency_key, ':', 2) = $2::text)";

    struct RowSetSpec {
        const char* name;
        const char* description;
        const char* predicate; // over alias t; always ANDed with status <> 'succeeded' and keyFilter
        const char* orderSql;
        const char* order;
    };

    // Each predicate is the one statsSql() counts, so a set's total equals its figure(s).
    const RowSetSpec rowSetSpecs[] = {
        { "expired_leases", "processing rows whose lease ran out (figure: expired_leases)",
            "t.status = 'processing' AND (t.lease_until IS NULL OR t.lease_until <= now())",
            "t.lease_until NULLS FIRST, t.idempotency_key", "lease_until ascending (longest expired first)" },
        { "longest_running", "all processing rows, live or expired (figures: processing + expired_leases)",
            "t.status = 'processing'", "t.created_at, t.idempotency_key", "created_at ascending (oldest first)" },
        { "failed", "failed rows, permanent and exhausted (figures: failed_permanent + failed_exhausted)",
            "t.status = 'failed'", "t.updated_at DESC, t.idempotency_key", "updated_at descending (newest first)" },
        { "uncertain", "retryable rows whose last outcome is unknown (figure: uncertain)",
            "t.status = 'retryable_failed' AND t.error_class = 'unknown'", "t.updated_at DESC, t.idempotency_key",
            "updated_at descending (newest first)" },
        // Added within format 1: the work waiting for its next attempt (requeued rows among it).
        { "waiting_to_retry", "rows waiting to retry, every error class (figure: retryable_failed)",
            "t.status = 'retryable_failed'", "t.next_attempt_at NULLS FIRST, t.idempotency_key",
            "next_attempt_at ascending (due first)" },
    };

    void redactErrors(nlohmann::json& errors)
    {
        if (!errors.is_array())
            return;
        for (auto& e : errors)
            if (e.is_object() && e.contains("message") && e["message"].is_string())
                e["message"] = redactedText(e["message"].get<std::string>());
    }

    std::string redactErrorsText(const std::string& text)
    {
        auto j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_discarded())
            return redactedText(text);
        redactErrors(j);
        return j.dump();
    }

    // An audit image is a row image: the same fields are redacted inside it.
    std::string redactImage(const std::string& text)
    {
        auto j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_discarded())
            return redactedText(text);
        if (j.is_object()) {
            if (j.contains("result_json") && !j["result_json"].is_null())
                j["result_json"] = redactedText(j["result_json"].dump());
            if (j.contains("error_message") && j["error_message"].is_string())
                j["error_message"] = redactedText(j["error_message"].get<std::string>());
            if (j.contains("errors"))
                redactErrors(j["errors"]);
        }
        return j.dump();
    }

    SnapshotTaskRow taskRow(const pqxx::row& r, bool redact)
    {
        SnapshotTaskRow t;
        t.key = r["idempotency_key"].as<std::string>();
        t.status = r["status"].as<std::string>();
        t.requestHash = r["request_hash"].as<std::string>();
        t.resultJson = optText(r["result_json"]);
        t.errorMessage = optText(r["error_message"]);
        t.errorClass = optText(r["error_class"]);
        t.ownerToken = optText(r["owner_token"]);
        t.leaseUntil = optText(r["lease_until"]);
        t.nextAttemptAt = optText(r["next_attempt_at"]);
        t.attempts = r["attempts"].as<int>();
        t.maxAttempts = r["max_attempts"].as<int>();
        t.createdAt = r["created_at"].as<std::string>();
        t.updatedAt = r["updated_at"].as<std::string>();
        t.errorsJson = r["errors"].as<std::string>();
        if (redact) {
            if (t.resultJson)
                t.resultJson = redactedText(*t.resultJson);
            if (t.errorMessage)
                t.errorMessage = redactedText(*t.errorMessage);
            t.errorsJson = redactErrorsText(t.errorsJson);
        }
        return t;
    }

    SnapshotCounterSet readCounters(pqxx::transaction_base& tx, const SchemaName& schema, const char* name,
        const char* description, const char* outcome, int minutes, int limit, const StatsOptions& filter,
        bool newestFirst)
    {
        // Same window arithmetic as statsSql(): the last N minute buckets, the current one included.
        const std::string where = " FROM " + schema.qualify("idem_counters")
            + " c WHERE c.bucket >= date_trunc('minute', now()) - ($3::int - 1) * interval '1 minute'"
              " AND ($1::text IS NULL OR c.tenant = $1::text) AND ($2::text IS NULL OR c.operation = $2::text)"
              " AND ($4::text IS NULL OR c.outcome = $4::text)";
        SnapshotCounterSet set;
        set.name = name;
        set.description = description;
        set.limit = limit;
        set.total = tx.exec_params(
                          "SELECT count(*)" + where, orNull(filter.tenant), orNull(filter.operation), minutes, outcome)
                        .at(0)
                        .at(0)
                        .as<std::int64_t>();
        set.truncated = set.total > limit;
        const auto r = tx.exec_params("SELECT " + ts("c.bucket") + " AS bucket, c.tenant, c.operation, c.outcome, c.n"
                + where + " ORDER BY c.bucket " + (newestFirst ? "DESC" : "ASC")
                + ", c.tenant, c.operation, c.outcome LIMIT $5",
            orNull(filter.tenant), orNull(filter.operation), minutes, outcome, limit);
        set.rows.reserve(r.size());
        for (const auto& row : r)
            set.rows.push_back({ row["bucket"].as<std::string>(), row["tenant"].as<std::string>(),
                row["operation"].as<std::string>(), row["outcome"].as<std::string>(), row["n"].as<std::int64_t>() });
        return set;
    }

    // The folded latency minutes of the history window, filtered as the figures are: what the
    // viewer and the report draw. Nothing is folded here (the transaction is read-only).
    SnapshotLatencySet readLatencyRows(
        pqxx::transaction_base& tx, const SchemaName& schema, int minutes, int limit, const StatsOptions& filter)
    {
        const std::string where = " FROM " + schema.qualify("idem_latency")
            + " l WHERE l.bucket >= date_trunc('minute', now()) - ($3::int - 1) * interval '1 minute'"
              " AND ($1::text IS NULL OR l.tenant = $1::text) AND ($2::text IS NULL OR l.operation = $2::text)";
        SnapshotLatencySet set;
        set.description = "every idem_latency row of the history window (per folded minute, tenant, operation and "
                          "kind: run, tts, attempts; slots as in idem_latency_slot)";
        set.limit = limit;
        set.total = tx.exec_params("SELECT count(*)" + where, orNull(filter.tenant), orNull(filter.operation), minutes)
                        .at(0)
                        .at(0)
                        .as<std::int64_t>();
        set.truncated = set.total > limit;
        set.foldedTo = tx.exec("SELECT " + ts("s.folded_to") + " FROM " + schema.qualify("idem_latency_state") + " s")
                           .at(0)
                           .at(0)
                           .as<std::string>();
        const auto r = tx.exec_params("SELECT " + ts("l.bucket")
                + " AS bucket, l.tenant, l.operation, l.kind, l.n, l.total::float8 AS total,"
                  " array_to_string(l.slots, ',') AS slots, array_to_string(l.counts, ',') AS counts"
                + where + " ORDER BY l.bucket, l.tenant, l.operation, l.kind LIMIT $4",
            orNull(filter.tenant), orNull(filter.operation), minutes, limit);
        for (const auto& row : r) {
            SnapshotLatencyRow l;
            l.bucket = row["bucket"].as<std::string>();
            l.tenant = row["tenant"].as<std::string>();
            l.operation = row["operation"].as<std::string>();
            l.kind = row["kind"].as<std::string>();
            l.n = row["n"].as<std::int64_t>();
            l.total = row["total"].as<double>();
            l.slotCounts = parseSlotCounts(row["slots"].as<std::string>(), row["counts"].as<std::string>());
            set.rows.push_back(std::move(l));
        }
        return set;
    }

    // The events of the history window, filtered as the figures are, through idem_events (at most
    // the bound of each kind, and whether a bound left any out).
    SnapshotEventSet readEvents(pqxx::transaction_base& tx, const SchemaName& schema, int minutes, int limit,
        const StatsOptions& filter)
    {
        SnapshotEventSet set;
        set.description = "the events of the history window that explain a change in a chart (idem_events: recovery "
                          "actions, retention changes, purges, pauses, resumes, annotations, deploys), oldest first";
        set.limit = limit;
        const std::string tenant = filter.tenant.value_or(std::string());
        const std::string operation = filter.operation.value_or(std::string());
        // A filter no key could carry matches no key's events either (listEvents refuses it).
        for (const auto* name : { &tenant, &operation })
            if (!name->empty() && !validPauseName(*name))
                return set;
        const auto nowUs = tx.exec("SELECT " + updatedAtMicrosSql("now()")).at(0).at(0).as<std::int64_t>();
        constexpr std::int64_t maxWindowUs = 31LL * 24 * 3600 * 1000000;
        const std::int64_t fromUs = nowUs - std::min<std::int64_t>(maxWindowUs, std::int64_t(minutes) * 60'000'000);
        // Each kind bounded on its own (its newest `limit`): the snapshot says when any was cut.
        const auto list = idem::readEvents(tx, schema, fromUs, nowUs + 1, tenant, operation, limit);
        set.truncated = list.truncated();
        for (const auto& e : list.events)
            set.rows.push_back({ e.auditId, formatMicros(e.atUs), e.action, e.tenant, e.operation, e.actor, e.text });
        return set;
    }

    SnapshotPauseSet readPauses(
        pqxx::transaction_base& tx, const SchemaName& schema, int minutes, int limit, const StatsOptions& filter)
    {
        SnapshotPauseSet set;
        set.description = "pauses of intake in idem_pauses at the instant (in force, or past their end and not lifted), "
                          "and those lifted within the history window (from their resume entries); in force first, "
                          "then newest first";
        set.limit = limit;
        const std::string from = " FROM (SELECT p.tenant, p.operation, p.reason, p.paused_by, p.paused_at, p.until,"
                                 " (p.until IS NULL OR p.until > now()) AS active,"
                                 " CASE WHEN p.until <= now() THEN p.until END AS ended_at,"
                                 " NULL::text AS ended_by, NULL::text AS end_reason, p.audit_id, p.changed_at AS sort_at,"
                                 // schema v33: a ramp under way, or the abort that set this pause, in words
                                 " CASE WHEN p.ramp_started_at IS NOT NULL THEN pg_catalog.format("
                                 "'ramping: step %s of %s, %s %% of keys admitted, one step every %s s from %s,"
                                 " re-pauses above %s of a step''s admitted claims failing',"
                                 " LEAST(pg_catalog.cardinality(p.ramp_steps), 1 + pg_catalog.floor(pg_catalog.date_part('epoch',"
                                 " now() - p.ramp_started_at) * 1000 / p.ramp_step_ms)::int), pg_catalog.cardinality(p.ramp_steps),"
                                 " p.ramp_steps[LEAST(pg_catalog.cardinality(p.ramp_steps), 1 + pg_catalog.floor("
                                 "pg_catalog.date_part('epoch', now() - p.ramp_started_at) * 1000 / p.ramp_step_ms)::int)],"
                                 " p.ramp_step_ms / 1000, p.ramp_started_at, p.ramp_abort_above)"
                                 " WHEN p.ramp_aborted_at IS NOT NULL THEN pg_catalog.format('set by a ramp''s abort at %s',"
                                 " p.ramp_aborted_at) END AS ramp"
                                 " FROM "
            + schema.qualify("idem_pauses")
            + " p UNION ALL"
              " SELECT a.before_image ->> 'tenant', a.before_image ->> 'operation',"
              " COALESCE(a.before_image -> 'pause' ->> 'reason', ''), COALESCE(a.before_image -> 'pause' ->> 'paused_by', ''),"
              " (a.before_image -> 'pause' ->> 'paused_at')::timestamptz, (a.before_image -> 'pause' ->> 'until')::timestamptz,"
              " false, a.at, a.db_role || ' (' || a.os_user || ')', a.reason, a.id, a.at, NULL::text FROM "
            + schema.qualify("task_idempotency_audit")
            + " a WHERE a.action = 'resume' AND a.at >= now() - $3::int * interval '1 minute' AND a.at <= now()) x"
              " WHERE ($1::text IS NULL OR x.tenant IN ($1::text, '*')) AND ($2::text IS NULL OR x.operation IN ($2::text, '*'))";
        set.total = tx.exec_params("SELECT count(*)" + from, orNull(filter.tenant), orNull(filter.operation), minutes)
                        .at(0)
                        .at(0)
                        .as<std::int64_t>();
        set.truncated = set.total > limit;
        const auto r = tx.exec_params("SELECT x.tenant, x.operation, x.reason, x.paused_by, " + ts("x.paused_at")
                + " AS paused_at, " + ts("x.until") + " AS until, x.active, " + ts("x.ended_at")
                + " AS ended_at, x.ended_by, x.end_reason, x.audit_id, x.ramp" + from
                + " ORDER BY x.active DESC, x.sort_at DESC, x.audit_id DESC LIMIT $4",
            orNull(filter.tenant), orNull(filter.operation), minutes, limit);
        for (const auto& row : r) {
            SnapshotPause p;
            p.tenant = row["tenant"].as<std::string>("");
            p.operation = row["operation"].as<std::string>("");
            p.reason = row["reason"].as<std::string>("");
            p.pausedBy = row["paused_by"].as<std::string>("");
            p.pausedAt = row["paused_at"].as<std::string>("");
            p.until = optText(row["until"]);
            p.active = row["active"].as<bool>();
            p.endedAt = optText(row["ended_at"]);
            p.endedBy = optText(row["ended_by"]);
            p.endReason = optText(row["end_reason"]);
            p.auditId = row["audit_id"].as<std::int64_t>();
            p.ramp = optText(row["ramp"]);
            set.rows.push_back(std::move(p));
        }
        return set;
    }

    SnapshotJobSet readJobs(pqxx::transaction_base& tx, const SchemaName& schema, int minutes, int limit)
    {
        SnapshotJobSet set;
        set.description = "recovery jobs open at the instant (awaiting approval or active) or ended within the history "
                          "window (whatever the scope), newest first; who started and who approved each, and what became of its rows";
        set.limit = limit;
        // Schema v28: a job's approval is its request's (idem_approval_requests a).
        const std::string from = " FROM " + schema.qualify("idem_jobs") + " j LEFT JOIN "
            + schema.qualify("idem_approval_requests")
            + " a ON a.job_id = j.id WHERE j.state IN ('awaiting_approval', 'active')"
              " OR j.finished_at >= now() - $1::int * interval '1 minute'";
        set.total = tx.exec_params("SELECT count(*)" + from, minutes).at(0).at(0).as<std::int64_t>();
        set.truncated = set.total > limit;
        const auto r = tx.exec_params("SELECT j.id, j.state, j.action, j.filter::text AS filter, " + ts("j.moment")
                + " AS moment, j.db_role || ' (' || j.actor || ')' AS started_by, j.reason, j.cap, j.matched, j.changed,"
                  " j.refused_moved_on, j.refused_busy, j.refused_gone,"
                  " j.skipped_not_applicable + j.skipped_cancelled AS skipped,"
                  " j.needs_approval,"
                  " CASE WHEN a.approved_login IS NOT NULL THEN a.approved_login"
                  " || ' (' || COALESCE(a.approved_actor, '') || ')' END AS approved_by, "
                + ts("a.approved_at") + " AS approved_at, " + ts("j.last_batch_at")
                + " AS last_batch_at, " + ts("j.finished_at")
                + " AS finished_at, j.cancelled_by, j.cancel_reason" + from + " ORDER BY j.id DESC LIMIT $2",
            minutes, limit);
        for (const auto& row : r) {
            SnapshotJob j;
            j.id = row["id"].as<std::int64_t>();
            j.state = row["state"].as<std::string>();
            j.action = row["action"].as<std::string>();
            j.filter = row["filter"].as<std::string>();
            j.startedAt = row["moment"].as<std::string>();
            j.startedBy = row["started_by"].as<std::string>();
            j.reason = row["reason"].as<std::string>();
            j.cap = row["cap"].as<std::int64_t>();
            j.matched = row["matched"].as<std::int64_t>();
            j.changed = row["changed"].as<std::int64_t>();
            j.refusedMovedOn = row["refused_moved_on"].as<std::int64_t>();
            j.refusedBusy = row["refused_busy"].as<std::int64_t>();
            j.refusedGone = row["refused_gone"].as<std::int64_t>();
            j.skipped = row["skipped"].as<std::int64_t>();
            j.needsApproval = row["needs_approval"].as<bool>();
            j.approvedBy = optText(row["approved_by"]);
            j.approvedAt = optText(row["approved_at"]);
            j.lastBatchAt = optText(row["last_batch_at"]);
            j.finishedAt = optText(row["finished_at"]);
            j.cancelledBy = optText(row["cancelled_by"]);
            j.cancelReason = optText(row["cancel_reason"]);
            set.rows.push_back(std::move(j));
        }
        return set;
    }

    // Schema v25: the re-drive items open at the instant or asked for within the history window, and
    // the re-drivers of registered operations. A stored request's content only through
    // idem_stored_request (NULL without read_requests), and never when redacting.
    SnapshotRedriveSet readRedrive(
        pqxx::transaction_base& tx, const SchemaName& schema, int minutes, int limit, bool redact)
    {
        SnapshotRedriveSet set;
        set.description = "re-drive items (re-executions a requeue asked for) queued or running at the instant or asked "
                          "for within the history window, open first, then newest first; the stored request's size, "
                          "and its content only when the exporting role holds read_requests";
        set.limit = limit;
        const std::string from = " FROM " + schema.qualify("idem_redrive_items")
            + " i WHERE i.state IN ('queued', 'running') OR i.requested_at >= now() - $1::int * interval '1 minute'";
        set.total = tx.exec_params("SELECT count(*)" + from, minutes).at(0).at(0).as<std::int64_t>();
        set.truncated = set.total > limit;
        set.requestsReadable = !redact
            && tx.exec("SELECT COALESCE(bool_or(r.granted), false) FROM " + schema.qualify("idem_rights")
                       + "() r WHERE r.right_name = 'read_requests'")
                   .at(0)
                   .at(0)
                   .as<bool>();
        const auto r = tx.exec_params("SELECT i.*, q.stored, q.bytes, CASE WHEN $3 THEN q.request::text END AS request"
                                      " FROM (SELECT i.id, i.idempotency_key, i.tenant, i.operation, i.job_id, i.state,"
                                      " i.worker, i.tries, "
                + ts("i.requested_at") + " AS requested_at, i.requested_role || ' (' || i.requested_actor || ')' AS by, "
                + ts("i.taken_at") + " AS taken_at, " + ts("i.finished_at") + " AS finished_at, i.detail" + from
                + " ORDER BY (i.state IN ('queued', 'running')) DESC, i.id DESC LIMIT $2) i LEFT JOIN LATERAL "
                + schema.qualify("idem_stored_request")
                + "(i.idempotency_key) q ON true ORDER BY (i.state IN ('queued', 'running')) DESC, i.id DESC",
            minutes, limit, set.requestsReadable);
        for (const auto& row : r) {
            SnapshotRedriveItem i;
            i.id = row["id"].as<std::int64_t>();
            i.key = row["idempotency_key"].as<std::string>();
            i.tenant = row["tenant"].as<std::string>();
            i.operation = row["operation"].as<std::string>();
            if (!row["job_id"].is_null())
                i.jobId = row["job_id"].as<std::int64_t>();
            i.state = row["state"].as<std::string>();
            i.worker = optText(row["worker"]);
            i.tries = row["tries"].as<int>();
            i.requestedAt = row["requested_at"].as<std::string>();
            i.requestedBy = row["by"].as<std::string>();
            i.takenAt = optText(row["taken_at"]);
            i.finishedAt = optText(row["finished_at"]);
            i.detail = optText(row["detail"]);
            if (redact && i.detail) // a worker's words about the run may quote what it handled
                i.detail = redactedText(*i.detail);
            i.requestStored = !row["stored"].is_null() && row["stored"].as<bool>();
            if (!row["bytes"].is_null())
                i.requestBytes = row["bytes"].as<std::int64_t>();
            i.request = optText(row["request"]);
            set.rows.push_back(std::move(i));
        }
        const auto w = tx.exec_params("SELECT d.tenant, d.operation, d.worker, d.version, " + ts("d.last_seen")
                + " AS last_seen, d.last_seen > now() - interval '30 seconds' AS online FROM "
                + schema.qualify("idem_redrivers")
                + " d WHERE EXISTS (SELECT FROM " + schema.qualify("idem_redrive_operations")
                + " o WHERE o.operation = d.operation AND o.tenant IN (d.tenant, '*'))"
                  " ORDER BY d.operation, d.tenant, d.last_seen DESC, d.worker LIMIT $1",
            limit);
        for (const auto& row : w)
            set.redrivers.push_back({ row["tenant"].as<std::string>(), row["operation"].as<std::string>(),
                row["worker"].as<std::string>(), row["version"].as<std::string>(), row["last_seen"].as<std::string>(),
                row["online"].as<bool>() });
        return set;
    }

    // Per minute of the history window, from the rows processing now: when each row's current
    // attempt started, and when its lease ran out (past its last renewal). One grouped read over
    // the processing rows (the partial index's), times before the window folded into its start.
    SnapshotProcessingHistory readProcessingHistory(pqxx::transaction_base& tx, const SchemaName& schema,
        int minutes, const StatsOptions& filter, const std::string& takenAt)
    {
        SnapshotProcessingHistory h;
        h.description = "the rows processing at the instant, counted back over the history window: processing (their "
                        "attempt started, lease not yet run out) and expired (lease run out, not renewed since) at "
                        "each minute; rows that finished before the instant are not counted, so past minutes are "
                        "lower bounds; the last point, at taken_at, is exact";
        const std::string started = "COALESCE(t.attempt_started_at, t.created_at)";
        const std::string start = "(date_trunc('minute', now()) - ($3::int - 1) * interval '1 minute')";
        const std::string tasks = schema.qualify("task_idempotency");
        const auto r = tx.exec_params("SELECT s.k, extract(epoch FROM date_trunc('minute', greatest(s.x, " + start
                + " - interval '1 minute')))::bigint AS m, count(*) AS n FROM ("
                  " SELECT 'p'::text AS k, "
                + started + " AS x FROM " + tasks + " t WHERE t.status = 'processing' AND " + keyFilter
                + " UNION ALL SELECT 'e', greatest(t.updated_at, COALESCE(t.lease_until, t.updated_at)) FROM " + tasks
                + " t WHERE t.status = 'processing' AND (t.lease_until IS NULL OR t.lease_until <= now()) AND "
                + keyFilter + ") s GROUP BY 1, 2",
            orNull(filter.tenant), orNull(filter.operation), minutes);
        std::vector<std::pair<std::int64_t, std::int64_t>> startedAt, expiredAt; // (minute epoch, rows)
        for (const auto& row : r)
            (row["k"].as<std::string>() == "p" ? startedAt : expiredAt)
                .emplace_back(row["m"].as<std::int64_t>(), row["n"].as<std::int64_t>());
        const auto takenUs = parseIsoMicros(takenAt).value_or(0);
        const std::int64_t startMinute = takenUs / 60'000'000 * 60 - std::int64_t(minutes - 1) * 60;
        // Rows whose time falls in a minute before `point` (seconds since the epoch) had started by then.
        const auto before = [](const std::vector<std::pair<std::int64_t, std::int64_t>>& v, std::int64_t point) {
            std::int64_t n = 0;
            for (const auto& [m, c] : v)
                if (m < point)
                    n += c;
            return n;
        };
        for (int i = 0; i < minutes; ++i) {
            const std::int64_t point = startMinute + std::int64_t(i) * 60;
            const auto expired = before(expiredAt, point);
            h.points.push_back({ formatMicros(point * 1000000), std::max<std::int64_t>(0, before(startedAt, point) - expired),
                expired });
        }
        constexpr std::int64_t never = INT64_MAX;
        const auto all = before(startedAt, never), expired = before(expiredAt, never);
        h.points.push_back({ takenAt, std::max<std::int64_t>(0, all - expired), expired });
        return h;
    }

    SnapshotAudit readAudit(pqxx::transaction_base& tx, const SchemaName& schema, int limit, bool redact)
    {
        const auto table = schema.qualify("task_idempotency_audit");
        SnapshotAudit a;
        a.limit = limit;
        // The trail as of the snapshot's instant: an entry appended (clock_timestamp, under the
        // trail's lock) after now() but committed before this transaction's first read would be
        // visible here though dated after taken_at. Ids rise with times, so these are the newest.
        a.total = tx.exec("SELECT count(*) FROM " + table + " WHERE at <= now()").at(0).at(0).as<std::int64_t>();
        a.truncated = a.total > limit;
        const auto r = tx.exec_params("SELECT id, " + ts("at")
                + " AS at, idempotency_key, action, reason, db_role, os_user, client_host,"
                  " before_image::text AS before_image, after_image::text AS after_image, prev_hash, entry_hash,"
                  // application came with schema v3; through to_jsonb an older audit simply has none
                  " to_jsonb(a) ->> 'application' AS application FROM "
                + table + " a WHERE a.at <= now() ORDER BY id DESC LIMIT $1",
            limit);
        for (const auto& row : r) {
            SnapshotAuditEntry e;
            e.id = row["id"].as<std::int64_t>();
            e.at = row["at"].as<std::string>();
            e.key = row["idempotency_key"].as<std::string>();
            e.action = row["action"].as<std::string>();
            e.reason = row["reason"].as<std::string>();
            e.dbRole = row["db_role"].as<std::string>();
            e.osUser = row["os_user"].as<std::string>();
            e.clientHost = row["client_host"].as<std::string>();
            e.beforeImage = row["before_image"].as<std::string>();
            e.afterImage = row["after_image"].as<std::string>();
            e.prevHash = row["prev_hash"].as<std::string>();
            e.entryHash = row["entry_hash"].as<std::string>();
            e.application = optText(row["application"]);
            if (redact) {
                e.beforeImage = redactImage(e.beforeImage);
                e.afterImage = redactImage(e.afterImage);
            }
            a.tail.push_back(std::move(e));
        }
        // The tail is newest first, so its first entry is the head (the limit is at least 1).
        if (!a.tail.empty()) {
            a.headId = a.tail.front().id;
            a.headHash = a.tail.front().entryHash;
        }
        return a;
    }

    void readServer(pqxx::transaction_base& tx, const SchemaName& schema, SnapshotData& d)
    {
        // pg_has_role errors on a role that does not exist (a cluster never given the roles).
        const auto r = tx.exec("SELECT current_setting('server_version'), current_setting('server_version_num')::int,"
                               " current_database(), current_user, session_user,"
                               " (SELECT rolsuper FROM pg_roles WHERE rolname = current_user),"
                               " CASE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_reader')"
                               "      THEN pg_has_role(current_user, 'idem_reader', 'USAGE') ELSE false END,"
                               " CASE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_operator')"
                               "      THEN pg_has_role(current_user, 'idem_operator', 'USAGE') ELSE false END")
                           .at(0);
        d.serverVersion = r[0].as<std::string>();
        d.serverVersionNum = r[1].as<int>();
        d.database = r[2].as<std::string>();
        d.currentRole = r[3].as<std::string>();
        d.sessionRole = r[4].as<std::string>();
        d.superuser = !r[5].is_null() && r[5].as<bool>();
        d.memberReader = d.superuser || r[6].as<bool>();
        d.memberOperator = d.superuser || r[7].as<bool>();
        const auto v = tx.exec("SELECT coalesce(max(version), 0) FROM " + schema.qualify("idem_schema_version"));
        d.schemaVersion = v.at(0).at(0).as<int>();
        d.schemaLatestKnown = latestSchemaVersion();
    }
} // namespace

const SnapshotRowSet* SnapshotData::rowSet(std::string_view name) const
{
    for (const auto& s : rowSets)
        if (s.name == name)
            return &s;
    return nullptr;
}

void SnapshotProgress::report(std::string_view stage, double fraction) const
{
    if (progress)
        progress(stage, fraction);
}

void SnapshotProgress::checkCancel() const
{
    if (cancel && cancel->load())
        throw SnapshotCancelled();
}

std::string redactedText(std::string_view text)
{
    return "redacted:sha256:" + sha256Hex(text) + ":" + std::to_string(text.size());
}

SnapshotData readSnapshot(pqxx::connection& conn, const SnapshotOptions& options, const SnapshotContext& context,
    const SnapshotProgress& progress)
{
    if (options.rowLimit < 1 || options.counterLimit < 1 || options.auditLimit < 1)
        throw std::invalid_argument("snapshot bounds must be at least 1 row");
    if (options.eventLimit < 1 || options.eventLimit > 9999)
        throw std::invalid_argument("a snapshot's event bound is 1 to 9999");
    if (options.pauseLimit < 1 || options.jobLimit < 1 || options.redriveLimit < 1)
        throw std::invalid_argument("a snapshot's pause, job and re-drive bounds must be at least 1");
    if (options.historyMinutes < 1 || options.stats.windowMinutes < 1)
        throw std::invalid_argument("snapshot windows must be at least 1 minute");

    SnapshotData d;
    d.producer = context.producer;
    d.conninfo = redactConninfo(context.conninfo);
    if (context.adminConninfo)
        d.adminConninfo = redactConninfo(*context.adminConninfo);
    d.adminRole = context.adminRole;
    d.thresholds = context.thresholds;
    d.poll = context.poll;
    d.schema = options.schema.name();
    d.tenant = options.stats.tenant;
    d.operation = options.stats.operation;
    d.windowMinutes = options.stats.windowMinutes;
    d.longUnfinishedAfterMinutes = options.stats.longUnfinishedAfterMinutes;
    d.historyMinutes = options.historyMinutes;
    d.redacted = options.redact;

    progress.checkCancel();
    progress.report("opening the snapshot transaction", 0.0);
    // One snapshot for everything: every figure and the rows it counts see the same instant
    // (now() is the transaction's start), and nothing here can write.
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(conn);
    tx.exec_params(
        "SELECT set_config('statement_timeout', $1, true)", std::to_string(options.stats.statementTimeoutMs));

    readServer(tx, options.schema, d);
    // Idem reads the schema it ships (docs/deployment.md, "Migrations and their lock").
    if (d.schemaVersion < d.schemaLatestKnown)
        throw std::runtime_error("schema " + options.schema.quoted() + " has version " + std::to_string(d.schemaVersion)
            + ", older than this Idem reads (" + std::to_string(d.schemaLatestKnown) + "): upgrade it (idemctl migrate) first");
    progress.report("reading the figures", 0.1);
    // Exact: one pass over the unfinished rows in this snapshot (an export is a one-off; a tick's
    // bounded counts would leave lower bounds in an incident record).
    d.figures = readStats(tx, options.schema, options.stats, true);
    d.takenAt = d.figures.asOf;
    d.inRecovery = d.figures.inRecovery;

    const auto tasks = options.schema.qualify("task_idempotency");
    const std::string columns = "t.idempotency_key, t.status, t.request_hash, t.result_json::text AS result_json,"
                                " t.error_message, t.error_class, t.owner_token::text AS owner_token, "
        + ts("t.lease_until") + " AS lease_until, " + ts("t.next_attempt_at") + " AS next_attempt_at,"
        + " t.attempts, t.max_attempts, " + ts("t.created_at") + " AS created_at, " + ts("t.updated_at")
        + " AS updated_at, t.errors::text AS errors";
    const double step = 0.6 / static_cast<double>(std::size(rowSetSpecs));
    double at = 0.2;
    for (const auto& spec : rowSetSpecs) {
        progress.checkCancel();
        progress.report(std::string("reading rows: ") + spec.name, at);
        at += step;
        const std::string where
            = " FROM " + tasks + " t WHERE t.status <> 'succeeded' AND " + keyFilter + " AND (" + spec.predicate + ")";
        SnapshotRowSet set;
        set.name = spec.name;
        set.description = spec.description;
        set.order = spec.order;
        set.limit = options.rowLimit;
        set.total
            = tx.exec_params("SELECT count(*)" + where, orNull(options.stats.tenant), orNull(options.stats.operation))
                  .at(0)
                  .at(0)
                  .as<std::int64_t>();
        set.truncated = set.total > options.rowLimit;
        const auto r = tx.exec_params("SELECT " + columns + where + " ORDER BY " + spec.orderSql + " LIMIT $3",
            orNull(options.stats.tenant), orNull(options.stats.operation), options.rowLimit);
        set.rows.reserve(r.size());
        for (const auto& row : r)
            set.rows.push_back(taskRow(row, options.redact));
        d.rowSets.push_back(std::move(set));
    }

    d.processingHistory = readProcessingHistory(
        tx, options.schema, options.historyMinutes, options.stats, d.takenAt);

    progress.checkCancel();
    progress.report("reading the counters history", 0.8);
    d.history = readCounters(tx, options.schema, "counters_history",
        "every idem_counters row of the history window (per minute, tenant, operation, outcome)", nullptr,
        options.historyMinutes, options.counterLimit, options.stats, false);
    d.conflicts = readCounters(tx, options.schema, "recent_conflicts",
        "digest conflicts of the figures' window, per minute, tenant and operation (a conflict changes no row, so "
        "the counters are its only trace; figure: digest_conflicts)",
        "conflict", options.stats.windowMinutes, options.counterLimit, options.stats, true);
    d.fieldConflicts = readSnapshotFieldConflicts(tx, options.schema, options.stats.windowMinutes, 50);

    d.latency = readLatencyRows(tx, options.schema, options.historyMinutes, options.counterLimit, options.stats);
    d.events = readEvents(tx, options.schema, options.historyMinutes, options.eventLimit, options.stats);
    d.pauses = readPauses(tx, options.schema, options.historyMinutes, options.pauseLimit, options.stats);
    d.jobs = readJobs(tx, options.schema, options.historyMinutes, options.jobLimit);
    d.horizon = readHorizon(tx, options.schema, 5, 24);
    if (auto fencing = readFencing(tx, options.schema, std::clamp(options.historyMinutes, 1, maxFencingMinutes), 50);
        fencing.available)
        d.fencing = std::move(fencing);
    if (options.redact)
        for (auto& h : d.horizon->holders) {
            if (!h.query.empty())
                h.query = redactedText(h.query);
            if (!h.client.empty())
                h.client = redactedText(h.client);
        }
    d.redrive = readRedrive(tx, options.schema, options.historyMinutes, options.redriveLimit, options.redact);
    d.reconcile = readReconcile(tx, options.schema);
    // The snapshot's scope: an operation keeps its own probe only; a tenant keeps the keys of its
    // own that were not ok (a run samples the operation's keys of every tenant, so its counts
    // stay the operation's, as the section's description says).
    auto& probes = d.reconcile->probes;
    if (options.stats.operation)
        probes.erase(std::remove_if(probes.begin(), probes.end(),
                         [&](const ReconcileStatus& p) { return p.probe.operation != *options.stats.operation; }),
            probes.end());
    if (options.stats.tenant) {
        const std::string prefix = *options.stats.tenant + ":";
        for (auto& p : probes)
            if (p.last) {
                auto& o = p.last->offenders;
                o.erase(std::remove_if(o.begin(), o.end(),
                            [&](const ReconcileOffender& x) { return x.key.compare(0, prefix.size(), prefix) != 0; }),
                    o.end());
            }
    }
    if (options.redact)
        for (auto& p : d.reconcile->probes)
            if (p.last)
                for (auto& o : p.last->offenders)
                    if (!o.error.empty())
                        o.error = redactedText(o.error);

    progress.checkCancel();
    progress.report("reading the audit tail", 0.9);
    d.audit = readAudit(tx, options.schema, options.auditLimit, options.redact);
    // The figures name the same head as the tail, as of the same instant.
    d.figures.auditHeadId = d.audit.headId.value_or(0);
    d.figures.auditHeadHash = d.audit.headHash.value_or(std::string());
    tx.commit();
    progress.report("read", 1.0);
    return d;
}

} // namespace idem
