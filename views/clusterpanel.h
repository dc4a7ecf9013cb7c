#pragma once

#include <QWidget>

#include <chrono>

class QLabel;
class QTableView;

namespace idem::console {

class ConsoleSession;
class PatroniModel;
class PatroniWatcher;

// The Connection page's Patroni cluster (issue #29): where a REST endpoint is configured for the
// connection, its members (role, state, host, lag, timeline) and which one this console is on, read
// at the dashboard's pace from Patroni, not from the database: it still shows during a failover,
// and says when the endpoint does not answer. Hidden when no endpoint is configured.
class ClusterPanel : public QWidget {
    Q_OBJECT
public:
    explicit ClusterPanel(ConsoleSession* session, QWidget* parent = nullptr);
    // The pages' connection: the member it is on is marked too.
    void watch(ConsoleSession* monitor);
    void setInterval(std::chrono::milliseconds interval);

    PatroniWatcher* watcher() const { return m_watcher; }
    PatroniModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    QString statusText() const;
    // Where Patroni contradicts the server, in the alert tone; empty when they agree.
    QString disagreementText() const;

Q_SIGNALS:
    // Shown or hidden (an endpoint configured or not): the page's box follows.
    void configuredChanged(bool configured);

protected:
    void changeEvent(QEvent* event) override;

private:
    void follow();
    void render();

    ConsoleSession* m_session;
    ConsoleSession* m_monitor = nullptr;
    PatroniWatcher* m_watcher;
    PatroniModel* m_model;
    QLabel* m_status;
    QLabel* m_disagreement;
    QTableView* m_table;
};

} // namespace idem::console
