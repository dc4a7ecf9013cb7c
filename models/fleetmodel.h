#pragma once

#include <QAbstractTableModel>
#include <QColor>
#include <QDateTime>
#include <QString>

#include <memory>
#include <vector>

#include "models/connectionsettings.h"
#include "models/dashboardthresholds.h"
#include "models/tilecatalogue.h"

namespace idem::console {

class ConsoleSession;
class DashboardModel;
class PauseWatch;

// One database the Fleet page watches: a connection profile (or settings given in memory).
struct FleetEntry {
    QString name;
    ConnectionSettings settings;
};

// The Fleet page's data (issue #29): one row per database, each watched exactly as one console's
// dashboard watches its own: a ConsoleSession of its own (one connection on its own worker thread,
// the monitor connection a console would open), the dashboard's own tick (DashboardModel: the same
// statement, cadence, stretch and back-off) and the pauses' read (PauseWatch) on that connection,
// and nothing else. The rows say each database's health in a few words and a level (red, amber,
// green; grey while nothing is known), where it runs, and what watching it costs. Nothing here
// waits on the database.
class FleetModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { DatabaseColumn, EnvironmentColumn, HealthColumn, NodeColumn, CostColumn, ColumnCount };
    enum Role {
        LevelRole = Qt::UserRole + 1, // the row's Level (int)
        EnvironmentColourRole, // the environment's QColor (invalid: none)
        NameRole, // the entry's name
    };
    // A node change is said for this long after it was seen.
    static constexpr qint64 recentChangeMs = 15 * 60 * 1000;

    // `dashboard`: the console's dashboard settings (interval, thresholds); the fleet reads every
    // database whole (no tenant or operation filter) and never paused.
    explicit FleetModel(const DashboardSettings& dashboard, QObject* parent = nullptr);
    ~FleetModel() override;

    // Watches these databases (the rows in this order), connecting each at once.
    void setEntries(const std::vector<FleetEntry>& entries);
    int rowOf(const QString& name) const;
    const FleetEntry& entry(int row) const;
    ConsoleSession* session(int row) const;
    DashboardModel* dashboard(int row) const;
    PauseWatch* pauses(int row) const;

    struct Health {
        Level level = Level::NoData;
        QString text; // a few words: "Healthy", "red: Expired leases 12; intake paused (acme:invoice)"
        QString detail; // the tooltip: every red tile's alert, the failure's full text
    };
    Health health(int row) const;
    // "primary db1.example:5432/app" or "standby …, replay 4 s behind"; "node changed at 12:03 (was …)".
    QString nodeText(int row) const;
    // What watching it costs: "tick 12 ms, every 2 s" (the dashboard's own polling words).
    QString costText(int row) const;
    // "10 databases: 2 red, 1 amber, 6 green, 1 unknown".
    QString summaryText() const;
    int count(Level level) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The colours of a level on the Fleet page (a strong tile colour and its text).
    static QColor levelColour(Level level);
    static QColor levelTextColour(Level level);

Q_SIGNALS:
    // A row's figures or state changed (the summary may have too).
    void changed();

private:
    struct Row;
    void rowChanged(const Row* row);
    void noteNode(Row* row);

    DashboardSettings m_dashboard;
    std::vector<std::unique_ptr<Row>> m_rows;
};

} // namespace idem::console
