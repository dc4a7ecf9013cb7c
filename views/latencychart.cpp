#include "views/latencychart.h"

#include <QApplication>
#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QEvent>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/tones.h"
#include "views/theme.h"

namespace idem::console {

namespace {
    // The series' object names (tests and the colour table look them up) and legend names.
    const char* const ids[] = { "runP50", "runP95", "runP99", "ttsP50", "ttsP95", "ttsP99" };
    const char* const names[] = { QT_TRANSLATE_NOOP("idem::console::LatencyChart", "run p50"),
        QT_TRANSLATE_NOOP("idem::console::LatencyChart", "run p95"),
        QT_TRANSLATE_NOOP("idem::console::LatencyChart", "run p99"),
        QT_TRANSLATE_NOOP("idem::console::LatencyChart", "to success p50"),
        QT_TRANSLATE_NOOP("idem::console::LatencyChart", "to success p95"),
        QT_TRANSLATE_NOOP("idem::console::LatencyChart", "to success p99") };
    constexpr std::size_t seriesCount = std::size(ids);

    QString clock(qint64 ms) { return QDateTime::fromMSecsSinceEpoch(ms).toLocalTime().toString(QStringLiteral("HH:mm")); }
} // namespace

LatencyChart::LatencyChart(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("latencyChart"));
    m_chart = new QChart;
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    // Six entries do not fit a chart's legend at this width (Qt Charts elides them to "r…"): a
    // legend of two lines under the chart instead, one per kind, the percentiles by line style.
    m_chart->legend()->hide();
    m_x = new QDateTimeAxis;
    m_x->setFormat(QStringLiteral("HH:mm"));
    m_x->setTickCount(5);
    // Latency spans decades (a 5 ms call and its 30 s timeout): a log scale of seconds.
    m_y = new QLogValueAxis;
    m_y->setBase(10);
    m_y->setLabelFormat(QStringLiteral("%g s"));
    m_y->setMinorTickCount(8);
    m_y->setRange(0.000999, 10.01);
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    for (std::size_t i = 0; i < seriesCount; ++i) {
        auto* s = new QLineSeries;
        s->setObjectName(QLatin1String(ids[i]));
        m_chart->addSeries(s);
        s->attachAxis(m_x);
        s->attachAxis(m_y);
        m_series.push_back(s);
    }
    m_marks = new EventMarks(m_chart, m_x);
    m_view = new QChartView(m_chart);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumSize(260, 190);
    m_legend = new QLabel;
    m_legend->setObjectName(QStringLiteral("latencyLegend"));
    m_legend->setTextFormat(Qt::RichText);
    m_legend->setWordWrap(true);
    m_note = new QLabel;
    m_note->setObjectName(QStringLiteral("latencyNote"));
    m_note->setWordWrap(true);
    QFont small = m_note->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_note->setFont(small);
    m_legend->setFont(small);
    theme::followTone(m_note, theme::Tone::Muted);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_legend);
    layout->addWidget(m_note);
    retranslate();
    applyTheme();
}

LatencyChart::~LatencyChart() = default;

void LatencyChart::setTimeAxis(qint64 fromMs, qint64 toMs, int ticks, qint64 firstMinuteMs)
{
    m_x->setRange(QDateTime::fromMSecsSinceEpoch(fromMs), QDateTime::fromMSecsSinceEpoch(toMs));
    m_x->setTickCount(ticks);
    if (firstMinuteMs != m_firstMinuteMs) {
        m_firstMinuteMs = firstMinuteMs;
        redraw();
    }
}

void LatencyChart::setData(const LatencyWatch& watch, const QString& operation)
{
    m_run = watch.runPoints();
    m_tts = watch.timeToSuccessPoints();
    m_foldedToMs = watch.foldedToMs();
    m_operation = operation;
    m_snapshotWithout = false;
    m_error = watch.error();
    m_read = watch.reading().has_value();
    redraw();
    retranslate();
}

void LatencyChart::setSnapshot(const std::optional<LatencyReading>& reading, const QString& operation)
{
    m_run = reading ? reading->run : std::vector<LatencyPoint>();
    m_tts = reading ? reading->timeToSuccess : std::vector<LatencyPoint>();
    m_foldedToMs = reading ? reading->foldedToMs : 0;
    m_operation = operation;
    m_snapshotWithout = !reading;
    m_error.clear();
    m_read = reading.has_value();
    redraw();
    retranslate();
}

void LatencyChart::setPauseSpans(const std::vector<PauseSpan>& spans, qint64 fromMs, qint64 toMs)
{
    m_pauseSpans = spans;
    m_bandsFromMs = fromMs;
    m_bandsToMs = toMs;
    drawBands();
}

void LatencyChart::drawBands()
{
    // As ChartPanel's: translucent amber from the bottom of the (log) axis to its top.
    QColor fill(0xf0, 0xa0, 0x20);
    fill.setAlpha(tones::isDark() ? 70 : 55);
    std::vector<std::pair<double, double>> shapes;
    for (const auto& span : m_pauseSpans) {
        const qint64 a = std::max(span.fromMs, m_bandsFromMs), b = std::min(span.toMs, m_bandsToMs);
        if (b > a)
            shapes.push_back({ double(a), double(b) });
    }
    while (m_bands.size() > shapes.size()) {
        m_chart->removeSeries(m_bands.back());
        delete m_bands.back();
        m_bands.pop_back();
    }
    while (m_bands.size() < shapes.size()) {
        auto* band = new QAreaSeries(new QLineSeries, new QLineSeries);
        band->setObjectName(QStringLiteral("pausedBand"));
        band->setName(tr("intake paused"));
        m_chart->addSeries(band);
        band->attachAxis(m_x);
        band->attachAxis(m_y);
        m_bands.push_back(band);
    }
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        const auto [a, b] = shapes[i];
        m_bands[i]->upperSeries()->replace({ QPointF(a, m_y->max()), QPointF(b, m_y->max()) });
        m_bands[i]->lowerSeries()->replace({ QPointF(a, m_y->min()), QPointF(b, m_y->min()) });
        m_bands[i]->setBrush(fill);
        m_bands[i]->setPen(Qt::NoPen);
    }
}

void LatencyChart::redraw()
{
    double low = std::numeric_limits<double>::max(), high = 0;
    const auto fill = [&](std::size_t first, const std::vector<LatencyPoint>& points) {
        QList<QPointF> lines[3];
        for (const auto& p : points) {
            if (p.minuteMs < m_firstMinuteMs)
                continue; // before the other charts' first minute
            const double x = double(p.minuteMs);
            const double values[] = { p.p50, p.p95, p.p99 };
            for (int i = 0; i < 3; ++i) {
                const double seconds = values[i] / 1000.0;
                if (seconds <= 0)
                    continue; // nothing to place on a log scale (never from a duration slot)
                lines[i].append(QPointF(x, seconds));
                low = std::min(low, seconds);
                high = std::max(high, seconds);
            }
        }
        for (int i = 0; i < 3; ++i) {
            m_series[first + std::size_t(i)]->replace(lines[i]);
            // A single minute would not show as a line: its points do.
            m_series[first + std::size_t(i)]->setPointsVisible(lines[i].size() < 3);
        }
    };
    fill(0, m_run);
    fill(3, m_tts);
    if (high > 0) {
        // Whole decades around the values, at least two, so that the labels read 0.01 s, 0.1 s, 1 s.
        double bottom = std::pow(10.0, std::floor(std::log10(low)));
        double top = std::pow(10.0, std::ceil(std::log10(high)));
        if (top <= bottom * 10.0 * 1.0001)
            top = bottom * 100.0;
        // A hair wider: a label exactly at the range's end can fall out by rounding.
        m_y->setRange(bottom * 0.999, top * 1.001);
    } else {
        m_y->setRange(0.000999, 10.01);
    }
    drawBands(); // from the axis' new bottom to its new top
}

void LatencyChart::retranslate()
{
    m_title = m_operation.isEmpty() ? tr("Latency per minute, all operations")
                                    : tr("Latency per minute, %1").arg(m_operation);
    for (std::size_t i = 0; i < seriesCount; ++i)
        m_series[i]->setName(tr(names[i]));
    updateLegend();
    // On the chart, under its title: where the lines end. Under it, only what went wrong.
    QString onChart, problem;
    if (m_snapshotWithout)
        problem = tr("This snapshot carries no latency figures (taken before schema version 17, or by an older Idem).");
    else if (!m_read && !m_error.isEmpty())
        problem = tr("The latency figures could not be read: %1").arg(m_error);
    else if (!m_read)
        onChart = tr("reading…");
    else if (m_foldedToMs > 0)
        onChart = tr("last point %1–%2: the last folded minute").arg(clock(m_foldedToMs - 60000), clock(m_foldedToMs));
    if (m_read && !m_error.isEmpty())
        problem = tr("The last read failed: %1").arg(m_error);
    m_chart->setTitle(onChart.isEmpty()
            ? m_title.toHtmlEscaped()
            : m_title.toHtmlEscaped() + QStringLiteral("<br><small>") + onChart.toHtmlEscaped() + QStringLiteral("</small>"));
    m_noteText = problem.isEmpty() ? onChart : problem;
    m_note->setText(problem);
    m_note->setVisible(!problem.isEmpty());
    m_legend->setVisible(!m_snapshotWithout); // no lines to explain
    m_view->setToolTip(tr("p50, p95 and p99 of the run time of each attempt (claim to complete or fail) and of "
                          "the time to success of each key (first claim to complete, across retries), per "
                          "minute, by the server's clock; log scale. Only folded minutes are drawn: the current "
                          "minute is still counting, and a minute is folded once it has been closed for a "
                          "minute, so the lines end a minute or two before now.")
        + QLatin1Char('\n') + tr("An amber band: intake of this scope was paused (claims turned away).")
        + QLatin1Char('\n') + EventMarks::legendText());
}

void LatencyChart::applyTheme()
{
    // Qt Charts draws with its own theme, not the widget palette: follow light / dark by hand
    // (as ChartPanel does).
    const auto chartTheme = theme::isDark() ? QChart::ChartThemeDark : QChart::ChartThemeLight;
    if (m_chart->theme() != chartTheme)
        m_chart->setTheme(chartTheme);
    m_chart->setBackgroundBrush(QApplication::palette().color(QPalette::Base));
    // The decades' in-between lines faint and solid: dashed ones would read as the p95 lines.
    QColor minor = m_y->gridLineColor();
    minor.setAlpha(70);
    m_y->setMinorGridLinePen(QPen(minor, 0.6, Qt::SolidLine));
    const Qt::PenStyle styles[] = { Qt::SolidLine, Qt::DashLine, Qt::DotLine };
    for (std::size_t i = 0; i < seriesCount; ++i) {
        QPen pen(tones::series(m_series[i]->objectName().toLower()));
        pen.setWidthF(i % 3 == 1 ? 1.8 : 2.2); // the dotted p99 as heavy as the solid p50, or it fades
        pen.setStyle(styles[i % 3]);
        m_series[i]->setPen(pen);
    }
    updateLegend();
    drawBands(); // setTheme() recolours them
}

void LatencyChart::updateLegend()
{
    // The line styles drawn as text: ── solid (p50), ╌╌ dashed (p95), ┈┈ dotted (p99).
    const char* const strokes[] = { "\u2501\u2501", "\u254d\u254d", "\u2505\u2505" };
    const QString kinds[] = { tr("run time"), tr("time to success") };
    QStringList lines;
    for (std::size_t k = 0; k < 2; ++k) {
        QString line = QStringLiteral("%1:").arg(kinds[k].toHtmlEscaped().replace(QLatin1Char(' '), QStringLiteral("&nbsp;")));
        for (std::size_t i = 0; i < 3; ++i) {
            const QColor c = m_series[k * 3 + i]->pen().color();
            line += QStringLiteral("&nbsp;&nbsp;<span style=\"color:%1\"><b>%2</b></span>&nbsp;p%3")
                        .arg(c.name(), QString::fromUtf8(strokes[i]), QLatin1String(i == 0 ? "50" : i == 1 ? "95" : "99"));
        }
        lines << line;
    }
    // One line per kind, never broken inside (Chinese would break between any two characters).
    for (auto& line : lines)
        line = QStringLiteral("<span style=\"white-space:nowrap\">") + line + QStringLiteral("</span>");
    m_legend->setText(lines.join(QStringLiteral("<br>")));
}

bool LatencyChart::event(QEvent* event)
{
    const auto type = event->type();
    const bool result = QWidget::event(event);
    if (type == QEvent::ApplicationPaletteChange || type == QEvent::PaletteChange)
        applyTheme();
    if (type == QEvent::LanguageChange)
        retranslate();
    return result;
}

QXYSeries* LatencyChart::series(const QString& objectName) const
{
    for (auto* s : m_series)
        if (s->objectName() == objectName)
            return s;
    return nullptr;
}

QString LatencyChart::noteText() const { return m_noteText; }

} // namespace idem::console
