#include "operations/signing.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "core/sha256.h"

namespace idem {

namespace {
    using PKey = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
    using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
    using MdCtx = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

    std::string opensslError()
    {
        const unsigned long e = ERR_get_error();
        ERR_clear_error();
        if (e == 0)
            return "unknown OpenSSL error";
        char buf[256];
        ERR_error_string_n(e, buf, sizeof buf);
        return buf;
    }

    Bio memBio(const std::string& text)
    {
        return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())), &BIO_free);
    }

    std::string drain(BIO* bio)
    {
        char* data = nullptr;
        const long n = BIO_get_mem_data(bio, &data);
        return std::string(data, static_cast<std::size_t>(n));
    }

    PKey readPublic(const std::string& pem)
    {
        auto bio = memBio(pem);
        PKey key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr), &EVP_PKEY_free);
        if (!key)
            throw SigningError("not a PEM public key: " + opensslError());
        if (EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519)
            throw SigningError("the public key is not an Ed25519 key");
        return key;
    }

    constexpr char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
} // namespace

struct SigningKey::Impl {
    PKey key { nullptr, &EVP_PKEY_free };
};

SigningKey::SigningKey(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{
}
SigningKey::SigningKey(SigningKey&&) noexcept = default;
SigningKey& SigningKey::operator=(SigningKey&&) noexcept = default;
SigningKey::~SigningKey() = default;

SigningKey SigningKey::generate()
{
    auto impl = std::make_unique<Impl>();
    std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(
        EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr), &EVP_PKEY_CTX_free);
    EVP_PKEY* raw = nullptr;
    if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 || EVP_PKEY_keygen(ctx.get(), &raw) != 1)
        throw SigningError("cannot generate an Ed25519 key: " + opensslError());
    impl->key.reset(raw);
    return SigningKey(std::move(impl));
}

SigningKey SigningKey::fromPrivatePem(const std::string& pem)
{
    auto impl = std::make_unique<Impl>();
    auto bio = memBio(pem);
    impl->key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!impl->key)
        throw SigningError("not an unencrypted PEM private key: " + opensslError());
    if (EVP_PKEY_id(impl->key.get()) != EVP_PKEY_ED25519)
        throw SigningError("the private key is not an Ed25519 key");
    return SigningKey(std::move(impl));
}

SigningKey SigningKey::load(const std::filesystem::path& file)
{
    struct stat st { };
    if (::stat(file.c_str(), &st) != 0)
        throw SigningError("cannot read signing key " + file.string() + ": " + std::strerror(errno)
            + " (create one with `idemctl snapshot keygen`)");
    if ((st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        throw SigningError(
            "signing key " + file.string() + " has permissions " + mode + ", readable by others; run chmod 600 on it");
    }
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in)
        throw SigningError("cannot read signing key " + file.string());
    try {
        return fromPrivatePem(text.str());
    } catch (const SigningError& e) {
        throw SigningError(file.string() + ": " + e.what());
    }
}

std::string SigningKey::privatePem() const
{
    Bio bio(BIO_new(BIO_s_mem()), &BIO_free);
    if (!bio || PEM_write_bio_PrivateKey(bio.get(), m_impl->key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
        throw SigningError("cannot encode the private key: " + opensslError());
    return drain(bio.get());
}

std::string SigningKey::publicPem() const
{
    Bio bio(BIO_new(BIO_s_mem()), &BIO_free);
    if (!bio || PEM_write_bio_PUBKEY(bio.get(), m_impl->key.get()) != 1)
        throw SigningError("cannot encode the public key: " + opensslError());
    return drain(bio.get());
}

std::string SigningKey::sign(std::string_view message) const
{
    MdCtx ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    std::string sig(64, '\0');
    std::size_t len = sig.size();
    // Ed25519 signs the message itself (no separate digest): EVP_DigestSign in one shot.
    if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, m_impl->key.get()) != 1
        || EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
               reinterpret_cast<const unsigned char*>(message.data()), message.size())
            != 1)
        throw SigningError("Ed25519 signing failed: " + opensslError());
    sig.resize(len);
    return sig;
}

void SigningKey::save(const std::filesystem::path& file, bool overwrite) const
{
    const auto dir = file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path();
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) {
        std::filesystem::create_directories(dir, ec);
        if (ec)
            throw SigningError("cannot create " + dir.string() + ": " + ec.message());
        std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
    }
    if (!overwrite && std::filesystem::exists(file, ec))
        throw SigningError(file.string() + " exists; refusing to replace a signing key (use --force)");

    const std::string pem = privatePem();
    const auto tmp = dir / ("." + file.filename().string() + ".tmp" + std::to_string(::getpid()));
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        throw SigningError("cannot create " + tmp.string() + ": " + std::strerror(errno));
    bool ok = ::fchmod(fd, 0600) == 0 && ::write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size())
        && ::fsync(fd) == 0;
    ok = (::close(fd) == 0) && ok;
    if (!ok || ::rename(tmp.c_str(), file.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmp.c_str());
        throw SigningError("cannot write signing key " + file.string() + ": " + why);
    }
}

bool verifyEd25519(const std::string& publicPem, std::string_view message, std::string_view signature)
{
    const auto key = readPublic(publicPem);
    MdCtx ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1)
        throw SigningError("cannot set up Ed25519 verification: " + opensslError());
    const int rc = EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
        signature.size(), reinterpret_cast<const unsigned char*>(message.data()), message.size());
    ERR_clear_error();
    return rc == 1;
}

std::string publicKeyFingerprint(const std::string& publicPem)
{
    const auto key = readPublic(publicPem);
    unsigned char* der = nullptr;
    const int n = i2d_PUBKEY(key.get(), &der);
    if (n <= 0)
        throw SigningError("cannot encode the public key: " + opensslError());
    std::string bytes(reinterpret_cast<const char*>(der), static_cast<std::size_t>(n));
    OPENSSL_free(der);
    return sha256Hex(bytes);
}

std::filesystem::path defaultSigningKeyPath()
{
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    std::filesystem::path base;
    if (xdg && *xdg == '/')
        base = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = std::filesystem::path(home) / ".config";
    else
        throw SigningError("neither XDG_CONFIG_HOME nor HOME is set: name the key file with --key");
    return base / "idem" / "snapshot-signing.key";
}

std::string base64Encode(std::string_view bytes)
{
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16)
            | (static_cast<unsigned char>(bytes[i + 1]) << 8) | static_cast<unsigned char>(bytes[i + 2]);
        out += b64[(v >> 18) & 63];
        out += b64[(v >> 12) & 63];
        out += b64[(v >> 6) & 63];
        out += b64[v & 63];
    }
    if (i < bytes.size()) {
        unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
        if (i + 1 < bytes.size())
            v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
        out += b64[(v >> 18) & 63];
        out += b64[(v >> 12) & 63];
        out += i + 1 < bytes.size() ? b64[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

std::string base64Decode(std::string_view text)
{
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    if (text.size() % 4 != 0)
        throw SigningError("not base64 (length " + std::to_string(text.size()) + " is not a multiple of 4)");
    std::string out;
    for (std::size_t i = 0; i < text.size(); i += 4) {
        unsigned v = 0;
        int pad = 0;
        for (std::size_t j = 0; j < 4; ++j) {
            const char c = text[i + j];
            v <<= 6;
            if (c == '=' && i + 4 == text.size() && j >= 2 && (j == 3 || text[i + 3] == '=')) {
                ++pad;
                continue;
            }
            const char* p = c ? std::strchr(b64, c) : nullptr;
            if (!p || pad)
                throw SigningError("not base64 (unexpected character at offset " + std::to_string(i + j) + ")");
            v |= static_cast<unsigned>(p - b64);
        }
        // The bits past the last byte must be zero: otherwise "Zh==" decodes as "Zg==" does,
        // and one signature would have several spellings.
        if ((pad == 2 && (v & 0xffff) != 0) || (pad == 1 && (v & 0xff) != 0))
            throw SigningError("not base64 (non-zero bits after the last byte, at offset " + std::to_string(i + 3 - pad)
                + ")");
        out += static_cast<char>((v >> 16) & 0xff);
        if (pad < 2)
            out += static_cast<char>((v >> 8) & 0xff);
        if (pad < 1)
            out += static_cast<char>(v & 0xff);
    }
    return out;
}

} // namespace idem
