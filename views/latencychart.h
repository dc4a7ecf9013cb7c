#pragma once

#include <QWidget>

#include <vector>

#include "models/latencywatch.h"
#include "views/eventmarks.h"

class QAreaSeries;
class QChart;
class QChartView;
class QDateTimeAxis;
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QXYSeries;

namespace idem::console {

// The dashboard's latency chart (issue #27): p50, p95 and p99 of run time and of time to success
// per folded minute, for the filtered operation or every operation as one, on a log scale of
// seconds, over the same time axis as the other charts. A line under it says that the last point
// is the last folded minute (a minute or two before now), or why there is nothing to draw.
class LatencyChart : public QWidget {
    Q_OBJECT
public:
    explicit LatencyChart(QWidget* parent = nullptr);
    ~LatencyChart() override;

    // The other charts' time axis and their first complete minute (ms, server clock).
    void setTimeAxis(qint64 fromMs, qint64 toMs, int ticks, qint64 firstMinuteMs);
    // What the watch has now; `operation` is the dashboard's filter (empty: every operation).
    void setData(const LatencyWatch& watch, const QString& operation);
    // An incident snapshot's figures (none: the snapshot carries none, and the chart says so).
    void setSnapshot(const std::optional<LatencyReading>& reading, const QString& operation);

    // The event marks (issue #27) and paused periods over the chart, as on the other time axes.
    EventMarks* marks() const { return m_marks; }
    void setPauseSpans(const std::vector<PauseSpan>& spans, qint64 fromMs, qint64 toMs);
    QList<QAreaSeries*> pauseBands() const { return QList<QAreaSeries*>(m_bands.begin(), m_bands.end()); }

    // For tests: the series by object name (runP50, runP95, runP99, ttsP50, ttsP95, ttsP99), the
    // points in seconds; the chart's title; the line under it (where the lines end) or, when there
    // is nothing to draw, why.
    QXYSeries* series(const QString& objectName) const;
    QString titleText() const { return m_title; }
    QString noteText() const;
    QChart* chart() const { return m_chart; }

protected:
    bool event(QEvent* event) override;

private:
    void retranslate();
    void applyTheme();
    void redraw();
    void updateLegend();
    void drawBands();

    QChart* m_chart = nullptr;
    QChartView* m_view = nullptr;
    QDateTimeAxis* m_x = nullptr;
    QLogValueAxis* m_y = nullptr;
    QLabel* m_legend = nullptr;
    QLabel* m_note = nullptr;
    std::vector<QLineSeries*> m_series; // run p50, p95, p99, then time to success p50, p95, p99
    EventMarks* m_marks = nullptr;
    std::vector<QAreaSeries*> m_bands;
    std::vector<PauseSpan> m_pauseSpans;
    qint64 m_bandsFromMs = 0;
    qint64 m_bandsToMs = 0;
    qint64 m_firstMinuteMs = 0;
    // What setData() was given, kept to redraw on a new time axis or language.
    std::vector<LatencyPoint> m_run;
    std::vector<LatencyPoint> m_tts;
    qint64 m_foldedToMs = 0;
    QString m_operation;
    QString m_title;
    QString m_noteText;
    QString m_error;
    bool m_read = false;
    bool m_snapshotWithout = false; // an incident snapshot that carries no latency figures
};

} // namespace idem::console
