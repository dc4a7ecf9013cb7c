#include <QtTest>

#include <QCryptographicHash>
#include <QProcess>
#include <QTemporaryDir>
#include <nlohmann/json.hpp>

#include "operations/csv.h"
#include "operations/signing.h"
#include "operations/snapshotbundle.h"
#include "operations/snapshotconsistency.h"
#include "operations/snapshotjson.h"
#include "tests/support/bundleforge.h"

// The bundle without a database: what is written, that MANIFEST and the signature catch every
// edited, added or removed file by name, that a failed write leaves nothing, and that
// snapshot.json of another version or corrupted is refused with a clear reason.
class TestSnapshotBundle : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void writesEveryFileAndAManifestSha256sumAccepts();
    void flippedByteIsNamed_data();
    void flippedByteIsNamed();
    void deletedFileIsNamed_data();
    void deletedFileIsNamed();
    void addedFileIsNamed();
    void unsignedAndTrustedKeys();
    void strippedSignatureIsCaught();
    void trustedKeysFile();
    void hostileManifestPathsRejected();
    void failedOrCancelledWriteLeavesNothing();
    void existingTargetRefusedUnlessPreviousBundle();
    void jsonRoundTrip();
    void jsonVersionsAndCorruption();
    void csvRoundTrip();
    void eventsHeldAgainstTheAuditTail();
    void forgedAndResignedBundleFails();

private:
    QString bundle(bool sign); // a fresh bundle directory
    idem::BundleVerification verify(const QString& dir, bool trusted = false);

    idem::SnapshotData m_data;
    std::optional<idem::SigningKey> m_key;
    QTemporaryDir m_tmp;
    int m_n = 0;
};

namespace {
idem::SnapshotTaskRow row(const std::string& key, const std::string& status)
{
    idem::SnapshotTaskRow r;
    r.key = key;
    r.status = status;
    r.requestHash = "v1:" + std::string(64, 'a');
    r.errorMessage = "gateway said \"no\", twice\nsecond line";
    r.errorClass = "unknown";
    r.attempts = 2;
    r.maxAttempts = 5;
    r.createdAt = "2024-05-01T12:00:00.000000Z";
    r.updatedAt = "2024-05-01T12:01:00.000000Z";
    r.errorsJson = R"([{"at": "x", "class": "unknown", "attempt": 1, "message": "m"}])";
    return r;
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QString joined(const std::vector<std::string>& lines)
{
    QStringList out;
    for (const auto& l : lines)
        out << QString::fromStdString(l);
    return out.join(QLatin1Char('\n'));
}
} // namespace

void TestSnapshotBundle::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    m_key = idem::SigningKey::generate();
    auto& d = m_data;
    d.producer = "test";
    d.takenAt = "2024-05-01T12:30:15.123456Z";
    d.schema = "idem";
    d.windowMinutes = 15;
    d.longUnfinishedAfterMinutes = 60;
    d.historyMinutes = 30;
    d.conninfo = "host=db dbname=app user=reader";
    d.serverVersion = "16.2";
    d.serverVersionNum = 160002;
    d.database = "app";
    d.currentRole = d.sessionRole = "reader";
    d.memberReader = true;
    d.schemaVersion = d.schemaLatestKnown = 2;
    d.thresholds = { { "expired_leases", 1.0, 10.0 } };
    d.poll = idem::SnapshotPollSettings { 1000, 2000, 10000 };
    d.figures.expiredLeases = 1;
    d.figures.asOf = d.takenAt;
    d.figures.duplicateRatio = 0.25;
    d.figures.auditHeadId = 812;
    d.figures.auditHeadHash = std::string(64, 'e');
    idem::SnapshotRowSet set;
    set.name = "expired_leases";
    set.description = "d";
    set.order = "o";
    set.limit = 10;
    set.total = 1;
    set.rows = { row("t:charge:a,b", "processing") };
    set.rows[0].resultJson = R"({"receipt": "r-1"})";
    d.rowSets.push_back(set);
    set.name = "failed";
    set.rows = {};
    set.total = 0;
    d.rowSets.push_back(set);
    d.history = { "counters_history", "h", 100, 2, false,
        { { "2024-05-01T12:29:00.000000Z", "t", "charge", "acquired", 7 },
            { "2024-05-01T12:30:00.000000Z", "t", "charge", "conflict", 1 } } };
    d.conflicts = { "recent_conflicts", "c", 100, 1, false, { d.history.rows[1] } };
    d.audit = { 10, 1, false, 1, std::string(64, 'e'),
        { { 1, "2024-05-01T12:10:00.000000Z", "t:charge:a,b", "requeue", "stuck", "op", "alice", "host", "{}", "{}",
            std::string(64, '0'), std::string(64, 'e') } } };
}

QString TestSnapshotBundle::bundle(bool sign)
{
    const QString dir = m_tmp.filePath(QStringLiteral("b%1").arg(++m_n));
    idem::writeSnapshotBundle(dir.toStdString(), m_data, false, sign ? &*m_key : nullptr);
    return dir;
}

idem::BundleVerification TestSnapshotBundle::verify(const QString& dir, bool trusted)
{
    return idem::verifyBundle(dir.toStdString(), trusted ? std::optional(m_key->publicPem()) : std::nullopt);
}

void TestSnapshotBundle::writesEveryFileAndAManifestSha256sumAccepts()
{
    const QString dir = bundle(true);
    QStringList files;
    QDirIterator it(dir, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        files << QDir(dir).relativeFilePath(it.next());
    files.sort();
    QCOMPARE(files,
        QString::fromLatin1("MANIFEST MANIFEST.sig audit_tail.csv charts/claims.svg charts/completions.svg "
                            "charts/retries.svg counters_history.csv figures.csv recent_conflicts.csv report.html "
                            "rows/expired_leases.csv rows/failed.csv signing-key.pub.pem snapshot.json")
            .split(QLatin1Char(' ')));

    // MANIFEST: every other file, sorted, with its SHA-256 computed here independently.
    const auto lines = QString::fromUtf8(readAll(dir + QStringLiteral("/MANIFEST"))).split(QLatin1Char('\n'));
    QCOMPARE(lines.last(), QString());
    QCOMPARE(lines.size() - 1, files.size() - 2);
    QStringList listed;
    for (int i = 0; i + 1 < lines.size(); ++i) {
        const QString path = lines[i].mid(66);
        listed << path;
        QCOMPARE(lines[i].left(64),
            QString::fromLatin1(
                QCryptographicHash::hash(readAll(dir + QLatin1Char('/') + path), QCryptographicHash::Sha256).toHex()));
    }
    QStringList sorted = listed;
    sorted.sort();
    QCOMPARE(listed, sorted);

    // sha256sum, the tool an operator without Idem has, accepts it as is.
    QProcess p;
    p.setWorkingDirectory(dir);
    p.start(QStringLiteral("sha256sum"),
        { QStringLiteral("--check"), QStringLiteral("--strict"), QStringLiteral("MANIFEST") });
    QVERIFY(p.waitForFinished(10000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());

    const auto v = verify(dir, true);
    QVERIFY2(v.ok(), qPrintable(joined(v.report())));
    QCOMPARE(v.signature, idem::SignatureState::Valid);
    QVERIFY(v.trustedKeyMatches);
    QCOMPARE(v.filesChecked, std::size_t(12));
    const auto loaded = idem::openSnapshotBundle(dir.toStdString(), std::nullopt);
    QCOMPARE(loaded.data.signingKeyFingerprint.value_or(""), idem::publicKeyFingerprint(m_key->publicPem()));
    // Valid, but by a key nobody named: not verified unless the caller accepts an unknown signer.
    QVERIFY(loaded.verification.unknownSigner());
    QVERIFY(!loaded.verification.ok());
    QVERIFY(loaded.verification.ok(true));
    QVERIFY(joined(loaded.verification.report())
                .contains(QStringLiteral("SIGNATURE by an unknown key ")
                    + QString::fromStdString(idem::publicKeyFingerprint(m_key->publicPem()))));
    QVERIFY(readAll(dir + QStringLiteral("/report.html")).contains("t:charge:a,b"));
}

void TestSnapshotBundle::flippedByteIsNamed_data()
{
    QTest::addColumn<QString>("file");
    for (const char* f : { "snapshot.json", "report.html", "charts/claims.svg", "rows/expired_leases.csv",
             "rows/failed.csv", "audit_tail.csv", "figures.csv", "counters_history.csv", "recent_conflicts.csv",
             "signing-key.pub.pem", "MANIFEST", "MANIFEST.sig" })
        QTest::addRow("%s", f) << QString::fromLatin1(f);
}

void TestSnapshotBundle::flippedByteIsNamed()
{
    QFETCH(QString, file);
    const QString dir = bundle(true);
    QFile f(dir + QLatin1Char('/') + file);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QByteArray bytes = f.readAll();
    QVERIFY(!bytes.isEmpty());
    const qsizetype at = file == QStringLiteral("MANIFEST.sig") ? 3 : bytes.size() / 2;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x04);
    f.seek(0);
    f.write(bytes);
    f.close();

    const auto v = verify(dir);
    const QString report = joined(v.report());
    QVERIFY2(!v.ok(), qPrintable(report));
    if (file == QStringLiteral("MANIFEST") || file == QStringLiteral("MANIFEST.sig")) {
        QCOMPARE(v.signature, idem::SignatureState::Invalid);
        QVERIFY2(report.contains(QStringLiteral("MANIFEST")), qPrintable(report));
    } else {
        QCOMPARE(v.modified, std::vector<std::string> { file.toStdString() });
        QVERIFY2(report.contains(QStringLiteral("MODIFIED  ") + file), qPrintable(report));
    }
}

void TestSnapshotBundle::deletedFileIsNamed_data()
{
    QTest::addColumn<QString>("file");
    for (const char* f :
        { "snapshot.json", "rows/failed.csv", "charts/retries.svg", "signing-key.pub.pem", "MANIFEST", "MANIFEST.sig" })
        QTest::addRow("%s", f) << QString::fromLatin1(f);
}

void TestSnapshotBundle::deletedFileIsNamed()
{
    QFETCH(QString, file);
    const QString dir = bundle(true);
    QVERIFY(QFile::remove(dir + QLatin1Char('/') + file));
    const auto v = verify(dir);
    const QString report = joined(v.report());
    QVERIFY2(!v.ok(), qPrintable(report));
    QVERIFY2(report.contains(file), qPrintable(report));
    if (file != QStringLiteral("MANIFEST") && file != QStringLiteral("MANIFEST.sig"))
        QVERIFY(std::find(v.missing.begin(), v.missing.end(), file.toStdString()) != v.missing.end());
}

void TestSnapshotBundle::addedFileIsNamed()
{
    const QString dir = bundle(true);
    QFile f(dir + QStringLiteral("/rows/planted.csv"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("key\nx\n");
    f.close();
    const auto v = verify(dir);
    QVERIFY(!v.ok());
    QCOMPARE(v.added, std::vector<std::string> { "rows/planted.csv" });
    QVERIFY(joined(v.report()).contains(QStringLiteral("ADDED     rows/planted.csv")));
    QCOMPARE(v.signature, idem::SignatureState::Valid); // the listed files are untouched
}

void TestSnapshotBundle::unsignedAndTrustedKeys()
{
    const QString dir = bundle(false);
    auto v = verify(dir);
    QVERIFY2(v.ok(), qPrintable(joined(v.report())));
    QCOMPARE(v.signature, idem::SignatureState::Unsigned);
    QVERIFY(!QFile::exists(dir + QStringLiteral("/MANIFEST.sig")));
    // A trusted key demands a signature.
    v = verify(dir, true);
    QVERIFY(!v.ok());
    QVERIFY(joined(v.report()).contains(QStringLiteral("not signed")));
    // A bundle signed by another key fails against the trusted one, naming both keys' roles.
    const auto other = idem::SigningKey::generate();
    const QString otherDir = m_tmp.filePath(QStringLiteral("other"));
    idem::writeSnapshotBundle(otherDir.toStdString(), m_data, false, &other);
    QVERIFY(!verify(otherDir).ok());
    QVERIFY(verify(otherDir).ok(true));
    v = verify(otherDir, true);
    QVERIFY(!v.ok());
    QVERIFY(!v.trustedKeyMatches);
    QVERIFY(joined(v.report()).contains(QStringLiteral("unknown key ")
        + QString::fromStdString(idem::publicKeyFingerprint(other.publicPem())) + QStringLiteral(": none of the trusted keys")));
    // Among several trusted keys, named: the signer's name is reported.
    idem::TrustedKeys keys;
    keys.addPem("release box", m_key->publicPem());
    keys.addPem("night shift", other.publicPem());
    v = idem::verifyBundle(otherDir.toStdString(), keys);
    QVERIFY(v.ok());
    QCOMPARE(v.trustedKeyName.value_or(""), std::string("night shift"));
    QVERIFY(joined(v.report()).contains(QStringLiteral("by the trusted key \"night shift\"")));
}

void TestSnapshotBundle::trustedKeysFile()
{
    const auto other = idem::SigningKey::generate();
    const auto fpKey = idem::publicKeyFingerprint(m_key->publicPem());
    const auto fpOther = idem::publicKeyFingerprint(other.publicPem());
    std::string upper = fpOther;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    const auto keys = idem::parseTrustedKeys("# trusted here\n\n# release box\n" + m_key->publicPem() + "\n" + upper
            + "  night shift \n" + fpKey + " a repeat keeps the first name\n",
        "keys.txt");
    QCOMPARE(keys.keys.size(), std::size_t(2));
    QCOMPARE(keys.keys[0].name, std::string("release box"));
    QCOMPARE(keys.keys[0].fingerprint, fpKey);
    QCOMPARE(keys.keys[1].name, std::string("night shift"));
    QCOMPARE(keys.keys[1].fingerprint, fpOther);
    QCOMPARE(idem::parseTrustedKeys(idem::formatTrustedKeys(keys), "again").keys.size(), std::size_t(2));
    // Anything else is an error naming the file and line, not a key silently skipped.
    try {
        idem::parseTrustedKeys("# ok\nabc123 short\n", "keys.txt");
        QFAIL("a short fingerprint was accepted");
    } catch (const idem::SigningError& e) {
        QVERIFY2(std::string(e.what()).find("keys.txt line 2") != std::string::npos, e.what());
    }
    QVERIFY_THROWS_EXCEPTION(idem::SigningError, idem::parseTrustedKeys("-----BEGIN PUBLIC KEY-----\nAAAA\n", "k"));
}

void TestSnapshotBundle::strippedSignatureIsCaught()
{
    // Removing the signature and the key, and re-listing the MANIFEST without the key, is
    // caught by snapshot.json's own statement that the bundle was signed.
    const QString dir = bundle(true);
    QVERIFY(QFile::remove(dir + QStringLiteral("/MANIFEST.sig")));
    QVERIFY(QFile::remove(dir + QStringLiteral("/signing-key.pub.pem")));
    QFile m(dir + QStringLiteral("/MANIFEST"));
    QVERIFY(m.open(QIODevice::ReadOnly));
    QByteArray kept;
    for (const auto& line : m.readAll().split('\n'))
        if (!line.isEmpty() && !line.endsWith("signing-key.pub.pem"))
            kept += line + '\n';
    m.close();
    QVERIFY(m.open(QIODevice::WriteOnly | QIODevice::Truncate));
    m.write(kept);
    m.close();
    const auto v = verify(dir);
    QVERIFY(!v.ok());
    QCOMPARE(v.signature, idem::SignatureState::Incomplete);
    QVERIFY(joined(v.report()).contains(QStringLiteral("says the bundle was signed")));
}

void TestSnapshotBundle::hostileManifestPathsRejected()
{
    const QString dir = bundle(false);
    QFile m(dir + QStringLiteral("/MANIFEST"));
    QVERIFY(m.open(QIODevice::Append));
    const QByteArray hash(64, 'a');
    m.write(hash + "  ../outside\n" + hash + "  /etc/passwd\n" + hash + "  rows/../../x\n" + hash + "  rows//x\n");
    m.close();
    const auto v = verify(dir);
    QVERIFY(!v.ok());
    const QString report = joined(v.report());
    QCOMPARE(v.problems.size(), std::size_t(4));
    QVERIFY2(
        report.contains(QStringLiteral("'../outside'")) && report.contains(QStringLiteral("'/etc/passwd' is absolute")),
        qPrintable(report));
    QVERIFY(v.missing.empty()); // rejected paths are never looked up
    QVERIFY_THROWS_EXCEPTION(idem::BundleError, idem::checkBundlePath("a/./b"));
    QVERIFY_THROWS_EXCEPTION(idem::BundleError, idem::checkBundlePath("a\\b"));
    idem::checkBundlePath("charts/claims.png");
}

void TestSnapshotBundle::failedOrCancelledWriteLeavesNothing()
{
    const QString parent = m_tmp.filePath(QStringLiteral("atomic"));
    QVERIFY(QDir().mkpath(parent));
    const std::string target = QString(parent + QStringLiteral("/bundle")).toStdString();
    {
        idem::BundleWriter w(target, false);
        w.add("a.txt", "x");
        QVERIFY(QDir(QString::fromStdString(w.temporaryDirectory().string())).exists());
        QVERIFY_THROWS_EXCEPTION(idem::BundleError, w.add("a.txt", "again"));
        QVERIFY_THROWS_EXCEPTION(idem::BundleError, w.add("../escape", "x"));
        QVERIFY_THROWS_EXCEPTION(idem::BundleError, w.add("MANIFEST", "x"));
    } // an exception unwinding out of an export ends here too
    QCOMPARE(QDir(parent).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), QStringList());

    std::atomic<bool> cancel { false };
    idem::SnapshotProgress progress;
    progress.cancel = &cancel;
    QStringList stages;
    progress.progress = [&](std::string_view stage, double) {
        stages << QString::fromUtf8(stage.data(), static_cast<int>(stage.size()));
        if (stages.size() == 3)
            cancel = true;
    };
    QVERIFY_THROWS_EXCEPTION(
        idem::SnapshotCancelled, idem::writeSnapshotBundle(target, m_data, false, nullptr, progress));
    QCOMPARE(stages.size(), 3);
    QCOMPARE(QDir(parent).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), QStringList());

    // Uncancelled, the stages run to the end and the bundle appears under its name only.
    cancel = false;
    progress.progress = [&](std::string_view stage, double) {
        stages << QString::fromUtf8(stage.data(), static_cast<int>(stage.size()));
    };
    idem::writeSnapshotBundle(target, m_data, false, nullptr, progress);
    QCOMPARE(stages.last(), QStringLiteral("done"));
    QCOMPARE(QDir(parent).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
        QStringList { QStringLiteral("bundle") });
}

void TestSnapshotBundle::existingTargetRefusedUnlessPreviousBundle()
{
    const QString dir = bundle(false);
    try {
        idem::writeSnapshotBundle(dir.toStdString(), m_data, false, nullptr);
        QFAIL("an existing bundle was replaced without --force");
    } catch (const idem::BundleError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("--force")), e.what());
    }
    const QByteArray before = readAll(dir + QStringLiteral("/MANIFEST"));
    auto changed = m_data;
    changed.producer = "second";
    idem::writeSnapshotBundle(dir.toStdString(), changed, true, &*m_key);
    QVERIFY(readAll(dir + QStringLiteral("/MANIFEST")) != before);
    QVERIFY(verify(dir, true).ok());
    QCOMPARE(QDir(m_tmp.path())
                 .entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot)
                 .filter(QStringLiteral("partial")),
        QStringList());

    // A directory that is not a bundle is never replaced, even with --force; nor is a file.
    const QString plain = m_tmp.filePath(QStringLiteral("precious"));
    QVERIFY(QDir().mkpath(plain + QStringLiteral("/sub")));
    QVERIFY_THROWS_EXCEPTION(idem::BundleError, idem::writeSnapshotBundle(plain.toStdString(), m_data, true, nullptr));
    QVERIFY(QDir(plain + QStringLiteral("/sub")).exists());
    QVERIFY_THROWS_EXCEPTION(
        idem::BundleError, idem::writeSnapshotBundle("/nonexistent-dir/x", m_data, false, nullptr));
}

void TestSnapshotBundle::jsonRoundTrip()
{
    const auto text = idem::snapshotToJson(m_data);
    const auto back = idem::snapshotFromJson(text);
    QCOMPARE(back.formatVersion, idem::snapshotFormatVersion);
    QCOMPARE(idem::snapshotToJson(back), text);
    QCOMPARE(back.rowSets.size(), std::size_t(2));
    QCOMPARE(back.rowSets[0].rows[0].errorMessage, m_data.rowSets[0].rows[0].errorMessage);
    QVERIFY(!back.rowSets[0].rows[0].ownerToken);
    QCOMPARE(*back.figures.duplicateRatio, 0.25);
    QVERIFY(!back.figures.oldestProcessingAgeSeconds);
    QCOMPARE(back.figures.auditHeadId, std::int64_t(812));
    QCOMPARE(back.figures.auditHeadHash, std::string(64, 'e'));
    QCOMPARE(back.poll->wideRefreshMs, 10000);
    QCOMPARE(*back.thresholds[0].critical, 10.0);
}

void TestSnapshotBundle::jsonVersionsAndCorruption()
{
    auto j = nlohmann::json::parse(idem::snapshotToJson(m_data));
    const auto reason = [](const std::string& text) {
        try {
            idem::snapshotFromJson(text);
        } catch (const idem::SnapshotFormatError& e) {
            return QString::fromUtf8(e.what());
        }
        return QString();
    };
    auto newer = j;
    newer["format_version"] = 2;
    QVERIFY(reason(newer.dump()).contains(QStringLiteral("format version 2, newer than this Idem reads")));
    auto older = j;
    older["format_version"] = 0;
    QVERIFY(reason(older.dump()).contains(QStringLiteral("format version 0")));
    // Fields a later minor addition brings are ignored.
    auto extended = j;
    extended["figures"]["some_future_figure"] = 3;
    extended["future_section"] = { { "x", 1 } };
    QCOMPARE(reason(extended.dump()), QString());
    // Figures added within version 1 (the audit head) are absent from a bundle written before.
    auto before = j;
    before["figures"].erase("audit_head_id");
    before["figures"].erase("audit_head_hash");
    QCOMPARE(reason(before.dump()), QString());
    QCOMPARE(idem::snapshotFromJson(before.dump()).figures.auditHeadId, std::int64_t(0));
    QVERIFY(idem::snapshotFromJson(before.dump()).figures.auditHeadHash.empty());
    auto wrongType = j;
    wrongType["figures"]["processing"] = "many";
    QCOMPARE(reason(wrongType.dump()), QStringLiteral("snapshot.json: /figures/processing: expected an integer"));
    // An integer past int64 used to be read wrapped: 2^64-1 showed as -1 processing tasks.
    auto huge = j;
    huge["figures"]["processing"] = std::uint64_t { 18446744073709551615ULL };
    QCOMPARE(reason(huge.dump()), QStringLiteral("snapshot.json: /figures/processing: out of range"));
    huge["figures"]["processing"] = std::uint64_t { 9223372036854775807ULL };
    QCOMPARE(reason(huge.dump()), QString());
    auto missing = j;
    missing["row_sets"][0].erase("total");
    QCOMPARE(reason(missing.dump()), QStringLiteral("snapshot.json: /row_sets/0/total: missing"));
    auto other = j;
    other["format"] = "something-else";
    QVERIFY(reason(other.dump()).contains(QStringLiteral("not an Idem snapshot")));
    const auto text = idem::snapshotToJson(m_data);
    QVERIFY(reason(text.substr(0, text.size() / 2)).contains(QStringLiteral("not valid JSON")));
    QVERIFY(reason("[1,2]").contains(QStringLiteral("not a JSON object")));
    QVERIFY(reason("").contains(QStringLiteral("not valid JSON")));
    // The JSON reader used to stop at a NUL byte: whatever followed it went unread.
    const auto afterNul = reason(text + std::string(1, '\0') + "{\"format_version\": 99}");
    QVERIFY2(afterNul.contains(QStringLiteral("not valid JSON"))
            && afterNul.contains(
                QStringLiteral("unexpected byte 0x00 at offset %1 after the JSON document").arg(text.size())),
        qPrintable(afterNul));
    QVERIFY(reason(text + "\n]").contains(QStringLiteral("unexpected byte 0x5d (']') at offset %1").arg(text.size() + 1)));

    // A corrupted snapshot.json in a bundle: a clear error from opening it, and verify names it.
    const QString dir = bundle(false);
    QFile f(dir + QStringLiteral("/snapshot.json"));
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(QByteArray::fromStdString(text.substr(0, 100)));
    f.close();
    QVERIFY_THROWS_EXCEPTION(idem::SnapshotFormatError, idem::openSnapshotBundle(dir.toStdString(), std::nullopt));
    QCOMPARE(verify(dir).modified, std::vector<std::string> { "snapshot.json" });
}

void TestSnapshotBundle::csvRoundTrip()
{
    const std::vector<std::optional<std::string>> fields
        = { "plain", std::nullopt, std::string(), "a,b", "say \"hi\"", "two\nlines", "cr\rx", "tail" };
    const auto line = idem::csvLine(fields);
    QCOMPARE(QString::fromStdString(line),
        QStringLiteral("plain,,\"\",\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\"cr\rx\",tail\n"));
    const auto parsed = idem::parseCsv(line + idem::csvLine({ "x", std::nullopt }));
    QCOMPARE(parsed.size(), std::size_t(2));
    QVERIFY(parsed[0] == fields);
    QVERIFY(!parsed[1][1]);

    // The snapshot's row CSV: the header and one row per exported row, NULLs kept.
    const auto files = idem::snapshotCsvFiles(m_data);
    const auto it
        = std::find_if(files.begin(), files.end(), [](const auto& f) { return f.first == "rows/expired_leases.csv"; });
    QVERIFY(it != files.end());
    const auto rows = idem::parseCsv(it->second);
    QCOMPARE(rows.size(), std::size_t(2));
    QCOMPARE(rows[0][0].value_or(""), std::string("idempotency_key"));
    QCOMPARE(rows[1][0].value_or(""), std::string("t:charge:a,b"));
    QCOMPARE(rows[1][4], m_data.rowSets[0].rows[0].errorMessage);
    QVERIFY(!rows[1][6]); // owner_token NULL
    QCOMPARE(QString::fromStdString(idem::redactedText("abc")),
        QStringLiteral("redacted:sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad:3"));
}

namespace {
// m_data with events that agree with its audit tail: the requeue (entry 1) and a deploy.
idem::SnapshotData withEvents(idem::SnapshotData d)
{
    d.audit.tail.insert(d.audit.tail.begin(),
        { 2, "2024-05-01T12:20:00.500000Z", "", "annotate", "deploy v2 of charge", "op", "bob", "host", "{}",
            R"({"tenant": "*", "operation": "charge"})", std::string(64, 'e'), std::string(64, 'f') });
    d.audit.total = 2;
    d.audit.headId = 2;
    d.audit.headHash = std::string(64, 'f');
    d.events = idem::SnapshotEventSet { "events", 100, false,
        { { 1, "2024-05-01T12:10:00.000000Z", "requeue", "t", "charge", "op (alice)", "stuck" },
            { 7, "2024-05-01T12:15:00.000000Z", "deploy", "*", "*", "worker (w1)", "w1: 1.0 -> 1.1" },
            { 2, "2024-05-01T12:20:00.500000Z", "annotate", "*", "charge", "op (bob)", "deploy v2 of charge" } } };
    return d;
}

QString contradictions(const idem::SnapshotData& d)
{
    return joined(idem::checkSnapshotConsistency(d).contradictions);
}
} // namespace

// Issue 40: an event is held against the audit entry it cites and against taken_at; every finding
// names both sides and shows text escaped.
void TestSnapshotBundle::eventsHeldAgainstTheAuditTail()
{
    const auto good = withEvents(m_data);
    const auto ok = idem::checkSnapshotConsistency(good);
    QVERIFY2(ok.consistent(), qPrintable(joined(ok.contradictions)));
    QCOMPARE(ok.eventsChecked, std::size_t(2));

    // Another actor and text for the audited requeue.
    auto d = good;
    d.events->rows[0].actor = "op (mallory)";
    d.events->rows[0].text = "nothing happened";
    QString found = contradictions(d);
    QVERIFY2(found.contains(QStringLiteral("event 1 (requeue at 2024-05-01T12:10:00.000000Z) contradicts audit entry 1 "
                                           "of the hash-chained audit tail: actor \"op (mallory)\" where the entry "
                                           "has \"op (alice)\"; text \"nothing happened\" where the entry has \"stuck\"")),
        qPrintable(found));

    // A fail event after taken_at, with an escape sequence and an RTL override: both escaped.
    d = good;
    d.events->rows.push_back({ 0, "2024-05-01T12:31:00.000000Z", "fail", "t", "charge", "op (mallory)",
        "all clear \x1b[2J\xe2\x80\xae" "evil" });
    found = contradictions(d);
    QVERIFY2(found.contains(QStringLiteral("event 4 (fail at 2024-05-01T12:31:00.000000Z) by \"op (mallory)\", text "
                                           "\"all clear \\x1b[2J\\u202eevil\", is dated after the snapshot was taken "
                                           "(taken_at 2024-05-01T12:30:15.123456Z)")),
        qPrintable(found));
    QVERIFY(found.contains(QStringLiteral("event 4 (fail at 2024-05-01T12:31:00.000000Z) claims an operator's action")));
    QVERIFY(!found.contains(QChar(0x1b)) && !found.contains(QChar(0x202e)));

    // Another time, kind or scope; an entry past the head; an audited entry left out.
    d = good;
    d.events->rows[2].at = "2024-05-01T12:20:00.500001Z";
    d.events->rows[2].operation = "refund";
    QVERIFY(contradictions(d).contains(QStringLiteral("time \"2024-05-01T12:20:00.500001Z\" where the entry has "
                                                       "\"2024-05-01T12:20:00.500000Z\"; operation \"refund\" where the "
                                                       "entry has \"charge\"")));
    d = good;
    d.events->rows[2].auditId = 3;
    found = contradictions(d);
    QVERIFY2(found.contains(QStringLiteral("cites audit entry 3, past the audit chain's head (entry 2)")), qPrintable(found));
    QVERIFY2(found.contains(QStringLiteral("audit entry 2 (annotate by op (bob) at 2024-05-01T12:20:00.500000Z) is within "
                                           "the events' window and scope but no event shows it")),
        qPrintable(found));
    d = good;
    d.events->rows.erase(d.events->rows.begin());
    QVERIFY(contradictions(d).contains(QStringLiteral("audit entry 1 (requeue by op (alice)")));
    d.events->truncated = true; // cut at its bound: the newest may be missing, no finding
    QCOMPARE(contradictions(d), QString());
    // Outside the scope, nothing is missing; a deploy's id is not an audit entry's.
    d = good;
    d.events->rows.erase(d.events->rows.begin());
    d.tenant = "other";
    QCOMPARE(contradictions(d), QString());
    // An audit entry dated after taken_at.
    d = good;
    d.audit.tail.front().at = "2024-05-01T12:40:00.000000Z";
    QVERIFY(contradictions(d).contains(QStringLiteral("audit entry 2 (annotate by op) is dated 2024-05-01T12:40:00.000000Z, "
                                                       "after the snapshot was taken")));
}

// The whole bundle: forged, re-signed with the trusted key, it fails verify and opens flagged.
void TestSnapshotBundle::forgedAndResignedBundleFails()
{
    const QString dir = m_tmp.filePath(QStringLiteral("forged"));
    idem::writeSnapshotBundle(dir.toStdString(), withEvents(m_data), false, &*m_key);
    QVERIFY2(verify(dir, true).ok(), qPrintable(joined(verify(dir, true).report())));
    QVERIFY(joined(verify(dir, true).report()).contains(QStringLiteral("content: 2 events match the audit entries they cite")));

    QVERIFY(idem::test::editSnapshotJson(dir, [](nlohmann::json& j) {
        QCOMPARE(idem::test::forgeEvents(j, "op (mallory)", "nothing to see"), std::int64_t(1));
    }));
    QVERIFY(idem::test::resignBundle(dir, *m_key));
    const auto v = verify(dir, true);
    QVERIFY(v.intact());
    QVERIFY(v.trustedKeyMatches);
    QVERIFY(!v.ok());
    QVERIFY(!v.consistent());
    const QString report = joined(v.report());
    QVERIFY2(report.contains(QStringLiteral("CONTRADICTION in snapshot.json: event 1 (requeue at "
                                            "2024-05-01T12:10:00.000000Z) contradicts audit entry 1")),
        qPrintable(report));
    QVERIFY(report.contains(QStringLiteral("\\x1b[2J\\u202eevil")));
    QVERIFY(report.contains(QStringLiteral("after the snapshot was taken")));
    const auto loaded = idem::openSnapshotBundle(dir.toStdString(), m_key->publicPem());
    QCOMPARE(loaded.verification.contradictions, v.contradictions);
}

QTEST_GUILESS_MAIN(TestSnapshotBundle)
#include "tst_snapshotbundle.moc"
