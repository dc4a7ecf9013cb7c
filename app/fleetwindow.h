#pragma once

#include <QMainWindow>
#include <QPointer>

#include <map>
#include <vector>

#include "models/fleetmodel.h"

namespace idem::console {

class FleetWidget;
class MainWindow;
class ProfileStore;

// The Fleet window (issue #29): every connection profile on one page (FleetWidget), each watched
// at one console's dashboard cost; a double click opens that database in a console window of its
// own, titled and banded with its environment. View > Fleet in any console window, or --fleet.
class FleetWindow : public QMainWindow {
    Q_OBJECT
public:
    // The fleet of `profiles` (every saved profile, in their order).
    explicit FleetWindow(ProfileStore* profiles, QWidget* parent = nullptr);
    // The fleet of these databases (settings held in memory, passwords included).
    FleetWindow(ProfileStore* profiles, const std::vector<FleetEntry>& entries, QWidget* parent = nullptr);
    ~FleetWindow() override;

    // The one Fleet window of the application, made (from the profiles) and raised.
    static FleetWindow* showFleet(ProfileStore* profiles);

    FleetModel* model() const { return m_model; }
    FleetWidget* page() const { return m_page; }
    // The console window of a row's database: opened (connecting it) or raised when it is open.
    MainWindow* openDatabase(int row);
    // Its console window when open, else nullptr.
    MainWindow* databaseWindow(int row) const;

public Q_SLOTS:
    // Reads the profiles again (new ones join, removed ones leave); every database reconnects.
    void reloadProfiles();

protected:
    void changeEvent(QEvent* event) override;

private:
    void build();
    void retranslateUi();

    ProfileStore* m_profiles;
    FleetModel* m_model;
    FleetWidget* m_page;
    std::map<QString, QPointer<MainWindow>> m_windows;
};

} // namespace idem::console
