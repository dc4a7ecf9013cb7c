#pragma once

#include <QWidget>

#include "models/snapshotopener.h"
#include "views/auditentryview.h"

class QLabel;
class QPlainTextEdit;
class QTableView;
class QTableWidget;

namespace idem::console {

class SnapshotAuditModel;

// The snapshot's Audit page: the audit tail (newest first) with its bound and the chain head
// hash, the selected entry's reason and before/after diff (as the live Audit page shows it),
// and the tail's own hash chain rechecked offline.
class SnapshotAuditPage : public QWidget {
    Q_OBJECT
public:
    explicit SnapshotAuditPage(SharedSnapshot snapshot, QWidget* parent = nullptr);
    ~SnapshotAuditPage() override;

    SnapshotAuditModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    QLabel* headLabel() const { return m_head; }
    QLabel* tailCheckLabel() const { return m_check; }
    QLabel* entryTitle() const { return m_entry->title(); }
    QTableWidget* diffTable() const { return m_entry->diff(); }
    QPlainTextEdit* reasonView() const { return m_entry->reason(); }

private:
    void onSelection();

    SharedSnapshot m_snapshot;
    SnapshotAuditModel* m_model;
    QLabel* m_head;
    QLabel* m_check;
    QTableView* m_view;
    AuditEntryView* m_entry;
};

} // namespace idem::console
