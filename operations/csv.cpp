#include "operations/csv.h"

#include <cstdio>
#include <stdexcept>

namespace idem {

namespace {
    using Fields = std::vector<std::optional<std::string>>;

    std::optional<std::string> num(std::int64_t v) { return std::to_string(v); }

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
            out += csvLine({ r.key, r.status, r.requestHash, r.resultJson, r.errorMessage, r.errorClass, r.ownerToken,
                r.leaseUntil, r.nextAttemptAt, num(r.attempts), num(r.maxAttempts), r.createdAt, r.updatedAt,
                r.errorsJson });
        return out;
    }

    std::string countersCsv(const SnapshotCounterSet& set)
    {
        std::string out = csvLine({ "bucket", "tenant", "operation", "outcome", "n" });
        for (const auto& c : set.rows)
            out += csvLine({ c.bucket, c.tenant, c.operation, c.outcome, num(c.n) });
        return out;
    }

    std::string figuresCsv(const StatsSnapshot& s)
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
            out += csvLine({ num(e.id), e.at, e.key, e.action, e.reason, e.dbRole, e.osUser, e.clientHost,
                e.application, e.beforeImage, e.afterImage, e.prevHash, e.entryHash });
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
    return files;
}

} // namespace idem
