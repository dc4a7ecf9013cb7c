#pragma once

#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>
#include <QVariant>

#include <functional>

#include "models/databaseworker.h"
#include "models/workermessages.h"

namespace idem::console {

class ConsoleSession;

// The one poll-and-re-arm loop of the console's watches (pauses, horizon, re-drivers, jobs,
// latency, chart events, the breakdown): one read at a time on the session's worker thread, the
// next armed only once the last one answered or failed, so a slow server gets fewer reads, not
// more; a refresh asked for while a read is under way runs once that one has answered; an answer
// read for an earlier scope is dropped. Reads only while the session can poll (a schema of the
// version the console ships, or newer). Nothing here waits on the database.
class SessionPoll : public QObject {
    Q_OBJECT
public:
    // Makes the job of the next read, from the owner's scope as it is now; an empty job: nothing
    // to read (no read is made, and none armed).
    using MakeJob = std::function<DatabaseJob()>;
    static constexpr int minIntervalMs = 200;

    SessionPoll(ConsoleSession* session, MakeJob makeJob, QObject* parent = nullptr);
    ~SessionPoll() override;

    // Follows the session from now on, and reads at once if it can (called by the owner once it
    // is ready for answers).
    void start();
    // Connected and pollable.
    bool readable() const;
    ConsoleSession* session() const;

    // A read every `ms` (at least minIntervalMs), armed when the last one answered or failed;
    // a read already armed is armed again at the new period. Without one, the owner arms each
    // next read itself (readIn), for a period that follows what the answer said.
    void setInterval(int ms);
    int interval() const { return m_intervalMs; }
    // Reads now; a read already under way answers first, then this one runs.
    void refreshNow();
    // The owner's scope changed (another filter, window or key): the answer of a read under way
    // is dropped, the error cleared, and the new scope is read now (after it).
    void rescope();
    // The next read in `ms` (a read under way or asked for again wins).
    void readIn(qint64 ms);
    bool pending() const { return m_pending != 0; }
    // When the next read is due, in ms from now (0 when none is armed).
    qint64 nextReadInMs() const;
    // Answers received (for the current scope).
    int reads() const { return m_reads; }
    // Why the last read failed, kept until one answers or the session cannot be read; empty otherwise.
    QString error() const { return m_error; }
    // Each read's bound when the server does not answer it at all (a stopped backend): its
    // statements' total timeout; past it the session cancels the read, then cuts the connection,
    // as it does a tick's (which would otherwise wait behind this read without a bound). 0: none.
    void setBound(int statementsMs) { m_boundMs = statementsMs; }

Q_SIGNALS:
    // An answer; `superseded`: refreshNow() was called while it was under way (another read
    // follows at once).
    void answered(const QVariant& answer, bool superseded);
    // A read failed; error() says why.
    void failed(const idem::console::Failure& failure);
    // The session can no longer be read (disconnected, or the schema older than the console's):
    // the timer is stopped, any read dropped and the error cleared. Once per such change.
    void stopped();

private:
    void onSessionState();
    // After an answer or a failure: a refresh asked for meanwhile, or the next period.
    void next(bool again);

    QPointer<ConsoleSession> m_session;
    MakeJob m_makeJob;
    QTimer m_timer;
    quint64 m_pending = 0;
    quint64 m_scope = 0;
    bool m_again = false;
    bool m_started = false;
    bool m_stopped = false;
    int m_reads = 0;
    int m_boundMs = 0;
    int m_intervalMs = 0;
    QString m_error;
};

} // namespace idem::console
