#pragma once

#include <QDateTime>
#include <QWidget>

#include <memory>
#include <utility>
#include <vector>

class QLabel;

namespace idem {
struct AtRiskReading;
}

namespace idem::console {

class AtRiskWatch;
class ConsoleSession;
struct ServerInfo;

// Where the console is connected and what it may do there: server, role, privilege,
// schema version, TLS, a pooler in between, the replication mode, and the server's clock
// when it was inspected.
class StatusPanel : public QWidget {
    Q_OBJECT
public:
    explicit StatusPanel(ConsoleSession* session, QWidget* parent = nullptr);
    // The connection the pages read through: its loss is this page's state too (the admin
    // connection, idle between actions, notices nothing by itself).
    void watch(ConsoleSession* monitor);

    QString serverText() const;
    QString roleText() const;
    QString privilegeText() const;
    QString rightsText() const;
    QString schemaText() const;
    QString tlsText() const;
    QString nodeText() const;
    QString nodeSinceText() const;
    QString replicationText() const;
    QString standbysText() const;
    QString connectedAtText() const;
    // The acknowledged successes a failover could lose (issue #29), read after every read of the
    // server: per asynchronous standby, the successes within its lag.
    QString atRiskText() const;
    // The same words for a reading (also what the tests compare against).
    static QString atRiskText(const idem::AtRiskReading& reading);

protected:
    void changeEvent(QEvent* event) override;

private:
    void showInfo(const ServerInfo& info);
    void renderInfo(const ServerInfo& info);
    void showState();
    void renderAtRisk();
    QLabel* addRow(const char* title, const QString& objectName);

    ConsoleSession* m_session;
    QLabel* m_state;
    QLabel* m_server;
    QLabel* m_database;
    QLabel* m_role;
    QLabel* m_privilege;
    QLabel* m_rights; // the login's rights, as idemctl rights lists them
    QLabel* m_schema;
    QLabel* m_tls;
    QLabel* m_pooler;
    QLabel* m_node;
    QLabel* m_nodeSince;
    QLabel* m_replication;
    QLabel* m_standbys;
    QLabel* m_atRisk;
    AtRiskWatch* m_atRiskWatch;
    QLabel* m_asOf;
    QLabel* m_age;
    ConsoleSession* m_monitor = nullptr;
    QDateTime m_readAt;
    std::vector<std::pair<QLabel*, const char*>> m_titles; // row titles, by their source text
};

} // namespace idem::console
