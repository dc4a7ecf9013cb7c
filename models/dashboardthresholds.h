#pragma once

#include <QString>

#include <array>
#include <cstdint>
#include <optional>

class QSettings;

namespace idem::console {

// The dashboard's tiles, in display order: the rows of now first, then the window's events.
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
    COUNT
};
constexpr int tileCount = static_cast<int>(Tile::COUNT);

enum class Level { NoData, Normal, Warning, Critical };

// Tile colours: at or above `warning` is amber, at or above `critical` red; unset is off. The
// value is in the tile's unit: rows, percent for the ratio, seconds for the age, and for the
// tiles that count events in the window (retries, failed retries, digest conflicts, stale
// tokens) percent of the window's claims, so that one setting fits a quiet and a busy system.
struct Threshold {
    std::optional<double> warning;
    std::optional<double> critical;
    bool operator==(const Threshold&) const = default;
};

struct TileSpec {
    Tile tile;
    const char* key; // settings key and object name suffix
    const char* title; // English source: tileTitle() translates it
    const char* definition; // the tooltip: what the number counts (tileDefinition())
    Threshold defaults;
    const char* metric; // the figure's JSON name for snapshot.json thresholds (idemctl stats --json)
    bool perClaims = false; // thresholds in percent of the window's claims
};

const TileSpec& tileSpec(Tile tile);
// The tile's caption and tooltip in the current UI language.
QString tileTitle(Tile tile);
QString tileDefinition(Tile tile);
Level levelOf(std::optional<double> value, const Threshold& threshold);
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

// What an operator sets once and expects back next time (QSettings group "dashboard"); never a
// connection string or a password.
struct DashboardSettings {
    static constexpr int minIntervalMs = 1000;
    static constexpr int maxIntervalMs = 60000;

    int intervalMs = 2000;
    bool paused = false;
    int windowMinutes = 15; // 15, 60, 360, 1440
    int longUnfinishedMinutes = 60;
    QString tenant; // empty: all
    QString operation; // empty: all
    std::array<Threshold, tileCount> thresholds;

    DashboardSettings();
    static DashboardSettings load(QSettings& settings);
    void save(QSettings& settings) const;
    bool operator==(const DashboardSettings&) const = default;
};

} // namespace idem::console
