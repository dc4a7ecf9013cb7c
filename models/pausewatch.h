#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QStringList>

#include <optional>

#include "operations/pauses.h"
#include "models/sessionpoll.h"
#include "models/sessionrequest.h"
#include "models/workermessages.h"

namespace idem::console {

class ConsoleSession;

// The pauses of intake (issue #26) as the console last read them: one idem_pause_list per poll
// on the session's worker thread (the monitor connection), the next armed only when the last
// one answered, so a slow server gets fewer reads, not more. Every page reads the same list: the
// banner above the pages, the dashboard's tiles and charts, the Tasks page's context menu.
// Nothing here waits on the database.
class PauseWatch : public QObject {
    Q_OBJECT
public:
    // turnedAway counts over this many minutes.
    static constexpr int windowMinutes = 15;

    explicit PauseWatch(ConsoleSession* session, QObject* parent = nullptr);
    ~PauseWatch() override;

    void setInterval(int ms) { m_poll.setInterval(ms); }
    int interval() const { return m_poll.interval(); }
    // The last list read; nullopt before the first, after a disconnect, or on a schema without pauses.
    const std::optional<idem::PauseList>& list() const { return m_list; }
    bool anyActive() const { return m_list && m_list->anyActive(); }
    // Why the last read failed (kept until one succeeds); empty otherwise.
    QString error() const { return m_poll.error(); }
    int reads() const { return m_poll.reads(); }
    // How long ago the list was read (its remainingMs are as of then).
    qint64 msSinceRead() const { return m_readAt.isValid() ? m_readAt.elapsed() : 0; }
    // A pause's time left now: its remainingMs less the time since the read; nullopt: no end.
    std::optional<qint64> remainingNow(const idem::Pause& pause) const;
    bool pending() const { return m_poll.pending(); }

    // Each in force, in the list's order: first a pause and its scope.
    std::vector<idem::Pause> active() const;
    // The pauses in force that cover every key of tenant:operation (empty names: any tenant, any
    // operation): the scope is wholly paused.
    std::vector<idem::Pause> coveringAll(const QString& tenant, const QString& operation) const;
    // The pauses in force that cover some of its keys (a pause of one operation, when all
    // operations are looked at).
    std::vector<idem::Pause> coveringSome(const QString& tenant, const QString& operation) const;

public Q_SLOTS:
    // Reads now (after an action, or F5); a read already under way answers first.
    void refreshNow() { m_poll.refreshNow(); }

Q_SIGNALS:
    void changed();

private:
    SessionPoll m_poll;
    std::optional<idem::PauseList> m_list;
    QElapsedTimer m_readAt;
};

// What a pause or a resume did, in words (display-safe): the scope, until when (a pause), the
// pauses that still cover the scope (a resume), and the audit entry.
struct PauseOutcome {
    qint64 auditId = 0;
    bool wasPaused = false; // a pause that changed one in force
    QString scope;
    QString until;
    QStringList stillPausedBy;
};

// Pauses intake of a scope or lifts one pause (idem_pause / idem_resume, one audit entry each),
// on the admin session's worker thread; the answer comes by signal.
class PauseChange : public QObject {
    Q_OBJECT
public:
    explicit PauseChange(ConsoleSession* admin, QObject* parent = nullptr);

    void pause(const idem::PauseRequest& request);
    void resume(const idem::Pause& pause, const std::string& reason);

Q_SIGNALS:
    void done(const idem::console::PauseOutcome& outcome);
    void failed(const QString& why);

private:
    SessionRequest m_request;
};

// "tenant-7:charge", "all tenants:charge" …: a pause's scope for people ('*' spelled out),
// display-safe.
QString pauseScopeText(const idem::Pause& pause);
QString pauseScopeText(const std::string& tenant, const std::string& operation);
// "until 14:05 (12m 30s left)" or "until resumed"; remaining by the server's clock.
QString pauseUntilText(const idem::Pause& pause, std::optional<qint64> remainingMs);

} // namespace idem::console

Q_DECLARE_METATYPE(idem::PauseList)
Q_DECLARE_METATYPE(idem::console::PauseOutcome)
