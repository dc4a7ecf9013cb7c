#pragma once

#include <QWidget>

#include "models/snapshotopener.h"

class QLabel;
class QLineEdit;
class QListWidget;
class QSortFilterProxyModel;
class QStackedWidget;
class QTableView;
class QTableWidget;

namespace idem::console {

class SnapshotTaskModel;
class SnapshotTaskPane;

// The snapshot's Tasks page: its row sets (each with its predicate, order, bound and "N of
// TOTAL"), the selected set's rows and the selected row's detail; and the recent digest
// conflicts, which are counters, not rows. Read-only: no recovery actions.
class SnapshotTasksPage : public QWidget {
    Q_OBJECT
public:
    static constexpr const char* conflictsSet = "recent_conflicts";

    explicit SnapshotTasksPage(SharedSnapshot snapshot, QWidget* parent = nullptr);
    ~SnapshotTasksPage() override;

    // Shows the set (a row set's name or conflictsSet); false when the snapshot has none by that name.
    bool selectSet(const QString& name);
    QString currentSet() const;

    QListWidget* setList() const { return m_sets; }
    QLabel* setInfo() const { return m_info; }
    QTableView* table() const { return m_table; }
    QTableWidget* conflictsTable() const { return m_conflicts; }
    SnapshotTaskModel* model() const { return m_model; }
    SnapshotTaskPane* detail() const { return m_detail; }

    // A row set's name for people ("expired_leases" -> "Expired leases").
    static QString setTitle(const QString& name);

private:
    void onSet();
    void onRow();

    SharedSnapshot m_snapshot;
    QListWidget* m_sets;
    QLabel* m_info;
    QLineEdit* m_filter;
    QStackedWidget* m_stack;
    QTableView* m_table;
    QTableWidget* m_conflicts;
    SnapshotTaskModel* m_model;
    QSortFilterProxyModel* m_proxy;
    SnapshotTaskPane* m_detail;
    qint64 m_takenAtMs = 0;
};

} // namespace idem::console
