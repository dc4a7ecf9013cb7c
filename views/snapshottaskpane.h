#pragma once

#include <QWidget>

#include <vector>

#include "operations/snapshot.h"
#include "views/taskrecordview.h"

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
    QLabel* title() const { return m_view->title(); }
    QLineEdit* keyField() const { return m_view->key(); }
    QLabel* leaseField() const { return m_view->lease(); }
    QPlainTextEdit* resultView() const { return m_view->result(); }
    QLabel* resultInfo() const { return m_view->resultInfo(); }
    QPlainTextEdit* errorsView() const { return m_view->errors(); }
    QTableWidget* auditTable() const { return m_view->audit(); }
    QTabWidget* tabs() const { return m_view->tabs(); }

    // Results longer than this many characters show their beginning (the full text is in the
    // bundle's snapshot.json and CSV).
    static constexpr int previewChars = 64 * 1024;

private:
    TaskRecordView* m_view;
};

} // namespace idem::console
