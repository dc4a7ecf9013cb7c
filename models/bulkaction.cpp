#include "models/bulkaction.h"
#include "models/visibletext.h"
#include "models/tones.h"

#include <QBrush>
#include <QColor>
#include <QCoreApplication>

#include <stdexcept>

#include "models/consolesession.h"
#include "models/taskbrowsermodel.h"

namespace idem::console {

QString outcomeLabel(idem::ActionOutcome outcome)
{
    switch (outcome) {
    case idem::ActionOutcome::Applied:
        return QStringLiteral("applied");
    case idem::ActionOutcome::Stale:
        return QStringLiteral("refused-stale");
    case idem::ActionOutcome::WrongState:
        return QStringLiteral("refused-state");
    case idem::ActionOutcome::NotFound:
        return QStringLiteral("refused-not-found");
    case idem::ActionOutcome::Denied:
        return QStringLiteral("denied");
    case idem::ActionOutcome::NeedsApproval:
        return QStringLiteral("needs-approval");
    case idem::ActionOutcome::NotRedrivable: // schema v25: a requeue with re-execute, no stored request
        return QStringLiteral("refused-not-redrivable");
    case idem::ActionOutcome::Error:
        return QStringLiteral("error");
    case idem::ActionOutcome::Skipped:
        return QStringLiteral("skipped");
    }
    return QStringLiteral("error");
}

BulkActionModel::BulkActionModel(QObject* parent)
    : QAbstractTableModel(parent)
{
    qRegisterMetaType<std::vector<idem::ActionResult>>();
}

BulkActionModel::~BulkActionModel()
{
    if (m_stop)
        *m_stop = true;
    if (m_session)
        for (auto id : m_inFlight)
            m_session->cancel(id);
}

int BulkActionModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_items.size());
}

int BulkActionModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : COLUMN_COUNT; }

QVariant BulkActionModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case KeyColumn:
        return QCoreApplication::translate("idem::console::BulkActionModel", "Key");
    case OutcomeColumn:
        return QCoreApplication::translate("idem::console::BulkActionModel", "Result");
    case StatusColumn:
        return QCoreApplication::translate("idem::console::BulkActionModel", "Status now");
    case UpdatedColumn:
        return QCoreApplication::translate("idem::console::BulkActionModel", "Updated now");
    case MessageColumn:
        return QCoreApplication::translate("idem::console::BulkActionModel", "Details");
    }
    return {};
}

QVariant BulkActionModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& item = m_items[static_cast<std::size_t>(index.row())];
    const auto& r = item.result;
    if (role == KeyRole)
        return QString::fromStdString(item.expected.key);
    if (role == OutcomeRole)
        return item.done ? QVariant(static_cast<int>(r.outcome)) : QVariant();
    if (role == Qt::ForegroundRole && index.column() == OutcomeColumn && item.done) {
        if (r.outcome == idem::ActionOutcome::Applied)
            return QBrush(tones::color(Tone::Good));
        if (r.outcome == idem::ActionOutcome::Skipped)
            return QBrush(tones::color(Tone::Muted));
        return QBrush(tones::color(Tone::Bad));
    }
    if (role == Qt::ToolTipRole && index.column() == MessageColumn)
        return QString::fromStdString(r.message);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case KeyColumn:
        return visibleText(item.expected.key);
    case OutcomeColumn:
        return item.done ? outcomeLabel(r.outcome)
                         : QCoreApplication::translate("idem::console::BulkActionModel", "pending");
    case StatusColumn:
        return item.done ? QString::fromStdString(r.status) : QString();
    case UpdatedColumn:
        return item.done && r.updatedAtUs ? formatTimeUs(*r.updatedAtUs) : QString();
    case MessageColumn:
        return visibleText(r.message);
    }
    return {};
}

QString BulkActionModel::summary() const
{
    QStringList parts;
    for (auto o : { idem::ActionOutcome::Applied, idem::ActionOutcome::Stale, idem::ActionOutcome::WrongState,
             idem::ActionOutcome::NotFound, idem::ActionOutcome::NotRedrivable, idem::ActionOutcome::Denied,
             idem::ActionOutcome::NeedsApproval, idem::ActionOutcome::Error, idem::ActionOutcome::Skipped })
        if (count(o) > 0)
            parts << QStringLiteral("%1 %2").arg(count(o)).arg(outcomeLabel(o));
    const QString done
        = QCoreApplication::translate("idem::console::BulkActionModel", "%1 of %2 done").arg(m_done).arg(total());
    return parts.isEmpty() ? done : done + QStringLiteral(": ") + parts.join(QStringLiteral(", "));
}

void BulkActionModel::start(ConsoleSession* admin, idem::RecoveryAction action, std::vector<idem::RowVersion> keys,
    idem::ActionOptions options, const std::vector<bool>& reexecute)
{
    beginResetModel();
    m_items.clear();
    for (std::size_t i = 0; i < keys.size(); ++i)
        m_items.push_back(Item { std::move(keys[i]), {}, false,
            action == idem::RecoveryAction::Requeue && i < reexecute.size() && reexecute[i] });
    m_done = 0;
    m_counts = {};
    m_nextChunk = 0;
    m_inFlight.clear();
    endResetModel();
    m_session = admin;
    m_action = action;
    m_options = std::move(options);
    m_stop = std::make_shared<std::atomic_bool>(false);
    m_running = true;
    try {
        idem::validateActionOptions(action, m_options); // nothing is sent for bad options
    } catch (const std::invalid_argument& e) {
        finishRemaining(QString::fromStdString(e.what()));
        return;
    }
    submitNext();
    submitNext(); // two chunks in flight: the worker never waits for the UI thread
    if (m_items.empty())
        finishRemaining({});
}

void BulkActionModel::submitNext()
{
    if (!m_session || m_nextChunk >= m_items.size() || *m_stop)
        return;
    const std::size_t first = m_nextChunk;
    // A chunk re-executes all its keys or none: it ends where that changes.
    std::size_t last = first + 1;
    while (last < m_items.size() && last < first + chunkSize && m_items[last].reexecute == m_items[first].reexecute)
        ++last;
    m_nextChunk = last;
    std::vector<idem::RowVersion> chunk;
    for (std::size_t i = first; i < last; ++i)
        chunk.push_back(m_items[i].expected);
    const auto stop = m_stop;
    const auto action = m_action;
    auto options = m_options;
    options.reexecute = m_items[first].reexecute;
    const quint64 id = m_session->submit(
        [chunk, stop, action, options](pqxx::connection& c, const idem::SchemaName& schema) {
            return QVariant::fromValue(idem::applyBulk(c, schema, action, chunk, options,
                [stop](std::size_t, std::size_t, const idem::ActionResult&) { return !stop->load(); }));
        },
        this, [this, first](const QVariant& v) { onChunk(first, v.value<std::vector<idem::ActionResult>>()); },
        [this](const Failure& f) {
            finishRemaining(QCoreApplication::translate("idem::console::BulkActionModel",
                "%1 (a key that was in progress may have been applied: the Audit page says)")
                                .arg(f.text()));
        });
    if (id)
        m_inFlight.push_back(id);
}

void BulkActionModel::store(std::size_t row, const idem::ActionResult& r)
{
    auto& item = m_items[row];
    if (item.done)
        return;
    item.result = r;
    item.done = true;
    ++m_done;
    ++m_counts[static_cast<std::size_t>(r.outcome)];
}

void BulkActionModel::onChunk(std::size_t first, const std::vector<idem::ActionResult>& results)
{
    if (!m_running)
        return;
    if (!m_inFlight.empty())
        m_inFlight.erase(m_inFlight.begin()); // answers come in submission order
    for (std::size_t i = 0; i < results.size() && first + i < m_items.size(); ++i)
        store(first + i, results[i]);
    if (!results.empty())
        Q_EMIT dataChanged(
            index(static_cast<int>(first), 0), index(static_cast<int>(first + results.size() - 1), COLUMN_COUNT - 1));
    Q_EMIT progress(m_done, total());
    if (*m_stop) {
        finishRemaining(QCoreApplication::translate("idem::console::BulkActionModel", "cancelled before this key"));
        return;
    }
    submitNext();
    if (m_inFlight.empty())
        finishRemaining({});
}

void BulkActionModel::cancel()
{
    if (!m_running || !m_stop)
        return;
    *m_stop = true;
    // Chunks not started yet never run; the one running stops after its current key.
    if (m_session && m_inFlight.size() > 1) {
        for (std::size_t i = 1; i < m_inFlight.size(); ++i)
            m_session->cancel(m_inFlight[i]);
        m_inFlight.resize(1);
    }
    if (m_inFlight.empty())
        finishRemaining(QCoreApplication::translate("idem::console::BulkActionModel", "cancelled before this key"));
}

void BulkActionModel::finishRemaining(const QString& why)
{
    if (!m_running)
        return;
    if (m_session)
        for (auto id : m_inFlight)
            m_session->cancel(id);
    m_inFlight.clear();
    *m_stop = true;
    int first = -1;
    for (std::size_t i = 0; i < m_items.size(); ++i) {
        if (m_items[i].done)
            continue;
        if (first < 0)
            first = static_cast<int>(i);
        idem::ActionResult r;
        r.key = m_items[i].expected.key;
        r.outcome = idem::ActionOutcome::Skipped;
        r.message = "not done: " + why.toStdString();
        store(i, r);
    }
    if (first >= 0)
        Q_EMIT dataChanged(index(first, 0), index(rowCount() - 1, COLUMN_COUNT - 1));
    m_running = false;
    Q_EMIT progress(m_done, total());
    Q_EMIT finished();
}

} // namespace idem::console
