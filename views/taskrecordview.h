#pragma once

#include <utility>
#include <vector>

#include <QObject>
#include <QString>

#include <string>

class QFormLayout;
class QLabel;
class QLayout;
class QLineEdit;
class QPlainTextEdit;
class QTabWidget;
class QTableWidget;
class QWidget;

namespace idem::console {

// The read-only widgets of one task record, shared by the live TaskDetailPane and the
// snapshot's SnapshotTaskPane: the title, the field form (key parts, digest, status, attempts,
// lease, owner token, next attempt, error class and message), and the Result / Error history /
// Audit tabs. Each pane adds its own rows and controls, then fills the fields from its own
// record type; the helpers below fill what both show the same way.
class TaskRecordView : public QObject {
    Q_OBJECT
public:
    // withTimes adds a "Created / updated" row after "Next attempt"; auditAtHeader heads the
    // audit table's first column.
    TaskRecordView(bool withTimes, const QString& auditAtHeader, QObject* parent);
    ~TaskRecordView() override;

    // The field form, for a pane to append rows to before install().
    QFormLayout* form() const { return m_form; }
    // Adds the three tabs. resultHeader goes above the result text; null puts resultInfo() there.
    void addTabs(QLayout* resultHeader, int resultStretch);
    // Lays title, form and tabs out in pane.
    void install(QWidget* pane);

    void clear();
    // Key, cursor at its start, and its tenant / operation / business id parts.
    void showKey(const QString& key);
    // The status, spelled out as uncertain when a retryable failure's error class is "unknown".
    void showStatus(const std::string& status, bool errorClassUnknown);
    void showAttempts(qint64 attempts, qint64 maxAttempts);
    void showNoResult();
    // The error history JSON, indented, and its entry count in the tab's title.
    void showErrorHistory(const std::string& errorsJson);
    void setAuditRowCount(int rows);
    // The Audit tab's count: n entries, or unreadable.
    static constexpr int unreadable = -2;
    void setAuditCount(int count);
    void setAuditRow(int row, const QString& at, const QString& action, const QString& actor, const QString& reason);

    QLabel* title() const { return m_title; }
    QLineEdit* key() const { return m_key; }
    QPlainTextEdit* digest() const { return m_digest; }
    // "v1:" and 64 hex digits: wrapped anywhere on two lines, not run off a narrow pane.
    void showDigest(const QString& digest);
    QLineEdit* status() const { return m_status; }
    QLabel* lease() const { return m_lease; }
    QLineEdit* token() const { return m_token; }
    QLineEdit* next() const { return m_next; }
    QLineEdit* times() const { return m_times; } // null without withTimes
    QLineEdit* errorClass() const { return m_errorClass; }
    QPlainTextEdit* errorMessage() const { return m_errorMessage; }
    QTabWidget* tabs() const { return m_tabs; }
    QPlainTextEdit* result() const { return m_result; }
    QLabel* resultInfo() const { return m_resultInfo; }
    QPlainTextEdit* errors() const { return m_errors; }
    QTableWidget* audit() const { return m_audit; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void retranslateTabs();
    void addRow(const char* title, QWidget* field);
    void addRow(const char* title, QLayout* field);
    int m_errorCount = -1; // -1: no record shown
    int m_auditCount = -1;
    QLabel* m_title;
    QLineEdit* m_key;
    QLineEdit* m_tenant;
    QLineEdit* m_operation;
    QLineEdit* m_business;
    QPlainTextEdit* m_digest;
    QLineEdit* m_status;
    QLineEdit* m_attempts;
    QLabel* m_lease;
    QLineEdit* m_token;
    QLineEdit* m_next;
    QLineEdit* m_times;
    QLineEdit* m_errorClass;
    QPlainTextEdit* m_errorMessage;
    QTabWidget* m_tabs;
    QPlainTextEdit* m_result;
    QLabel* m_resultInfo;
    QPlainTextEdit* m_errors;
    QTableWidget* m_audit;
    QFormLayout* m_form;
    std::vector<std::pair<QLabel*, const char*>> m_rowTitles; // the form's titles, by source text
};

} // namespace idem::console
