#include "core/identifier.h"

#include <stdexcept>

namespace idem {

SchemaName::SchemaName(std::string name)
    : m_name(std::move(name))
{
    if (m_name.empty())
        throw std::invalid_argument("schema name is empty");
    if (m_name.size() > 63)
        throw std::invalid_argument("schema name is longer than 63 bytes");
    const auto isLower = [](char c) { return c >= 'a' && c <= 'z'; };
    const auto isDigit = [](char c) { return c >= '0' && c <= '9'; };
    if (!isLower(m_name.front()) && m_name.front() != '_')
        throw std::invalid_argument("schema name must start with a lowercase letter or '_': " + m_name);
    for (char c : m_name) {
        if (!isLower(c) && !isDigit(c) && c != '_')
            throw std::invalid_argument("schema name may hold only a-z, 0-9 and '_': " + m_name);
    }
    if (m_name.rfind("pg_", 0) == 0)
        throw std::invalid_argument("schema names starting with pg_ are reserved by PostgreSQL: " + m_name);
}

} // namespace idem
