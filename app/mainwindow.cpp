#include "app/mainwindow.h"

#include <QVBoxLayout>

#include "app/fleetwindow.h"

#include <QActionGroup>
#include <QApplication>
#include <QEvent>
#include <QFileDialog>
#include <QKeySequence>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QTabWidget>

#include "models/auditwitness.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/environment.h"
#include "models/eventwatch.h"
#include "models/jobrunners.h"
#include "models/olderschema.h"
#include "models/pausewatch.h"
#include "operations/rights.h"
#include "views/approvalsdialog.h"
#include "views/auditwidget.h"
#include "views/clusterpanel.h"
#include "views/connectiondialog.h"
#include "views/consolewidget.h"
#include "views/dashboardrowsdialog.h"
#include "views/dashboardwidget.h"
#include "views/environmentmark.h"
#include "views/exportdialog.h"
#include "views/jobswidget.h"
#include "views/language.h"
#include "views/shortcutsdialog.h"
#include "views/snapshotwindow.h"
#include "views/statuspanel.h"
#include "views/storagewidget.h"
#include "views/taskbrowserwidget.h"
#include "views/theme.h"
#include "views/trustedkeysdialog.h"

namespace idem::console {

MainWindow::MainWindow(ConsoleSession* session, ProfileStore* profiles, QWidget* parent)
    : QMainWindow(parent)
    , m_session(session)
    , m_profiles(profiles)
    , m_console(new ConsoleWidget(session))
    // Its own connection even to the same server: ticks never queue behind an admin action
    // or a migration on the admin worker, and the connection can be read-only.
    , m_monitor(new ConsoleSession(this))
    , m_dashboard(new DashboardWidget(m_monitor))
    // On the monitor connection, as the ticks whose audit head it follows.
    , m_witness(new AuditWitness(m_monitor, this))
    // One list of pauses per poll for every page (the banner, the tiles, the charts, the menus).
    , m_pauses(new PauseWatch(m_monitor, this))
    // Jobs this console runs, each on a connection of its own, made with the admin's settings.
    , m_runners(new JobRunners(this))
    , m_jobs(new JobsWidget(m_monitor, session, m_runners))
{
    // The environment's band above the pages (issue #29): which database this window acts on.
    auto* central = new QWidget;
    auto* centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->setSpacing(0);
    m_band = new EnvironmentBand;
    centralLayout->addWidget(m_band);
    centralLayout->addWidget(m_console, 1);
    setCentralWidget(central);
    // Pages, in tab order. Each page takes the session it reads through (the monitor
    // connection) and, for recovery actions, the admin connection.
    m_console->addPage(m_dashboard, tr("Dashboard"), 0);
    auto* tasks = new TaskBrowserWidget(m_monitor, m_session);
    tasks->setPauseWatch(m_pauses);
    m_console->addPage(tasks, tr("Tasks"), 1);
    m_console->statusPanel()->watch(m_monitor);
    // The Patroni cluster is read at the dashboard's pace (issue #29).
    m_console->clusterPanel()->watch(m_monitor);
    const auto clusterPace = [this] {
        m_console->clusterPanel()->setInterval(std::chrono::milliseconds(m_dashboard->model()->settings().intervalMs));
    };
    clusterPace();
    connect(m_dashboard->model(), &DashboardModel::settingsChanged, this, clusterPace);
    auto* audit = new AuditWidget(m_monitor);
    m_console->addPage(audit, tr("Audit"), 2);
    m_console->addPage(m_jobs, tr("Jobs"), 3);
    m_console->addPage(new StorageWidget(m_monitor), tr("Storage"), 4);
    tasks->setJobRunners(m_runners);
    connect(tasks, &TaskBrowserWidget::jobStarted, m_jobs, [this](qint64 id) { m_jobs->selectJob(id); });
    m_witness->follow(m_dashboard->model());
    m_console->setAuditWitness(m_witness);
    m_console->setPauseWatch(m_pauses);
    m_dashboard->setPauseControl(m_pauses, m_session);
    audit->setWitness(m_witness);
    m_console->pages()->setCurrentWidget(m_dashboard);
    connect(m_dashboard, &DashboardWidget::openRows, this, &MainWindow::openRows);
    connect(session, &ConsoleSession::stateChanged, this, &MainWindow::followAdmin);
    connect(m_monitor, &ConsoleSession::stateChanged, this, &MainWindow::onMonitorConnectedForLink);
    connect(session, &ConsoleSession::migrationFinished, this, [this] {
        // The schema changed under the monitor's last look: it looks again.
        if (m_monitorFollows)
            m_monitor->connectTo(monitorSettings(*m_monitorFollows));
    });
    // Tiles, charts and a two-line banner; wrapped labels do not push the window taller by
    // themselves once it is shown.
    resize(1280, 900);

    // File: snapshots (export, open) above Quit.
    auto* file = track(menuBar()->addMenu(QString()), QT_TR_NOOP("&File"));
    m_fileMenu = file;
    auto* exportSnapshot = track(file->addAction(QString()), QT_TR_NOOP("&Export snapshot…"));
    exportSnapshot->setObjectName(QStringLiteral("exportSnapshotAction"));
    exportSnapshot->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    (new SnapshotExportUi(m_monitor, session, m_dashboard, nullptr, this))->setAction(exportSnapshot);
    // A bundle is a directory; it opens off the UI thread in a read-only window of its own.
    auto* openSnapshot = track(file->addAction(QString(), this,
                                   [this] {
                                       QSettings s(QSettings::IniFormat, QSettings::UserScope,
                                           QStringLiteral("Idem"), QStringLiteral("idem-console"));
                                       const QString dir = QFileDialog::getExistingDirectory(this,
                                           tr("Open snapshot"), SnapshotExportFlow::lastFolder(s), QFileDialog::ShowDirsOnly);
                                       if (!dir.isEmpty())
                                           openSnapshotWindow(dir, this);
                                   }),
        QT_TR_NOOP("&Open snapshot…"));
    openSnapshot->setObjectName(QStringLiteral("openSnapshotAction"));
    openSnapshot->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    // Whose signatures the snapshot viewer shows as valid.
    auto* trusted = track(file->addAction(QString(), this, [this] { TrustedKeysDialog::editConsoleKeys(this); }),
        QT_TR_NOOP("&Trusted signing keys…"));
    trusted->setObjectName(QStringLiteral("trustedKeysAction"));
    // Share a view (issue 41): a link to this page, filter and window, on every page.
    auto* copyLinkAction = track(file->addAction(QString(), this, [this] { copyLink(); }), QT_TR_NOOP("Copy &link"));
    copyLinkAction->setObjectName(QStringLiteral("copyLinkAction"));
    copyLinkAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    file->addSeparator();
    auto* quit = track(file->addAction(QString(), qApp, &QApplication::closeAllWindows), QT_TR_NOOP("&Quit"));
    quit->setObjectName(QStringLiteral("quitAction"));
    quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));

    auto* connection = track(menuBar()->addMenu(QString()), QT_TR_NOOP("&Connection"));
    track(connection->addAction(QString(), QKeySequence::Open, this, [this] { openConnectionDialog(); }),
        QT_TR_NOOP("&Connect…"));
    // F5 on every platform (QKeySequence::Refresh is not F5 under every Linux desktop): the
    // page in front reads again.
    auto* refresh = track(connection->addAction(QString(), this, &MainWindow::refreshPage), QT_TR_NOOP("&Refresh"));
    refresh->setObjectName(QStringLiteral("refreshAction"));
    refresh->setShortcut(QKeySequence(Qt::Key_F5));
    auto* disconnect = track(
        connection->addAction(QString(), session, &ConsoleSession::disconnectFromServer), QT_TR_NOOP("&Disconnect"));
    // Jobs waiting for a second person (schema v21): for those with the approve right; greyed
    // out, with the reason, for the others.
    connection->addSeparator();
    auto* approvals = track(connection->addAction(QString(), this, [this] { openApprovalsDialog(this, m_session); }),
        QT_TR_NOOP("&Approvals…"));
    approvals->setObjectName(QStringLiteral("approvalsAction"));
    connection->setToolTipsVisible(true);
    createViewMenu();
    auto* help = track(menuBar()->addMenu(QString()), QT_TR_NOOP("&Help"));
    auto* shortcuts
        = track(help->addAction(QString(), this, &MainWindow::showShortcuts), QT_TR_NOOP("&Keyboard shortcuts"));
    shortcuts->setObjectName(QStringLiteral("shortcutsAction"));
    shortcuts->setShortcuts({ QKeySequence(Qt::Key_F1), QKeySequence(Qt::CTRL | Qt::Key_Question) });
    track(help->addAction(QString(), this,
              [this] {
                  QMessageBox::about(this, tr("About Idem console"),
                      tr("Idem console %1\nSafe repeated task execution on PostgreSQL.")
                          .arg(QApplication::applicationVersion()));
              }),
        QT_TR_NOOP("&About Idem console"));

    const auto updateActions = [this, refresh, disconnect, approvals] {
        refresh->setEnabled(m_monitor->canPoll());
        disconnect->setEnabled(m_session->state() != ConsoleSession::State::Disconnected);
        const bool connected = m_session->state() == ConsoleSession::State::Connected;
        const QString approveRefusal = !connected ? tr("Not connected.")
            : !olderSchemaRefusal(*m_session).isEmpty() ? olderSchemaRefusal(*m_session)
            : m_session->serverInfo().rights.refusal(QStringLiteral("approve"));
        approvals->setEnabled(approveRefusal.isEmpty());
        approvals->setToolTip(approveRefusal.isEmpty() ? tr("Recovery jobs waiting for a second person's approval")
                                                       : approveRefusal);
        updateTitle();
    };
    connect(session, &ConsoleSession::stateChanged, this, updateActions);
    connect(session, &ConsoleSession::serverInfoChanged, this, updateActions);
    connect(m_monitor, &ConsoleSession::serverInfoChanged, this, updateActions);
    // The monitor's info arrives before it counts as connected: look again when it is.
    connect(m_monitor, &ConsoleSession::stateChanged, this, updateActions);
    connect(session, &ConsoleSession::failed, this, &MainWindow::onFailed);
    connect(
        m_console, &ConsoleWidget::connectRequested, this, [this] { openConnectionDialog(m_session->lastFailure()); });
    updateActions();
}

MainWindow::~MainWindow() = default;

void MainWindow::openConnectionDialog(const std::optional<Failure>& failure)
{
    if (!m_dialog)
        m_dialog = new ConnectionDialog(m_session, m_profiles, this);
    if (!m_session->settings().conninfo.isEmpty()) {
        m_dialog->setSettings(m_session->settings());
        m_dialog->setPatroniEndpoint(m_session->patroniEndpoint());
    }
    if (failure)
        m_dialog->showFailure(*failure);
    m_dialog->open();
}

void MainWindow::followAdmin()
{
    // The monitor follows what the user chose (dialog, --dsn); the admin session's own
    // reconnects after a lost connection keep the same settings and leave the monitor alone,
    // which reconnects by itself.
    const auto state = m_session->state();
    if (state == ConsoleSession::State::Disconnected) {
        m_monitorFollows.reset();
        m_monitor->disconnectFromServer();
        return;
    }
    if (state != ConsoleSession::State::Connecting)
        return;
    const ConnectionSettings& s = m_session->settings();
    const bool same = m_monitorFollows && m_monitorFollows->conninfo == s.conninfo
        && m_monitorFollows->monitorConninfo == s.monitorConninfo && m_monitorFollows->password == s.password
        && m_monitorFollows->schema == s.schema && m_monitorFollows->sslmode == s.sslmode
        && m_monitorFollows->sslRootCert == s.sslRootCert && m_monitorFollows->sslCert == s.sslCert
        && m_monitorFollows->sslKey == s.sslKey;
    if (same && m_monitor->state() != ConsoleSession::State::Disconnected)
        return;
    m_monitorFollows = s;
    m_monitor->connectTo(monitorSettings(s));
}

void MainWindow::openRows(
    const idem::TaskFilter& filter, const QString& title, const LiveText& what, const std::optional<idem::TaskSort>& sort)
{
    // The Tasks page shows exactly the tile's rows, with paging and actions; the list of the
    // newest rows is for a window built without it.
    const auto* pages = m_console->pages();
    for (int i = 0; i < pages->count(); ++i) {
        if (auto* browser = qobject_cast<TaskBrowserWidget*>(pages->widget(i))) {
            browser->applyFilter(filter, what, sort);
            m_console->pages()->setCurrentIndex(i);
            return;
        }
    }
    auto* dialog = new DashboardRowsDialog(m_monitor, filter, title, what, sort, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->open();
}

QWidget* MainWindow::frontWindow()
{
    if (m_dialog && m_dialog->isVisible())
        return m_dialog;
    return this;
}

void MainWindow::onFailed(const Failure& failure)
{
    // A --dsn that does not work opens the dialog on it, so the password or certificate can
    // be fixed in place; a lost connection retries by itself and only shows the banner.
    if (failure.request != Failure::Request::Connect || failure.retryInSeconds > 0 || !failure.isConnectFailure())
        return;
    if (m_dialog && m_dialog->isVisible())
        return;
    openConnectionDialog(failure);
}

void MainWindow::updateTitle()
{
    const auto& info = m_session->serverInfo();
    const bool connected = m_session->state() == ConsoleSession::State::Connected;
    const QString where = tr("%1@%2:%3/%4").arg(info.role, info.host, info.port, info.database);
    // The environment of the connection chosen (its profile's), from the first attempt on.
    const ConnectionSettings& s = m_session->settings();
    const QString env = m_session->state() == ConsoleSession::State::Disconnected ? QString() : s.environment.trimmed();
    const QColor colour = environment::colourOf(s);
    m_band->setEnvironment(env, colour, connected ? where : QString());
    environmentmark::mark(this, env, colour);
    const QString title = connected ? tr("%1 – Idem console").arg(where) : tr("Idem console");
    setWindowTitle(environment::titlePrefix(env) + title);
}

QAction* MainWindow::track(QAction* action, const char* source)
{
    m_translatable.emplace_back(action, source);
    action->setText(tr(source));
    return action;
}

QMenu* MainWindow::track(QMenu* menu, const char* source)
{
    m_translatable.emplace_back(menu, source);
    menu->setTitle(tr(source));
    return menu;
}

void MainWindow::createViewMenu()
{
    auto* view = track(menuBar()->addMenu(QString()), QT_TR_NOOP("&View"));
    // Ctrl+1..6: the pages in tab order.
    const std::pair<const char*, const char*> pages[] = {
        { "dashboard", QT_TR_NOOP("&Dashboard") },
        { "tasks", QT_TR_NOOP("&Tasks") },
        { "audit", QT_TR_NOOP("&Audit") },
        { "jobs", QT_TR_NOOP("&Jobs") },
        { "storage", QT_TR_NOOP("&Storage") },
        { "connection", QT_TR_NOOP("C&onnection") },
    };
    int n = 0;
    for (const auto& [name, text] : pages) {
        const QString page = QLatin1String(name);
        auto* a = track(view->addAction(QString(), this, [this, page] { showPage(page); }), text);
        a->setObjectName(page + QStringLiteral("PageAction"));
        a->setShortcut(QKeySequence(Qt::CTRL | (Qt::Key_1 + n++)));
    }
    // Ctrl+0: every profile on one page (issue #29).
    auto* fleet
        = track(view->addAction(QString(), this, [this] { FleetWindow::showFleet(m_profiles); }), QT_TR_NOOP("&Fleet"));
    fleet->setObjectName(QStringLiteral("fleetAction"));
    fleet->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    auto* next = track(view->addAction(QString(), this, [this] { stepPage(1); }), QT_TR_NOOP("&Next page"));
    next->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_PageDown));
    auto* previous = track(view->addAction(QString(), this, [this] { stepPage(-1); }), QT_TR_NOOP("&Previous page"));
    previous->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_PageUp));
    view->addSeparator();
    auto* find = track(view->addAction(QString(), this, &MainWindow::findTasks), QT_TR_NOOP("&Find tasks…"));
    find->setObjectName(QStringLiteral("findAction"));
    find->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_F));
    view->addSeparator();

    QSettings settings(
        QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console"));
    auto* themeMenu = track(view->addMenu(QString()), QT_TR_NOOP("T&heme"));
    themeMenu->setObjectName(QStringLiteral("themeMenu"));
    auto* themes = new QActionGroup(this);
    const std::pair<Theme, const char*> themeChoices[] = {
        { Theme::System, QT_TR_NOOP("&System") },
        { Theme::Light, QT_TR_NOOP("&Light") },
        { Theme::Dark, QT_TR_NOOP("&Dark") },
    };
    for (const auto& [t, text] : themeChoices) {
        const Theme chosen = t;
        auto* a = track(themeMenu->addAction(QString(), this,
                            [chosen] {
                                theme::apply(chosen);
                                QSettings s(QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"),
                                    QStringLiteral("idem-console"));
                                theme::save(s, chosen);
                            }),
            text);
        a->setCheckable(true);
        a->setObjectName(QStringLiteral("theme_")
            + QLatin1String(chosen == Theme::Dark ? "dark"
                    : chosen == Theme::Light      ? "light"
                                                  : "system"));
        a->setChecked(theme::current() == chosen);
        a->setData(static_cast<int>(chosen));
        themes->addAction(a);
    }

    auto* languageMenu = track(view->addMenu(QString()), QT_TR_NOOP("&Language"));
    languageMenu->setObjectName(QStringLiteral("languageMenu"));
    auto* languages = new QActionGroup(this);
    const auto addLanguage = [this, languageMenu, languages](const QString& code, QAction* a) {
        a->setCheckable(true);
        a->setData(code);
        a->setObjectName(QStringLiteral("language_") + (code.isEmpty() ? QStringLiteral("system") : code));
        languages->addAction(a);
        connect(a, &QAction::triggered, this, [this, code] {
            language::apply(code);
            QSettings s(
                QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console"));
            language::saveChoice(s, code);
        });
        languageMenu->addAction(a);
    };
    addLanguage(QString(), track(new QAction(this), QT_TR_NOOP("&System")));
    // Language names in their own language, as every language menu shows them.
    addLanguage(QStringLiteral("en"), new QAction(QStringLiteral("English"), this));
    addLanguage(QStringLiteral("zh_CN"), new QAction(QStringLiteral("简体中文"), this));
    // What runs now: the choice applied at start (--language, else the saved one), "" for System.
    const QString checked = language::choice();
    for (QAction* a : languages->actions())
        a->setChecked(a->data().toString() == checked);
}

void MainWindow::retranslateUi()
{
    for (const auto& [object, source] : m_translatable) {
        if (auto* a = qobject_cast<QAction*>(object.data()))
            a->setText(tr(source));
        else if (auto* m = qobject_cast<QMenu*>(object.data()))
            m->setTitle(tr(source));
    }
    auto* pages = m_console->pages();
    for (int i = 0; i < pages->count(); ++i) {
        QWidget* page = pages->widget(i);
        if (page == m_dashboard)
            pages->setTabText(i, tr("Dashboard"));
        else if (qobject_cast<TaskBrowserWidget*>(page))
            pages->setTabText(i, tr("Tasks"));
        else if (qobject_cast<AuditWidget*>(page))
            pages->setTabText(i, tr("Audit"));
        else if (page == m_jobs)
            pages->setTabText(i, tr("Jobs"));
        else if (qobject_cast<StorageWidget*>(page))
            pages->setTabText(i, tr("Storage"));
    }
    updateTitle();
}

void MainWindow::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QMainWindow::changeEvent(event);
}

bool MainWindow::showPage(const QString& name)
{
    QWidget* page = pageWidget(name);
    if (!page)
        return false;
    m_console->pages()->setCurrentWidget(page);
    return true;
}

QWidget* MainWindow::pageWidget(const QString& name) const
{
    QWidget* page = nullptr;
    if (name == QLatin1String("dashboard"))
        page = m_dashboard;
    else if (name == QLatin1String("tasks"))
        page = m_console->findChild<TaskBrowserWidget*>();
    else if (name == QLatin1String("audit"))
        page = m_console->findChild<AuditWidget*>();
    else if (name == QLatin1String("jobs"))
        page = m_jobs;
    else if (name == QLatin1String("storage"))
        page = m_console->findChild<StorageWidget*>();
    else if (name == QLatin1String("connection"))
        page = m_console->findChild<QWidget*>(QStringLiteral("connectionPage"));
    if (!page || m_console->pages()->indexOf(page) < 0)
        return nullptr;
    return page;
}

void MainWindow::stepPage(int delta)
{
    auto* pages = m_console->pages();
    if (pages->count() > 0)
        pages->setCurrentIndex((pages->currentIndex() + delta + pages->count()) % pages->count());
}

void MainWindow::refreshPage()
{
    QWidget* page = m_console->pages()->currentWidget();
    m_pauses->refreshNow();
    if (auto* tasks = qobject_cast<TaskBrowserWidget*>(page))
        tasks->refresh();
    else if (auto* audit = qobject_cast<AuditWidget*>(page))
        audit->reload();
    else if (page == m_jobs)
        m_jobs->reload();
    else if (auto* storage = qobject_cast<StorageWidget*>(page))
        storage->reload();
    else {
        m_dashboard->model()->tickNow();
        if (auto* events = m_dashboard->eventWatch())
            events->refreshNow();
    }
}

void MainWindow::findTasks()
{
    auto* tasks = m_console->findChild<TaskBrowserWidget*>();
    if (!tasks || !showPage(QStringLiteral("tasks")))
        return;
    // The key prefix is the task search: the field an operator types a key into.
    if (auto* field = tasks->findChild<QLineEdit*>(QStringLiteral("prefixFilter"))) {
        field->setFocus(Qt::ShortcutFocusReason);
        field->selectAll();
    }
}

void MainWindow::showShortcuts()
{
    auto* dialog = new ShortcutsDialog(this, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->open();
}

} // namespace idem::console
