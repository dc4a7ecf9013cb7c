#pragma once

#include <QDialog>

#include "operations/taskfilter.h"

class QLabel;
class QTableWidget;

namespace idem::console {

class ConsoleSession;

// A tile's rows when the console has no task browser page: the newest 100 under the tile's
// filter, read through the monitor session's worker.
class DashboardRowsDialog : public QDialog {
    Q_OBJECT
public:
    static constexpr int rowLimit = 100;

    DashboardRowsDialog(
        ConsoleSession* session, const idem::TaskFilter& filter, const QString& title, QWidget* parent = nullptr);

    QTableWidget* table() const { return m_table; }
    QString statusText() const;

Q_SIGNALS:
    void loaded();

private:
    QTableWidget* m_table;
    QLabel* m_status;
};

} // namespace idem::console
