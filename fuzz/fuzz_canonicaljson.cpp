// The strict JSON reader and the RFC 8785 writer on arbitrary text. Properties:
//  - never a crash, a sanitizer report or any exception but JsonError;
//  - what the strict reader accepts, nlohmann's own parser accepts as the same value (the
//    strict reader only ever refuses more: duplicate keys, deep nesting, bytes after the end);
//  - what nlohmann accepts and the strict reader refuses is refused for one of those reasons;
//  - an accepted value always canonicalises, the canonical text is accepted by the strict
//    reader, and canonicalising it again gives the same bytes (a fixed point).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/canonicaljson.h"
#include "fuzz/check.h"

namespace {
bool refusedForAKnownReason(const std::string& message)
{
    // ... and numbers a double cannot tell apart (number_range): an integer RFC 8785 would write
    // as another one, a non-zero literal that rounds to 0.
    for (const char* reason : { "duplicate key", "nested deeper than", "unexpected byte 0x00",
             "is not a double's value", "is not zero but rounds to 0 as a double" })
        if (message.find(reason) != std::string::npos)
            return true;
    return false;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    nlohmann::json theirs;
    bool theyAccept = true;
    try {
        theirs = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
        theyAccept = false;
    }

    nlohmann::json value;
    try {
        value = idem::parseJsonStrict(text);
    } catch (const idem::JsonError& e) {
        FUZZ_CHECK(!theyAccept || refusedForAKnownReason(e.what()), e.what());
        return 0;
    }
    FUZZ_CHECK(theyAccept, "the strict reader accepted what nlohmann refuses");
    FUZZ_CHECK(theirs == value, "the strict reader and nlohmann read different values");

    std::string canonical;
    try {
        canonical = idem::canonicalJson(value);
    } catch (const idem::JsonError& e) {
        FUZZ_FAIL("the writer refused what the strict reader accepted", e.what());
    }
    try {
        FUZZ_CHECK(idem::canonicalJsonFromText(canonical) == canonical, "canonical form is not a fixed point");
    } catch (const idem::JsonError& e) {
        FUZZ_FAIL("the strict reader refused the canonical form", e.what());
    }
    return 0;
}
