#pragma once

#include <QWidget>

#include <vector>

#include "core/snapshot.h"

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTabWidget;
class QTableWidget;

namespace idem::console {

// The read-only detail of one task row of a snapshot: the live TaskDetailPane's fields and tabs
// (result, error history, audit) from the row as the snapshot holds it, with no database, no
// save-to-file round trip and no lease countdown: the lease is stated as of the snapshot.
class SnapshotTaskPane : public QWidget {
    Q_OBJECT
public:
    explicit SnapshotTaskPane(QWidget* parent = nullptr);
    ~SnapshotTaskPane() override;

    // audit: the entries of the snapshot's audit tail for this key, newest first.
    void showRow(const idem::SnapshotTaskRow& row, qint64 takenAtMs,
        const std::vector<const idem::SnapshotAuditEntry*>& audit, bool redacted);
    void clearDetail();

    QString shownKey() const;
    QLabel* title() const { return m_title; }
    QLineEdit* keyField() const { return m_key; }
    QLabel* leaseField() const { return m_lease; }
    QPlainTextEdit* resultView() const { return m_result; }
    QLabel* resultInfo() const { return m_resultInfo; }
    QPlainTextEdit* errorsView() const { return m_errors; }
    QTableWidget* auditTable() const { return m_audit; }
    QTabWidget* tabs() const { return m_tabs; }

    // Results longer than this many characters show their beginning (the full text is in the
    // bundle's snapshot.json and CSV).
    static constexpr int previewChars = 64 * 1024;

private:
    QLineEdit* field(const char* name);

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
    QLineEdit* m_times;
    QLineEdit* m_errorClass;
    QPlainTextEdit* m_errorMessage;
    QTabWidget* m_tabs;
    QPlainTextEdit* m_result;
    QLabel* m_resultInfo;
    QPlainTextEdit* m_errors;
    QTableWidget* m_audit;
};

} // namespace idem::console
