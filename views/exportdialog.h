#pragma once

#include <QDialog>
#include <QMessageBox>
#include <QPointer>

#include <memory>

#include "models/snapshotexport.h"

class QAction;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressDialog;
class QPushButton;
class QSettings;
class QSpinBox;

namespace idem::console {

class ConsoleSession;
class DashboardWidget;

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

// File > Export snapshot…: where the bundle goes (a new idem-snapshot-<UTC time> folder under
// Documents by default), the charts' history window, the row bound, redaction for bundles that
// leave the team, signing with the user's Ed25519 key (created here on request, mode 0600) and
// the PDF. OK refuses what would fail (no folder, a folder it cannot write to, an existing
// directory that is not a bundle, a bundle it may not replace, a key that is missing or too
// open) with the reason in the dialog. The choices are remembered; never a password.
class ExportDialog : public QDialog {
    Q_OBJECT
public:
    // settings: where the choices are remembered (nullptr: the console's settings file).
    explicit ExportDialog(QSettings* settings = nullptr, QWidget* parent = nullptr);
    ~ExportDialog() override;

    ExportChoices choices() const;
    // The line under the title: what the snapshot covers (the dashboard's filter and window).
    void setScopeText(const QString& text);
    // The signing key's file (default: idem::defaultSigningKeyPath(), shared with idemctl).
    void setKeyPath(const QString& path);
    // Before each opening: a new folder name (in the folder used last) and the key looked at again.
    void prepare();
    QString keyPath() const { return m_keyPath; }
    QString errorText() const;

    static QString defaultFolder();
    // Where the last export went (the default folder before the first): File > Open snapshot
    // starts there, since that is where the bundles are.
    static QString lastFolder(QSettings& settings);
    static QString newBundleName(); // idem-snapshot-YYYYMMDD-HHMMSSZ (UTC)

    void accept() override;

private:
    void browse();
    void createKey();
    void updateKey();
    // The key's path as the line shows it: elided in the middle, so a long path stays in the
    // dialog; the tooltip and "Copy path" hold it whole.
    QString shownKeyPath() const;
    void updateTarget();
    void showError(const QString& text, bool aboutKey = false); // aboutKey: unticking Sign hides it
    void save();

    std::unique_ptr<QSettings> m_ownSettings;
    QSettings* m_settings;
    QString m_keyPath;
    QLabel* m_scope;
    QLineEdit* m_target;
    QPushButton* m_browse;
    QCheckBox* m_replace;
    QComboBox* m_history;
    QSpinBox* m_rows;
    QCheckBox* m_redact;
    QCheckBox* m_sign;
    QLabel* m_keyInfo;
    QPushButton* m_createKey;
    QPushButton* m_copyKeyPath;
    QCheckBox* m_pdf;
    QLabel* m_error;
    bool m_keyError = false; // m_error is about the signing key
};

// The whole console export: the dialog, the dashboard's charts rendered on the UI thread, the
// export on the monitor session's worker (models/snapshotexport) with a progress dialog and
// Cancel, then a message with the path and "Show in folder". The window stays usable meanwhile.
class SnapshotExportFlow : public QObject {
    Q_OBJECT
public:
    SnapshotExportFlow(ConsoleSession* monitor, ConsoleSession* admin, DashboardWidget* dashboard, QSettings* settings,
        QWidget* window);
    ~SnapshotExportFlow() override;

    // Enables the action only while the monitor is connected and no export runs.
    void setAction(QAction* action);

    ExportDialog* dialog() const { return m_dialog; }
    QProgressDialog* progressDialog() const { return m_progress; }
    QMessageBox* outcomeBox() const { return m_outcome.data(); }
    SnapshotExporter* exporter() const { return m_exporter; }

    // The request for these choices, charts rendered now (UI thread).
    SnapshotExportRequest request(const ExportChoices& choices) const;

public Q_SLOTS:
    // Opens the dialog (or says why it cannot: not connected, an export already running).
    void start();
    // What the dialog's OK does: starts the export with a progress dialog.
    bool exportWith(const idem::console::ExportChoices& choices);

Q_SIGNALS:
    void finished(idem::console::SnapshotExporter::Outcome outcome, const QString& message);

private:
    void onFinished(SnapshotExporter::Outcome outcome, const QString& message, const SnapshotExportResult& result);
    void updateAction();
    QString scopeText() const;

    QPointer<ConsoleSession> m_monitor;
    QPointer<ConsoleSession> m_admin;
    QPointer<DashboardWidget> m_dashboard;
    QSettings* m_settings;
    QWidget* m_window;
    SnapshotExporter* m_exporter;
    QPointer<QAction> m_action;
    ExportDialog* m_dialog = nullptr;
    QProgressDialog* m_progress = nullptr;
    QPointer<QMessageBox> m_outcome; // deletes itself on close
};

} // namespace idem::console
