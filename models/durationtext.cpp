#include "models/durationtext.h"

#include <QCoreApplication>
#include <QLocale>
#include <QStringList>

#include <cmath>

#include "operations/wording.h"

namespace idem::console {

QString durationText(double ms, idem::DurationForm form)
{
    const auto parts = idem::splitDuration(ms, form);
    QStringList terms;
    for (const auto& t : parts.terms) {
        // As idem::durationNumber: a whole number in full, else the three figures it holds.
        const QString number = t.value == std::floor(t.value) ? QString::number(static_cast<qint64>(t.value))
                                                              : QLocale().toString(t.value, 'g', 3);
        terms << QCoreApplication::translate(idem::wordingContext, idem::durationUnitWords(t.unit)).arg(number);
    }
    return (parts.negative ? QStringLiteral("-") : QString()) + terms.join(QLatin1Char(' '));
}

} // namespace idem::console
