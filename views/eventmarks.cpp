#include "views/eventmarks.h"

#include <QApplication>
#include <QChart>
#include <QDate>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace idem::console {

namespace {
    // Groups: an event joins the group before it when its line is closer than this to that
    // group's last line; a group wider than maxGroupPx starts another (whose box then moves right
    // so that the boxes never overlap).
    constexpr double joinPx = EventMarks::boxMinWidth + 3;
    constexpr double maxGroupPx = 48;
    // Events listed in a tooltip; the rest are counted.
    constexpr std::size_t tooltipEvents = 8;
    constexpr int tooltipTextChars = 200;

    QFont boxFont()
    {
        QFont f = QApplication::font();
        f.setPointSizeF(std::max(6.5, f.pointSizeF() * 0.78));
        f.setBold(true);
        return f;
    }

    class MarkItem : public QGraphicsItem {
    public:
        MarkItem(QGraphicsItem* parent, const EventMarks::Mark& mark, const QRectF& plot)
            : QGraphicsItem(parent)
            , m_mark(mark)
            , m_bottom(plot.bottom())
        {
            // Easy to hover: the box and a few pixels either side of each line.
            m_shape.addRect(mark.box.adjusted(-1, -1, 1, 1));
            for (const double x : mark.lineX)
                m_shape.addRect(QRectF(x - 3, mark.box.bottom(), 6, m_bottom - mark.box.bottom()));
            m_shape.setFillRule(Qt::WindingFill);
            m_bounds = m_shape.boundingRect();
        }

        QRectF boundingRect() const override { return m_bounds; }
        QPainterPath shape() const override { return m_shape; }

        void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override
        {
            painter->save();
            painter->setRenderHint(QPainter::Antialiasing, false);
            double last = -1e9;
            for (std::size_t i = 0; i < m_mark.lineX.size(); ++i) {
                const double x = std::round(m_mark.lineX[i]) + 0.5;
                if (x == last)
                    continue; // one line per pixel column
                last = x;
                QColor c = eventKindStyle(m_mark.events[i].kind).colour;
                c.setAlpha(190);
                QPen pen(c, 1.0, Qt::DashLine);
                pen.setCosmetic(true);
                painter->setPen(pen);
                painter->drawLine(QPointF(x, m_mark.box.bottom()), QPointF(x, m_bottom));
            }
            painter->setRenderHint(QPainter::Antialiasing, true);
            painter->setPen(QPen(QColor(255, 255, 255, 200), 1.0));
            painter->setBrush(m_mark.colour);
            painter->drawRoundedRect(m_mark.box, 3, 3);
            painter->setFont(boxFont());
            painter->setPen(Qt::white);
            painter->drawText(m_mark.box, Qt::AlignCenter, m_mark.boxText);
            painter->restore();
        }

    private:
        EventMarks::Mark m_mark;
        double m_bottom;
        QPainterPath m_shape;
        QRectF m_bounds;
    };

    // The tooltip of a group: each event's headline and text, the first few of a large group.
    QStringList toolTipLines(const std::vector<ChartEvent>& events)
    {
        QStringList lines;
        if (events.size() > 1)
            lines << EventMarks::tr("%n event(s)", nullptr, int(events.size()));
        const QDate today = QDate::currentDate();
        for (std::size_t i = 0; i < events.size() && i < tooltipEvents; ++i) {
            const auto& e = events[i];
            const bool withDate = QDateTime::fromMSecsSinceEpoch(e.atMs).toLocalTime().date() != today;
            lines << eventHeadline(e, withDate);
            if (!e.text.isEmpty())
                lines << (e.text.size() > tooltipTextChars ? e.text.left(tooltipTextChars) + QStringLiteral("…")
                                                           : e.text);
        }
        if (events.size() > tooltipEvents)
            lines << EventMarks::tr("… and %n more", nullptr, int(events.size() - tooltipEvents));
        return lines;
    }

    QString toolTipHtml(const std::vector<ChartEvent>& events)
    {
        // Rich text, every value escaped: an annotation's "<b>" is shown, not obeyed.
        QString html = QStringLiteral("<div style='white-space:pre'>");
        const bool group = events.size() > 1;
        if (group)
            html += QStringLiteral("<b>%1</b><br>")
                        .arg(EventMarks::tr("%n event(s)", nullptr, int(events.size())).toHtmlEscaped());
        const QDate today = QDate::currentDate();
        for (std::size_t i = 0; i < events.size() && i < tooltipEvents; ++i) {
            const auto& e = events[i];
            const bool withDate = QDateTime::fromMSecsSinceEpoch(e.atMs).toLocalTime().date() != today;
            if (i > 0)
                html += QStringLiteral("<br>");
            html += QStringLiteral("<span style='color:%1'>■</span> <b>%2</b>")
                        .arg(eventKindStyle(e.kind).colour.name(), eventHeadline(e, withDate).toHtmlEscaped());
            if (!e.text.isEmpty())
                html += QStringLiteral("<br>")
                    + (e.text.size() > tooltipTextChars ? e.text.left(tooltipTextChars) + QStringLiteral("…") : e.text)
                          .toHtmlEscaped();
        }
        if (events.size() > tooltipEvents)
            html += QStringLiteral("<br><i>%1</i>")
                        .arg(EventMarks::tr("… and %n more", nullptr, int(events.size() - tooltipEvents))
                                 .toHtmlEscaped());
        return html + QStringLiteral("</div>");
    }
} // namespace

EventMarks::EventMarks(QChart* chart, QDateTimeAxis* x)
    : QGraphicsObject(chart)
    , m_chart(chart)
    , m_x(x)
{
    setObjectName(QStringLiteral("eventMarks"));
    // Over the series and the pause bands, under nothing a person reads through.
    setZValue(50);
    connect(chart, &QChart::plotAreaChanged, this, &EventMarks::relayout);
    connect(x, &QDateTimeAxis::rangeChanged, this, &EventMarks::relayout);
}

EventMarks::~EventMarks() = default;

void EventMarks::setEvents(std::vector<ChartEvent> events, qint64 fromMs)
{
    m_events = std::move(events);
    m_fromMs = fromMs;
    relayout();
}

void EventMarks::setFrom(qint64 fromMs)
{
    if (fromMs == m_fromMs)
        return;
    m_fromMs = fromMs;
    relayout();
}

QString EventMarks::legendText()
{
    QStringList letters;
    for (const auto& kind : knownEventKinds()) {
        const auto style = eventKindStyle(kind);
        letters << tr("%1 %2").arg(style.letter, style.label);
    }
    return tr("Marks at the top: events that explain a change (hover one for when, who and why): %1; a number: "
              "that many events close together.")
        .arg(letters.join(QStringLiteral(", ")));
}

QList<QGraphicsItem*> EventMarks::markItems() const { return QList<QGraphicsItem*>(m_items.begin(), m_items.end()); }

void EventMarks::relayout()
{
    for (auto* item : m_items)
        delete item;
    m_items.clear();
    m_marks.clear();
    if (!m_x || !scene())
        return;
    const QRectF plot = m_chart->plotArea();
    const qint64 minMs = m_x->min().toMSecsSinceEpoch();
    const qint64 maxMs = m_x->max().toMSecsSinceEpoch();
    if (plot.width() < 10 || plot.height() < boxHeight * 2 || maxMs <= minMs)
        return;
    const auto xOf = [&](qint64 ms) { return plot.left() + double(ms - minMs) / double(maxMs - minMs) * plot.width(); };

    // Group along the axis (the events come oldest first).
    for (const auto& e : m_events) {
        if (e.atMs < std::max(minMs, m_fromMs) || e.atMs > maxMs)
            continue;
        const double x = xOf(e.atMs);
        if (!m_marks.empty() && x - m_marks.back().lineX.back() < joinPx
            && x - m_marks.back().lineX.front() <= maxGroupPx) {
            m_marks.back().events.push_back(e);
            m_marks.back().lineX.push_back(x);
        } else {
            m_marks.push_back({ { e }, { x }, {}, {}, {}, {} });
        }
    }

    const QFontMetricsF metrics(boxFont());
    for (auto& m : m_marks) {
        const auto style = eventKindStyle(m.events.front().kind);
        const bool oneKind = std::all_of(
            m.events.begin(), m.events.end(), [&](const ChartEvent& e) { return e.kind == m.events.front().kind; });
        m.boxText = m.events.size() == 1 ? style.letter
            : m.events.size() > 99       ? QStringLiteral("99+")
                                         : QString::number(m.events.size());
        m.colour = oneKind ? style.colour : QColor(0x45, 0x5a, 0x64);
        const double width = std::max(boxMinWidth, std::ceil(metrics.horizontalAdvance(m.boxText)) + 6);
        const double centre = (m.lineX.front() + m.lineX.back()) / 2;
        m.box = QRectF(centre - width / 2, plot.top() + 1, width, boxHeight);
        m.toolTip = toolTipLines(m.events).join(QLatin1Char('\n'));
    }
    // Boxes side by side, never over each other, and inside the plot: left to right, then back.
    for (std::size_t i = 0; i < m_marks.size(); ++i) {
        auto& box = m_marks[i].box;
        const double least = i == 0 ? plot.left() : m_marks[i - 1].box.right() + 1;
        if (box.left() < least)
            box.moveLeft(least);
    }
    for (std::size_t i = m_marks.size(); i-- > 0;) {
        auto& box = m_marks[i].box;
        const double most = i + 1 == m_marks.size() ? plot.right() : m_marks[i + 1].box.left() - 1;
        if (box.right() > most)
            box.moveRight(most);
    }
    for (const auto& m : m_marks) {
        auto* item = new MarkItem(this, m, plot);
        item->setToolTip(toolTipHtml(m.events));
        m_items.push_back(item);
    }
}

} // namespace idem::console
