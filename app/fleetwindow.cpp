#include "app/fleetwindow.h"

#include <QApplication>
#include <QEvent>
#include <QMenuBar>
#include <QSettings>

#include "app/mainwindow.h"
#include "models/consolesession.h"
#include "models/dashboardthresholds.h"
#include "models/profilestore.h"
#include "views/fleetwidget.h"

namespace idem::console {

namespace {
    DashboardSettings consoleDashboardSettings()
    {
        // The interval and thresholds the console's dashboard uses, so that a row is red exactly
        // when that database's dashboard would be.
        QSettings s(QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console"));
        return DashboardSettings::load(s);
    }

    std::vector<FleetEntry> entriesOf(ProfileStore* profiles)
    {
        std::vector<FleetEntry> out;
        if (!profiles)
            return out;
        for (const QString& name : profiles->names())
            if (const auto p = profiles->profile(name))
                out.push_back({ p->name, p->settings });
        return out;
    }

    QPointer<FleetWindow> theFleet;
} // namespace

FleetWindow::FleetWindow(ProfileStore* profiles, QWidget* parent)
    : FleetWindow(profiles, entriesOf(profiles), parent)
{
}

FleetWindow::FleetWindow(ProfileStore* profiles, const std::vector<FleetEntry>& entries, QWidget* parent)
    : QMainWindow(parent)
    , m_profiles(profiles)
    , m_model(new FleetModel(consoleDashboardSettings(), this))
    , m_page(new FleetWidget(m_model))
{
    setObjectName(QStringLiteral("fleetWindow"));
    setAttribute(Qt::WA_DeleteOnClose, false);
    setCentralWidget(m_page);
    connect(m_page, &FleetWidget::openRequested, this, [this](int row) { openDatabase(row); });
    build();
    m_model->setEntries(entries);
    resize(1280, 640);
}

FleetWindow::~FleetWindow()
{
    // The console windows opened from here live on their own.
}

FleetWindow* FleetWindow::showFleet(ProfileStore* profiles)
{
    if (!theFleet) {
        theFleet = new FleetWindow(profiles);
        theFleet->setAttribute(Qt::WA_DeleteOnClose);
    }
    theFleet->show();
    theFleet->raise();
    theFleet->activateWindow();
    return theFleet;
}

void FleetWindow::build()
{
    auto* file = menuBar()->addMenu(tr("&Fleet"));
    auto* reload = file->addAction(tr("&Reload profiles"), this, &FleetWindow::reloadProfiles);
    reload->setObjectName(QStringLiteral("reloadProfilesAction"));
    reload->setShortcut(QKeySequence(Qt::Key_F5));
    file->addSeparator();
    auto* close = file->addAction(tr("&Close"), this, &QWidget::close);
    close->setShortcut(QKeySequence::Close);
    retranslateUi();
}

void FleetWindow::retranslateUi() { setWindowTitle(tr("Fleet – Idem console")); }

void FleetWindow::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QMainWindow::changeEvent(event);
}

void FleetWindow::reloadProfiles() { m_model->setEntries(entriesOf(m_profiles)); }

MainWindow* FleetWindow::databaseWindow(int row) const
{
    if (row < 0 || row >= m_model->rowCount())
        return nullptr;
    const auto it = m_windows.find(m_model->entry(row).name);
    return it == m_windows.end() ? nullptr : it->second.data();
}

MainWindow* FleetWindow::openDatabase(int row)
{
    if (row < 0 || row >= m_model->rowCount())
        return nullptr;
    if (MainWindow* open = databaseWindow(row)) {
        open->show();
        open->raise();
        open->activateWindow();
        return open;
    }
    const FleetEntry& entry = m_model->entry(row);
    // A console of its own: its own admin and monitor connections, as if started on this profile.
    auto* session = new ConsoleSession;
    auto* window = new MainWindow(session, m_profiles);
    window->setAttribute(Qt::WA_DeleteOnClose);
    connect(window, &QObject::destroyed, session, &QObject::deleteLater);
    m_windows[entry.name] = window;
    window->show();
    if (const auto profile = m_profiles ? m_profiles->profile(entry.name) : std::nullopt)
        session->setPatroniEndpoint(profile->patroni);
    session->connectTo(entry.settings);
    return window;
}

} // namespace idem::console
