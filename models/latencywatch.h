#pragma once

#include <QObject>
#include <QString>

#include <optional>
#include <vector>

// Not operations/latency.h: its LatencyHistogram has a member named `slots`, which Qt's keyword
// macro of that name empties in any file that includes a Qt header first. Only latencywatch.cpp
// includes it (before Qt), and turns its reports into the plain values below on the worker thread.
#include "models/dashboardthresholds.h"
#include "models/sessionpoll.h"
#include "models/tilepresenter.h"

namespace idem::console {

class ConsoleSession;

// One minute's percentiles of one kind, in milliseconds.
struct LatencyPoint {
    qint64 minuteMs = 0; // the minute's start, server clock
    double p50 = 0;
    double p95 = 0;
    double p99 = 0;
};

// One operation's run time over the window (the tile and its tooltip).
struct OperationLatency {
    QString operation; // display-safe
    qint64 count = 0;
    double p95Ms = 0;
};

// What one latency read brought back: the chart's per-minute figures for the dashboard's scope
// (all operations combined when none is filtered) and the window's run time per operation (the
// worst p95 tile), both from one read-only transaction, so they end at the same folded minute.
struct LatencyReading {
    std::vector<LatencyPoint> run; // oldest first, minutes with runs only
    std::vector<LatencyPoint> timeToSuccess;
    std::vector<OperationLatency> runByOperation; // the highest p95 first
    qint64 foldedToMs = 0; // where the roll-up stands: the end of the last folded minute
    qint64 serverNowMs = 0;
    int minutesFolded = 0; // by this read's own roll-up call
};

// The latency figures (issue #27, schema v17) for the dashboard's window, tenant and operation,
// read on the session's worker thread. Only folded minutes exist, and a minute is folded once it
// has been closed for a minute, so there is nothing new to read before the next minute is due:
// the watch reads once when the scope changes, then once per newly due minute (from where the
// last read said the roll-up stands, by the server's clock), not on every dashboard tick. The
// read calls the roll-up first on a primary (a standby reads what its primary folded). Nothing
// here waits on the database.
class LatencyWatch : public QObject {
    Q_OBJECT
public:
    // A read that found no new minute folded (another session folding, a standby whose primary
    // has not folded yet) tries again after this long, doubled each time, up to a minute.
    static constexpr qint64 retryMs = 10000;
    static constexpr qint64 maxRetryMs = 60000;

    explicit LatencyWatch(ConsoleSession* session, QObject* parent = nullptr);
    ~LatencyWatch() override;

    // The dashboard's window and filter; a change reads again at once.
    void setScope(int windowMinutes, const QString& tenant, const QString& operation);
    int windowMinutes() const { return m_windowMinutes; }

    const std::optional<LatencyReading>& reading() const { return m_reading; }
    // Why the last read failed (kept until one succeeds); empty otherwise.
    QString error() const { return m_poll.error(); }
    int reads() const { return m_reads; }
    bool pending() const { return m_poll.pending(); }
    // When the next read is due, in ms from now (0 when none is armed).
    qint64 nextReadInMs() const { return m_poll.nextReadInMs(); }

    // The chart's points, oldest first; minutes with no value have no point.
    std::vector<LatencyPoint> runPoints() const { return m_reading ? m_reading->run : std::vector<LatencyPoint>(); }
    std::vector<LatencyPoint> timeToSuccessPoints() const
    {
        return m_reading ? m_reading->timeToSuccess : std::vector<LatencyPoint>();
    }
    // The window's run time per operation, the highest p95 first.
    std::vector<OperationLatency> runByOperation() const
    {
        return m_reading ? m_reading->runByOperation : std::vector<OperationLatency>();
    }
    // Where the figures end: the end of the last folded minute (server clock, ms); 0 before a read.
    qint64 foldedToMs() const;

    // What the worst p95 tile is made from (TilePresenter, through DashboardModel::setLatency()).
    LatencyState state() const { return { m_reading ? &*m_reading : nullptr, m_windowMinutes, error() }; }

public Q_SLOTS:
    // Reads now; a read already under way answers first.
    void refreshNow() { m_poll.refreshNow(); }

Q_SIGNALS:
    void changed();

private:
    DatabaseJob makeJob() const;
    void onAnswer(const QVariant& answer, bool superseded);
    void onFailure(const Failure& failure);
    void armNext(std::optional<qint64> previousFoldedToMs);

    SessionPoll m_poll;
    int m_windowMinutes = 15;
    QString m_tenant;
    QString m_operation;
    std::optional<LatencyReading> m_reading;
    int m_reads = 0;
    qint64 m_retryMs = retryMs;
};

// The worst p95 tile (LatencyState in tilepresenter.h): the operation with the highest p95 run
// time in the window, its value in seconds held against `threshold` (seconds), and the slowest
// few in TileValue::more. TilePresenter::tile() shows it.
TileValue latencyWorstTile(const LatencyState& state, const Threshold& threshold);
// The highest p95 first, then by name.
void sortLatencyByP95(std::vector<OperationLatency>& ops);

} // namespace idem::console

Q_DECLARE_METATYPE(idem::console::LatencyReading)
