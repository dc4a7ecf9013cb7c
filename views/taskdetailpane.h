#pragma once

#include <QElapsedTimer>
#include <QWidget>

#include <optional>

#include "models/taskbrowserdetail.h"
#include "views/taskrecordview.h"

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
    QLineEdit* keyField() const { return m_view->key(); }
    QPlainTextEdit* resultView() const { return m_view->result(); }
    QLabel* resultInfo() const { return m_view->resultInfo(); }
    QLabel* leaseField() const { return m_view->lease(); }
    QPushButton* saveButton() const { return m_save; }
    QTableWidget* auditTable() const { return m_view->audit(); }
    QPlainTextEdit* errorsView() const { return m_view->errors(); }
    QTabWidget* tabs() const { return m_view->tabs(); }
    // Schema v25: the key's re-executions (newest first) and whether a request is stored.
    QTableWidget* redriveTable() const { return m_redriveTable; }
    QLabel* requestInfo() const { return m_requestInfo; }
    QPlainTextEdit* requestView() const { return m_requestView; }
    int redriveTab() const { return m_redriveTab; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void onLoaded(const TaskDetailAnswer& answer);
    void updateLease();
    void showConflicts(const idem::TaskDetail& detail);
    void showRedrive();

    TaskDetailLoader* m_loader;
    TaskRecordView* m_view;
    QPushButton* m_save;
    QPushButton* m_cancelSave;
    QProgressBar* m_saveProgress;
    QLabel* m_conflicts;
    QWidget* m_redrivePage;
    QLabel* m_requestInfo;
    QPlainTextEdit* m_requestView;
    QTableWidget* m_redriveTable;
    int m_redriveTab = -1;
    QTimer* m_tick;
    QElapsedTimer m_sinceLoad;
    std::optional<std::int64_t> m_leaseLeftMs; // at load time, by the server clock
    QString m_pendingKey;
};

} // namespace idem::console
