#pragma once

#include <QDialog>

#include <QList>
#include <QString>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace idem::console {

class ConsoleSession;

// The recovery jobs waiting for a second person's approval (schema v21), read through the admin
// session's worker, and Approve for the one selected: idem_job_approve names the job's spec as
// listed (its action, filter, moment, cap and count), so the approval covers exactly what the
// approver read. A reason is required (idem::reasonIsBlank). Approve stays disabled, with the
// reason in its tooltip, for a role without the approve right; the database refuses the
// requester's own request and says so, shown as the server words it.
class ApprovalsDialog : public QDialog {
    Q_OBJECT
public:
    explicit ApprovalsDialog(ConsoleSession* admin, QWidget* parent = nullptr);
    ~ApprovalsDialog() override;

    QTableWidget* table() const { return m_table; }
    QLineEdit* reasonEdit() const { return m_reason; }
    QPushButton* approveButton() const { return m_approve; }
    QLabel* resultLabel() const { return m_result; }
    bool loading() const { return m_loading; }
    int pendingCount() const { return static_cast<int>(m_jobs.size()); }

public Q_SLOTS:
    void reload();

Q_SIGNALS:
    void loaded();
    void approved(qint64 auditId);

private:
    struct Pending {
        qint64 id = 0;
        QString spec;
    };
    void updateApprove();
    void approve();
    void showResult(const QString& text, bool good);

    ConsoleSession* m_admin;
    QLabel* m_intro;
    QTableWidget* m_table;
    QLineEdit* m_reason;
    QPushButton* m_refresh;
    QPushButton* m_approve;
    QPushButton* m_close;
    QLabel* m_result;
    QList<Pending> m_jobs;
    bool m_loading = false;
    bool m_running = false;
};

// Opens the dialog (deleted on close) over `parent`.
ApprovalsDialog* openApprovalsDialog(QWidget* parent, ConsoleSession* admin);

} // namespace idem::console
