#pragma once

#include <QObject>
#include <QPointer>
#include <QVariant>

#include "models/databaseworker.h"
#include "models/workermessages.h"

namespace idem::console {

class ConsoleSession;

// One request at a time on a session, for a model that asks again before the answer came (a new
// filter, another preview): the request before is dropped, and only the latest one answers. A read
// is also cancelled when it is dropped or its owner goes (it would say nothing anyone sees); a
// write is never cancelled once asked for (it runs to its end, its answer dropped). Answers come
// on the owner's thread; nothing here waits on the database.
class SessionRequest : public QObject {
    Q_OBJECT
public:
    enum class Kind { Read, Write };

    SessionRequest(ConsoleSession* session, Kind kind, QObject* parent = nullptr);
    ~SessionRequest() override;

    // Runs job on the session's worker thread, dropping the request under way. boundMs: the job's
    // statements' total timeout, past which the session cancels it, then cuts the connection, when
    // the server does not answer at all (0: none). Not connected: fails at once (queued).
    void run(DatabaseJob job, int boundMs = 0);
    // Drops the request under way (a read is cancelled too).
    void drop();
    bool pending() const { return m_pending != 0; }
    ConsoleSession* session() const;

Q_SIGNALS:
    void answered(const QVariant& answer);
    void failed(const idem::console::Failure& failure);

private:
    QPointer<ConsoleSession> m_session;
    Kind m_kind;
    quint64 m_pending = 0;
    quint64 m_last = 0; // the id of the latest request, pending or failed at once
};

} // namespace idem::console
