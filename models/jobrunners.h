#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <map>
#include <memory>

#include "models/connectionsettings.h"
#include "operations/jobs.h"

namespace idem::console {

class ConsoleSession;

// The recovery jobs this console runs: each on a connection of its own (a ConsoleSession with
// its own worker thread, opened with the admin connection's settings), so a job's CALL
// idem_job_run never holds up the pages' reads or the admin's actions, and the UI thread never
// waits on it. The database runs the job; this only keeps a session attached as its runner.
// Closing the console (or stop()) ends that session after its current call: the job stays
// active, with every batch done so far committed, and anyone with idem_operator resumes it
// (Jobs page > Resume, `idemctl job resume ID`, CALL idem_job_run(ID) under pg_cron).
class JobRunners : public QObject {
    Q_OBJECT
public:
    explicit JobRunners(QObject* parent = nullptr);
    ~JobRunners() override;

    // Starts running job `id` on a new connection made with `settings` (the admin's). A job
    // this console runs already is left alone (returns false). A job waiting for another login's
    // approval is run as soon as it is approved (its state read once a second), until stop().
    bool run(const ConnectionSettings& settings, std::int64_t id);
    // Stops running job `id` after the call in flight; it stays active (resumable).
    void stop(std::int64_t id);
    bool running(std::int64_t id) const { return m_runners.count(id) != 0; }
    int count() const { return static_cast<int>(m_runners.size()); }
    // Each call of idem_job_run lasts about this long (between two, a stop is seen).
    void setCallSeconds(int seconds) { m_callSeconds = seconds; }
    void setBatch(int rows) { m_batch = rows; }

Q_SIGNALS:
    void started(qint64 id);
    // The run ended: the job finished or was cancelled (`status` says), or was stopped here.
    void ended(qint64 id, const QString& state);
    // It could not run or went on no longer (refused, connection lost): the job keeps its state.
    void failed(qint64 id, const QString& message);

private:
    struct Runner {
        std::unique_ptr<ConsoleSession> session;
        std::shared_ptr<std::atomic<bool>> stop;
        bool submitted = false;
    };
    void onSessionState(std::int64_t id);
    void finish(std::int64_t id);

    std::map<std::int64_t, Runner> m_runners;
    int m_callSeconds = 1;
    int m_batch = idem::JobLimits::defaultBatch;
};

} // namespace idem::console
