#pragma once

#include <QWidget>

#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "operations/taskfilter.h"
#include "operations/tasklist.h"
#include "models/dashboardthresholds.h"
#include "models/latencywatch.h"
#include "models/livetext.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSettings;
class QSystemTrayIcon;
class QToolButton;

namespace idem::console {

class BreakdownPanel;
class RefusalNote;
class ChartPanel;
class ConsoleSession;
class DashboardModel;
class EventWatch;
class LatencyWatch;
struct ChartEvent;
class PauseWatch;
class TileGrid;
class TileWidget;
struct TileValue;

// The Dashboard page: poll controls and filters, a status line (as of, replication lag, what
// the console's own ticks cost, and why the data is not live when it is not), the tiles and the
// charts. Reads through the monitor session only.
class DashboardWidget : public QWidget {
    Q_OBJECT
public:
    // `settings` keeps the thresholds and poll settings (nullptr: the console's settings file).
    // Without a monitor the dashboard is static (an incident snapshot's, fed through
    // model()->showStatic()): the poll, window, filter and threshold controls are hidden and
    // nothing is saved.
    DashboardWidget(ConsoleSession* monitor, QSettings* settings = nullptr, QWidget* parent = nullptr);
    ~DashboardWidget() override;

    DashboardModel* model() const { return m_model; }
    ChartPanel* charts() const { return m_charts; }
    TileWidget* tile(Tile tile) const;
    TileGrid* tileGrid() const { return m_tileGrid; }
    // Latency (issue #27): the figures' reader (nullptr on a static dashboard), which feeds the
    // worst p95 run time tile (a catalogue tile, Tile::WorstP95RunTime); the chart is charts()->latency().
    LatencyWatch* latencyWatch() const { return m_latency; }
    // The events marked on the charts' time axes (issue #27): their reader (nullptr on a static
    // dashboard).
    EventWatch* eventWatch() const { return m_events; }
    // A static dashboard (an incident snapshot's): its latency figures (the chart and the worst
    // p95 tile, or the chart saying it has none) and its events, marked on the charts.
    void showSnapshotExtras(const std::optional<LatencyReading>& latency, std::vector<ChartEvent> events);
    TileWidget* latencyTile() const { return tile(Tile::WorstP95RunTime); }
    // Where it is failing (issue 41): nullptr on a static dashboard.
    BreakdownPanel* breakdown() const { return m_breakdown; }
    QString statusText() const;
    QString freshnessText() const;
    // The freshness line's tooltip: its whole text and, after a failed read, the server's detail.
    QString freshnessToolTip() const;
    // Beside the interval chosen, how the dashboard really polls when that differs (backing off
    // after failed reads, stretched); empty when it polls as chosen. Its tooltip says it whole.
    QString pollingNoteText() const;
    QString pollingNoteToolTip() const;
    QString alertText() const;

    // Opens the thresholds dialog (the toolbar button).
    void editThresholds();
    // Pauses of intake (issue #26): tiles of a paused scope get a badge, the charts a band over
    // the paused time, and the toolbar Pause intake… / Resume intake… for the filtered scope,
    // run through `admin`.
    void setPauseControl(PauseWatch* watch, ConsoleSession* admin);
    QPushButton* pauseIntakeButton() const { return m_pauseIntake; }
    QPushButton* resumeIntakeButton() const { return m_resumeIntake; }
    RefusalNote* pauseRefusalNote() const { return m_pauseRefusal; }
    // Resume intake…: the dialog for the one pause covering the filtered scope, or a menu of them.
    void resumeIntake();

Q_SIGNALS:
    // A tile was clicked: the rows behind it, what they are in words (DashboardModel::opensText)
    // and the order that puts the row its figure is about first (DashboardModel::sortFor).
    void openRows(const idem::TaskFilter& filter, const QString& title, const idem::console::LiveText& what,
        const std::optional<idem::TaskSort>& sort);

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    // The constructor's parts, in their order.
    void buildControls();
    void buildStatusLines();
    void buildWatches();
    void layOut();
    void connectControls();
    void connectModel();

    void retranslateControls();
    void showFreshness(const QString& first, const QString& second);
    void refreshView();
    void refreshStatus();
    void refreshFreshness();
    void showAlert(Tile tile, const QString& text);
    void refreshAlerts();
    void saveSettings();
    void syncControls();
    void refreshPauses();
    void refreshTiles();
    void showTile(TileWidget* tile, const TileValue& value, bool stale, const QString& thresholdText);
    // The latency chart's lines, from the watch (a static dashboard's are set once).
    void refreshLatencyChart();

    ConsoleSession* m_monitor;
    std::unique_ptr<QSettings> m_ownSettings;
    QSettings* m_settings;
    DashboardModel* m_model;
    ChartPanel* m_charts;
    TileGrid* m_tileGrid = nullptr;
    LatencyWatch* m_latency = nullptr;
    EventWatch* m_events = nullptr;
    std::optional<qint64> m_auditHead; // the last tick's: a new audit entry is a new event
    BreakdownPanel* m_breakdown = nullptr;
    QComboBox* m_interval;
    QToolButton* m_pause;
    QComboBox* m_window;
    QLineEdit* m_tenant;
    QLineEdit* m_operation;
    QLabel* m_status;
    QLabel* m_freshness;
    QLabel* m_pollingNote;
    QLabel* m_alert;
    QWidget* m_controls;
    QString m_freshnessFull; // what the two elided lines say, whole
    QString m_freshnessLines[2];
    std::array<QLabel*, 4> m_controlLabels {}; // Refresh, Window, Tenant, Operation
    QToolButton* m_refresh = nullptr;
    QPushButton* m_thresholds = nullptr;
    QSystemTrayIcon* m_tray = nullptr;
    PauseWatch* m_pauses = nullptr;
    ConsoleSession* m_admin = nullptr;
    QPushButton* m_pauseIntake = nullptr;
    QPushButton* m_resumeIntake = nullptr;
    RefusalNote* m_pauseRefusal = nullptr; // why Pause / Resume intake are greyed out, beside them (issue 41 item 6)
};

} // namespace idem::console
