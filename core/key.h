#pragma once

#include <cstddef>
#include <string>

namespace idem {

// Whether a tenant or operation name is one a key may carry: 1 to TaskKey::maxNameBytes visible
// ASCII characters without ':' (what TaskKey's constructor checks, as a yes or no).
bool isKeyName(const std::string& name);

// One business intent: tenant:operation:business_id (e.g. tenant-7:charge:order-123). Never a
// retry count, a timestamp or a random part: a retry must produce the same key.
//
// Tenant and operation are short visible ASCII names without ':', so the first two colons of
// a rendered key always delimit them and the business id may hold anything else verbatim,
// colons included. Every rule is checked in the constructor, before any I/O, and a breach
// throws std::invalid_argument saying which part is wrong and why.
class TaskKey {
public:
    static constexpr std::size_t maxNameBytes = 64; // tenant and operation each
    static constexpr std::size_t maxBusinessIdBytes = 512;

    TaskKey(std::string tenant, std::string operation, std::string businessId);

    // Splits at the first two ':' and validates the parts as the constructor does.
    static TaskKey parse(const std::string& key);

    const std::string& tenant() const { return m_tenant; }
    const std::string& operation() const { return m_operation; }
    const std::string& businessId() const { return m_businessId; }

    // The idempotency_key as stored: tenant:operation:business_id.
    std::string str() const;

    friend bool operator==(const TaskKey&, const TaskKey&) = default;

private:
    std::string m_tenant;
    std::string m_operation;
    std::string m_businessId;
};

} // namespace idem
