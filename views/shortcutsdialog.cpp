#include "views/shortcutsdialog.h"

#include <QAction>
#include <QStyle>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QSet>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace idem::console {

namespace {
    // "&Quit" → "Quit", "Save && close" → "Save & close", "Export…" stays.
    QString plain(QString text)
    {
        text.replace(QLatin1String("&&"), QStringLiteral("\x01"));
        text.remove(QLatin1Char('&'));
        text.replace(QStringLiteral("\x01"), QStringLiteral("&"));
        return text;
    }

    void walk(QMenu* menu, const QString& prefix, QList<ShortcutEntry>& out, QSet<QAction*>& seen)
    {
        const QString path
            = prefix.isEmpty() ? plain(menu->title()) : prefix + QStringLiteral(" › ") + plain(menu->title());
        const auto actions = menu->actions();
        for (QAction* a : actions) {
            if (a->isSeparator())
                continue;
            if (a->menu()) {
                walk(a->menu(), path, out, seen);
                continue;
            }
            seen.insert(a);
            if (!a->shortcuts().isEmpty())
                out.append({ a, path + QStringLiteral(" › ") + plain(a->text()), a->shortcuts() });
        }
    }
} // namespace

QList<ShortcutEntry> collectShortcuts(QMainWindow* window)
{
    QList<ShortcutEntry> out;
    QSet<QAction*> seen;
    const auto top = window->menuBar()->actions();
    for (QAction* a : top) {
        if (a->menu())
            walk(a->menu(), QString(), out, seen);
    }
    // Actions on the window itself (keys with no menu entry), and those of its widgets.
    const auto all = window->findChildren<QAction*>();
    for (QAction* a : all) {
        if (seen.contains(a) || a->shortcuts().isEmpty() || a->menu())
            continue;
        seen.insert(a);
        out.append({ a, plain(a->text()), a->shortcuts() });
    }
    return out;
}

ShortcutsDialog::ShortcutsDialog(QMainWindow* window, QWidget* parent)
    : QDialog(parent)
    , m_table(new QTableWidget)
{
    setObjectName(QStringLiteral("shortcutsDialog"));
    setWindowTitle(tr("Keyboard shortcuts"));
    const auto entries = collectShortcuts(window);
    m_table->setObjectName(QStringLiteral("shortcutsTable"));
    m_table->setColumnCount(2);
    m_table->setHorizontalHeaderLabels({ tr("Action"), tr("Shortcut") });
    m_table->setRowCount(int(entries.size()));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    for (int row = 0; row < entries.size(); ++row) {
        const auto& e = entries.at(row);
        QStringList keys;
        for (const auto& k : e.keys)
            keys << k.toString(QKeySequence::NativeText);
        m_table->setItem(row, 0, new QTableWidgetItem(e.path));
        m_table->setItem(row, 1, new QTableWidgetItem(keys.join(QStringLiteral(", "))));
    }
    // Measured over every row: resizeColumnsToContents() looks only at the rows a not yet shown
    // table has room for, and the longer menu paths below them were cut.
    int widths[2] = { 0, 0 };
    const QFontMetrics fm(m_table->font());
    const int margin = 2 * m_table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, m_table) + 16;
    for (int c = 0; c < 2; ++c) {
        widths[c] = fm.horizontalAdvance(m_table->horizontalHeaderItem(c)->text()) + margin;
        for (int row = 0; row < m_table->rowCount(); ++row)
            widths[c] = std::max(widths[c], fm.horizontalAdvance(m_table->item(row, c)->text()) + margin);
    }
    m_table->setColumnWidth(0, widths[0]);
    m_table->setColumnWidth(1, widths[1]);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_table);
    layout->addWidget(buttons);
    const int frame = 2 * m_table->frameWidth() + m_table->style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 32;
    resize(std::max(520, widths[0] + widths[1] + frame), 460);
}

} // namespace idem::console
