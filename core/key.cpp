#include "core/key.h"

#include <algorithm>

#include <stdexcept>

#include "core/utf8.h"

namespace idem {

namespace {
    // Tenant and operation are restricted to visible ASCII: Unicode brings invisible and
    // look-alike characters (no-break space, zero-width joiners, bidi controls) that would let
    // two keys look identical on an operator's screen while naming different intents.
    void checkName(const char* what, const std::string& value)
    {
        if (value.empty())
            throw std::invalid_argument(std::string("task key ") + what + " is empty");
        if (value.size() > TaskKey::maxNameBytes)
            throw std::invalid_argument(std::string("task key ") + what + " is " + std::to_string(value.size())
                + " bytes, longer than the limit of " + std::to_string(TaskKey::maxNameBytes) + ": '"
                + quoteForMessage(value) + "'");
        for (std::size_t i = 0; i < value.size(); ++i) {
            const auto c = static_cast<unsigned char>(value[i]);
            if (c == ':')
                throw std::invalid_argument(std::string("task key ") + what
                    + " must not contain ':' (it separates the key's parts): '" + quoteForMessage(value) + "'");
            if (c <= 0x20 || c >= 0x7F)
                throw std::invalid_argument(std::string("task key ") + what
                    + " may hold only visible ASCII characters (no spaces, control or "
                      "non-ASCII bytes); byte "
                    + std::to_string(i) + " is not: '" + quoteForMessage(value) + "'");
        }
    }

    void checkBusinessId(const std::string& value)
    {
        if (value.empty())
            throw std::invalid_argument("task key business id is empty");
        if (value.size() > TaskKey::maxBusinessIdBytes)
            throw std::invalid_argument("task key business id is " + std::to_string(value.size())
                + " bytes, longer than the limit of " + std::to_string(TaskKey::maxBusinessIdBytes));
        // PostgreSQL TEXT can hold neither NUL nor ill-formed UTF-8; refusing them here keeps
        // the failure before any I/O instead of deep inside a claim.
        if (const auto nul = value.find('\0'); nul != std::string::npos)
            throw std::invalid_argument("task key business id contains a NUL byte at offset " + std::to_string(nul));
        if (const auto problem = utf8Problem(value))
            throw std::invalid_argument("task key business id is not valid UTF-8: " + *problem);
    }
} // namespace

bool isKeyName(const std::string& name)
{
    if (name.empty() || name.size() > TaskKey::maxNameBytes)
        return false;
    return std::all_of(name.begin(), name.end(), [](char ch) {
        const auto c = static_cast<unsigned char>(ch);
        return c > 0x20 && c < 0x7F && c != ':';
    });
}

TaskKey::TaskKey(std::string tenant, std::string operation, std::string businessId)
    : m_tenant(std::move(tenant))
    , m_operation(std::move(operation))
    , m_businessId(std::move(businessId))
{
    checkName("tenant", m_tenant);
    checkName("operation", m_operation);
    checkBusinessId(m_businessId);
}

TaskKey TaskKey::parse(const std::string& key)
{
    const auto first = key.find(':');
    const auto second = first == std::string::npos ? std::string::npos : key.find(':', first + 1);
    if (second == std::string::npos)
        throw std::invalid_argument(
            "task key must have the form tenant:operation:business_id, got '" + quoteForMessage(key) + "'");
    return TaskKey(key.substr(0, first), key.substr(first + 1, second - first - 1), key.substr(second + 1));
}

std::string TaskKey::str() const
{
    std::string out;
    out.reserve(m_tenant.size() + m_operation.size() + m_businessId.size() + 2);
    out.append(m_tenant).append(1, ':').append(m_operation).append(1, ':').append(m_businessId);
    return out;
}

} // namespace idem
