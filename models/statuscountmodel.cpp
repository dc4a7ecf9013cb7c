#include "models/statuscountmodel.h"

#include <QLocale>

#include <algorithm>

namespace idem::console {

StatusCountModel::StatusCountModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

int StatusCountModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int StatusCountModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : COLUMN_COUNT; }

QVariant StatusCountModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& row = m_rows.at(index.row());
    switch (role) {
    case StatusRole:
        return row.status;
    case RowsRole:
        return row.rows;
    case Qt::TextAlignmentRole:
        return index.column() == StatusColumn ? QVariant() : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::DisplayRole:
        switch (index.column()) {
        case StatusColumn:
            return row.status;
        case RowsColumn:
            return QLocale().toString(row.rows);
        case ShareColumn:
            if (m_total == 0)
                return QStringLiteral("–");
            return QStringLiteral("%1 %").arg(QLocale().toString(100.0 * double(row.rows) / double(m_total), 'f', 1));
        }
        break;
    }
    return {};
}

QVariant StatusCountModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case StatusColumn:
        return QStringLiteral("Status");
    case RowsColumn:
        return QStringLiteral("Rows");
    case ShareColumn:
        return QStringLiteral("Share");
    }
    return {};
}

void StatusCountModel::setCounts(const StatusCounts& counts)
{
    const bool totalChanged = counts.total != m_total;
    m_total = counts.total;
    const auto& incoming = counts.counts;

    // Statuses that vanished go first, from the back so indexes stay valid.
    for (int i = int(m_rows.size()) - 1; i >= 0; --i) {
        const bool kept = std::any_of(
            incoming.begin(), incoming.end(), [&](const StatusCount& c) { return c.status == m_rows.at(i).status; });
        if (!kept) {
            beginRemoveRows({}, i, i);
            m_rows.removeAt(i);
            endRemoveRows();
        }
    }
    for (const auto& c : incoming) {
        const auto it
            = std::find_if(m_rows.begin(), m_rows.end(), [&](const StatusCount& r) { return r.status == c.status; });
        if (it == m_rows.end()) {
            const int at = int(m_rows.size());
            beginInsertRows({}, at, at);
            m_rows.append(c);
            endInsertRows();
            continue;
        }
        const int at = int(it - m_rows.begin());
        if (it->rows != c.rows) {
            it->rows = c.rows;
            Q_EMIT dataChanged(index(at, RowsColumn), index(at, RowsColumn), { Qt::DisplayRole, RowsRole });
        }
    }
    // Every share depends on the total.
    if (totalChanged && !m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, ShareColumn), index(int(m_rows.size()) - 1, ShareColumn), { Qt::DisplayRole });
}

void StatusCountModel::clear()
{
    if (m_rows.isEmpty())
        return;
    beginResetModel();
    m_rows.clear();
    m_total = 0;
    endResetModel();
}

} // namespace idem::console
