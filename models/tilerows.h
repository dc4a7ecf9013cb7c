#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>

#include <optional>
#include <vector>

#include "models/sessionrequest.h"
#include "operations/tasklist.h"

namespace idem::console {

class ConsoleSession;

// A tile's rows when the console has no task browser page: how many rows its filter selects
// (countTasks, the Tasks page's count) and the first `limit` of them in the tile's order, else
// newest first (listTasks), from one job on the session's worker thread.
struct TileRows {
    idem::TaskCount count;
    std::vector<idem::TaskRow> rows;
};

class TileRowsRead : public QObject {
    Q_OBJECT
public:
    explicit TileRowsRead(ConsoleSession* session, QObject* parent = nullptr);

    void read(const idem::TaskFilter& filter, const std::optional<idem::TaskSort>& order, int limit);

Q_SIGNALS:
    void answered(const idem::console::TileRows& rows);
    void failed(const QString& why);

private:
    SessionRequest m_request;
};

} // namespace idem::console

Q_DECLARE_METATYPE(idem::console::TileRows)
