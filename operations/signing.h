#pragma once

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace idem {

// A key file that cannot be used (missing, unreadable, not an Ed25519 key, too open), or a
// signature that cannot be made. The message names the file and what to do.
class SigningError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// An Ed25519 private key (OpenSSL EVP). Snapshot bundles are signed with it; the public half
// travels in the bundle as PEM.
class SigningKey {
public:
    static SigningKey generate();
    // PKCS#8 PEM, unencrypted. Throws SigningError.
    static SigningKey fromPrivatePem(const std::string& pem);
    // Refuses a file that group or others may read (as ssh does): the key signs evidence.
    static SigningKey load(const std::filesystem::path& file);

    SigningKey(SigningKey&&) noexcept;
    SigningKey& operator=(SigningKey&&) noexcept;
    ~SigningKey();

    std::string privatePem() const;
    std::string publicPem() const; // SubjectPublicKeyInfo PEM
    std::string sign(std::string_view message) const; // 64 raw bytes

    // Writes the private key with mode 0600 (directory 0700 when created), through a temporary
    // file renamed into place. Refuses an existing file unless overwrite.
    void save(const std::filesystem::path& file, bool overwrite) const;

private:
    struct Impl;
    explicit SigningKey(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

// True when signature (64 raw bytes) is a valid Ed25519 signature of message by the key in
// publicPem. Throws SigningError when publicPem is not an Ed25519 public key.
bool verifyEd25519(const std::string& publicPem, std::string_view message, std::string_view signature);

// The public key's identity: hex SHA-256 of its DER SubjectPublicKeyInfo (whitespace and PEM
// line wrapping do not change it). Throws SigningError.
std::string publicKeyFingerprint(const std::string& publicPem);

// $XDG_CONFIG_HOME/idem/snapshot-signing.key, or ~/.config/idem/snapshot-signing.key.
std::filesystem::path defaultSigningKeyPath();

std::string base64Encode(std::string_view bytes);
// Throws SigningError on anything but canonical base64 (whitespace at the ends is ignored).
std::string base64Decode(std::string_view text);

} // namespace idem
