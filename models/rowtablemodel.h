#pragma once

#include <QAbstractTableModel>
#include <QCoreApplication>

#include <functional>
#include <utility>
#include <vector>

namespace idem::console {

// One column of a RowTableModel: its header, and what its cells say for each role, each a
// function of the row. A role left empty says nothing. The header is translated in the model's
// own context, so the model writes it QT_TR_NOOP("...") in one of its member functions.
template <typename Row>
struct TableColumn {
    using Cell = std::function<QVariant(const Row&)>;
    const char* header = nullptr;
    Cell display;
    Cell toolTip {};
    Cell foreground {};
    // What the model's sort role says (setSortRole); unset: the display text.
    Cell sortKey {};
    Qt::Alignment alignment {};
};

// A table over a vector of rows whose columns are stated once, as a table of TableColumn, so a
// model writes no rowCount / columnCount / headerData / data of its own (hotspot's models repeat
// them, and ours had drifted: one checked the parent, one not). A model derives from
// RowTableModel<ItsRow> (with Q_OBJECT: tr() and the header's context are its own), fills
// m_rows under the usual begin/end calls, and states its columns in its constructor; roles no
// column states (a row's id, a tooltip the whole row shares, a font) come from rowData().
template <typename Row>
class RowTableModel : public QAbstractTableModel {
public:
    int rowCount(const QModelIndex& parent = {}) const override
    {
        return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
    }
    int columnCount(const QModelIndex& parent = {}) const override
    {
        return parent.isValid() ? 0 : static_cast<int>(m_columns.size());
    }

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override
    {
        if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= columnCount())
            return {};
        return QCoreApplication::translate(metaObject()->className(), m_columns[std::size_t(section)].header);
    }

    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override
    {
        if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
            return {};
        const Row& row = m_rows[std::size_t(index.row())];
        if (QVariant v = rowData(row, index.column(), role); v.isValid())
            return v;
        const TableColumn<Row>& column = m_columns[std::size_t(index.column())];
        const auto say = [&row](const typename TableColumn<Row>::Cell& cell) { return cell ? cell(row) : QVariant(); };
        switch (role) {
        case Qt::DisplayRole:
            return say(column.display);
        case Qt::ToolTipRole:
            return say(column.toolTip);
        case Qt::ForegroundRole:
            return say(column.foreground);
        case Qt::TextAlignmentRole:
            return column.alignment ? QVariant(column.alignment) : QVariant();
        default:
            break;
        }
        if (m_sortRole >= 0 && role == m_sortRole)
            return column.sortKey ? column.sortKey(row) : say(column.display);
        return {};
    }

protected:
    explicit RowTableModel(QObject* parent = nullptr)
        : QAbstractTableModel(parent)
    {
    }

    // Called once, from the model's constructor (the cells may capture `this`).
    void setColumns(std::vector<TableColumn<Row>> columns) { m_columns = std::move(columns); }
    // The role under which each column's sortKey answers (a proxy's sortRole).
    void setSortRole(int role) { m_sortRole = role; }
    // Asked first for every cell: an answer that is not invalid is the cell's; invalid lets the
    // column say.
    virtual QVariant rowData(const Row& row, int column, int role) const
    {
        Q_UNUSED(row);
        Q_UNUSED(column);
        Q_UNUSED(role);
        return {};
    }
    // Every column of `row` changed.
    void rowsChanged(int first, int last) { Q_EMIT dataChanged(index(first, 0), index(last, columnCount() - 1)); }

    std::vector<Row> m_rows;

private:
    std::vector<TableColumn<Row>> m_columns;
    int m_sortRole = -1;
};

} // namespace idem::console
