#include "cli/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>

#include <prometheus/text_serializer.h>

#include "operations/fencing.h"
#include "operations/horizon.h"
#include "operations/latency.h"
#include "operations/pauses.h"
#include "operations/stats.h"

namespace idem::cli {

namespace {
    using Value = std::optional<double>;

    // One figure of StatsReading. `value` reads it; a figure's quality (exact, cached, lower bound,
    // estimate) will be read beside it in figureSample(), the one place a sample gets its labels.
    struct Figure {
        const char* name;
        const char* help;
        Value (*value)(const StatsReading&);
    };

    Value count(std::int64_t v) { return static_cast<double>(v); }

    // Names per the Prometheus conventions: base units (seconds), a ratio as a ratio, no _total
    // on gauges. The window figures are sums over the last --window minutes of idem_counters:
    // gauges, since they go down as minutes leave the window; the exporter adds true counters.
    const Figure figures[] = {
        { "idem_processing", "Rows processing under a live lease.",
            [](const StatsReading& s) { return count(s.processing); } },
        { "idem_expired_leases", "Rows processing whose lease ran out.",
            [](const StatsReading& s) { return count(s.expiredLeases); } },
        { "idem_oldest_processing_age_seconds", "Age since first seen of the oldest processing row.",
            [](const StatsReading& s) { return s.oldestProcessingAgeSeconds; } },
        { "idem_retryable_failed", "Rows waiting to be retried.",
            [](const StatsReading& s) { return count(s.retryableFailed); } },
        { "idem_uncertain", "Retryable rows whose last outcome is unknown.",
            [](const StatsReading& s) { return count(s.uncertain); } },
        { "idem_failed_permanent", "Rows failed with a permanent error.",
            [](const StatsReading& s) { return count(s.failedPermanent); } },
        { "idem_failed_exhausted", "Rows failed after running out of attempts or age.",
            [](const StatsReading& s) { return count(s.failedExhausted); } },
        { "idem_long_unfinished", "Rows processing or waiting to retry, first seen longer ago than the threshold.",
            [](const StatsReading& s) { return count(s.longUnfinished); } },
        { "idem_duplicate_ratio", "Duplicate claims over all claims in the window.",
            [](const StatsReading& s) { return s.duplicateRatio; } },
        { "idem_claims", "Claims counted in the window (the duplicate ratio's denominator).",
            [](const StatsReading& s) { return count(s.claims); } },
        { "idem_retries", "Takeovers of expired leases or due retries in the window.",
            [](const StatsReading& s) { return count(s.retries); } },
        { "idem_failed_retries", "Failures of attempt 2 or later (failed retries) in the window.",
            [](const StatsReading& s) { return count(s.failedRetries); } },
        { "idem_digest_conflicts", "Claims with a different request digest in the window.",
            [](const StatsReading& s) { return count(s.digestConflicts); } },
        { "idem_stale_token_rejections", "Calls by a token that lost its row in the window.",
            [](const StatsReading& s) { return count(s.staleTokenRejections); } },
        { "idem_total_rows_estimate", "Planner estimate of all rows (not a count).",
            [](const StatsReading& s) {
                return s.totalRowsEstimate ? Value(static_cast<double>(*s.totalRowsEstimate)) : std::nullopt;
            } },
        { "idem_in_recovery", "1 when the server is a standby.",
            [](const StatsReading& s) { return Value(s.inRecovery ? 1.0 : 0.0); } },
        { "idem_replication_lag_seconds", "Age of the last replayed transaction on a standby.",
            [](const StatsReading& s) { return s.replicationLagSeconds; } },
        // Always present, 0 for an empty trail: a scraper that alerts on a decrease must see the drop.
        { "idem_audit_head_id",
            "Id of the newest audit entry (0: none); ids only grow, a decrease means removed entries.",
            [](const StatsReading& s) { return count(s.auditHeadId); } },
    };

    MetricLabels with(MetricLabels labels, const char* name, const std::string& value)
    {
        labels.push_back({ name, value });
        return labels;
    }

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
    // companion idem_figure_quality gauge) joins once StatsReading carries one per figure.
    std::optional<prometheus::ClientMetric> figureSample(
        const Figure& f, const StatsReading& s, const MetricLabels& labels)
    {
        const Value v = f.value(s);
        if (!v)
            return std::nullopt; // absent, not zero: Prometheus has no null
        return sample(labels, prometheus::MetricType::Gauge, *v);
    }
} // namespace

std::vector<prometheus::MetricFamily> statsFamilies(const StatsReading& s, const MetricLabels& labels)
{
    std::vector<prometheus::MetricFamily> out;
    for (const auto& f : figures) {
        auto m = figureSample(f, s, labels);
        if (!m)
            continue;
        out.push_back({ f.name, f.help, prometheus::MetricType::Gauge, { std::move(*m) } });
    }
    // What each figure is, as companion gauges rather than a label on the figure itself, so a
    // figure's series does not change when it crosses the cap: idem_figure_quality{figure,
    // quality} is 1 for the quality in force (exact, lower_bound, estimate); beside a lower
    // bound, idem_figure_exact_cached{figure} is the shared refresh's exact count, as old as
    // idem_exact_refresh_age_seconds.
    prometheus::MetricFamily quality { "idem_figure_quality",
        "1 for what each figure is now: exact, lower_bound (counted up to the cap), exact_cached or estimate.",
        prometheus::MetricType::Gauge, {} };
    prometheus::MetricFamily cached { "idem_figure_exact_cached",
        "The exact count of a figure that is a lower bound, from the shared exact refresh.",
        prometheus::MetricType::Gauge, {} };
    for (int i = 0; i < figureCount; ++i) {
        const auto figure = static_cast<idem::Figure>(i);
        const auto& l = s.label(figure);
        for (auto q : { FigureQuality::Exact, FigureQuality::LowerBound, FigureQuality::ExactCached,
                 FigureQuality::Estimate })
            quality.metric.push_back(sample(with(with(labels, "figure", figureKey(figure)), "quality", qualityName(q)),
                prometheus::MetricType::Gauge, l.quality == q ? 1 : 0));
        if (l.exact)
            cached.metric.push_back(
                sample(with(labels, "figure", figureKey(figure)), prometheus::MetricType::Gauge, *l.exact));
    }
    out.push_back(std::move(quality));
    // Schema v13: flushes add_counters() refused as implausible (idem_counters_refused); who sent
    // them is in `idemctl stats`.
    out.push_back(singleFamily("idem_outcome_flushes_refused",
        "Counter flushes refused as implausible in the last 24 hours (idem_counters_refused).",
        prometheus::MetricType::Gauge, labels, static_cast<double>(s.refusedFlushes.last24h)));
    out.push_back(singleFamily("idem_exact_refresh_held", "1 when a session holds the shared exact refresh past its due time.",
        prometheus::MetricType::Gauge, labels, s.exactHolder ? 1 : 0));
    if (!cached.metric.empty())
        out.push_back(std::move(cached));
    if (s.exact) {
        out.push_back(singleFamily("idem_exact_refresh_age_seconds", "Age of the shared exact figures.",
            prometheus::MetricType::Gauge, labels, s.exact->ageSeconds));
        out.push_back(singleFamily("idem_exact_refresh_cost_seconds",
            "What the last exact refresh cost the database (wall time of its count).", prometheus::MetricType::Gauge,
            labels, s.exact->costMs / 1000.0));
        out.push_back(singleFamily("idem_exact_refreshes_total", "Exact refreshes the database has run.",
            prometheus::MetricType::Counter, labels, static_cast<double>(s.exact->refreshes)));
    }
    return out;
}

std::vector<prometheus::MetricFamily> pauseFamilies(const PauseList& pauses, const MetricLabels& labels)
{
    using prometheus::MetricType;
    prometheus::MetricFamily active { "idem_pause_active",
        "1 for a pause in force, 0 for one past its end that stays listed until it is lifted or set again.",
        MetricType::Gauge, {} };
    prometheus::MetricFamily age { "idem_pause_age_seconds",
        "Time since the pause was set (kept when it is changed or extended), by the server's clock.", MetricType::Gauge,
        {} };
    prometheus::MetricFamily planned { "idem_pause_planned_seconds",
        "The pause's planned length: its end minus when it was set; no sample for a pause until resumed.",
        MetricType::Gauge, {} };
    prometheus::MetricFamily rampStep { "idem_pause_ramp_step",
        "A resume in steps under way (idemctl resume --ramp): the step it is at, 1 for the first, by the server's clock.",
        MetricType::Gauge, {} };
    prometheus::MetricFamily rampPercent { "idem_pause_ramp_admitted_percent",
        "A resume in steps under way: the percentage of the scope's keys its current step admits (by key hash).",
        MetricType::Gauge, {} };
    prometheus::MetricFamily rampFailure { "idem_pause_ramp_failure_ratio",
        "A resume in steps under way: failures over admitted claims in its current step; no sample before one was admitted.",
        MetricType::Gauge, {} };
    prometheus::MetricFamily rampAborted { "idem_pause_ramp_aborted",
        "1 for a pause in force that a ramp's automatic re-pause set (its admitted keys failed past the threshold).",
        MetricType::Gauge, {} };
    int inForce = 0;
    for (const auto& p : pauses.pauses) {
        // The table's CHECK bounds both to '*' or 1 to 64 visible ASCII characters, as the
        // outcome counters' labels are; the text format escapes whatever else.
        const auto scoped = with(with(labels, "tenant", p.tenant), "operation", p.operation);
        active.metric.push_back(sample(scoped, MetricType::Gauge, p.active ? 1 : 0));
        const auto ageUs = std::max<std::int64_t>(0, pauses.serverNowUs - p.pausedAtUs);
        age.metric.push_back(sample(scoped, MetricType::Gauge, static_cast<double>(ageUs) / 1e6));
        if (p.untilUs)
            planned.metric.push_back(
                sample(scoped, MetricType::Gauge, static_cast<double>(*p.untilUs - p.pausedAtUs) / 1e6));
        inForce += p.active ? 1 : 0;
        if (p.ramp && p.active) {
            rampStep.metric.push_back(sample(scoped, MetricType::Gauge, p.ramp->step + 1));
            rampPercent.metric.push_back(sample(scoped, MetricType::Gauge, p.ramp->percent));
            if (const auto rate = p.ramp->failureRate())
                rampFailure.metric.push_back(sample(scoped, MetricType::Gauge, *rate));
        }
        if (p.rampAbortedAtUs && p.active)
            rampAborted.metric.push_back(sample(scoped, MetricType::Gauge, 1));
    }
    std::vector<prometheus::MetricFamily> out;
    for (auto* family : { &active, &age, &planned, &rampStep, &rampPercent, &rampFailure, &rampAborted })
        if (!family->metric.empty())
            out.push_back(std::move(*family));
    out.push_back(singleFamily("idem_pauses_active", "Pauses of intake in force.", MetricType::Gauge, labels, inForce));
    return out;
}

namespace {
    // Every 8th slot boundary: slot s holds (10^(s/32), 10^((s+1)/32)] us, so the bucket
    // le = 10^(j/32) us holds exactly the slots below j.
    constexpr int firstBoundSlot = 96; // 10^(96/32) us = 1 ms
    constexpr int slotsPerBucket = 8;
    constexpr int durationBoundCount = 33; // to 10^(352/32) us = 100000 s

    // prometheus-cpp writes a bound with 16 significant digits, which a double does not always
    // survive (10^-3 computed is not the double "0.001" parses to). Rounded to 15 digits, which
    // every double does, it is written as those digits, and Prometheus reads the same double.
    double printable(double v)
    {
        char text[32];
        std::snprintf(text, sizeof text, "%.15g", v);
        return std::strtod(text, nullptr);
    }
} // namespace

const std::vector<double>& LatencyTotals::durationBounds()
{
    static const std::vector<double> bounds = [] {
        std::vector<double> b;
        for (int i = 0; i < durationBoundCount; ++i)
            b.push_back(printable(
                std::pow(10.0, static_cast<double>(firstBoundSlot + slotsPerBucket * i) / latencySlotsPerDecade - 6)));
        return b;
    }();
    return bounds;
}

const std::vector<double>& LatencyTotals::attemptBounds()
{
    static const std::vector<double> bounds { 1, 2, 3, 4, 5, 7, 10, 20, 50, 100 };
    return bounds;
}

std::size_t LatencyTotals::durationBucket(int slot)
{
    if (slot < firstBoundSlot)
        return 0;
    return std::min<std::size_t>((slot - firstBoundSlot) / slotsPerBucket + 1, durationBoundCount);
}

std::size_t LatencyTotals::attemptBucket(int slot)
{
    const auto& b = attemptBounds();
    return static_cast<std::size_t>(std::lower_bound(b.begin(), b.end(), static_cast<double>(slot)) - b.begin());
}

LatencyTotals::Series::Series()
    : run(durationBounds())
    , timeToSuccess(durationBounds())
    , attempts(attemptBounds())
{
}

void LatencyTotals::add(const std::vector<LatencyHistogram>& histograms)
{
    for (const auto& h : histograms) {
        if (h.count == 0)
            continue;
        Series& series = m_byOperation.try_emplace(h.operation).first->second;
        const bool attempts = h.kind == LatencyKind::Attempts;
        std::vector<double> increments((attempts ? attemptBounds() : durationBounds()).size() + 1, 0.0);
        for (const auto& [slot, n] : h.slotCounts)
            increments[attempts ? attemptBucket(slot) : durationBucket(slot)] += static_cast<double>(n);
        switch (h.kind) {
        case LatencyKind::Run:
            series.run.ObserveMultiple(increments, h.total / 1e6);
            break;
        case LatencyKind::TimeToSuccess:
            series.timeToSuccess.ObserveMultiple(increments, h.total / 1e6);
            break;
        case LatencyKind::Attempts:
            series.attempts.ObserveMultiple(increments, h.total);
            break;
        }
    }
}

std::vector<prometheus::MetricFamily> LatencyTotals::families(const MetricLabels& labels) const
{
    using prometheus::MetricType;
    prometheus::MetricFamily run { "idem_task_run_seconds",
        "Run time of each attempt (claim to complete or fail, server clock), from the folded minutes since this "
        "exporter started, by operation.",
        MetricType::Histogram, {} };
    prometheus::MetricFamily tts { "idem_task_time_to_success_seconds",
        "Time from a key's first claim to its success, across retries and takeovers (server clock), from the folded "
        "minutes since this exporter started, by operation.",
        MetricType::Histogram, {} };
    prometheus::MetricFamily attempts { "idem_task_attempts_per_success",
        "Attempts each success took, from the folded minutes since this exporter started, by operation.",
        MetricType::Histogram, {} };
    for (const auto& [operation, series] : m_byOperation) {
        const auto scoped = with(labels, "operation", operation);
        for (auto [family, histogram] : { std::pair { &run, &series.run }, std::pair { &tts, &series.timeToSuccess },
                 std::pair { &attempts, &series.attempts } }) {
            auto m = histogram->Collect();
            m.label = scoped;
            family->metric.push_back(std::move(m));
        }
    }
    std::vector<prometheus::MetricFamily> out;
    if (!m_byOperation.empty())
        for (auto* family : { &run, &tts, &attempts })
            out.push_back(std::move(*family));
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

std::vector<prometheus::MetricFamily> horizonFamilies(const HorizonReading& h, const MetricLabels& labels)
{
    std::vector<prometheus::MetricFamily> f;
    if (!h.available)
        return f;
    const auto* timed = h.oldestTimed();
    const auto* oldest = h.oldest();
    f.push_back(singleFamily("idem_horizon_age_seconds",
        "Age of the oldest transaction holding back the database's horizon (a session or a prepared transaction: "
        "since its transaction began); 0 when none. VACUUM cannot remove rows that died after it.",
        prometheus::MetricType::Gauge, labels, timed ? *timed->ageSeconds : 0.0));
    f.push_back(singleFamily("idem_horizon_age_xids",
        "Age in transaction ids of the oldest snapshot holding back the horizon (sessions, prepared transactions, "
        "replication slots' xmin, standbys' feedback); 0 when none.",
        prometheus::MetricType::Gauge, labels, oldest ? static_cast<double>(oldest->xidAge) : 0.0));
    f.push_back(singleFamily("idem_horizon_holders", "Holders of the horizon read (oldest first, at most 5).",
        prometheus::MetricType::Gauge, labels, static_cast<double>(h.holders.size())));
    prometheus::MetricFamily dead { "idem_table_dead_rows",
        "Dead rows of an Idem table as the statistics collector estimates them (pg_stat_user_tables.n_dead_tup).",
        prometheus::MetricType::Gauge, {} };
    for (const auto& t : h.tables) {
        prometheus::ClientMetric m;
        m.label = labels;
        m.label.push_back({ "table", t.name });
        m.gauge.value = static_cast<double>(t.deadTuples);
        dead.metric.push_back(std::move(m));
    }
    if (!dead.metric.empty())
        f.push_back(std::move(dead));
    return f;
}

std::vector<prometheus::MetricFamily> fencingFamilies(const FencingReading& r, const MetricLabels& labels)
{
    using prometheus::MetricType;
    std::vector<prometheus::MetricFamily> f;
    const auto perOperation = [&](const char* name, const char* help,
                                  const std::function<std::optional<double>(const FencingOperation&)>& value) {
        prometheus::MetricFamily family { name, help, MetricType::Gauge, {} };
        for (const auto& op : r.operations) {
            const auto v = value(op);
            if (!v)
                continue;
            prometheus::ClientMetric m;
            m.label = labels;
            m.label.push_back({ "operation", op.operation });
            m.gauge.value = *v;
            family.metric.push_back(std::move(m));
        }
        if (!family.metric.empty())
            f.push_back(std::move(family));
    };
    perOperation("idem_fencing_takeovers",
        "Claims in the window that took over an expired lease (reacquired_lease, as the workers' libraries counted "
        "them).",
        [](const FencingOperation& o) { return std::optional<double>(static_cast<double>(o.takeovers)); });
    perOperation("idem_fencing_refused",
        "Late complete, fail, heartbeat or fence calls refused in the window because another attempt had taken the key "
        "over (stale tokens): the fence held, and the late attempt's transaction was rolled back.",
        [](const FencingOperation& o) { return std::optional<double>(static_cast<double>(o.refused)); });
    perOperation("idem_lease_seconds", "The lease the operation's claims asked for most often in the window.",
        [](const FencingOperation& o) {
            return o.leaseMs ? std::optional<double>(static_cast<double>(*o.leaseMs) / 1000.0) : std::nullopt;
        });
    perOperation("idem_lease_run_p99_seconds",
        "p99 of the operation's attempt run times in the window (claim to complete or fail, within 3.7 %).",
        [](const FencingOperation& o) {
            return o.runP99Ms ? std::optional<double>(*o.runP99Ms / 1000.0) : std::nullopt;
        });
    perOperation("idem_lease_measured_attempts",
        "Succeeded attempts in the window whose run time was measured against the lease their claim asked for.",
        [](const FencingOperation& o) {
            return o.measured > 0 ? std::optional<double>(static_cast<double>(o.measured)) : std::nullopt;
        });
    perOperation("idem_lease_overrun_ratio",
        "Of those attempts, the fraction that ran longer than their lease: each could have been taken over.",
        [](const FencingOperation& o) {
            const auto p = o.overrunPercent();
            return p ? std::optional<double>(*p / 100.0) : std::nullopt;
        });
    prometheus::MetricFamily workers { "idem_fencing_worker_refused",
        "Late calls refused in the window, by the worker (application_name) whose counters recorded them; workers "
        "with one at least.",
        MetricType::Gauge, {} };
    for (const auto& w : r.workers) {
        if (w.refused <= 0)
            continue;
        prometheus::ClientMetric m;
        m.label = labels;
        m.label.push_back({ "operation", w.operation });
        m.label.push_back({ "worker", w.worker });
        m.gauge.value = static_cast<double>(w.refused);
        workers.metric.push_back(std::move(m));
    }
    if (!workers.metric.empty())
        f.push_back(std::move(workers));
    return f;
}

} // namespace idem::cli
