#pragma once

#include <QWidget>

#include <vector>

#include "models/dashboardhistory.h"
#include "views/eventmarks.h"

class QAreaSeries;
class QBarSet;
class QBarCategoryAxis;
class QChart;
class QLabel;
class QChartView;
class QDateTimeAxis;
class QLineSeries;
class QValueAxis;
class QXYSeries;

namespace idem {
enum class OutcomeChart;
struct SnapshotData;
}

namespace idem::console {

class DashboardModel;
class LatencyChart;
struct ChartImage;

// The time axis of the charts: [fromMs, toMs] widened to whole steps of a round length, so that
// its `ticks` evenly spaced ticks fall on round minutes.
struct RoundTimeAxis {
    qint64 fromMs = 0;
    qint64 toMs = 0;
    qint64 stepMs = 0;
    int ticks = 0;
};
RoundTimeAxis roundTimeAxis(qint64 fromMs, qint64 toMs);

// What the charts are drawn from: the live dashboard's model, or (for an export) its live
// samples with a snapshot's counters, instant and history window.
struct ChartInput {
    int windowMinutes = 15;
    int intervalMs = 1000; // the poll interval: samples further apart than a few are an outage
    const idem::DashboardReading* latest = nullptr; // its serverNowMs ends the time axis
    const Ring<LiveSample>& live;
    const std::deque<idem::CounterBucket>& minutes; // one per minute, oldest first
    const std::vector<idem::AttemptsBin>* attempts = nullptr; // nullptr: the histogram stays
};

// The dashboard's live charts (Qt Charts): processing vs expired leases, claim outcomes per
// minute, duplicate ratio per minute, retries and failures per minute, and the attempts
// histogram of the unfinished rows. Each update replaces every series in bulk; the per-tick
// series is reduced to the plot's pixel width (min and max per pixel) unless told otherwise.
class ChartPanel : public QWidget {
    Q_OBJECT
public:
    explicit ChartPanel(QWidget* parent = nullptr);
    ~ChartPanel() override;

    void update(const DashboardModel& model);
    void draw(const ChartInput& input);
    // The paused periods to shade (merged where they overlap), each cut to the window.
    void setPauseSpans(std::vector<PauseSpan> spans);
    const std::vector<PauseSpan>& pauseSpans() const { return m_pauseSpans; }
    // Every shaded band now (object name "pausedBand"), the latency chart's included, for tests.
    QList<QAreaSeries*> pauseBands() const;
    // The events to mark on every time axis (issue #27), oldest first.
    void setEvents(std::vector<ChartEvent> events);
    const std::vector<ChartEvent>& events() const { return m_events; }
    // How many events of the window the marks leave out (each kind's bound kept its newest):
    // said under the charts (object name "eventsOmitted") while there are any. `uncounted`: a
    // server that cannot count them (before schema v24) said its list was full.
    void setEventsOmitted(qint64 omitted, bool uncounted = false);
    // Every chart's marks, the latency chart's last, for tests.
    QList<EventMarks*> eventMarks() const;
    // Off: feed every sample of the window (the benchmark's baseline).
    void setDownsampling(bool on) { m_downsample = on; }

    // For tests and the benchmark: every line series (object names as the legends say) and the
    // histogram's bar set.
    QList<QXYSeries*> lineSeries() const;
    QXYSeries* series(const QString& objectName) const;
    QBarSet* attemptsBars() const { return m_attempts; }
    QStringList attemptsCategories() const;
    // The latency chart (issue #27), on the same time axis; fed by the dashboard's LatencyWatch.
    LatencyChart* latency() const { return m_latency; }

    // Every chart as a PNG of `size` device-independent pixels drawn at `devicePixelRatio`, for an
    // incident snapshot: the same at any window size, and whether or not the page is on screen
    // (each chart is laid out at that size for the picture and put back). UI thread only.
    // Each PNG carries its title and time axis as text chunks (Title, Idem-Time-From and
    // Idem-Time-To, ISO 8601 UTC).
    std::vector<ChartImage> renderImages(QSize size = QSize(720, 360), qreal devicePixelRatio = 2.0) const;

    // The charts of an incident snapshot just read, as PNGs: over the snapshot's history window
    // and ending at its instant, the per-minute charts from its own counters history, the
    // processing and console-load lines from what `live` (the console's dashboard) sampled in
    // that window, the attempts histogram as `live` has it. UI thread only.
    static std::vector<ChartImage> snapshotImages(const DashboardModel& live, const idem::SnapshotData& snapshot);

protected:
    bool event(QEvent* event) override;

private:
    void applyTheme();
    void retranslate();
    void drawBands();

    struct Chart {
        QChart* chart = nullptr;
        QChartView* view = nullptr;
        QDateTimeAxis* x = nullptr;
        QValueAxis* y = nullptr;
        const char* title = nullptr; // English source, translated again on a language change
        QStringList names; // the series' English sources
        std::vector<QLineSeries*> series; // per name: the newest piece, with the legend entry
        // Per name, older pieces of the same line (an outage splits it): no legend entry of their own.
        std::vector<std::vector<QLineSeries*>> older;
        std::vector<QAreaSeries*> bands; // paused periods, one per span
        EventMarks* marks = nullptr;
    };
    // `ids`: the series' object names; by default the names without spaces.
    Chart makeChart(const char* title, const QStringList& names, const QString& unit, const QStringList& ids = {});
    Chart makeOutcomeChart(idem::OutcomeChart which);
    // Draws `pieces` (oldest first) as one line of series `index`: the newest in the series itself.
    void setPieces(Chart& c, std::size_t index, const std::vector<QList<QPointF>>& pieces);
    static void fitY(Chart& c, double floorMax);

    bool m_downsample = true;
    std::vector<PauseSpan> m_pauseSpans;
    std::vector<ChartEvent> m_events;
    qint64 m_eventsOmitted = 0;
    bool m_eventsUncounted = false;
    QLabel* m_omittedLabel = nullptr;
    qint64 m_fromMs = 0; // the window drawn last: [m_fromMs, m_nowMs]
    qint64 m_nowMs = 0;
    std::vector<Chart> m_charts;
    QChart* m_histogram = nullptr;
    QChartView* m_histogramView = nullptr;
    QBarSet* m_attempts = nullptr;
    QBarCategoryAxis* m_attemptsAxis = nullptr;
    QValueAxis* m_attemptsY = nullptr;
    LatencyChart* m_latency = nullptr;
};

} // namespace idem::console
