#pragma once

#include <QDialog>

#include <optional>

#include "models/jobcontrol.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace idem::console {

class ConsoleSession;
class JobRunners;
class RedriveStatusWatch;
class RefusalNote;

// "Apply to all N matching": one recovery action over every task the Tasks page's filters match,
// as of the moment the job starts, run by the database as a recovery job (operations/jobs). It
// previews the count (idem_job_preview, nothing written), asks for a reason and a cap, says
// exactly what will run (action, filter, count, cap, moment), then starts the job
// (idem_job_start, through JobControl) and, if asked, runs it from this console on a connection
// of its own. Nothing here waits on the database.
class ApplyAllDialog : public QDialog {
    Q_OBJECT
public:
    ApplyAllDialog(ConsoleSession* admin, JobRunners* runners, const idem::TaskFilter& filter,
        idem::RecoveryAction initial, QWidget* parent = nullptr);
    ~ApplyAllDialog() override;

    idem::RecoveryAction action() const;
    const idem::TaskFilter& filter() const { return m_filter; }
    const std::optional<idem::JobPreview>& preview() const { return m_preview; }
    // Whether the job would wait for another login's approval, as the database says (read with the preview).
    const std::optional<idem::ApprovalNeed>& approvalNeed() const { return m_need; }
    std::optional<std::int64_t> startedJob() const
    {
        return m_started ? std::optional(m_started->jobId) : std::nullopt;
    }

    QComboBox* actionBox() const { return m_action; }
    QSpinBox* extraAttempts() const { return m_extra; }
    QSpinBox* capBox() const { return m_cap; }
    QPlainTextEdit* reasonEdit() const { return m_reason; }
    QCheckBox* runHereBox() const { return m_runHere; }
    // Requeue only: "Re-execute now" where the filter's operations have a re-driver online, the
    // offer beside it, and why not for the rest.
    QCheckBox* reexecuteBox() const { return m_reexecute; }
    QLabel* reexecuteOffer() const { return m_offer; }
    RefusalNote* reexecuteRefusal() const { return m_offerRefusal; }
    RedriveStatusWatch* redrivers() const { return m_redrivers; }
    QPushButton* startButton() const { return m_start; }
    QLabel* countLabel() const { return m_count; }
    QLabel* planLabel() const { return m_plan; }
    QLabel* resultLabel() const { return m_result; }
    bool previewing() const;

Q_SIGNALS:
    // The job was started (and, with "run it from this console", is running here).
    void jobStarted(qint64 id);

private:
    void previewNow();
    void previewed(const idem::JobPreview& preview, const idem::ApprovalNeed& need);
    void started(const idem::JobStart& start);
    void updatePlan();
    void updateReexecute();
    void start();

    ConsoleSession* m_admin;
    JobRunners* m_runners;
    idem::TaskFilter m_filter;
    QComboBox* m_action;
    QSpinBox* m_extra;
    QSpinBox* m_cap;
    QPlainTextEdit* m_reason;
    QCheckBox* m_runHere;
    QCheckBox* m_reexecute;
    QLabel* m_offer;
    RefusalNote* m_offerRefusal;
    RedriveStatusWatch* m_redrivers;
    JobControl* m_jobs;
    QLabel* m_count;
    QLabel* m_plan;
    QLabel* m_result;
    QPushButton* m_start;
    QPushButton* m_close;
    std::optional<idem::JobPreview> m_preview;
    std::optional<idem::ApprovalNeed> m_need;
    QString m_previewError;
    std::optional<idem::JobStart> m_started;
};

} // namespace idem::console
