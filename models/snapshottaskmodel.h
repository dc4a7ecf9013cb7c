#pragma once

#include "models/rowtablemodel.h"
#include "models/snapshotopener.h"

namespace idem::console {

// One row set of a snapshot (expired leases, longest running, failed, uncertain), read-only, in
// the set's own order. Times are UTC as the snapshot holds them; the lease is measured against
// the snapshot's instant, not the viewer's clock.
class SnapshotTaskModel : public RowTableModel<idem::SnapshotTaskRow> {
    Q_OBJECT
public:
    enum Column {
        KeyColumn,
        StatusColumn,
        AttemptsColumn,
        LeaseColumn,
        NextAttemptColumn,
        CreatedColumn,
        UpdatedColumn,
        ErrorClassColumn,
        ErrorColumn,
        COLUMN_COUNT
    };
    enum Role { KeyRole = Qt::UserRole, SortRole };

    explicit SnapshotTaskModel(QObject* parent = nullptr);
    ~SnapshotTaskModel() override;

    // The set named `name` of the snapshot (none: empty).
    void setRowSet(const SharedSnapshot& snapshot, const QString& name);
    const idem::SnapshotRowSet* rowSet() const { return m_set; }
    const idem::SnapshotTaskRow& task(int row) const { return m_rows[static_cast<std::size_t>(row)]; }

protected:
    QVariant rowData(const idem::SnapshotTaskRow& r, int column, int role) const override;

private:
    SharedSnapshot m_snapshot; // keeps m_set alive
    const idem::SnapshotRowSet* m_set = nullptr;
    qint64 m_takenAtMs = 0;
};

// UTC text of a snapshot timestamp ("2024-05-01 10:00:00"), empty for none.
QString snapshotTimeCell(const std::optional<std::string>& iso);
// A lease as of the snapshot's instant: "4 m 10 s left", "expired 3 m before", "none".
QString snapshotLeaseText(const idem::SnapshotTaskRow& row, qint64 takenAtMs);

} // namespace idem::console
