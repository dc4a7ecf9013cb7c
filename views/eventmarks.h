#pragma once

#include <QColor>
#include <QDateTimeAxis>
#include <QGraphicsObject>
#include <QPointer>
#include <QRectF>

#include <vector>

#include "models/eventwatch.h"

class QChart;

namespace idem::console {

// A time intake was paused (issue #26), by the server's clock: shaded on every time axis.
struct PauseSpan {
    qint64 fromMs = 0;
    qint64 toMs = 0;
    bool operator==(const PauseSpan&) const = default;
};

// The marks of events that explain a change (issue #27) over one chart's plot area: a thin
// vertical line at each event's time and, at the top of the plot, a small box with the kind's
// letter; hovering the box or a line shows the time, kind, scope, who and the text. Events closer
// than a box's width are one group: one box with their number (in the kind's colour when they are
// all of one kind, e.g. a bulk requeue), each still with its own line, all of them in the
// tooltip. Laid out again whenever the plot area or the time axis changes.
class EventMarks : public QGraphicsObject {
    Q_OBJECT
public:
    // A group of events drawn as one box, as laid out now (chart coordinates).
    struct Mark {
        std::vector<ChartEvent> events; // oldest first
        std::vector<double> lineX; // per event
        QRectF box;
        QString boxText; // the kind's letter, or how many events
        QColor colour;
        QString toolTip; // plain text (the item's tooltip is the same as HTML)
    };

    EventMarks(QChart* chart, QDateTimeAxis* x);
    ~EventMarks() override;

    // The events to mark; those before `fromMs` (the window's start: the axis starts a little
    // earlier) or past the axis are not drawn.
    void setEvents(std::vector<ChartEvent> events, qint64 fromMs);
    void setFrom(qint64 fromMs);
    const std::vector<Mark>& marks() const { return m_marks; }
    // The hoverable items, one per mark, in marks()' order (their toolTip() is what a hover shows).
    QList<QGraphicsItem*> markItems() const;
    QChart* chart() const { return m_chart; }
    // For a chart's tooltip: what the marks are and what each letter stands for.
    static QString legendText();

    QRectF boundingRect() const override { return {}; }
    void paint(QPainter*, const QStyleOptionGraphicsItem*, QWidget*) override { }

    // The box's height and least width, in pixels.
    static constexpr double boxHeight = 14;
    static constexpr double boxMinWidth = 13;

private:
    void relayout();

    QChart* m_chart;
    QPointer<QDateTimeAxis> m_x; // the chart's: gone first when the chart goes
    std::vector<ChartEvent> m_events;
    qint64 m_fromMs = 0;
    std::vector<Mark> m_marks;
    std::vector<QGraphicsItem*> m_items;
};

} // namespace idem::console
