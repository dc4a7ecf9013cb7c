#pragma once

#include <QObject>
#include <QPointer>
#include <QTimer>
#include <QVariant>

#include <functional>

#include "models/databaseworker.h"
#include "models/workermessages.h"

namespace idem::console {

class ConsoleSession;

// The skeleton the console's slower readers share (pauses, latency, chart events): one read at
// a time on the session's worker thread, the next armed by its owner only once the last one
// answered, so a slow server gets fewer reads, not more; a refresh asked for while a read is
// under way runs once that one has answered. Reads only while the session can poll (a schema of
// the version the console ships, or newer). Nothing here waits on the database.
class SessionPoll : public QObject {
    Q_OBJECT
public:
    using MakeJob = std::function<DatabaseJob()>;

    SessionPoll(ConsoleSession* session, MakeJob makeJob, QObject* parent = nullptr);
    ~SessionPoll() override;

    // Follows the session from now on, and reads at once if it can (called by the owner once it
    // is ready for answers).
    void start();
    // Connected and pollable.
    bool readable() const;
    ConsoleSession* session() const;

    // Reads now; a read already under way answers first, then this one runs.
    void refreshNow();
    // The next read in `ms` (a read under way or asked for again wins).
    void readIn(qint64 ms);
    bool pending() const { return m_pending != 0; }
    // When the next read is due, in ms from now (0 when none is armed).
    qint64 nextReadInMs() const;
    int reads() const { return m_reads; }
    // Each read's bound when the server does not answer it at all (a stopped backend): its
    // statements' total timeout; past it the session cancels the read, then cuts the connection,
    // as it does a tick's (which would otherwise wait behind this read without a bound). 0: none.
    void setBound(int statementsMs) { m_boundMs = statementsMs; }

Q_SIGNALS:
    // An answer; `superseded`: refreshNow() was called while it was under way (another read
    // follows at once, the owner need not arm one).
    void answered(const QVariant& answer, bool superseded);
    void failed(const idem::console::Failure& failure);
    // The session cannot be read (disconnected, or the schema older than the console's): the timer is stopped and
    // any read dropped. Emitted on every such session change.
    void stopped();

private:
    void onSessionState();

    QPointer<ConsoleSession> m_session;
    MakeJob m_makeJob;
    QTimer m_timer;
    quint64 m_pending = 0;
    bool m_again = false;
    bool m_started = false;
    int m_reads = 0;
    int m_boundMs = 0;
};

} // namespace idem::console
