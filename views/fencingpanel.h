#pragma once

#include <QFrame>

class QChart;
class QChartView;
class QDateTimeAxis;
class QLabel;
class QLineSeries;
class QValueAxis;

namespace idem {
struct FencingReading;
}

namespace idem::console {

class ConsoleSession;
class FencingWatch;

// Proof that fencing works, and the lease advisor, on the dashboard (issue 46 item 2): over the
// last hour, the leases taken over and the late calls refused because of them, on one chart
// minute by minute; the advisor's sentence per operation whose run times outgrow its lease; the
// workers whose late calls were refused. Shown only when there is something to say.
class FencingPanel : public QFrame {
    Q_OBJECT
public:
    explicit FencingPanel(ConsoleSession* session, QWidget* parent = nullptr);
    FencingWatch* watch() const { return m_watch; }
    // What the panel shows for a reading (the watch's, or a test's).
    void present(const idem::FencingReading& r);

protected:
    void changeEvent(QEvent* event) override;

private:
    void render();
    void applyTheme();
    FencingWatch* m_watch;
    QLabel* m_headline;
    QChart* m_chart;
    QChartView* m_view;
    QDateTimeAxis* m_x;
    QValueAxis* m_y;
    QLineSeries* m_takeovers;
    QLineSeries* m_refused;
    QLabel* m_legend;
    QLabel* m_advice;
    QLabel* m_workers;
};

} // namespace idem::console
