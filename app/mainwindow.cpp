#include "app/mainwindow.h"

#include <QApplication>
#include <QKeySequence>
#include <QMenuBar>
#include <QMessageBox>

#include "models/consolesession.h"
#include "views/connectiondialog.h"
#include "views/consolewidget.h"

namespace idem::console {

MainWindow::MainWindow(ConsoleSession* session, ProfileStore* profiles, QWidget* parent)
    : QMainWindow(parent)
    , m_session(session)
    , m_profiles(profiles)
    , m_console(new ConsoleWidget(session))
{
    setCentralWidget(m_console);
    // Pages, in tab order. Each page takes the session it reads through (the monitor
    // connection) and, for recovery actions, the admin connection.
    // (dashboard, tasks, audit: added here as they land)
    // Room for a two-line banner above the panels; wrapped labels do not push the window
    // taller by themselves once it is shown.
    resize(940, 440);

    auto* connection = menuBar()->addMenu(QStringLiteral("&Connection"));
    connection->addAction(QStringLiteral("&Connect…"), QKeySequence::Open, this, [this] { openConnectionDialog(); });
    auto* refresh
        = connection->addAction(QStringLiteral("&Refresh"), QKeySequence::Refresh, session, &ConsoleSession::refresh);
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
        refresh->setEnabled(m_session->canPoll());
        disconnect->setEnabled(m_session->state() != ConsoleSession::State::Disconnected);
        updateTitle();
    };
    connect(session, &ConsoleSession::stateChanged, this, updateActions);
    connect(session, &ConsoleSession::serverInfoChanged, this, updateActions);
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
