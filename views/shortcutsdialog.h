#pragma once

#include <QDialog>
#include <QKeySequence>
#include <QList>

class QAction;
class QMainWindow;
class QTableWidget;

namespace idem::console {

// One action a key reaches: where it is ("View › Tasks"), its keys.
struct ShortcutEntry {
    QAction* action = nullptr;
    QString path;
    QList<QKeySequence> keys;
};

// Every action with a shortcut in `window`: its menu bar walked menu by menu (submenus
// included), then the window's own actions that are in no menu. Built from the actions
// themselves, so an action added later is listed without anyone editing a table.
QList<ShortcutEntry> collectShortcuts(QMainWindow* window);

// Help > Keyboard shortcuts: the table of collectShortcuts(), in the current language.
class ShortcutsDialog : public QDialog {
    Q_OBJECT
public:
    explicit ShortcutsDialog(QMainWindow* window, QWidget* parent = nullptr);

    QTableWidget* table() const { return m_table; }

private:
    QTableWidget* m_table;
};

} // namespace idem::console
