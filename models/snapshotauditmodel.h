#pragma once

#include <QAbstractTableModel>

#include "operations/audit.h"
#include "models/snapshotopener.h"

namespace idem::console {

// A snapshot's audit tail, newest first, read-only; and the offline check of the tail's own
// hash chain (each entry's hash recomputed, each link to the entry below it).
class SnapshotAuditModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { IdColumn, AtColumn, KeyColumn, ActionColumn, ActorColumn, ReasonColumn, COLUMN_COUNT };
    enum Role { IdRole = Qt::UserRole };

    explicit SnapshotAuditModel(QObject* parent = nullptr);
    ~SnapshotAuditModel() override;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void setSnapshot(const SharedSnapshot& snapshot);
    const idem::SnapshotAuditEntry& entry(int row) const;

private:
    SharedSnapshot m_snapshot;
};

// The tail as operations/audit.h's AuditEntry (hashable).
idem::AuditEntry toAuditEntry(const idem::SnapshotAuditEntry& e);

struct TailCheck {
    bool ok = true;
    bool hashesChecked = false; // false when the images were redacted (their hashes cannot match)
    int linksChecked = 0;
    QString text; // one line for people
};
TailCheck checkAuditTail(const idem::SnapshotData& data);

} // namespace idem::console
