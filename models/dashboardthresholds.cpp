#include "models/dashboardthresholds.h"

#include <QSettings>

#include <algorithm>
#include <utility>

namespace idem::console {

namespace {
    const QString group = QStringLiteral("dashboard");

    QString optionalText(const std::optional<double>& v) { return v ? QString::number(*v) : QString(); }

    std::optional<double> optionalFrom(const QVariant& v)
    {
        bool ok = false;
        const double d = v.toString().toDouble(&ok);
        return ok && d >= 0 ? std::optional<double>(d) : std::nullopt;
    }
} // namespace

DashboardSettings::DashboardSettings()
{
    for (const auto& spec : tileCatalogue())
        thresholds[static_cast<std::size_t>(spec.tile)] = spec.defaults;
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
    for (const auto& spec : tileCatalogue()) {
        const QString key = thresholdSettingsKey(spec.tile);
        auto& t = s.thresholds[static_cast<std::size_t>(spec.tile)];
        if (spec.perClaims() && !settings.contains(key + QStringLiteral("/warning"))
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
    for (const auto& spec : tileCatalogue()) {
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
