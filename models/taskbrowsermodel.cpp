#include "models/taskbrowsermodel.h"
#include "models/durationtext.h"
#include "models/visibletext.h"
#include "models/tones.h"

#include <QBrush>
#include <QColor>
#include <QCoreApplication>
#include <QDateTime>

#include <set>
#include <stdexcept>
#include <unordered_map>

#include "models/consolesession.h"

namespace idem::console {

namespace {
    QString text(const std::string& s) { return QString::fromStdString(s); }

    // One line in a table cell: control characters (hostile or not) become visible escapes.
    // A tooltip is rich text when it looks like HTML: a key "<b>x</b>" must not render bold.
    QString plainTip(const std::string& s) { return QStringLiteral("<p style='white-space:pre-wrap'>%1</p>").arg(visibleHtml(s)); }
} // namespace

QString statusLabel(const std::string& status) { return text(status); }

QString formatTimeUs(std::int64_t us)
{
    return QDateTime::fromMSecsSinceEpoch(us / 1000).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
}

QString formatCellTimeUs(std::int64_t us, std::int64_t nowUs)
{
    // Today: the time to the millisecond. Another day this year: the day without the year, so a
    // table read just after midnight is no wider than one read at noon (the columns ran off the
    // table's edge behind full dates). Another year: the whole date. The tooltip is always whole.
    const QDateTime at = QDateTime::fromMSecsSinceEpoch(us / 1000);
    const QDate today = QDateTime::fromMSecsSinceEpoch(nowUs / 1000).date();
    if (at.date() == today)
        return at.toString(QStringLiteral("HH:mm:ss.zzz"));
    return at.toString(at.date().year() == today.year() ? QStringLiteral("MM-dd HH:mm:ss") : QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

TaskBrowserModel::TaskBrowserModel(ConsoleSession* session, QObject* parent)
    : RowTableModel(parent)
    , m_session(session)
{
    qRegisterMetaType<idem::TaskPage>();
    setColumns(columns());
}

TaskBrowserModel::~TaskBrowserModel()
{
    if (m_session && m_pending)
        m_session->cancel(m_pending);
}

std::vector<TableColumn<idem::TaskRow>> TaskBrowserModel::columns()
{
    using T = idem::TaskRow;
    return {
        { .header = QT_TR_NOOP("Key"),
            .display = [](const T& t) { return visibleText(t.key); }, // one line, every character there
            .toolTip = [](const T& t) { return plainTip(t.key); } },
        { .header = QT_TR_NOOP("Status"),
            .display =
                [](const T& t) {
                    return t.status == "retryable_failed" && t.errorClass == "unknown"
                        ? tr("retryable_failed (uncertain)")
                        : text(t.status);
                },
            .foreground = [](const T& t) -> QVariant {
                if (t.status == "failed")
                    return QBrush(tones::color(Tone::Bad));
                if (t.status == "retryable_failed")
                    return QBrush(tones::color(Tone::Caution));
                if (t.status == "succeeded")
                    return QBrush(tones::color(Tone::Good));
                return {};
            } },
        { QT_TR_NOOP("Attempts"), [](const T& t) { return tr("%1 of %2").arg(t.attempts).arg(t.maxAttempts); } },
        { QT_TR_NOOP("Updated"), [this](const T& t) { return formatCellTimeUs(t.updatedAtUs, m_serverNowUs); },
            [](const T& t) { return formatTimeUs(t.updatedAtUs); } },
        { .header = QT_TR_NOOP("Lease"),
            .display = [this](const T& t) -> QVariant {
                if (t.status != "processing")
                    return {};
                if (!t.leaseUntilUs)
                    return tr("none");
                return *t.leaseUntilUs <= m_serverNowUs
                    ? tr("expired %1 ago").arg(durationText(double(m_serverNowUs - *t.leaseUntilUs) / 1000.0))
                    : tr("%1 left").arg(durationText(double(*t.leaseUntilUs - m_serverNowUs) / 1000.0));
            },
            .foreground = [this](const T& t) -> QVariant {
                if (t.status == "processing" && t.leaseUntilUs && *t.leaseUntilUs <= m_serverNowUs)
                    return QBrush(tones::color(Tone::Bad));
                return {};
            } },
        { QT_TR_NOOP("Next attempt"),
            [this](const T& t) {
                return t.nextAttemptAtUs ? formatCellTimeUs(*t.nextAttemptAtUs, m_serverNowUs) : QVariant();
            },
            [](const T& t) { return t.nextAttemptAtUs ? formatTimeUs(*t.nextAttemptAtUs) : QVariant(); } },
        { QT_TR_NOOP("Error"),
            [](const T& t) -> QVariant {
                if (t.errorClass.empty() && t.errorMessage.empty())
                    return {};
                return QStringLiteral("[%1] %2").arg(text(t.errorClass), visibleText(t.errorMessage));
            },
            [](const T& t) { return t.errorMessage.empty() ? QVariant() : plainTip(t.errorMessage); } },
    };
}

QVariant TaskBrowserModel::rowData(const idem::TaskRow& t, int, int role) const
{
    switch (role) {
    case KeyRole:
        return text(t.key);
    case StatusRole:
        return text(t.status);
    case UpdatedAtUsRole:
        return QVariant::fromValue<qint64>(t.updatedAtUs);
    case SortValueRole:
        return m_sort.column == idem::TaskSortColumn::Key ? QVariant(text(t.key))
                                                          : QVariant::fromValue<qint64>(idem::sortTimeOf(t, m_sort.column));
    default:
        return {};
    }
}

int TaskBrowserModel::rowOfKey(const QString& key) const
{
    const auto k = key.toStdString();
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].key == k)
            return static_cast<int>(i);
    return -1;
}

bool TaskBrowserModel::canFetchMore(const QModelIndex& parent) const
{
    return !parent.isValid() && m_started && m_next.has_value() && m_pending == 0;
}

void TaskBrowserModel::fetchMore(const QModelIndex& parent)
{
    if (canFetchMore(parent))
        requestPage();
}

void TaskBrowserModel::setPending(quint64 id)
{
    const bool was = m_pending != 0;
    m_pending = id;
    if (was != (id != 0))
        Q_EMIT busyChanged(id != 0);
}

void TaskBrowserModel::setQuery(const idem::TaskFilter& filter, const idem::TaskSort& sort)
{
    if (m_session && m_pending)
        m_session->cancel(m_pending);
    setPending(0);
    ++m_generation;
    beginResetModel();
    m_rows.clear();
    m_next.reset();
    m_filter = filter;
    m_sort = sort;
    m_fetches = 0;
    m_largestFetch = 0;
    m_refreshAgain = false;
    m_lastError.clear();
    m_started = false;
    endResetModel();
    try {
        idem::validateTaskQuery(filter, sort);
    } catch (const std::invalid_argument& e) {
        m_lastError = QString::fromStdString(e.what());
        Q_EMIT failed(m_lastError);
        return;
    }
    m_started = true;
    requestPage();
}

void TaskBrowserModel::requestPage()
{
    if (!m_session || !m_started)
        return;
    const auto generation = m_generation;
    const auto filter = m_filter;
    const auto sort = m_sort;
    const auto after = m_next; // unset for the first page (setQuery clears it)
    const int limit = m_pageSize;
    ++m_fetches;
    m_largestFetch = std::max(m_largestFetch, limit);
    const auto options = m_readOptions;
    setPending(m_session->submit(
        [filter, sort, after, limit, options](pqxx::connection& c, const idem::SchemaName& schema) {
            return QVariant::fromValue(idem::listTasks(c, schema, filter, sort, after, limit, std::nullopt, options));
        },
        this, [this, generation](const QVariant& v) { onPage(generation, v.value<idem::TaskPage>()); },
        [this, generation](const Failure& f) { onFailure(generation, f); }));
    boundPending();
}

// The server gives a page up at its statement timeout; a server that does not answer at all (a
// stopped process, a cut network) is cancelled, then cut, by the console.
void TaskBrowserModel::boundPending()
{
    if (m_pending)
        m_session->bound(m_pending, ConsoleSession::boundFor(m_readOptions.statementTimeoutMs));
}

void TaskBrowserModel::onPage(quint64 generation, const idem::TaskPage& page)
{
    if (generation != m_generation)
        return;
    setPending(0);
    m_serverNowUs = page.serverNowUs;
    m_lastError.clear();
    // The cursor moves first: a view may ask for more from inside endInsertRows().
    m_next = page.next;
    if (!page.rows.empty()) {
        const int first = static_cast<int>(m_rows.size());
        beginInsertRows({}, first, first + static_cast<int>(page.rows.size()) - 1);
        m_rows.insert(m_rows.end(), page.rows.begin(), page.rows.end());
        endInsertRows();
    }
    Q_EMIT pageLoaded(static_cast<int>(page.rows.size()));
    if (m_refreshAgain) {
        m_refreshAgain = false;
        refresh();
    }
}

void TaskBrowserModel::onFailure(quint64 generation, const Failure& failure)
{
    if (generation != m_generation)
        return;
    setPending(0);
    m_lastError = failure.text();
    Q_EMIT failed(m_lastError);
}

void TaskBrowserModel::refresh()
{
    if (!m_session || !m_started)
        return;
    if (m_pending) {
        m_refreshAgain = true; // after the page in flight
        return;
    }
    if (m_rows.empty()) {
        requestPage();
        return;
    }
    // Re-read from the top through the last row we will merge (at most refreshWindow of them),
    // with room for rows that appeared in between; more than that and we start over. When we
    // hold the whole result, the read is unbounded, so rows that now sort after our last one
    // (new keys at the end, a fresh failure in a "failed" view) come in too.
    const std::size_t window = std::min<std::size_t>(m_rows.size(), refreshWindow);
    const bool whole = atEnd() && m_rows.size() <= refreshWindow;
    std::optional<idem::TaskCursor> through;
    if (!whole)
        through = idem::cursorOf(m_rows[window - 1], m_sort.column);
    const int limit = static_cast<int>(std::min<std::size_t>(window + 1000, idem::TaskReadOptions::maxLimit));
    const auto generation = m_generation;
    const auto filter = m_filter;
    const auto sort = m_sort;
    ++m_fetches;
    m_largestFetch = std::max(m_largestFetch, limit);
    const auto options = m_readOptions;
    setPending(m_session->submit(
        [filter, sort, through, limit, options](pqxx::connection& c, const idem::SchemaName& schema) {
            return QVariant::fromValue(idem::listTasks(c, schema, filter, sort, std::nullopt, limit, through, options));
        },
        this,
        [this, generation, whole](const QVariant& v) { onRefresh(generation, v.value<idem::TaskPage>(), whole); },
        [this, generation](const Failure& f) { onFailure(generation, f); }));
    boundPending();
}

void TaskBrowserModel::onRefresh(quint64 generation, const idem::TaskPage& page, bool whole)
{
    if (generation != m_generation)
        return;
    setPending(0);
    m_serverNowUs = page.serverNowUs;
    if (page.next && !whole) {
        // More new rows inside the range than the slack: a merge would leave a gap.
        setQuery(m_filter, m_sort);
        return;
    }
    merge(page.rows);
    if (whole)
        m_next = page.next; // the result outgrew what one refresh reads: scrolling fetches the rest
    // Times shown relative to the server clock (lease countdowns) changed everywhere.
    if (!m_rows.empty())
        Q_EMIT dataChanged(index(0, LeaseColumn), index(rowCount() - 1, LeaseColumn), { Qt::DisplayRole });
    Q_EMIT refreshed();
}

// `fresh` is the server's current version of the first N rows we hold, N being how many of
// ours sort at or before the refresh bound. Rows common to both keep their relative order
// (same sort value, total order), so: drop ours that left (or moved), then walk both lists
// inserting what is new and updating what changed. Rows past the bound are untouched.
void TaskBrowserModel::merge(const std::vector<idem::TaskRow>& fresh)
{
    std::unordered_map<std::string, const idem::TaskRow*> byKey;
    for (const auto& r : fresh)
        byKey.emplace(r.key, &r);
    const std::size_t window = std::min<std::size_t>(m_rows.size(), refreshWindow);
    const bool byTime = m_sort.column != idem::TaskSortColumn::Key;
    const auto moved = [&](const idem::TaskRow& now, const idem::TaskRow& held) {
        return byTime && idem::sortTimeOf(now, m_sort.column) != idem::sortTimeOf(held, m_sort.column);
    };
    // A row we hold past the bound that now sorts inside it (updated, newest first) moves up:
    // drop the old copy so the key is never listed twice.
    for (std::size_t i = m_rows.size(); i-- > window;) {
        if (!byKey.count(m_rows[i].key))
            continue;
        beginRemoveRows({}, static_cast<int>(i), static_cast<int>(i));
        m_rows.erase(m_rows.begin() + static_cast<std::ptrdiff_t>(i));
        endRemoveRows();
    }
    // Remove from the end so earlier indexes stay valid; contiguous runs in one call.
    for (std::size_t i = window; i-- > 0;) {
        const auto it = byKey.find(m_rows[i].key);
        const bool gone = it == byKey.end() || moved(*it->second, m_rows[i]);
        if (!gone)
            continue;
        std::size_t first = i;
        while (first > 0) {
            const auto p = byKey.find(m_rows[first - 1].key);
            if (!(p == byKey.end() || moved(*p->second, m_rows[first - 1])))
                break;
            --first;
        }
        beginRemoveRows({}, static_cast<int>(first), static_cast<int>(i));
        m_rows.erase(
            m_rows.begin() + static_cast<std::ptrdiff_t>(first), m_rows.begin() + static_cast<std::ptrdiff_t>(i + 1));
        endRemoveRows();
        i = first;
    }
    std::size_t j = 0;
    std::size_t i = 0;
    while (i < fresh.size()) {
        if (j < m_rows.size() && m_rows[j].key == fresh[i].key) {
            if (!(m_rows[j] == fresh[i])) {
                m_rows[j] = fresh[i];
                Q_EMIT dataChanged(index(static_cast<int>(j), 0), index(static_cast<int>(j), COLUMN_COUNT - 1));
            }
            ++i;
            ++j;
            continue;
        }
        // A run of rows new to us goes in before row j.
        std::size_t end = i;
        const std::string stopAt = j < m_rows.size() ? m_rows[j].key : std::string();
        while (end < fresh.size() && !(j < m_rows.size() && fresh[end].key == stopAt))
            ++end;
        beginInsertRows({}, static_cast<int>(j), static_cast<int>(j + (end - i) - 1));
        m_rows.insert(m_rows.begin() + static_cast<std::ptrdiff_t>(j), fresh.begin() + static_cast<std::ptrdiff_t>(i),
            fresh.begin() + static_cast<std::ptrdiff_t>(end));
        endInsertRows();
        j += end - i;
        i = end;
    }
}

TaskCounter::TaskCounter(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_request(session, SessionRequest::Kind::Read)
{
    qRegisterMetaType<idem::TaskCount>();
    connect(&m_request, &SessionRequest::answered, this,
        [this](const QVariant& answer) { Q_EMIT counted(answer.value<idem::TaskCount>()); });
    connect(&m_request, &SessionRequest::failed, this, &TaskCounter::failed);
}

void TaskCounter::count(const idem::TaskFilter& filter)
{
    // Two reads, each under TaskReadOptions' statement timeout; cancelled, then cut, when the
    // server does not answer at all.
    m_request.run([filter](pqxx::connection& c, const idem::SchemaName& schema) {
        return QVariant::fromValue(idem::countTasks(c, schema, filter));
    },
        2 * idem::TaskReadOptions {}.statementTimeoutMs);
}

} // namespace idem::console
