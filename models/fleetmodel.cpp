#include "models/fleetmodel.h"

#include <QCoreApplication>
#include <QLocale>

#include <algorithm>
#include <chrono>

#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/environment.h"
#include "models/pausewatch.h"

namespace idem::console {

namespace {
    Level worse(Level a, Level b) { return static_cast<int>(a) >= static_cast<int>(b) ? a : b; }

    // A standby this far behind is amber on the Fleet page (the lag is said at any size).
    constexpr double lagAmberSeconds = 30;
    // How often a row that cannot poll reads its server: as a console's Connection page does.
    constexpr int infoRefreshMs = 10000;
} // namespace

struct FleetModel::Row {
    FleetEntry entry;
    // Destroyed in reverse: the readers before the session they read through.
    std::unique_ptr<ConsoleSession> session;
    std::unique_ptr<DashboardModel> dashboard;
    std::unique_ptr<PauseWatch> pauses;
    QString node; // "host:port" of the last connection, with its role
    bool standby = false;
    QString previousNode;
    QDateTime nodeChangedAt;
};

FleetModel::FleetModel(const DashboardSettings& dashboard, QObject* parent)
    : QAbstractTableModel(parent)
    , m_dashboard(dashboard)
{
    m_dashboard.tenant.clear();
    m_dashboard.operation.clear();
    m_dashboard.paused = false;
}

FleetModel::~FleetModel() = default;

void FleetModel::setEntries(const std::vector<FleetEntry>& entries)
{
    beginResetModel();
    m_rows.clear();
    for (const auto& e : entries) {
        auto row = std::make_unique<Row>();
        row->entry = e;
        row->session = std::make_unique<ConsoleSession>();
        row->dashboard = std::make_unique<DashboardModel>(row->session.get());
        row->dashboard->setSettings(m_dashboard);
        row->pauses = std::make_unique<PauseWatch>(row->session.get());
        const Row* r = row.get();
        const auto changed = [this, r] { rowChanged(r); };
        connect(row->session.get(), &ConsoleSession::stateChanged, this, changed);
        connect(row->session.get(), &ConsoleSession::failed, this, changed);
        connect(row->session.get(), &ConsoleSession::serverInfoChanged, this, [this, r] {
            noteNode(const_cast<Row*>(r));
            // A row whose dashboard cannot poll (no Idem schema yet, a role that may not read it)
            // sends nothing, so nothing would notice its connection lost when its server restarts
            // (issue 40: it never reconnected): it reads the server as a console's Connection page
            // does, every 10 s, which finds a lost connection (and reconnects) and a schema created
            // meanwhile. A row that polls finds both by its ticks.
            const ServerInfo& info = r->session->serverInfo();
            const bool polls = info.tableExists && info.isReader && info.schemaError.isEmpty();
            r->session->setInfoRefreshInterval(std::chrono::milliseconds(polls ? 0 : infoRefreshMs));
            rowChanged(r);
        });
        connect(row->dashboard.get(), &DashboardModel::updated, this, changed);
        connect(row->dashboard.get(), &DashboardModel::freshnessChanged, this, changed);
        connect(row->pauses.get(), &PauseWatch::changed, this, changed);
        m_rows.push_back(std::move(row));
    }
    endResetModel();
    // The connection a console's pages read through (the monitor's, else the server itself).
    for (const auto& row : m_rows)
        row->session->connectTo(monitorSettings(row->entry.settings));
    Q_EMIT changed();
}

int FleetModel::rowOf(const QString& name) const
{
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i]->entry.name == name)
            return static_cast<int>(i);
    return -1;
}

const FleetEntry& FleetModel::entry(int row) const { return m_rows.at(static_cast<std::size_t>(row))->entry; }
ConsoleSession* FleetModel::session(int row) const { return m_rows.at(static_cast<std::size_t>(row))->session.get(); }
DashboardModel* FleetModel::dashboard(int row) const
{
    return m_rows.at(static_cast<std::size_t>(row))->dashboard.get();
}
PauseWatch* FleetModel::pauses(int row) const { return m_rows.at(static_cast<std::size_t>(row))->pauses.get(); }

void FleetModel::noteNode(Row* row)
{
    const auto& info = row->session->serverInfo();
    if (info.host.isEmpty() && info.port.isEmpty())
        return;
    const QString node = info.host + QLatin1Char(':') + info.port;
    if (!row->node.isEmpty() && (node != row->node || info.inRecovery != row->standby)) {
        row->previousNode = row->node + (row->standby ? tr(" (standby)") : tr(" (primary)"));
        row->nodeChangedAt = QDateTime::currentDateTime();
    }
    row->node = node;
    row->standby = info.inRecovery;
}

void FleetModel::rowChanged(const Row* row)
{
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].get() == row) {
            const int r = static_cast<int>(i);
            Q_EMIT dataChanged(index(r, 0), index(r, ColumnCount - 1));
            Q_EMIT changed();
            return;
        }
    }
}

FleetModel::Health FleetModel::health(int r) const
{
    const Row& row = *m_rows.at(static_cast<std::size_t>(r));
    const ConsoleSession& session = *row.session;
    const DashboardModel& dash = *row.dashboard;
    Health h;
    using State = ConsoleSession::State;
    switch (session.state()) {
    case State::Disconnected:
        h.text = tr("Not connected.");
        return h;
    case State::Connecting:
        if (!session.lastFailure()) {
            h.text = tr("Connecting…");
            return h;
        }
        [[fallthrough]]; // reconnecting after a failure: say the failure
    case State::Failed: {
        h.level = Level::Critical;
        const auto& f = session.lastFailure();
        h.text = f ? tr("Cannot connect: %1").arg(f->text()) : tr("Cannot connect.");
        h.detail = f ? f->textWithRetry() : QString();
        return h;
    }
    case State::Connected:
        break;
    }
    if (!session.canPoll() || dash.freshness() == DashboardModel::Freshness::NoData) {
        h.level = session.canPoll() ? Level::NoData : Level::Warning;
        h.text = dash.reason().isEmpty() ? tr("Reading…") : dash.reason();
        return h;
    }
    QStringList words;
    QStringList details;
    if (dash.freshness() != DashboardModel::Freshness::Live) {
        h.level = Level::Warning;
        words << tr("not answering: %1").arg(dash.reason());
        details << dash.reason();
    }
    // The tiles as the dashboard colours them: red ones by name and figure, then amber ones.
    QStringList red;
    QStringList amber;
    for (const auto& alert : dash.openAlerts()) {
        red << QStringLiteral("%1 %2").arg(tileTitle(alert.tile), dash.tile(alert.tile).text);
        details << dash.alertText(alert.tile);
    }
    for (int i = 0; i < tileCount; ++i) {
        const auto t = static_cast<Tile>(i);
        const TileValue v = dash.tile(t);
        if (v.level == Level::Critical && dash.openAlerts().empty())
            red << QStringLiteral("%1 %2").arg(tileTitle(t), v.text);
        if (v.level == Level::Warning)
            amber << QStringLiteral("%1 %2").arg(tileTitle(t), v.text);
        h.level = worse(h.level, v.level);
    }
    if (!red.isEmpty())
        words << tr("red: %1").arg(red.join(QStringLiteral(", ")));
    if (!amber.isEmpty())
        words << tr("amber: %1").arg(amber.join(QStringLiteral(", ")));
    // Expired leases say so in words even below the tile's amber line.
    if (dash.latest()) {
        const auto expired = dash.latest()->stats.expiredLeases;
        if (expired > 0 && dash.tile(Tile::ExpiredLeases).level < Level::Warning) {
            words << tr("%1 expired leases").arg(QLocale().toString(qlonglong(expired)));
            h.level = worse(h.level, Level::Warning);
        }
    }
    const auto paused = row.pauses->active();
    if (!paused.empty()) {
        QStringList scopes;
        for (const auto& p : paused)
            scopes << pauseScopeText(p);
        words << tr("intake paused (%1)").arg(scopes.join(QStringLiteral(", ")));
        h.level = worse(h.level, Level::Warning);
    }
    if (dash.latest() && dash.latest()->stats.replicationLagSeconds
        && *dash.latest()->stats.replicationLagSeconds >= lagAmberSeconds) {
        words << tr("standby %1 s behind").arg(QLocale().toString(*dash.latest()->stats.replicationLagSeconds, 'f', 0));
        h.level = worse(h.level, Level::Warning);
    }
    if (row.nodeChangedAt.isValid() && row.nodeChangedAt.msecsTo(QDateTime::currentDateTime()) < recentChangeMs) {
        words << tr("node changed at %1").arg(row.nodeChangedAt.toString(QStringLiteral("HH:mm:ss")));
        h.level = worse(h.level, Level::Warning);
    }
    if (words.isEmpty()) {
        h.level = worse(h.level, Level::Normal);
        words << tr("Healthy");
    }
    h.text = words.join(QStringLiteral("; "));
    h.detail = details.join(QLatin1Char('\n'));
    return h;
}

QString FleetModel::nodeText(int r) const
{
    const Row& row = *m_rows.at(static_cast<std::size_t>(r));
    if (row.node.isEmpty())
        return {};
    const auto& info = row.session->serverInfo();
    QString out = (info.inRecovery ? tr("standby %1/%2") : tr("primary %1/%2")).arg(row.node, info.database);
    const auto& latest = row.dashboard->latest();
    if (info.inRecovery && latest && latest->stats.replicationLagSeconds)
        out += tr(", replay %1 s behind").arg(QLocale().toString(*latest->stats.replicationLagSeconds, 'f', 1));
    if (row.nodeChangedAt.isValid() && row.nodeChangedAt.msecsTo(QDateTime::currentDateTime()) < recentChangeMs)
        out += tr("; changed at %1 (was %2)")
                   .arg(row.nodeChangedAt.toString(QStringLiteral("HH:mm:ss")), row.previousNode);
    return out;
}

QString FleetModel::costText(int r) const
{
    const Row& row = *m_rows.at(static_cast<std::size_t>(r));
    const DashboardModel& dash = *row.dashboard;
    // Nothing is read from a database that is not connected or has nothing to read.
    if (row.session->state() != ConsoleSession::State::Connected)
        return tr("no reads: not connected");
    if (!row.session->canPoll())
        return tr("no reads: nothing to read");
    if (dash.ticks() == 0)
        return dash.pollingText();
    return tr("tick %1 ms, %2").arg(dash.lastTickMs()).arg(dash.pollingText());
}

int FleetModel::count(Level level) const
{
    int n = 0;
    for (int r = 0; r < rowCount(); ++r)
        n += health(r).level == level ? 1 : 0;
    return n;
}

QString FleetModel::summaryText() const
{
    return tr("%1 databases: %2 red, %3 amber, %4 green, %5 not known yet")
        .arg(rowCount())
        .arg(count(Level::Critical))
        .arg(count(Level::Warning))
        .arg(count(Level::Normal))
        .arg(count(Level::NoData));
}

int FleetModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int FleetModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QColor FleetModel::levelColour(Level level)
{
    switch (level) {
    case Level::Critical:
        return environment::colour(QStringLiteral("red"));
    case Level::Warning:
        return environment::colour(QStringLiteral("amber"));
    case Level::Normal:
        return environment::colour(QStringLiteral("green"));
    case Level::NoData:
        break;
    }
    return environment::colour(QStringLiteral("grey"));
}

QColor FleetModel::levelTextColour(Level level) { return environment::textOn(levelColour(level)); }

QVariant FleetModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const Row& row = *m_rows.at(static_cast<std::size_t>(index.row()));
    const QColor envColour = environment::colourOf(row.entry.settings);
    if (role == NameRole)
        return row.entry.name;
    if (role == EnvironmentColourRole)
        return envColour;
    if (role == LevelRole)
        return static_cast<int>(health(index.row()).level);
    switch (index.column()) {
    case DatabaseColumn:
        if (role == Qt::DisplayRole)
            return row.entry.name;
        if (role == Qt::ToolTipRole)
            return tr("Double-click to open %1 in a console window of its own.").arg(row.entry.name);
        break;
    case EnvironmentColumn:
        if (role == Qt::DisplayRole)
            return row.entry.settings.environment.trimmed().isEmpty() ? tr("(none)")
                                                                      : row.entry.settings.environment.trimmed();
        if (role == Qt::BackgroundRole && envColour.isValid())
            return envColour;
        if (role == Qt::ForegroundRole && envColour.isValid())
            return environment::textOn(envColour);
        break;
    case HealthColumn: {
        if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != Qt::BackgroundRole
            && role != Qt::ForegroundRole)
            break;
        const Health h = health(index.row());
        if (role == Qt::DisplayRole)
            return h.text;
        if (role == Qt::ToolTipRole)
            return h.detail.isEmpty() ? h.text : h.detail;
        if (role == Qt::BackgroundRole)
            return levelColour(h.level);
        return levelTextColour(h.level);
    }
    case NodeColumn:
        if (role == Qt::DisplayRole || role == Qt::ToolTipRole)
            return nodeText(index.row());
        break;
    case CostColumn:
        if (role == Qt::DisplayRole)
            return costText(index.row());
        if (role == Qt::ToolTipRole)
            return tr("One connection on a worker thread of its own, read as one console's dashboard reads it: "
                      "one statement per tick, %1, and the pauses every %2 s.")
                .arg(row.dashboard->pollingText())
                .arg(row.pauses->interval() / 1000);
        break;
    default:
        break;
    }
    return {};
}

QVariant FleetModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case DatabaseColumn:
        return tr("Database");
    case EnvironmentColumn:
        return tr("Environment");
    case HealthColumn:
        return tr("Health");
    case NodeColumn:
        return tr("Server");
    case CostColumn:
        return tr("Console's cost");
    default:
        return {};
    }
}

} // namespace idem::console
