#include "app/mainwindow.h"

#include <QApplication>
#include <QKeySequence>
#include <QMenuBar>
#include <QMessageBox>
#include <QTabWidget>

#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "views/connectiondialog.h"
#include "views/auditwidget.h"
#include "views/consolewidget.h"
#include "views/dashboardrowsdialog.h"
#include "views/dashboardwidget.h"
#include "views/taskbrowserwidget.h"

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
{
    setCentralWidget(m_console);
    // Pages, in tab order. Each page takes the session it reads through (the monitor
    // connection) and, for recovery actions, the admin connection.
    m_dashboard->model()->setDedicatedConnection(true);
    m_console->addPage(m_dashboard, QStringLiteral("Dashboard"), 0);
    m_console->addPage(new TaskBrowserWidget(m_monitor, m_session), QStringLiteral("Tasks"), 1);
    m_console->addPage(new AuditWidget(m_monitor), QStringLiteral("Audit"), 2);
    m_console->pages()->setCurrentWidget(m_dashboard);
    connect(m_dashboard, &DashboardWidget::openRows, this, &MainWindow::openRows);
    connect(session, &ConsoleSession::stateChanged, this, &MainWindow::followAdmin);
    connect(session, &ConsoleSession::migrationFinished, this, [this] {
        // The schema changed under the monitor's last look: it looks again.
        if (m_monitorFollows)
            m_monitor->connectTo(monitorSettings(*m_monitorFollows));
    });
    // Tiles, charts and a two-line banner; wrapped labels do not push the window taller by
    // themselves once it is shown.
    resize(1280, 900);

    auto* connection = menuBar()->addMenu(QStringLiteral("&Connection"));
    connection->addAction(QStringLiteral("&Connect…"), QKeySequence::Open, this, [this] { openConnectionDialog(); });
    auto* refresh = connection->addAction(
        QStringLiteral("&Refresh"), QKeySequence::Refresh, m_dashboard->model(), &DashboardModel::tickNow);
    auto* disconnect
        = connection->addAction(QStringLiteral("&Disconnect"), session, &ConsoleSession::disconnectFromServer);
    connection->addSeparator();
    connection->addAction(QStringLiteral("&Quit"), QKeySequence::Quit, qApp, &QApplication::closeAllWindows);
    auto* help = menuBar()->addMenu(QStringLiteral("&Help"));
    help->addAction(QStringLiteral("&About Idem console"), this, [this] {
        QMessageBox::about(this, QStringLiteral("About Idem console"),
            QStringLiteral("Idem console %1\nSafe repeated task execution on PostgreSQL.")
                .arg(QApplication::applicationVersion()));
    });

    const auto updateActions = [this, refresh, disconnect] {
        refresh->setEnabled(m_monitor->canPoll());
        disconnect->setEnabled(m_session->state() != ConsoleSession::State::Disconnected);
        updateTitle();
    };
    connect(session, &ConsoleSession::stateChanged, this, updateActions);
    connect(session, &ConsoleSession::serverInfoChanged, this, updateActions);
    connect(m_monitor, &ConsoleSession::serverInfoChanged, this, updateActions);
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
    if (!m_session->settings().conninfo.isEmpty())
        m_dialog->setSettings(m_session->settings());
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

void MainWindow::openRows(const idem::TaskFilter& filter, const QString& title)
{
    // The Tasks page shows exactly the tile's rows, with paging and actions; the list of the
    // newest rows is for a window built without it.
    const auto* pages = m_console->pages();
    for (int i = 0; i < pages->count(); ++i) {
        if (auto* browser = qobject_cast<TaskBrowserWidget*>(pages->widget(i))) {
            browser->applyFilter(filter);
            m_console->pages()->setCurrentIndex(i);
            return;
        }
    }
    auto* dialog = new DashboardRowsDialog(m_monitor, filter, title, this);
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
    if (m_session->state() == ConsoleSession::State::Connected)
        setWindowTitle(
            QStringLiteral("%1@%2:%3/%4 – Idem console").arg(info.role, info.host, info.port, info.database));
    else
        setWindowTitle(QStringLiteral("Idem console"));
}

} // namespace idem::console
