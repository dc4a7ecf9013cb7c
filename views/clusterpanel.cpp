#include "views/clusterpanel.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

#include "models/consolesession.h"
#include "models/patronimodel.h"
#include "models/patroniwatcher.h"
#include "models/visibletext.h"
#include "views/pagestatusline.h"
#include "views/theme.h"

namespace idem::console {

namespace {
    QString addressOf(const ConsoleSession* session)
    {
        return session && session->state() == ConsoleSession::State::Connected ? session->serverInfo().serverAddress
                                                                               : QString();
    }
}

ClusterPanel::ClusterPanel(ConsoleSession* session, QWidget* parent)
    : QWidget(parent)
    , m_session(session)
    , m_watcher(new PatroniWatcher(this))
    , m_model(new PatroniModel(this))
{
    setObjectName(QStringLiteral("clusterPanel"));
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("clusterStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Where Patroni contradicts the server (issue 40): said apart, in the alert tone.
    m_disagreement = new QLabel;
    m_disagreement->setObjectName(QStringLiteral("clusterDisagreement"));
    m_disagreement->setWordWrap(true);
    m_disagreement->setTextFormat(Qt::PlainText);
    m_disagreement->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_disagreement->hide();
    theme::followTone(m_disagreement, theme::Tone::Bad, true);
    m_table = new QTableView;
    m_table->setObjectName(QStringLiteral("clusterTable"));
    m_table->setModel(m_model);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setWordWrap(false);
    m_table->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_status);
    layout->addWidget(m_disagreement);
    layout->addWidget(m_table);

    connect(m_watcher, &PatroniWatcher::changed, this, &ClusterPanel::render);
    connect(session, &ConsoleSession::stateChanged, this, &ClusterPanel::follow);
    connect(session, &ConsoleSession::serverInfoChanged, this, &ClusterPanel::follow);
    // "read N s ago" moves on by itself.
    auto* tick = new QTimer(this);
    tick->setInterval(1000);
    connect(tick, &QTimer::timeout, this, [this] {
        if (m_watcher->configured())
            render();
    });
    tick->start();
    follow();
}

void ClusterPanel::watch(ConsoleSession* monitor)
{
    m_monitor = monitor;
    connect(monitor, &ConsoleSession::serverInfoChanged, this, &ClusterPanel::render);
    connect(monitor, &ConsoleSession::stateChanged, this, &ClusterPanel::render);
}

void ClusterPanel::setInterval(std::chrono::milliseconds interval)
{
    m_watcher->setInterval(interval);
    // Bounded by the pace, so one read never overlaps the next; at least a second on loopback.
    m_watcher->setTimeout(std::clamp(interval, std::chrono::milliseconds(1000), std::chrono::milliseconds(5000)));
}

QString ClusterPanel::statusText() const { return m_status->text(); }
QString ClusterPanel::disagreementText() const
{
    return m_disagreement->isHidden() ? QString() : m_disagreement->text();
}

void ClusterPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        m_model->retranslate();
        render();
    }
    QWidget::changeEvent(event);
}

void ClusterPanel::follow()
{
    // The endpoint goes with the connection: set by whoever connected it, kept across reconnects,
    // and read on while the database does not answer (a failover is when it matters most).
    const bool wasConfigured = m_watcher->configured();
    const QString endpoint
        = m_session->state() == ConsoleSession::State::Disconnected ? QString() : m_session->patroniEndpoint();
    m_watcher->setEndpoint(endpoint);
    if (wasConfigured != m_watcher->configured())
        Q_EMIT configuredChanged(m_watcher->configured());
    render();
}

void ClusterPanel::render()
{
    setVisible(m_watcher->configured());
    if (!m_watcher->configured()) {
        m_model->clear();
        m_status->clear();
        return;
    }
    const QString admin = addressOf(m_session);
    const QString pages = addressOf(m_monitor);
    const int rowsBefore = m_model->rowCount();
    if (m_watcher->hasCluster())
        m_model->setCluster(m_watcher->cluster(), admin, m_monitor && pages != admin ? pages : admin);
    else
        m_model->clear();
    if (rowsBefore != m_model->rowCount() || !m_table->property("sized").toBool()) {
        // As tall as its rows: no scroll bar in a table of three.
        m_table->resizeRowsToContents();
        int height = m_table->horizontalHeader()->sizeHint().height() + 2 * m_table->frameWidth();
        for (int row = 0; row < m_model->rowCount(); ++row)
            height += m_table->rowHeight(row);
        m_table->setFixedHeight(height);
        m_table->setProperty("sized", true);
    }
    m_table->setVisible(m_watcher->hasCluster());

    const PatroniCluster& cluster = m_watcher->cluster();
    const QString read = m_watcher->readAt().isValid() ? ageText(m_watcher->readAt()) : QString();
    QStringList parts;
    if (!m_watcher->error().isEmpty()) {
        parts << (m_watcher->hasCluster()
                ? tr("Patroni's REST API is unreachable: %1. The members below are as read %2.")
                      .arg(m_watcher->error(), read)
                : tr("Patroni's REST API is unreachable: %1").arg(m_watcher->error()));
    } else if (m_watcher->hasCluster()) {
        const PatroniMember* leader = cluster.leader();
        parts << (leader
                ? tr("%n member(s), leader %1; read %2 from %3", nullptr, static_cast<int>(cluster.members.size()))
                      .arg(leader->name, read, m_watcher->answeredBy().toDisplayString())
                : tr("%n member(s) and no leader: a failover is under way or the cluster cannot elect one; "
                     "read %1 from %2",
                    nullptr, static_cast<int>(cluster.members.size()))
                      .arg(read, m_watcher->answeredBy().toDisplayString()));
    } else {
        parts << tr("reading %1…").arg(m_watcher->endpoint());
    }
    if (m_watcher->hasCluster() && cluster.paused)
        parts << tr("maintenance mode: Patroni fails nothing over until it is resumed");
    if (m_watcher->hasCluster() && !cluster.scheduledSwitchover.isEmpty())
        parts << tr("a switchover is scheduled at %1").arg(cluster.scheduledSwitchover);
    if (m_watcher->hasCluster() && !admin.isEmpty()) {
        bool onMember = false;
        for (const auto& m : cluster.members)
            onMember = onMember || m.address() == admin;
        if (!onMember)
            parts << tr("this console's server (%1) is none of these members' addresses: another cluster, or reached "
                        "through another address")
                         .arg(admin);
    }
    m_status->setText(parts.join(QStringLiteral("\n")));

    // What the server says of itself against what Patroni says of the member at its address.
    QStringList disagree;
    if (m_watcher->hasCluster() && m_watcher->error().isEmpty()) {
        for (const ConsoleSession* session :
            { static_cast<const ConsoleSession*>(m_session), static_cast<const ConsoleSession*>(m_monitor) }) {
            if (!session || session->state() != ConsoleSession::State::Connected
                || (session == m_monitor && addressOf(m_monitor) == admin))
                continue;
            const ServerInfo& info = session->serverInfo();
            PatroniServerFacts facts;
            facts.address = info.serverAddress;
            facts.inRecovery = info.inRecovery;
            facts.timeline = info.timeline;
            facts.standbysKnown = !info.inRecovery && info.hiddenStandbys == 0;
            for (const auto& s : info.standbys)
                facts.standbys.insert(visibleText(s.name), s.syncState);
            for (const QString& line : patroniDisagreements(cluster, facts))
                if (!disagree.contains(line))
                    disagree << line;
        }
    }
    m_disagreement->setText(disagree.isEmpty()
            ? QString()
            : tr("Patroni and the server disagree (the Node line above is the server's own answer):\n%1")
                  .arg(disagree.join(QStringLiteral("\n"))));
    m_disagreement->setVisible(!disagree.isEmpty());
}

} // namespace idem::console
