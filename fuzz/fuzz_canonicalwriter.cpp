// The RFC 8785 writer on values built in C++, which never went through a parser: any bytes in
// strings and names, NaN and infinities, binary values, every integer, nesting past the limit.
// Properties: either JsonError, or canonical text that the strict reader accepts, that is a
// fixed point, and that reads back as the value (numbers as the doubles JCS makes of them).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include <fuzzer/FuzzedDataProvider.h>

#include "core/canonicaljson.h"
#include "fuzz/check.h"

namespace {
using nlohmann::json;

// A little past the writer's limit, so that both sides of it are reached.
constexpr int maxBuildDepth = static_cast<int>(idem::maxJsonDepth) + 4;

json build(FuzzedDataProvider& in, int depth)
{
    switch (in.ConsumeIntegralInRange<int>(0, depth >= maxBuildDepth ? 7 : 9)) {
    case 0:
        return nullptr;
    case 1:
        return in.ConsumeBool();
    case 2:
        return in.ConsumeIntegral<std::int64_t>();
    case 3:
        return in.ConsumeIntegral<std::uint64_t>();
    case 4: {
        // Raw bits: subnormals, -0, NaN and infinities included.
        const auto bits = in.ConsumeIntegral<std::uint64_t>();
        double d;
        static_assert(sizeof d == sizeof bits);
        __builtin_memcpy(&d, &bits, sizeof d);
        return d;
    }
    case 5:
        return in.ConsumeProbability<double>() * 1e6 - 5e5;
    case 6:
        return in.ConsumeRandomLengthString(64);
    case 7:
        return json::binary(in.ConsumeBytes<std::uint8_t>(in.ConsumeIntegralInRange<std::size_t>(0, 8)));
    case 8: {
        json a = json::array();
        const auto n = in.ConsumeIntegralInRange<int>(0, 4);
        for (int i = 0; i < n && in.remaining_bytes() > 0; ++i)
            a.push_back(build(in, depth + 1));
        // A long single chain is how nesting gets deep within a few kilobytes of input.
        if (n == 0 && in.remaining_bytes() > 0 && in.ConsumeBool())
            a.push_back(build(in, depth + 1));
        return a;
    }
    default: {
        json o = json::object();
        const auto n = in.ConsumeIntegralInRange<int>(0, 4);
        for (int i = 0; i < n && in.remaining_bytes() > 0; ++i) {
            auto name = in.ConsumeRandomLengthString(16);
            o[std::move(name)] = build(in, depth + 1);
        }
        return o;
    }
    }
}

// How the canonical text must read back: the same shape, strings byte for byte, numbers as
// the IEEE-754 doubles JCS writes (integers rounded past 2^53, -0 as 0).
bool readsBackAs(const json& original, const json& read)
{
    if (original.is_number()) {
        if (!read.is_number())
            return false;
        return original.get<double>() == read.get<double>();
    }
    if (original.type() != read.type())
        return false;
    if (original.is_array()) {
        if (original.size() != read.size())
            return false;
        for (std::size_t i = 0; i < original.size(); ++i)
            if (!readsBackAs(original[i], read[i]))
                return false;
        return true;
    }
    if (original.is_object()) {
        if (original.size() != read.size())
            return false;
        for (const auto& [name, member] : original.items()) {
            const auto it = read.find(name);
            if (it == read.end() || !readsBackAs(member, *it))
                return false;
        }
        return true;
    }
    return original == read;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    FuzzedDataProvider in(data, size);
    const json value = build(in, 0);
    std::string canonical;
    try {
        canonical = idem::canonicalJson(value);
    } catch (const idem::JsonError&) {
        return 0;
    }
    json read;
    try {
        read = idem::parseJsonStrict(canonical);
    } catch (const idem::JsonError& e) {
        FUZZ_FAIL("the strict reader refused canonical output", e.what());
    }
    FUZZ_CHECK(idem::canonicalJson(read) == canonical, "canonical form is not a fixed point");
    FUZZ_CHECK(readsBackAs(value, read), canonical.c_str());
    return 0;
}
