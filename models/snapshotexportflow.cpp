#include "models/snapshotexportflow.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

#include <algorithm>

#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "operations/signing.h"

namespace idem::console {

namespace {
    const QString group = QStringLiteral("snapshotExport");
    // What the export reads per statement at most; the dashboard's own tick timeout is far
    // shorter, but an export is a one-off that reads more.
    constexpr int exportStatementTimeoutMs = 30000;
    // As DashboardModel: the attempts histogram (a wide aggregate) refreshes at most this often.
    constexpr int histogramEveryMs = 30000;
} // namespace

SnapshotExportFlow::SnapshotExportFlow(
    ConsoleSession* monitor, ConsoleSession* admin, DashboardModel* dashboard, QObject* parent)
    : QObject(parent)
    , m_monitor(monitor)
    , m_admin(admin)
    , m_dashboard(dashboard)
    , m_exporter(new SnapshotExporter(monitor, this))
{
    connect(m_exporter, &SnapshotExporter::progressChanged, this, &SnapshotExportFlow::progressChanged);
    connect(m_exporter, &SnapshotExporter::finished, this,
        [this](SnapshotExporter::Outcome outcome, const QString& message, const SnapshotExportResult& result) {
            Q_EMIT availabilityChanged();
            Q_EMIT finished(outcome, message, result);
        });
    if (monitor)
        connect(monitor, &ConsoleSession::stateChanged, this, &SnapshotExportFlow::availabilityChanged);
}

SnapshotExportFlow::~SnapshotExportFlow() = default;

bool SnapshotExportFlow::connected() const
{
    return m_monitor && m_monitor->state() == ConsoleSession::State::Connected;
}

QString SnapshotExportFlow::scopeText() const
{
    if (!m_dashboard)
        return {};
    const auto& s = m_dashboard->settings();
    const QString tenant = s.tenant.isEmpty() ? tr("all tenants") : tr("tenant %1").arg(s.tenant);
    const QString operation = s.operation.isEmpty() ? tr("all operations") : tr("operation %1").arg(s.operation);
    // Named as an operator names a database, not as a conninfo string (which would show the
    // passfile's path and every TLS option).
    QString where;
    if (m_monitor) {
        const auto& info = m_monitor->serverInfo();
        where = tr("database %1 on %2:%3 as %4 (schema %5)")
                    .arg(info.database, info.host.isEmpty() ? QStringLiteral("localhost") : info.host, info.port,
                        info.role, info.schema);
    }
    return tr("One consistent read of %1 (%2, %3; figures over the dashboard's last %n minute(s)), read-only through "
              "the monitor connection.",
        nullptr, s.windowMinutes)
        .arg(where, tenant, operation);
}

SnapshotExportRequest SnapshotExportFlow::request(const ExportChoices& c, const QString& signingKeyPath) const
{
    SnapshotExportRequest r;
    r.target = c.target;
    r.overwrite = c.overwrite;
    r.pdf = c.pdf;
    if (c.sign)
        r.signingKeyPath
            = signingKeyPath.isEmpty() ? QString::fromStdString(idem::defaultSigningKeyPath().string()) : signingKeyPath;
    r.options.historyMinutes = c.historyMinutes;
    r.options.rowLimit = c.rowLimit;
    r.options.redact = c.redact;
    r.options.stats.statementTimeoutMs = exportStatementTimeoutMs;
    const QString version = QCoreApplication::applicationVersion();
    r.context.producer
        = (version.isEmpty() ? QStringLiteral("idem-console") : QStringLiteral("idem-console %1").arg(version))
              .toStdString();
    if (m_monitor)
        r.context.conninfo = m_monitor->serverInfo().displayConninfo.toStdString(); // no password in it
    if (m_admin && m_admin != m_monitor && m_admin->state() == ConsoleSession::State::Connected) {
        r.context.adminConninfo = m_admin->serverInfo().displayConninfo.toStdString();
        r.context.adminRole = m_admin->serverInfo().role.toStdString();
    }
    if (m_dashboard) {
        const auto& s = m_dashboard->settings();
        r.options.stats.windowMinutes = s.windowMinutes;
        r.options.stats.longUnfinishedAfterMinutes = s.longUnfinishedMinutes;
        if (!s.tenant.isEmpty())
            r.options.stats.tenant = s.tenant.toStdString();
        if (!s.operation.isEmpty())
            r.options.stats.operation = s.operation.toStdString();
        r.context.thresholds = snapshotThresholds(s);
        idem::SnapshotPollSettings poll;
        poll.intervalMs = s.intervalMs;
        poll.statementTimeoutMs = m_dashboard->statementTimeoutMs();
        poll.wideRefreshMs = std::max(histogramEveryMs, 10 * s.intervalMs);
        r.context.poll = poll;
    }
    // The charts over the snapshot's own history window, drawn once it is read (they used to be
    // the dashboard's as shown, which cover its figures window only).
    r.drawCharts = m_drawCharts;
    return r;
}

bool SnapshotExportFlow::start(const ExportChoices& choices, const QString& signingKeyPath)
{
    if (running())
        return false;
    const bool started = m_exporter->start(request(choices, signingKeyPath));
    Q_EMIT availabilityChanged();
    return started;
}

ExportChoices SnapshotExportFlow::rememberedChoices(QSettings& settings)
{
    ExportChoices c;
    settings.beginGroup(group);
    const QString folder = settings.value(QStringLiteral("folder"), defaultFolder()).toString();
    c.historyMinutes = settings.value(QStringLiteral("historyMinutes"), 60).toInt();
    c.rowLimit = settings.value(QStringLiteral("rowLimit"), 1000).toInt();
    c.redact = settings.value(QStringLiteral("redact"), false).toBool();
    c.sign = settings.value(QStringLiteral("sign"), false).toBool();
    c.pdf = settings.value(QStringLiteral("pdf"), true).toBool();
    settings.endGroup();
    c.target = QDir(folder).filePath(newBundleName());
    return c;
}

void SnapshotExportFlow::rememberChoices(QSettings& settings, const ExportChoices& c)
{
    settings.beginGroup(group);
    settings.setValue(QStringLiteral("folder"), QFileInfo(c.target).absolutePath());
    settings.setValue(QStringLiteral("historyMinutes"), c.historyMinutes);
    settings.setValue(QStringLiteral("rowLimit"), c.rowLimit);
    settings.setValue(QStringLiteral("redact"), c.redact);
    settings.setValue(QStringLiteral("sign"), c.sign);
    settings.setValue(QStringLiteral("pdf"), c.pdf);
    settings.endGroup();
}

QString SnapshotExportFlow::lastFolder(QSettings& settings)
{
    return settings.value(group + QStringLiteral("/folder"), defaultFolder()).toString();
}

QString SnapshotExportFlow::defaultFolder()
{
    const QString docs = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    return docs.isEmpty() ? QDir::homePath() : docs;
}

QString SnapshotExportFlow::newBundleName()
{
    return QStringLiteral("idem-snapshot-")
        + QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss")) + QStringLiteral("Z");
}

} // namespace idem::console
