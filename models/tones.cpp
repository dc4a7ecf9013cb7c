#include "models/tones.h"

#include <QGuiApplication>
#include <QPalette>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <utility>

#include "operations/outcomeseries.h"

namespace idem::console::tones {

bool isDark(const QPalette& palette)
{
    return palette.color(QPalette::Window).lightness() < palette.color(QPalette::WindowText).lightness();
}

bool isDark() { return isDark(QGuiApplication::palette()); }

QColor color(Tone tone, bool dark)
{
    // Light: dark shades on #eff0f1 / white; dark: light shades on #2b2d31 / #1e1f22. Each pair is
    // checked against both backgrounds of its theme by tst_contrast.
    switch (tone) {
    case Tone::Good:
        return dark ? QColor(0x81, 0xc7, 0x84) : QColor(0x1b, 0x6e, 0x2a);
    case Tone::Caution:
        return dark ? QColor(0xff, 0xd5, 0x4f) : QColor(0x6d, 0x4c, 0x00);
    case Tone::Bad:
        return dark ? QColor(0xff, 0x9e, 0x96) : QColor(0xa8, 0x1a, 0x1a);
    case Tone::Muted:
        return dark ? QColor(0xa8, 0xac, 0xb2) : QColor(0x5f, 0x64, 0x6a);
    }
    return {};
}

QColor color(Tone tone) { return color(tone, isDark()); }

QString css(Tone tone) { return QStringLiteral("color:%1").arg(color(tone).name()); }

namespace {
    // Mid-tone colours, readable as lines on white and on the dark base alike. The outcome series'
    // colours are in their table (operations/outcomeseries.cpp), shared with the snapshot report.
    const std::pair<const char*, QRgb> seriesTable[] = {
        { "processing", 0x3b7dd8 },
        { "expired", 0xe0742b },
        { "duplicateratio", 0x8e6bd6 },
        { "tickms", 0x7f8c99 },
        { "attempts", 0x3b7dd8 },
        { "tablebytes", 0x3b7dd8 },
        { "indexbytes", 0x8e6bd6 },
        { "rowsestimate", 0x2e9e4f },
        { "deadrows", 0xd0453a }, // dead rows (issue 46): a warm red beside the rows green
        // Latency (issue #27): run time in blues, time to success in oranges, p50 to p99 darker
        // and, on the chart, solid to dotted.
        { "runp50", 0x6aa3ea },
        { "runp95", 0x3b7dd8 },
        { "runp99", 0x5a6ee8 }, // 3:1 on the dark theme's base too (0x2a62b8 was 2.3:1)
        { "ttsp50", 0xf0a060 },
        { "ttsp95", 0xe0742b },
        { "ttsp99", 0xc0581a },
    };
} // namespace

QColor series(const QString& objectName)
{
    if (const auto* outcome = idem::findOutcomeSeries(objectName.toStdString()))
        return QColor::fromRgb(outcome->rgb);
    for (const auto& [name, rgb] : seriesTable)
        if (objectName == QLatin1String(name))
            return QColor::fromRgb(rgb);
    return QColor(0x7f, 0x8c, 0x99);
}

QStringList seriesNames()
{
    QStringList out;
    for (const auto& outcome : idem::outcomeSeries())
        out << QLatin1String(outcome.id);
    for (const auto& entry : seriesTable)
        out << QLatin1String(entry.first);
    return out;
}

double luminance(const QColor& c)
{
    const auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
}

double contrast(const QColor& a, const QColor& b)
{
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

} // namespace idem::console::tones
