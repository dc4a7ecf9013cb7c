#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace idem::cli {

enum ExitCode : int {
    ExitOk = 0,
    ExitFailure = 1,
    ExitUsage = 2,
    ExitRefused = 3, // the database (or its schema state) refused what was asked; nothing changed
};

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A small GNU-style parser: --name value, --name=value, boolean flags, repeatable options and
// positional arguments. Unknown options are usage errors, never ignored; so is a value option
// given twice unless it is declared repeatable (values() reads those): a second --error-class
// silently replacing the first would change what a command does without a word.
class Args {
public:
    Args(std::vector<std::string> argv, std::set<std::string> valueOptions, std::set<std::string> flags,
        std::set<std::string> repeatable = {});

    bool flag(const std::string& name) const { return m_flags.count(name) > 0; }
    std::optional<std::string> value(const std::string& name) const;
    // Every value of a repeatable option, in the order given (std::logic_error for one not declared so).
    std::vector<std::string> values(const std::string& name) const;
    std::string valueOr(const std::string& name, const std::string& fallback) const;
    long long intValue(const std::string& name, long long fallback, long long min, long long max) const;
    const std::vector<std::string>& positional() const { return m_positional; }

private:
    std::multimap<std::string, std::string> m_values;
    std::set<std::string> m_flags;
    std::set<std::string> m_repeatable;
    std::vector<std::string> m_positional;
};

// "5s", "500ms", "2m" or a bare number of seconds, 100 ms to 60 min; throws UsageError.
std::chrono::milliseconds parseInterval(const std::string& text, const std::string& option);

// The DSN from --dsn, else IDEM_DSN, else empty (libpq then uses PG* variables as psql does).
std::string dsnFrom(const Args& args);

} // namespace idem::cli
