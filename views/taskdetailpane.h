#pragma once

#include <QElapsedTimer>
#include <QWidget>

#include <optional>

#include "models/taskbrowserdetail.h"

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QProgressBar;
class QTabWidget;
class QTableWidget;
class QTimer;

namespace idem::console {

// The selected task: key parts, digest, status, attempts of max, lease countdown and owner
// token, next attempt, error class and message, error history, the result (a preview cut on
// the server, with "Save full result…" streaming the rest off the UI thread) and this key's
// audit entries.
class TaskDetailPane : public QWidget {
    Q_OBJECT
public:
    explicit TaskDetailPane(TaskDetailLoader* loader, QWidget* parent = nullptr);
    ~TaskDetailPane() override;

    void showKey(const QString& key); // loads it
    void clearDetail();
    // What the Save button does after asking for a file name.
    void saveResultTo(const QString& path);

    QString shownKey() const;
    QLineEdit* keyField() const { return m_key; }
    QPlainTextEdit* resultView() const { return m_result; }
    QLabel* resultInfo() const { return m_resultInfo; }
    QLabel* leaseField() const { return m_lease; }
    QPushButton* saveButton() const { return m_save; }
    QTableWidget* auditTable() const { return m_audit; }
    QPlainTextEdit* errorsView() const { return m_errors; }
    QTabWidget* tabs() const { return m_tabs; }

private:
    void onLoaded(const TaskDetailAnswer& answer);
    void updateLease();
    QLineEdit* field(const char* name);

    TaskDetailLoader* m_loader;
    QLabel* m_title;
    QLineEdit* m_key;
    QLineEdit* m_tenant;
    QLineEdit* m_operation;
    QLineEdit* m_business;
    QLineEdit* m_digest;
    QLineEdit* m_status;
    QLineEdit* m_attempts;
    QLabel* m_lease;
    QLineEdit* m_token;
    QLineEdit* m_next;
    QLineEdit* m_errorClass;
    QPlainTextEdit* m_errorMessage;
    QTabWidget* m_tabs;
    QPlainTextEdit* m_result;
    QLabel* m_resultInfo;
    QPushButton* m_save;
    QPushButton* m_cancelSave;
    QProgressBar* m_saveProgress;
    QPlainTextEdit* m_errors;
    QTableWidget* m_audit;
    QLabel* m_conflicts;
    QTimer* m_tick;
    QElapsedTimer m_sinceLoad;
    std::optional<std::int64_t> m_leaseLeftMs; // at load time, by the server clock
    QString m_pendingKey;
};

} // namespace idem::console
