#pragma once

#include <QColor>

class QPalette;
class QSettings;

namespace idem::console {

// Light and dark: "System" keeps the platform's style and palette (a dark GTK or KDE palette
// when the platform theme gives one; Qt 6.4 has no colour-scheme hint), Light and Dark use the
// Fusion style with explicit palettes. Kept in the console's settings file as ui/theme.
enum class Theme { System, Light, Dark };

namespace theme {
    // Switches the application's style and palette; the first call remembers the platform's
    // so System can restore them. Widgets get QEvent::ApplicationPaletteChange.
    void apply(Theme theme);
    Theme current();
    QPalette lightPalette();
    QPalette darkPalette();
    // The platform's palette as it was before any apply().
    QPalette platformPalette();
    // Whether `palette` draws light text on dark windows (what coloured widgets must adapt to).
    bool isDark(const QPalette& palette);
    // Whether the application palette is dark now.
    bool isDark();
    // A status colour (green for live, amber for stale, red for alerts) that stays readable on
    // the application's window colour.
    enum class Tone { Good, Caution, Bad };
    QColor toneColor(Tone tone);

    Theme load(QSettings& settings);
    void save(QSettings& settings, Theme theme);
} // namespace theme

} // namespace idem::console
