// Row-to-figures: what a reading's row (statssql.cpp's columns) means as a StatsReading, and
// what each figure is. The statements are statssql.cpp, the refresh protocol statsrefresh.cpp.
#include "operations/stats.h"
#include "operations/statsinternal.h"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace idem {

namespace {
    std::optional<std::int64_t> optionalInt(const pqxx::field& f)
    {
        return f.is_null() ? std::nullopt : std::optional<std::int64_t>(f.as<std::int64_t>());
    }

    std::optional<double> optionalDouble(const pqxx::field& f)
    {
        return f.is_null() ? std::nullopt : std::optional<double>(f.as<double>());
    }

    std::string text(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }

    std::vector<AttemptsBin> bins(const pqxx::field& f)
    {
        std::vector<AttemptsBin> out;
        if (f.is_null())
            return out;
        for (const auto& item : nlohmann::json::parse(f.as<std::string>()))
            out.push_back({ item.at(0).get<int>(), item.at(1).get<std::int64_t>() });
        return out;
    }
} // namespace

const char* qualityName(FigureQuality quality)
{
    switch (quality) {
    case FigureQuality::Exact:
        return "exact";
    case FigureQuality::ExactCached:
        return "exact_cached";
    case FigureQuality::LowerBound:
        return "lower_bound";
    case FigureQuality::Estimate:
        return "estimate";
    }
    return "exact";
}

const char* figureKey(Figure figure)
{
    static constexpr std::array<const char*, figureCount> keys = { "processing", "expired_leases",
        "oldest_processing_age_seconds", "retryable_failed", "uncertain", "failed_permanent", "failed_exhausted",
        "long_unfinished", "duplicate_ratio", "claims", "retries", "failed_retries", "digest_conflicts",
        "stale_token_rejections", "total_rows_estimate" };
    return keys[static_cast<std::size_t>(figure)];
}

bool StatsReading::anyLowerBound() const
{
    return std::any_of(
        labels.begin(), labels.end(), [](const FigureLabel& l) { return l.quality == FigureQuality::LowerBound; });
}

std::optional<std::int64_t> countFigure(const StatsReading& s, Figure figure)
{
    switch (figure) {
    case Figure::Processing:
        return s.processing;
    case Figure::ExpiredLeases:
        return s.expiredLeases;
    case Figure::RetryableFailed:
        return s.retryableFailed;
    case Figure::Uncertain:
        return s.uncertain;
    case Figure::FailedPermanent:
        return s.failedPermanent;
    case Figure::FailedExhausted:
        return s.failedExhausted;
    case Figure::LongUnfinished:
        return s.longUnfinished;
    case Figure::Claims:
        return s.claims;
    case Figure::Retries:
        return s.retries;
    case Figure::FailedRetries:
        return s.failedRetries;
    case Figure::DigestConflicts:
        return s.digestConflicts;
    case Figure::StaleTokenRejections:
        return s.staleTokenRejections;
    case Figure::TotalRows:
        return s.totalRowsEstimate;
    case Figure::OldestProcessingAge: // an age
    case Figure::DuplicateRatio: // a ratio
        break;
    }
    return std::nullopt;
}

StatsReading statsFromRow(const pqxx::row& row)
{
    StatsReading s;
    s.asOf = row["as_of"].as<std::string>();
    s.longUnfinishedAfterMinutes = row["long_unfinished_after_minutes"].as<int>();
    s.liveTakenAt = text(row["live_taken_at"]);
    s.liveShared = row["live_shared"].as<bool>();
    s.liveCostMs = row["live_cost_ms"].as<double>();
    s.liveComputations = row["live_computations"].is_null() ? 0 : row["live_computations"].as<std::int64_t>();
    const auto bounded = [&](Figure f, const char* capped) {
        auto& l = s.label(f);
        l.quality = row[capped].as<bool>() ? FigureQuality::LowerBound : FigureQuality::Exact;
        l.observedAt = s.liveTakenAt;
    };
    s.processing = row["processing"].as<std::int64_t>();
    bounded(Figure::Processing, "processing_capped");
    s.expiredLeases = row["expired_leases"].as<std::int64_t>();
    bounded(Figure::ExpiredLeases, "expired_leases_capped");
    s.oldestProcessingAgeSeconds = optionalDouble(row["oldest_processing_age_s"]);
    bounded(Figure::OldestProcessingAge, "oldest_processing_capped");
    s.retryableFailed = row["retryable_failed"].as<std::int64_t>();
    bounded(Figure::RetryableFailed, "retryable_failed_capped");
    s.uncertain = row["uncertain"].as<std::int64_t>();
    bounded(Figure::Uncertain, "uncertain_capped");
    s.failedPermanent = row["failed_permanent"].as<std::int64_t>();
    bounded(Figure::FailedPermanent, "failed_permanent_capped");
    s.failedExhausted = row["failed_exhausted"].as<std::int64_t>();
    bounded(Figure::FailedExhausted, "failed_exhausted_capped");
    s.longUnfinished = row["long_unfinished"].as<std::int64_t>();
    bounded(Figure::LongUnfinished, "long_unfinished_capped");

    s.duplicateRatio = optionalDouble(row["duplicate_ratio"]);
    s.claims = row["claims"].as<std::int64_t>();
    s.retries = row["retries"].as<std::int64_t>();
    s.failedRetries = row["failed_retries"].as<std::int64_t>();
    s.digestConflicts = row["digest_conflicts"].as<std::int64_t>();
    s.staleTokenRejections = row["stale_token"].as<std::int64_t>();
    for (auto f : { Figure::DuplicateRatio, Figure::Claims, Figure::Retries, Figure::FailedRetries,
             Figure::DigestConflicts, Figure::StaleTokenRejections })
        s.label(f).observedAt = s.asOf;

    s.totalRowsEstimate = optionalInt(row["total_rows_estimate"]);
    auto& total = s.label(Figure::TotalRows);
    total.quality = FigureQuality::Estimate;
    total.source = row["total_rows_unanalysed"].as<bool>(false) ? liveRowCounterSource : plannerStatisticsSource;
    total.observedAt = s.asOf;
    if (s.totalRowsEstimate) {
        // Never below what the row figures prove is there.
        const auto proven = s.processing + s.expiredLeases + s.retryableFailed + s.failedPermanent + s.failedExhausted;
        s.totalRowsEstimate = std::max(*s.totalRowsEstimate, proven);
    }

    s.inRecovery = row["in_recovery"].as<bool>();
    s.replicationLagSeconds = optionalDouble(row["replication_lag_s"]);
    s.auditHeadId = row["audit_head_id"].as<std::int64_t>();
    s.auditHeadHash = text(row["audit_head_hash"]);
    s.exactDue = row["exact_due"].as<bool>();
    if (!row["holder_pid"].is_null())
        s.exactHolder = ExactRefreshHolder { row["holder_pid"].as<int>(), text(row["holder_role"]),
            text(row["holder_application"]), text(row["holder_since"]) };
    s.refusedFlushes.last24h = row["refused_24h"].as<std::int64_t>();
    s.refusedFlushes.kept = row["refused_kept"].as<std::int64_t>();
    s.refusedFlushes.lastAt = text(row["refused_last_at"]);
    s.refusedFlushes.lastRole = text(row["refused_last_role"]);
    s.refusedFlushes.lastApplication = text(row["refused_last_application"]);
    s.refusedFlushes.lastClientAddr = text(row["refused_last_addr"]);
    s.refusedFlushes.lastReason = text(row["refused_last_reason"]);

    if (row["ex_present"].as<bool>()) {
        ExactFigures e;
        e.shared = true;
        e.takenAt = text(row["ex_taken_at"]);
        e.ageSeconds = std::max(0.0, row["ex_age_s"].as<double>());
        e.costMs = row["ex_cost_ms"].as<double>();
        e.periodSeconds = row["ex_period_s"].as<double>();
        e.refreshes = row["ex_refreshes"].as<std::int64_t>();
        e.takenBy = text(row["ex_taken_by"]);
        e.longUnfinishedAfterMinutes = row["ex_long_after"].as<int>();
        e.processing = row["ex_processing"].as<std::int64_t>(0);
        e.expiredLeases = row["ex_expired_leases"].as<std::int64_t>(0);
        e.oldestProcessingAgeSeconds = optionalDouble(row["ex_oldest_processing_age_s"]);
        e.retryableFailed = row["ex_retryable_failed"].as<std::int64_t>(0);
        e.uncertain = row["ex_uncertain"].as<std::int64_t>(0);
        e.failedPermanent = row["ex_failed_permanent"].as<std::int64_t>(0);
        e.failedExhausted = row["ex_failed_exhausted"].as<std::int64_t>(0);
        e.longUnfinished = row["ex_long_unfinished"].as<std::int64_t>(0);
        e.attempts = bins(row["ex_attempts"]);
        attachExact(s, e);
    }
    return s;
}

void attachExact(StatsReading& s, const ExactFigures& e)
{
    // The exact figure beside each lower bound. Long-unfinished only when both counted
    // against the same threshold; the oldest processing age is an age, so it keeps growing
    // after the refresh: shown as it was then.
    const auto beside = [&](Figure f, double value) {
        auto& l = s.label(f);
        l.exact.reset();
        l.exactAsOf.clear();
        l.exactAgeSeconds.reset();
        if (l.quality != FigureQuality::LowerBound)
            return;
        l.exact = value;
        l.exactAsOf = e.takenAt;
        l.exactAgeSeconds = e.ageSeconds;
    };
    beside(Figure::Processing, static_cast<double>(e.processing));
    beside(Figure::ExpiredLeases, static_cast<double>(e.expiredLeases));
    if (e.oldestProcessingAgeSeconds)
        beside(Figure::OldestProcessingAge, std::max(0.0, *e.oldestProcessingAgeSeconds - e.ageSeconds));
    beside(Figure::RetryableFailed, static_cast<double>(e.retryableFailed));
    beside(Figure::Uncertain, static_cast<double>(e.uncertain));
    beside(Figure::FailedPermanent, static_cast<double>(e.failedPermanent));
    beside(Figure::FailedExhausted, static_cast<double>(e.failedExhausted));
    if (e.longUnfinishedAfterMinutes == s.longUnfinishedAfterMinutes)
        beside(Figure::LongUnfinished, static_cast<double>(e.longUnfinished));
    s.exact = e;
}

ExactFigures ownExactFromRow(const pqxx::row& row)
{
    ExactFigures e;
    e.takenAt = row["taken_at"].as<std::string>();
    e.processing = row["processing"].as<std::int64_t>();
    e.expiredLeases = row["expired_leases"].as<std::int64_t>();
    e.oldestProcessingAgeSeconds = optionalDouble(row["oldest_age_s"]);
    e.retryableFailed = row["retryable_failed"].as<std::int64_t>();
    e.uncertain = row["uncertain"].as<std::int64_t>();
    e.failedPermanent = row["failed_permanent"].as<std::int64_t>();
    e.failedExhausted = row["failed_exhausted"].as<std::int64_t>();
    e.longUnfinished = row["long_unfinished"].as<std::int64_t>();
    e.attempts = bins(row["attempts_text"]);
    return e;
}

} // namespace idem
