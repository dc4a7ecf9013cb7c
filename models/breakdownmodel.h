#pragma once

#include <QAbstractTableModel>
#include <QPointer>
#include <QString>

#include <optional>

#include "models/livetext.h"
#include "models/sessionpoll.h"
#include "operations/breakdown.h"
#include "operations/taskfilter.h"

namespace idem::console {

class ConsoleSession;

// Where it is failing (issue 41): the dashboard's window split by operation, or by tenant and
// operation on demand, and the window's most frequent error messages, read on the session's
// worker thread in one statement (idem::readBreakdown) at most every refreshMs, never on the UI
// thread. Each figure says what it is: a number alone is exact, "≥ n" a lower bound (its source
// was read up to the cap), the tooltip says which source and why. Two tables over one reading:
// Kind::Operations and Kind::Errors; rowFilter() is the Tasks page's filter a row opens.
class BreakdownWatch : public QObject {
    Q_OBJECT
public:
    // Slower than a tick: each read scans up to cap rows of four sources.
    static constexpr int refreshMs = 10000;
    explicit BreakdownWatch(ConsoleSession* session, QObject* parent = nullptr);
    ~BreakdownWatch() override;

    // The dashboard's window, filter and statement timeout; a change reads again at once.
    void setScope(int windowMinutes, const QString& tenant, const QString& operation, int statementTimeoutMs);
    void setByTenant(bool byTenant);
    bool byTenant() const { return m_query.byTenant; }
    int windowMinutes() const { return m_query.windowMinutes; }
    const std::string& scopeTenant() const { return m_query.tenant; }
    void setCap(std::int64_t cap);
    std::int64_t cap() const { return m_query.cap; }
    const std::optional<idem::Breakdown>& reading() const { return m_reading; }
    QString error() const { return m_poll.error(); }
    int reads() const { return m_poll.reads(); }
    // Connected, but the schema is older than the latency tables the read needs.
    void refreshNow() { m_poll.refreshNow(); }

Q_SIGNALS:
    void changed();

private:
    DatabaseJob makeJob() const;
    void rescope();

    SessionPoll m_poll;
    idem::BreakdownQuery m_query;
    std::optional<idem::Breakdown> m_reading;
    // The backend whose session statement timeout this watch set (worker thread only).
    std::shared_ptr<int> m_preparedPid = std::make_shared<int>(0);
};

class BreakdownModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum class Kind { Operations, Errors };
    enum Column { Tenant, Operation, Processing, Failed, Retries, Conflicts, P95, COLUMN_COUNT };
    enum ErrorColumn { ErrorTenant, ErrorOperation, ErrorRows, ErrorMessage, ERROR_COLUMN_COUNT };

    BreakdownModel(BreakdownWatch* watch, Kind kind, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The Tasks page's filter for a row (what a double-click opens) and the words for it.
    idem::TaskFilter rowFilter(int row) const;
    QString rowTitle(int row) const;
    // rowTitle() as a LiveText: the row's names, written again in the language of the moment.
    LiveText rowWords(int row) const;
    // The tenant column shows only when split by tenant.
    bool tenantShown() const;
    // One line under the tables: the window, and which figures are lower bounds and why.
    QString noteText() const;
    // Its short form for beside the tables: the window and what "≥" means, or that the read failed.
    QString legendText() const;

private:
    void reload();
    std::int64_t cap() const { return m_watch ? m_watch->cap() : idem::BreakdownQuery {}.cap; }

    QPointer<BreakdownWatch> m_watch;
    Kind m_kind;
    idem::Breakdown m_data;
    int m_windowMinutes = 15;
};

} // namespace idem::console

Q_DECLARE_METATYPE(idem::Breakdown)
