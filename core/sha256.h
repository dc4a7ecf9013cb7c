#pragma once

#include <string>
#include <string_view>

namespace idem {

// Lowercase hex SHA-256 of the bytes, through OpenSSL EVP.
std::string sha256Hex(std::string_view bytes);

} // namespace idem
