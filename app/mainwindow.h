#pragma once

#include <QMainWindow>
#include <QMenu>
#include <QPointer>

#include <optional>
#include <utility>
#include <vector>

#include "operations/taskfilter.h"
#include "operations/tasklist.h"
#include "models/connectionsettings.h"
#include "models/livetext.h"
#include "models/viewlink.h"
#include "models/workermessages.h"

namespace idem::console {

class AuditWitness;
class ConnectionDialog;
class ConsoleSession;
class ConsoleWidget;
class DashboardWidget;
class JobRunners;
class JobsWidget;
class EnvironmentBand;
class PauseWatch;
class ProfileStore;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    MainWindow(ConsoleSession* session, ProfileStore* profiles, QWidget* parent = nullptr);
    ~MainWindow() override;

    void openConnectionDialog(const std::optional<Failure>& failure = std::nullopt);
    // The window a person would be looking at: the connection dialog while it is open.
    QWidget* frontWindow();

    // Pages read through the monitor session (the monitor DSN, or a second read-only connection
    // to the same server); recovery actions and migrations go through the admin session.
    ConsoleSession* monitorSession() const { return m_monitor; }
    ConsoleSession* adminSession() const { return m_session; }
    ConsoleWidget* console() const { return m_console; }
    DashboardWidget* dashboard() const { return m_dashboard; }
    AuditWitness* auditWitness() const { return m_witness; }
    // The pauses of intake every page shows (read through the monitor session).
    PauseWatch* pauseWatch() const { return m_pauses; }
    // The recovery jobs this console runs (each on a connection of its own) and their page.
    JobRunners* jobRunners() const { return m_runners; }
    JobsWidget* jobsPage() const { return m_jobs; }
    // The band of the connection's environment above the pages (hidden without one).
    EnvironmentBand* environmentBand() const { return m_band; }
    // A dashboard tile's rows: the Tasks page with that filter, or a list of the newest rows.
    void openRows(const idem::TaskFilter& filter, const QString& title, const LiveText& what,
        const std::optional<idem::TaskSort>& sort = std::nullopt);
    // Brings a page to the front: "dashboard", "tasks", "audit", "jobs", "storage"
    // or "connection" (--page, Ctrl+1..6).
    bool showPage(const QString& name);
    // Help > Keyboard shortcuts: the table built from the window's actions.
    void showShortcuts();
    // Share a view (issue 41): File > Copy link puts the idem:// link of what this window shows on
    // the clipboard and returns it (empty, saying why, when the connection is no saved profile).
    QString copyLink();
    // Opens a link: its profile's connection (unless this window is on it already), page, Tasks
    // filter and dashboard window. A link that cannot be opened says why and changes nothing.
    bool openLink(const QString& text);
    // What a link of this window would carry, and the saved profile of its connection (empty: none).
    ViewLink currentView() const;
    QString connectionProfile() const;

protected:
    void changeEvent(QEvent* event) override;

private:
    void onFailed(const Failure& failure);
    // Menu and action texts are kept as their English source and translated again when the
    // language changes (View > Language switches live).
    QAction* track(QAction* action, const char* source);
    QMenu* track(QMenu* menu, const char* source);
    void retranslateUi();
    void createViewMenu();
    void refreshPage();
    void findTasks();
    void stepPage(int delta);
    void updateTitle();
    void followAdmin();
    QString currentPageName() const;
    QWidget* pageWidget(const QString& name) const;
    void applyView(const ViewLink& link);
    void showLinkMessage(const QString& text, bool offerProfiles);
    void onMonitorConnectedForLink();

    ConsoleSession* m_session;
    ProfileStore* m_profiles;
    ConsoleWidget* m_console;
    ConsoleSession* m_monitor;
    DashboardWidget* m_dashboard;
    AuditWitness* m_witness;
    PauseWatch* m_pauses;
    JobRunners* m_runners;
    JobsWidget* m_jobs;
    std::optional<ConnectionSettings> m_monitorFollows; // the admin settings the monitor was opened for
    ConnectionDialog* m_dialog = nullptr;
    EnvironmentBand* m_band = nullptr;
    QMenu* m_fileMenu = nullptr; // snapshot actions go above its separator and Quit
    std::vector<std::pair<QPointer<QObject>, const char*>> m_translatable;
    std::optional<ViewLink> m_pendingView; // a link's view, applied again once its connection is up
};

} // namespace idem::console
