#include "models/breakdownmodel.h"

#include <QCoreApplication>
#include <QLocale>

#include <pqxx/pqxx>

#include "models/consolesession.h"
#include "models/durationtext.h"
#include "models/latencywatch.h"
#include "models/tilepresenter.h"
#include "models/visibletext.h"
#include "operations/dashboardquery.h"

namespace idem::console {

namespace {
    QString count(qint64 n, bool lower)
    {
        return lower ? QStringLiteral("≥\u00a0") + QLocale().toString(n) : QLocale().toString(n);
    }
} // namespace

BreakdownWatch::BreakdownWatch(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_poll(session, [this] { return makeJob(); })
{
    qRegisterMetaType<idem::Breakdown>();
    connect(&m_poll, &SessionPoll::answered, this, [this](const QVariant& answer, bool) {
        m_reading = answer.value<idem::Breakdown>();
        Q_EMIT changed();
    });
    connect(&m_poll, &SessionPoll::failed, this, &BreakdownWatch::changed);
    connect(&m_poll, &SessionPoll::stopped, this, [this] {
        m_reading.reset();
        Q_EMIT changed();
    });
    m_poll.setInterval(refreshMs);
    m_poll.start();
}

BreakdownWatch::~BreakdownWatch() = default;

void BreakdownWatch::setScope(
    int windowMinutes, const QString& tenant, const QString& operation, int statementTimeoutMs)
{
    const auto t = tenant.trimmed().toStdString();
    const auto o = operation.trimmed().toStdString();
    m_query.statementTimeoutMs = statementTimeoutMs;
    m_poll.setBound(statementTimeoutMs);
    if (windowMinutes == m_query.windowMinutes && t == m_query.tenant && o == m_query.operation)
        return;
    m_query.windowMinutes = windowMinutes;
    m_query.tenant = t;
    m_query.operation = o;
    rescope();
}

void BreakdownWatch::setByTenant(bool byTenant)
{
    if (byTenant == m_query.byTenant)
        return;
    m_query.byTenant = byTenant;
    rescope();
}

void BreakdownWatch::setCap(std::int64_t cap)
{
    m_query.cap = cap;
    rescope();
}

void BreakdownWatch::rescope()
{
    // Figures of another scope must not stand under this one's headers.
    m_reading.reset();
    m_poll.rescope();
    Q_EMIT changed();
}

DatabaseJob BreakdownWatch::makeJob() const
{
    auto query = m_query;
    query.noSessionState = m_poll.session() && m_poll.session()->serverInfo().pooler;
    auto prepared = m_preparedPid;
    return [query, prepared](pqxx::connection& conn, const idem::SchemaName& schema) {
        // The session statement timeout the dashboard's tick sets (the same console setting),
        // once per backend, so the read itself is one round trip.
        if (!query.noSessionState && *prepared != conn.backendpid()) {
            idem::prepareDashboardConnection(conn, query.statementTimeoutMs);
            *prepared = conn.backendpid();
        }
        return QVariant::fromValue(idem::readBreakdown(conn, schema, query));
    };
}

BreakdownModel::BreakdownModel(BreakdownWatch* watch, Kind kind, QObject* parent)
    : QAbstractTableModel(parent)
    , m_watch(watch)
    , m_kind(kind)
{
    connect(watch, &BreakdownWatch::changed, this, &BreakdownModel::reload);
    reload();
}

void BreakdownModel::reload()
{
    idem::Breakdown next;
    if (m_watch && m_watch->reading())
        next = *m_watch->reading();
    m_windowMinutes = m_watch ? m_watch->windowMinutes() : 15;
    const auto size = [this](const idem::Breakdown& b) {
        return static_cast<int>(m_kind == Kind::Operations ? b.rows.size() : b.errors.size());
    };
    if (size(next) == size(m_data)) {
        // Same shape: the figures change in place, keeping selection and scroll.
        m_data = std::move(next);
        if (rowCount() > 0)
            Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
        Q_EMIT headerDataChanged(Qt::Horizontal, 0, columnCount() - 1);
        return;
    }
    beginResetModel();
    m_data = std::move(next);
    endResetModel();
}

int BreakdownModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid())
        return 0;
    return static_cast<int>(m_kind == Kind::Operations ? m_data.rows.size() : m_data.errors.size());
}

int BreakdownModel::columnCount(const QModelIndex& parent) const
{
    if (parent.isValid())
        return 0;
    return m_kind == Kind::Operations ? int(COLUMN_COUNT) : int(ERROR_COLUMN_COUNT);
}

bool BreakdownModel::tenantShown() const { return m_watch && m_watch->byTenant(); }

QVariant BreakdownModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const auto row = static_cast<std::size_t>(index.row());
    if (m_kind == Kind::Errors) {
        const auto& e = m_data.errors[row];
        if (role == Qt::DisplayRole) {
            switch (index.column()) {
            case ErrorTenant:
                return visibleText(e.tenant);
            case ErrorOperation:
                return visibleText(e.operation);
            case ErrorRows:
                return count(e.rows, m_data.errorsCapped);
            case ErrorMessage:
                return visibleText(e.message);
            }
        } else if (role == Qt::ToolTipRole) {
            return tr("%1 unfinished rows of %2, updated in the %3, whose last error contains this text%4. "
                      "Double-click to open them.")
                .arg(count(e.rows, m_data.errorsCapped), visibleText(e.operation), windowText(m_windowMinutes),
                    m_data.errorsCapped ? tr(" (at least: only the newest %1 unfinished rows were read)")
                                              .arg(QLocale().toString(static_cast<qint64>(cap())))
                                        : QString());
        } else if (role == Qt::TextAlignmentRole && index.column() == ErrorRows) {
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        }
        return {};
    }
    const auto& r = m_data.rows[row];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Tenant:
            return visibleText(r.tenant);
        case Operation:
            return visibleText(r.operation);
        case Processing:
            return count(r.processing, m_data.processingCapped);
        case Failed:
            return count(r.failed, m_data.countersCapped);
        case Retries:
            return count(r.retries, m_data.countersCapped);
        case Conflicts:
            return count(r.conflicts, m_data.countersCapped);
        case P95:
            return r.p95Ms ? durationText(*r.p95Ms, idem::DurationForm::Precise) : QStringLiteral("–");
        }
    } else if (role == Qt::ToolTipRole) {
        switch (index.column()) {
        case Processing:
            return m_data.processingCapped
                ? tr("At least: the first %1 processing rows were read.")
                      .arg(QLocale().toString(static_cast<qint64>(cap())))
                : tr("Exact: rows processing now.");
        case Failed:
        case Retries:
        case Conflicts:
            return m_data.countersCapped
                ? tr("At least: the window's per-minute counters were read up to %1 rows.")
                      .arg(QLocale().toString(static_cast<qint64>(cap())))
                : tr("Exact: the per-minute counters of the %1.").arg(windowText(m_windowMinutes));
        case P95:
            return r.p95Ms ? tr("p95 run time of %1 runs in the window's folded minutes (within 3.7 %)%2.")
                                 .arg(QLocale().toString(static_cast<qint64>(r.latencyRuns)),
                                     m_data.latencyCapped ? tr(", from the first latency rows read only") : QString())
                           : tr("No run folded in the window.");
        default:
            return tr("Double-click to open the rows of %1 updated in the %2.")
                .arg(visibleText(r.operation), windowText(m_windowMinutes));
        }
    } else if (role == Qt::TextAlignmentRole && index.column() >= Processing) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant BreakdownModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    if (m_kind == Kind::Errors) {
        switch (section) {
        case ErrorTenant:
            return tr("Tenant");
        case ErrorOperation:
            return tr("Operation");
        case ErrorRows:
            return tr("Rows");
        case ErrorMessage:
            return tr("Top errors of the window");
        }
        return {};
    }
    switch (section) {
    case Tenant:
        return tr("Tenant");
    case Operation:
        return tr("Operation");
    case Processing:
        return tr("Processing");
    case Failed:
        return tr("Failures");
    case Retries:
        return tr("Retries");
    case Conflicts:
        return tr("Conflicts");
    case P95:
        return tr("p95 run");
    }
    return {};
}

idem::TaskFilter BreakdownModel::rowFilter(int row) const
{
    idem::TaskFilter f;
    if (row < 0 || row >= rowCount())
        return f;
    const auto r = static_cast<std::size_t>(row);
    const std::string tenant = m_kind == Kind::Operations ? m_data.rows[r].tenant : m_data.errors[r].tenant;
    const std::string operation = m_kind == Kind::Operations ? m_data.rows[r].operation : m_data.errors[r].operation;
    if (!tenant.empty())
        f.tenant = tenant;
    else if (m_watch && !m_watch->scopeTenant().empty())
        f.tenant = m_watch->scopeTenant();
    if (!operation.empty())
        f.operation = operation;
    f.updatedWithinMinutes = m_windowMinutes;
    if (m_kind == Kind::Errors) {
        f.statuses = { "processing", "retryable_failed", "failed" };
        f.errorContains = m_data.errors[r].message;
    }
    return f;
}

QString BreakdownModel::rowTitle(int row) const { return rowWords(row).text(); }

LiveText BreakdownModel::rowWords(int row) const
{
    if (row < 0 || row >= rowCount())
        return {};
    const auto r = static_cast<std::size_t>(row);
    if (m_kind == Kind::Errors)
        return LiveText([operation = visibleText(m_data.errors[r].operation),
                            message = visibleText(m_data.errors[r].message.substr(0, 60))] {
            return tr("%1: error \"%2\"").arg(operation, message);
        });
    const auto& b = m_data.rows[r];
    return LiveText([tenant = visibleText(b.tenant), operation = visibleText(b.operation)] {
        return tenant.isEmpty() ? tr("Operation %1").arg(operation) : tr("Tenant %1, operation %2").arg(tenant, operation);
    });
}

QString BreakdownModel::legendText() const
{
    if (m_watch && !m_watch->error().isEmpty())
        return tr("Last read failed (tooltip).");
    return tr("%1; ≥ n: at least n").arg(windowText(m_windowMinutes));
}

QString BreakdownModel::noteText() const
{
    QString s = tr("In the %1: failures, retries and conflicts counted per minute; processing now; p95 of the folded "
                   "minutes; ≥ n: at least n (read up to the cap).")
                    .arg(windowText(m_windowMinutes));
    if (m_watch && !m_watch->error().isEmpty())
        s += QLatin1Char(' ') + tr("Last read failed: %1").arg(m_watch->error());
    return s;
}

} // namespace idem::console
