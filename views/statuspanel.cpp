#include "views/statuspanel.h"

#include <QCoreApplication>
#include <QEvent>
#include <QFormLayout>
#include <QLabel>
#include <QLocale>
#include <QTimer>

#include <algorithm>

#include "models/atriskwatch.h"
#include "models/consolesession.h"
#include "models/durationtext.h"
#include "models/visibletext.h"
#include "operations/node.h"
#include "views/pagestatusline.h"
#include "views/theme.h"


namespace idem::console {

namespace {
    constexpr int infoRefreshSeconds = 10;

    QString serverClockTime(const QDateTime& t)
    {
        return t.isValid() ? QLocale().toString(t.toLocalTime(), QStringLiteral("HH:mm:ss")) : QStringLiteral("–");
    }

    QString serverClock(const QDateTime& t)
    {
        return QCoreApplication::translate("idem::console::StatusPanel", "%1 (server clock)")
            .arg(QLocale().toString(t.toLocalTime(), QStringLiteral("yyyy-MM-dd HH:mm:ss")));
    }
}

StatusPanel::StatusPanel(ConsoleSession* session, QWidget* parent)
    : QWidget(parent)
    , m_session(session)
    , m_atRiskWatch(new AtRiskWatch(session, this))
{
    setObjectName(QStringLiteral("statusPanel"));
    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    form->setLabelAlignment(Qt::AlignRight);
    setLayout(form);
    m_state = addRow(QT_TR_NOOP("State:"), QStringLiteral("stateValue"));
    m_server = addRow(QT_TR_NOOP("Server:"), QStringLiteral("serverValue"));
    // The node as the server itself says, read again every few seconds: after a failover the
    // address connected to (a proxy, a multi-host conninfo) reaches another server.
    m_node = addRow(QT_TR_NOOP("Node:"), QStringLiteral("nodeValue"));
    m_nodeSince = addRow(QT_TR_NOOP("Node since:"), QStringLiteral("nodeSinceValue"));
    m_database = addRow(QT_TR_NOOP("Database:"), QStringLiteral("databaseValue"));
    m_role = addRow(QT_TR_NOOP("Role:"), QStringLiteral("roleValue"));
    m_privilege = addRow(QT_TR_NOOP("Privilege:"), QStringLiteral("privilegeValue"));
    // --- The login's rights, as idemctl rights lists them (issue 41, item 6) ---
    m_rights = addRow(QT_TR_NOOP("Rights:"), QStringLiteral("rightsValue"));
    // --- end of the rights ---
    m_schema = addRow(QT_TR_NOOP("Schema:"), QStringLiteral("schemaValue"));
    m_tls = addRow(QT_TR_NOOP("TLS:"), QStringLiteral("tlsValue"));
    m_pooler = addRow(QT_TR_NOOP("Pooler:"), QStringLiteral("poolerValue"));
    m_replication = addRow(QT_TR_NOOP("Replication:"), QStringLiteral("replicationValue"));
    m_standbys = addRow(QT_TR_NOOP("Standbys:"), QStringLiteral("standbysValue"));
    // What a failover could lose with asynchronous replication (issue #29): read on this (the
    // admin, usually the primary's) connection after each read of the server.
    m_atRisk = addRow(QT_TR_NOOP("At risk:"), QStringLiteral("atRiskValue"));
    // When this connection was made (a reconnect after a failover makes a new one); the rest is
    // as of the last read, which "Read:" dates.
    m_asOf = addRow(QT_TR_NOOP("Connected at:"), QStringLiteral("asOfValue"));
    m_age = addRow(QT_TR_NOOP("Read:"), QStringLiteral("connectionAge"));
    auto* tick = new QTimer(this);
    tick->setInterval(1000);
    connect(tick, &QTimer::timeout, this, &StatusPanel::showState);
    tick->start();

    connect(session, &ConsoleSession::serverInfoChanged, this, &StatusPanel::showInfo);
    session->setInfoRefreshInterval(std::chrono::seconds(infoRefreshSeconds));
    connect(session, &ConsoleSession::stateChanged, this, &StatusPanel::showState);
    connect(m_atRiskWatch, &AtRiskWatch::changed, this, &StatusPanel::renderAtRisk);
    showState();
}

QLabel* StatusPanel::addRow(const char* title, const QString& objectName)
{
    auto* value = new QLabel(QStringLiteral("–"));
    value->setObjectName(objectName);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    value->setWordWrap(true);
    auto* label = new QLabel(tr(title));
    label->setObjectName(objectName + QStringLiteral("Label"));
    static_cast<QFormLayout*>(layout())->addRow(label, value);
    m_titles.emplace_back(label, title);
    return value;
}

void StatusPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        for (const auto& [label, source] : m_titles)
            label->setText(tr(source));
        if (m_readAt.isValid())
            renderInfo(m_session->serverInfo());
        renderAtRisk();
        showState();
    }
    QWidget::changeEvent(event);
}

QString StatusPanel::serverText() const { return m_server->text(); }
QString StatusPanel::roleText() const { return m_role->text(); }
QString StatusPanel::privilegeText() const { return m_privilege->text(); }
QString StatusPanel::rightsText() const { return m_rights->text(); }
QString StatusPanel::schemaText() const { return m_schema->text(); }
QString StatusPanel::tlsText() const { return m_tls->text(); }
QString StatusPanel::nodeText() const { return m_node->text(); }
QString StatusPanel::nodeSinceText() const { return m_nodeSince->text(); }
QString StatusPanel::replicationText() const { return m_replication->text(); }
QString StatusPanel::standbysText() const { return m_standbys->text(); }
QString StatusPanel::connectedAtText() const { return m_asOf->text(); }
QString StatusPanel::atRiskText() const { return m_atRisk->text(); }

void StatusPanel::watch(ConsoleSession* monitor)
{
    m_monitor = monitor;
    // The pages' connection reads its node as often: the dashboard names it too.
    monitor->setInfoRefreshInterval(std::chrono::seconds(infoRefreshSeconds));
    connect(monitor, &ConsoleSession::stateChanged, this, &StatusPanel::showState);
    // The pages' connection (re)connected: the server may have restarted, failed over or been
    // upgraded under the idle admin connection. Read it again rather than keep "Connected at"
    // from before the restart (a dead admin connection reconnects, and reads it then).
    connect(monitor, &ConsoleSession::stateChanged, this, [this](ConsoleSession::State s) {
        if (s == ConsoleSession::State::Connected && m_monitor != m_session)
            m_session->refreshServerInfo();
    });
    showState();
}

void StatusPanel::showState()
{
    m_age->setText(m_readAt.isValid() ? tr("%1, server clock %2; read again every %3 s while connected")
                                            .arg(ageText(m_readAt), serverClockTime(m_session->serverInfo().asOf))
                                            .arg(infoRefreshSeconds)
                                      : QStringLiteral("–"));
    // The pages' connection lost while this one idles: the same state as every other page.
    const ConsoleSession* lost = m_session->state() == ConsoleSession::State::Failed ? m_session
        : m_monitor && m_monitor->state() == ConsoleSession::State::Failed && m_session->state() == ConsoleSession::State::Connected
        ? m_monitor
        : nullptr;
    if (lost) {
        const auto& f = lost->lastFailure();
        const QString reason = f ? oneLine(f->message) : tr("the connection failed");
        m_state->setText(f && f->retryInSeconds > 0
                ? tr("disconnected: %1; reconnecting by itself (showing the last known state)").arg(reason)
                : tr("disconnected: %1 (showing the last known state)").arg(reason));
        return;
    }
    switch (m_session->state()) {
    case ConsoleSession::State::Disconnected:
        m_state->setText(tr("not connected"));
        for (auto* value : { m_server, m_node, m_nodeSince, m_database, m_role, m_privilege, m_rights, m_schema, m_tls,
                 m_pooler, m_replication, m_standbys, m_atRisk, m_asOf, m_age })
            value->setText(QStringLiteral("–"));
        m_readAt = QDateTime();
        m_atRiskWatch->clear();
        break;
    case ConsoleSession::State::Connecting:
        m_state->setText(tr("connecting…"));
        break;
    case ConsoleSession::State::Connected:
        m_state->setText(tr("connected"));
        break;
    case ConsoleSession::State::Failed:
        // What is below is the last thing known, kept so a short outage does not blank it.
        m_state->setText(m_session->serverInfo().requestId ? tr("disconnected (showing the last known state)")
                                                           : tr("not connected"));
        break;
    }
}

void StatusPanel::showInfo(const ServerInfo& info)
{
    m_readAt = QDateTime::currentDateTime();
    renderInfo(info);
    showState();
    m_atRiskWatch->read();
}

void StatusPanel::renderAtRisk()
{
    const auto& reading = m_atRiskWatch->reading();
    m_atRisk->setText(reading            ? atRiskText(*reading)
            : m_atRiskWatch->unavailable() ? tr("not available: this role cannot read the schema")
            : !m_atRiskWatch->error().isEmpty() ? tr("not read: %1").arg(m_atRiskWatch->error())
                                               : QStringLiteral("–"));
    // A standby behind that stopped replying or went away: what a failover to it loses, said loud.
    const bool alert = reading && reading->alert();
    if (alert)
        theme::followTone(m_atRisk, theme::Tone::Bad, true);
    else
        theme::clearTone(m_atRisk);
    m_atRisk->setProperty("alert", alert);
}

namespace {
    QString bytesText(std::int64_t bytes)
    {
        const QLocale locale;
        if (bytes < 1024 * 1024)
            return QCoreApplication::translate("idem::console::StatusPanel", "%1 bytes").arg(locale.toString(bytes));
        return QCoreApplication::translate("idem::console::StatusPanel", "%1 MB")
            .arg(locale.toString(static_cast<double>(bytes) / (1024.0 * 1024.0), 'f', 1));
    }

    QString serverTimeUs(std::int64_t us)
    {
        return QLocale().toString(QDateTime::fromMSecsSinceEpoch(us / 1000).toLocalTime(), QStringLiteral("HH:mm:ss"));
    }

    QString secondsText(std::int64_t us) { return durationText(static_cast<double>(us) / 1000.0); }
} // namespace

QString StatusPanel::atRiskText(const idem::AtRiskReading& r)
{
    using Presence = idem::AtRiskReading::Presence;
    if (r.inRecovery)
        return tr("read on the primary: this server is a standby");
    if (r.synchronous)
        return tr("0: every acknowledged commit waits for a synchronous standby (synchronous_standby_names = %1)")
            .arg(visibleText(r.synchronousNames));
    QStringList parts;
    const QLocale locale;
    for (const auto& s : r.standbys) {
        const QString name = s.name.empty() ? tr("an unnamed standby") : visibleText(s.name);
        if (s.syncState == "sync" || s.syncState == "quorum") {
            parts << tr("0 on %1 (synchronous)").arg(name);
            continue;
        }
        if (s.behindBytes == 0) {
            parts << tr("0 on %1 (no lag)").arg(name);
            continue;
        }
        // What it lacks: a streaming standby, the last moment of its lag; one that stopped
        // replying or went away, everything since its flushed point (issue 40: it read 0 then).
        QString what;
        if (r.functionMissing)
            what = tr("the successes since then: not available (idemctl migrate)");
        else if (!r.functionAllowed)
            what = tr("the successes since then: not available (this role may not count them: grant idem_reader)");
        else {
            const auto n = static_cast<int>(std::clamp<std::int64_t>(s.successes, 0, r.cap));
            what = tr("%Ln acknowledged success(es)", nullptr, n);
            if (s.successes > r.cap)
                what = tr("more than %1").arg(what);
            else if (!s.sinceBounded)
                what = tr("at least %1").arg(what);
        }
        const QString since = s.sinceUs >= 0 ? serverTimeUs(s.sinceUs) : QStringLiteral("–");
        const QString behind = s.behindBytes > 0 ? bytesText(s.behindBytes) : tr("an unknown amount");
        if (s.presence == Presence::Silent) {
            parts << tr("%1 since %2 (server clock) are not on %3: it has not replied for %4 and is %5 of WAL behind; "
                        "a failover to it now loses them")
                         .arg(what, since, name,
                             s.replyAgeUs >= 0 ? secondsText(s.replyAgeUs) : tr("as long as it streamed"), behind);
            continue;
        }
        if (s.presence == Presence::Disconnected) {
            const QString how = !s.slot.empty()
                ? tr("not connected; its replication slot %1 holds its point").arg(visibleText(s.slot))
                : tr("not connected since %1")
                      .arg(s.lastSeenUs >= 0 ? serverTimeUs(s.lastSeenUs) : QStringLiteral("–"));
            parts << tr("%1 since %2 (server clock) are not on %3: it is %4, %5 of WAL behind; a failover to it now "
                        "loses them")
                         .arg(what, since, name, how, behind);
            continue;
        }
        // Under a millisecond on a quiet loopback, seconds across a WAN.
        const std::int64_t lagUs
            = s.sinceUs >= 0 ? std::max<std::int64_t>(r.nowUs - s.sinceUs, 0) : std::max<std::int64_t>(s.flushLagUs, 0);
        const QString lag = lagUs < 1000
            ? tr("%1 ms").arg(locale.toString(static_cast<double>(lagUs) / 1000.0, 'f', 2))
            : tr("%1 s").arg(locale.toString(static_cast<double>(lagUs) / 1000000.0, 'f', 3));
        if (r.functionMissing)
            parts << tr("%1 lags %2; the successes in that window: not available (idemctl migrate)").arg(name, lag);
        else if (!r.functionAllowed)
            parts << tr("%1 lags %2; the successes in that window: not available (this role may not count them: "
                        "grant idem_reader)")
                         .arg(name, lag);
        else if (s.successes > r.cap)
            parts << tr("more than %1 successes acknowledged in the last %2 of lag are not on %3 yet")
                         .arg(locale.toString(static_cast<qlonglong>(r.cap)), lag, name);
        else
            parts << tr("%n success(es) acknowledged in the last %1 of lag are not on %2 yet", nullptr,
                static_cast<int>(std::max<std::int64_t>(s.successes, 0)))
                         .arg(lag, name);
    }
    if (r.hiddenStandbys > 0)
        parts << tr("%n standby(s) whose lag this role may not read (grant pg_monitor)", nullptr, r.hiddenStandbys);
    if (parts.isEmpty())
        return r.functionMissing ? tr("not available (idemctl migrate); no standby streams from this server")
                                 : tr("none: no standby streams from this server");
    return parts.join(QStringLiteral("\n"));
}

void StatusPanel::renderInfo(const ServerInfo& info)
{
    m_server->setText(tr("PostgreSQL %1 at %2:%3").arg(info.serverVersion, info.host, info.port));
    m_database->setText(info.database);
    m_role->setText(
        info.role == info.sessionRole ? info.role : tr("%1 (logged in as %2)").arg(info.role, info.sessionRole));
    m_privilege->setText(info.privilegeText());
    // --- The login's rights, one a line, as idemctl rights prints them (issue 41, item 6) ---
    {
        QStringList lines;
        const auto& r = info.rights;
        for (const auto& right : r.rights())
            lines << (right.granted ? tr("%1: yes (%2)") : tr("%1: no (%2)")).arg(right.name, right.grantRole);
        if (!r.perRight())
            lines << tr("(this schema predates per-action rights, v21: idem_operator may do everything)");
        m_rights->setText(lines.join(QLatin1Char('\n')));
    }
    // --- end of the rights ---

    QString schema;
    if (!info.schemaError.isEmpty())
        schema = tr("%1: cannot be read (%2)").arg(info.schema, info.schemaError);
    else if (info.schemaMissing())
        schema = tr("%1: not created yet (this console ships version %2)").arg(info.schema, QString::number(info.schemaLatest));
    else if (info.schemaNewer())
        schema = tr("%1, version %2: newer than this console (%3), read-only")
                     .arg(info.schema, QString::number(info.schemaVersion), QString::number(info.schemaLatest));
    else if (info.schemaOlder())
        schema = tr("%1, version %2: older than this console (%3)")
                     .arg(info.schema, QString::number(info.schemaVersion), QString::number(info.schemaLatest));
    else
        schema = tr("%1, version %2 (current)").arg(info.schema, QString::number(info.schemaVersion));
    if (!info.schemaProblems.isEmpty())
        schema = tr("%1; problems: %2").arg(schema, info.schemaProblems.join(QStringLiteral("; ")));
    m_schema->setText(schema);

    m_tls->setText(info.tls ? tr("yes (%1, %2)").arg(info.tlsVersion, info.tlsCipher)
                            : tr("no: traffic and password travel in clear text"));
    m_pooler->setText(info.pooler
            ? tr("a connection pooler (PgBouncer) answers for the server: the console keeps no session state "
                 "(settings per transaction, unnamed statements), as transaction pooling needs")
            : tr("none: connected to the server itself"));
    m_replication->setText(info.replicationText());
    m_standbys->setText(info.standbysText());
    m_asOf->setText(serverClock(info.connectedAt.isValid() ? info.connectedAt : info.asOf));
    m_node->setText(info.nodeText());

    // When the node last changed under this console, and whether a failover was recorded for
    // every console (idem_note_timeline, schema v20).
    const QString since = info.nodeSince.isValid()
        ? QLocale().toString(info.nodeSince, QStringLiteral("yyyy-MM-dd HH:mm:ss"))
        : QStringLiteral("–");
    QStringList nodeSince;
    nodeSince << (info.previousNode.isEmpty()
            ? tr("%1 (this console's clock), since connecting").arg(since)
            : tr("%1 (this console's clock); before: %2").arg(since, info.previousNode));
    if (info.timelineOutcome == QLatin1String("failover")
        || (info.timelineOutcome == QLatin1String("known") && info.previousTimeline > 0))
        nodeSince << tr("timeline %1 follows %2 since %3: a failover, on every console's charts")
                         .arg(info.timeline)
                         .arg(info.previousTimeline)
                         .arg(serverClock(info.timelineSince));
    else if (info.timelineOutcome == QLatin1String("first") || info.timelineOutcome == QLatin1String("known"))
        nodeSince << tr("timeline %1 is the first recorded for this system (since %2)")
                         .arg(info.timeline)
                         .arg(serverClock(info.timelineSince));
    else if (info.timelineOutcome == QLatin1String("not_allowed"))
        nodeSince << tr("failovers are not recorded: the schema's owner may not call pg_control_system()");
    else if (!info.timelineError.isEmpty())
        nodeSince << tr("the timeline could not be recorded: %1").arg(info.timelineError);
    m_nodeSince->setText(nodeSince.join(QStringLiteral("\n")));
}

} // namespace idem::console
