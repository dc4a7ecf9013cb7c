#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/signing.h"
#include "operations/snapshot.h"
#include "operations/snapshotbundle.h"
#include "operations/snapshotjson.h"
#include "operations/trustedkeys.h"

namespace idem::cli {

namespace {
    constexpr const char* snapshotHelp = R"(Usage: idemctl snapshot export --out DIR [OPTIONS]
       idemctl snapshot verify DIR [--pubkey FILE]... [--trusted-keys FILE] [--allow-unknown-signer]
       idemctl snapshot show DIR [the same trust options]
       idemctl snapshot keygen [--key FILE] [--force]
       idemctl snapshot pubkey [--key FILE]

An incident snapshot is one read-only REPEATABLE READ read of the dashboard figures, the
counters history, the rows that matter (expired leases, longest-running, failed, uncertain,
waiting to retry; each bounded, the bound stated), processing over the history window, the
pauses and recovery jobs, who held back the transaction horizon (schema v26), recent digest
conflicts and the audit tail with its chain head, written as a directory: snapshot.json, CSV files, SVG charts, report.html and a MANIFEST
of SHA-256 sums, optionally signed with Ed25519. The format: docs/snapshot-format.md.

export
  --dsn DSN          libpq conninfo, URI or service=NAME (default: $IDEM_DSN, then PG*);
                     stored in the bundle without any password
  --schema S         schema holding the Idem tables (default: idem)
  --out DIR          the bundle directory to create (must not exist)
  --force            replace DIR if it is a previous bundle (holds a MANIFEST)
  --window MIN       minutes of counters behind the figures and recent conflicts (default 15)
  --history MIN      minutes of counters history for the charts (default 60)
  --long-after MIN   unfinished and first seen this long ago is long-unfinished (default 60)
  --tenant T         only keys (and counters) of this tenant
  --operation O      only keys (and counters) of this operation
  --limit N          rows per row set (default 1000)
  --audit-limit N    newest audit entries (default 200)
  --timeout-ms MS    statement timeout (default 30000)
  --redact           replace result_json and error messages by their SHA-256 and length
  --sign             sign the MANIFEST with the Ed25519 key (--key, default
                     $XDG_CONFIG_HOME/idem/snapshot-signing.key; make one with keygen)
  --key FILE         the private key to sign with (implies --sign)
  --quiet            no progress on stderr

verify DIR           check every file against MANIFEST and the signature; names every edited,
                     added or removed file; holds snapshot.json against itself (events against
                     the audit entries they cite, nothing dated after taken_at); exit 1 on any
                     finding, and on a signature by a key not trusted (a bundle carries its
                     signer's key: anyone may re-sign it)
  --pubkey FILE      a public key (PEM) trusted to sign; repeat for several
  --trusted-keys F   a file of trusted keys: "<SHA-256 fingerprint> <name>" lines and/or PEM
                     blocks named by the "# name" line before them. Without --pubkey and
                     --trusted-keys: $XDG_CONFIG_HOME/idem/trusted-keys (~/.config/idem/...)
                     if it exists. With any trusted key, an unsigned bundle fails too
  --allow-unknown-signer
                     accept a valid signature by an untrusted key (still reported)

show DIR             verify, then print the snapshot's figures and row sets

keygen               create an Ed25519 signing key (mode 0600) and print its public key
  --key FILE         where (default $XDG_CONFIG_HOME/idem/snapshot-signing.key)
  --force            replace an existing key

pubkey               print the public key of the signing key (give it to whoever verifies)
)";

    std::atomic<bool> g_cancel { false };
    void onSignal(int) { g_cancel.store(true); }

    std::string readText(const std::string& path)
    {
        std::ifstream in(path, std::ios::binary);
        if (!in)
            throw std::runtime_error("cannot read " + path);
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    }

    // ID:HASH, as `idemctl audit verify --expect-head` takes it.
    std::string auditHead(const SnapshotAudit& a)
    {
        return a.headId && a.headHash ? std::to_string(*a.headId) + ':' + *a.headHash : std::string("(none)");
    }

    std::filesystem::path keyPath(const Args& args)
    {
        if (const auto k = args.value("key"))
            return *k;
        return defaultSigningKeyPath();
    }

    int runExport(const std::vector<std::string>& argv)
    {
        Args args(argv,
            { "dsn", "schema", "out", "window", "history", "long-after", "tenant", "operation", "limit", "audit-limit",
                "timeout-ms", "key" },
            { "force", "redact", "sign", "quiet" });
        if (!args.positional().empty())
            throw UsageError("unexpected argument '" + args.positional().front() + "'");
        const auto out = args.value("out");
        if (!out)
            throw UsageError("--out DIR is required");
        SnapshotOptions options;
        options.schema = SchemaName(args.valueOr("schema", SchemaName::defaultName));
        options.stats.windowMinutes = static_cast<int>(args.intValue("window", 15, 1, 7 * 24 * 60));
        options.stats.longUnfinishedAfterMinutes = static_cast<int>(args.intValue("long-after", 60, 1, 365 * 24 * 60));
        options.stats.statementTimeoutMs = static_cast<int>(args.intValue("timeout-ms", 30000, 1, 3'600'000));
        options.stats.tenant = args.value("tenant");
        options.stats.operation = args.value("operation");
        options.historyMinutes = static_cast<int>(args.intValue("history", 60, 1, 7 * 24 * 60));
        options.rowLimit = static_cast<int>(args.intValue("limit", 1000, 1, 1'000'000));
        options.auditLimit = static_cast<int>(args.intValue("audit-limit", 200, 1, 1'000'000));
        options.redact = args.flag("redact");

        // The key first: a missing key must not cost a database read.
        std::optional<SigningKey> key;
        if (args.flag("sign") || args.value("key"))
            key = SigningKey::load(keyPath(args));

        const bool quiet = args.flag("quiet");
        SnapshotProgress progress;
        progress.cancel = &g_cancel;
        if (!quiet)
            progress.progress = [](std::string_view stage, double fraction) {
                std::fprintf(stderr, "[%3d%%] %.*s\n", static_cast<int>(fraction * 100), static_cast<int>(stage.size()),
                    stage.data());
            };
        g_cancel.store(false);
        auto previousInt = std::signal(SIGINT, onSignal);
        auto previousTerm = std::signal(SIGTERM, onSignal);
        struct Restore {
            decltype(previousInt) i, t;
            ~Restore()
            {
                std::signal(SIGINT, i);
                std::signal(SIGTERM, t);
            }
        } restore { previousInt, previousTerm };

        SnapshotContext context;
        context.producer = std::string("idemctl ") + IDEM_VERSION;
        context.conninfo = dsnFrom(args);
        try {
            auto conn = connect(context.conninfo, ConnectOptions { "idemctl snapshot" });
            // One progress line from 0 to 100 %: reading is the first half, writing the second.
            const auto half = [&](double base) {
                SnapshotProgress p = progress;
                if (progress.progress)
                    p.progress = [&progress, base](
                                     std::string_view stage, double f) { progress.progress(stage, base + f / 2); };
                return p;
            };
            auto data = readSnapshot(*conn, options, context, half(0.0));
            conn.reset();
            writeSnapshotBundle(*out, data, args.flag("force"), key ? &*key : nullptr, half(0.5));
            std::cout << "snapshot written to " << *out << " (taken at " << data.takenAt << ")\n";
            for (const auto& s : data.rowSets)
                std::cout << "  " << s.name << ": " << s.rows.size() << " of " << s.total << " rows"
                          << (s.truncated ? " (bound " + std::to_string(s.limit) + " reached)" : std::string()) << '\n';
            std::cout << "  audit: " << data.audit.tail.size() << " of " << data.audit.total << " entries, head "
                      << auditHead(data.audit) << '\n';
            if (key)
                std::cout << "signed with Ed25519 key " << publicKeyFingerprint(key->publicPem()) << '\n';
            return ExitOk;
        } catch (const SnapshotCancelled&) {
            std::cerr << "idemctl snapshot: cancelled; nothing was written to " << *out << '\n';
            return ExitFailure;
        }
    }

    const std::set<std::string> trustOptions { "trusted-keys" };

    // --pubkey FILE (repeated), --trusted-keys FILE, else the default file when it exists.
    TrustedKeys trustedKeys(const Args& args)
    {
        TrustedKeys keys;
        for (const auto& file : args.values("pubkey")) {
            try {
                keys.addPem(file, readText(file));
            } catch (const SigningError& e) {
                throw SigningError("--pubkey " + file + ": " + e.what());
            }
        }
        auto file = args.value("trusted-keys");
        if (!file && keys.empty()) {
            std::error_code ec;
            if (const auto def = defaultTrustedKeysPath(); def && std::filesystem::exists(*def, ec))
                file = def->string();
        }
        if (file)
            for (auto& k : parseTrustedKeys(readText(*file), *file).keys)
                keys.add(std::move(k));
        return keys;
    }

    std::string onePath(const Args& args, const char* what)
    {
        if (args.positional().size() != 1)
            throw UsageError(std::string(what) + " takes exactly one bundle directory");
        return args.positional().front();
    }

    int runVerifyBundle(const std::vector<std::string>& argv)
    {
        Args args(argv, trustOptions, { "allow-unknown-signer" }, { "pubkey" });
        const auto dir = onePath(args, "verify");
        const auto v = verifyBundle(dir, trustedKeys(args));
        const bool ok = v.ok(args.flag("allow-unknown-signer"));
        for (const auto& line : v.report())
            std::cout << line << '\n';
        std::cout << (ok ? "OK: " : "FAILED: ") << dir << ", " << v.filesChecked << " files checked against MANIFEST"
                  << (ok && v.unknownSigner() ? ", signed by an unknown key (accepted with --allow-unknown-signer)" : "")
                  << (v.consistent() ? std::string()
                                     : ", and its content contradicts itself (" + std::to_string(v.contradictions.size())
                              + " contradictions): whoever signed it, do not trust what it says")
                  << '\n';
        return ok ? ExitOk : ExitFailure;
    }

    int runShow(const std::vector<std::string>& argv)
    {
        Args args(argv, trustOptions, { "allow-unknown-signer" }, { "pubkey" });
        const auto dir = onePath(args, "show");
        const auto loaded = openSnapshotBundle(dir, trustedKeys(args));
        const bool ok = loaded.verification.ok(args.flag("allow-unknown-signer"));
        for (const auto& line : loaded.verification.report())
            std::cout << line << '\n';
        const auto& d = loaded.data;
        const auto& f = d.figures;
        // A bundle is anyone's file: its text reaches the terminal through displaySafe only.
        std::cout << (ok ? "verified" : "NOT VERIFIED") << "\n\nIdem snapshot (format "
                  << d.formatVersion << ") taken at " << displaySafe(d.takenAt, 80) << " by "
                  << displaySafe(d.producer, 200) << "\n  server " << displaySafe(d.serverVersion, 200)
                  << (d.inRecovery ? " (standby)" : "") << ", database " << displaySafe(d.database, 200) << ", schema "
                  << displaySafe(d.schema, 200) << " v" << d.schemaVersion << "\n  connection "
                  << displaySafe(d.conninfo, 400) << "\n  monitor role " << displaySafe(d.currentRole, 200)
                  << (d.redacted ? "\n  redacted: results and error messages" : "") << "\n\n";
        std::printf("  %-28s %lld\n  %-28s %lld\n  %-28s %lld\n  %-28s %lld\n  %-28s %lld\n  %-28s %lld\n",
            "processing", static_cast<long long>(f.processing), "expired leases",
            static_cast<long long>(f.expiredLeases), "retryable failed", static_cast<long long>(f.retryableFailed),
            "uncertain", static_cast<long long>(f.uncertain), "failed (permanent+exhausted)",
            static_cast<long long>(f.failedPermanent + f.failedExhausted), "digest conflicts (window)",
            static_cast<long long>(f.digestConflicts));
        std::fflush(stdout);
        for (const auto& s : d.rowSets)
            std::cout << "  rows " << displaySafe(s.name, 80) << ": " << s.rows.size() << " of " << s.total
                      << (s.truncated ? " (bound reached)" : "") << '\n';
        if (d.pauses)
            std::cout << "  pauses: "
                      << std::count_if(d.pauses->rows.begin(), d.pauses->rows.end(),
                             [](const SnapshotPause& p) { return p.active; })
                      << " in force, " << d.pauses->total << " listed" << (d.pauses->truncated ? " (bound reached)" : "")
                      << '\n';
        if (d.jobs)
            std::cout << "  recovery jobs: " << d.jobs->total << (d.jobs->truncated ? " (bound reached)" : "") << '\n';
        std::cout << "  audit: " << d.audit.total << " entries, head " << auditHead(d.audit) << '\n';
        return ok ? ExitOk : ExitFailure;
    }

    int runKeygen(const std::vector<std::string>& argv)
    {
        Args args(argv, { "key" }, { "force" });
        const auto path = keyPath(args);
        const auto key = SigningKey::generate();
        key.save(path, args.flag("force"));
        const auto pub = key.publicPem();
        std::cout << "signing key written to " << path.string() << " (mode 0600)\npublic key (SHA-256 "
                  << publicKeyFingerprint(pub) << "), give it to whoever verifies bundles:\n"
                  << pub;
        return ExitOk;
    }

    int runPubkey(const std::vector<std::string>& argv)
    {
        Args args(argv, { "key" }, {});
        std::cout << SigningKey::load(keyPath(args)).publicPem();
        return ExitOk;
    }
} // namespace

int runSnapshot(const std::vector<std::string>& argv)
{
    if (argv.empty())
        throw UsageError("a subcommand is required: export, verify, show, keygen or pubkey");
    const std::string sub = argv.front();
    const std::vector<std::string> rest(argv.begin() + 1, argv.end());
    if (sub == "--help" || sub == "-h" || sub == "help"
        || std::find(rest.begin(), rest.end(), std::string("--help")) != rest.end()) {
        std::cout << snapshotHelp;
        return ExitOk;
    }
    try {
        if (sub == "export")
            return runExport(rest);
        if (sub == "verify")
            return runVerifyBundle(rest);
        if (sub == "show")
            return runShow(rest);
        if (sub == "keygen")
            return runKeygen(rest);
        if (sub == "pubkey")
            return runPubkey(rest);
    } catch (const SigningError& e) {
        std::cerr << "idemctl snapshot " << sub << ": " << displaySafe(e.what(), messageDisplay) << '\n';
        return ExitFailure;
    } catch (const BundleError& e) {
        std::cerr << "idemctl snapshot " << sub << ": " << displaySafe(e.what(), messageDisplay) << '\n';
        return ExitFailure;
    } catch (const SnapshotFormatError& e) {
        std::cerr << "idemctl snapshot " << sub << ": " << displaySafe(e.what(), messageDisplay) << '\n';
        return ExitFailure;
    }
    throw UsageError("unknown subcommand '" + sub + "' (export, verify, show, keygen, pubkey)");
}

} // namespace idem::cli
