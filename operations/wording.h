#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "operations/taskfilter.h"

namespace idem {

// Words the console and idemctl both say, kept in one place without Qt: English text with %1,
// %2, … where values go. idemctl fills them in as they are (fillWords); the console translates
// the same text first (QCoreApplication::translate with wordingContext) and fills in the same
// values, so the two never drift apart. scripts/update-translations.sh reads this file.
inline constexpr const char* wordingContext = "idem::Wording";

// Puts `values` where %1, %2, … stand (one pass: a value holding "%2" stays as it is).
std::string fillWords(std::string_view words, const std::vector<std::string>& values);

// A recovery job's (or the Tasks page's) filter, one term per condition, in the order the
// filter lists them: "tenant %1", "retries exhausted", … A term's values joined by orWords
// (the statuses) stand for %1. No term: everyTaskWords.
struct FilterTerm {
    const char* words;
    std::vector<std::string> values;
};
std::vector<FilterTerm> filterTerms(const TaskFilter& filter);
extern const char* const everyTaskWords; // "every task"
extern const char* const orWords; // " or "
extern const char* const termSeparatorWords; // ", "

// Why a role may not use a right it lacks (schema v21): %1 the role, %2 the right, %3 the role
// that grants it; before v21 (one operator role): rightMissingOperatorWords, %1 the role.
extern const char* const rightMissingWords;
extern const char* const rightMissingOperatorWords;
std::string rightMissing(const std::string& role, const std::string& right);

// The right a refusal by the database is about, from its text ("permission denied for function
// idem_job_approve" -> approve); empty when the text names nothing this knows.
std::string rightOfRefusal(std::string_view serverMessage);

} // namespace idem
