#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "operations/snapshot.h"
#include "operations/snapshotreport.h"
#include "operations/trustedkeys.h"

namespace idem {

class SigningKey;

// Writing or opening a bundle failed: the target exists, a path is not allowed, the disk
// refused. Nothing was left under the target name.
class BundleError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline constexpr const char* manifestFile = "MANIFEST";
inline constexpr const char* signatureFile = "MANIFEST.sig";
inline constexpr const char* publicKeyFile = "signing-key.pub.pem";

// Throws BundleError unless path is a plain relative path inside a bundle: no absolute path,
// no "..", "." or empty component, no backslash or control character.
void checkBundlePath(const std::string& path);

// Builds a bundle directory atomically: files go into a sibling temporary directory (same
// filesystem, mode 0700), each fsynced as written; commit() adds MANIFEST (and the signature
// and public key), then renames the directory into place. Destroyed without commit(), or when
// commit() throws, it removes the temporary directory: a failed export leaves nothing under
// the target name. The console adds its own files (chart PNGs, a PDF) with add() before commit().
class BundleWriter {
public:
    // Refuses an existing target unless overwrite; even then only a directory that holds a
    // MANIFEST (a previous bundle) is replaced. The parent directory must exist.
    BundleWriter(std::filesystem::path target, bool overwrite);
    ~BundleWriter();
    BundleWriter(const BundleWriter&) = delete;
    BundleWriter& operator=(const BundleWriter&) = delete;

    void add(const std::string& relativePath, std::string_view bytes);
    bool contains(const std::string& relativePath) const { return m_files.count(relativePath) > 0; }
    const std::filesystem::path& target() const { return m_target; }
    const std::filesystem::path& temporaryDirectory() const { return m_temp; }

    // key may be null (unsigned bundle).
    void commit(const SigningKey* key);

private:
    void writeFile(const std::string& relativePath, std::string_view bytes);

    std::filesystem::path m_target;
    std::filesystem::path m_temp;
    bool m_overwrite = false;
    bool m_committed = false;
    std::set<std::string> m_files;
    std::set<std::string> m_dirs;
    std::string m_manifest; // "sha256  path\n" per file, in add() order; sorted at commit
};

// Adds snapshot.json, the CSV files, charts/*.svg and report.html. extraImages are files the
// caller adds itself (the console's chart PNGs): the report shows them instead of the SVGs.
// Sets data.signingKeyFingerprint from key (may be null).
void addSnapshotFiles(BundleWriter& writer, SnapshotData& data, const SigningKey* key,
    const std::vector<ReportImage>& extraImages = {}, const SnapshotProgress& progress = {});

// idemctl's whole export after readSnapshot(): every file, then commit.
void writeSnapshotBundle(const std::filesystem::path& target, SnapshotData data, bool overwrite, const SigningKey* key,
    const SnapshotProgress& progress = {});

enum class SignatureState {
    Unsigned, // no MANIFEST.sig and no public key
    Valid, // the signature matches the bundle's own public key
    Invalid, // it does not, or the signature file is malformed
    Incomplete, // a signature without a key, a key without a signature, or snapshot.json says signed and it is not
};

struct BundleVerification {
    std::vector<std::string> modified; // listed, present, different SHA-256
    std::vector<std::string> missing; // listed, absent
    std::vector<std::string> added; // present, not listed
    std::vector<std::string> problems; // MANIFEST unreadable or malformed, hostile paths, non-regular files
    SignatureState signature = SignatureState::Unsigned;
    std::string signatureDetail;
    std::optional<std::string> keyFingerprint; // of the bundle's public key
    bool trustedKeyGiven = false; // some key was trusted (a --pubkey, a trusted-keys file, the console's list)
    bool trustedKeyMatches = false; // the valid signature is by one of them
    std::optional<std::string> trustedKeyName; // its name, when it has one
    std::size_t filesChecked = 0;
    // What snapshot.json says against itself (operations/snapshotconsistency.h): events that
    // contradict the audit tail they cite, anything dated after taken_at. Each line names both
    // sides, its text escaped. A signature does not make a bundle's content true.
    std::vector<std::string> contradictions;
    std::size_t eventsChecked = 0;
    std::size_t eventsBeforeTail = 0;

    // Every file matches MANIFEST, and a signature, if any, is whole and matches it.
    bool intact() const;
    // snapshot.json agrees with itself (checked whether or not the files are intact).
    bool consistent() const { return contradictions.empty(); }
    // A valid signature by a key nobody trusted: self-consistent only, anyone may have re-signed.
    bool unknownSigner() const { return signature == SignatureState::Valid && !trustedKeyMatches; }
    // Every file matches and the content agrees with itself; a signed bundle is signed by a
    // trusted key (or allowUnknownSigner); with trusted keys given, an unsigned bundle fails too.
    bool ok(bool allowUnknownSigner = false) const;
    // What `idemctl snapshot verify` prints: one line per finding, naming the file.
    std::vector<std::string> report() const;
};

// MANIFEST as verifyBundle reads it: one "<sha256 in lowercase hex>  <path>\n" per file.
// listed maps each path to its hash; a line that is not of that form, names a path
// checkBundlePath refuses, lists MANIFEST or MANIFEST.sig, or repeats a path is left out and
// described in problems ("MANIFEST line 3: ..."), as is a missing final newline.
struct ManifestListing {
    std::map<std::string, std::string> listed;
    std::vector<std::string> problems;
};
ManifestListing parseManifest(std::string_view bytes);

// Checks every file against MANIFEST and the signature, and whether the signer is trusted.
// Throws BundleError when dir is not a directory.
BundleVerification verifyBundle(const std::filesystem::path& dir, const TrustedKeys& trusted);
// trustedPublicPem: the one key the bundle must be signed with. Throws BundleError when it is
// not an Ed25519 public key.
BundleVerification verifyBundle(const std::filesystem::path& dir, const std::optional<std::string>& trustedPublicPem);
TrustedKeys trustedKeysFromPem(const std::optional<std::string>& trustedPublicPem);

struct LoadedSnapshot {
    SnapshotData data;
    BundleVerification verification;
};

// What the console's snapshot viewer opens: the verification and snapshot.json as values,
// whether or not it verified (the viewer shows the findings). Throws BundleError when there
// is no snapshot.json, SnapshotFormatError when it cannot be read.
LoadedSnapshot openSnapshotBundle(const std::filesystem::path& dir, const TrustedKeys& trusted);
LoadedSnapshot openSnapshotBundle(const std::filesystem::path& dir, const std::optional<std::string>& trustedPublicPem);

} // namespace idem
