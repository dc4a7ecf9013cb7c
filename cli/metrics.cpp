#include "cli/metrics.h"

#include <optional>

#include <prometheus/text_serializer.h>

#include "operations/stats.h"

namespace idem::cli {

namespace {
    using Value = std::optional<double>;

    // One figure of StatsSnapshot. `value` reads it; a figure's quality (exact, cached, lower bound,
    // estimate) will be read beside it in figureSample(), the one place a sample gets its labels.
    struct Figure {
        const char* name;
        const char* help;
        Value (*value)(const StatsSnapshot&);
    };

    Value count(std::int64_t v) { return static_cast<double>(v); }

    // Names per the Prometheus conventions: base units (seconds), a ratio as a ratio, no _total
    // on gauges. The window figures are sums over the last --window minutes of idem_counters:
    // gauges, since they go down as minutes leave the window; the exporter adds true counters.
    const Figure figures[] = {
        { "idem_processing", "Rows processing under a live lease.",
            [](const StatsSnapshot& s) { return count(s.processing); } },
        { "idem_expired_leases", "Rows processing whose lease ran out.",
            [](const StatsSnapshot& s) { return count(s.expiredLeases); } },
        { "idem_oldest_processing_age_seconds", "Age since first seen of the oldest processing row.",
            [](const StatsSnapshot& s) { return s.oldestProcessingAgeSeconds; } },
        { "idem_retryable_failed", "Rows waiting to be retried.",
            [](const StatsSnapshot& s) { return count(s.retryableFailed); } },
        { "idem_uncertain", "Retryable rows whose last outcome is unknown.",
            [](const StatsSnapshot& s) { return count(s.uncertain); } },
        { "idem_failed_permanent", "Rows failed with a permanent error.",
            [](const StatsSnapshot& s) { return count(s.failedPermanent); } },
        { "idem_failed_exhausted", "Rows failed after running out of attempts or age.",
            [](const StatsSnapshot& s) { return count(s.failedExhausted); } },
        { "idem_long_unfinished", "Unfinished rows first seen longer ago than the threshold.",
            [](const StatsSnapshot& s) { return count(s.longUnfinished); } },
        { "idem_duplicate_ratio", "Duplicate claims over all claims in the window.",
            [](const StatsSnapshot& s) { return s.duplicateRatio; } },
        { "idem_claims", "Claims counted in the window (the duplicate ratio's denominator).",
            [](const StatsSnapshot& s) { return count(s.claims); } },
        { "idem_retries", "Takeovers of expired leases or due retries in the window.",
            [](const StatsSnapshot& s) { return count(s.retries); } },
        { "idem_failed_retries", "Retryable, unknown and exhausted failures in the window.",
            [](const StatsSnapshot& s) { return count(s.failedRetries); } },
        { "idem_digest_conflicts", "Claims with a different request digest in the window.",
            [](const StatsSnapshot& s) { return count(s.digestConflicts); } },
        { "idem_stale_token_rejections", "Calls by a token that lost its row in the window.",
            [](const StatsSnapshot& s) { return count(s.staleTokenRejections); } },
        { "idem_total_rows_estimate", "Planner estimate of all rows (not a count).",
            [](const StatsSnapshot& s) {
                return s.totalRowsEstimate ? Value(static_cast<double>(*s.totalRowsEstimate)) : std::nullopt;
            } },
        { "idem_in_recovery", "1 when the server is a standby.",
            [](const StatsSnapshot& s) { return Value(s.inRecovery ? 1.0 : 0.0); } },
        { "idem_replication_lag_seconds", "Age of the last replayed transaction on a standby.",
            [](const StatsSnapshot& s) { return s.replicationLagSeconds; } },
        // Always present, 0 for an empty trail: a scraper that alerts on a decrease must see the drop.
        { "idem_audit_head_id",
            "Id of the newest audit entry (0: none); ids only grow, a decrease means removed entries.",
            [](const StatsSnapshot& s) { return count(s.auditHeadId); } },
    };

    prometheus::ClientMetric sample(const MetricLabels& labels, prometheus::MetricType type, double value)
    {
        prometheus::ClientMetric m;
        m.label = labels;
        if (type == prometheus::MetricType::Counter)
            m.counter.value = value;
        else
            m.gauge.value = value;
        return m;
    }

    // Where a figure's sample gets its labels and value: the place a `quality` label (or a
    // companion idem_figure_quality gauge) joins once StatsSnapshot carries one per figure.
    std::optional<prometheus::ClientMetric> figureSample(
        const Figure& f, const StatsSnapshot& s, const MetricLabels& labels)
    {
        const Value v = f.value(s);
        if (!v)
            return std::nullopt; // absent, not zero: Prometheus has no null
        return sample(labels, prometheus::MetricType::Gauge, *v);
    }
} // namespace

std::vector<prometheus::MetricFamily> statsFamilies(const StatsSnapshot& s, const MetricLabels& labels)
{
    std::vector<prometheus::MetricFamily> out;
    for (const auto& f : figures) {
        auto m = figureSample(f, s, labels);
        if (!m)
            continue;
        out.push_back({ f.name, f.help, prometheus::MetricType::Gauge, { std::move(*m) } });
    }
    return out;
}

prometheus::MetricFamily singleFamily(
    const char* name, const char* help, prometheus::MetricType type, const MetricLabels& labels, double value)
{
    return { name, help, type, { sample(labels, type, value) } };
}

std::string exposition(const std::vector<prometheus::MetricFamily>& families)
{
    return prometheus::TextSerializer().Serialize(families);
}

} // namespace idem::cli
