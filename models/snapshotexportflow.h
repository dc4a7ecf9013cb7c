#pragma once

#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>
#include <vector>

#include "models/snapshotexport.h"

class QSettings;

namespace idem::console {

class ConsoleSession;
class DashboardModel;

// What the export dialog collects.
struct ExportChoices {
    QString target; // the bundle directory to create
    bool overwrite = false; // replace the previous bundle there
    int historyMinutes = 60;
    int rowLimit = 1000;
    bool redact = false;
    bool sign = false;
    bool pdf = true;
};

// The console's File > Export snapshot… without its widgets: whether an export can start (the
// monitor connected, none running), what it exports (the dashboard's filter, window, thresholds
// and poll settings, the connections without password, the charts drawn from the snapshot's own
// counters history), the remembered choices, and the export on the monitor session's worker
// (SnapshotExporter) with its progress and outcome. Qt Core/Gui only: the dialog, the progress
// dialog and the message box are views/exportdialog's.
class SnapshotExportFlow : public QObject {
    Q_OBJECT
public:
    // Draws the dashboard's charts for a snapshot just read, over its history window. Called on
    // this object's (the UI) thread while the export's worker waits.
    using ChartDrawer = std::function<std::vector<ChartImage>(const idem::SnapshotData&)>;

    SnapshotExportFlow(ConsoleSession* monitor, ConsoleSession* admin, DashboardModel* dashboard,
        QObject* parent = nullptr);
    ~SnapshotExportFlow() override;

    void setChartDrawer(ChartDrawer drawer) { m_drawCharts = std::move(drawer); }

    bool connected() const;
    bool running() const { return m_exporter->running(); }
    // An export may start now: the monitor is connected and none runs.
    bool available() const { return connected() && !running(); }
    SnapshotExporter* exporter() const { return m_exporter; }
    QString target() const { return m_exporter->target(); }

    // The line under the dialog's title: what the snapshot covers.
    QString scopeText() const;
    // The request for these choices; signingKeyPath is used only when choices.sign is set.
    SnapshotExportRequest request(const ExportChoices& choices, const QString& signingKeyPath) const;
    // False (and nothing started) when an export runs already or the session is gone.
    bool start(const ExportChoices& choices, const QString& signingKeyPath);
    void cancel() { m_exporter->cancel(); }

    // The remembered choices (group snapshotExport of the console's settings; never a password).
    // The target is a new bundle name in the folder used last.
    static ExportChoices rememberedChoices(QSettings& settings);
    static void rememberChoices(QSettings& settings, const ExportChoices& choices);
    static QString defaultFolder();
    // Where the last export went (the default folder before the first): File > Open snapshot
    // starts there, since that is where the bundles are.
    static QString lastFolder(QSettings& settings);
    static QString newBundleName(); // idem-snapshot-YYYYMMDD-HHMMSSZ (UTC)

Q_SIGNALS:
    // available() may have changed.
    void availabilityChanged();
    void progressChanged(const QString& stage, double fraction);
    void finished(idem::console::SnapshotExporter::Outcome outcome, const QString& message,
        const idem::console::SnapshotExportResult& result);

private:
    QPointer<ConsoleSession> m_monitor;
    QPointer<ConsoleSession> m_admin;
    QPointer<DashboardModel> m_dashboard;
    SnapshotExporter* m_exporter;
    ChartDrawer m_drawCharts;
};

} // namespace idem::console
