#include "views/fencingpanel.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <map>

#include "models/fencingwatch.h"
#include "views/theme.h"

namespace idem::console {

namespace {
    const QColor takeoverColour(0xc9, 0xa2, 0x27); // the charts' "retries" amber
    const QColor refusedColour(0xd9, 0x4c, 0x6a); // their "permanent" red
} // namespace

FencingPanel::FencingPanel(ConsoleSession* session, QWidget* parent)
    : QFrame(parent)
    , m_watch(session ? new FencingWatch(session, this) : nullptr)
{
    setObjectName(QStringLiteral("dashboardFencing"));
    setFrameShape(QFrame::StyledPanel);
    m_headline = new QLabel;
    m_headline->setObjectName(QStringLiteral("fencingHeadline"));
    m_headline->setTextFormat(Qt::PlainText);
    m_headline->setWordWrap(true);
    QFont bold = m_headline->font();
    bold.setBold(true);
    m_headline->setFont(bold);

    m_chart = new QChart;
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->setMargins(QMargins(2, 2, 2, 2));
    m_chart->legend()->hide();
    m_x = new QDateTimeAxis;
    m_x->setFormat(QStringLiteral("HH:mm"));
    m_x->setTickCount(5);
    m_y = new QValueAxis;
    m_y->setLabelFormat(QStringLiteral("%d"));
    m_y->setMin(0);
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    m_takeovers = new QLineSeries;
    m_takeovers->setObjectName(QStringLiteral("takeovers"));
    m_refused = new QLineSeries;
    m_refused->setObjectName(QStringLiteral("refused"));
    for (auto* s : { m_takeovers, m_refused }) {
        m_chart->addSeries(s);
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    m_view = new QChartView(m_chart);
    m_view->setObjectName(QStringLiteral("fencingChart"));
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumSize(260, 150);
    m_legend = new QLabel;
    m_legend->setObjectName(QStringLiteral("fencingLegend"));
    m_legend->setTextFormat(Qt::RichText);

    m_advice = new QLabel;
    m_advice->setObjectName(QStringLiteral("fencingAdvice"));
    m_advice->setTextFormat(Qt::PlainText); // operation names come from the database
    m_advice->setWordWrap(true);
    m_workers = new QLabel;
    m_workers->setObjectName(QStringLiteral("fencingWorkers"));
    m_workers->setTextFormat(Qt::PlainText); // worker names too
    m_workers->setWordWrap(true);
    theme::followTone(m_workers, theme::Tone::Muted);

    auto* chartColumn = new QVBoxLayout;
    chartColumn->setSpacing(2);
    chartColumn->addWidget(m_view, 1);
    chartColumn->addWidget(m_legend);
    auto* textColumn = new QVBoxLayout;
    textColumn->addWidget(m_advice);
    textColumn->addWidget(m_workers);
    textColumn->addStretch(1);
    auto* row = new QHBoxLayout;
    row->addLayout(chartColumn, 1);
    row->addLayout(textColumn, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    layout->addWidget(m_headline);
    layout->addLayout(row);
    applyTheme();
    hide();
    if (m_watch)
        connect(m_watch, &FencingWatch::changed, this, &FencingPanel::render);
}

void FencingPanel::render()
{
    const auto& r = m_watch->reading();
    if (!r || !fencingtext::worthShowing(*r)) {
        hide();
        return;
    }
    present(*r);
}

void FencingPanel::present(const idem::FencingReading& r)
{
    if (!fencingtext::worthShowing(r)) {
        hide();
        return;
    }
    m_headline->setText(fencingtext::headline(r));
    // Every minute of the window, zero where nothing was counted: a line that drops to zero says
    // the takeovers stopped.
    std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> byMinute;
    const std::int64_t now = r.asOfUs / 1000000 / 60 * 60;
    const std::int64_t from = now - std::int64_t(r.minutes - 1) * 60;
    for (auto m = from; m <= now; m += 60)
        byMinute[m] = { 0, 0 };
    for (const auto& m : r.perMinute)
        if (m.minute >= from && m.minute <= now)
            byMinute[m.minute] = { m.takeovers, m.refused };
    QList<QPointF> takeovers, refused;
    std::int64_t top = 1;
    for (const auto& [minute, n] : byMinute) {
        const double x = static_cast<double>(minute) * 1000.0;
        takeovers << QPointF(x, static_cast<double>(n.first));
        refused << QPointF(x, static_cast<double>(n.second));
        top = std::max({ top, n.first, n.second });
    }
    m_takeovers->replace(takeovers);
    m_refused->replace(refused);
    m_x->setRange(QDateTime::fromSecsSinceEpoch(from), QDateTime::fromSecsSinceEpoch(now));
    m_y->setRange(0, static_cast<double>(top + (top + 4) / 5));
    m_y->setTickCount(std::min<int>(static_cast<int>(top) + 1, 5) + 1);
    m_legend->setText(tr("<span style=\"color:%1\">━━</span> leases taken over per minute &nbsp; "
                         "<span style=\"color:%2\">━━</span> late calls refused per minute")
                          .arg(takeoverColour.name(), refusedColour.name()));

    QStringList advice;
    for (const auto& op : r.operations)
        if (op.leaseTooShort() || op.refused > 0 || op.takeovers > 0)
            advice << (op.leaseTooShort() ? QStringLiteral("⚠ ") : QString()) + fencingtext::advice(op);
    if (advice.isEmpty())
        advice << tr("Every measured attempt finished within its lease.");
    m_advice->setText(tr("Run time against the lease:") + QLatin1Char('\n') + advice.join(QLatin1Char('\n')));
    const auto workers = fencingtext::workers(r, 5);
    m_workers->setText(workers.isEmpty()
            ? QString()
            : tr("By worker (application name):") + QLatin1Char('\n') + workers.join(QLatin1Char('\n')));
    m_workers->setVisible(!workers.isEmpty());
    setVisible(true);
}

void FencingPanel::changeEvent(QEvent* event)
{
    QFrame::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange)
        applyTheme();
}

void FencingPanel::applyTheme()
{
    const auto chartTheme = theme::isDark() ? QChart::ChartThemeDark : QChart::ChartThemeLight;
    if (m_chart->theme() != chartTheme)
        m_chart->setTheme(chartTheme);
    m_chart->setBackgroundBrush(QApplication::palette().color(QPalette::Base));
    // The takeovers wide under the refusals: where both lines run together (each refusal follows
    // a takeover), the amber shows on either side of the red.
    QPen t(takeoverColour);
    t.setWidthF(5.0);
    m_takeovers->setPen(t);
    QPen f(refusedColour);
    f.setWidthF(2.0);
    m_refused->setPen(f);
}

} // namespace idem::console
