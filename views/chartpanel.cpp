#include "views/chartpanel.h"

#include <QApplication>
#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QBuffer>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QBoxLayout>
#include <QImage>
#include <QLabel>
#include <QLocale>
#include <QLineSeries>
#include <QPainter>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/dashboardmodel.h"
#include "operations/outcomeseries.h"
#include "models/snapshotexport.h"
#include "models/snapshotopener.h"
#include "views/latencychart.h"
#include "views/theme.h"
#include "models/tones.h"
#include <QLegendMarker>
#include <QLegend>

namespace idem::console {

namespace {
    enum ChartIndex { LiveChart, OutcomesChart, RatioChart, FailuresChart, CostChart };

    // The console's per-minute charts, in the order of m_charts: the series come from the one table.
    const std::pair<ChartIndex, idem::OutcomeChart> outcomeCharts[]
        = { { OutcomesChart, idem::OutcomeChart::Claims }, { FailuresChart, idem::OutcomeChart::Failures } };
} // namespace

ChartPanel::ChartPanel(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("chartPanel"));
    m_charts.push_back(makeChart(QT_TR_NOOP("Processing vs expired leases"),
        { QStringLiteral(QT_TR_NOOP("processing")), QStringLiteral(QT_TR_NOOP("expired")) }, QStringLiteral("rows")));
    m_charts.push_back(makeOutcomeChart(idem::OutcomeChart::Claims));
    m_charts.push_back(makeChart(
        QT_TR_NOOP("Duplicate ratio per minute"), { QStringLiteral(QT_TR_NOOP("duplicate ratio")) }, QStringLiteral("%")));
    m_charts.push_back(makeOutcomeChart(idem::OutcomeChart::Failures));
    m_charts.push_back(
        makeChart(QT_TR_NOOP("Console load: ms per tick"), { QStringLiteral(QT_TR_NOOP("tick ms")) }, QStringLiteral("ms")));

    m_histogram = new QChart;
    m_histogram->setTitle(QString()); // retranslate()
    m_histogram->setAnimationOptions(QChart::NoAnimation);
    m_histogram->legend()->hide();
    m_histogram->setMargins(QMargins(4, 4, 4, 4));
    m_attempts = new QBarSet(QString());
    m_attempts->setObjectName(QStringLiteral("attempts"));
    auto* bars = new QBarSeries;
    bars->append(m_attempts);
    m_histogram->addSeries(bars);
    m_attemptsAxis = new QBarCategoryAxis;
    QStringList categories;
    for (int i = 1; i < idem::attemptsHistogramTopBin; ++i)
        categories << QString::number(i);
    categories << QStringLiteral("%1+").arg(idem::attemptsHistogramTopBin);
    m_attemptsAxis->append(categories);
    QFont small = m_attemptsAxis->labelsFont();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    m_attemptsAxis->setLabelsFont(small);
    // Narrow bins would elide "10+" to "1…": the labels are short enough to stand whole.
    m_attemptsAxis->setTruncateLabels(false);
    m_attemptsY = new QValueAxis;
    m_attemptsY->setLabelFormat(QStringLiteral("%d"));
    m_histogram->addAxis(m_attemptsAxis, Qt::AlignBottom);
    m_histogram->addAxis(m_attemptsY, Qt::AlignLeft);
    bars->attachAxis(m_attemptsAxis);
    bars->attachAxis(m_attemptsY);
    m_histogramView = new QChartView(m_histogram);
    m_histogramView->setRenderHint(QPainter::Antialiasing);
    m_histogramView->setMinimumSize(260, 190);

    // Two rows: the three charts of claims above; below, failures, the attempts histogram and the
    // console's load, narrower (a bar chart and one line need less room), and latency (issue
    // #27), the widest: six lines on a log scale over the same time axis.
    auto* rows = new QVBoxLayout(this);
    rows->setContentsMargins(0, 0, 0, 0);
    rows->setSpacing(4);
    auto* top = new QHBoxLayout;
    top->setSpacing(4);
    top->addWidget(m_charts[LiveChart].view, 1);
    top->addWidget(m_charts[OutcomesChart].view, 1);
    top->addWidget(m_charts[RatioChart].view, 1);
    auto* bottom = new QHBoxLayout;
    bottom->setSpacing(4);
    m_latency = new LatencyChart;
    bottom->addWidget(m_charts[FailuresChart].view, 8);
    bottom->addWidget(m_histogramView, 8); // narrower, the "10+" label would be dropped
    bottom->addWidget(m_charts[CostChart].view, 6);
    bottom->addWidget(m_latency, 10);
    rows->addLayout(top, 1);
    rows->addLayout(bottom, 1);
    // Issue 40: marks a bound left out are always said, never silently missing.
    m_omittedLabel = new QLabel;
    m_omittedLabel->setObjectName(QStringLiteral("eventsOmitted"));
    m_omittedLabel->setWordWrap(true);
    m_omittedLabel->hide();
    rows->addWidget(m_omittedLabel);
    retranslate();
    applyTheme();
}

void ChartPanel::retranslate()
{
    for (auto& c : m_charts) {
        c.chart->setTitle(tr(c.title));
        for (std::size_t i = 0; i < c.series.size(); ++i) {
            const QString name = tr(c.names.at(int(i)).toUtf8().constData());
            c.series[i]->setName(name);
            for (auto* piece : c.older[i])
                piece->setName(name);
        }
    }
    // The newest minute is still counting: drawn as a full one it would drop every line at the
    // right edge. It is left out until it closes, and the charts say so.
    for (const auto index : { OutcomesChart, RatioChart, FailuresChart })
        m_charts[std::size_t(index)].view->setToolTip(
            tr("Complete minutes only: the current minute is still counting and is drawn once it is over."));
    m_charts[LiveChart].view->setToolTip(tr("One point per tick; a gap is a time the console could not read."));
    m_charts[CostChart].view->setToolTip(m_charts[LiveChart].view->toolTip());
    // The paused periods' band is on every time axis: each tooltip says what it is.
    for (auto& c : m_charts) {
        c.view->setToolTip(c.view->toolTip() + QLatin1Char('\n')
            + tr("An amber band: intake of this scope was paused (claims turned away).") + QLatin1Char('\n')
            + EventMarks::legendText());
        for (auto* band : c.bands)
            band->setName(tr("intake paused"));
    }
    m_histogram->setTitle(tr("Attempts among unfinished rows"));
    m_attempts->setLabel(tr("rows"));
    setEventsOmitted(m_eventsOmitted, m_eventsUncounted);
}

void ChartPanel::setEventsOmitted(qint64 omitted, bool uncounted)
{
    m_eventsOmitted = omitted;
    m_eventsUncounted = uncounted;
    if (uncounted)
        m_omittedLabel->setText(tr("More events in this window are not marked: the list is full and this server"
                                   " (before schema v24) does not count the rest. Narrow the window to see them."));
    else if (omitted > 0)
        m_omittedLabel->setText(tr("%n more event(s) in this window not marked: each kind (operators' actions,"
                                   " deploys, failovers) marks its newest %1. Narrow the window to see them.",
            nullptr, int(std::min<qint64>(omitted, std::numeric_limits<int>::max())))
                                    .arg(QLocale().toString(EventWatch::maxEvents)));
    m_omittedLabel->setVisible(uncounted || omitted > 0);
}

void ChartPanel::applyTheme()
{
    // Qt Charts draws with its own theme, not the widget palette: follow light / dark by hand.
    const bool dark = theme::isDark();
    const auto chartTheme = dark ? QChart::ChartThemeDark : QChart::ChartThemeLight;
    QList<QChart*> charts;
    for (const auto& c : m_charts)
        charts << c.chart;
    charts << m_histogram;
    const QColor background = QApplication::palette().color(QPalette::Base);
    for (QChart* chart : charts) {
        // setTheme() resets series colours and fonts: only when light / dark actually changed.
        if (chart->theme() != chartTheme)
            chart->setTheme(chartTheme);
        chart->setBackgroundBrush(background);
    }
    // One colour per meaning in both themes (the chart theme would pick its own per position).
    for (const auto& c : m_charts) {
        for (auto* s : c.series)
            s->setColor(tones::series(s->objectName()));
        for (const auto& pieces : c.older)
            for (auto* s : pieces)
                s->setColor(tones::series(s->objectName()));
    }
    m_attempts->setColor(tones::series(QStringLiteral("attempts")));
    m_attempts->setBorderColor(tones::series(QStringLiteral("attempts")));
    drawBands(); // setTheme() recolours them too
}

bool ChartPanel::event(QEvent* event)
{
    const auto type = event->type();
    const bool result = QWidget::event(event);
    if (type == QEvent::ApplicationPaletteChange || type == QEvent::PaletteChange)
        applyTheme();
    if (type == QEvent::LanguageChange)
        retranslate();
    return result;
}

ChartPanel::~ChartPanel() = default;

ChartPanel::Chart ChartPanel::makeOutcomeChart(idem::OutcomeChart which)
{
    QStringList names, ids;
    for (const auto* s : idem::outcomeSeries(which, idem::InConsole)) {
        names << QString::fromLatin1(s->label);
        ids << QString::fromLatin1(s->id);
    }
    return makeChart(idem::outcomeChartTitle(which), names, QStringLiteral("events"), ids);
}

ChartPanel::Chart ChartPanel::makeChart(
    const char* title, const QStringList& names, const QString& unit, const QStringList& ids)
{
    Chart c;
    c.chart = new QChart;
    c.title = title;
    c.names = names;
    c.older.resize(std::size_t(names.size()));
    // Animations replay on every bulk replace: off (they would also cost a tick's worth of CPU).
    c.chart->setAnimationOptions(QChart::NoAnimation);
    c.chart->setMargins(QMargins(4, 4, 4, 4));
    c.chart->legend()->setAlignment(Qt::AlignBottom);
    c.x = new QDateTimeAxis;
    c.x->setFormat(QStringLiteral("HH:mm"));
    c.x->setTickCount(5);
    c.y = new QValueAxis;
    c.y->setLabelFormat(unit == QStringLiteral("%") ? QStringLiteral("%.0f %%") : QStringLiteral("%.0f"));
    c.y->setRange(0, 1);
    c.chart->addAxis(c.x, Qt::AlignBottom);
    c.chart->addAxis(c.y, Qt::AlignLeft);
    for (const auto& name : names) {
        auto* s = new QLineSeries;
        // `names` are the English sources (QT_TR_NOOP): the legend translates, the object name
        // (what tests and the benchmark look series up by) does not.
        QString id = ids.isEmpty() ? name : ids.at(int(c.series.size()));
        id.replace(QLatin1Char(' '), QString());
        s->setObjectName(id);
        c.chart->addSeries(s);
        s->attachAxis(c.x);
        s->attachAxis(c.y);
        c.series.push_back(s);
    }
    if (names.size() == 1)
        c.chart->legend()->hide();
    c.marks = new EventMarks(c.chart, c.x);
    c.view = new QChartView(c.chart);
    c.view->setRenderHint(QPainter::Antialiasing);
    c.view->setMinimumSize(260, 190);
    return c;
}

RoundTimeAxis roundTimeAxis(qint64 fromMs, qint64 toMs)
{
    // QDateTimeAxis spaces its ticks evenly from the range's start to its end: a range that
    // starts and ends on a multiple of a round step puts every tick on a round time (22:00,
    // 22:05, 22:10) instead of wherever the window happened to begin. The range grows by less
    // than a step at each end; 3 to 7 ticks. Steps of whole days (the Storage page's weeks)
    // fall on local midnights.
    constexpr qint64 minute = 60000;
    const qint64 span = std::max<qint64>(minute, toMs - fromMs);
    qint64 step = minute;
    for (const qint64 m : { 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2 * 1440, 7 * 1440, 14 * 1440,
             28 * 1440, 56 * 1440, 91 * 1440, 182 * 1440, 364 * 1440 }) {
        step = m * minute;
        if (span / step <= 5)
            break;
    }
    RoundTimeAxis out;
    out.stepMs = step;
    // Whole steps of local time (a time zone a half hour off UTC still gets :00 and :30).
    const qint64 offset = qint64(QDateTime::fromMSecsSinceEpoch(toMs).offsetFromUtc()) * 1000;
    const auto floorTo = [&](qint64 t) { return (t + offset) / step * step - offset; };
    out.fromMs = floorTo(fromMs);
    out.toMs = floorTo(toMs);
    if (out.toMs < toMs)
        out.toMs += step;
    out.ticks = int((out.toMs - out.fromMs) / step) + 1;
    return out;
}

namespace {
    // A range of four whole, round steps (1, 2, 5 times a power of ten) above `top`, so the five
    // labels read 0, 5, 10, 15, 20 rather than 0, 1, 1, 2, 2.
    void niceRange(QValueAxis* axis, double top)
    {
        const double raw = std::max(1.0, top * 1.1) / 4.0;
        const double magnitude = std::pow(10.0, std::floor(std::log10(std::max(1.0, raw))));
        double step = magnitude;
        for (const double m : { 1.0, 2.0, 5.0, 10.0 }) {
            step = m * magnitude;
            if (step >= raw)
                break;
        }
        axis->setRange(0, 4 * step);
        axis->setTickCount(5);
    }
} // namespace

void ChartPanel::fitY(Chart& c, double floorMax)
{
    double top = floorMax;
    for (auto* s : c.series) {
        const auto points = s->points();
        for (const auto& p : points)
            top = std::max(top, p.y());
    }
    niceRange(c.y, top);
}

void ChartPanel::update(const DashboardModel& model)
{
    draw({ model.settings().windowMinutes, model.settings().intervalMs, model.latest() ? &*model.latest() : nullptr,
        model.history().live(), model.history().minutes(), model.attempts() ? &*model.attempts() : nullptr });
}

void ChartPanel::draw(const ChartInput& in)
{
    const idem::DashboardReading* latest = in.latest;
    const auto& ring = in.live;
    const qint64 windowMs = qint64(in.windowMinutes) * 60000;
    const qint64 now = latest ? latest->serverNowMs
        : ring.empty()        ? QDateTime::currentMSecsSinceEpoch()
                              : ring.back().ms;
    const qint64 from = now - windowMs;
    m_fromMs = from;
    m_nowMs = now;
    const auto axis = roundTimeAxis(from, now);
    for (auto& c : m_charts) {
        c.marks->setFrom(from);
        c.x->setRange(QDateTime::fromMSecsSinceEpoch(axis.fromMs), QDateTime::fromMSecsSinceEpoch(axis.toMs));
        c.x->setTickCount(axis.ticks);
    }
    m_latency->marks()->setFrom(from);

    Chart& live = m_charts[LiveChart];
    const int pixels = std::max(50, int(live.chart->plotArea().width()));
    // Samples further apart than a few ticks are an outage (or a pause): the line breaks there
    // rather than run straight across the time nobody read.
    const qint64 gapMs = std::max<qint64>(5000, 3LL * in.intervalMs);
    std::vector<std::pair<qint64, qint64>> spans; // [first, last] sample time of each piece
    for (int i = 0; i < ring.size(); ++i) {
        const qint64 t = ring.at(i).ms;
        if (t < from || t > now)
            continue;
        if (spans.empty() || t - spans.back().second > gapMs)
            spans.push_back({ t, t });
        else
            spans.back().second = t;
    }
    const auto livePieces = [&](qint64 LiveSample::*field) {
        std::vector<QList<QPointF>> out;
        for (const auto& [a, b] : spans) {
            const int px = std::max<int>(1, int(double(pixels) * double(b - a) / double(std::max<qint64>(1, now - from))));
            out.push_back(m_downsample && b > a ? downsampleMinMax(ring, field, a, b, px) : allPoints(ring, field, a, b));
        }
        return out;
    };
    setPieces(live, 0, livePieces(&LiveSample::processing));
    setPieces(live, 1, livePieces(&LiveSample::expired));
    fitY(live, 1);
    Chart& cost = m_charts[CostChart];
    setPieces(cost, 0, livePieces(&LiveSample::tickMs));
    fitY(cost, 1);
    // Right after start a line of one or two samples would not show at all: mark them.
    for (auto* s : live.series)
        s->setPointsVisible(s->count() < 30);
    cost.series[0]->setPointsVisible(cost.series[0]->count() < 30);

    // One point per complete minute of the window, zero where nothing was counted; the current
    // minute is left out until it closes (see the charts' tooltip).
    const qint64 firstMinute = (from / 60000 + 1) * 60;
    m_latency->setTimeAxis(axis.fromMs, axis.toMs, axis.ticks, firstMinute * 1000);
    qint64 lastMinute = now / 60000 * 60 - 60;
    // A standby knows the counters only up to what it has replayed: the minutes after its replay
    // point are unknown, not quiet, so the per-minute lines end there instead of falling to zero.
    if (latest && latest->stats.inRecovery && latest->stats.replicationLagSeconds)
        lastMinute = std::min(
            lastMinute, (now - qint64(*latest->stats.replicationLagSeconds * 1000.0)) / 60000 * 60 - 60);
    const auto& minutes = in.minutes;
    auto it = std::lower_bound(minutes.begin(), minutes.end(), firstMinute,
        [](const idem::CounterBucket& b, qint64 m) { return b.minuteEpoch < m; });
    std::vector<std::vector<const idem::OutcomeSeries*>> table;
    std::vector<std::vector<QList<QPointF>>> points;
    for (const auto& [index, which] : outcomeCharts) {
        table.push_back(idem::outcomeSeries(which, idem::InConsole));
        points.emplace_back(table.back().size());
    }
    QList<QPointF> ratio;
    for (qint64 m = firstMinute; m <= lastMinute; m += 60) {
        idem::CounterBucket b;
        b.minuteEpoch = m;
        if (it != minutes.end() && it->minuteEpoch == m)
            b = *it++;
        const double x = double(m) * 1000.0;
        for (std::size_t c = 0; c < table.size(); ++c)
            for (std::size_t i = 0; i < table[c].size(); ++i)
                points[c][i].append(QPointF(x, double(idem::seriesValue(*table[c][i], b))));
        if (const auto r = b.duplicateRatio())
            ratio.append(QPointF(x, *r * 100.0));
    }
    for (std::size_t c = 0; c < table.size(); ++c) {
        Chart& chart = m_charts[std::size_t(outcomeCharts[c].first)];
        for (std::size_t i = 0; i < points[c].size(); ++i)
            chart.series[i]->replace(points[c][i]);
    }
    m_charts[RatioChart].series[0]->replace(ratio);
    // A line needs two points: the first complete minute with claims is drawn as a dot.
    m_charts[RatioChart].series[0]->setPointsVisible(ratio.size() == 1);
    fitY(m_charts[OutcomesChart], 1);
    fitY(m_charts[FailuresChart], 1);
    m_charts[RatioChart].y->setRange(0, 100);

    if (const auto* bins = in.attempts) {
        QList<qreal> values(idem::attemptsHistogramTopBin, 0);
        qint64 top = 1;
        for (const auto& bin : *bins) {
            const int i = std::clamp(bin.attempts, 1, idem::attemptsHistogramTopBin) - 1;
            values[i] += double(bin.rows);
            top = std::max<qint64>(top, qint64(values[i]));
        }
        m_attempts->remove(0, m_attempts->count());
        m_attempts->append(values);
        niceRange(m_attemptsY, double(top));
    }
    drawBands();
}

void ChartPanel::setPauseSpans(std::vector<PauseSpan> spans)
{
    std::sort(spans.begin(), spans.end(), [](const PauseSpan& a, const PauseSpan& b) { return a.fromMs < b.fromMs; });
    std::vector<PauseSpan> merged;
    for (const auto& s : spans) {
        if (s.toMs <= s.fromMs)
            continue;
        if (!merged.empty() && s.fromMs <= merged.back().toMs)
            merged.back().toMs = std::max(merged.back().toMs, s.toMs);
        else
            merged.push_back(s);
    }
    if (merged == m_pauseSpans)
        return;
    m_pauseSpans = std::move(merged);
    drawBands();
}

void ChartPanel::drawBands()
{
    // Translucent amber over the lines: what the workers were told to stop shows through, and
    // it reads as the same band on the light and the dark chart theme.
    QColor fill(0xf0, 0xa0, 0x20);
    fill.setAlpha(tones::isDark() ? 70 : 55);
    for (auto& c : m_charts) {
        std::vector<QList<QPointF>> shapes;
        const double top = c.y->max();
        for (const auto& span : m_pauseSpans) {
            const qint64 a = std::max(span.fromMs, m_fromMs), b = std::min(span.toMs, m_nowMs);
            if (b <= a)
                continue;
            shapes.push_back({ QPointF(double(a), top), QPointF(double(b), top) });
        }
        while (c.bands.size() > shapes.size()) {
            c.chart->removeSeries(c.bands.back());
            delete c.bands.back();
            c.bands.pop_back();
        }
        while (c.bands.size() < shapes.size()) {
            auto* band = new QAreaSeries(new QLineSeries, new QLineSeries);
            band->setObjectName(QStringLiteral("pausedBand"));
            band->setName(tr("intake paused"));
            c.chart->addSeries(band);
            band->attachAxis(c.x);
            band->attachAxis(c.y);
            for (auto* marker : c.chart->legend()->markers(band))
                marker->setVisible(false);
            c.bands.push_back(band);
        }
        for (std::size_t i = 0; i < shapes.size(); ++i) {
            auto* band = c.bands[i];
            band->upperSeries()->replace(shapes[i]);
            band->lowerSeries()->replace(
                { QPointF(shapes[i].front().x(), 0.0), QPointF(shapes[i].back().x(), 0.0) });
            band->setBrush(fill);
            band->setPen(Qt::NoPen);
        }
    }
    m_latency->setPauseSpans(m_pauseSpans, m_fromMs, m_nowMs);
}

QList<QAreaSeries*> ChartPanel::pauseBands() const
{
    QList<QAreaSeries*> out;
    for (const auto& c : m_charts)
        for (auto* b : c.bands)
            out << b;
    return out + m_latency->pauseBands();
}

void ChartPanel::setEvents(std::vector<ChartEvent> events)
{
    m_events = std::move(events);
    for (auto& c : m_charts)
        c.marks->setEvents(m_events, m_fromMs);
    m_latency->marks()->setEvents(m_events, m_fromMs);
}

QList<EventMarks*> ChartPanel::eventMarks() const
{
    QList<EventMarks*> out;
    for (const auto& c : m_charts)
        out << c.marks;
    return out << m_latency->marks();
}

void ChartPanel::setPieces(Chart& c, std::size_t index, const std::vector<QList<QPointF>>& pieces)
{
    QLineSeries* newest = c.series[index];
    newest->replace(pieces.empty() ? QList<QPointF>() : pieces.back());
    auto& older = c.older[index];
    const std::size_t wanted = pieces.empty() ? 0 : pieces.size() - 1;
    while (older.size() > wanted) {
        c.chart->removeSeries(older.back());
        delete older.back();
        older.pop_back();
    }
    while (older.size() < wanted) {
        auto* s = new QLineSeries;
        s->setObjectName(newest->objectName());
        s->setName(newest->name());
        c.chart->addSeries(s);
        s->attachAxis(c.x);
        s->attachAxis(c.y);
        s->setPen(newest->pen());
        s->setColor(tones::series(s->objectName()));
        for (auto* marker : c.chart->legend()->markers(s))
            marker->setVisible(false);
        older.push_back(s);
    }
    for (std::size_t i = 0; i < wanted; ++i)
        older[i]->replace(pieces[i]);
}

QList<QXYSeries*> ChartPanel::lineSeries() const
{
    QList<QXYSeries*> out;
    for (const auto& c : m_charts) {
        for (auto* s : c.series)
            out << s;
        for (const auto& pieces : c.older)
            for (auto* s : pieces)
                out << s;
    }
    return out;
}

QXYSeries* ChartPanel::series(const QString& objectName) const
{
    for (const auto& c : m_charts)
        for (auto* s : c.series)
            if (s->objectName() == objectName)
                return s;
    return nullptr;
}

QStringList ChartPanel::attemptsCategories() const { return m_attemptsAxis->categories(); }

namespace {
    QByteArray renderChart(QChart* chart, QSize size, qreal dpr)
    {
        QImage image(size * dpr, QImage::Format_ARGB32_Premultiplied);
        image.setDevicePixelRatio(dpr);
        image.fill(Qt::white);
        const QSizeF shown = chart->size();
        // Laid out at the picture's size now, not when the (perhaps hidden) view next resizes.
        chart->resize(size);
        if (chart->layout())
            chart->layout()->activate();
        {
            QPainter painter(&image);
            painter.setRenderHint(QPainter::Antialiasing);
            chart->scene()->render(&painter, QRectF(QPointF(0, 0), size), QRectF(chart->pos(), QSizeF(size)));
        }
        chart->resize(shown);
        if (chart->layout())
            chart->layout()->activate();
        // What the picture shows, readable without looking at it (and by the tests).
        image.setText(QStringLiteral("Title"), chart->title());
        for (auto* axis : chart->axes(Qt::Horizontal))
            if (auto* time = qobject_cast<QDateTimeAxis*>(axis)) {
                image.setText(QStringLiteral("Idem-Time-From"), time->min().toUTC().toString(Qt::ISODate));
                image.setText(QStringLiteral("Idem-Time-To"), time->max().toUTC().toString(Qt::ISODate));
            }
        QByteArray png;
        QBuffer buffer(&png);
        buffer.open(QIODevice::WriteOnly);
        image.save(&buffer, "PNG");
        return png;
    }
} // namespace

std::vector<ChartImage> ChartPanel::renderImages(QSize size, qreal devicePixelRatio) const
{
    // File stems in display order (charts/<name>.png in the bundle).
    static const char* const names[]
        = { "processing", "claim-outcomes", "duplicate-ratio", "failures", "console-load" };
    std::vector<ChartImage> out;
    for (std::size_t i = 0; i < m_charts.size() && i < std::size(names); ++i) {
        QChart* chart = m_charts[i].chart;
        out.push_back({ QString::fromLatin1(names[i]), chart->title(), renderChart(chart, size, devicePixelRatio) });
    }
    out.push_back(
        { QStringLiteral("attempts"), m_histogram->title(), renderChart(m_histogram, size, devicePixelRatio) });
    return out;
}

std::vector<ChartImage> ChartPanel::snapshotImages(const DashboardModel& live, const idem::SnapshotData& snapshot)
{
    const idem::DashboardReading reading = snapshotReading(snapshot);
    const std::deque<idem::CounterBucket> minutes(reading.buckets.begin(), reading.buckets.end());
    const auto& attempts = live.attempts();
    ChartPanel panel;
    panel.draw({ snapshotDashboardSettings(snapshot).windowMinutes, live.settings().intervalMs, &reading,
        live.history().live(), minutes, attempts ? &*attempts : nullptr });
    panel.setEvents(snapshotEvents(snapshot));
    return panel.renderImages();
}

} // namespace idem::console
