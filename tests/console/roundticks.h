#pragma once

#include <QDateTimeAxis>
#include <QList>
#include <QString>

namespace idem::test {

// Why a chart's time axis does not tick on round local times (empty when it does): its ticks
// must be evenly spaced whole steps of 1, 2, 5, 10, 15, 30 minutes, 1, 2, 3, 6, 12 hours or
// 1, 2, 7, 14, 28, 56, 91, 182, 364 days, starting on a multiple of the step in local time.
inline QString roundTicksProblem(const QDateTimeAxis* x)
{
    const qint64 from = x->min().toMSecsSinceEpoch() + qint64(x->min().offsetFromUtc()) * 1000;
    const qint64 to = x->max().toMSecsSinceEpoch() + qint64(x->max().offsetFromUtc()) * 1000;
    const QString where = x->min().toString(Qt::ISODateWithMs) + QLatin1String(" to ")
        + x->max().toString(Qt::ISODateWithMs) + QLatin1String(", ") + QString::number(x->tickCount())
        + QLatin1String(" ticks");
    if (x->tickCount() < 2)
        return QLatin1String("fewer than two ticks: ") + where;
    const qint64 step = (to - from) / (x->tickCount() - 1);
    if (step * (x->tickCount() - 1) != to - from)
        return QLatin1String("the range is not a whole number of steps: ") + where;
    constexpr qint64 minute = 60000;
    const QList<qint64> steps { 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2 * 1440, 7 * 1440, 14 * 1440,
        28 * 1440, 56 * 1440, 91 * 1440, 182 * 1440, 364 * 1440 };
    if (step % minute != 0 || !steps.contains(step / minute))
        return QLatin1String("a step of ") + QString::number(step) + QLatin1String(" ms: ") + where;
    if (from % step != 0)
        return QLatin1String("the first tick is not on a whole step: ") + where;
    return {};
}

} // namespace idem::test
