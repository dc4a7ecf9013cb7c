// TaskKey: parsing an idempotency_key and building one from its parts. Properties: never a
// crash or any exception but std::invalid_argument; a key that parses renders back to exactly
// the same bytes; a key built from parts renders to text that parses back to those parts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/key.h"
#include "fuzz/check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const auto key = idem::TaskKey::parse(text);
        FUZZ_CHECK(key.str() == text, "a parsed key does not render back to its text");
        FUZZ_CHECK(idem::TaskKey::parse(key.str()) == key, "a rendered key does not parse back");
    } catch (const std::invalid_argument&) {
    }

    // The same bytes as three parts: the first two bytes give the lengths of tenant and
    // operation, the rest is the business id.
    if (size < 2)
        return 0;
    const std::string rest = text.substr(2);
    const std::size_t tenantLength = std::min<std::size_t>(data[0] % 72, rest.size());
    const std::size_t operationLength = std::min<std::size_t>(data[1] % 72, rest.size() - tenantLength);
    try {
        const idem::TaskKey key(rest.substr(0, tenantLength), rest.substr(tenantLength, operationLength),
            rest.substr(tenantLength + operationLength));
        const auto back = idem::TaskKey::parse(key.str());
        FUZZ_CHECK(back == key, "a key built from parts does not parse back to them");
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
