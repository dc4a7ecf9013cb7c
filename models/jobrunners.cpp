#include "models/jobrunners.h"

#include <QCoreApplication>

#include <pqxx/pqxx>

#include <chrono>
#include <thread>

#include "core/connection.h"
#include "models/consolesession.h"

namespace idem::console {

JobRunners::JobRunners(QObject* parent)
    : QObject(parent)
{
}

JobRunners::~JobRunners()
{
    // Each session's worker finishes its current call (about m_callSeconds), detaches, and
    // closes: the job stays active and resumable.
    for (auto& [id, r] : m_runners)
        *r.stop = true;
    m_runners.clear();
}

bool JobRunners::run(const ConnectionSettings& settings, std::int64_t id)
{
    if (running(id))
        return false;
    Runner r;
    r.session = std::make_unique<ConsoleSession>();
    r.stop = std::make_shared<std::atomic<bool>>(false);
    auto* session = r.session.get();
    m_runners.emplace(id, std::move(r));
    connect(session, &ConsoleSession::stateChanged, this, [this, id] { onSessionState(id); });
    session->connectTo(settings);
    Q_EMIT started(id);
    return true;
}

void JobRunners::stop(std::int64_t id)
{
    const auto it = m_runners.find(id);
    if (it == m_runners.end())
        return;
    *it->second.stop = true;
    if (!it->second.submitted)
        finish(id);
}

void JobRunners::finish(std::int64_t id)
{
    const auto it = m_runners.find(id);
    if (it == m_runners.end())
        return;
    // Not from inside the session's own signal: it goes once this call has returned.
    ConsoleSession* session = it->second.session.release();
    m_runners.erase(it);
    session->disconnect(this);
    session->deleteLater();
}

void JobRunners::onSessionState(std::int64_t id)
{
    const auto it = m_runners.find(id);
    if (it == m_runners.end())
        return;
    Runner& r = it->second;
    const auto state = r.session->state();
    if (state == ConsoleSession::State::Failed && !r.submitted) {
        const QString why = r.session->lastFailure() ? r.session->lastFailure()->text() : QString();
        finish(id);
        Q_EMIT failed(id, why);
        return;
    }
    if (state != ConsoleSession::State::Connected || r.submitted)
        return;
    r.submitted = true;
    idem::JobRunOptions options;
    options.callSeconds = m_callSeconds;
    options.batch = m_batch;
    options.stop = r.stop.get();
    // The stop flag lives as long as the job holds it (the session's worker may outlive the runner).
    auto stop = r.stop;
    r.session->submit(
        [id, options, stop](pqxx::connection& conn, const idem::SchemaName& schema) {
            // A job waiting for another login's approval: this console runs it once approved
            // (one short read a second on this runner's own connection), until stopped.
            for (;;) {
                const auto job = idem::readJob(conn, schema, id);
                if (!job || job->state != "awaiting_approval")
                    break;
                for (int i = 0; i < 10 && !stop->load(); ++i)
                    std::this_thread::sleep_for(std::chrono::milliseconds(100));
                if (stop->load())
                    return QVariant(QString::fromStdString(job->state));
            }
            // The console's sessions carry no statement timeout of their own; a call of
            // idem_job_run lasts about callSeconds by design.
            if (!idem::behindPooler(conn))
                pqxx::nontransaction(conn).exec("SET statement_timeout = 0");
            const auto status = idem::runRecoveryJob(conn, schema, id, options);
            return QVariant(QString::fromStdString(status.state));
        },
        this,
        [this, id](const QVariant& answer) {
            finish(id);
            Q_EMIT ended(id, answer.toString());
        },
        [this, id](const Failure& failure) {
            finish(id);
            Q_EMIT failed(id, failure.text());
        });
}

} // namespace idem::console
