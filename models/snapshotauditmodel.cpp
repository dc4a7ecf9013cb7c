#include "models/snapshotauditmodel.h"

#include "operations/audit.h"
#include "operations/tasklist.h"
#include "models/snapshottaskmodel.h"

namespace idem::console {

SnapshotAuditModel::SnapshotAuditModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

SnapshotAuditModel::~SnapshotAuditModel() = default;

void SnapshotAuditModel::setSnapshot(const SharedSnapshot& snapshot)
{
    beginResetModel();
    m_snapshot = snapshot;
    endResetModel();
}

const idem::SnapshotAuditEntry& SnapshotAuditModel::entry(int row) const
{
    return m_snapshot->data.audit.tail[static_cast<std::size_t>(row)];
}

int SnapshotAuditModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_snapshot ? 0 : static_cast<int>(m_snapshot->data.audit.tail.size());
}

int SnapshotAuditModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : COLUMN_COUNT; }

QVariant SnapshotAuditModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& e = entry(index.row());
    if (role == IdRole)
        return qlonglong(e.id);
    if (role == Qt::ToolTipRole && (index.column() == ReasonColumn || index.column() == KeyColumn))
        return data(index, Qt::DisplayRole);
    if (role == Qt::ToolTipRole && index.column() == AtColumn)
        return QString::fromStdString(e.at);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case IdColumn:
        return qlonglong(e.id);
    case AtColumn:
        return snapshotTimeCell(e.at);
    case KeyColumn:
        return QString::fromStdString(e.key);
    case ActionColumn:
        return QString::fromStdString(e.action);
    case ActorColumn:
        return tr("%1 (%2)").arg(QString::fromStdString(e.dbRole), QString::fromStdString(e.osUser));
    case ReasonColumn: {
        QString r = QString::fromStdString(e.reason).left(300);
        r.replace(QLatin1Char('\n'), QLatin1Char(' '));
        return r;
    }
    }
    return {};
}

QVariant SnapshotAuditModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case IdColumn:
        return tr("#");
    case AtColumn:
        return tr("At (UTC)");
    case KeyColumn:
        return tr("Key");
    case ActionColumn:
        return tr("Action");
    case ActorColumn:
        return tr("Actor (role, OS user)");
    case ReasonColumn:
        return tr("Reason");
    }
    return {};
}

idem::AuditEntry toAuditEntry(const idem::SnapshotAuditEntry& e)
{
    idem::AuditEntry a;
    a.id = e.id;
    a.atUs = idem::parseIsoMicros(e.at).value_or(0);
    a.key = e.key;
    a.action = e.action;
    a.reason = e.reason;
    a.dbRole = e.dbRole;
    a.osUser = e.osUser;
    a.clientHost = e.clientHost;
    a.application = e.application.value_or(std::string());
    a.beforeImage = e.beforeImage;
    a.afterImage = e.afterImage;
    a.prevHash = e.prevHash;
    a.entryHash = e.entryHash;
    return a;
}

TailCheck checkAuditTail(const idem::SnapshotData& data)
{
    TailCheck c;
    const auto& tail = data.audit.tail; // newest first
    if (tail.empty()) {
        c.text = SnapshotAuditModel::tr("The audit was empty when the snapshot was taken.");
        return c;
    }
    // Redaction rewrites the images, so their hashes cannot match; the links still can.
    c.hashesChecked = !data.redacted;
    for (std::size_t i = 0; i < tail.size(); ++i) {
        const auto& e = tail[i];
        if (c.hashesChecked && idem::auditEntryHash(toAuditEntry(e)) != e.entryHash) {
            c.ok = false;
            c.text = SnapshotAuditModel::tr("Entry #%1 does not hash to its entry_hash: it was edited.").arg(e.id);
            return c;
        }
        if (i + 1 < tail.size()) {
            const auto& older = tail[i + 1];
            if (older.id != e.id - 1 || e.prevHash != older.entryHash) {
                c.ok = false;
                c.text = SnapshotAuditModel::tr("The link from entry #%1 to #%2 is broken.").arg(e.id).arg(older.id);
                return c;
            }
            ++c.linksChecked;
        }
    }
    if (data.audit.headId && *data.audit.headId != tail.front().id) {
        c.ok = false;
        c.text
            = SnapshotAuditModel::tr("The chain head #%1 is not the newest entry of the tail.").arg(*data.audit.headId);
        return c;
    }
    c.text = c.hashesChecked
        ? SnapshotAuditModel::tr("Tail entries checked offline: %1; every hash and link is correct.").arg(tail.size())
        : SnapshotAuditModel::tr(
            "Tail entries checked offline: %1; every link is correct (hashes not rechecked: the images are redacted).")
              .arg(tail.size());
    return c;
}

} // namespace idem::console
