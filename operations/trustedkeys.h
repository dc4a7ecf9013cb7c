#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace idem {

// Whose signature a reader of snapshot bundles believes. A bundle carries its signer's public
// key, so a valid signature alone only says the bundle is self-consistent: anyone who edits it
// can re-sign it with a key of their own. Trust is a list of keys the operator named.
struct TrustedKey {
    std::string name; // what the operator calls it ("on-call laptop"); may be empty
    std::string fingerprint; // hex SHA-256 of the DER public key (publicKeyFingerprint)
};

struct TrustedKeys {
    std::vector<TrustedKey> keys;

    bool empty() const { return keys.empty(); }
    const TrustedKey* find(const std::string& fingerprint) const;
    // Adds a public key PEM under a name; a key already listed keeps its first name.
    // Throws SigningError when pem is not an Ed25519 public key.
    void addPem(const std::string& name, const std::string& pem);
    void add(TrustedKey key);
};

// A trusted-keys file: lines "<64 hex digits> <name>", and/or public key PEM blocks, each named
// by the "# name" comment line right before its BEGIN line; other lines starting with '#' and
// blank lines are comments. Throws SigningError naming `source` and the line on anything else.
TrustedKeys parseTrustedKeys(const std::string& text, const std::string& source);
// The file as parseTrustedKeys writes it back: one "<fingerprint> <name>" line per key.
std::string formatTrustedKeys(const TrustedKeys& keys);

// $XDG_CONFIG_HOME/idem/trusted-keys, or ~/.config/idem/trusted-keys; nullopt when neither is set.
std::optional<std::filesystem::path> defaultTrustedKeysPath();

// "3f2a…9c01": the first and last 8 digits, for a banner (the full one goes in the tooltip).
std::string shortFingerprint(const std::string& fingerprint);

} // namespace idem
