#pragma once

#include <QStyledItemDelegate>

namespace idem::console {

// A column that elides where its own text keeps what matters, whatever the view does for the
// others: an error message from the right (its beginning says what failed), a key from the left
// (its end, the business id, tells keys apart).
class ElideDelegate : public QStyledItemDelegate {
public:
    ElideDelegate(Qt::TextElideMode mode, QObject* parent)
        : QStyledItemDelegate(parent)
        , m_mode(mode)
    {
    }

    Qt::TextElideMode mode() const { return m_mode; }

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        option->textElideMode = m_mode;
    }

private:
    Qt::TextElideMode m_mode;
};

} // namespace idem::console
