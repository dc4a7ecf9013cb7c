#include <QtTest>

#include <QTemporaryDir>
#include <sys/stat.h>

#include "operations/signing.h"

// Ed25519 through OpenSSL EVP: what a snapshot signature rests on. The key file is the
// secret: it must be written 0600 and a key anyone else can read is refused.
class TestSigning : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void signAndVerify();
    void tamperedMessageOrSignatureFails();
    void otherKeyFails();
    void pemRoundTrip();
    void fingerprintIgnoresPemWrapping();
    void saveWritesOwnerOnlyAndRefusesOverwrite();
    void loadRefusesOpenPermissionsAndGarbage();
    void defaultPathFollowsXdg();
    void base64RoundTripAndRejects_data();
    void base64RoundTripAndRejects();
};

void TestSigning::signAndVerify()
{
    const auto key = idem::SigningKey::generate();
    const std::string message = "abc  snapshot.json\n";
    const auto sig = key.sign(message);
    QCOMPARE(sig.size(), std::size_t(64));
    QVERIFY(idem::verifyEd25519(key.publicPem(), message, sig));
    // Ed25519 is deterministic: the same key and message give the same signature.
    QCOMPARE(key.sign(message), sig);
}

void TestSigning::tamperedMessageOrSignatureFails()
{
    const auto key = idem::SigningKey::generate();
    std::string message = "0123456789abcdef  report.html\n";
    auto sig = key.sign(message);
    for (std::size_t i = 0; i < message.size(); i += 7) {
        auto m = message;
        m[i] = static_cast<char>(m[i] ^ 0x01);
        QVERIFY2(!idem::verifyEd25519(key.publicPem(), m, sig), qPrintable(QString::number(i)));
    }
    for (std::size_t i = 0; i < sig.size(); i += 5) {
        auto s = sig;
        s[i] = static_cast<char>(s[i] ^ 0x80);
        QVERIFY(!idem::verifyEd25519(key.publicPem(), message, s));
    }
    QVERIFY(!idem::verifyEd25519(key.publicPem(), message, sig.substr(0, 63)));
    QVERIFY(!idem::verifyEd25519(key.publicPem(), message, ""));
}

void TestSigning::otherKeyFails()
{
    const auto a = idem::SigningKey::generate();
    const auto b = idem::SigningKey::generate();
    QVERIFY(a.publicPem() != b.publicPem());
    QVERIFY(!idem::verifyEd25519(b.publicPem(), "m", a.sign("m")));
    QVERIFY(idem::publicKeyFingerprint(a.publicPem()) != idem::publicKeyFingerprint(b.publicPem()));
    QVERIFY_THROWS_EXCEPTION(idem::SigningError, idem::verifyEd25519("not a key", "m", a.sign("m")));
}

void TestSigning::pemRoundTrip()
{
    const auto key = idem::SigningKey::generate();
    const auto pem = key.privatePem();
    QVERIFY(pem.rfind("-----BEGIN PRIVATE KEY-----", 0) == 0);
    const auto again = idem::SigningKey::fromPrivatePem(pem);
    QCOMPARE(again.publicPem(), key.publicPem());
    QVERIFY(idem::verifyEd25519(key.publicPem(), "x", again.sign("x")));
    QVERIFY(key.publicPem().rfind("-----BEGIN PUBLIC KEY-----", 0) == 0);
    QVERIFY_THROWS_EXCEPTION(idem::SigningError, idem::SigningKey::fromPrivatePem(key.publicPem()));
}

void TestSigning::fingerprintIgnoresPemWrapping()
{
    const auto key = idem::SigningKey::generate();
    const auto pem = key.publicPem();
    const auto fp = idem::publicKeyFingerprint(pem);
    QCOMPARE(fp.size(), std::size_t(64));
    QCOMPARE(idem::publicKeyFingerprint("\n" + pem + "\n"), fp);
}

void TestSigning::saveWritesOwnerOnlyAndRefusesOverwrite()
{
    QTemporaryDir dir;
    const std::filesystem::path file = dir.filePath(QStringLiteral("cfg/idem/k.key")).toStdString();
    const auto key = idem::SigningKey::generate();
    key.save(file, false);
    struct stat st { };
    QCOMPARE(::stat(file.c_str(), &st), 0);
    QCOMPARE(st.st_mode & 0777, 0600u);
    QCOMPARE(::stat(file.parent_path().c_str(), &st), 0);
    QCOMPARE(st.st_mode & 0777, 0700u);
    QCOMPARE(idem::SigningKey::load(file).publicPem(), key.publicPem());

    const auto other = idem::SigningKey::generate();
    QVERIFY_THROWS_EXCEPTION(idem::SigningError, other.save(file, false));
    QCOMPARE(idem::SigningKey::load(file).publicPem(), key.publicPem()); // unchanged
    other.save(file, true);
    QCOMPARE(idem::SigningKey::load(file).publicPem(), other.publicPem());
    QCOMPARE(::stat(file.c_str(), &st), 0);
    QCOMPARE(st.st_mode & 0777, 0600u);
    // No temporary file is left beside it.
    QCOMPARE(QDir(dir.filePath(QStringLiteral("cfg/idem"))).entryList(QDir::Files | QDir::Hidden).size(), 1);
}

void TestSigning::loadRefusesOpenPermissionsAndGarbage()
{
    QTemporaryDir dir;
    const std::filesystem::path file = dir.filePath(QStringLiteral("k.key")).toStdString();
    idem::SigningKey::generate().save(file, false);
    ::chmod(file.c_str(), 0644);
    try {
        idem::SigningKey::load(file);
        QFAIL("a world-readable key was loaded");
    } catch (const idem::SigningError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("0644")), e.what());
    }
    const std::filesystem::path garbage = dir.filePath(QStringLiteral("g.key")).toStdString();
    {
        QFile f(QString::fromStdString(garbage.string()));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("not a key\n");
        f.setPermissions(QFile::ReadOwner | QFile::WriteOwner);
    }
    QVERIFY_THROWS_EXCEPTION(idem::SigningError, idem::SigningKey::load(garbage));
    try {
        idem::SigningKey::load(dir.filePath(QStringLiteral("absent.key")).toStdString());
        QFAIL("a missing key was loaded");
    } catch (const idem::SigningError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("keygen")), e.what());
    }
}

void TestSigning::defaultPathFollowsXdg()
{
    const QByteArray oldXdg = qgetenv("XDG_CONFIG_HOME");
    qputenv("XDG_CONFIG_HOME", "/tmp/xdg-test");
    QCOMPARE(QString::fromStdString(idem::defaultSigningKeyPath().string()),
        QStringLiteral("/tmp/xdg-test/idem/snapshot-signing.key"));
    qunsetenv("XDG_CONFIG_HOME");
    QCOMPARE(QString::fromStdString(idem::defaultSigningKeyPath().string()),
        QString::fromLocal8Bit(qgetenv("HOME")) + QStringLiteral("/.config/idem/snapshot-signing.key"));
    if (!oldXdg.isNull())
        qputenv("XDG_CONFIG_HOME", oldXdg);
}

void TestSigning::base64RoundTripAndRejects_data()
{
    QTest::addColumn<QByteArray>("raw");
    QTest::addColumn<QByteArray>("encoded");
    // RFC 4648 section 10 test vectors.
    QTest::addRow("empty") << QByteArray() << QByteArray();
    QTest::addRow("f") << QByteArray("f") << QByteArray("Zg==");
    QTest::addRow("fo") << QByteArray("fo") << QByteArray("Zm8=");
    QTest::addRow("foo") << QByteArray("foo") << QByteArray("Zm9v");
    QTest::addRow("foob") << QByteArray("foob") << QByteArray("Zm9vYg==");
    QTest::addRow("fooba") << QByteArray("fooba") << QByteArray("Zm9vYmE=");
    QTest::addRow("foobar") << QByteArray("foobar") << QByteArray("Zm9vYmFy");
    QTest::addRow("binary") << QByteArray("\xff\x00\xfe", 3) << QByteArray("/wD+");
}

void TestSigning::base64RoundTripAndRejects()
{
    QFETCH(QByteArray, raw);
    QFETCH(QByteArray, encoded);
    QCOMPARE(QByteArray::fromStdString(idem::base64Encode(raw.toStdString())), encoded);
    QCOMPARE(QByteArray::fromStdString(idem::base64Decode(encoded.toStdString() + "\n")), raw);
    // "Zh==" and "Zm9=" carry set bits past the last byte: they decode to "f" and "fo" as the
    // canonical "Zg==" and "Zm8=" do, so one signature would have many spellings (found by
    // fuzz_bundle with "45==").
    for (const char* bad : { "Zg=", "Z===", "Zm9*", "=Zm9", "Zg==Zg==", "Zh==", "Zm9=", "45==", "Zm9vYh==" })
        QVERIFY_THROWS_EXCEPTION(idem::SigningError, idem::base64Decode(bad));
}

QTEST_GUILESS_MAIN(TestSigning)
#include "tst_signing.moc"
