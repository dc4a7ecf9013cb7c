#include "operations/trustedkeys.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "operations/signing.h"

namespace idem {

namespace {
    bool isFingerprint(const std::string& s)
    {
        return s.size() == 64
            && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
    }

    std::string trim(const std::string& s)
    {
        const auto b = s.find_first_not_of(" \t\r");
        if (b == std::string::npos)
            return {};
        return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
    }
} // namespace

const TrustedKey* TrustedKeys::find(const std::string& fingerprint) const
{
    for (const auto& k : keys)
        if (k.fingerprint == fingerprint)
            return &k;
    return nullptr;
}

void TrustedKeys::add(TrustedKey key)
{
    if (!find(key.fingerprint))
        keys.push_back(std::move(key));
}

void TrustedKeys::addPem(const std::string& name, const std::string& pem)
{
    add({ name, publicKeyFingerprint(pem) });
}

TrustedKeys parseTrustedKeys(const std::string& text, const std::string& source)
{
    TrustedKeys out;
    std::istringstream in(text);
    std::string raw, lastComment, pem;
    bool inPem = false;
    int number = 0, pemStart = 0;
    while (std::getline(in, raw)) {
        ++number;
        const std::string line = trim(raw);
        if (inPem) {
            pem += line + '\n';
            if (line.rfind("-----END ", 0) == 0) {
                inPem = false;
                try {
                    out.addPem(lastComment, pem);
                } catch (const SigningError& e) {
                    throw SigningError(source + " line " + std::to_string(pemStart) + ": " + e.what());
                }
                lastComment.clear();
            }
            continue;
        }
        if (line.empty()) {
            lastComment.clear();
            continue;
        }
        if (line.front() == '#') {
            lastComment = trim(line.substr(1));
            continue;
        }
        if (line.rfind("-----BEGIN ", 0) == 0) {
            inPem = true;
            pemStart = number;
            pem = line + '\n';
            continue;
        }
        const auto space = line.find_first_of(" \t");
        std::string fp = line.substr(0, space);
        std::transform(fp.begin(), fp.end(), fp.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        if (!isFingerprint(fp))
            throw SigningError(source + " line " + std::to_string(number)
                + ": expected \"<SHA-256 fingerprint, 64 hex digits> <name>\" or a public key PEM block");
        out.add({ space == std::string::npos ? std::string() : trim(line.substr(space)), fp });
        lastComment.clear();
    }
    if (inPem)
        throw SigningError(source + " line " + std::to_string(pemStart) + ": a PEM block without its END line");
    return out;
}

std::string formatTrustedKeys(const TrustedKeys& keys)
{
    std::string out = "# Idem: snapshot signing keys trusted here, \"<SHA-256 fingerprint> <name>\" per line\n";
    for (const auto& k : keys.keys)
        out += k.fingerprint + (k.name.empty() ? "" : " " + k.name) + '\n';
    return out;
}

std::optional<std::filesystem::path> defaultTrustedKeysPath()
{
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg == '/')
        return std::filesystem::path(xdg) / "idem" / "trusted-keys";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::filesystem::path(home) / ".config" / "idem" / "trusted-keys";
    return std::nullopt;
}

std::string shortFingerprint(const std::string& fingerprint)
{
    if (fingerprint.size() <= 16)
        return fingerprint;
    return fingerprint.substr(0, 8) + "\xe2\x80\xa6" + fingerprint.substr(fingerprint.size() - 8);
}

} // namespace idem
