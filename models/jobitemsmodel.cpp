#include "models/jobitemsmodel.h"

#include <QCoreApplication>
#include <QSaveFile>

#include <memory>
#include <stdexcept>

#include "models/consolesession.h"
#include "models/taskbrowsermodel.h"
#include "models/visibletext.h"

namespace idem::console {

QString jobWhyLabel(const std::string& why)
{
    if (why == "moved_on")
        return QCoreApplication::translate("idem::console::JobItemsModel", "moved on");
    if (why == "busy")
        return QCoreApplication::translate("idem::console::JobItemsModel", "busy (locked)");
    if (why == "gone")
        return QCoreApplication::translate("idem::console::JobItemsModel", "gone");
    if (why == "not_applicable")
        return QCoreApplication::translate("idem::console::JobItemsModel", "not applicable");
    if (why == "cancelled")
        return QCoreApplication::translate("idem::console::JobItemsModel", "cancelled");
    return visibleText(why);
}

JobItemsModel::JobItemsModel(ConsoleSession* session, QObject* parent)
    : RowTableModel(parent)
    , m_session(session)
{
    qRegisterMetaType<std::vector<idem::JobItem>>();
    using I = idem::JobItem;
    std::vector<TableColumn<I>> columns {
        { QT_TR_NOOP("Key"), [](const I& it) { return visibleText(it.key); } },
        { QT_TR_NOOP("Why refused"), [](const I& it) { return jobWhyLabel(it.why); } },
        { QT_TR_NOOP("At the job's moment"),
            [](const I& it) {
                return QStringLiteral("%1, %2").arg(statusLabel(it.seenStatus), formatTimeUs(it.seenUpdatedAtUs));
            } },
        { QT_TR_NOOP("As the job found it"),
            [](const I& it) {
                if (it.nowStatus.empty())
                    return QString();
                return it.nowUpdatedAtUs
                    ? QStringLiteral("%1, %2").arg(statusLabel(it.nowStatus), formatTimeUs(*it.nowUpdatedAtUs))
                    : statusLabel(it.nowStatus);
            } },
        { QT_TR_NOOP("Tries"), [](const I& it) -> QVariant { return it.tries; } },
        { QT_TR_NOOP("Refused at"),
            [](const I& it) { return it.doneAtUs ? formatTimeUs(*it.doneAtUs) : QString(); } },
    };
    for (auto& c : columns)
        c.toolTip = c.display; // a cell's tooltip is its whole text
    setColumns(std::move(columns));
}

JobItemsModel::~JobItemsModel()
{
    if (m_session) {
        if (m_pending)
            m_session->cancel(m_pending);
        if (m_exporting)
            m_session->cancel(m_exporting);
    }
}

QVariant JobItemsModel::rowData(const idem::JobItem& it, int, int role) const
{
    if (role == KeyRole)
        return QString::fromStdString(it.key);
    if (role == WhyRole)
        return QString::fromStdString(it.why);
    return {};
}

void JobItemsModel::setJob(std::int64_t id, std::int64_t refusedCount)
{
    if (id == m_jobId && refusedCount == m_loadedFor)
        return;
    if (id != m_jobId) {
        beginResetModel();
        m_rows.clear();
        m_more = false;
        endResetModel();
        m_jobId = id;
    }
    m_loadedFor = refusedCount;
    if (id == 0 || refusedCount == 0) {
        if (!m_rows.empty()) {
            beginResetModel();
            m_rows.clear();
            endResetModel();
        }
        Q_EMIT loaded();
        return;
    }
    load();
}

void JobItemsModel::load()
{
    if (!m_session)
        return;
    if (m_pending)
        m_session->cancel(m_pending);
    const std::int64_t id = m_jobId;
    auto requestId = std::make_shared<quint64>(0);
    *requestId = m_session->submit(
        [id](pqxx::connection& conn, const idem::SchemaName& schema) {
            // One more than shown tells whether there are more.
            return QVariant::fromValue(idem::listJobItems(conn, schema, id, "refused", 0, shownLimit + 1));
        },
        this,
        [this, requestId, id](const QVariant& answer) {
            if (*requestId != m_pending || id != m_jobId)
                return;
            m_pending = 0;
            ++m_loads;
            m_error.clear();
            auto items = answer.value<std::vector<idem::JobItem>>();
            m_more = items.size() > std::size_t(shownLimit);
            if (m_more)
                items.resize(shownLimit);
            beginResetModel();
            m_rows = std::move(items);
            endResetModel();
            Q_EMIT loaded();
        },
        [this, requestId](const Failure& failure) {
            if (*requestId != m_pending)
                return;
            m_pending = 0;
            m_loadedFor = -1; // read again next time
            m_error = failure.text();
            Q_EMIT loaded();
        });
    m_pending = *requestId;
}

void JobItemsModel::exportCsv(std::int64_t id, const QString& path)
{
    if (!m_session || m_exporting)
        return;
    auto requestId = std::make_shared<quint64>(0);
    *requestId = m_session->submit(
        [id, path](pqxx::connection& conn, const idem::SchemaName& schema) {
            QSaveFile file(path);
            if (!file.open(QIODevice::WriteOnly))
                throw std::runtime_error(
                    "cannot write " + path.toStdString() + ": " + file.errorString().toStdString());
            file.write(QByteArray::fromStdString(idem::jobItemsCsvHeader()));
            qint64 rows = 0;
            std::int64_t after = 0;
            // Pages in seq order: each read is bounded, the whole list is written.
            for (;;) {
                const auto page = idem::listJobItems(conn, schema, id, "refused", after, 5000);
                for (const auto& it : page)
                    file.write(QByteArray::fromStdString(idem::jobItemCsvLine(it)));
                rows += qint64(page.size());
                if (page.size() < 5000)
                    break;
                after = page.back().seq;
            }
            if (!file.commit())
                throw std::runtime_error(
                    "cannot write " + path.toStdString() + ": " + file.errorString().toStdString());
            return QVariant(rows);
        },
        this,
        [this, requestId, path](const QVariant& answer) {
            if (*requestId != m_exporting)
                return;
            m_exporting = 0;
            Q_EMIT exported(path, answer.toLongLong());
        },
        [this, requestId](const Failure& failure) {
            if (*requestId != m_exporting)
                return;
            m_exporting = 0;
            Q_EMIT exportFailed(failure.text());
        });
    m_exporting = *requestId;
}

} // namespace idem::console
