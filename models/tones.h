#pragma once

#include <QColor>
#include <QString>

class QPalette;

namespace idem::console {

// The console's few meaningful colours, in one place, for the light and the dark palette: text
// tones readable (WCAG AA, 4.5:1) on the palette's window and base colours, and chart series
// colours that mean the same in both themes. Qt Gui only, so item models use them too.
enum class Tone { Good, Caution, Bad, Muted };

namespace tones {
    // Whether `palette` draws light text on dark windows.
    bool isDark(const QPalette& palette);
    // Whether the application palette is dark now (QGuiApplication::palette()).
    bool isDark();
    QColor color(Tone tone, bool dark);
    QColor color(Tone tone); // for the application palette now
    // "color:#rrggbb" for a style sheet or a <span style='…'>.
    QString css(Tone tone);
    // A chart series' colour by its object name ("processing", "new", "tickms", …): one colour per
    // meaning, the same under light and dark (the chart theme would otherwise recolour them).
    QColor series(const QString& objectName);
    // Every series object name series() knows.
    QStringList seriesNames();

    // WCAG 2.x relative luminance and contrast ratio (1..21).
    double luminance(const QColor& c);
    double contrast(const QColor& a, const QColor& b);
} // namespace tones

} // namespace idem::console
