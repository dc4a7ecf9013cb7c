#include "core/fieldprints.h"

#include <stdexcept>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/canonicaljson.h"

namespace idem {

FieldPrints fieldFingerprints(std::string_view canonicalRequest, std::string_view key)
{
    if (key.size() < fieldprints::minKeyBytes || key.size() > fieldprints::maxKeyBytes)
        throw std::invalid_argument("the field key must be 16 to 1024 bytes");
    const nlohmann::json request = parseJsonStrict(canonicalRequest);
    FieldPrints out;
    if (!request.is_object()) {
        out.json = "{}";
        return out;
    }
    out.fields = static_cast<int>(request.size());
    nlohmann::json prints = nlohmann::json::object();
    static constexpr char hex[] = "0123456789abcdef";
    // nlohmann's object is a std::map: its names come in UTF-8 byte order.
    for (auto it = request.begin(); it != request.end() && prints.size() < fieldprints::maxFields; ++it) {
        const std::string& name = it.key();
        if (name.empty() || name.size() > fieldprints::maxNameBytes)
            continue;
        const std::string member = canonicalJson(nlohmann::json(name)) + ':' + canonicalJson(it.value());
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
                reinterpret_cast<const unsigned char*>(member.data()), member.size(), md, &len)
            || len < 8)
            throw std::runtime_error("OpenSSL HMAC-SHA256 failed");
        std::string print;
        for (unsigned int i = 0; i < 8; ++i) {
            print.push_back(hex[md[i] >> 4]);
            print.push_back(hex[md[i] & 0x0f]);
        }
        prints[name] = print;
    }
    out.json = canonicalJson(prints);
    return out;
}

} // namespace idem
