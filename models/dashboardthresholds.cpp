#include "models/dashboardthresholds.h"

#include <QCoreApplication>
#include <QSettings>

#include <algorithm>
#include <utility>

namespace idem::console {

namespace {
    const QString group = QStringLiteral("dashboard");

    Threshold at(double warning, double critical) { return { warning, critical }; }

    const std::array<TileSpec, tileCount>& specs()
    {
        static const std::array<TileSpec, tileCount> all = { {
            { Tile::Processing, "processing", QT_TRANSLATE_NOOP("idem::console::Tile", "Processing"),
                QT_TRANSLATE_NOOP("idem::console::Tile",
                    "Rows in processing whose lease is still running: tasks a worker is on now."),
                {}, "processing" },
            { Tile::ExpiredLeases, "expiredLeases", QT_TRANSLATE_NOOP("idem::console::Tile", "Expired leases"),
                QT_TRANSLATE_NOOP("idem::console::Tile",
                    "Rows in processing whose lease ran out: the worker died or stalled; the next "
                    "claim takes them over."),
                at(1, 10), "expired_leases" },
            { Tile::WaitingRetry, "waitingRetry", QT_TRANSLATE_NOOP("idem::console::Tile", "Waiting to retry"),
                QT_TRANSLATE_NOOP("idem::console::Tile",
                    "Rows in retryable_failed now: an attempt failed and the task waits for its backoff "
                    "to elapse and the next claim of its key."),
                at(100, 1000), "retryable_failed" },
            { Tile::Uncertain, "uncertain", QT_TRANSLATE_NOOP("idem::console::Tile", "Uncertain outcomes"),
                QT_TRANSLATE_NOOP("idem::console::Tile",
                    "Retryable rows whose last attempt's effect is unknown (timeout after the "
                    "request left); retried with the same key."),
                at(1, 10), "uncertain" },
            { Tile::LongUnfinished, "longUnfinished", QT_TRANSLATE_NOOP("idem::console::Tile", "Long-unfinished"),
                QT_TRANSLATE_NOOP("idem::console::Tile",
                    "Rows still in flight (processing or waiting to retry) and first seen longer ago "
                    "than the long-unfinished limit. Failed rows have their own tile."),
                at(1, 20), "long_unfinished" },
            { Tile::OldestProcessing, "oldestProcessing", QT_TRANSLATE_NOOP("idem::console::Tile", "Oldest processing"),
                QT_TRANSLATE_NOOP("idem::console::Tile",
                    "Age of the oldest row in processing, since it was first seen (created_at)."),
                at(300, 1800), "oldest_processing_age_seconds" },
            { Tile::Failed, "failed", QT_TRANSLATE_NOOP("idem::console::Tile", "Failed"),
                QT_TRANSLATE_NOOP("idem::console::Tile",
                    "Rows in failed: a permanent error, or attempts / age exhausted. Only an operator "
                    "can requeue them."),
                at(1, 20), "failed" },
            { Tile::DuplicateRatio, "duplicateRatio", QT_TRANSLATE_NOOP("idem::console::Tile", "Duplicate ratio"),
                QT_TRANSLATE_NOOP("idem::console::Tile",
                    "Claims answered from an existing key (replay, in progress, conflict) over all "
                    "claims in the window, from idem_counters."),
                at(20, 50), "duplicate_ratio" },
            { Tile::Retries, "retries", QT_TRANSLATE_NOOP("idem::console::Tile", "Retries"),
                QT_TRANSLATE_NOOP("idem::console::Tile",
                    "Claims that took a row over again (expired lease or elapsed backoff) in the "
                    "window, from idem_counters."),
                at(15, 40), "retries_per_claim", true },
            { Tile::FailedRetries, "failedRetries", QT_TRANSLATE_NOOP("idem::console::Tile", "Failed retries"),
                QT_TRANSLATE_NOOP("idem::console::Tile",
                    "Attempts after the first (attempt 2 or later) that failed, whatever the error "
                    "class, in the window, from idem_counters. A first attempt's failure is not counted. "
                    "A click opens the keys with such a failure in their error history, whatever their "
                    "status now: fewer keys than failures when a key failed more than once."),
                at(2, 10), "failed_retries_per_claim", true },
            { Tile::DigestConflicts, "digestConflicts", QT_TRANSLATE_NOOP("idem::console::Tile", "Digest conflicts"),
                QT_TRANSLATE_NOOP("idem::console::Tile",
                    "Claims of a key with a different request digest in the window: a client reused "
                    "a key for another request."),
                at(0.5, 5), "digest_conflicts_per_claim", true },
            { Tile::StaleTokens, "staleTokens", QT_TRANSLATE_NOOP("idem::console::Tile", "Stale-token rejections"),
                QT_TRANSLATE_NOOP("idem::console::Tile",
                    "complete / fail / heartbeat by a worker that had lost the row (lease taken over) "
                    "in the window: the fence at work."),
                at(1, 5), "stale_token_rejections_per_claim", true },
            { Tile::TotalRows, "totalRows", QT_TRANSLATE_NOOP("idem::console::Tile", "Total rows"),
                QT_TRANSLATE_NOOP("idem::console::Tile",
                    "The planner's estimate of the table's rows (pg_class.reltuples), never a count."),
                {}, "total_rows_estimate" },
        } };
        return all;
    }

    QString optionalText(const std::optional<double>& v) { return v ? QString::number(*v) : QString(); }

    std::optional<double> optionalFrom(const QVariant& v)
    {
        bool ok = false;
        const double d = v.toString().toDouble(&ok);
        return ok && d >= 0 ? std::optional<double>(d) : std::nullopt;
    }
} // namespace

const TileSpec& tileSpec(Tile tile) { return specs().at(static_cast<std::size_t>(tile)); }

QString tileTitle(Tile tile) { return QCoreApplication::translate("idem::console::Tile", tileSpec(tile).title); }

QString tileDefinition(Tile tile)
{
    return QCoreApplication::translate("idem::console::Tile", tileSpec(tile).definition);
}

double tileUnitsPerFigureUnit(Tile tile)
{
    return tile == Tile::DuplicateRatio || tileSpec(tile).perClaims ? 100.0 : 1.0;
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
        + (tileSpec(tile).perClaims ? QStringLiteral("PerClaims") : QString());
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

DashboardSettings::DashboardSettings()
{
    for (int i = 0; i < tileCount; ++i)
        thresholds[static_cast<std::size_t>(i)] = specs()[static_cast<std::size_t>(i)].defaults;
}

DashboardSettings DashboardSettings::load(QSettings& settings)
{
    DashboardSettings s;
    settings.beginGroup(group);
    s.intervalMs
        = std::clamp(settings.value(QStringLiteral("intervalMs"), s.intervalMs).toInt(), minIntervalMs, maxIntervalMs);
    s.paused = settings.value(QStringLiteral("paused"), false).toBool();
    const int window = settings.value(QStringLiteral("windowMinutes"), s.windowMinutes).toInt();
    if (window == 15 || window == 60 || window == 360 || window == 1440)
        s.windowMinutes = window;
    s.longUnfinishedMinutes = std::clamp(
        settings.value(QStringLiteral("longUnfinishedMinutes"), s.longUnfinishedMinutes).toInt(), 1, 7 * 24 * 60);
    s.tenant = settings.value(QStringLiteral("tenant")).toString();
    s.operation = settings.value(QStringLiteral("operation")).toString();
    for (const auto& spec : specs()) {
        const QString key = thresholdSettingsKey(spec.tile);
        auto& t = s.thresholds[static_cast<std::size_t>(spec.tile)];
        if (spec.perClaims && !settings.contains(key + QStringLiteral("/warning"))
            && !settings.contains(key + QStringLiteral("/critical"))) {
            // Settings of a version that counted these in events: a count cannot be read as a
            // percentage, so the new defaults apply; only a level switched off stays off.
            const QString old = QStringLiteral("thresholds/") + QLatin1String(spec.key);
            for (auto [level, name] : { std::pair { &t.warning, "/warning" }, std::pair { &t.critical, "/critical" } })
                if (settings.contains(old + QLatin1String(name))
                    && settings.value(old + QLatin1String(name)).toString().isEmpty())
                    level->reset();
            continue;
        }
        if (settings.contains(key + QStringLiteral("/warning")))
            t.warning = optionalFrom(settings.value(key + QStringLiteral("/warning")));
        if (settings.contains(key + QStringLiteral("/critical")))
            t.critical = optionalFrom(settings.value(key + QStringLiteral("/critical")));
    }
    settings.endGroup();
    return s;
}

void DashboardSettings::save(QSettings& settings) const
{
    settings.beginGroup(group);
    settings.setValue(QStringLiteral("intervalMs"), intervalMs);
    settings.setValue(QStringLiteral("paused"), paused);
    settings.setValue(QStringLiteral("windowMinutes"), windowMinutes);
    settings.setValue(QStringLiteral("longUnfinishedMinutes"), longUnfinishedMinutes);
    settings.setValue(QStringLiteral("tenant"), tenant);
    settings.setValue(QStringLiteral("operation"), operation);
    for (const auto& spec : specs()) {
        // An empty value means "off", distinct from "never set" (the default).
        const QString key = thresholdSettingsKey(spec.tile);
        const auto& t = thresholds[static_cast<std::size_t>(spec.tile)];
        settings.setValue(key + QStringLiteral("/warning"), optionalText(t.warning));
        settings.setValue(key + QStringLiteral("/critical"), optionalText(t.critical));
    }
    settings.endGroup();
    settings.sync();
}

} // namespace idem::console
