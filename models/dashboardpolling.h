#pragma once

#include <QObject>
#include <QString>

#include <chrono>

namespace idem::console {

// When the dashboard polls and what it says of its data's freshness: the tick's budget (a slow
// tick stretches the interval), the backoff after failed ticks, when silence means the database
// is not answering, how much counter history a tick asks for. Plain state: no timers, no
// database, no session. DashboardModel owns the timers and the session and asks it.
class DashboardPolling {
    Q_GADGET
public:
    enum class Freshness {
        NoData, // nothing read yet (or the schema cannot be read)
        Live,
        Waiting, // a tick is overdue: the database has not answered
        Failed, // the last tick failed (timeout, privilege); retrying
        Disconnected,
    };
    Q_ENUM(Freshness)

    // A tick may use a tenth of the interval; a slower one stretches the interval, so a
    // struggling server gets less load from the console rather than more (DESIGN section 6).
    static constexpr qint64 tickBudgetDivisor = 10;
    static constexpr std::chrono::milliseconds maxDelay { 60000 };
    // A tick answers in milliseconds; silence this long means the database is not answering.
    static constexpr qint64 overdueAfterMs = 2000;
    // A tick the server does not answer at all (its process stopped, the network cut: the
    // server enforces the statement timeout itself, so none fires there) is bounded from this
    // side (ConsoleSession::JobBound): once the statement timeout has passed and as long again
    // (at least 2 s more), the console asks the server to cancel it; 5 s after that it closes
    // the connection and opens a new one. Counted from when the worker started the tick.
    static std::chrono::milliseconds cancelAfter(int statementTimeoutMs);
    static std::chrono::milliseconds cutAfter(int statementTimeoutMs);
    // After a failed exact refresh (timeout, privilege), wait this long before this console
    // asks again; the database's own attempt marker keeps other consoles off it meanwhile.
    static constexpr qint64 exactRetryAfterMs = 60000;

    // A tick answered after elapsedMs: the failures are over; the next tick comes after the
    // interval, or ten times the tick when that is longer. A tick slower than its own statement
    // timeout was not executing all that time (the server cancels a statement sooner): it
    // waited on a stopped backend or the network, no measure of the load the console puts on
    // the server, so it does not stretch the polling. Returns the delay (as nextTick()).
    std::chrono::milliseconds answered(qint64 elapsedMs, int intervalMs, int statementTimeoutMs);
    // A tick failed (a timeout, a privilege; not a lost connection): the interval doubled per
    // failure in a row, up to 32 times, at most maxDelay. Returns the delay.
    std::chrono::milliseconds failed(int intervalMs);
    // The next tick after `after`, at most maxDelay. Returns the delay.
    std::chrono::milliseconds delay(std::chrono::milliseconds after);
    std::chrono::milliseconds nextTick() const { return m_nextTick; }
    bool stretched(int intervalMs) const { return m_nextTick.count() > intervalMs; }
    int failures() const { return m_failures; }

    // A tick that has waited this long is overdue.
    static bool overdue(qint64 pendingMs) { return pendingMs >= overdueAfterMs; }
    // How many minutes of counters a tick asks for: two windows after a connect or a change
    // (loadedMinutes short of them, or no tick yet: lastServerMs 0), so that a counter tile's red
    // run can be found from the windows ending in each of the last window's minutes; then only
    // the minutes since the last tick and the one before (workers flush the minute that just
    // closed a moment later), 2 to a window.
    static int historyMinutes(qint64 loadedMinutes, int windowMinutes, qint64 lastServerMs, qint64 nowMs);

    Freshness freshness() const { return m_freshness; }
    QString reason() const { return m_reason; }
    // Returns true when the freshness or its reason changed.
    bool setFreshness(Freshness freshness, const QString& reason);

private:
    std::chrono::milliseconds m_nextTick { 0 };
    int m_failures = 0;
    Freshness m_freshness = Freshness::NoData;
    QString m_reason;
};

} // namespace idem::console
