#pragma once

#include <QString>

#include <array>

#include "models/tilecatalogue.h"

class QSettings;

namespace idem::console {

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
