#pragma once

#include <QDialog>

#include "operations/taskfilter.h"
#include "operations/tasklist.h"
#include "models/livetext.h"

#include <optional>

class QLabel;
class QTableWidget;

namespace idem::console {

class ConsoleSession;

// A tile's rows when the console has no task browser page: how many rows the tile's filter
// selects (countTasks, the Tasks page's count) and the newest 100 of them (listTasks), read
// through the monitor session's worker; `what` says in words which rows they are.
class DashboardRowsDialog : public QDialog {
    Q_OBJECT
public:
    static constexpr int rowLimit = 100;

    DashboardRowsDialog(ConsoleSession* session, const idem::TaskFilter& filter, const QString& title,
        const LiveText& what = {}, const std::optional<idem::TaskSort>& sort = std::nullopt,
        QWidget* parent = nullptr);

    QTableWidget* table() const { return m_table; }
    QString statusText() const;
    // How many rows the filter selects (-1 until read): exact, or the planner's estimate.
    qint64 matched() const { return m_matched; }

Q_SIGNALS:
    void loaded();

private:
    QTableWidget* m_table;
    QLabel* m_status;
    qint64 m_matched = -1;
};

} // namespace idem::console
