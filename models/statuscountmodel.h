#pragma once

#include <QAbstractTableModel>

#include "models/snapshots.h"

namespace idem::console {

// Rows per status in task_idempotency. Snapshots merge in row by row so a selection or a
// scroll position survives each poll.
class StatusCountModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { StatusColumn, RowsColumn, ShareColumn, COLUMN_COUNT };
    enum Role { StatusRole = Qt::UserRole, RowsRole };

    explicit StatusCountModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    qint64 total() const { return m_total; }

public Q_SLOTS:
    void setCounts(const idem::console::StatusCounts& counts);
    void clear();

private:
    QList<StatusCount> m_rows;
    qint64 m_total = 0;
};

} // namespace idem::console
