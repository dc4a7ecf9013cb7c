#pragma once

#include <QMetaType>
#include <QPointer>

#include <optional>
#include <vector>

#include "models/rowtablemodel.h"
#include "models/sessionrequest.h"
#include "operations/taskfilter.h"
#include "operations/tasklist.h"

namespace idem::console {

class ConsoleSession;
struct Failure;

// The task browser's rows: a window onto task_idempotency under a TaskFilter and TaskSort,
// fetched a page at a time with keyset paging (operations/tasklist) on the session's worker thread.
// Scrolling to the end asks for the next page (canFetchMore/fetchMore), so the model holds
// only what was scrolled through. refresh() re-reads the loaded range and merges it row by
// row (dataChanged / insert / remove), so selection and scroll position stay.
class TaskBrowserModel : public RowTableModel<idem::TaskRow> {
    Q_OBJECT
public:
    enum Column {
        KeyColumn,
        StatusColumn,
        AttemptsColumn,
        UpdatedColumn,
        LeaseColumn,
        NextAttemptColumn,
        ErrorColumn,
        COLUMN_COUNT
    };
    enum Role { KeyRole = Qt::UserRole, StatusRole, UpdatedAtUsRole, SortValueRole };

    // Refresh re-reads at most this many loaded rows (the top of the view), plus room for
    // rows that appeared in between.
    static constexpr int refreshWindow = 3000;

    explicit TaskBrowserModel(ConsoleSession* session, QObject* parent = nullptr);
    ~TaskBrowserModel() override;

    bool canFetchMore(const QModelIndex& parent) const override;
    void fetchMore(const QModelIndex& parent) override;

    // A new query: empties the model and loads its first page. Invalid filters are reported
    // through failed() without any I/O.
    void setQuery(const idem::TaskFilter& filter, const idem::TaskSort& sort);
    const idem::TaskFilter& filter() const { return m_filter; }
    const idem::TaskSort& sort() const { return m_sort; }
    void setPageSize(int rows) { m_pageSize = rows; }
    // Each read's statement timeout (default 10 s, TaskReadOptions); past ConsoleSession::boundFor
    // of it the console cancels, then cuts, a read the server does not answer at all.
    void setStatementTimeoutMs(int ms) { m_readOptions.statementTimeoutMs = ms; }
    int pageSize() const { return m_pageSize; }

    void refresh();

    const idem::TaskRow& task(int row) const { return m_rows[static_cast<std::size_t>(row)]; }
    int rowOfKey(const QString& key) const;
    bool busy() const { return m_pending != 0; }
    bool started() const { return m_started; } // a query was set
    bool atEnd() const { return !m_next.has_value(); }
    std::int64_t serverNowUs() const { return m_serverNowUs; }
    // Reads done since the last setQuery (tests assert paging stays bounded).
    int fetches() const { return m_fetches; }
    int largestFetch() const { return m_largestFetch; }
    QString lastError() const { return m_lastError; }

Q_SIGNALS:
    void pageLoaded(int rows); // rows appended by a page
    void refreshed();
    void failed(const QString& message);
    void busyChanged(bool busy);

protected:
    QVariant rowData(const idem::TaskRow& t, int column, int role) const override;

private:
    std::vector<TableColumn<idem::TaskRow>> columns();
    void requestPage();
    void onPage(quint64 generation, const idem::TaskPage& page);
    void onRefresh(quint64 generation, const idem::TaskPage& page, bool whole);
    void onFailure(quint64 generation, const Failure& failure);
    void merge(const std::vector<idem::TaskRow>& fresh);
    void setPending(quint64 id);
    void boundPending();

    QPointer<ConsoleSession> m_session;
    idem::TaskFilter m_filter;
    idem::TaskSort m_sort;
    std::optional<idem::TaskCursor> m_next;
    bool m_started = false; // a query was set
    quint64 m_generation = 0; // bumped by setQuery: answers for older queries are dropped
    quint64 m_pending = 0;
    idem::TaskReadOptions m_readOptions;
    bool m_refreshAgain = false;
    int m_pageSize = 200;
    int m_fetches = 0;
    int m_largestFetch = 0;
    std::int64_t m_serverNowUs = 0;
    QString m_lastError;
};

QString statusLabel(const std::string& status);
QString formatTimeUs(std::int64_t us); // local time, yyyy-MM-dd HH:mm:ss.zzz
// A table cell's time: HH:mm:ss.zzz on the day of `nowUs` (local time), else yyyy-MM-dd
// HH:mm:ss; the cell's tooltip has the whole formatTimeUs().
QString formatCellTimeUs(std::int64_t us, std::int64_t nowUs);

// How many tasks a filter matches, as the Tasks page says it (countTasks: exact up to its cap,
// else the planner's estimate), counted on the session's worker thread; a new count drops the one
// under way.
class TaskCounter : public QObject {
    Q_OBJECT
public:
    explicit TaskCounter(ConsoleSession* session, QObject* parent = nullptr);

    void count(const idem::TaskFilter& filter);
    void drop() { m_request.drop(); }
    bool pending() const { return m_request.pending(); }

Q_SIGNALS:
    void counted(const idem::TaskCount& count);
    void failed();

private:
    SessionRequest m_request;
};

} // namespace idem::console

Q_DECLARE_METATYPE(idem::TaskPage)
Q_DECLARE_METATYPE(idem::TaskCount)
