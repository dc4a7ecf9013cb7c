#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include "tests/support/cliprocess.h"

// Runs the built idemctl as a user would: exact output bytes and exit codes.
class TestDigestCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void run_data();
    void run();
    void sizeCap();
    void endlessInputEndsQuickly();
    void batch();

private:
    QTemporaryDir m_dir;
    QString m_request; // a request file
    QString m_otherTrace; // the same request with another trace id, in another key order
    QString m_bad; // not JSON
    QString m_nul; // a request, a NUL byte, another request
};

namespace {
const QByteArray requestText = "{\n  \"target\": \"acct-1\",\n  \"amount\": 100.0,\n  \"currency\": \"EUR\",\n"
                               "  \"meta\": {\"trace_id\": \"t-1\", \"source\": \"api\"}\n}\n";
const QByteArray otherTraceText
    = R"({"meta":{"source":"api","trace_id":"t-2"},"currency":"EUR","amount":1e2,"target":"acct-1"})";
const QByteArray canonicalText
    = R"({"amount":100,"currency":"EUR","meta":{"source":"api","trace_id":"t-1"},"target":"acct-1"})";
const QByteArray canonicalWithoutTrace = R"({"amount":100,"currency":"EUR","meta":{"source":"api"},"target":"acct-1"})";
// SHA-256 of canonicalWithoutTrace and of {"amount":100,"currency":"EUR","target":"acct-1"},
// computed with sha256sum, not with our code.
const QByteArray digestWithoutTrace = "v1:f75ea0e041273218facb0130488ff98159ce34a100319593e226359df64cb20c\n";
const QByteArray digestWithoutMeta = "v1:71c4903e7f7fe8d0e71020b0d8908da570aa02d6917aef672bca0dbeeee2541a\n";
// The issue's example: before the fix it digested as {"a":1}.
const QByteArray nulText("{\"a\":1}\0{\"b\":2} trailing garbage", 32);
const QByteArray nulReason = "idemctl digest: invalid JSON: unexpected byte 0x00 at offset 7 after the JSON document";
// The documented input limit of idemctl digest.
constexpr qint64 capBytes = 64 << 20;

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Run runIdemctl(const QStringList& args, const QByteArray& input = QByteArray())
{
    QProcess p;
    p.start(idem::test::idemctlPath(), QStringList { QStringLiteral("digest") } + args);
    if (!p.waitForStarted())
        return { -1, {}, p.errorString().toUtf8() };
    p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(30000) || p.exitStatus() != QProcess::NormalExit) {
        p.kill();
        p.waitForFinished();
        return { -1, {}, "idemctl did not finish normally" };
    }
    return { p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError() };
}

bool writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}
} // namespace

void TestDigestCli::initTestCase()
{
    QVERIFY(QFileInfo(idem::test::idemctlPath()).isExecutable());
    QVERIFY(m_dir.isValid());
    m_request = m_dir.filePath(QStringLiteral("request.json"));
    m_otherTrace = m_dir.filePath(QStringLiteral("other trace.json")); // a space in the name on purpose
    m_bad = m_dir.filePath(QStringLiteral("bad.json"));
    QVERIFY(writeFile(m_request, requestText));
    QVERIFY(writeFile(m_otherTrace, otherTraceText));
    QVERIFY(writeFile(m_bad, "{\"amount\": 100,"));
    m_nul = m_dir.filePath(QStringLiteral("nul.json"));
    QVERIFY(writeFile(m_nul, nulText));
}

void TestDigestCli::run_data()
{
    QTest::addColumn<QStringList>("args"); // @REQ, @OTHER and @BAD stand for the files
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QByteArray>("out");
    QTest::addColumn<QByteArray>("errContains");
    const auto args = [](std::initializer_list<const char*> list) {
        QStringList out;
        for (const char* a : list)
            out << QString::fromUtf8(a);
        return out;
    };
    // --canonical prints the canonical bytes and nothing else: no trailing newline.
    QTest::addRow("canonical file") << args({ "--canonical", "@REQ" }) << QByteArray() << 0 << canonicalText
                                    << QByteArray();
    QTest::addRow("canonical stdin") << args({ "--canonical" }) << requestText << 0 << canonicalText << QByteArray();
    QTest::addRow("canonical dash") << args({ "--canonical", "-" }) << requestText << 0 << canonicalText
                                    << QByteArray();
    QTest::addRow("canonical ignore") << args({ "--canonical", "--ignore", "meta.trace_id", "@REQ" }) << QByteArray()
                                      << 0 << canonicalWithoutTrace << QByteArray();
    QTest::addRow("digest ignore file") << args({ "--ignore", "meta.trace_id", "@REQ" }) << QByteArray() << 0
                                        << digestWithoutTrace << QByteArray();
    QTest::addRow("digest ignore other trace")
        << args({ "@OTHER", "--ignore=meta.trace_id" }) << QByteArray() << 0 << digestWithoutTrace << QByteArray();
    QTest::addRow("digest ignore stdin") << args({ "--ignore", "meta.trace_id" }) << otherTraceText << 0
                                         << digestWithoutTrace << QByteArray();
    QTest::addRow("digest ignore twice") << args({ "--ignore", "meta", "--ignore", "nope", "@REQ" }) << QByteArray()
                                         << 0 << digestWithoutMeta << QByteArray();
    QTest::addRow("bad JSON file") << args({ "@BAD" }) << QByteArray() << 1 << QByteArray()
                                   << QByteArray("idemctl digest: invalid JSON: parse error at line 1, column 16");
    QTest::addRow("bad JSON stdin") << args({ "--canonical" }) << QByteArray("[1,]") << 1 << QByteArray()
                                    << QByteArray("invalid JSON");
    QTest::addRow("duplicate key") << args({}) << QByteArray(R"({"a":1,"a":2})") << 1 << QByteArray()
                                   << QByteArray("duplicate key \"a\"");
    QTest::addRow("empty stdin") << args({}) << QByteArray() << 1 << QByteArray() << QByteArray("invalid JSON");
    QTest::addRow("missing file") << args({ "/nonexistent/idem.json" }) << QByteArray() << 1 << QByteArray()
                                  << QByteArray("cannot open /nonexistent/idem.json");
    QTest::addRow("unknown option") << args({ "--bogus", "@REQ" }) << QByteArray() << 2 << QByteArray()
                                    << QByteArray("unknown option --bogus");
    QTest::addRow("ignore without value")
        << args({ "@REQ", "--ignore" }) << QByteArray() << 2 << QByteArray() << QByteArray("--ignore needs a value");
    QTest::addRow("bad ignore path") << args({ "--ignore", "meta..x", "@REQ" }) << QByteArray() << 2 << QByteArray()
                                     << QByteArray("empty path segment");
    QTest::addRow("bad ignore beats bad JSON") << args({ "--ignore", "", "@BAD" }) << QByteArray() << 2 << QByteArray()
                                               << QByteArray("ignored field name is empty");
    QTest::addRow("NUL in a file") << args({ "@NUL" }) << QByteArray() << 1 << QByteArray() << nulReason;
    QTest::addRow("NUL on stdin") << args({}) << nulText << 1 << QByteArray() << nulReason;
    QTest::addRow("NUL on stdin, canonical") << args({ "--canonical", "-" }) << nulText << 1 << QByteArray()
                                             << nulReason;
    QTest::addRow("garbage after the request")
        << args({}) << QByteArray("{\"a\":1}\n x") << 1 << QByteArray()
        << QByteArray("invalid JSON: unexpected byte 0x78 ('x') at offset 9 after the JSON document");
    QTest::addRow("two files") << args({ "@REQ", "@OTHER" }) << QByteArray() << 2 << QByteArray()
                               << QByteArray("at most one FILE");
}

void TestDigestCli::run()
{
    QFETCH(QStringList, args);
    QFETCH(QByteArray, input);
    QFETCH(int, exitCode);
    QFETCH(QByteArray, out);
    QFETCH(QByteArray, errContains);
    for (auto& a : args) {
        if (a == QLatin1String("@REQ"))
            a = m_request;
        else if (a == QLatin1String("@OTHER"))
            a = m_otherTrace;
        else if (a == QLatin1String("@BAD"))
            a = m_bad;
        else if (a == QLatin1String("@NUL"))
            a = m_nul;
    }
    args.prepend(QStringLiteral("digest"));

    QProcess p;
    p.start(idem::test::idemctlPath(), args);
    QVERIFY2(p.waitForStarted(), qPrintable(p.errorString()));
    p.write(input);
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    const QByteArray err = p.readAllStandardError();
    QCOMPARE(p.readAllStandardOutput(), out);
    QVERIFY2(p.exitCode() == exitCode, err.constData());
    if (errContains.isEmpty())
        QVERIFY2(err.isEmpty(), err.constData());
    else
        QVERIFY2(err.contains(errContains), err.constData());
}

void TestDigestCli::sizeCap()
{
    // Exactly the limit is read; one byte more is refused before parsing, by name.
    const QString path = m_dir.filePath(QStringLiteral("big.json"));
    QByteArray text = QByteArray(capBytes, ' ');
    text[0] = '1';
    QVERIFY(writeFile(path, text));
    auto r = runIdemctl({ QStringLiteral("--canonical"), path });
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(r.out, QByteArray("1"));

    QFile f(path);
    QVERIFY(f.open(QIODevice::Append));
    QCOMPARE(f.write(" "), qint64(1));
    f.close();
    r = runIdemctl({ path });
    QCOMPARE(r.exitCode, 1);
    QCOMPARE(r.out, QByteArray());
    QVERIFY2(r.err.contains("is larger than 64 MiB"), r.err.constData());
    QVERIFY2(r.err.contains(path.toUtf8()), r.err.constData());

    r = runIdemctl({}, text + ' ');
    QCOMPARE(r.exitCode, 1);
    QCOMPARE(r.out, QByteArray());
    QVERIFY2(r.err.contains("standard input is larger than 64 MiB"), r.err.constData());
    QFile::remove(path);
}

void TestDigestCli::endlessInputEndsQuickly()
{
    // Before the cap, /dev/zero was read until memory ran out (bad_alloc under a 2 GB ulimit).
    QElapsedTimer timer;
    timer.start();
    const auto r = runIdemctl({ QStringLiteral("/dev/zero") });
    QCOMPARE(r.exitCode, 1);
    QCOMPARE(r.out, QByteArray());
    QVERIFY2(r.err.startsWith("idemctl digest: /dev/zero is larger than 64 MiB"), r.err.constData());
    QVERIFY2(timer.elapsed() < 10000, qPrintable(QString::number(timer.elapsed())));
}

// Issue 30: the batch protocol the Python and TypeScript clients answer too (clients/crosscheck.sh):
// one base64 document per line in, one answer per line out, refusals by kind.
void TestDigestCli::batch()
{
    const QByteArray documents[] = { otherTraceText, QByteArray(), nulText, QByteArray(R"({"a":1,"a":2})"),
        QByteArray("[\"\\ud800\"]"), QByteArray("[\"\xff\"]"), QByteArray("[1e999]"),
        QByteArray(513, '['), QByteArray("[1,]"), QByteArray(" \n") };
    QByteArray input;
    for (const auto& d : documents)
        input += d.toBase64() + '\n';
    const Run r = runIdemctl({ QStringLiteral("--batch"), QStringLiteral("--ignore"), QStringLiteral("meta.trace_id") },
                             input);
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.err, QByteArray());
    const QList<QByteArray> lines = r.out.split('\n');
    QCOMPARE(lines.size(), 11); // ten answers and the empty rest after the last newline
    QCOMPARE(lines[0], "ok " + canonicalWithoutTrace.toBase64() + ' ' + digestWithoutTrace.trimmed());
    QCOMPARE(lines[1], QByteArray("err empty"));
    QCOMPARE(lines[2], QByteArray("err trailing_data"));
    QCOMPARE(lines[3], QByteArray("err duplicate_key"));
    QCOMPARE(lines[4], QByteArray("err lone_surrogate"));
    QCOMPARE(lines[5], QByteArray("err invalid_utf8"));
    QCOMPARE(lines[6], QByteArray("err number_range"));
    QCOMPARE(lines[7], QByteArray("err depth"));
    QCOMPARE(lines[8], QByteArray("err syntax"));
    QCOMPARE(lines[9], QByteArray("err empty"));

    const Run bad = runIdemctl({ QStringLiteral("--batch") }, "e30=\n!!!\n");
    QCOMPARE(bad.exitCode, 1);
    QVERIFY2(bad.err.contains("line 2 is not base64"), bad.err.constData());
    QVERIFY2(runIdemctl({ QStringLiteral("--batch"), QStringLiteral("--canonical") }).exitCode == 2, "usage error");
}

QTEST_GUILESS_MAIN(TestDigestCli)
#include "tst_digestcli.moc"
