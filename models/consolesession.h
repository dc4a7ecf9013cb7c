#pragma once

#include <QObject>
#include <QThread>
#include <QTimer>

#include <QPointer>

#include <chrono>
#include <functional>
#include <map>
#include <optional>

#include "models/connectionsettings.h"
#include "models/databaseworker.h"
#include "models/workermessages.h"

namespace idem::console {

// The UI thread's side of one database connection: it starts the worker thread, numbers
// every request, drops answers nobody waits for any more (a connect superseded by another,
// a job from before a reconnect), runs the pages' jobs (the dashboard's ticks among them),
// and reconnects with backoff after a lost connection. Nothing here blocks.
class ConsoleSession : public QObject {
    Q_OBJECT
public:
    enum class State { Disconnected, Connecting, Connected, Failed };
    Q_ENUM(State)

    explicit ConsoleSession(QObject* parent = nullptr);
    ~ConsoleSession() override;

    State state() const { return m_state; }
    // Valid once connected; kept (as a last known picture) while reconnecting.
    const ServerInfo& serverInfo() const { return m_info; }
    const std::optional<Failure>& lastFailure() const { return m_lastFailure; }
    // The settings of the current or last connection, password included, in memory only.
    const ConnectionSettings& settings() const { return m_settings; }
    bool migrating() const { return m_pendingMigrate != 0; }
    // A schema newer than this console knows: look, but change nothing.
    bool readOnly() const { return m_info.schemaNewer() || !m_info.schemaProblems.isEmpty(); }
    bool canPoll() const;


    using JobDone = std::function<void(const QVariant& answer)>;
    using JobFailed = std::function<void(const idem::console::Failure& failure)>;
    // Runs job on this connection's worker thread, after whatever is queued there already.
    // Later, on this thread and only while context lives, exactly one of done or failed is
    // called, unless the job is cancelled first. When the connection is lost, replaced or
    // closed, every pending job fails with ConnectionLost (a lost connection also starts the
    // reconnect); other failures go to the job's failed callback only.
    // Not connected: failed is called (queued) and 0 is returned.
    quint64 submit(DatabaseJob job, QObject* context, JobDone done, JobFailed failed = {});
    // Drops the answer, and skips the job if the worker has not started it yet.
    void cancel(quint64 requestId);
    int pendingJobs() const { return static_cast<int>(m_jobs.size()); }

public Q_SLOTS:
    void connectTo(const idem::console::ConnectionSettings& settings);
    void disconnectFromServer();
    void migrateSchema();
    // Reads the server, role, schema and clock again on this connection (serverInfoChanged);
    // a connection found lost reconnects, which reads them too.
    void refreshServerInfo();

Q_SIGNALS:
    void stateChanged(idem::console::ConsoleSession::State state);
    void serverInfoChanged(const idem::console::ServerInfo& info);
    // Any failure still relevant: a connect attempt, a lost connection, a migration.
    void failed(const idem::console::Failure& failure);
    void migratingChanged(bool migrating);
    void migrationFinished(const idem::console::MigrationOutcome& outcome);

private:
    void onOpened(const ServerInfo& info);
    void onMigrated(const MigrationOutcome& outcome);
    void onInspected(const ServerInfo& info);
    void reconnectAfterLoss(const Failure& incoming);
    void onFailed(const Failure& failure);
    void onJobDone(quint64 requestId, const QVariant& answer);
    void onJobFailed(const Failure& failure);
    // Fails every pending job (queued, so no callback runs inside the caller).
    void failPendingJobs(const QString& why);
    void setState(State state);
    void setInfo(const ServerInfo& info);
    void startConnect();

    QThread m_thread;
    DatabaseWorker* m_worker = nullptr; // lives on m_thread, deleted there
    State m_state = State::Disconnected;
    ConnectionSettings m_settings;
    ServerInfo m_info;
    std::optional<Failure> m_lastFailure;

    quint64 m_nextId = 1;
    // The one request of each kind whose answer is still wanted; 0 when none.
    quint64 m_pendingConnect = 0;
    quint64 m_pendingMigrate = 0;
    quint64 m_pendingInspect = 0;
    struct PendingJob {
        QPointer<QObject> context;
        JobDone done;
        JobFailed failed;
        std::shared_ptr<std::atomic_bool> cancelled;
    };
    std::map<quint64, PendingJob> m_jobs;

    QTimer m_reconnectTimer;
    bool m_autoReconnect = false;
    int m_reconnectDelaySeconds = 0;
};

} // namespace idem::console
