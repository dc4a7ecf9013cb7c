#include "models/tilerows.h"

#include <stdexcept>

namespace idem::console {

TileRowsRead::TileRowsRead(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_request(session, SessionRequest::Kind::Read)
{
    qRegisterMetaType<TileRows>();
    connect(&m_request, &SessionRequest::answered, this,
        [this](const QVariant& answer) { Q_EMIT answered(answer.value<TileRows>()); });
    connect(&m_request, &SessionRequest::failed, this, [this](const Failure& failure) { Q_EMIT failed(failure.text()); });
}

void TileRowsRead::read(const idem::TaskFilter& filter, const std::optional<idem::TaskSort>& order, int limit)
{
    m_request.run([filter, order, limit](pqxx::connection& conn, const idem::SchemaName& schema) {
        // The tile's order, else newest first where the unfinished-rows index serves it, by
        // key otherwise (a set with succeeded rows): the same reads and count as the Tasks page.
        idem::TaskSort sort = order.value_or(idem::TaskSort { idem::TaskSortColumn::UpdatedAt, true });
        try {
            idem::validateTaskQuery(filter, sort);
        } catch (const std::invalid_argument&) {
            sort = {};
        }
        idem::TaskReadOptions options;
        options.statementTimeoutMs = 5000;
        TileRows out;
        out.count = idem::countTasks(conn, schema, filter, 10000, options);
        out.rows = idem::listTasks(conn, schema, filter, sort, std::nullopt, limit, std::nullopt, options).rows;
        return QVariant::fromValue(out);
    });
}

} // namespace idem::console
