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
    : RowTableModel(parent)
{
    using R = idem::SnapshotTaskRow;
    const auto key = [](const R& r) { return QString::fromStdString(r.key); };
    const auto created = [](const R& r) { return QString::fromStdString(r.createdAt); };
    const auto updated = [](const R& r) { return QString::fromStdString(r.updatedAt); };
    const auto error = [](const R& r) {
        // One line in the table; the detail pane shows it whole.
        QString e = QString::fromStdString(r.errorMessage.value_or(std::string())).left(300);
        e.replace(QLatin1Char('\n'), QLatin1Char(' '));
        return e;
    };
    setColumns({
        { QT_TR_NOOP("Key"), key, key },
        { QT_TR_NOOP("Status"), [](const R& r) { return statusLabel(r.status); } },
        { .header = QT_TR_NOOP("Attempts"),
            .display = [](const R& r) { return tr("%1 of %2").arg(r.attempts).arg(r.maxAttempts); },
            .sortKey = [](const R& r) -> QVariant { return r.attempts; } },
        { .header = QT_TR_NOOP("Lease (at snapshot)"),
            .display = [this](const R& r) { return snapshotLeaseText(r, m_takenAtMs); },
            .toolTip = [](const R& r) { return r.leaseUntil ? QString::fromStdString(*r.leaseUntil) : QVariant(); },
            .sortKey = [](const R& r) { return QString::fromStdString(r.leaseUntil.value_or(std::string())); } },
        { .header = QT_TR_NOOP("Next attempt (UTC)"),
            .display = [](const R& r) { return snapshotTimeCell(r.nextAttemptAt); },
            .toolTip
            = [](const R& r) { return r.nextAttemptAt ? QString::fromStdString(*r.nextAttemptAt) : QVariant(); },
            .sortKey = [](const R& r) { return QString::fromStdString(r.nextAttemptAt.value_or(std::string())); } },
        { .header = QT_TR_NOOP("Created (UTC)"),
            .display = [](const R& r) { return snapshotTimeCell(r.createdAt); },
            .toolTip = created,
            .sortKey = created },
        { .header = QT_TR_NOOP("Updated (UTC)"),
            .display = [](const R& r) { return snapshotTimeCell(r.updatedAt); },
            .toolTip = updated,
            .sortKey = updated },
        { QT_TR_NOOP("Error class"),
            [](const R& r) { return QString::fromStdString(r.errorClass.value_or(std::string())); } },
        { QT_TR_NOOP("Error"), error, error },
    });
    setSortRole(SortRole);
}

SnapshotTaskModel::~SnapshotTaskModel() = default;

void SnapshotTaskModel::setRowSet(const SharedSnapshot& snapshot, const QString& name)
{
    beginResetModel();
    m_snapshot = snapshot;
    m_set = snapshot ? snapshot->data.rowSet(name.toStdString()) : nullptr;
    m_rows = m_set ? m_set->rows : std::vector<idem::SnapshotTaskRow>();
    const QDateTime at = snapshot ? snapshotTakenAt(snapshot->data) : QDateTime();
    m_takenAtMs = at.isValid() ? at.toMSecsSinceEpoch() : 0;
    endResetModel();
}

QVariant SnapshotTaskModel::rowData(const idem::SnapshotTaskRow& r, int, int role) const
{
    return role == KeyRole ? QVariant(QString::fromStdString(r.key)) : QVariant();
}

} // namespace idem::console
