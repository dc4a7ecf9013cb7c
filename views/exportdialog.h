#pragma once

#include <QDialog>
#include <QMessageBox>
#include <QPointer>

#include <memory>

#include "models/signingkeycheck.h"
#include "models/snapshotexportflow.h"

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

// File > Export snapshot…: where the bundle goes (a new idem-snapshot-<UTC time> folder under
// Documents by default), the charts' history window, the row bound, redaction for bundles that
// leave the team, signing with the user's Ed25519 key (created here on request, mode 0600) and
// the PDF. OK refuses what would fail (no folder, a folder it cannot write to, an existing
// directory that is not a bundle, a bundle it may not replace, a key that is missing or too
// open) with the reason in the dialog. The key is read, checked and created off the UI thread
// (SigningKeyCheck). The choices are remembered; never a password.
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
    // A look at the signing key (or its creation) has not answered yet.
    bool keyPending() const { return m_keys.pending(); }

    // With signing on, the key is checked first (off the UI thread); the dialog closes when it
    // answers that the key is usable.
    void accept() override;

private:
    void browse();
    void createKey();
    void updateKey(); // after the key or Sign changed: shows what is known, asks the file again
    void showKey(quint64 request, const SigningKeyState& state);
    // The key's path as the line shows it: elided in the middle, so a long path stays in the
    // dialog; the tooltip and "Copy path" hold it whole.
    QString shownKeyPath() const;
    void updateTarget();
    void showError(const QString& text, bool aboutKey = false); // aboutKey: unticking Sign hides it
    bool checkTarget(const ExportChoices& c);
    void finishAccept(const SigningKeyState& key);

    std::unique_ptr<QSettings> m_ownSettings;
    QSettings* m_settings;
    QString m_keyPath;
    SigningKeyCheck m_keys;
    SigningKeyState m_key; // the latest answer about m_keyPath
    quint64 m_createRequest = 0; // the key creation not answered yet
    bool m_acceptPending = false; // OK waits for the key's check
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

// The export's widgets around SnapshotExportFlow (models): the dialog, the dashboard's charts
// drawn for the snapshot's window, a progress dialog with Cancel while the monitor session's
// worker exports, then a message with the path and "Show in folder". The window stays usable.
class SnapshotExportUi : public QObject {
    Q_OBJECT
public:
    SnapshotExportUi(ConsoleSession* monitor, ConsoleSession* admin, DashboardWidget* dashboard, QSettings* settings,
        QWidget* window);
    ~SnapshotExportUi() override;

    // Enables the action only while the monitor is connected and no export runs.
    void setAction(QAction* action);

    SnapshotExportFlow* flow() const { return m_flow; }
    ExportDialog* dialog() const { return m_dialog; }
    QProgressDialog* progressDialog() const { return m_progress; }
    QMessageBox* outcomeBox() const { return m_outcome.data(); }

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

    SnapshotExportFlow* m_flow;
    QSettings* m_settings;
    QWidget* m_window;
    QPointer<QAction> m_action;
    ExportDialog* m_dialog = nullptr;
    QProgressDialog* m_progress = nullptr;
    QPointer<QMessageBox> m_outcome; // deletes itself on close
};

} // namespace idem::console
