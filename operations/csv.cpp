#include "operations/csv.h"

#include <cstdio>
#include <stdexcept>
#include <string_view>

#include "core/utf8.h"

namespace idem {

namespace {
    using Fields = std::vector<std::optional<std::string>>;

    std::optional<std::string> num(std::int64_t v) { return std::to_string(v); }

    // A text cell as a spreadsheet shows it: display controls escaped (bidi overrides, U+2028,
    // C1; displaySafe), and a cell a spreadsheet would evaluate as a formula (=, +, -, @, TAB or
    // CR first) prefixed with ' (OWASP's advice). snapshot.json keeps the exact values.
    std::optional<std::string> textCell(const std::optional<std::string>& v)
    {
        if (!v)
            return std::nullopt;
        std::string out = displaySafe(*v, reportDisplay);
        if (!out.empty() && std::string_view("=+-@\t\r").find(out.front()) != std::string_view::npos)
            out.insert(out.begin(), '\'');
        return out;
    }

    // JSON text (results, error lists, audit images): escapes inside it are JSON's own, so it
    // stays the same JSON; it never starts with a formula character but '-' of a number.
    std::optional<std::string> jsonCell(const std::optional<std::string>& v)
    {
        return v ? std::optional<std::string>(displaySafe(*v, reportDisplay)) : std::nullopt;
    }

    std::optional<std::string> real(const std::optional<double>& v)
    {
        if (!v)
            return std::nullopt;
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", *v);
        return std::string(buf);
    }

    std::string taskRowsCsv(const SnapshotRowSet& set)
    {
        std::string out = csvLine(
            { "idempotency_key", "status", "request_hash", "result_json", "error_message", "error_class", "owner_token",
                "lease_until", "next_attempt_at", "attempts", "max_attempts", "created_at", "updated_at", "errors" });
        for (const auto& r : set.rows)
            out += csvLine({ textCell(r.key), textCell(r.status), textCell(r.requestHash), jsonCell(r.resultJson),
                textCell(r.errorMessage), textCell(r.errorClass), textCell(r.ownerToken), textCell(r.leaseUntil),
                textCell(r.nextAttemptAt), num(r.attempts), num(r.maxAttempts), textCell(r.createdAt),
                textCell(r.updatedAt), jsonCell(r.errorsJson) });
        return out;
    }

    std::string countersCsv(const SnapshotCounterSet& set)
    {
        std::string out = csvLine({ "bucket", "tenant", "operation", "outcome", "n" });
        for (const auto& c : set.rows)
            out += csvLine(
                { textCell(c.bucket), textCell(c.tenant), textCell(c.operation), textCell(c.outcome), num(c.n) });
        return out;
    }

    std::string figuresCsv(const StatsReading& s)
    {
        const std::vector<std::pair<const char*, std::optional<std::string>>> figures = {
            { "processing", num(s.processing) },
            { "expired_leases", num(s.expiredLeases) },
            { "oldest_processing_age_seconds", real(s.oldestProcessingAgeSeconds) },
            { "retryable_failed", num(s.retryableFailed) },
            { "uncertain", num(s.uncertain) },
            { "failed_permanent", num(s.failedPermanent) },
            { "failed_exhausted", num(s.failedExhausted) },
            { "long_unfinished", num(s.longUnfinished) },
            { "duplicate_ratio", real(s.duplicateRatio) },
            { "claims", num(s.claims) },
            { "retries", num(s.retries) },
            { "failed_retries", num(s.failedRetries) },
            { "digest_conflicts", num(s.digestConflicts) },
            { "stale_token_rejections", num(s.staleTokenRejections) },
            { "total_rows_estimate", s.totalRowsEstimate ? num(*s.totalRowsEstimate) : std::nullopt },
            { "in_recovery", std::string(s.inRecovery ? "true" : "false") },
            { "replication_lag_seconds", real(s.replicationLagSeconds) },
            { "audit_head_id", num(s.auditHeadId) },
            { "audit_head_hash", s.auditHeadHash.empty() ? std::nullopt : std::optional<std::string>(s.auditHeadHash) },
        };
        std::string out = csvLine({ "figure", "value" });
        for (const auto& [name, value] : figures)
            out += csvLine({ std::string(name), value });
        return out;
    }

    std::string auditCsv(const SnapshotAudit& a)
    {
        std::string out = csvLine({ "id", "at", "idempotency_key", "action", "reason", "db_role", "os_user",
            "client_host", "application", "before_image", "after_image", "prev_hash", "entry_hash" });
        for (const auto& e : a.tail)
            out += csvLine({ num(e.id), textCell(e.at), textCell(e.key), textCell(e.action), textCell(e.reason),
                textCell(e.dbRole), textCell(e.osUser), textCell(e.clientHost), textCell(e.application),
                jsonCell(e.beforeImage), jsonCell(e.afterImage), textCell(e.prevHash), textCell(e.entryHash) });
        return out;
    }

    std::string pausesCsv(const SnapshotPauseSet& set)
    {
        std::string out = csvLine({ "tenant", "operation", "active", "reason", "paused_by", "paused_at", "until",
            "ended_at", "ended_by", "end_reason", "audit_id", "ramp" });
        for (const auto& p : set.rows)
            out += csvLine({ textCell(p.tenant), textCell(p.operation), std::string(p.active ? "true" : "false"),
                textCell(p.reason), textCell(p.pausedBy), textCell(p.pausedAt), textCell(p.until), textCell(p.endedAt),
                textCell(p.endedBy), textCell(p.endReason), num(p.auditId), textCell(p.ramp) });
        return out;
    }

    std::string jobsCsv(const SnapshotJobSet& set)
    {
        std::string out = csvLine({ "id", "state", "action", "started_at", "started_by", "reason", "cap", "matched",
            "changed", "refused_moved_on", "refused_busy", "refused_gone", "skipped", "needs_approval", "approved_by",
            "approved_at", "last_batch_at", "finished_at", "cancelled_by", "cancel_reason", "filter" });
        for (const auto& j : set.rows)
            out += csvLine({ num(j.id), textCell(j.state), textCell(j.action), textCell(j.startedAt),
                textCell(j.startedBy), textCell(j.reason), num(j.cap), num(j.matched), num(j.changed),
                num(j.refusedMovedOn), num(j.refusedBusy), num(j.refusedGone), num(j.skipped),
                std::string(j.needsApproval ? "true" : "false"), textCell(j.approvedBy), textCell(j.approvedAt),
                textCell(j.lastBatchAt), textCell(j.finishedAt), textCell(j.cancelledBy), textCell(j.cancelReason),
                jsonCell(j.filter) });
        return out;
    }
} // namespace

std::string csvField(const std::optional<std::string>& value)
{
    if (!value)
        return {};
    if (!value->empty() && value->find_first_of(",\"\r\n") == std::string::npos)
        return *value;
    std::string out = "\"";
    for (char c : *value) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + '"';
}

std::string csvLine(const Fields& fields)
{
    std::string out;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i)
            out += ',';
        out += csvField(fields[i]);
    }
    return out + '\n';
}

std::vector<Fields> parseCsv(std::string_view text)
{
    std::vector<Fields> records;
    Fields record;
    std::size_t i = 0;
    while (i < text.size()) {
        std::optional<std::string> field;
        if (text[i] == '"') {
            std::string v;
            ++i;
            for (;;) {
                if (i >= text.size())
                    throw std::invalid_argument("CSV: unterminated quoted field");
                if (text[i] == '"') {
                    if (i + 1 < text.size() && text[i + 1] == '"') {
                        v += '"';
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                v += text[i++];
            }
            field = std::move(v);
        } else {
            const auto end = text.find_first_of(",\n", i);
            const auto stop = end == std::string_view::npos ? text.size() : end;
            if (stop > i)
                field = std::string(text.substr(i, stop - i));
            i = stop;
        }
        record.push_back(std::move(field));
        if (i >= text.size() || text[i] == '\n') {
            records.push_back(std::move(record));
            record.clear();
        }
        if (i < text.size())
            ++i;
    }
    return records;
}

std::vector<std::pair<std::string, std::string>> snapshotCsvFiles(const SnapshotData& d)
{
    std::vector<std::pair<std::string, std::string>> files;
    files.emplace_back("figures.csv", figuresCsv(d.figures));
    files.emplace_back("counters_history.csv", countersCsv(d.history));
    files.emplace_back("recent_conflicts.csv", countersCsv(d.conflicts));
    files.emplace_back("audit_tail.csv", auditCsv(d.audit));
    for (const auto& s : d.rowSets)
        files.emplace_back("rows/" + s.name + ".csv", taskRowsCsv(s));
    if (d.processingHistory) {
        std::string out = csvLine({ "at", "processing", "expired" });
        for (const auto& p : d.processingHistory->points)
            out += csvLine({ textCell(p.at), num(p.processing), num(p.expired) });
        files.emplace_back("processing_history.csv", out);
    }
    if (d.pauses)
        files.emplace_back("pauses.csv", pausesCsv(*d.pauses));
    if (d.jobs)
        files.emplace_back("jobs.csv", jobsCsv(*d.jobs));
    return files;
}

} // namespace idem
