#include "operations/duration.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "operations/wording.h"

// lupdate reads this file for the console's translations (scripts/update-translations.sh).
#define QT_TRANSLATE_NOOP(context, text) text

namespace idem {

namespace {
    // v > 0 to three significant figures.
    double significant3(double v)
    {
        const double scale = std::pow(10.0, 2 - static_cast<int>(std::floor(std::log10(v))));
        return std::round(v * scale) / scale;
    }

    void whole(std::int64_t s, DurationForm form, std::vector<DurationTerm>& out)
    {
        using U = DurationUnit;
        struct Step {
            std::int64_t seconds;
            U unit;
        };
        static constexpr Step steps[] = { { 86400, U::Day }, { 3600, U::Hour }, { 60, U::Minute }, { 1, U::Second } };
        for (std::size_t i = 0; i < std::size(steps); ++i) {
            if (s < steps[i].seconds && steps[i].unit != U::Second)
                continue;
            out.push_back({ static_cast<double>(s / steps[i].seconds), steps[i].unit });
            const std::int64_t rest = (s % steps[i].seconds) / (i + 1 < std::size(steps) ? steps[i + 1].seconds : 1);
            if (form == DurationForm::Whole && i + 1 < std::size(steps) && rest > 0)
                out.push_back({ static_cast<double>(rest), steps[i + 1].unit });
            return;
        }
    }
} // namespace

DurationParts splitDuration(double ms, DurationForm form)
{
    DurationParts p;
    if (!std::isfinite(ms))
        ms = 0;
    p.negative = ms < 0;
    ms = std::abs(ms);
    if (form == DurationForm::Precise && ms < 60000) {
        if (ms <= 0) {
            p.terms.push_back({ 0, DurationUnit::Millisecond });
            p.negative = false;
            return p;
        }
        if (ms < 1000 && significant3(ms) < 1000) {
            p.terms.push_back({ significant3(ms), DurationUnit::Millisecond });
            return p;
        }
        if (significant3(ms / 1000.0) < 60) {
            p.terms.push_back({ significant3(ms / 1000.0), DurationUnit::Second });
            return p;
        }
    }
    const auto s = static_cast<std::int64_t>(std::floor(ms / 1000.0));
    whole(s, form == DurationForm::Largest ? form : DurationForm::Whole, p.terms);
    if (s == 0)
        p.negative = false; // "-0 s" says nothing "0 s" does not
    return p;
}

const char* durationUnitWords(DurationUnit unit)
{
    switch (unit) {
    case DurationUnit::Millisecond:
        return QT_TRANSLATE_NOOP("idem::Wording", "%1 ms");
    case DurationUnit::Second:
        return QT_TRANSLATE_NOOP("idem::Wording", "%1 s");
    case DurationUnit::Minute:
        return QT_TRANSLATE_NOOP("idem::Wording", "%1 min");
    case DurationUnit::Hour:
        return QT_TRANSLATE_NOOP("idem::Wording", "%1 h");
    case DurationUnit::Day:
        return QT_TRANSLATE_NOOP("idem::Wording", "%1 d");
    }
    return "%1";
}

std::string durationNumber(double value)
{
    char b[32];
    if (value == std::floor(value) && std::abs(value) < 1e15)
        std::snprintf(b, sizeof b, "%lld", static_cast<long long>(value));
    else
        std::snprintf(b, sizeof b, "%.3g", value);
    return b;
}

std::string formatDuration(double ms, DurationForm form)
{
    const auto p = splitDuration(ms, form);
    std::string out = p.negative ? "-" : "";
    for (std::size_t i = 0; i < p.terms.size(); ++i)
        out += (i ? " " : "") + fillWords(durationUnitWords(p.terms[i].unit), { durationNumber(p.terms[i].value) });
    return out;
}

} // namespace idem
