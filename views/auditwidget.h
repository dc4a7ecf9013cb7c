#pragma once

#include <QWidget>

#include <optional>

#include "operations/audit.h"
#include "views/auditentryview.h"

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableView;
class QTableWidget;
class QTimer;

namespace idem::console {

class AuditModel;
class PageStatusLine;
class AuditWitness;
class ConsoleSession;

// The Audit page: the recovery actions' trail filtered by key, actor, action and time, newest
// first and paged; the selected entry's reason and before/after diff (changed fields
// highlighted); "Verify chain" recomputes every hash off the UI thread and names the first
// broken entry.
class AuditWidget : public QWidget {
    Q_OBJECT
public:
    explicit AuditWidget(ConsoleSession* session, QWidget* parent = nullptr);
    ~AuditWidget() override;

    AuditModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    QTableWidget* diffTable() const { return m_entry->diff(); }
    QLabel* chainLabel() const { return m_chain; }
    QPushButton* verifyButton() const { return m_verify; }
    QPlainTextEdit* reasonView() const { return m_entry->reason(); }
    // What the console's witness knows of the trail, and "Accept current trail" when it alarms.
    void setWitness(AuditWitness* witness);
    QLabel* witnessLabel() const { return m_witnessText; }
    QPushButton* acceptTrailButton() const { return m_acceptTrail; }
    // Shows one key's entries (what the task detail's audit link does).
    void showKey(const QString& key);
    void reload();
    PageStatusLine* statusLine() const { return m_statusLine; }

protected:
    void showEvent(QShowEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void onSelection();
    void onChain(const idem::ChainReport& report);
    void onWitness();
    void retranslateUi();

    ConsoleSession* m_session;
    AuditModel* m_model;
    QLineEdit* m_key;
    QLineEdit* m_actor;
    QComboBox* m_action;
    QLineEdit* m_since;
    QLineEdit* m_until;
    QPushButton* m_apply;
    QLabel* m_error;
    QTableView* m_view;
    AuditEntryView* m_entry;
    QPushButton* m_verify;
    QAction* m_verifyAction = nullptr;
    std::optional<idem::ChainReport> m_lastChain; // shown again in a new language
    QLabel* m_chain;
    AuditWitness* m_witness = nullptr;
    QLabel* m_witnessText;
    QPushButton* m_acceptTrail;
    PageStatusLine* m_statusLine;
    QTimer* m_follow;
};

} // namespace idem::console
