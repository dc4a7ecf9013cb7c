#pragma once

#include <QString>

#include "operations/duration.h"

namespace idem::console {

// idem::splitDuration in the console's language: every length of time the console shows ("3 min
// 12 s", "2 h", "850 ms"), the unit words translated in idem::wordingContext, the numbers in the
// locale's digits.
QString durationText(double ms, idem::DurationForm form = idem::DurationForm::Whole);

} // namespace idem::console
