#pragma once

#include <string>

#include <pqxx/except>

namespace idem {

// Whether the server went away under the statement (issue 42): SQLSTATE class 08 (connection
// exception) or 57P01..57P03 (an administrator's or a shutdown's termination, a crash, a server not
// accepting connections now). libpq reports such a FATAL as the statement's error when it reads it
// before it sees the socket close, so it can reach libpqxx as an sql_error, not a broken
// connection: a lost server all the same, as the Python and TypeScript clients take it.
inline bool isServerGone(const pqxx::sql_error& e)
{
    const std::string s = e.sqlstate();
    return (s.size() == 5 && s.compare(0, 2, "08") == 0) || s == "57P01" || s == "57P02" || s == "57P03";
}

} // namespace idem
