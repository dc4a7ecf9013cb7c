#include "models/tilecatalogue.h"

#include <QCoreApplication>

namespace idem::console {

namespace {
    Threshold at(double warning, double critical) { return { warning, critical }; }

    // What the Tasks page shows for a tile, as filter fields (the tenant and operation filter
    // comes from the dashboard's own).
    void processingLive(idem::TaskFilter& f, const TileWindow&)
    {
        f.statuses = { "processing" };
        f.liveLease = true;
    }
    void processingExpired(idem::TaskFilter& f, const TileWindow&)
    {
        f.statuses = { "processing" };
        f.expiredLease = true;
    }
    void processingAny(idem::TaskFilter& f, const TileWindow&) { f.statuses = { "processing" }; }
    void retryable(idem::TaskFilter& f, const TileWindow&) { f.statuses = { "retryable_failed" }; }
    void retryableUncertain(idem::TaskFilter& f, const TileWindow&)
    {
        f.statuses = { "retryable_failed" };
        f.uncertain = true;
    }
    void inFlightLong(idem::TaskFilter& f, const TileWindow& w)
    {
        // What the tile counts: work still in flight (failed rows have their own tile).
        f.statuses = { "processing", "retryable_failed" };
        f.unfinishedForMinutes = w.longUnfinishedMinutes;
    }
    void failed(idem::TaskFilter& f, const TileWindow&) { f.statuses = { "failed" }; }
    void retriedInWindow(idem::TaskFilter& f, const TileWindow& w)
    {
        // Every status: a retry that succeeded was a retry too (the retried-rows index serves it).
        f.minAttempts = 2;
        f.updatedWithinMinutes = w.windowMinutes;
    }
    void failedRetryInWindow(idem::TaskFilter& f, const TileWindow& w)
    {
        // The keys the figure counted: a failure of attempt 2 or later in the window, read from
        // the error history, whatever came after it (a later success included).
        retriedInWindow(f, w);
        f.failedRetryInWindow = true;
    }
    void conflictInWindow(idem::TaskFilter& f, const TileWindow& w)
    {
        f.digestConflicts = true;
        f.conflictWithinMinutes = w.windowMinutes;
    }
    void everyRow(idem::TaskFilter&, const TileWindow&) { }

    using A = TileArg;
    using F = idem::Figure;
    // The tile's own strings are in context idem::console::Tile; the lines the presenter writes
    // (detail, no value, what a click opens) in idem::console::DashboardModel, where their
    // translations are. Written out, not through a macro: lupdate does not expand macros.
    // Per-claim tiles: the count of events, its share of the claims and the window.
    const char* const perClaimsDetail = QT_TRANSLATE_NOOP("idem::console::DashboardModel", "%1 % of claims, %2");
} // namespace

// The catalogue. Columns: tile, key, title, definition, unit, figures, detail (+ args),
// no-value line (+ args), default thresholds, snapshot metric, red series, what a click selects,
// in words (+ args), its order, why it opens nothing, the snapshot's row set.
const std::vector<TileSpec>& tileCatalogue()
{
    static const std::vector<TileSpec> all = {
        { Tile::Processing, "processing", QT_TRANSLATE_NOOP("idem::console::Tile", "Processing"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "Rows in processing whose lease is still running: tasks a worker is on now. A task run in one "
                                                       "transaction (claim, writes and success in one commit) shows nothing until it commits."), TileUnit::Rows,
            { F::Processing }, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "live leases"), {}, nullptr, {}, {}, "processing", RedSeries::LiveProcessing,
            processingLive, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "rows in processing with a live lease"), {}, {}, nullptr, "longest_running" },
        { Tile::ExpiredLeases, "expiredLeases", QT_TRANSLATE_NOOP("idem::console::Tile", "Expired leases"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "Rows in processing whose lease ran out: the worker died or stalled; the next "
                      "claim takes them over."),
            TileUnit::Rows, { F::ExpiredLeases }, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "processing, lease ran out"), {}, nullptr, {}, at(1, 10),
            "expired_leases", RedSeries::LiveExpired, processingExpired,
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "rows in processing whose lease ran out"), {}, {}, nullptr, "expired_leases" },
        { Tile::WaitingRetry, "waitingRetry", QT_TRANSLATE_NOOP("idem::console::Tile", "Waiting to retry"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "Rows in retryable_failed now: an attempt failed and the task waits for its backoff "
                      "to elapse and the next claim of its key."),
            TileUnit::Rows, { F::RetryableFailed }, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "retryable_failed now"), {}, nullptr, {},
            at(100, 1000), "retryable_failed", RedSeries::None, retryable,
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "rows waiting to retry (retryable_failed)"), {}, {}, nullptr, "waiting_to_retry" },
        { Tile::Uncertain, "uncertain", QT_TRANSLATE_NOOP("idem::console::Tile", "Uncertain outcomes"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "Retryable rows whose last attempt's effect is unknown (timeout after the "
                      "request left); retried with the same key."),
            TileUnit::Rows, { F::Uncertain }, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "retryable, effect unknown"), {}, nullptr, {}, at(1, 10),
            "uncertain", RedSeries::None, retryableUncertain,
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "rows waiting to retry whose last outcome is unknown"), {}, {}, nullptr, "uncertain" },
        { Tile::LongUnfinished, "longUnfinished", QT_TRANSLATE_NOOP("idem::console::Tile", "Long-unfinished"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "Rows still in flight (processing or waiting to retry) and first seen longer ago "
                      "than the long-unfinished limit. Failed rows have their own tile."),
            TileUnit::Rows, { F::LongUnfinished }, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "in flight after %1 min"), { A::LongUnfinishedMinutes },
            nullptr, {}, at(1, 20), "long_unfinished", RedSeries::None, inFlightLong,
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "rows processing or waiting to retry, first seen over %1 min ago"),
            { A::LongUnfinishedMinutes }, {}, nullptr, nullptr },
        { Tile::OldestProcessing, "oldestProcessing", QT_TRANSLATE_NOOP("idem::console::Tile", "Oldest processing"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "Age of the oldest row in processing, since it was first seen (created_at)."),
            TileUnit::Seconds, { F::OldestProcessingAge }, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "since first seen"), {},
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "nothing processing"), {}, at(300, 1800), "oldest_processing_age_seconds", RedSeries::Age,
            processingAny, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "every row in processing, the oldest first (selected)"), {},
            // The tile ages rows by created_at: the row it is about is the first one seen.
            idem::TaskSort { idem::TaskSortColumn::CreatedAt, false }, nullptr, "longest_running" },
        { Tile::Failed, "failed", QT_TRANSLATE_NOOP("idem::console::Tile", "Failed"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "Rows in failed: a permanent error, or attempts / age exhausted. Only an operator "
                      "can requeue them."),
            TileUnit::Rows, { F::FailedPermanent, F::FailedExhausted }, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "%1 permanent · %2 exhausted"),
            { A::EachFigure }, nullptr, {}, at(1, 20), "failed", RedSeries::None, failed, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "rows in failed"),
            {}, {}, nullptr, "failed" },
        { Tile::DuplicateRatio, "duplicateRatio", QT_TRANSLATE_NOOP("idem::console::Tile", "Duplicate ratio"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "Claims answered from an existing key (replay, in progress, conflict) over "
                      "the first claims of a key plus those, in the window, from idem_counters: a retry's claim of its own "
                      "key is not counted."),
            TileUnit::Percent, { F::DuplicateRatio }, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "of %1 requests (retries not counted), %2"), { A::Claims, A::Window },
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "no claims, %1"), { A::Window }, at(20, 50), "duplicate_ratio", RedSeries::Counters, nullptr,
            nullptr, {}, {},
            // Only the counters know a duplicate: a replay or an in-progress answer writes nothing to the row.
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "It would open the keys whose claims were answered as duplicates, but a replayed or "
                       "in-progress answer leaves no mark on the row, so those keys cannot be found. Digest conflicts "
                       "opens the keys with a conflicting claim."),
            nullptr },
        // The counter tiles count events; what they open are the keys those events left behind.
        { Tile::Retries, "retries", QT_TRANSLATE_NOOP("idem::console::Tile", "Retries"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "Claims that took a row over again (expired lease or elapsed backoff) in the "
                      "window, from idem_counters."),
            TileUnit::PerClaims, { F::Retries }, perClaimsDetail, { A::PercentOfClaims, A::Window }, nullptr, {}, at(15, 40),
            "retries_per_claim", RedSeries::Counters, retriedInWindow,
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "keys on attempt 2 or later, updated in the %1 (the tile counts takeovers)"), { A::Window }, {},
            nullptr, nullptr },
        { Tile::FailedRetries, "failedRetries", QT_TRANSLATE_NOOP("idem::console::Tile", "Failed retries"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "Attempts after the first (attempt 2 or later) that failed, whatever the error "
                      "class, in the window, from idem_counters. A first attempt's failure is not counted. "
                      "A click opens the keys with such a failure in their error history, whatever their "
                      "status now: fewer keys than failures when a key failed more than once."),
            TileUnit::PerClaims, { F::FailedRetries }, perClaimsDetail, { A::PercentOfClaims, A::Window }, nullptr, {}, at(2, 10),
            "failed_retries_per_claim", RedSeries::Counters, failedRetryInWindow,
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "keys with a failure of attempt 2 or later in the %1, whatever their status now (the tile counts "
                       "failures: a key that failed twice counts twice)"),
            { A::Window }, {}, nullptr, nullptr },
        { Tile::DigestConflicts, "digestConflicts", QT_TRANSLATE_NOOP("idem::console::Tile", "Digest conflicts"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "Claims of a key with a different request digest in the window: a client reused "
                      "a key for another request."),
            TileUnit::PerClaims, { F::DigestConflicts }, perClaimsDetail, { A::PercentOfClaims, A::Window }, nullptr, {}, at(0.5, 5),
            "digest_conflicts_per_claim", RedSeries::Counters, conflictInWindow,
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "keys with a digest conflict in the %1 (the tile counts conflicting claims)"), { A::Window }, {},
            nullptr,
            // SnapshotTasksPage::conflictsSet: the snapshot's recent conflicts.
            "recent_conflicts" },
        { Tile::StaleTokens, "staleTokens", QT_TRANSLATE_NOOP("idem::console::Tile", "Stale-token rejections"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "complete / fail / heartbeat by a worker that had lost the row (lease taken over) "
                      "in the window: the fence at work."),
            TileUnit::PerClaims, { F::StaleTokenRejections }, perClaimsDetail, { A::PercentOfClaims, A::Window }, nullptr, {}, at(1, 5),
            "stale_token_rejections_per_claim", RedSeries::Counters, nullptr, nullptr, {}, {},
            // A rejected call leaves no mark on any row.
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "It would open the keys whose late workers were turned away, but a rejected stale token leaves no "
                       "mark on the row, so those keys cannot be found."),
            nullptr },
        { Tile::TotalRows, "totalRows", QT_TRANSLATE_NOOP("idem::console::Tile", "Total rows"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "The planner's estimate of the table's rows (pg_class.reltuples), never a count."),
            TileUnit::Estimate, { F::TotalRows }, nullptr, {}, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "estimate: not analysed yet"), {}, {},
            "total_rows_estimate", RedSeries::None, everyRow, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "every row"), {}, {}, nullptr, nullptr },
        // The probes' last runs: no row of task_idempotency marks a key whose effect is missing or doubled.
        { Tile::Reconcile, "reconcile", QT_TRANSLATE_NOOP("idem::console::Tile", "Reconcile"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "Succeeded keys whose business effect the reconcile probes did not count exactly "
                      "once (none, or two or more) in their last runs, over the keys those runs sampled: exact for "
                      "those keys, as of the runs (idemctl reconcile)."),
            TileUnit::Reconcile, {}, QT_TRANSLATE_NOOP("idem::console::DashboardModel", "%1: %2 with no effect, %3 with two or more, in the last %4 sampled"),
            { A::ReconcileScope, A::ReconcileMissing, A::ReconcileDuplicated, A::ReconcileSampled },
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "no probe has run (idemctl reconcile add)"), {}, at(1, 1), "reconcile_not_ok_keys",
            RedSeries::None, nullptr, nullptr, {}, {},
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "It would open the keys the probes found without exactly one effect, but their rows "
                       "look like any other succeeded key's: idemctl reconcile list names them (the first 50 of each run), "
                       "and the incident snapshot keeps them."),
            nullptr },
        // The latency read's figure (issue #27), not the tick's: its texts are latencyWorstTile()'s.
        { Tile::WorstP95RunTime, "worstP95RunTime", QT_TRANSLATE_NOOP("idem::console::Tile", "Worst p95 run time"),
            QT_TRANSLATE_NOOP("idem::console::Tile", "The operation whose 95th-percentile run time (claim to complete or fail, by the server's "
                     "clock) is highest over the window's folded minutes. A minute is folded once it has been "
                     "closed for a minute, so the figures end a minute or two before now."),
            TileUnit::Latency, {}, nullptr, {}, nullptr, {}, at(5, 30), "worst_p95_run_seconds", RedSeries::None, nullptr,
            nullptr, {}, {},
            // The figures are per-minute histograms of run times: no key is kept with them.
            QT_TRANSLATE_NOOP("idem::console::DashboardModel", "It would open the slowest runs, but the latency figures are "
                       "per-minute histograms of run times that name no key: the latency chart shows them minute by minute."),
            nullptr },
    };
    return all;
}

const TileSpec& tileSpec(Tile tile) { return tileCatalogue().at(static_cast<std::size_t>(tile)); }

QString tileTitle(Tile tile) { return QCoreApplication::translate("idem::console::Tile", tileSpec(tile).title); }

QString tileDefinition(Tile tile)
{
    return QCoreApplication::translate("idem::console::Tile", tileSpec(tile).definition);
}

QString tileThresholdUnit(Tile tile)
{
    switch (tileSpec(tile).unit) {
    case TileUnit::PerClaims:
        return QCoreApplication::translate("idem::console::DashboardWidget", " % of claims");
    case TileUnit::Percent:
        return QStringLiteral(" %");
    case TileUnit::Seconds:
    case TileUnit::Latency:
        return QStringLiteral(" s");
    case TileUnit::Rows:
    case TileUnit::Estimate:
    case TileUnit::Reconcile:
        break;
    }
    return {};
}

double tileUnitsPerFigureUnit(Tile tile)
{
    const auto unit = tileSpec(tile).unit;
    return unit == TileUnit::Percent || unit == TileUnit::PerClaims ? 100.0 : 1.0;
}

double perClaimsPercent(std::int64_t n, std::int64_t claims)
{
    if (claims <= 0)
        return n > 0 ? 100.0 : 0.0;
    return 100.0 * static_cast<double>(n) / static_cast<double>(claims);
}

QString thresholdSettingsKey(Tile tile)
{
    // A per-claim threshold has a key of its own: a count stored by an older version under the
    // tile's key is not a percentage.
    return QStringLiteral("thresholds/") + QLatin1String(tileSpec(tile).key)
        + (tileSpec(tile).perClaims() ? QStringLiteral("PerClaims") : QString());
}

Level levelOf(std::optional<double> value, const Threshold& threshold)
{
    if (!value)
        return Level::NoData;
    if (threshold.critical && *value >= *threshold.critical)
        return Level::Critical;
    if (threshold.warning && *value >= *threshold.warning)
        return Level::Warning;
    return Level::Normal;
}

} // namespace idem::console
