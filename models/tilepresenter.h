#pragma once

#include <QDateTime>
#include <QString>

#include <optional>
#include <string>

#include "models/dashboardhistory.h"
#include "models/dashboardthresholds.h"
#include "operations/dashboardquery.h"

namespace idem::console {

// What a tile shows.
struct TileValue {
    QString text; // the number as a person reads it ("12", "23.5 %", "4 min 12 s", "≥ 10,000", "≈ 1,200")
    QString detail; // the line under it
    // What the number is when it is not an exact count of now: "exact 312,457 as of 20 s ago",
    // "counted up to 10,000; exact count pending". Empty for an exact figure.
    QString quality;
    std::optional<double> value; // in the threshold's unit
    Level level = Level::NoData;
    // What a click opens ("keys with a digest conflict in the last 15 min"); empty when nothing.
    QString opens;
    // Why a click opens nothing, for a tile whose events leave no mark on any row.
    QString opensNothing;
    // More for the tooltip, after the threshold line (the slowest operations, a failed read).
    QString more;
    // Its figures are not read yet: shown greyed, as stale figures are.
    bool pending = false;
};

// A tile that is red now: since when, by the server's clock and from the data (see
// TilePresenter::redSince()).
struct OpenAlert {
    Tile tile;
    QDateTime since;
    // The data does not reach back to the start of the run: red since then or earlier.
    bool orEarlier = false;
    bool minutes = false; // `since` is a minute of the counters (else a tick's time)
};

// The Total rows tile's label of its estimate's source (idem::liveRowCounterSource or the
// planner's statistics); the Tasks page's count of every row says the same.
QString totalRowsSourceText(const std::string& source);
// A figure window as the tiles caption it: "last 15 min", "last 1 h".
QString windowText(int minutes);

struct LatencyReading;

// What the worst p95 tile is made from: the live watch's reading, or an incident snapshot's.
struct LatencyState {
    const LatencyReading* reading = nullptr; // none read (yet)
    int windowMinutes = 15;
    QString error; // the last read's failure
};

// What the dashboard knows at one moment, for the presenter: plain data, no database, no timers.
struct TileInputs {
    const DashboardSettings* settings = nullptr; // thresholds, window, long-unfinished limit
    int figuresWindowMinutes = 15; // the window the figures were read over (the tiles' captions)
    // A static dashboard's figures window differs from the charts': the counter history then
    // says nothing of the figures' red runs.
    bool figuresWindowOwn = false;
    const idem::DashboardReading* latest = nullptr; // unset before the first reading
    const DashboardHistory* history = nullptr;
    std::int64_t historyFromMinute = 0; // epoch seconds of the oldest counter minute loaded (0: none)
    const LatencyState* latency = nullptr; // the latency read's (unset: no reader, the tile waits)
};

// The tiles' side of the dashboard as a pure function of its inputs (the catalogue's rows, the
// figures, the thresholds and the history): the texts, colours, tooltips, what a click opens,
// and since when a red tile is red. DashboardModel feeds it; tests feed it planted data.
class TilePresenter {
public:
    explicit TilePresenter(const TileInputs& inputs);

    TileValue tile(Tile tile) const;
    // "Stale-token rejections 282 (4.1 % of claims; red from 2 %)": the latest value.
    QString alertText(Tile tile) const;
    // The tooltip's threshold line: "Amber from 1, red from 10." or "No thresholds set."
    QString thresholdText(Tile tile) const;
    idem::TaskFilter filterFor(Tile tile) const;
    // The rows filterFor() selects, in words; empty when the tile opens nothing.
    QString opensText(Tile tile) const;
    // When the current red run of a tile began, from the data (see RedSeries); `known` is the
    // alert as it stands (its since is kept for a tile without a series).
    OpenAlert redSince(Tile tile, const std::optional<OpenAlert>& known) const;

    // Why the tile opens no rows (what they would be, and why they cannot be found); empty for a
    // tile that opens rows.
    static QString opensNothingText(Tile tile);
    // The order a tile's rows open in; nullopt for the page's own order.
    static std::optional<idem::TaskSort> sortFor(Tile tile);
    // A tile's whole tooltip: its definition, the threshold line, `more` (TileValue::more), what a
    // click opens (or why nothing). clickable: the tile opens rows.
    static QString toolTip(Tile tile, bool clickable, const QString& thresholdText, const QString& opens,
        const QString& opensNothing, const QString& more = {});
    // "Click: opens nothing. <why>", empty without a reason.
    static QString opensNothingLine(const QString& opensNothing);

private:
    // A catalogue text with its arguments filled in (value: the tile's, for PercentOfClaims).
    QString withArgs(
        const TileSpec& spec, const char* text, const std::vector<TileArg>& args, const TileValue& value) const;
    std::optional<double> windowValue(Tile tile, std::int64_t minuteEpoch) const;

    TileInputs m_in;
};

} // namespace idem::console
