#pragma once

#include <QMainWindow>

#include <optional>

#include "models/snapshots.h"

namespace idem::console {

class ConnectionDialog;
class ConsoleSession;
class ConsoleWidget;
class ProfileStore;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    MainWindow(ConsoleSession* session, ProfileStore* profiles, QWidget* parent = nullptr);
    ~MainWindow() override;

    void openConnectionDialog(const std::optional<Failure>& failure = std::nullopt);
    // The window a person would be looking at: the connection dialog while it is open.
    QWidget* frontWindow();

private:
    void onFailed(const Failure& failure);
    void updateTitle();

    ConsoleSession* m_session;
    ProfileStore* m_profiles;
    ConsoleWidget* m_console;
    ConnectionDialog* m_dialog = nullptr;
};

} // namespace idem::console
