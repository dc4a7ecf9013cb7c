// The other bytes verifyBundle reads from a bundle anyone may have edited: MANIFEST and the
// base64 of MANIFEST.sig. Properties: never a crash or an unexpected exception; every path
// MANIFEST lists passed checkBundlePath with a 64-digit lowercase hash, and the listing written
// out again reads back the same with no problems; base64 that decodes is canonical (encoding
// the bytes again gives the same text, surrounding whitespace aside), and any bytes survive
// encoding and decoding. The trusted-keys file (operations/trustedkeys.h) is read from the same
// bytes: it is parsed or refused with a SigningError, and what it lists writes out and reads
// back as the same fingerprints.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "operations/signing.h"
#include "operations/snapshotbundle.h"
#include "operations/trustedkeys.h"

namespace {
std::string_view trimmed(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);

    const auto manifest = idem::parseManifest(bytes);
    std::string rewritten;
    for (const auto& [path, hash] : manifest.listed) {
        try {
            idem::checkBundlePath(path);
        } catch (const idem::BundleError& e) {
            FUZZ_FAIL("MANIFEST listed a path checkBundlePath refuses", e.what());
        }
        FUZZ_CHECK(hash.size() == 64 && hash.find_first_not_of("0123456789abcdef") == std::string::npos, hash.c_str());
        rewritten += hash + "  " + path + "\n";
    }
    const auto again = idem::parseManifest(rewritten);
    FUZZ_CHECK(again.problems.empty(), again.problems.front().c_str());
    FUZZ_CHECK(again.listed == manifest.listed, "a rewritten MANIFEST lists other files");

    try {
        const auto decoded = idem::base64Decode(bytes);
        FUZZ_CHECK(idem::base64Encode(decoded) == trimmed(bytes), "accepted base64 that is not canonical");
    } catch (const idem::SigningError&) {
    }
    FUZZ_CHECK(idem::base64Decode(idem::base64Encode(bytes)) == bytes, "base64 does not round-trip");

    try {
        const auto keys = idem::parseTrustedKeys(std::string(bytes), "fuzz");
        const auto back = idem::parseTrustedKeys(idem::formatTrustedKeys(keys), "again");
        FUZZ_CHECK(back.keys.size() == keys.keys.size(), "a trusted-keys file written out reads back other keys");
        for (std::size_t i = 0; i < keys.keys.size(); ++i)
            FUZZ_CHECK(back.keys[i].fingerprint == keys.keys[i].fingerprint, keys.keys[i].fingerprint.c_str());
    } catch (const idem::SigningError&) {
    }
    return 0;
}
