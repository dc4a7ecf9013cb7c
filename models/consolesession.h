#pragma once

#include <QDateTime>
#include <QObject>
#include <QThread>
#include <QThreadPool>
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
    // The Patroni REST endpoint of this connection (models/patroniparse.h, parsePatroniEndpoints: one URL or several,
    // comma-separated; empty: none), set by whoever connects it (the connection dialog from its
    // field or profile, --patroni, the Fleet window from the profile), kept across reconnects and
    // read by the Connection page. Not in ConnectionSettings: no libpq connection uses it.
    QString patroniEndpoint() const { return m_patroniEndpoint; }
    void setPatroniEndpoint(const QString& endpoint) { m_patroniEndpoint = endpoint.trimmed(); }
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
    // Jobs handed to the worker since this session was made: what its readers cost the server,
    // in round trips (the Fleet page's per-database cost is held to one console's by it).
    quint64 jobsSubmitted() const { return m_jobsSubmitted; }

    // A job's bound when the server does not answer it at all (a stopped server process, a
    // network black hole: the server enforces a statement timeout itself, so none fires there).
    // Counted from when the worker started the job, not from when it was queued: past
    // cancelAfter the session asks the server to cancel the statement (from a thread of its
    // own); past cutAfter it cuts the connection, the job fails as a lost connection (the
    // failure says the console closed it) and the session reconnects on a new one.
    struct JobBound {
        std::chrono::milliseconds cancelAfter;
        std::chrono::milliseconds cutAfter;
    };
    void bound(quint64 requestId, JobBound bound);
    // The bound of a job whose statements the server gives up after statementsMs in all
    // (DashboardPolling::cancelAfter / cutAfter): a read that sets its own statement timeout.
    static JobBound boundFor(int statementsMs);
    // Calls done on this thread, unless context is gone by then, once the worker has got through
    // everything queued to it before this call and this thread has taken in what it answered
    // (failures of an abandoned connect included): what "nothing more will come of it" waits for.
    void afterQueued(QObject* context, std::function<void()> done);
    // Whether a job runs yet, for how long, and what the session did about it.
    JobInterrupt::Progress progress(quint64 requestId) const { return m_interrupt->progress(requestId); }

public Q_SLOTS:
    void connectTo(const idem::console::ConnectionSettings& settings);
    void disconnectFromServer();
    void migrateSchema();
    // Reads the server, role, schema and clock again on this connection (serverInfoChanged);
    // a connection found lost reconnects, which reads them too.
    void refreshServerInfo();
    // Reads the server info again every interval while connected (0: never, the default), so
    // that a failover under a live connection (a proxy, a multi-host conninfo) shows as a new node.
    void setInfoRefreshInterval(std::chrono::milliseconds interval);

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
    void enforceBounds();

    QThread m_thread;
    DatabaseWorker* m_worker = nullptr; // lives on m_thread, deleted there
    State m_state = State::Disconnected;
    ConnectionSettings m_settings;
    ServerInfo m_info;
    std::optional<Failure> m_lastFailure;

    quint64 m_nextId = 1;
    quint64 m_jobsSubmitted = 0;
    // The one request of each kind whose answer is still wanted; 0 when none.
    quint64 m_pendingConnect = 0;
    quint64 m_pendingMigrate = 0;
    quint64 m_pendingInspect = 0;
    struct PendingJob {
        QPointer<QObject> context;
        JobDone done;
        JobFailed failed;
        std::shared_ptr<std::atomic_bool> cancelled;
        std::optional<JobBound> bound;
        bool cancelAsked = false;
        bool cutAsked = false;
    };
    std::map<quint64, PendingJob> m_jobs;
    std::shared_ptr<JobInterrupt> m_interrupt;
    QTimer m_boundTimer; // runs while a bounded job is pending
    QThreadPool m_cancelPool; // cancel requests: each a connection to the server, never on this thread

    QTimer m_infoRefreshTimer;
    // The node last shown (ServerInfo::nodeKey), since when, and what it was before: kept across
    // reconnects, forgotten when the user connects anew.
    QString m_nodeKey;
    QString m_patroniEndpoint;
    QDateTime m_nodeSince;
    QString m_previousNode;

    QTimer m_reconnectTimer;
    bool m_autoReconnect = false;
    int m_reconnectDelaySeconds = 0;
};

} // namespace idem::console
