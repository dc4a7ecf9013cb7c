#include "models/fieldtext.h"

#include <QCoreApplication>
#include <QStringList>

#include "models/visibletext.h"

namespace idem::console {

namespace {
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
            joined = QCoreApplication::translate("idem::console::FieldComparison", "%1 and %2 more").arg(joined).arg(list.size() - maxNames);
        return QStringLiteral("<b>%1</b>").arg(joined);
    }
} // namespace

QString fieldComparisonHtml(const idem::FieldComparison& c)
{
    if (!c.conflictKept)
        return c.storedKept
            ? QCoreApplication::translate("idem::console::FieldComparison", "Fields: %1 fingerprinted; no conflicting request's fingerprints to compare with.").arg(c.storedFields)
            : QString();
    if (!c.storedKept)
        return QCoreApplication::translate("idem::console::FieldComparison", "Fields: the conflicting request's fields are fingerprinted, the key's request was not: nothing "
                  "to compare.");
    QStringList parts;
    if (!c.differ.empty())
        parts << (c.differ.size() == 1 ? QCoreApplication::translate("idem::console::FieldComparison", "%1 differs") : QCoreApplication::translate("idem::console::FieldComparison", "%1 differ")).arg(names(c.differ));
    if (!c.onlyStored.empty())
        parts << QCoreApplication::translate("idem::console::FieldComparison", "%1 only in the stored request").arg(names(c.onlyStored));
    if (!c.onlyConflicting.empty())
        parts << QCoreApplication::translate("idem::console::FieldComparison", "%1 only in the conflicting request").arg(names(c.onlyConflicting));
    if (!c.same.empty())
        parts << QCoreApplication::translate("idem::console::FieldComparison", "%1 same").arg(names(c.same));
    if (c.notCompared > 0)
        parts << QCoreApplication::translate("idem::console::FieldComparison", "%1 field(s) not compared (past 64 fields or a name over 256 bytes)").arg(c.notCompared);
    if (c.differ.empty() && c.onlyStored.empty() && c.onlyConflicting.empty() && c.notCompared == 0)
        parts.prepend(QCoreApplication::translate("idem::console::FieldComparison", "no field differs by its fingerprint (the field keys differ, or a field was ignored for "
                         "the digest)"));
    return QCoreApplication::translate("idem::console::FieldComparison", "Fields: %1").arg(parts.join(QStringLiteral("; ")));
}

} // namespace idem::console
