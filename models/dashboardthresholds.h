#pragma once

#include <QString>

#include <array>
#include <optional>

class QSettings;

namespace idem::console {

// The dashboard's tiles, in display order.
enum class Tile {
    Processing,
    ExpiredLeases,
    DuplicateRatio,
    Retries,
    FailedRetries,
    LongUnfinished,
    Failed,
    DigestConflicts,
    StaleTokens,
    Uncertain,
    OldestProcessing,
    TotalRows,
    COUNT
};
constexpr int tileCount = static_cast<int>(Tile::COUNT);

enum class Level { NoData, Normal, Warning, Critical };

// Tile colours: at or above `warning` is amber, at or above `critical` red; unset is off. The
// value is in the tile's unit (rows, events, percent for the ratio, seconds for the age).
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
};

const TileSpec& tileSpec(Tile tile);
// The tile's caption and tooltip in the current UI language.
QString tileTitle(Tile tile);
QString tileDefinition(Tile tile);
Level levelOf(std::optional<double> value, const Threshold& threshold);
// A tile's unit over the figure's, for thresholds written to or read from a snapshot, whose
// figures are in their own units: 100 for the duplicate ratio (tile in percent, figure a
// fraction), 1 for every other tile.
double tileUnitsPerFigureUnit(Tile tile);

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
