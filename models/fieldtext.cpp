#include "models/fieldtext.h"

#include <QCoreApplication>
#include <QStringList>

#include "models/visibletext.h"

namespace idem::console {

namespace {
    QString tr(const char* text, int n = -1)
    {
        return QCoreApplication::translate("idem::console::FieldComparison", text, nullptr, n);
    }

    QString names(const std::vector<std::string>& list)
    {
        constexpr std::size_t maxNames = 16;
        constexpr int maxChars = 80;
        QStringList out;
        for (std::size_t i = 0; i < list.size() && i < maxNames; ++i) {
            QString name = visibleText(list[i]);
            if (name.size() > maxChars)
                name = name.left(maxChars - 1) + QChar(0x2026);
            out << name.toHtmlEscaped();
        }
        QString joined = out.join(QStringLiteral(", "));
        if (list.size() > maxNames)
            joined = tr("%1 and %n more", static_cast<int>(list.size() - maxNames)).arg(joined);
        return QStringLiteral("<b>%1</b>").arg(joined);
    }
} // namespace

QString fieldComparisonHtml(const idem::FieldComparison& c)
{
    if (!c.conflictKept)
        return c.storedKept
            ? tr("Fields: %n fingerprinted; no conflicting request's fingerprints to compare with.", c.storedFields)
            : QString();
    if (!c.storedKept)
        return tr("Fields: the conflicting request's fields are fingerprinted, the key's request was not: nothing "
                  "to compare.");
    QStringList parts;
    if (!c.differ.empty())
        parts << tr("%1 differs", static_cast<int>(c.differ.size())).arg(names(c.differ));
    if (!c.onlyStored.empty())
        parts << tr("%1 only in the stored request").arg(names(c.onlyStored));
    if (!c.onlyConflicting.empty())
        parts << tr("%1 only in the conflicting request").arg(names(c.onlyConflicting));
    if (!c.same.empty())
        parts << tr("%1 same").arg(names(c.same));
    if (c.notCompared > 0)
        parts << tr("%n field(s) not compared (past 64 fields or a name over 256 bytes)", c.notCompared);
    if (c.differ.empty() && c.onlyStored.empty() && c.onlyConflicting.empty() && c.notCompared == 0)
        parts.prepend(tr("no field differs by its fingerprint (the field keys differ, or a field was ignored for "
                         "the digest)"));
    return tr("Fields: %1").arg(parts.join(QStringLiteral("; ")));
}

} // namespace idem::console
