#pragma once

#include <QDialog>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace idem::console {

class ApprovalsModel;
class ConsoleSession;

// What waits for a second person's approval (schema v28: recovery jobs, retention changes and
// manual purges, one list, models/approvalsmodel), and Approve or Decline for the one selected.
// Approve names the request's spec as listed, so the approval covers exactly what the approver
// read; Decline turns a waiting request down (a job's: the job is cancelled, nothing of it ran).
// A reason is required (idem::reasonIsBlank). Both stay disabled, with the reason in their
// tooltip, for a role without the approve right and for a request approved already or past its
// time; the database refuses the requester's own approval and says so, shown as the server's
// words. The dialog does no database work itself: the model does.
class ApprovalsDialog : public QDialog {
    Q_OBJECT
public:
    explicit ApprovalsDialog(ConsoleSession* admin, QWidget* parent = nullptr);
    ~ApprovalsDialog() override;

    QTableView* table() const { return m_table; }
    ApprovalsModel* model() const { return m_model; }
    QLineEdit* reasonEdit() const { return m_reason; }
    QPushButton* approveButton() const { return m_approve; }
    QPushButton* declineButton() const { return m_decline; }
    QLabel* resultLabel() const { return m_result; }
    bool loading() const;
    int pendingCount() const;

public Q_SLOTS:
    void reload();

Q_SIGNALS:
    void loaded();
    void approved(qint64 auditId);

private:
    int selectedRow() const;
    void updateButtons();
    void showResult(const QString& text, bool good);

    ConsoleSession* m_admin;
    ApprovalsModel* m_model;
    QLabel* m_intro;
    QTableView* m_table;
    QLineEdit* m_reason;
    QPushButton* m_refresh;
    QPushButton* m_approve;
    QPushButton* m_decline;
    QPushButton* m_close;
    QLabel* m_result;
    bool m_approving = false;
};

// Opens the dialog (deleted on close) over `parent`.
ApprovalsDialog* openApprovalsDialog(QWidget* parent, ConsoleSession* admin);

} // namespace idem::console
