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
// requester's own request and says so, shown as the server words it. Beside them (schema v22)
// the change requests not yet used (a retention change, a manual purge): what, by whom, the
// spec's sha256 and until when; one waiting and not expired is approved the same way
// (idem_change_approve naming its spec sha256), the others are listed greyed with why.
class ApprovalsDialog : public QDialog {
    Q_OBJECT
public:
    explicit ApprovalsDialog(ConsoleSession* admin, QWidget* parent = nullptr);
    ~ApprovalsDialog() override;

    QTableWidget* table() const { return m_table; }
    QTableWidget* changesTable() const { return m_changes; }
    int changeCount() const { return static_cast<int>(m_changeRows.size()); }
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
        QString whyNot; // a change request that cannot be approved: why
    };
    void updateApprove();
    void approve();
    void showResult(const QString& text, bool good);

    ConsoleSession* m_admin;
    QLabel* m_intro;
    QTableWidget* m_table;
    QLabel* m_changesIntro;
    QTableWidget* m_changes;
    QLineEdit* m_reason;
    QPushButton* m_refresh;
    QPushButton* m_approve;
    QPushButton* m_close;
    QLabel* m_result;
    QList<Pending> m_jobs;
    QList<Pending> m_changeRows;
    bool m_loading = false;
    bool m_running = false;
};

// Opens the dialog (deleted on close) over `parent`.
ApprovalsDialog* openApprovalsDialog(QWidget* parent, ConsoleSession* admin);

} // namespace idem::console
