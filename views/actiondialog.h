#pragma once

#include <QDialog>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "operations/actions.h"
#include "operations/tasklist.h"

class QCheckBox;
class QDialogButtonBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;
class QTextBrowser;

namespace idem::console {

class BulkActionModel;
class ConsoleSession;
class RedriveStatusWatch;
class RefusalNote;

// Confirms and runs one recovery action on the rows an operator selected. Before anything
// runs it says exactly what will happen and to how many records (per status, keys listed;
// rows the action does not apply to are left out and listed). Run stays disabled until the
// reason has a visible character (idem::reasonIsBlank). Running, it shows a progress bar, Stop,
// and the per-key results (applied / refused-stale / refused-state / error) with each key's
// status as it is now.
class ActionDialog : public QDialog {
    Q_OBJECT
public:
    ActionDialog(ConsoleSession* admin, idem::RecoveryAction action, const std::vector<idem::TaskRow>& rows,
        QWidget* parent = nullptr);
    ~ActionDialog() override;

    idem::RecoveryAction action() const { return m_action; }
    // The rows the action will be sent for (applicable ones, as the operator saw them).
    const std::vector<idem::RowVersion>& targets() const { return m_targets; }
    int leftOut() const { return m_leftOut; }
    QPlainTextEdit* reasonEdit() const { return m_reason; }
    QSpinBox* extraAttempts() const { return m_extra; }
    QPushButton* runButton() const { return m_run; }
    QPushButton* stopButton() const { return m_stop; }
    QTextBrowser* plan() const { return m_plan; }
    QProgressBar* progress() const { return m_progress; }
    QTableView* resultView() const { return m_resultView; }
    BulkActionModel* results() const { return m_results; }
    QLabel* summary() const { return m_summary; }
    // Requeue only (null otherwise): "Re-execute now", enabled where a key's operation is
    // re-drivable and a re-driver of it is online; the offer ("3 workers of charge are online")
    // beside it, and why not for the operations that cannot ("No re-driver for ship is online:
    // the key waits for its client").
    QCheckBox* reexecuteBox() const { return m_reexecute; }
    QLabel* reexecuteOffer() const { return m_offer; }
    RefusalNote* reexecuteRefusal() const { return m_offerRefusal; }
    RedriveStatusWatch* redrivers() const { return m_redrivers; }
    bool finished() const { return m_finished; }

Q_SIGNALS:
    void runFinished();

private:
    void updateRun();
    void updateReexecute();
    void run();
    // Whether target i would be re-executed now (the box checked, its operation re-executable).
    bool reexecutes(std::size_t target) const;

    ConsoleSession* m_admin;
    idem::RecoveryAction m_action;
    std::vector<idem::RowVersion> m_targets;
    int m_leftOut = 0;
    QTextBrowser* m_plan;
    QSpinBox* m_extra = nullptr;
    QPlainTextEdit* m_reason;
    QLabel* m_reasonHint;
    QProgressBar* m_progress;
    QTableView* m_resultView;
    QLabel* m_summary;
    QPushButton* m_run;
    QPushButton* m_stop;
    QPushButton* m_close;
    BulkActionModel* m_results;
    bool m_finished = false;
    QCheckBox* m_reexecute = nullptr;
    QLabel* m_offer = nullptr;
    RefusalNote* m_offerRefusal = nullptr;
    RedriveStatusWatch* m_redrivers = nullptr;
    std::vector<std::pair<std::string, std::string>> m_scopes; // per target: tenant, operation (empty: none)
    std::function<void()> m_buildPlan;
};

QString actionTitle(idem::RecoveryAction action); // "Requeue", "Release lease", "Mark failed"
// One sentence: what the action does to each record.
QString actionEffect(idem::RecoveryAction action, int extraAttempts);

} // namespace idem::console
