#include "core/sha256.h"

#include <memory>
#include <stdexcept>

#include <openssl/evp.h>

namespace idem {

std::string sha256Hex(std::string_view bytes)
{
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1
        || EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) != 1
        || EVP_DigestFinal_ex(ctx.get(), md, &len) != 1)
        throw std::runtime_error("OpenSSL SHA-256 failed");

    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(len * 2);
    for (unsigned int i = 0; i < len; ++i) {
        out.push_back(hex[md[i] >> 4]);
        out.push_back(hex[md[i] & 0x0f]);
    }
    return out;
}

} // namespace idem
