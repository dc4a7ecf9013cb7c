#include "cli/args.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace idem::cli {

Args::Args(std::vector<std::string> argv, std::set<std::string> valueOptions, std::set<std::string> flags,
    std::set<std::string> repeatable)
    : m_repeatable(std::move(repeatable))
{
    valueOptions.insert(m_repeatable.begin(), m_repeatable.end());
    bool onlyPositional = false;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (onlyPositional || a.size() < 2 || a.rfind("--", 0) != 0) {
            if (!onlyPositional && a.size() > 1 && a[0] == '-')
                throw UsageError("unknown option " + a);
            m_positional.push_back(a);
            continue;
        }
        if (a == "--") {
            onlyPositional = true;
            continue;
        }
        std::string name = a.substr(2);
        std::optional<std::string> inlineValue;
        if (auto eq = name.find('='); eq != std::string::npos) {
            inlineValue = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (valueOptions.count(name)) {
            if (m_values.count(name) && !m_repeatable.count(name))
                throw UsageError("option --" + name + " is given twice: it takes one value (the command would "
                                 "otherwise keep only the last)");
            if (inlineValue) {
                m_values.emplace(name, *inlineValue);
            } else {
                if (i + 1 >= argv.size())
                    throw UsageError("option --" + name + " needs a value");
                m_values.emplace(name, argv[++i]);
            }
        } else if (flags.count(name)) {
            if (inlineValue)
                throw UsageError("option --" + name + " takes no value");
            m_flags.insert(name);
        } else {
            throw UsageError("unknown option --" + name);
        }
    }
}

std::optional<std::string> Args::value(const std::string& name) const
{
    auto range = m_values.equal_range(name);
    if (range.first == range.second)
        return std::nullopt;
    return std::prev(range.second)->second; // a repeatable option read as one: its last
}

std::vector<std::string> Args::values(const std::string& name) const
{
    if (!m_repeatable.count(name))
        throw std::logic_error("option --" + name + " is not declared repeatable");
    std::vector<std::string> out;
    auto range = m_values.equal_range(name);
    for (auto it = range.first; it != range.second; ++it)
        out.push_back(it->second);
    return out;
}

std::string Args::valueOr(const std::string& name, const std::string& fallback) const
{
    return value(name).value_or(fallback);
}

long long Args::intValue(const std::string& name, long long fallback, long long min, long long max) const
{
    auto v = value(name);
    if (!v)
        return fallback;
    std::size_t used = 0;
    long long n = 0;
    try {
        n = std::stoll(*v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != v->size())
        throw UsageError("--" + name + " takes a whole number, not '" + *v + "'");
    if (n < min || n > max)
        throw UsageError("--" + name + " must be between " + std::to_string(min) + " and " + std::to_string(max));
    return n;
}

std::string dsnFrom(const Args& args)
{
    if (auto v = args.value("dsn"))
        return *v;
    if (const char* env = std::getenv("IDEM_DSN"))
        return env;
    return {};
}

std::chrono::milliseconds parseInterval(const std::string& text, const std::string& option)
{
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    const std::string unit = used ? text.substr(used) : std::string();
    double factor = 0;
    if (unit.empty() || unit == "s")
        factor = 1000;
    else if (unit == "ms")
        factor = 1;
    else if (unit == "m")
        factor = 60'000;
    if (used == 0 || factor == 0 || !std::isfinite(v))
        throw UsageError("--" + option + " takes a duration such as 5s, 500ms or 1m, not '" + text + "'");
    const double ms = v * factor;
    if (ms < 100 || ms > 3'600'000)
        throw UsageError("--" + option + " must be between 100ms and 60m");
    return std::chrono::milliseconds(static_cast<long long>(ms));
}

} // namespace idem::cli
