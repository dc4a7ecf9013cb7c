#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>

#include <optional>

#include "models/sessionpoll.h"
#include "operations/horizon.h"

namespace idem::console {

class ConsoleSession;

// The transaction horizon as the dashboard watches it (issue 46 item 1): idem_horizon_holders
// and the Idem tables' dead rows, one read every 15 s on the session's worker thread (bounded by
// the statement and lock timeouts, the next armed only when the last one answered), judged held
// past a threshold (5 min by default) while the dead rows grow (HorizonMemory). Nothing here
// waits on the database.
class HorizonWatch : public QObject {
    Q_OBJECT
public:
    explicit HorizonWatch(ConsoleSession* session, QObject* parent = nullptr);
    ~HorizonWatch() override;

    void setInterval(int ms) { m_poll.setInterval(ms); }
    void setHeldAfterSeconds(double seconds) { m_heldAfter = seconds; }
    double heldAfterSeconds() const { return m_heldAfter; }
    const std::optional<idem::HorizonReading>& reading() const { return m_reading; }
    const idem::HorizonVerdict& verdict() const { return m_verdict; }
    QString error() const { return m_poll.error(); }
    int reads() const { return m_poll.reads(); }

public Q_SLOTS:
    void refreshNow() { m_poll.refreshNow(); }

Q_SIGNALS:
    void changed();

private:
    SessionPoll m_poll;
    double m_heldAfter = idem::defaultHeldAfterSeconds;
    idem::HorizonMemory m_memory;
    std::optional<idem::HorizonReading> m_reading;
    idem::HorizonVerdict m_verdict;
};

namespace horizontext {
    // "session", "prepared transaction", "replication slot", "standby feedback", translated.
    QString kind(const std::string& kind);
    // "session pid 4242 · role report · application nightly-report · idle in transaction · 12 min ·
    // 35,120 xids", each part escaped (visibleText).
    QString holder(const idem::HorizonHolder& h);
    // The dashboard's line: who holds it, for how long, and how the dead rows grew.
    QString alertLine(const idem::HorizonReading& r, const idem::HorizonVerdict& v, double heldAfterSeconds);
} // namespace horizontext

} // namespace idem::console

Q_DECLARE_METATYPE(idem::HorizonReading)
