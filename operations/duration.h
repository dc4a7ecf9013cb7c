#pragma once

#include <string>
#include <vector>

namespace idem {

// How a length of time is written everywhere (the console and the command line): one formatter, one set
// of unit words, whole units rounded down (a duration is never said to be longer than it was;
// only a latency's three significant figures round to the nearest).
enum class DurationForm {
    // The two largest units, in whole seconds, the second left out when it is zero: "45 s",
    // "3 min 12 s", "5 min", "2 h 5 min", "3 d 4 h".
    Whole,
    // The largest unit alone: "45 s", "3 min", "2 h", "3 d" (an age in a line of text).
    Largest,
    // A measured latency: below a minute three significant figures ("0.42 ms", "12.3 ms",
    // "850 ms", "1.24 s", "12.4 s"), from a minute on as Whole.
    Precise,
};

enum class DurationUnit { Millisecond, Second, Minute, Hour, Day };

// One number and its unit: "12", Minute. Whole units hold whole numbers; a Precise one below a
// minute holds a number already rounded to three significant figures.
struct DurationTerm {
    double value = 0;
    DurationUnit unit = DurationUnit::Second;
    bool operator==(const DurationTerm&) const = default;
};

// A duration split into what is written: a sign and one or two terms, largest first.
struct DurationParts {
    bool negative = false;
    std::vector<DurationTerm> terms;
    bool operator==(const DurationParts&) const = default;
};

DurationParts splitDuration(double ms, DurationForm form = DurationForm::Whole);

// The unit's words, English, %1 where the number goes ("%1 min"); the console translates them in
// wordingContext (operations/wording.h).
const char* durationUnitWords(DurationUnit unit);

// A term's number as idemctl writes it: a whole number in full, else three significant figures.
std::string durationNumber(double value);

// The duration in English: the terms' words joined by a space, "-" before a negative one.
std::string formatDuration(double ms, DurationForm form = DurationForm::Whole);

} // namespace idem
