#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>

#include <memory>

#include "models/sessionrequest.h"
#include "operations/node.h"

namespace idem::console {

class ConsoleSession;

// What a failover could lose with asynchronous replication (issue #29): the acknowledged
// successes within each asynchronous standby's lag, read on the session's worker thread when
// asked (after each read of the server), one read at a time. The primary's WAL positions and the
// standbys seen since it started (issue 40) are remembered, so a standby that went away is still
// counted. Nothing here waits on the database.
class AtRiskWatch : public QObject {
    Q_OBJECT
public:
    explicit AtRiskWatch(ConsoleSession* session, QObject* parent = nullptr);

    // Reads now, unless a read is under way (it would say the same); asked before the session
    // says it is connected (the first read of the server comes just before), once it is.
    void read();
    // Forgets the last reading (the session is disconnected).
    void clear();
    const std::shared_ptr<const idem::AtRiskReading>& reading() const { return m_reading; }
    // This role cannot read the schema: nothing is read.
    bool unavailable() const { return m_unavailable; }
    // Why the last read failed; empty otherwise.
    QString error() const { return m_error; }

Q_SIGNALS:
    void changed();

private:
    SessionRequest m_request;
    bool m_wanted = false;
    bool m_unavailable = false;
    std::shared_ptr<const idem::AtRiskReading> m_reading;
    QString m_error;
    // Touched by the worker thread only, one read at a time.
    std::shared_ptr<idem::AtRiskMemory> m_memory = std::make_shared<idem::AtRiskMemory>();
};

} // namespace idem::console

Q_DECLARE_METATYPE(idem::AtRiskReading)
