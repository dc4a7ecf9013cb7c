#pragma once

#include <QDialog>

#include <memory>

#include <optional>

#include "operations/pauses.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace idem::console {

namespace Ui {
    class PauseDialog;
}

class ConsoleSession;
class PauseChange;
class PauseRampChange;
class PauseWatch;
class ResumeRampPanel;

// Pauses intake of a scope (issue #26), or lifts one pause, through the admin session's worker
// (PauseChange: idem_pause / idem_resume, one audit entry each). The scope comes prefilled (the dashboard's
// filter, a task row's tenant and operation) and may be changed ('*' for all); a reason is
// required by the recovery actions' rule (idem::reasonIsBlank); a pause may have a length. Run
// stays disabled for a role that is not idem_operator (the database refuses it too) and says why.
// The result names the audit entry; a refusal is shown as the server words it (display-safe).
class PauseDialog : public QDialog {
    Q_OBJECT
public:
    enum class Mode { Pause, Resume };

    // Pause: the scope to prefill (empty: '*').
    PauseDialog(ConsoleSession* admin, const QString& tenant, const QString& operation, QWidget* parent = nullptr);
    // Resume: the pause to lift, as listed.
    PauseDialog(ConsoleSession* admin, const idem::Pause& pause, QWidget* parent = nullptr);
    ~PauseDialog() override;

    Mode mode() const { return m_mode; }
    QLineEdit* tenantEdit() const { return m_tenant; }
    QLineEdit* operationEdit() const { return m_operation; }
    QComboBox* lengthCombo() const { return m_length; }
    QSpinBox* customMinutes() const { return m_custom; }
    QPlainTextEdit* reasonEdit() const { return m_reason; }
    QPushButton* runButton() const { return m_run; }
    // Shown for the scope '*:*' (all intake everywhere): Run waits for it to be ticked.
    QCheckBox* everythingConfirm() const { return m_everything; }
    bool pausesEverything() const;
    QLabel* resultLabel() const { return m_result; }
    // Resume: the forecast and the choice to resume in steps (schema v33).
    ResumeRampPanel* rampPanel() const { return m_rampPanel; }
    bool finished() const { return m_finished; }
    bool succeeded() const { return m_auditId > 0; }
    qint64 auditId() const { return m_auditId; }
    // The length chosen, in ms; nullopt: until resumed.
    std::optional<qint64> lengthMs() const;

Q_SIGNALS:
    // The pause was set or lifted (auditId: its entry), or the attempt failed (auditId 0).
    void done(qint64 auditId);

private:
    void build();
    void updateRun();
    void run();
    void showResult(const QString& text, bool good);

    ConsoleSession* m_admin;
    PauseChange* m_change = nullptr;
    PauseRampChange* m_rampChange = nullptr;
    ResumeRampPanel* m_rampPanel = nullptr;
    Mode m_mode;
    idem::Pause m_pause; // Resume: the one to lift
    std::unique_ptr<Ui::PauseDialog> m_ui; // the form's widgets; the scope's fields only when pausing
    QLineEdit* m_tenant = nullptr;
    QLineEdit* m_operation = nullptr;
    QComboBox* m_length = nullptr;
    QSpinBox* m_custom = nullptr;
    QLabel* m_intro = nullptr;
    QPlainTextEdit* m_reason = nullptr;
    QLabel* m_reasonHint = nullptr;
    QLabel* m_why = nullptr; // why Run is disabled (role, connection)
    QCheckBox* m_everything = nullptr; // the second step for '*:*'
    QLabel* m_result = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_close = nullptr;
    bool m_running = false;
    bool m_finished = false;
    qint64 m_auditId = 0;
};

// Opens the dialogs (non-modal, deleted on close); a success reads the pauses again at once.
PauseDialog* openPauseDialog(
    QWidget* parent, ConsoleSession* admin, PauseWatch* watch, const QString& tenant, const QString& operation);
PauseDialog* openResumeDialog(QWidget* parent, ConsoleSession* admin, PauseWatch* watch, const idem::Pause& pause);
// Adds "Pause intake of <scope>…" and one "Resume <scope>…" per pause in force that covers some
// of tenant:operation (empty: all) to `menu`; disabled, with the reason as tooltip, for a role
// that may not pause. Object names: pauseIntakeAction, resumeIntakeAction.
void addPauseActions(QMenu* menu, QWidget* parent, ConsoleSession* admin, PauseWatch* watch, const QString& tenant,
    const QString& operation);
// Why this session may not pause or resume; empty when it may.
QString pauseRefusal(const ConsoleSession* admin);

} // namespace idem::console
