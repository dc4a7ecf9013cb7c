#include "models/consolesession.h"

#include "models/dashboardpolling.h"

#include <QCoreApplication>
#include <QPointer>

#include "models/databaseworker.h"

#include <algorithm>

namespace idem::console {

namespace {
    constexpr int maxReconnectDelaySeconds = 60;
}

ConsoleSession::ConsoleSession(QObject* parent)
    : QObject(parent)
    , m_worker(new DatabaseWorker)
    , m_interrupt(m_worker->interrupt())
{
    m_thread.setObjectName(QStringLiteral("idem-db-worker"));
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &DatabaseWorker::opened, this, &ConsoleSession::onOpened);
    connect(m_worker, &DatabaseWorker::migrated, this, &ConsoleSession::onMigrated);
    connect(m_worker, &DatabaseWorker::inspected, this, &ConsoleSession::onInspected);
    connect(m_worker, &DatabaseWorker::failed, this, &ConsoleSession::onFailed);
    connect(m_worker, &DatabaseWorker::jobDone, this, &ConsoleSession::onJobDone);
    m_reconnectTimer.setSingleShot(true);
    connect(&m_reconnectTimer, &QTimer::timeout, this, &ConsoleSession::startConnect);
    m_boundTimer.setInterval(100);
    connect(&m_boundTimer, &QTimer::timeout, this, &ConsoleSession::enforceBounds);
    m_cancelPool.setMaxThreadCount(1);
    connect(&m_infoRefreshTimer, &QTimer::timeout, this, &ConsoleSession::refreshServerInfo);
    m_thread.start();
}

ConsoleSession::~ConsoleSession()
{
    // Closing the window while a connect or a migration runs waits for it here, bounded by
    // the connect timeout and the statement timeout; the worker's deleteLater then closes the
    // connection on its own thread. A bounded job (a read) on a server that does not answer is
    // cut rather than waited for.
    for (const auto& [id, job] : m_jobs)
        if (job.bound)
            m_interrupt->cut(id);
    m_thread.quit();
    m_thread.wait();
    m_cancelPool.waitForDone();
}

bool ConsoleSession::canPoll() const
{
    // The console reads the schema it ships (or a newer one): an older one is offered an upgrade
    // and read no further, so no reader carries branches for older versions.
    return m_state == State::Connected && m_info.tableExists && m_info.isReader && m_info.schemaError.isEmpty()
        && !m_info.schemaOlder();
}

void ConsoleSession::connectTo(const ConnectionSettings& settings)
{
    m_settings = settings;
    m_lastFailure.reset();
    m_nodeKey.clear();
    m_nodeSince = QDateTime();
    m_previousNode.clear();
    m_autoReconnect = false;
    m_reconnectDelaySeconds = 0;
    startConnect();
}

void ConsoleSession::startConnect()
{
    m_reconnectTimer.stop();
    m_pendingInspect = 0;
    if (m_pendingMigrate) {
        m_pendingMigrate = 0;
        Q_EMIT migratingChanged(false);
    }
    failPendingJobs(
        QCoreApplication::translate("idem::console::ConsoleSession", "the connection is being re-established"));
    const quint64 id = m_nextId++;
    m_pendingConnect = id;
    setState(State::Connecting);
    QMetaObject::invokeMethod(
        m_worker, [w = m_worker, id, s = m_settings] { w->open(id, s); }, Qt::QueuedConnection);
}

void ConsoleSession::disconnectFromServer()
{
    m_reconnectTimer.stop();
    m_pendingInspect = 0;
    m_autoReconnect = false;
    m_pendingConnect = 0;
    if (m_pendingMigrate) {
        m_pendingMigrate = 0;
        Q_EMIT migratingChanged(false);
    }
    failPendingJobs(QCoreApplication::translate("idem::console::ConsoleSession", "disconnected"));
    QMetaObject::invokeMethod(
        m_worker, [w = m_worker] { w->close(); }, Qt::QueuedConnection);
    setState(State::Disconnected);
}

void ConsoleSession::migrateSchema()
{
    if (m_state != State::Connected || m_pendingMigrate)
        return;
    const quint64 id = m_nextId++;
    m_pendingMigrate = id;
    Q_EMIT migratingChanged(true);
    QMetaObject::invokeMethod(
        m_worker, [w = m_worker, id] { w->migrateSchema(id); }, Qt::QueuedConnection);
}

void ConsoleSession::onOpened(const ServerInfo& info)
{
    if (info.requestId != m_pendingConnect)
        return;
    m_pendingConnect = 0;
    m_autoReconnect = false;
    m_reconnectDelaySeconds = 0;
    m_lastFailure.reset();
    setInfo(info);
    setState(State::Connected);
}

void ConsoleSession::refreshServerInfo()
{
    if (m_state != State::Connected || m_pendingInspect || m_pendingMigrate)
        return;
    const quint64 id = m_nextId++;
    m_pendingInspect = id;
    QMetaObject::invokeMethod(
        m_worker, [w = m_worker, id] { w->reinspect(id); }, Qt::QueuedConnection);
}

void ConsoleSession::setInfoRefreshInterval(std::chrono::milliseconds interval)
{
    if (interval.count() <= 0) {
        m_infoRefreshTimer.stop();
        return;
    }
    m_infoRefreshTimer.start(interval);
}

void ConsoleSession::onInspected(const ServerInfo& info)
{
    if (info.requestId == 0 || info.requestId != m_pendingInspect)
        return;
    m_pendingInspect = 0;
    setInfo(info);
}

void ConsoleSession::onMigrated(const MigrationOutcome& outcome)
{
    if (outcome.requestId != m_pendingMigrate)
        return;
    m_pendingMigrate = 0;
    Q_EMIT migratingChanged(false);
    Q_EMIT migrationFinished(outcome);
    setInfo(outcome.after);
}

quint64 ConsoleSession::submit(DatabaseJob job, QObject* context, JobDone done, JobFailed failed)
{
    if (m_state != State::Connected) {
        if (failed) {
            Failure f { 0, FailureKind::ConnectionLost,
                QCoreApplication::translate("idem::console::ConsoleSession", "not connected"), {}, 0 };
            f.request = Failure::Request::Job;
            QMetaObject::invokeMethod(
                context, [failed, f] { failed(f); }, Qt::QueuedConnection);
        }
        return 0;
    }
    const quint64 id = m_nextId++;
    ++m_jobsSubmitted;
    auto cancelled = std::make_shared<std::atomic_bool>(false);
    auto& pending = m_jobs[id];
    pending.context = context;
    pending.done = std::move(done);
    pending.failed = std::move(failed);
    pending.cancelled = cancelled;
    QMetaObject::invokeMethod(
        m_worker, [w = m_worker, id, job = std::move(job), cancelled] { w->runJob(id, job, cancelled); },
        Qt::QueuedConnection);
    return id;
}

void ConsoleSession::afterQueued(QObject* context, std::function<void()> done)
{
    // The worker answers by queued signals to this object; this call, queued to it after them,
    // comes after every one of them. The session outlives its worker's calls (the destructor
    // waits for the thread).
    QMetaObject::invokeMethod(
        m_worker,
        [this, guard = QPointer<QObject>(context), done = std::move(done)] {
            QMetaObject::invokeMethod(
                this, [guard, done] {
                    if (guard)
                        done();
                },
                Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

void ConsoleSession::cancel(quint64 requestId)
{
    const auto it = m_jobs.find(requestId);
    if (it == m_jobs.end())
        return;
    it->second.cancelled->store(true);
    m_jobs.erase(it);
}

ConsoleSession::JobBound ConsoleSession::boundFor(int statementsMs)
{
    return { DashboardPolling::cancelAfter(statementsMs), DashboardPolling::cutAfter(statementsMs) };
}

void ConsoleSession::bound(quint64 requestId, JobBound bound)
{
    const auto it = m_jobs.find(requestId);
    if (it == m_jobs.end())
        return;
    it->second.bound = bound;
    if (!m_boundTimer.isActive())
        m_boundTimer.start();
}

void ConsoleSession::enforceBounds()
{
    bool any = false;
    for (auto& [id, job] : m_jobs) {
        if (!job.bound || job.cutAsked)
            continue;
        any = true;
        const auto p = m_interrupt->progress(id);
        if (!p.running)
            continue;
        if (p.runningFor >= job.bound->cutAfter) {
            job.cutAsked = m_interrupt->cut(id);
        } else if (p.runningFor >= job.bound->cancelAfter && !job.cancelAsked) {
            job.cancelAsked = true;
            // PQcancel connects to the server: it may take as long as a connect does.
            m_cancelPool.start([interrupt = m_interrupt, id = id] { interrupt->cancel(id); });
        }
    }
    if (!any)
        m_boundTimer.stop();
}

void ConsoleSession::onJobDone(quint64 requestId, const QVariant& answer)
{
    const auto it = m_jobs.find(requestId);
    if (it == m_jobs.end())
        return;
    const PendingJob job = std::move(it->second);
    m_jobs.erase(it);
    if (job.context && job.done)
        job.done(answer);
}

void ConsoleSession::onJobFailed(const Failure& incoming)
{
    const auto it = m_jobs.find(incoming.requestId);
    if (it == m_jobs.end())
        return;
    const PendingJob job = std::move(it->second);
    m_jobs.erase(it);
    Failure failure = incoming;
    failure.request = Failure::Request::Job;
    if (job.bound && job.cancelAsked)
        failure.cancelledAfterMs = job.bound->cancelAfter.count();
    if (job.context && job.failed)
        job.failed(failure);
}

void ConsoleSession::failPendingJobs(const QString& why)
{
    auto jobs = std::move(m_jobs);
    m_jobs.clear();
    for (auto& [id, job] : jobs) {
        job.cancelled->store(true);
        if (!job.context || !job.failed)
            continue;
        Failure f { id, FailureKind::ConnectionLost, why, {}, 0 };
        f.request = Failure::Request::Job;
        QMetaObject::invokeMethod(
            job.context, [failed = job.failed, f] { failed(f); }, Qt::QueuedConnection);
    }
}

void ConsoleSession::onFailed(const Failure& incoming)
{
    if (incoming.requestId != 0 && incoming.requestId == m_pendingInspect) {
        m_pendingInspect = 0;
        if (incoming.kind == FailureKind::ConnectionLost && !m_autoReconnect && m_state == State::Connected)
            reconnectAfterLoss(incoming);
        return;
    }
    if (m_jobs.count(incoming.requestId)) {
        const bool lost = incoming.kind == FailureKind::ConnectionLost;
        onJobFailed(incoming);
        if (!lost || m_autoReconnect || m_state != State::Connected)
            return;
        reconnectAfterLoss(incoming);
        return;
    }
    const quint64 id = incoming.requestId;
    if (id == 0 || (id != m_pendingConnect && id != m_pendingMigrate))
        return;
    Failure failure = incoming;
    const bool wasConnect = id == m_pendingConnect;
    if (wasConnect)
        m_pendingConnect = 0;
    const bool wasMigrate = id == m_pendingMigrate;
    if (wasMigrate) {
        m_pendingMigrate = 0;
        Q_EMIT migratingChanged(false);
    }
    failure.request = wasConnect ? Failure::Request::Connect : Failure::Request::Migrate;

    if (failure.kind == FailureKind::ConnectionLost) {
        m_autoReconnect = true;
        failPendingJobs(QCoreApplication::translate("idem::console::ConsoleSession", "the connection was lost"));
    }
    if (m_autoReconnect) {
        // A server that was there a moment ago is probably restarting: keep trying, slower
        // each time, until the user connects elsewhere or disconnects.
        m_reconnectDelaySeconds = std::clamp(m_reconnectDelaySeconds * 2, 1, maxReconnectDelaySeconds);
        failure.retryInSeconds = m_reconnectDelaySeconds;
        m_reconnectTimer.start(std::chrono::seconds(m_reconnectDelaySeconds));
    }
    // Recorded before the state changes, so that whoever reacts to the state sees why.
    m_lastFailure = failure;
    if (m_autoReconnect || wasConnect)
        setState(State::Failed);
    Q_EMIT failed(failure);
}

// A request found the connection gone: the session reconnects, and everything else still
// queued fails with it.
void ConsoleSession::reconnectAfterLoss(const Failure& incoming)
{
    Failure failure = incoming;
    failure.request = Failure::Request::Poll;
    m_autoReconnect = true;
    m_reconnectDelaySeconds = 1;
    failure.retryInSeconds = m_reconnectDelaySeconds;
    failPendingJobs(QCoreApplication::translate("idem::console::ConsoleSession", "the connection was lost"));
    m_reconnectTimer.start(std::chrono::seconds(m_reconnectDelaySeconds));
    m_lastFailure = failure;
    setState(State::Failed);
    Q_EMIT failed(failure);
}

void ConsoleSession::setState(State state)
{
    if (state == m_state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

void ConsoleSession::setInfo(const ServerInfo& info)
{
    const QString key = info.nodeKey();
    if (key != m_nodeKey) {
        // Another node (a failover, a switchover, a reconnect that landed elsewhere), or the
        // first one of this connection.
        if (!m_nodeKey.isEmpty())
            m_previousNode = m_info.nodeText();
        m_nodeKey = key;
        m_nodeSince = QDateTime::currentDateTime();
    }
    m_info = info;
    m_info.nodeSince = m_nodeSince;
    m_info.previousNode = m_previousNode;
    Q_EMIT serverInfoChanged(m_info);
}

} // namespace idem::console
