#include "operations/snapshotbundle.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "operations/csv.h"
#include "operations/signing.h"
#include "operations/snapshotconsistency.h"
#include "operations/snapshotjson.h"

namespace idem {

namespace fs = std::filesystem;

namespace {
    std::string errnoText() { return std::strerror(errno); }

    void fsyncPath(const fs::path& p)
    {
        const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            throw BundleError("cannot open " + p.string() + " to sync it: " + errnoText());
        const bool ok = ::fsync(fd) == 0;
        ::close(fd);
        if (!ok)
            throw BundleError("cannot sync " + p.string() + ": " + errnoText());
    }

    std::optional<std::string> readFile(const fs::path& p)
    {
        std::ifstream in(p, std::ios::binary);
        if (!in)
            return std::nullopt;
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    }

    bool isHex64(std::string_view s)
    {
        return s.size() == 64
            && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
    }
} // namespace

void checkBundlePath(const std::string& path)
{
    const auto bad = [&](const std::string& why) { throw BundleError("path '" + path + "' " + why); };
    if (path.empty())
        bad("is empty");
    if (path.front() == '/')
        bad("is absolute");
    for (unsigned char c : path)
        if (c < 0x20 || c == 0x7f || c == '\\')
            bad("holds a control character or backslash");
    std::size_t start = 0;
    while (start <= path.size()) {
        const auto end = std::min(path.find('/', start), path.size());
        const auto part = path.substr(start, end - start);
        if (part.empty() || part == "." || part == "..")
            bad("has an empty, '.' or '..' component");
        start = end + 1;
    }
}

BundleWriter::BundleWriter(fs::path target, bool overwrite)
    : m_target(std::move(target))
    , m_overwrite(overwrite)
{
    while (m_target.has_parent_path() && !m_target.has_filename())
        m_target = m_target.parent_path(); // "out/" names "out"
    if (m_target.empty() || m_target.filename() == "." || m_target.filename() == "..")
        throw BundleError("'" + m_target.string() + "' cannot name a new bundle directory");
    std::error_code ec;
    const auto status = fs::symlink_status(m_target, ec);
    if (fs::exists(status)) {
        if (!overwrite)
            throw BundleError(m_target.string() + " exists; choose another name or replace it with --force");
        if (!fs::is_directory(status) || !fs::exists(m_target / manifestFile))
            throw BundleError(m_target.string() + " exists and is not a snapshot bundle; refusing to replace it");
    }
    const fs::path parent = m_target.has_parent_path() ? m_target.parent_path() : fs::path(".");
    if (!fs::is_directory(parent, ec))
        throw BundleError("directory " + parent.string() + " does not exist");
    std::string tmpl = (parent / ("." + m_target.filename().string() + ".partial-XXXXXX")).string();
    if (!::mkdtemp(tmpl.data()))
        throw BundleError("cannot create a temporary directory in " + parent.string() + ": " + errnoText());
    m_temp = tmpl;
}

BundleWriter::~BundleWriter()
{
    if (!m_committed && !m_temp.empty()) {
        std::error_code ec;
        fs::remove_all(m_temp, ec);
    }
}

void BundleWriter::add(const std::string& relativePath, std::string_view bytes)
{
    if (m_committed)
        throw BundleError("the bundle is already committed");
    checkBundlePath(relativePath);
    if (relativePath == manifestFile || relativePath == signatureFile || relativePath == publicKeyFile)
        throw BundleError("'" + relativePath + "' is written by commit()");
    if (m_files.count(relativePath) || m_dirs.count(relativePath))
        throw BundleError("'" + relativePath + "' is already in the bundle");
    writeFile(relativePath, bytes);
    m_manifest += sha256Hex(bytes) + "  " + relativePath + "\n";
}

void BundleWriter::writeFile(const std::string& relativePath, std::string_view bytes)
{
    // Parent directories first; a file and a directory of the same name cannot both exist.
    for (auto slash = relativePath.find('/'); slash != std::string::npos; slash = relativePath.find('/', slash + 1)) {
        const auto dir = relativePath.substr(0, slash);
        if (m_files.count(dir))
            throw BundleError("'" + dir + "' is a file in the bundle, not a directory");
        if (m_dirs.insert(dir).second && ::mkdir((m_temp / dir).c_str(), 0700) != 0)
            throw BundleError("cannot create " + (m_temp / dir).string() + ": " + errnoText());
    }
    const fs::path p = m_temp / relativePath;
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        throw BundleError("cannot create " + p.string() + ": " + errnoText());
    std::size_t done = 0;
    while (done < bytes.size()) {
        const auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const auto why = errnoText();
            ::close(fd);
            throw BundleError("cannot write " + p.string() + ": " + why);
        }
        done += static_cast<std::size_t>(n);
    }
    const bool synced = ::fsync(fd) == 0;
    if (::close(fd) != 0 || !synced)
        throw BundleError("cannot write " + p.string() + ": " + errnoText());
    m_files.insert(relativePath);
}

void BundleWriter::commit(const SigningKey* key)
{
    if (m_committed)
        throw BundleError("the bundle is already committed");
    if (key) {
        const auto pem = key->publicPem();
        writeFile(publicKeyFile, pem);
        m_manifest += sha256Hex(pem) + "  " + publicKeyFile + "\n";
    }
    // Sorted by path, byte order: the same bundle always has the same MANIFEST bytes.
    std::vector<std::string> lines;
    std::istringstream in(m_manifest);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    std::sort(lines.begin(), lines.end(),
        [](const std::string& a, const std::string& b) { return a.substr(66) < b.substr(66); });
    std::string manifest;
    for (const auto& l : lines)
        manifest += l + "\n";
    writeFile(manifestFile, manifest);
    if (key)
        writeFile(signatureFile, base64Encode(key->sign(manifest)) + "\n");
    for (const auto& d : m_dirs)
        fsyncPath(m_temp / d);
    fsyncPath(m_temp);

    std::error_code ec;
    fs::path old;
    if (fs::exists(fs::symlink_status(m_target, ec))) {
        if (!m_overwrite)
            throw BundleError(m_target.string() + " appeared while the bundle was written; not replacing it");
        // The previous bundle steps aside first: a directory cannot be renamed over a non-empty one.
        old = m_temp;
        old += ".old";
        if (::rename(m_target.c_str(), old.c_str()) != 0)
            throw BundleError("cannot move the old " + m_target.string() + " aside: " + errnoText());
    }
    if (::rename(m_temp.c_str(), m_target.c_str()) != 0) {
        const auto why = errnoText();
        if (!old.empty())
            ::rename(old.c_str(), m_target.c_str());
        throw BundleError("cannot rename the bundle into " + m_target.string() + ": " + why);
    }
    m_committed = true;
    if (!old.empty())
        fs::remove_all(old, ec);
    fsyncPath(m_target.has_parent_path() ? m_target.parent_path() : fs::path("."));
}

void addSnapshotFiles(BundleWriter& writer, SnapshotData& data, const SigningKey* key,
    const std::vector<ReportImage>& extraImages, const SnapshotProgress& progress)
{
    data.signingKeyFingerprint.reset();
    if (key)
        data.signingKeyFingerprint = publicKeyFingerprint(key->publicPem());
    progress.checkCancel();
    progress.report("writing snapshot.json", 0.0);
    writer.add("snapshot.json", snapshotToJson(data));
    progress.checkCancel();
    progress.report("writing CSV files", 0.3);
    for (const auto& [path, text] : snapshotCsvFiles(data))
        writer.add(path, text);
    progress.checkCancel();
    progress.report("drawing charts", 0.6);
    std::vector<ReportImage> images = extraImages;
    for (const auto& c : snapshotCharts(data)) {
        const std::string path = "charts/" + c.name + ".svg";
        writer.add(path, c.svg);
        if (extraImages.empty())
            images.push_back({ c.title, path });
    }
    progress.checkCancel();
    progress.report("writing report.html", 0.8);
    writer.add("report.html", snapshotReportHtml(data, images));
}

void writeSnapshotBundle(
    const fs::path& target, SnapshotData data, bool overwrite, const SigningKey* key, const SnapshotProgress& progress)
{
    BundleWriter writer(target, overwrite);
    addSnapshotFiles(writer, data, key, {}, progress);
    progress.checkCancel();
    progress.report("writing MANIFEST", 0.9);
    writer.commit(key);
    progress.report("done", 1.0);
}

bool BundleVerification::intact() const
{
    return modified.empty() && missing.empty() && added.empty() && problems.empty()
        && signature != SignatureState::Invalid && signature != SignatureState::Incomplete;
}

bool BundleVerification::ok(bool allowUnknownSigner) const
{
    if (!intact() || !consistent())
        return false;
    if (signature == SignatureState::Valid)
        return trustedKeyMatches || allowUnknownSigner;
    return !trustedKeyGiven;
}

std::vector<std::string> BundleVerification::report() const
{
    std::vector<std::string> out;
    for (const auto& p : problems)
        out.push_back("PROBLEM   " + p);
    for (const auto& f : modified)
        out.push_back("MODIFIED  " + f + " (SHA-256 differs from MANIFEST)");
    for (const auto& f : missing)
        out.push_back("MISSING   " + f + " (listed in MANIFEST, not in the bundle)");
    for (const auto& f : added)
        out.push_back("ADDED     " + f + " (in the bundle, not listed in MANIFEST)");
    for (const auto& c : contradictions)
        out.push_back("CONTRADICTION in snapshot.json: " + c);
    if (eventsChecked + eventsBeforeTail > 0 && contradictions.empty())
        out.push_back("content: " + std::to_string(eventsChecked) + " events match the audit entries they cite"
            + (eventsBeforeTail ? ", " + std::to_string(eventsBeforeTail)
                        + " older than the audit tail could not be checked against it"
                                : std::string()));
    switch (signature) {
    case SignatureState::Unsigned:
        out.push_back(std::string(trustedKeyGiven ? "SIGNATURE missing: the bundle is not signed, --pubkey expects it"
                                                  : "signature: none (the bundle is not signed)"));
        break;
    case SignatureState::Valid:
        if (trustedKeyMatches)
            out.push_back("signature: valid, by the trusted key "
                + (trustedKeyName && !trustedKeyName->empty() ? "\"" + *trustedKeyName + "\" " : std::string())
                + "(SHA-256 " + keyFingerprint.value_or("?") + ")");
        else
            out.push_back("SIGNATURE by an unknown key " + keyFingerprint.value_or("?")
                + (trustedKeyGiven ? ": none of the trusted keys" : ": no key is trusted")
                + " (the signature only shows the bundle is self-consistent; anyone may have re-signed it). "
                  "Trust the signer with --pubkey FILE or --trusted-keys FILE, or accept it with "
                  "--allow-unknown-signer");
        break;
    case SignatureState::Invalid:
        out.push_back("SIGNATURE invalid: " + signatureDetail);
        break;
    case SignatureState::Incomplete:
        out.push_back("SIGNATURE incomplete: " + signatureDetail);
        break;
    }
    return out;
}

ManifestListing parseManifest(std::string_view bytes)
{
    ManifestListing m;
    auto& listed = m.listed;
    std::istringstream in { std::string(bytes) };
    int lineNo = 0;
    for (std::string line; std::getline(in, line);) {
        ++lineNo;
        const auto where = "MANIFEST line " + std::to_string(lineNo) + ": ";
        if (line.size() < 67 || !isHex64(std::string_view(line).substr(0, 64)) || line.compare(64, 2, "  ") != 0) {
            m.problems.push_back(where + "not '<sha256>  <path>'");
            continue;
        }
        const auto path = line.substr(66);
        try {
            checkBundlePath(path);
        } catch (const BundleError& e) {
            m.problems.push_back(where + e.what() + ", rejected");
            continue;
        }
        if (path == manifestFile || path == signatureFile)
            m.problems.push_back(where + path + " cannot list itself or the signature");
        else if (!listed.emplace(path, line.substr(0, 64)).second)
            m.problems.push_back(where + path + " is listed twice");
    }
    if (!bytes.empty() && bytes.back() != '\n')
        m.problems.push_back("MANIFEST does not end with a newline");
    return m;
}

TrustedKeys trustedKeysFromPem(const std::optional<std::string>& trustedPublicPem)
{
    TrustedKeys keys;
    if (trustedPublicPem) {
        try {
            keys.addPem({}, *trustedPublicPem);
        } catch (const SigningError& e) {
            throw BundleError(std::string("the trusted public key: ") + e.what());
        }
    }
    return keys;
}

BundleVerification verifyBundle(const fs::path& dir, const std::optional<std::string>& trustedPublicPem)
{
    return verifyBundle(dir, trustedKeysFromPem(trustedPublicPem));
}

namespace {
    void addConsistency(BundleVerification& v, const SnapshotData& data)
    {
        const auto c = checkSnapshotConsistency(data);
        v.contradictions = c.contradictions;
        v.eventsChecked = c.eventsChecked;
        v.eventsBeforeTail = c.eventsBeforeTail;
    }

    BundleVerification verifyFiles(const fs::path& dir, const TrustedKeys& trusted);
} // namespace

BundleVerification verifyBundle(const fs::path& dir, const TrustedKeys& trusted)
{
    auto v = verifyFiles(dir, trusted);
    // The content too: a bundle re-signed by a trusted key is still held against itself.
    if (const auto json = readFile(dir / "snapshot.json")) {
        try {
            addConsistency(v, snapshotFromJson(*json));
        } catch (const SnapshotFormatError& e) {
            v.problems.push_back(std::string("snapshot.json cannot be read: ") + e.what());
        }
    }
    return v;
}

namespace {
BundleVerification verifyFiles(const fs::path& dir, const TrustedKeys& trusted)
{
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw BundleError(dir.string() + " is not a directory");
    BundleVerification v;

    // What is there: every regular file, relative, '/'-separated.
    std::set<std::string> present;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        const auto rel = fs::relative(it->path(), dir, ec).generic_string();
        const auto st = it->symlink_status(ec);
        if (fs::is_directory(st))
            continue;
        if (!fs::is_regular_file(st)) {
            v.problems.push_back(rel + " is not a regular file (symlink or special file)");
            continue;
        }
        present.insert(rel);
    }
    if (ec)
        v.problems.push_back("cannot list " + dir.string() + ": " + ec.message());

    const auto manifest = readFile(dir / manifestFile);
    std::map<std::string, std::string> listed;
    if (!manifest) {
        v.problems.push_back("MANIFEST is missing or unreadable");
    } else {
        auto parsed = parseManifest(*manifest);
        listed = std::move(parsed.listed);
        v.problems.insert(v.problems.end(), parsed.problems.begin(), parsed.problems.end());
    }
    for (const auto& [path, hash] : listed) {
        if (!present.count(path)) {
            v.missing.push_back(path);
            continue;
        }
        const auto bytes = readFile(dir / path);
        ++v.filesChecked;
        if (!bytes || sha256Hex(*bytes) != hash)
            v.modified.push_back(path);
    }
    for (const auto& path : present)
        if (path != manifestFile && path != signatureFile && !listed.count(path))
            v.added.push_back(path);

    // The signature.
    const bool hasSig = present.count(signatureFile) > 0;
    const bool hasKey = present.count(publicKeyFile) > 0;
    bool declaredSigned = false;
    if (const auto json = readFile(dir / "snapshot.json")) {
        // Lenient on purpose, unlike snapshotFromJson: this is only a hint that a signature
        // was removed, and reading more documents as signed errs towards "incomplete".
        const auto j = nlohmann::json::parse(*json, nullptr, false);
        declaredSigned = j.is_object() && j.contains("signing") && !j["signing"].is_null();
    }
    v.trustedKeyGiven = !trusted.empty();
    if (!hasSig && !hasKey) {
        v.signature = declaredSigned ? SignatureState::Incomplete : SignatureState::Unsigned;
        if (declaredSigned)
            v.signatureDetail
                = "snapshot.json says the bundle was signed, but MANIFEST.sig and the public key are gone";
    } else if (!hasSig || !hasKey) {
        v.signature = SignatureState::Incomplete;
        v.signatureDetail
            = hasSig ? std::string(publicKeyFile) + " is missing" : std::string(signatureFile) + " is missing";
    } else if (manifest) {
        const auto pem = readFile(dir / publicKeyFile).value_or("");
        try {
            v.keyFingerprint = publicKeyFingerprint(pem);
            const auto sig = base64Decode(readFile(dir / signatureFile).value_or(""));
            if (verifyEd25519(pem, *manifest, sig)) {
                v.signature = SignatureState::Valid;
            } else {
                v.signature = SignatureState::Invalid;
                v.signatureDetail = "MANIFEST.sig does not match MANIFEST and " + std::string(publicKeyFile);
            }
        } catch (const SigningError& e) {
            v.signature = SignatureState::Invalid;
            v.signatureDetail = std::string(signatureFile) + " or " + publicKeyFile + " unreadable: " + e.what();
        }
    } else {
        v.signature = SignatureState::Invalid;
        v.signatureDetail = "there is no MANIFEST to check it against";
    }
    if (v.signature == SignatureState::Valid && v.keyFingerprint) {
        if (const auto* key = trusted.find(*v.keyFingerprint)) {
            v.trustedKeyMatches = true;
            v.trustedKeyName = key->name;
        }
    }
    return v;
}
} // namespace

LoadedSnapshot openSnapshotBundle(const fs::path& dir, const std::optional<std::string>& trustedPublicPem)
{
    return openSnapshotBundle(dir, trustedKeysFromPem(trustedPublicPem));
}

LoadedSnapshot openSnapshotBundle(const fs::path& dir, const TrustedKeys& trusted)
{
    LoadedSnapshot out;
    out.verification = verifyFiles(dir, trusted);
    const auto json = readFile(dir / "snapshot.json");
    if (!json)
        throw BundleError(dir.string() + " holds no snapshot.json: not a snapshot bundle");
    out.data = snapshotFromJson(*json);
    addConsistency(out.verification, out.data);
    return out;
}

} // namespace idem
