#include "operations/wording.h"

#include <utility>

#include "operations/rights.h"

// lupdate reads the marks below (scripts/update-translations.sh); here, without Qt, they are the
// English text itself.
#define QT_TRANSLATE_NOOP(context, text) text

namespace idem {

const char* const everyTaskWords = QT_TRANSLATE_NOOP("idem::Wording", "every task");
const char* const orWords = QT_TRANSLATE_NOOP("idem::Wording", " or ");
const char* const termSeparatorWords = QT_TRANSLATE_NOOP("idem::Wording", ", ");
const char* const rightMissingWords = QT_TRANSLATE_NOOP("idem::Wording",
    "Role %1 does not hold the %2 right (role %3): the database refuses this to it. An administrator grants it "
    "with GRANT %3 TO %1.");
const char* const rightMissingOperatorWords
    = QT_TRANSLATE_NOOP("idem::Wording", "Role %1 is not idem_operator: the database refuses this to it.");

std::string fillWords(std::string_view words, const std::vector<std::string>& values)
{
    std::string out;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (words[i] == '%' && i + 1 < words.size() && words[i + 1] >= '1' && words[i + 1] <= '9') {
            const auto n = static_cast<std::size_t>(words[i + 1] - '1');
            if (n < values.size()) {
                out += values[n];
                ++i;
                continue;
            }
        }
        out += words[i];
    }
    return out;
}

std::vector<FilterTerm> filterTerms(const TaskFilter& f)
{
    std::vector<FilterTerm> t;
    const auto add = [&](const char* words, std::vector<std::string> values = {}) {
        t.push_back({ words, std::move(values) });
    };
    if (!f.statuses.empty())
        add(QT_TRANSLATE_NOOP("idem::Wording", "status %1"), f.statuses);
    if (f.tenant)
        add(QT_TRANSLATE_NOOP("idem::Wording", "tenant %1"), { *f.tenant });
    if (f.operation)
        add(QT_TRANSLATE_NOOP("idem::Wording", "operation %1"), { *f.operation });
    if (f.keyPrefix)
        add(QT_TRANSLATE_NOOP("idem::Wording", "key starting with %1"), { *f.keyPrefix });
    if (f.minAttempts)
        add(QT_TRANSLATE_NOOP("idem::Wording", "attempts >= %1"), { std::to_string(*f.minAttempts) });
    if (f.expiredLease)
        add(QT_TRANSLATE_NOOP("idem::Wording", "lease expired"));
    if (f.liveLease)
        add(QT_TRANSLATE_NOOP("idem::Wording", "lease running"));
    if (f.uncertain)
        add(QT_TRANSLATE_NOOP("idem::Wording", "outcome unknown"));
    if (f.errorClass)
        add(QT_TRANSLATE_NOOP("idem::Wording", "error class %1"), { *f.errorClass });
    if (f.exhausted)
        add(QT_TRANSLATE_NOOP("idem::Wording", "retries exhausted (not a permanent error)"));
    if (f.failedSince)
        add(QT_TRANSLATE_NOOP("idem::Wording", "failed since %1"), { *f.failedSince });
    if (f.unfinishedForMinutes)
        add(QT_TRANSLATE_NOOP("idem::Wording", "unfinished for %1 min"), { std::to_string(*f.unfinishedForMinutes) });
    if (f.digestConflicts)
        add(QT_TRANSLATE_NOOP("idem::Wording", "with digest conflicts"));
    if (f.updatedWithinMinutes)
        add(QT_TRANSLATE_NOOP("idem::Wording", "updated within %1 min"), { std::to_string(*f.updatedWithinMinutes) });
    if (f.conflictWithinMinutes)
        add(QT_TRANSLATE_NOOP("idem::Wording", "a conflict within %1 min"),
            { std::to_string(*f.conflictWithinMinutes) });
    if (f.failedRetryInWindow)
        add(QT_TRANSLATE_NOOP("idem::Wording", "a retry failed in the window"));
    if (f.errorContains)
        add(QT_TRANSLATE_NOOP("idem::Wording", "error message containing \"%1\" (any case)"), { *f.errorContains });
    return t;
}

std::string rightMissing(const std::string& role, const std::string& right)
{
    return fillWords(rightMissingWords, { role, right, rightRole(right) });
}

std::string rightOfRefusal(std::string_view message)
{
    // Each right's functions (resources/sql/roles.sql); the jobs' own functions serve three
    // rights and name none.
    static const std::pair<const char*, const char*> functions[] = {
        { "idem_requeue_reexecute", "requeue" },
        { "idem_requeue", "requeue" },
        { "idem_release", "release" },
        { "idem_fail", "fail" },
        { "idem_pause", "pause" },
        { "idem_resume", "pause" },
        { "idem_set_retention", "purge" },
        { "idem_clear_retention", "purge" },
        { "idem_request_retention", "purge" },
        { "idem_request_purge", "purge" },
        { "idem_change_use", "purge" },
        { "idem_purge", "purge" },
        { "idem_job_approve", "approve" },
        { "idem_change_approve", "approve" },
        { "idem_approval_approve", "approve" },
        { "idem_approval_decline", "approve" },
    };
    for (const char* kind : { "permission denied for function ", "permission denied for procedure " }) {
        const auto at = message.find(kind);
        if (at == std::string_view::npos)
            continue;
        auto name = message.substr(at + std::string_view(kind).size());
        name = name.substr(0, name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789"));
        for (const auto& [function, right] : functions)
            if (name == function || (std::string_view(function) == "idem_purge" && name.rfind("idem_purge", 0) == 0))
                return right;
    }
    return {};
}

} // namespace idem
