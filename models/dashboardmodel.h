#pragma once

#include <QDateTime>
#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "operations/dashboardquery.h"
#include "operations/taskfilter.h"
#include "operations/tasklist.h"
#include "models/dashboardhistory.h"
#include "models/livetext.h"
#include "models/dashboardpolling.h"
#include "models/dashboardthresholds.h"
#include "models/tilepresenter.h"
#include "models/workermessages.h"

namespace idem::console {

class ConsoleSession;
struct LatencyReading;

// What one tick brought back to the UI thread.
struct DashboardTick {
    idem::DashboardReading reading;
    qint64 elapsedMs = 0; // the tick's one round trip, measured on the worker thread
    int historyMinutes = 0;
};

// What one exact refresh job brought back: the shared one (refreshed: this console did it) or
// this console's own (figures).
struct ExactRefresh {
    bool own = false;
    bool refreshed = false;
    idem::ExactFigures figures;
};

// The live dashboard's data side: it ticks through a ConsoleSession's worker (one statement per
// tick, the next armed only when the last answered, stretched when a tick overruns its budget:
// DashboardPolling decides when), keeps a bounded history for the charts and says how fresh its
// data is; the tiles' texts and colours are TilePresenter's, from the catalogue
// (tilecatalogue.h). Nothing here waits on the database.
class DashboardModel : public QObject {
    Q_OBJECT
public:
    using Freshness = DashboardPolling::Freshness;

    explicit DashboardModel(ConsoleSession* session, QObject* parent = nullptr);
    // A static dashboard (an incident snapshot's): no session, never polls; showStatic() sets
    // what the tiles and charts show.
    explicit DashboardModel(QObject* parent = nullptr);
    ~DashboardModel() override;

    bool isStatic() const { return m_static; }
    int figuresWindowMinutes() const { return m_figuresWindowMinutes.value_or(m_settings.windowMinutes); }
    // Static mode only: the settings (thresholds, chart window) and one reading. The tiles'
    // window captions say figuresWindowMinutes, which may differ from the charts' window.
    // `earlier`: samples before the reading's instant (a snapshot's processing history), oldest first.
    void showStatic(const DashboardSettings& settings, const idem::DashboardReading& reading, int figuresWindowMinutes,
        const std::vector<LiveSample>& earlier = {});

    const DashboardSettings& settings() const { return m_settings; }
    void setSettings(const DashboardSettings& settings);
    void setInterval(int ms);
    void setPaused(bool paused);
    void setWindowMinutes(int minutes);
    void setFilter(const QString& tenant, const QString& operation);
    void setThreshold(Tile tile, const Threshold& threshold);
    void setStatementTimeoutMs(int ms) { m_statementTimeoutMs = ms; }
    int statementTimeoutMs() const { return m_statementTimeoutMs; }

    Freshness freshness() const { return m_poll.freshness(); }
    // Why the data is not live (the failure, the disconnect, the silence), empty when live.
    QString reason() const { return m_poll.reason(); }
    // The failed read's own detail for a tooltip (the server's message, its SQLSTATE and
    // context); empty when the last read did not fail on the server.
    QString reasonDetail() const { return m_reasonDetail; }
    // When the next read is due (local clock); invalid while one runs, while paused, or when
    // none is scheduled (not connected).
    QDateTime nextReadAt() const;
    int failuresInARow() const { return m_poll.failures(); }
    // How the dashboard polls right now, in words: every N s as chosen, stretched (ticks over
    // their budget), or backing off after failed reads, with the next read's time; or paused.
    QString pollingText() const;
    // Whether the polling differs from the interval chosen (backing off, stretched).
    bool pollingDiffers() const;
    // The same in a few words, to stand beside the interval box ("backing off: next read at
    // 12:00:31 (in 8 s)"); empty when the polling is as chosen.
    QString pollingBrief() const;
    // When the data is stale: when the next read comes ("Next read at 12:00:31 (in 8 s).").
    QString nextReadText() const;
    // When the last good tick arrived (local clock); invalid before the first.
    QDateTime lastGoodAt() const { return m_lastGoodAt; }
    const std::optional<idem::DashboardReading>& latest() const { return m_latest; }
    const std::optional<std::vector<idem::AttemptsBin>>& attempts() const { return m_attempts; }
    const DashboardHistory& history() const { return m_history; }
    // The worst p95 tile's figures (a LatencyWatch's state, or a snapshot's reading): they come
    // from their own read, not the tick. Levels and alerts follow, and updated() is emitted.
    void setLatency(const LatencyState& state);
    // The tiles as the presenter shows them from this model's settings, figures and history.
    TilePresenter presenter() const;
    TileValue tile(Tile tile) const;
    idem::TaskFilter filterFor(Tile tile) const;
    // The order a tile's rows open in when the figure is about one of them (the oldest row in
    // processing first); nullopt for the page's own order.
    static std::optional<idem::TaskSort> sortFor(Tile tile) { return TilePresenter::sortFor(tile); }
    // The rows filterFor() selects, in words (what the tile's click opens); empty when the tile
    // opens nothing.
    QString opensText(Tile tile) const;
    // The same words as a LiveText: what was opened (the tile, with this moment's window and
    // limit), written again in the language of the moment whenever it is shown.
    LiveText opensWords(Tile tile) const;
    // Why the tile opens no rows (what they would be, and why they cannot be found); empty for a
    // tile that opens rows.
    static QString opensNothingText(Tile tile) { return TilePresenter::opensNothingText(tile); }
    // The tiles red now, in the order they turned red; a tile leaves the list when it is no
    // longer red (or the data is no longer live).
    const std::vector<OpenAlert>& openAlerts() const { return m_openAlerts; }
    // "Stale-token rejections 282 (4.1 % of claims; red from 2 %)": the latest value.
    QString alertText(Tile tile) const;
    // When the current red run of a tile began, from the data, not from when this console saw it
    // (TilePresenter::redSince(), RedSeries in the catalogue).
    OpenAlert redSince(Tile tile) const;

    qint64 lastTickMs() const { return m_lastTickMs; }
    std::chrono::milliseconds nextTickIn() const { return m_poll.nextTick(); }
    bool stretched() const { return m_poll.stretched(m_settings.intervalMs); }
    int ticks() const { return m_ticks; }
    // Shared exact refreshes this console ran (it won the database's attempt).
    int sharedRefreshes() const { return m_sharedRefreshes; }
    // Exact refresh jobs this model handed its session (the Fleet page's cost check counts them).
    int exactRefreshJobs() const { return m_exactJobs; }
    bool exactRefreshPending() const { return m_exactPending != 0; }
    bool tickPending() const { return m_pending != 0; }

    // The ingest path on its own (what a tick's answer does on the UI thread): the benchmark feeds
    // synthetic ticks through it.
    void ingest(const DashboardTick& tick);

public Q_SLOTS:
    void tickNow();

Q_SIGNALS:
    void updated();
    void freshnessChanged();
    void settingsChanged();
    // A tile crossed into critical (once per crossing, not every tick).
    void alert(idem::console::Tile tile, const QString& text);

private:
    void onSessionState();
    void onTickDone(quint64 id, const QVariant& answer);
    void onTickFailed(quint64 id, const Failure& failure);
    void onClock();
    void schedule(std::chrono::milliseconds after);
    void setFreshness(Freshness freshness, const QString& reason);
    // The words for a tick that has not answered for a while, from what the session knows of it.
    QString overdueText() const;
    void resetData();
    void evaluateLevels();
    void maybeRefreshExact();
    bool usesOwnExact(const idem::StatsReading& s) const;

    QPointer<ConsoleSession> m_session; // may go first when the window closes
    bool m_static = false;
    std::optional<int> m_figuresWindowMinutes; // static mode: the tiles' window, when not the charts'
    DashboardSettings m_settings;
    int m_statementTimeoutMs = 5000;
    bool m_prepared = false; // the connection's session settings are in place

    quint64 m_pending = 0;
    int m_generation = 0; // bumped when the filter or window changes: older answers are dropped
    QElapsedTimer m_pendingSince;
    QString m_reasonDetail;
    QTimer m_timer;
    QTimer m_clock; // once a second: overdue detection and "N s ago"
    DashboardPolling m_poll;

    QDateTime m_lastGoodAt;
    std::optional<idem::DashboardReading> m_latest;
    std::optional<std::vector<idem::AttemptsBin>> m_attempts;
    quint64 m_exactPending = 0;
    QElapsedTimer m_exactFailedAt;
    std::optional<idem::ExactFigures> m_ownExact;
    QElapsedTimer m_ownExactAt;
    int m_sharedRefreshes = 0;
    int m_exactJobs = 0;
    qint64 m_historyLoadedMinutes = 0; // how far back the history holds the current window
    qint64 m_historyFromMinute = 0; // epoch seconds of the oldest minute loaded (0: none yet)
    qint64 m_lastServerMs = 0;
    DashboardHistory m_history;
    std::shared_ptr<const LatencyReading> m_latencyReading;
    LatencyState m_latency; // its reading is m_latencyReading's
    bool m_latencySet = false;
    std::array<Level, tileCount> m_levels {};
    std::vector<OpenAlert> m_openAlerts;
    qint64 m_lastTickMs = 0;
    int m_ticks = 0;
};

} // namespace idem::console

Q_DECLARE_METATYPE(idem::console::DashboardTick)
Q_DECLARE_METATYPE(idem::console::ExactRefresh)
