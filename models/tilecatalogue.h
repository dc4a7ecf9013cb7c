#pragma once

#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

#include "operations/stats.h"
#include "operations/taskfilter.h"
#include "operations/tasklist.h"

namespace idem::console {

// The dashboard's tiles, in display order: the rows of now first, then the window's events.
// A new tile is a value here and a row in tileCatalogue() (tilecatalogue.cpp); nothing else.
enum class Tile {
    Processing,
    ExpiredLeases,
    WaitingRetry,
    Uncertain,
    LongUnfinished,
    OldestProcessing,
    Failed,
    DuplicateRatio,
    Retries,
    FailedRetries,
    DigestConflicts,
    StaleTokens,
    TotalRows,
    Reconcile,
    WorstP95RunTime,
    COUNT
};
constexpr int tileCount = static_cast<int>(Tile::COUNT);

enum class Level { NoData, Normal, Warning, Critical };

// Tile colours: at or above `warning` is amber, at or above `critical` red; unset is off. The
// value is in the tile's unit (TileUnit).
struct Threshold {
    std::optional<double> warning;
    std::optional<double> critical;
    bool operator==(const Threshold&) const = default;
};

Level levelOf(std::optional<double> value, const Threshold& threshold);

// How a tile reads its figures, writes its number and holds it against its thresholds.
enum class TileUnit {
    Rows, // a count of rows now: the sum of its figures (each may be a lower bound)
    PerClaims, // a count of events in the window, coloured by its percent of the window's claims
    Percent, // the duplicate ratio, in percent
    Seconds, // an age, written as a duration
    Estimate, // the planner's estimate of the table's rows, "≈ n"
    // The reconcile probes' last runs (DashboardReading::reconcile, no figure): the keys whose
    // business effect was not counted exactly once, exact as of those runs
    Reconcile,
    // The operation with the highest p95 run time over the window's folded minutes, in seconds:
    // from the latency read (TileInputs::latency, issue #27), not the tick
    Latency,
};

// What a detail line or an "opens" text fills its %1, %2 with, in order.
enum class TileArg {
    Window, // "last 15 min", "last 1 h": the tiles' window
    LongUnfinishedMinutes, // the long-unfinished limit, in minutes
    Claims, // the window's claims
    PercentOfClaims, // the tile's value, "4.1"
    EachFigure, // one argument per figure: its count, "≥ 10,000" when a lower bound
    ReconcileScope, // the operation whose probe found keys not ok, or "3 operations"
    ReconcileMissing, // keys with no effect in the probes' last runs
    ReconcileDuplicated, // keys with two or more
    ReconcileSampled, // keys those runs sampled
};

// What a tile's rows depend on besides the tile: the Tasks page filter's window and limit.
struct TileWindow {
    int windowMinutes = 15;
    int longUnfinishedMinutes = 60;
};

// Where a tile looks for the start of its current red run (DashboardModel::redSince()).
enum class RedSeries {
    None, // no series: the first tick that showed it red
    Counters, // the per-minute counters: the windows ending in each minute
    LiveProcessing, // the ticks' samples of processing rows
    LiveExpired, // the ticks' samples of expired leases
    Age, // the oldest row's age: it crossed the red line when its age did
};

// One row of the tile catalogue: everything a tile is, in one place.
struct TileSpec {
    Tile tile;
    const char* key; // settings key and object name suffix
    const char* title; // English source, context idem::console::Tile: tileTitle() translates it
    const char* definition; // the tooltip: what the number counts (tileDefinition())
    TileUnit unit;
    // The figures the number is made of (Rows: their sum; PerClaims: the events; Seconds,
    // Percent, Estimate: the one figure).
    std::vector<idem::Figure> figures;
    // The line under the number, context idem::console::DashboardModel, with its arguments.
    // Unset for an Estimate: it names its source.
    const char* detail;
    std::vector<TileArg> detailArgs;
    // The line when there is no value (no claims, nothing processing, not analysed yet).
    const char* noValue;
    std::vector<TileArg> noValueArgs;
    Threshold defaults;
    const char* metric; // the figure's JSON name for snapshot.json thresholds (idemctl stats --json)
    RedSeries series;
    // The Tasks page: what a click selects (nullptr: the tile opens nothing), in words
    // (context idem::console::DashboardModel, with its arguments), the order the rows open in
    // (unset: the page's own), and why it opens nothing when select is unset.
    void (*select)(idem::TaskFilter& filter, const TileWindow& window);
    const char* opens;
    std::vector<TileArg> opensArgs;
    std::optional<idem::TaskSort> sort;
    const char* opensNothing;
    // The row set an incident snapshot keeps for it (the snapshot viewer's Tasks page); none when unset.
    const char* snapshotRowSet;

    bool perClaims() const { return unit == TileUnit::PerClaims; }
    bool opensRows() const { return select != nullptr; }
};

// Every tile, in display order (the index is the Tile).
const std::vector<TileSpec>& tileCatalogue();
const TileSpec& tileSpec(Tile tile);
// The tile's caption and tooltip in the current UI language.
QString tileTitle(Tile tile);
QString tileDefinition(Tile tile);
// The thresholds' unit as a suffix: " %", " s", " % of claims" (translated), or none.
QString tileThresholdUnit(Tile tile);
// A tile's threshold unit over the snapshot metric's, for thresholds written to or read from a
// snapshot, whose metrics are fractions where the tile says percent: 100 for the duplicate ratio
// and the per-claim tiles (their metric is <figure>_per_claim, a fraction of the claims), 1 for
// every other tile.
double tileUnitsPerFigureUnit(Tile tile);
// The value a per-claim tile's threshold is held against: n events over the window's claims, in
// percent (any event without a claim is 100 %).
double perClaimsPercent(std::int64_t n, std::int64_t claims);
// Where a tile's thresholds are kept in the settings file (group "dashboard").
QString thresholdSettingsKey(Tile tile);

} // namespace idem::console
