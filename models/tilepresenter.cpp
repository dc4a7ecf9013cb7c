#include "models/tilepresenter.h"

#include <QCoreApplication>
#include <QLocale>

#include <algorithm>
#include <cmath>

#include "models/durationtext.h"
#include "models/latencywatch.h"
#include "models/visibletext.h"
#include "operations/outcomeseries.h"

namespace idem::console {

namespace {
    // A catalogue text (QT_TRANSLATE_NOOP in context idem::console::DashboardModel), translated.
    QString translated(const char* text) { return QCoreApplication::translate("idem::console::DashboardModel", text); }

    QString count(qint64 n) { return QLocale().toString(n); }

    std::int64_t countOf(const idem::StatsReading& s, idem::Figure f) { return idem::countFigure(s, f).value_or(0); }
} // namespace

QString windowText(int minutes)
{
    return minutes % 60 == 0 ? QCoreApplication::translate("idem::console::DashboardModel", "last %1 h").arg(minutes / 60) : QCoreApplication::translate("idem::console::DashboardModel", "last %1 min").arg(minutes);
}

QString totalRowsSourceText(const std::string& source)
{
    return source == idem::liveRowCounterSource ? QCoreApplication::translate("idem::console::DashboardModel", "estimate (live-row counter: not analysed yet)")
                                                : QCoreApplication::translate("idem::console::DashboardModel", "estimate (planner statistics)");
}

TilePresenter::TilePresenter(const TileInputs& inputs)
    : m_in(inputs)
{
}

QString TilePresenter::withArgs(const TileSpec& spec, const char* text, const std::vector<TileArg>& args,
    const TileValue& value) const
{
    QString out = translated(text);
    for (const auto arg : args) {
        switch (arg) {
        case TileArg::Window:
            out = out.arg(windowText(m_in.figuresWindowMinutes));
            break;
        case TileArg::LongUnfinishedMinutes:
            out = out.arg(m_in.settings->longUnfinishedMinutes);
            break;
        case TileArg::Claims:
            out = out.arg(count(m_in.latest ? m_in.latest->stats.claims : 0));
            break;
        case TileArg::PercentOfClaims:
            out = out.arg(QLocale().toString(value.value.value_or(0), 'f', 1));
            break;
        case TileArg::ReconcileScope: {
            if (!m_in.latest) {
                out = out.arg(QString());
                break;
            }
            const auto& r = m_in.latest->reconcile;
            const int operations = static_cast<int>(r.operationsNotOk);
            const int probes = static_cast<int>(r.run);
            QString scope;
            if (operations == 1 || (operations == 0 && probes == 1))
                scope = visibleText(r.worst);
            else if (operations > 1)
                scope = QCoreApplication::translate("idem::console::DashboardModel", "%n operations", nullptr, operations);
            else
                scope = QCoreApplication::translate("idem::console::DashboardModel", "%n probes", nullptr, probes);
            out = out.arg(scope);
            break;
        }
        case TileArg::ReconcileMissing:
            out = out.arg(count(m_in.latest ? m_in.latest->reconcile.missing : 0));
            break;
        case TileArg::ReconcileDuplicated:
            out = out.arg(count(m_in.latest ? m_in.latest->reconcile.duplicated : 0));
            break;
        case TileArg::ReconcileSampled:
            out = out.arg(count(m_in.latest ? m_in.latest->reconcile.sampled : 0));
            break;
        case TileArg::EachFigure:
            // Each figure's count, "≥ n" when it is a lower bound (a no-break space: a tile's
            // detail line may wrap, never between "≥" and its number).
            for (const auto f : spec.figures) {
                const auto n = m_in.latest ? countOf(m_in.latest->stats, f) : 0;
                const bool lower
                    = m_in.latest && m_in.latest->stats.label(f).quality == idem::FigureQuality::LowerBound;
                out = out.arg(lower ? QStringLiteral("≥\u00a0") + count(n) : count(n));
            }
            break;
        }
    }
    return out;
}

TileValue TilePresenter::tile(Tile t) const
{
    TileValue v;
    const auto& spec = tileSpec(t);
    if (spec.unit == TileUnit::Latency) {
        // Its own read's figures, whatever the tick's: a static dashboard's come from its snapshot.
        v = latencyWorstTile(m_in.latency ? *m_in.latency : LatencyState {}, m_in.settings->thresholds[static_cast<std::size_t>(t)]);
        v.opensNothing = opensNothingText(t);
        return v;
    }
    if (!m_in.latest) {
        v.text = QStringLiteral("–");
        return v;
    }
    const auto& s = m_in.latest->stats;
    // A lower bound reads "≥ 10,000" with the exact figure of the last refresh, and its age,
    // on the line below; an exact figure of now needs no words.
    const auto bounded = [&](bool duration) {
        bool lower = false;
        bool haveExact = true;
        double exact = 0;
        std::optional<double> age;
        for (auto f : spec.figures) {
            const auto& l = s.label(f);
            if (l.quality != idem::FigureQuality::LowerBound)
                continue;
            lower = true;
            if (!l.exact) {
                haveExact = false;
                continue;
            }
            exact += *l.exact;
            age = age ? std::max(*age, l.exactAgeSeconds.value_or(0)) : l.exactAgeSeconds.value_or(0);
        }
        if (!lower)
            return;
        // Exact for the figures that were not capped, from this tick.
        if (haveExact && spec.figures.size() > 1)
            for (auto f : spec.figures)
                if (s.label(f).quality != idem::FigureQuality::LowerBound)
                    exact += double(countOf(s, f));
        v.text = QStringLiteral("≥ ") + v.text;
        if (haveExact && age)
            v.quality = QCoreApplication::translate("idem::console::DashboardModel", "exact %1 · %2 ago")
                            .arg(duration ? durationText(exact * 1000.0) : count(static_cast<qint64>(exact)),
                                // how old the figure is: "20 s", "11 min", "3 h"
                                durationText(std::max(0.0, *age) * 1000.0, idem::DurationForm::Largest));
        else
            v.quality = QCoreApplication::translate("idem::console::DashboardModel", "counted up to %1; exact count pending").arg(count(idem::boundedCountCap));
    };
    const auto none = [&] {
        v.text = QStringLiteral("–");
        v.detail = withArgs(spec, spec.noValue, spec.noValueArgs, v);
    };
    const auto detail = [&] { v.detail = withArgs(spec, spec.detail, spec.detailArgs, v); };
    switch (spec.unit) {
    case TileUnit::Rows: {
        std::int64_t n = 0;
        for (const auto f : spec.figures)
            n += countOf(s, f);
        v.value = static_cast<double>(n);
        v.text = count(n);
        detail();
        bounded(false);
        break;
    }
    case TileUnit::PerClaims: {
        // Events in the window: the count, coloured by its share of the window's claims.
        const auto n = countOf(s, spec.figures.front());
        v.value = perClaimsPercent(n, s.claims);
        v.text = count(n);
        detail();
        break;
    }
    case TileUnit::Percent:
        if (s.duplicateRatio) {
            v.value = *s.duplicateRatio * 100.0;
            v.text = QStringLiteral("%1 %").arg(QLocale().toString(*v.value, 'f', 1));
            detail();
        } else {
            none();
        }
        break;
    case TileUnit::Seconds:
        if (s.oldestProcessingAgeSeconds) {
            v.value = *s.oldestProcessingAgeSeconds;
            v.text = durationText(*v.value * 1000.0);
            detail();
            bounded(true);
        } else {
            none();
        }
        break;
    case TileUnit::Reconcile: {
        const auto& r = m_in.latest->reconcile;
        if (r.run == 0) {
            none();
            break;
        }
        v.value = static_cast<double>(r.notOk());
        v.text = count(r.notOk());
        detail();
        // Exact for the keys sampled, as of the runs: the oldest one's age, and the keys whose
        // query failed (they were not checked).
        if (r.oldestFinishedMs)
            v.quality = QCoreApplication::translate("idem::console::DashboardModel", "last runs up to %1 ago")
                            .arg(durationText(static_cast<double>(std::max<std::int64_t>(0, m_in.latest->serverNowMs - *r.oldestFinishedMs)),
                                idem::DurationForm::Largest));
        if (r.errors > 0) {
            const int unchecked = static_cast<int>(r.errors);
            const QString line
                = QCoreApplication::translate("idem::console::DashboardModel", "%n keys not checked (query failed)", nullptr, unchecked);
            v.quality += (v.quality.isEmpty() ? QString() : QStringLiteral(" · ")) + line;
        }
        break;
    }
    case TileUnit::Latency: // above
        break;
    case TileUnit::Estimate:
        if (const auto n = idem::countFigure(s, spec.figures.front())) {
            v.value = static_cast<double>(*n);
            v.text = QStringLiteral("≈ ") + count(*n);
            v.detail = totalRowsSourceText(s.label(spec.figures.front()).source);
        } else {
            none();
        }
        break;
    }
    v.level = v.value ? levelOf(v.value, m_in.settings->thresholds[static_cast<std::size_t>(t)]) : Level::Normal;
    v.opens = opensText(t);
    v.opensNothing = opensNothingText(t);
    return v;
}

QString TilePresenter::alertText(Tile t) const
{
    const TileValue v = tile(t);
    const auto& threshold = m_in.settings->thresholds[static_cast<std::size_t>(t)];
    const QString red = threshold.critical ? QLocale().toString(*threshold.critical) : QStringLiteral("–");
    if (tileSpec(t).perClaims() && v.value)
        return QCoreApplication::translate("idem::console::DashboardModel", "%1 %2 (%3 % of claims; red from %4 %)")
            .arg(tileTitle(t), v.text, QLocale().toString(*v.value, 'f', 1), red);
    const QString unit = tileSpec(t).perClaims() ? QString() : tileThresholdUnit(t);
    return QCoreApplication::translate("idem::console::DashboardModel", "%1 %2 (red from %3)").arg(tileTitle(t), v.text, red + unit);
}

QString TilePresenter::thresholdText(Tile tile) const
{
    const auto& t = m_in.settings->thresholds[static_cast<std::size_t>(tile)];
    if (!t.warning && !t.critical)
        return QCoreApplication::translate("idem::console::DashboardWidget", "No thresholds set.");
    const QString unit = tileThresholdUnit(tile);
    const auto v = [&](const std::optional<double>& x) {
        return x ? QString::number(*x) + unit : QCoreApplication::translate("idem::console::DashboardWidget", "off");
    };
    return QCoreApplication::translate("idem::console::DashboardWidget", "Amber from %1, red from %2.")
        .arg(v(t.warning), v(t.critical));
}

idem::TaskFilter TilePresenter::filterFor(Tile t) const
{
    idem::TaskFilter f;
    if (!m_in.settings->tenant.isEmpty())
        f.tenant = m_in.settings->tenant.toStdString();
    if (!m_in.settings->operation.isEmpty())
        f.operation = m_in.settings->operation.toStdString();
    if (const auto select = tileSpec(t).select)
        select(f, { m_in.figuresWindowMinutes, m_in.settings->longUnfinishedMinutes });
    return f;
}

QString TilePresenter::opensText(Tile t) const
{
    const auto& spec = tileSpec(t);
    return spec.opens ? withArgs(spec, spec.opens, spec.opensArgs, {}) : QString();
}

QString TilePresenter::opensNothingText(Tile t)
{
    const auto* why = tileSpec(t).opensNothing;
    return why ? translated(why) : QString();
}

std::optional<idem::TaskSort> TilePresenter::sortFor(Tile t) { return tileSpec(t).sort; }

QString TilePresenter::opensNothingLine(const QString& opensNothing)
{
    return opensNothing.isEmpty()
        ? QString()
        : QCoreApplication::translate("idem::console::TileWidget", "Click: opens nothing. %1").arg(opensNothing);
}

QString TilePresenter::toolTip(Tile tile, bool clickable, const QString& thresholdText, const QString& opens,
    const QString& opensNothing, const QString& more)
{
    QString tip = tileDefinition(tile);
    if (!thresholdText.isEmpty())
        tip += QStringLiteral("\n") + thresholdText;
    if (!more.isEmpty())
        tip += QStringLiteral("\n") + more;
    if (clickable && !opens.isEmpty())
        tip += QStringLiteral("\n") + QCoreApplication::translate("idem::console::TileWidget", "Click: opens %1.").arg(opens);
    else if (!clickable && !opensNothing.isEmpty())
        tip += QStringLiteral("\n") + opensNothingLine(opensNothing);
    return tip;
}

std::optional<double> TilePresenter::windowValue(Tile t, std::int64_t m) const
{
    // The figure of the window that ended with minute m, as statsSql() computes it from the same counters.
    const qint64 window = m_in.settings->windowMinutes;
    idem::CounterBucket sum;
    for (const auto& b : m_in.history->minutes()) {
        if (b.minuteEpoch <= m - window * 60 || b.minuteEpoch > m)
            continue;
        for (const auto& f : idem::outcomeFields())
            sum.*(f.field) += b.*(f.field);
    }
    const auto& spec = tileSpec(t);
    if (spec.unit == TileUnit::Percent)
        return sum.duplicateRatio() ? std::optional(*sum.duplicateRatio() * 100.0) : std::nullopt;
    if (spec.unit != TileUnit::PerClaims)
        return std::nullopt;
    const auto n = sum.count(spec.figures.front());
    return n ? std::optional(perClaimsPercent(*n, sum.acquired + sum.duplicates())) : std::nullopt;
}

OpenAlert TilePresenter::redSince(Tile t, const std::optional<OpenAlert>& known) const
{
    OpenAlert out = known.value_or(OpenAlert { t, {}, true, false });
    if (!m_in.latest)
        return out;
    const qint64 now = m_in.latest->serverNowMs;
    if (!out.since.isValid())
        out.since = QDateTime::fromMSecsSinceEpoch(now);
    const auto& threshold = m_in.settings->thresholds[static_cast<std::size_t>(t)];
    const auto red = [&](std::optional<double> v) { return v && levelOf(v, threshold) == Level::Critical; };
    const qint64 window = m_in.settings->windowMinutes;
    switch (tileSpec(t).series) {
    case RedSeries::Counters: {
        if (m_in.figuresWindowOwn || !m_in.historyFromMinute)
            return out;
        const qint64 newest = now / 60000 * 60;
        qint64 first = newest;
        bool earlier = true;
        for (qint64 m = newest; m - (window - 1) * 60 >= m_in.historyFromMinute; m -= 60) {
            if (!red(windowValue(t, m))) {
                earlier = false;
                break;
            }
            first = m;
        }
        return { t, QDateTime::fromMSecsSinceEpoch(first * 1000), earlier, true };
    }
    case RedSeries::LiveProcessing:
    case RedSeries::LiveExpired: {
        const auto& ring = m_in.history->live();
        if (ring.size() == 0)
            return out;
        const bool processing = tileSpec(t).series == RedSeries::LiveProcessing;
        const qint64 gapMs = std::max<qint64>(5000, 3LL * m_in.settings->intervalMs);
        qint64 first = now;
        bool seen = false;
        bool earlier = true; // unless a sample before the run is found
        for (int i = int(ring.size()) - 1; i >= 0; --i) {
            const auto& sample = ring.at(i);
            // A gap (the console could not read) ends what the samples can tell.
            if (seen && first - sample.ms > gapMs)
                break;
            if (!red(double(processing ? sample.processing : sample.expired))) {
                earlier = false;
                break;
            }
            first = sample.ms;
            seen = true;
        }
        return { t, QDateTime::fromMSecsSinceEpoch(first), earlier, false };
    }
    case RedSeries::Age: {
        // The oldest row crossed the red line when its age did.
        const auto& s = m_in.latest->stats;
        if (s.oldestProcessingAgeSeconds && threshold.critical && *s.oldestProcessingAgeSeconds >= *threshold.critical)
            return { t,
                QDateTime::fromMSecsSinceEpoch(now - qint64((*s.oldestProcessingAgeSeconds - *threshold.critical) * 1000.0)),
                false, false };
        return out;
    }
    case RedSeries::None:
        break;
    }
    return out;
}

} // namespace idem::console
