#include "operations/purge.h"

#include <chrono>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/connection.h"
#include "operations/actions.h"
#include "operations/jobs.h"

namespace idem {

namespace {
    using Clock = std::chrono::steady_clock;

    double msSince(Clock::time_point t)
    {
        return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
    }

    PurgeResult finish(pqxx::connection& conn, const SchemaName& schema, PurgeResult out)
    {
        pqxx::work w(conn);
        const auto r = w.exec_params("SELECT f.audit_id, f.rows_removed, f.batches, f.duration_ms,"
                                     " (SELECT x.operations::text FROM " + schema.qualify("idem_purge_runs")
                + " x WHERE x.id = $1) FROM " + schema.qualify("idem_purge_finish") + "($1) f",
            out.runId);
        w.commit();
        out.auditId = r[0][0].as<std::int64_t>();
        out.rowsRemoved = r[0][1].as<std::int64_t>();
        out.batches = r[0][2].as<std::int64_t>();
        out.durationMs = r[0][3].as<double>();
        out.removedByOperation = removedByOperation(r[0][4].as<std::string>());
        return out;
    }
} // namespace

PurgeResult runPurge(pqxx::connection& conn, const SchemaName& schema, const PurgeOptions& options)
{
    if (options.batch < 1 || options.batch > 100000)
        throw std::invalid_argument("the batch must be 1 to 100000 rows, not " + std::to_string(options.batch));
    if (options.maxSeconds < 0 || options.maxSeconds > 86400)
        throw std::invalid_argument("--max-seconds must be 0 (no limit) to 86400");
    if (options.pauseMs < 0 || options.pauseMs > 60000)
        throw std::invalid_argument("the pause must be 0 to 60000 ms");
    if (!(options.duty >= 0.01 && options.duty <= 1))
        throw std::invalid_argument("the duty must be 0.01 to 1");
    validateReasonAndActor(options.reason, options.actor); // the recovery actions' rules (the SQL applies the same)
    // The run's liveness is a session advisory lock (idem_purge_begin): behind a transaction
    // pooler it would stay on whichever server backend took it, so refuse before taking it.
    if (behindPooler(conn))
        throw std::runtime_error("idemctl purge needs a direct connection to the server, not one through a "
                                 "connection pooler (PgBouncer): a purge run holds a session lock from its first "
                                 "batch to its last. Nothing was removed. Connect to the server itself, or schedule "
                                 "CALL idem_purge_run() with pg_cron in the database.");
    const auto start = Clock::now();
    PurgeResult out;
    PurgeOptions o = options;
    if (o.requestId != 0) {
        if (o.requestSha256.size() != 64 || o.requestSha256.find_first_not_of("0123456789abcdef") != std::string::npos)
            throw std::invalid_argument(
                "the use of a request names its spec: its spec_sha256, 64 lower-case hex digits");
        pqxx::work w(conn);
        pqxx::result r;
        try {
            r = w.exec_params("SELECT u.kind, u.spec::text, u.audit_id, u.purge_run_id FROM "
                    + schema.qualify("idem_change_use") + "($1, $2, $3) u",
                o.requestId, o.requestSha256, o.actor.empty() ? localActor() : o.actor);
        } catch (const pqxx::sql_error& e) {
            // v28: ID002 no such request, ID004 one not approved, used, declined or expired.
            if (!isIdemRefusal(e.sqlstate()))
                throw;
            throw JobRefused(serverWords(e), e.sqlstate());
        }
        if (r.at(0)[0].as<std::string>() != "purge")
            throw JobRefused("change request " + std::to_string(o.requestId)
                    + " is a retention change, not a purge: " + "apply it with idemctl retention apply --request",
                "ID004"); // and the transaction rolls back: nothing used
        const auto spec = nlohmann::json::parse(r[0][1].as<std::string>());
        o.batch = spec.at("batch").get<int>();
        o.maxSeconds = spec.at("max_seconds").get<double>();
        o.duty = spec.at("duty").get<double>();
        out.requestUseAuditId = r[0][2].as<std::int64_t>();
        out.runId = r[0][3].as<std::int64_t>();
        w.commit();
    } else {
        pqxx::work w(conn);
        out.runId = w.exec_params("SELECT " + schema.qualify("idem_purge_begin") + "($1, $2)", o.reason,
                         o.actor.empty() ? localActor() : o.actor)[0][0]
                        .as<std::int64_t>();
        w.commit();
    }
    try {
        for (;;) {
            const auto t = Clock::now();
            pqxx::work w(conn);
            const auto removed
                = w.exec_params("SELECT b.removed FROM " + schema.qualify("idem_purge_batch") + "($1, $2) b", out.runId,
                       o.batch)[0][0]
                      .as<std::int64_t>();
            w.commit();
            const double ms = msSince(t);
            out.longestBatchMs = std::max(out.longestBatchMs, ms);
            out.rowsRemoved += removed;
            ++out.batches;
            if (o.progress)
                o.progress(out.runId, out.batches, out.rowsRemoved, ms);
            if (removed < o.batch)
                break;
            if ((o.maxSeconds > 0 && msSince(start) >= o.maxSeconds * 1000) || (o.stop && o.stop->load())) {
                out.stoppedByTime = true;
                break;
            }
            const double pause = std::min(10000.0, std::max<double>(o.pauseMs, ms * (1 - o.duty) / o.duty));
            if (pause > 0)
                std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(pause));
        }
    } catch (const pqxx::broken_connection&) {
        throw; // the session (and its lock) is gone: the next run closes this one as abandoned
    } catch (...) {
        // What committed is counted: close the run with it, then report the batch's error.
        try {
            finish(conn, schema, out);
        } catch (...) {
        }
        throw;
    }
    return finish(conn, schema, out); // keeps longestBatchMs and stoppedByTime
}

PurgePreview previewPurge(pqxx::connection& conn, const SchemaName& schema, std::int64_t cap)
{
    // Only what a run would remove: the rows due per operation, not the rest of the Storage report.
    pqxx::read_transaction tx(conn);
    boundRead(tx, 600000);
    const auto asOf
        = tx.exec("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')")[0][0].as<std::string>();
    auto due = readRetentionDue(tx, schema, cap, asOf);
    return { asOf, std::move(due.operations), due.total, due.totalLowerBound, cap };
}

} // namespace idem
