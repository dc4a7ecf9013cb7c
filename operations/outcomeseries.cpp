#include "operations/outcomeseries.h"


// lupdate reads this file for the console's labels; nothing here links Qt.
#define QT_TRANSLATE_NOOP(context, text) text

namespace idem {

const std::vector<OutcomeField>& outcomeFields()
{
    // The CHECK of idem_counters.outcome (0001_initial.sql, retry_failed from 0010_failed_retries.sql,
    // paused from 0015_pauses.sql).
    using B = CounterBucket;
    static const std::vector<OutcomeField> fields = {
        { "acquired", &B::acquired },
        { "reacquired_lease", &B::reacquiredLease },
        { "reacquired_retry", &B::reacquiredRetry },
        { "replayed", &B::replayed },
        { "in_progress", &B::inProgress },
        { "conflict", &B::conflict },
        { "retry_later", &B::retryLater },
        { "rejected_failed", &B::rejectedFailed },
        { "stale_token", &B::staleToken },
        { "succeeded", &B::succeeded },
        { "failed_retryable", &B::failedRetryable },
        { "failed_permanent", &B::failedPermanent },
        { "failed_unknown", &B::failedUnknown },
        { "exhausted", &B::exhausted },
        { "retry_failed", &B::retryFailed },
        { "paused", &B::paused },
    };
    return fields;
}

std::int64_t CounterBucket::*outcomeField(const std::string& name)
{
    for (const auto& f : outcomeFields())
        if (name == f.name)
            return f.field;
    return nullptr;
}


const std::vector<OutcomeSeries>& outcomeSeries()
{
    using C = OutcomeChart;
    static const std::vector<OutcomeSeries> series = {
        { "new", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "new"), C::Claims, Everywhere, 0x2e9e4f, { "acquired" } },
        { "replay", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "replay"), C::Claims, Everywhere, 0x8e6bd6, { "replayed" } },
        { "inprogress", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "in progress"), C::Claims, Everywhere, 0x3b7dd8, { "in_progress" } },
        { "conflict", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "conflict"), C::Claims, Everywhere, 0xd94c6a, { "conflict" } },
        // The retries chart has the same sum in the report; the console shows it beside the claims.
        { "reclaim", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "reclaim"), C::Claims, InConsole, 0xc9a227,
            { "reacquired_lease", "reacquired_retry" } },
        { "retrylater", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "retry later"), C::Claims, InReport, 0x7f8c99, { "retry_later" } },
        { "rejectedfailed", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "rejected, failed"), C::Claims, InReport, 0x8c564b,
            { "rejected_failed" } },
        // Claims an operator's pause turned away (schema v15): zero unless something was paused.
        { "paused", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "paused"), C::Claims, InReport, 0x5f6b7a, { "paused" } },
        { "retries", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "retries"), C::Failures, Everywhere, 0xc9a227,
            { "reacquired_lease", "reacquired_retry" } },
        { "failedretries", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "failed retries"), C::Failures, Everywhere, 0xe0742b,
            { "retry_failed" } },
        { "permanent", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "permanent"), C::Failures, Everywhere, 0xd94c6a, { "failed_permanent" } },
        { "failedretryable", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "failed, retryable"), C::Failures, InReport, 0x3b7dd8,
            { "failed_retryable" } },
        { "failedunknown", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "failed, unknown"), C::Failures, InReport, 0x8c564b,
            { "failed_unknown" } },
        { "exhausted", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "exhausted"), C::Failures, InReport, 0x7f8c99, { "exhausted" } },
        { "staletokens", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "stale tokens"), C::Failures, InReport, 0xe377c2, { "stale_token" } },
        { "succeeded", QT_TRANSLATE_NOOP("idem::console::ChartPanel", "succeeded"), C::Completions, InReport, 0x2e9e4f, { "succeeded" } },
    };
    return series;
}

std::vector<const OutcomeSeries*> outcomeSeries(OutcomeChart chart, SeriesPlace place)
{
    std::vector<const OutcomeSeries*> out;
    for (const auto& s : outcomeSeries())
        if (s.chart == chart && (s.places & place))
            out.push_back(&s);
    return out;
}

const OutcomeSeries* findOutcomeSeries(const std::string& id)
{
    for (const auto& s : outcomeSeries())
        if (id == s.id)
            return &s;
    return nullptr;
}

const char* outcomeChartTitle(OutcomeChart chart)
{
    switch (chart) {
    case OutcomeChart::Claims:
        return QT_TRANSLATE_NOOP("idem::console::ChartPanel", "Claim outcomes per minute");
    case OutcomeChart::Failures:
        return QT_TRANSLATE_NOOP("idem::console::ChartPanel", "Retries and failures per minute");
    case OutcomeChart::Completions:
        return QT_TRANSLATE_NOOP("idem::console::ChartPanel", "Completions per minute");
    }
    return "";
}

std::int64_t seriesValue(const OutcomeSeries& series, const CounterBucket& bucket)
{
    std::int64_t sum = 0;
    for (const char* name : series.outcomes)
        if (const auto field = outcomeField(name))
            sum += bucket.*field;
    return sum;
}

} // namespace idem
