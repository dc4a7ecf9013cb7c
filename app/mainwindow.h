#pragma once

#include <QMainWindow>

#include <optional>

#include "core/taskfilter.h"
#include "models/connectionsettings.h"
#include "models/snapshots.h"

namespace idem::console {

class ConnectionDialog;
class ConsoleSession;
class ConsoleWidget;
class DashboardWidget;
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
    // A dashboard tile's rows: the Tasks page with that filter, or a list of the newest rows.
    void openRows(const idem::TaskFilter& filter, const QString& title);

private:
    void onFailed(const Failure& failure);
    void updateTitle();
    void followAdmin();

    ConsoleSession* m_session;
    ProfileStore* m_profiles;
    ConsoleWidget* m_console;
    ConsoleSession* m_monitor;
    DashboardWidget* m_dashboard;
    std::optional<ConnectionSettings> m_monitorFollows; // the admin settings the monitor was opened for
    ConnectionDialog* m_dialog = nullptr;
};

} // namespace idem::console
