#include "views/consolewidget.h"

#include <QEvent>
#include <QGroupBox>
#include <QTabWidget>
#include <QVBoxLayout>

#include "models/auditwitness.h"
#include "models/consolesession.h"
#include "models/patroniwatcher.h"
#include "views/clusterpanel.h"
#include "views/noticebanner.h"
#include "views/pausebanner.h"
#include "views/statuspanel.h"

namespace idem::console {

ConsoleWidget::ConsoleWidget(ConsoleSession* session, QWidget* parent)
    : QWidget(parent)
    , m_session(session)
{
    m_banner = new NoticeBanner;
    m_status = new StatusPanel(session);
    auto* statusBox = new QGroupBox(tr("Connection"));
    statusBox->setObjectName(QStringLiteral("connectionBox"));
    auto* statusLayout = new QVBoxLayout(statusBox);
    statusLayout->addWidget(m_status);

    // The Patroni cluster (issue #29), where the connection names its REST API.
    m_cluster = new ClusterPanel(session);
    auto* clusterBox = new QGroupBox(tr("Patroni cluster"));
    clusterBox->setObjectName(QStringLiteral("clusterBox"));
    auto* clusterLayout = new QVBoxLayout(clusterBox);
    clusterLayout->addWidget(m_cluster);
    clusterBox->setVisible(m_cluster->watcher()->configured());
    connect(m_cluster, &ClusterPanel::configuredChanged, clusterBox, &QWidget::setVisible);

    auto* connectionPage = new QWidget;
    connectionPage->setObjectName(QStringLiteral("connectionPage"));
    auto* pageLayout = new QVBoxLayout(connectionPage);
    pageLayout->addWidget(statusBox);
    pageLayout->addWidget(clusterBox);
    pageLayout->addStretch(1);
    m_pages = new QTabWidget;
    m_pages->setObjectName(QStringLiteral("consolePages"));
    m_pages->setDocumentMode(true);
    m_pages->addTab(connectionPage, tr("Connection"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_banner);
    layout->addWidget(m_pages, 1);

    connect(session, &ConsoleSession::failed, this, &ConsoleWidget::onFailed);
    connect(session, &ConsoleSession::serverInfoChanged, this, [this] {
        m_failure.reset();
        updateNotice();
    });
    connect(session, &ConsoleSession::stateChanged, this, [this](ConsoleSession::State state) {
        if (state == ConsoleSession::State::Connecting || state == ConsoleSession::State::Disconnected)
            m_failure.reset();
        updateNotice();
    });
    connect(session, &ConsoleSession::migratingChanged, this, &ConsoleWidget::updateNotice);
    connect(m_banner, &NoticeBanner::actionTriggered, this, &ConsoleWidget::onBannerAction);
    updateNotice();
}

ConsoleWidget::~ConsoleWidget() = default;

void ConsoleWidget::addPage(QWidget* page, const QString& title, int index)
{
    m_pages->insertTab(index, page, title);
}

void ConsoleWidget::setAuditWitness(AuditWitness* witness)
{
    m_witness = witness;
    connect(witness, &AuditWitness::changed, this, &ConsoleWidget::updateNotice);
    updateNotice();
}

void ConsoleWidget::setPauseWatch(PauseWatch* watch)
{
    if (m_pauseBanner)
        return;
    m_pauseBanner = new PauseBanner(watch, this);
    static_cast<QVBoxLayout*>(layout())->insertWidget(1, m_pauseBanner);
}

void ConsoleWidget::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        if (auto* box = findChild<QGroupBox*>(QStringLiteral("connectionBox")))
            box->setTitle(tr("Connection"));
        if (auto* box = findChild<QGroupBox*>(QStringLiteral("clusterBox")))
            box->setTitle(tr("Patroni cluster"));
        const int index = m_pages->indexOf(findChild<QWidget*>(QStringLiteral("connectionPage")));
        if (index >= 0)
            m_pages->setTabText(index, tr("Connection"));
        updateNotice();
    }
    QWidget::changeEvent(event);
}

void ConsoleWidget::onFailed(const Failure& failure)
{
    m_failure = failure;
    updateNotice();
}

void ConsoleWidget::notice(NoticeLevel level, const QString& text, Action action, const QString& actionText)
{
    m_action = action;
    m_banner->showNotice(level, text, action == Action::None ? QString() : actionText);
}

void ConsoleWidget::updateNotice()
{
    using State = ConsoleSession::State;
    constexpr auto info = NoticeLevel::Info;
    constexpr auto warning = NoticeLevel::Warning;
    constexpr auto error = NoticeLevel::Error;
    const ServerInfo& si = m_session->serverInfo();
    const QString table = si.schema + QStringLiteral(".task_idempotency");
    if (m_session->migrating())
        return notice(info,
            tr("Migrating schema %1 to version %2 (the bundled migrations, as idemctl migrate "
               "runs them)…")
                .arg(si.schema, QString::number(si.schemaLatest)));
    switch (m_session->state()) {
    case State::Disconnected:
        return notice(info, tr("Not connected."), Action::Connect, tr("Connect…"));
    case State::Connecting:
        return notice(info, tr("Connecting…"));
    case State::Failed:
        if (m_failure && m_failure->retryInSeconds > 0)
            return notice(error,
                tr("%1\nReconnecting in %2 s.").arg(m_failure->text(), QString::number(m_failure->retryInSeconds)),
                Action::Reconnect, tr("Reconnect now"));
        return notice(error, m_failure ? m_failure->text() : tr("Not connected."), Action::Connect, tr("Connect…"));
    case State::Connected:
        break;
    }

    if (m_failure && m_failure->request == Failure::Request::Migrate)
        return notice(error,
            tr("%1\nA role that owns the schema (or a superuser) can run: idemctl migrate --schema %2")
                .arg(m_failure->text(), si.schema));
    if (m_failure)
        return notice(warning, m_failure->text());
    // Above the schema notices: whatever else is wrong, removed history must not go unseen.
    if (m_witness && m_witness->alarm() && !m_witness->acknowledged())
        return notice(error, m_witness->text(), Action::AcknowledgeAudit, tr("Acknowledge"));
    if (!si.schemaError.isEmpty() && !si.isReader)
        return notice(error,
            tr("Role %1 cannot read schema %2 (%3). Grant it idem_reader: GRANT idem_reader TO %1;")
                .arg(si.role, si.schema, si.schemaError));
    if (!si.schemaError.isEmpty())
        return notice(error, tr("Schema %1 cannot be inspected: %2").arg(si.schema, si.schemaError));
    if (!si.schemaProblems.isEmpty())
        return notice(error,
            tr("Schema %1 does not match this console: %2. The console is read-only.")
                .arg(si.schema, si.schemaProblems.join(QStringLiteral("; "))));
    if (si.schemaNewer())
        return notice(warning,
            tr("Schema %1 has version %2, newer than this console knows (%3). The console is "
               "read-only until Idem is upgraded.")
                .arg(si.schema, QString::number(si.schemaVersion), QString::number(si.schemaLatest)));
    if (si.schemaMissing()) {
        const QString adopt = si.tableExists
            ? tr(" The existing %1 table will be adopted in place, its rows kept.").arg(table)
            : QString();
        return notice(warning,
            tr("This database has no Idem schema %1 yet.%2\nCreate schema runs the migrations "
               "this console ships (as idemctl migrate does) and sets up the idem_reader, "
               "idem_operator and idem_worker roles.")
                .arg(si.schema, adopt),
            Action::Migrate, tr("Create schema"));
    }
    if (si.schemaOlder())
        return notice(warning,
            tr("Schema %1 has version %2; this console ships version %3.")
                .arg(si.schema, QString::number(si.schemaVersion), QString::number(si.schemaLatest)),
            Action::Migrate, tr("Upgrade schema"));
    if (!si.isReader)
        return notice(
            warning, tr("Role %1 cannot read %2. Grant it idem_reader: GRANT idem_reader TO %1;").arg(si.role, table));
    m_action = Action::None;
    m_banner->clear();
}

void ConsoleWidget::onBannerAction()
{
    switch (m_action) {
    case Action::None:
        break;
    case Action::Connect:
        Q_EMIT connectRequested();
        break;
    case Action::Reconnect:
        m_session->connectTo(m_session->settings());
        break;
    case Action::Migrate:
        m_banner->setActionEnabled(false);
        m_session->migrateSchema();
        break;
    case Action::AcknowledgeAudit:
        // The Audit page keeps saying it; a change of situation brings the banner back.
        if (m_witness)
            m_witness->acknowledge();
        break;
    }
}

} // namespace idem::console
