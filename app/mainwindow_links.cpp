// Share a view (issue 41 item 9): File > Copy link writes an idem:// link (models/viewlink.h) of
// the page in front, the Tasks filter and the dashboard's window and filter, naming the saved
// profile of this connection; openLink() opens one, here or from the command line.
#include "app/mainwindow.h"

#include <QApplication>
#include <QClipboard>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>

#include <stdexcept>

#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/profilestore.h"
#include "models/visibletext.h"
#include "views/consolewidget.h"
#include "views/dashboardwidget.h"
#include "views/taskbrowserwidget.h"

namespace idem::console {

namespace {
    bool sameConnection(const ConnectionSettings& a, const ConnectionSettings& b)
    {
        try {
            return storableConninfo(a) == storableConninfo(b) && a.schema == b.schema
                && a.monitorConninfo == b.monitorConninfo;
        } catch (const std::exception&) {
            return false;
        }
    }
} // namespace

QString MainWindow::currentPageName() const
{
    for (const auto& name : viewLinkPages())
        if (QWidget* page = pageWidget(name); page && page == m_console->pages()->currentWidget())
            return name;
    return QStringLiteral("dashboard");
}

QString MainWindow::connectionProfile() const
{
    if (m_session->state() == ConsoleSession::State::Disconnected)
        return {};
    // The profile this connection was made from: the one last used first (two profiles may
    // name the same database), else any whose connection is this one.
    QStringList names = m_profiles->names();
    const QString last = m_profiles->lastUsed();
    if (names.removeAll(last) > 0)
        names.prepend(last);
    for (const auto& name : names)
        if (const auto p = m_profiles->profile(name); p && sameConnection(p->settings, m_session->settings()))
            return name;
    return {};
}

ViewLink MainWindow::currentView() const
{
    ViewLink link;
    link.profile = connectionProfile();
    link.page = currentPageName();
    const auto& s = m_dashboard->model()->settings();
    link.windowMinutes = s.windowMinutes;
    link.tenant = s.tenant.trimmed();
    link.operation = s.operation.trimmed();
    if (link.page == QLatin1String("tasks"))
        if (auto* tasks = m_console->findChild<TaskBrowserWidget*>())
            link.filter = tasks->filter();
    return link;
}

QString MainWindow::copyLink()
{
    const ViewLink link = currentView();
    if (link.profile.isEmpty()) {
        showLinkMessage(tr("No link copied: this connection is not one of your saved profiles. A link names a profile, "
                           "never a connection string or a password: save this connection as a profile in the "
                           "connection dialog, then copy the link again."),
            false);
        return {};
    }
    QString text;
    try {
        text = buildViewLink(link);
    } catch (const std::invalid_argument& e) {
        showLinkMessage(tr("No link copied: %1").arg(visibleText(std::string(e.what()))), false);
        return {};
    }
    QGuiApplication::clipboard()->setText(text);
    statusBar()->showMessage(tr("Link copied: %1").arg(visibleText(text)), 10000);
    return text;
}

void MainWindow::showLinkMessage(const QString& text, bool offerProfiles)
{
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Console link"), text, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("linkMessage"));
    box->setTextFormat(Qt::PlainText);
    box->setAttribute(Qt::WA_DeleteOnClose);
    if (offerProfiles) {
        auto* open = box->addButton(tr("Connection profiles…"), QMessageBox::AcceptRole);
        open->setObjectName(QStringLiteral("linkOpenProfiles"));
        connect(open, &QAbstractButton::clicked, this, [this] { openConnectionDialog(); });
    }
    box->open();
}

bool MainWindow::openLink(const QString& text)
{
    const auto parsed = parseViewLink(text);
    if (!parsed.link) {
        showLinkMessage(tr("This link cannot be opened: %1 Nothing was changed.").arg(parsed.error), false);
        return false;
    }
    const ViewLink& link = *parsed.link;
    const auto profile = m_profiles->profile(link.profile);
    if (!profile) {
        showLinkMessage(tr("This console has no saved profile named “%1”. Make one for that database in the connection "
                           "dialog (the link names the profile, never its connection), then open the link again.")
                            .arg(visibleText(link.profile)),
            true);
        return false;
    }
    m_pendingView.reset();
    if (connectionProfile() == link.profile && m_monitor->state() == ConsoleSession::State::Connected) {
        applyView(link);
        return true;
    }
    // The profile's own settings, as the dialog would connect with them; a password it needs
    // is asked for by the dialog the failed attempt opens.
    m_pendingView = link;
    m_profiles->setLastUsed(profile->name);
    m_session->setPatroniEndpoint(profile->patroni);
    m_session->connectTo(profile->settings);
    applyView(link); // the page and the filters now; their reads follow the connection
    return true;
}

void MainWindow::applyView(const ViewLink& link)
{
    auto* model = m_dashboard->model();
    if (link.windowMinutes)
        model->setWindowMinutes(*link.windowMinutes);
    model->setFilter(link.tenant, link.operation);
    if (link.filter)
        if (auto* tasks = m_console->findChild<TaskBrowserWidget*>())
            tasks->applyFilter(*link.filter, LiveText([] { return tr("what the link shows"); }));
    showPage(link.page);
}

void MainWindow::onMonitorConnectedForLink()
{
    if (!m_pendingView || m_monitor->state() != ConsoleSession::State::Connected)
        return;
    const ViewLink link = *m_pendingView;
    m_pendingView.reset();
    applyView(link);
}

} // namespace idem::console
