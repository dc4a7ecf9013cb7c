#include "models/visibletext.h"

#include <QStringList>

namespace idem::console {

namespace {
    bool invisible(char32_t c)
    {
        if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
            return true;
        switch (QChar::category(c)) {
        case QChar::Other_Format: // bidi controls, zero-width characters, BOM, soft hyphen
        case QChar::Separator_Line:
        case QChar::Separator_Paragraph:
            return true;
        default:
            return false;
        }
    }

    QString escape(char32_t c)
    {
        switch (c) {
        case '\n':
            return QStringLiteral("\\n");
        case '\r':
            return QStringLiteral("\\r");
        case '\t':
            return QStringLiteral("\\t");
        default:
            break;
        }
        const QString hex = QString::number(uint(c), 16).toUpper();
        return c <= 0xff ? QStringLiteral("\\x") + hex.rightJustified(2, QLatin1Char('0'))
                         : QStringLiteral("\\u") + hex.rightJustified(4, QLatin1Char('0'));
    }
} // namespace

bool hasInvisible(const QString& text)
{
    for (const char32_t c : text.toUcs4())
        if (invisible(c))
            return true;
    return false;
}

QString visibleText(const QString& text)
{
    if (!hasInvisible(text))
        return text;
    QString out;
    out.reserve(text.size() + 16);
    for (const char32_t c : text.toUcs4()) {
        if (invisible(c))
            out += escape(c);
        else
            out += QString::fromUcs4(&c, 1);
    }
    return out;
}

QString visibleLines(const QString& text)
{
    QStringList lines = text.split(QLatin1Char('\n'));
    for (auto& line : lines)
        line = visibleText(line);
    return lines.join(QLatin1Char('\n'));
}

QString visibleText(const std::string& utf8) { return visibleText(QString::fromStdString(utf8)); }

QString visibleHtml(const std::string& utf8) { return visibleText(utf8).toHtmlEscaped(); }

} // namespace idem::console
