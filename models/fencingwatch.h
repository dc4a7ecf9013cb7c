#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

#include <optional>

#include "models/sessionpoll.h"
#include "operations/fencing.h"

namespace idem::console {

class ConsoleSession;

// Proof that fencing works, and the lease advisor, as the dashboard watches them (issue 46 item
// 2): idem_fencing over the last hour, one read every 30 s on the session's worker thread (the
// latency minutes folded first; bounded by the statement timeout, the next armed only when the
// last one answered). Nothing here waits on the database.
class FencingWatch : public QObject {
    Q_OBJECT
public:
    explicit FencingWatch(ConsoleSession* session, QObject* parent = nullptr);
    ~FencingWatch() override;

    void setInterval(int ms) { m_poll.setInterval(ms); }
    const std::optional<idem::FencingReading>& reading() const { return m_reading; }
    QString error() const { return m_poll.error(); }
    int reads() const { return m_poll.reads(); }

public Q_SLOTS:
    void refreshNow() { m_poll.refreshNow(); }

Q_SIGNALS:
    void changed();

private:
    SessionPoll m_poll;
    std::optional<idem::FencingReading> m_reading;
};

namespace fencingtext {
    // Something to show: a takeover, a refused late call, or an operation whose lease is too short.
    bool worthShowing(const idem::FencingReading& r);
    // "Fencing, last 60 min: leases taken over 3, late calls refused 2 (the fence held: ...)".
    QString headline(const idem::FencingReading& r);
    // "charge: p99 run time 41 s exceeds the 30 s lease: 3.1 % of attempts outlive their lease",
    // translated, names escaped (visibleText).
    QString advice(const idem::FencingOperation& op);
    // Per worker with a refused call or a takeover: "worker-7 (charge): late calls refused 2,
    // leases taken over 0", at most `limit`, then "more workers: 4 (idemctl fencing)".
    QStringList workers(const idem::FencingReading& r, int limit);
} // namespace fencingtext

} // namespace idem::console

Q_DECLARE_METATYPE(idem::FencingReading)
