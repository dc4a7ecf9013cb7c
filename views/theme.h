#pragma once

#include <QColor>
#include <QObject>

#include "models/tones.h"

#include <functional>

class QPalette;
class QWidget;
class QSettings;

namespace idem::console {

// Light and dark: "System" keeps the platform's style and palette (a dark GTK or KDE palette
// when the platform theme gives one; Qt 6.4 has no colour-scheme hint), Light and Dark use the
// Fusion style with explicit palettes. Kept in the console's settings file as ui/theme.
enum class Theme { System, Light, Dark };

// Says when theme::apply() has finished: style and palette both switched. Whatever colours
// text itself (a style sheet, a <span style='color:…'> in rich text) re-renders on changed():
// Qt's own palette events arrive half-way (a StyleChange while the old palette is still in
// force) or not at all (a hidden widget with a style sheet), which left light-theme colours on
// a dark window after a live switch.
class ThemeNotifier : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
Q_SIGNALS:
    void changed();
};

namespace theme {
    ThemeNotifier* notifier();
    // Calls `render` now and after every theme switch, while `owner` lives.
    void onChange(QObject* owner, const std::function<void()>& render);

    // Switches the application's style and palette; the first call remembers the platform's
    // so System can restore them. Widgets get QEvent::ApplicationPaletteChange.
    void apply(Theme theme);
    Theme current();
    QPalette lightPalette();
    QPalette darkPalette();
    // The platform's palette as it was before any apply().
    QPalette platformPalette();
    // The frame the Light and Dark themes draw around a check box's indicator.
    QColor indicatorFrame(const QPalette& palette);
    // Whether `palette` draws light text on dark windows (what coloured widgets must adapt to).
    bool isDark(const QPalette& palette);
    // Whether the application palette is dark now.
    bool isDark();
    // A status colour (green for live, amber for stale, red for alerts, grey for what is not
    // current) that stays readable on the application's window and base colours (models/tones).
    using Tone = idem::console::Tone;
    QColor toneColor(Tone tone);
    // "color:#rrggbb" of toneColor(), for style sheets and rich text.
    QString toneCss(Tone tone);

    // Colours `label`'s text with `tone` now and again whenever the application palette changes
    // (a style sheet set once would keep the light theme's dark red on a dark window).
    void followTone(QWidget* label, Tone tone, bool bold = false);
    // Back to the palette's own text colour: the follower goes first (clearing the style sheet
    // sends it a StyleChange, and it would put its tone back).
    void clearTone(QWidget* label);

    Theme load(QSettings& settings);
    void save(QSettings& settings, Theme theme);
} // namespace theme

} // namespace idem::console
