#pragma once

#include "operations/audit.h"
#include "models/rowtablemodel.h"
#include "models/snapshotopener.h"

namespace idem::console {

// A snapshot's audit tail, newest first, read-only; and the offline check of the tail's own
// hash chain (each entry's hash recomputed, each link to the entry below it).
class SnapshotAuditModel : public RowTableModel<idem::SnapshotAuditEntry> {
    Q_OBJECT
public:
    enum Column { IdColumn, AtColumn, KeyColumn, ActionColumn, ActorColumn, ReasonColumn, COLUMN_COUNT };
    enum Role { IdRole = Qt::UserRole };

    explicit SnapshotAuditModel(QObject* parent = nullptr);
    ~SnapshotAuditModel() override;

    void setSnapshot(const SharedSnapshot& snapshot);
    const idem::SnapshotAuditEntry& entry(int row) const;

protected:
    QVariant rowData(const idem::SnapshotAuditEntry& e, int column, int role) const override;
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
