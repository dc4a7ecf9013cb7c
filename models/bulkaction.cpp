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
    : RowTableModel(parent)
{
    qRegisterMetaType<std::vector<idem::ActionResult>>();
    using I = BulkActionItem;
    setColumns({
        { QT_TR_NOOP("Key"), [](const I& item) { return visibleText(item.expected.key); } },
        { .header = QT_TR_NOOP("Result"),
            .display = [](const I& item) { return item.done ? outcomeLabel(item.result.outcome) : tr("pending"); },
            .foreground = [](const I& item) -> QVariant {
                if (!item.done)
                    return {};
                if (item.result.outcome == idem::ActionOutcome::Applied)
                    return QBrush(tones::color(Tone::Good));
                if (item.result.outcome == idem::ActionOutcome::Skipped)
                    return QBrush(tones::color(Tone::Muted));
                return QBrush(tones::color(Tone::Bad));
            } },
        { QT_TR_NOOP("Status now"),
            [](const I& item) { return item.done ? QString::fromStdString(item.result.status) : QString(); } },
        { QT_TR_NOOP("Updated now"),
            [](const I& item) {
                return item.done && item.result.updatedAtUs ? formatTimeUs(*item.result.updatedAtUs) : QString();
            } },
        { QT_TR_NOOP("Details"), [](const I& item) { return visibleText(item.result.message); },
            [](const I& item) { return QString::fromStdString(item.result.message); } },
    });
}

BulkActionModel::~BulkActionModel()
{
    if (m_stop)
        *m_stop = true;
    if (m_session)
        for (auto id : m_inFlight)
            m_session->cancel(id);
}

QVariant BulkActionModel::rowData(const BulkActionItem& item, int, int role) const
{
    if (role == KeyRole)
        return QString::fromStdString(item.expected.key);
    if (role == OutcomeRole && item.done)
        return static_cast<int>(item.result.outcome);
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
    m_rows.clear();
    for (std::size_t i = 0; i < keys.size(); ++i)
        m_rows.push_back(BulkActionItem { std::move(keys[i]), {}, false,
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
    if (m_rows.empty())
        finishRemaining({});
}

void BulkActionModel::submitNext()
{
    if (!m_session || m_nextChunk >= m_rows.size() || *m_stop)
        return;
    const std::size_t first = m_nextChunk;
    // A chunk re-executes all its keys or none: it ends where that changes.
    std::size_t last = first + 1;
    while (last < m_rows.size() && last < first + chunkSize && m_rows[last].reexecute == m_rows[first].reexecute)
        ++last;
    m_nextChunk = last;
    std::vector<idem::RowVersion> chunk;
    for (std::size_t i = first; i < last; ++i)
        chunk.push_back(m_rows[i].expected);
    const auto stop = m_stop;
    const auto action = m_action;
    auto options = m_options;
    options.reexecute = m_rows[first].reexecute;
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
    auto& item = m_rows[row];
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
    for (std::size_t i = 0; i < results.size() && first + i < m_rows.size(); ++i)
        store(first + i, results[i]);
    if (!results.empty())
        rowsChanged(static_cast<int>(first), static_cast<int>(first + results.size() - 1));
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
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].done)
            continue;
        if (first < 0)
            first = static_cast<int>(i);
        idem::ActionResult r;
        r.key = m_rows[i].expected.key;
        r.outcome = idem::ActionOutcome::Skipped;
        r.message = "not done: " + why.toStdString();
        store(i, r);
    }
    if (first >= 0)
        rowsChanged(first, rowCount() - 1);
    m_running = false;
    Q_EMIT progress(m_done, total());
    Q_EMIT finished();
}

} // namespace idem::console
