#pragma once

#include <string>

namespace idem {

// The schema that holds the Idem tables. Its name is validated once, here, and then only
// ever used double-quoted: identifiers cannot be bound parameters, values always are.
class SchemaName {
public:
    static constexpr const char* defaultName = "idem";

    // Throws std::invalid_argument with a readable reason for anything but a plain lowercase
    // identifier of at most 63 bytes.
    explicit SchemaName(std::string name);
    SchemaName()
        : SchemaName(defaultName)
    {
    }

    const std::string& name() const { return m_name; }
    // "name", ready to splice in front of a table or function: "idem".task_idempotency
    std::string quoted() const { return '"' + m_name + '"'; }
    std::string qualify(const std::string& object) const { return quoted() + '.' + object; }

private:
    std::string m_name;
};

} // namespace idem
