#include "models/visibletext.h"

#include <QList>

#include "core/utf8.h"

namespace idem::console {

namespace {
    // The console shows a key as it is: a backslash in it is a backslash (what Copy key copies);
    // only what would hide or rearrange text is escaped, spelled as idemctl spells it.
    constexpr idem::DisplayOptions consoleDisplay { std::string_view::npos, false, false };
    constexpr idem::DisplayOptions consoleLines { std::string_view::npos, false, true };

    QString shown(const std::string& utf8, const idem::DisplayOptions& o)
    {
        return QString::fromStdString(idem::displaySafe(utf8, o));
    }
} // namespace

bool hasInvisible(const QString& text)
{
    for (const char32_t c : text.toUcs4())
        if (idem::isDisplayControl(c))
            return true;
    return false;
}

QString visibleText(const QString& text)
{
    return hasInvisible(text) ? shown(text.toStdString(), consoleDisplay) : text;
}

QString visibleLines(const QString& text)
{
    return hasInvisible(text) ? shown(text.toStdString(), consoleLines) : text;
}

QString visibleText(const std::string& utf8) { return shown(utf8, consoleDisplay); }

QString oneLine(const QString& text)
{
    QString out;
    for (const auto& raw : text.split(QLatin1Char('\n'))) {
        const QString line = raw.simplified();
        if (line.isEmpty())
            continue;
        if (!out.isEmpty()) {
            const QChar last = out.back();
            const bool stopped = QStringLiteral(".:;!?,。：；！？，").contains(last);
            out += stopped ? QStringLiteral(" ") : QStringLiteral(". ");
        }
        out += line;
    }
    return out;
}

QString visibleHtml(const std::string& utf8) { return visibleText(utf8).toHtmlEscaped(); }

} // namespace idem::console
