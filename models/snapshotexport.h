#pragma once

#include <QByteArray>
#include <QMetaType>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "operations/snapshot.h"
#include "models/dashboardthresholds.h"

namespace idem::console {

class ConsoleSession;
struct Failure;

// One of the dashboard's charts: a PNG rendered on the UI thread (widgets cannot be painted
// anywhere else).
struct ChartImage {
    QString name; // file stem under charts/
    QString title;
    QByteArray png;
};

// Everything the worker needs, as values: nothing in it refers back to a widget.
struct SnapshotExportRequest {
    QString target; // the bundle directory to create
    bool overwrite = false; // replace a previous bundle (a directory holding a MANIFEST)
    idem::SnapshotOptions options; // the schema is the connection's
    idem::SnapshotContext context; // conninfo without password: ServerInfo::displayConninfo
    std::vector<ChartImage> charts; // drawn before the export, written as they are
    // Draws more charts from the snapshot once it is read, over its history window (the console:
    // views' ChartPanel). SnapshotExporter calls it on its own (the UI) thread while the worker
    // waits; runSnapshotExport called directly calls it on its own thread.
    std::function<std::vector<ChartImage>(const idem::SnapshotData&)> drawCharts;
    QString signingKeyPath; // empty: unsigned
    bool pdf = true;
};

struct SnapshotExportResult {
    bool cancelled = false;
    QString path;
    QString takenAt;
    QString keyFingerprint; // empty when unsigned
    QStringList files; // relative paths, as MANIFEST lists them
    QStringList summary; // one line per row set and the audit, for the closing message
};

// The export itself, on the thread that owns conn: the signing key first (a missing key costs no
// database read), the bundle's temporary directory, one REPEATABLE READ read, snapshot.json,
// CSV, charts (the PNGs given, those drawCharts draws, and the SVGs), report.html, report.pdf, then MANIFEST, signature
// and the rename into place. Throws SnapshotCancelled (cancel flag), idem::BundleError,
// idem::SigningError, pqxx errors; in every case nothing is left under the target name and the
// temporary directory is gone. A cancelled export returns a result with cancelled set.
SnapshotExportResult runSnapshotExport(pqxx::connection& conn, const idem::SchemaName& schema,
    const SnapshotExportRequest& request, const idem::SnapshotProgress& progress = {});

// report.pdf: the report's HTML laid out by QTextDocument onto an A4 QPdfWriter (2 cm margins),
// the images it refers to supplied from memory (bundle path -> PNG bytes). Usable off the GUI
// thread (QTextDocument is reentrant; the images are QImage, never QPixmap).
QByteArray renderReportPdf(
    const QString& html, const std::vector<std::pair<QString, QByteArray>>& images, const QString& title);

// The dashboard's tile thresholds as snapshot.json names them (`metric` from figures, the levels
// in the figure's unit: the duplicate ratio's percent becomes 0..1). Tiles without levels are
// left out.
QString thresholdMetric(Tile tile);
std::vector<idem::SnapshotThreshold> snapshotThresholds(const DashboardSettings& settings);

// The console's side of an export: submits runSnapshotExport() to a session's worker (the
// monitor connection), publishes its progress on the UI thread and cancels it. One export at a
// time. A lost connection cancels the job as well, so a bundle can never appear after the
// console said it failed.
class SnapshotExporter : public QObject {
    Q_OBJECT
public:
    enum class Outcome { Written, Cancelled, Failed };
    Q_ENUM(Outcome)

    explicit SnapshotExporter(ConsoleSession* session, QObject* parent = nullptr);
    ~SnapshotExporter() override;

    // False (and nothing submitted) when an export is already running.
    bool start(const SnapshotExportRequest& request);
    void cancel();
    bool running() const { return m_job != 0 || m_state != nullptr; }
    QString target() const { return m_target; }

Q_SIGNALS:
    void progressChanged(const QString& stage, double fraction);
    // message: what a person reads (what happened, where, whether anything was written).
    void finished(idem::console::SnapshotExporter::Outcome outcome, const QString& message,
        const idem::console::SnapshotExportResult& result);

private:
    struct State {
        std::atomic_bool cancel { false };
        std::mutex mutex;
        std::string stage; // guarded by mutex
        double fraction = 0; // guarded by mutex
    };
    void publishProgress();
    void finish(Outcome outcome, const QString& message, const SnapshotExportResult& result);
    QString failureText(const Failure& failure) const;

    QPointer<ConsoleSession> m_session;
    quint64 m_job = 0;
    std::shared_ptr<State> m_state;
    QString m_target;
    QTimer m_progressTimer;
};

// An operations/snapshot progress stage ("reading rows: failed") in the user's language.
QString translatedStage(const std::string& stage);

} // namespace idem::console

Q_DECLARE_METATYPE(idem::console::SnapshotExportResult)
