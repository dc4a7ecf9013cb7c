// snapshot.json as the console's viewer and `idemctl snapshot show` read it from a bundle that
// anyone may have edited. Properties: never a crash or any exception but SnapshotFormatError;
// what is read is what the file says (every value the writer puts back equals the value at the
// same place in the input, integers compared by value and sign); and writing what was read,
// then reading and writing again, gives the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz/check.h"
#include "operations/snapshotjson.h"

namespace {
using nlohmann::json;

// nlohmann's == takes int64 -1 and uint64 2^64-1 for equal; a reader that wrapped one into
// the other must not pass.
bool sameLeaf(const json& a, const json& b)
{
    const bool aInt = a.is_number_integer();
    const bool bInt = b.is_number_integer();
    if (aInt && bInt) {
        const bool aNegative = !a.is_number_unsigned() && a.get<std::int64_t>() < 0;
        const bool bNegative = !b.is_number_unsigned() && b.get<std::int64_t>() < 0;
        if (aNegative != bNegative)
            return false;
        return aNegative ? a.get<std::int64_t>() == b.get<std::int64_t>()
                         : a.get<std::uint64_t>() == b.get<std::uint64_t>();
    }
    if (a.is_number() && b.is_number())
        return a.get<double>() == b.get<double>();
    return a == b;
}

// Fields the writer fills in itself rather than from what it read.
bool isComputed(const std::string& pointer)
{
    static constexpr std::string_view fixed[] = { "/redaction/form", "/signing/algorithm", "/signing/public_key_file",
        "/signing/signature_file", "/format_version" };
    for (const auto f : fixed)
        if (pointer == f)
            return true;
    const std::string_view p(pointer);
    return p.size() >= 4 && p.substr(p.size() - 4) == "/csv";
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    idem::SnapshotData read;
    try {
        read = idem::snapshotFromJson(text);
    } catch (const idem::SnapshotFormatError&) {
        return 0;
    }
    const std::string written = idem::snapshotToJson(read);

    const auto input = json::parse(text).flatten();
    const auto output = json::parse(written).flatten();
    for (const auto& [pointer, value] : output.items()) {
        const auto it = input.find(pointer);
        if (it != input.end() && !isComputed(pointer))
            FUZZ_CHECK(sameLeaf(*it, value), pointer.c_str());
    }

    idem::SnapshotData again;
    try {
        again = idem::snapshotFromJson(written);
    } catch (const idem::SnapshotFormatError& e) {
        FUZZ_FAIL("snapshot.json as written cannot be read back", e.what());
    }
    FUZZ_CHECK(idem::snapshotToJson(again) == written, "writing what was read is not a fixed point");
    return 0;
}
