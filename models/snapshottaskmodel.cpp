#include "models/snapshottaskmodel.h"

#include "models/durationtext.h"
#include "operations/tasklist.h"
#include "models/taskbrowsermodel.h"

namespace idem::console {

QString snapshotTimeCell(const std::optional<std::string>& iso)
{
    if (!iso || iso->empty())
        return {};
    // "YYYY-MM-DDTHH:MM:SS.ffffffZ": to the second, as people read it in a table.
    QString s = QString::fromStdString(*iso).left(19);
    s.replace(QLatin1Char('T'), QLatin1Char(' '));
    return s;
}

QString snapshotLeaseText(const idem::SnapshotTaskRow& row, qint64 takenAtMs)
{
    if (!row.leaseUntil)
        return row.status == "processing" ? SnapshotTaskModel::tr("none (expired)") : QString();
    const auto us = idem::parseIsoMicros(*row.leaseUntil);
    if (!us || takenAtMs == 0)
        return snapshotTimeCell(row.leaseUntil);
    const qint64 left = *us / 1000 - takenAtMs;
    return left > 0 ? SnapshotTaskModel::tr("%1 left").arg(durationText(double(left)))
                    : SnapshotTaskModel::tr("expired %1 before").arg(durationText(double(-left)));
}

SnapshotTaskModel::SnapshotTaskModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

SnapshotTaskModel::~SnapshotTaskModel() = default;

void SnapshotTaskModel::setRowSet(const SharedSnapshot& snapshot, const QString& name)
{
    beginResetModel();
    m_snapshot = snapshot;
    m_set = snapshot ? snapshot->data.rowSet(name.toStdString()) : nullptr;
    const QDateTime at = snapshot ? snapshotTakenAt(snapshot->data) : QDateTime();
    m_takenAtMs = at.isValid() ? at.toMSecsSinceEpoch() : 0;
    endResetModel();
}

int SnapshotTaskModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_set ? 0 : static_cast<int>(m_set->rows.size());
}

int SnapshotTaskModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : COLUMN_COUNT; }

QVariant SnapshotTaskModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& r = task(index.row());
    if (role == KeyRole)
        return QString::fromStdString(r.key);
    if (role == Qt::ToolTipRole) {
        switch (index.column()) {
        case LeaseColumn:
            return r.leaseUntil ? QString::fromStdString(*r.leaseUntil) : QVariant();
        case NextAttemptColumn:
            return r.nextAttemptAt ? QString::fromStdString(*r.nextAttemptAt) : QVariant();
        case CreatedColumn:
            return QString::fromStdString(r.createdAt);
        case UpdatedColumn:
            return QString::fromStdString(r.updatedAt);
        case ErrorColumn:
        case KeyColumn:
            return data(index, Qt::DisplayRole);
        default:
            return {};
        }
    }
    if (role == SortRole) {
        switch (index.column()) {
        case AttemptsColumn:
            return r.attempts;
        case LeaseColumn:
            return QString::fromStdString(r.leaseUntil.value_or(std::string()));
        case NextAttemptColumn:
            return QString::fromStdString(r.nextAttemptAt.value_or(std::string()));
        case CreatedColumn:
            return QString::fromStdString(r.createdAt);
        case UpdatedColumn:
            return QString::fromStdString(r.updatedAt);
        default:
            return data(index, Qt::DisplayRole);
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case KeyColumn:
        return QString::fromStdString(r.key);
    case StatusColumn:
        return statusLabel(r.status);
    case AttemptsColumn:
        return tr("%1 of %2").arg(r.attempts).arg(r.maxAttempts);
    case LeaseColumn:
        return snapshotLeaseText(r, m_takenAtMs);
    case NextAttemptColumn:
        return snapshotTimeCell(r.nextAttemptAt);
    case CreatedColumn:
        return snapshotTimeCell(r.createdAt);
    case UpdatedColumn:
        return snapshotTimeCell(r.updatedAt);
    case ErrorClassColumn:
        return QString::fromStdString(r.errorClass.value_or(std::string()));
    case ErrorColumn: {
        // One line in the table; the detail pane shows it whole.
        QString e = QString::fromStdString(r.errorMessage.value_or(std::string())).left(300);
        e.replace(QLatin1Char('\n'), QLatin1Char(' '));
        return e;
    }
    }
    return {};
}

QVariant SnapshotTaskModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case KeyColumn:
        return tr("Key");
    case StatusColumn:
        return tr("Status");
    case AttemptsColumn:
        return tr("Attempts");
    case LeaseColumn:
        return tr("Lease (at snapshot)");
    case NextAttemptColumn:
        return tr("Next attempt (UTC)");
    case CreatedColumn:
        return tr("Created (UTC)");
    case UpdatedColumn:
        return tr("Updated (UTC)");
    case ErrorClassColumn:
        return tr("Error class");
    case ErrorColumn:
        return tr("Error");
    }
    return {};
}

} // namespace idem::console
