#include <QtTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <pqxx/pqxx>

#include "schema/migrate.h"
#include "core/utf8.h"
#include "tests/support/cliprocess.h"
#include "tests/support/testdb.h"

// Issue 31, item 8: keys, reasons and messages that hold terminal and bidi controls (C0, the C1
// CSI U+009B, U+202E, U+2028, U+FEFF) reach a terminal, a CSV and a report from idemctl only as
// escapes; --json keeps them exact. Against a database where such keys were stored.
namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }

const std::vector<std::string>& hostileKeys()
{
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k = { "t:charge:\x1b]0;pwned\x07\x1b[2J",
            "t:charge:\xc2\x9b"
            "31mred",
            "t:charge:\xe2\x80\xae"
            "gpj.exe",
            "t:charge:a\xe2\x80\xa8"
            "forged line",
            "t:charge:\xef\xbb\xbf"
            "bom",
            "=HYPERLINK(\"http://evil.example\"):charge:1" };
        std::string longKey = "t:charge:" + std::string(91, 'x') + "\xe2\x80\xae" + "\xe2\x81\xa6";
        longKey.resize(1024, 'y');
        k.push_back(longKey);
        return k;
    }();
    return keys;
}

const std::string failReason = "=2+3 \xe2\x80\xae" "back";
const std::string hostileMessage = "=1+1 gateway \xc2\x9b"
                                   "2J said \xe2\x80\xae"
                                   "kO\r\x1b[1A";

// Every character a terminal or the bidi algorithm acts on, except the line breaks of the output.
QString firstDisplayControl(const QString& text)
{
    const auto points = text.toUcs4();
    for (char32_t cp : points)
        if (cp != U'\n' && idem::isDisplayControl(cp))
            return QStringLiteral("U+%1 in: ").arg(static_cast<uint>(cp), 4, 16, QLatin1Char('0')) + text.left(2000);
    return {};
}
} // namespace

class TestHostileText : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void tasksEscapesAndJsonIsExact();
    void actionsAndAuditEscape();
    void errorMessagesEscape();
    void snapshotCsvAndReportEscape();

private:
    idem::test::CliRun idemctl(const QStringList& args)
    {
        return idem::test::runProgram(
            idem::test::idemctlPath(), QStringList(args) << QStringLiteral("--dsn") << qs(m_db->dsn()), 60000);
    }
    std::unique_ptr<idem::test::ScratchDatabase> m_db;
};

void TestHostileText::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("hostiletext", idem::test::migrated);
    auto c = m_db->connect();
    idem::migrate(*c, { idem::SchemaName(), true });
    pqxx::work w(*c);
    for (const auto& k : hostileKeys())
        w.exec_params(
            "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts,"
            " error_class, error_message, errors, updated_at)"
            " VALUES ($1, 'v1:' || repeat('a', 64), 'failed', 1, 1, 'permanent', $2,"
            " jsonb_build_array(jsonb_build_object('attempt', 1, 'class', 'permanent', 'message', $2::text)),"
            " now())",
            k, hostileMessage);
    w.commit();
}

void TestHostileText::tasksEscapesAndJsonIsExact()
{
    auto run = idemctl({ QStringLiteral("tasks") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(firstDisplayControl(run.out).isEmpty(), qPrintable(firstDisplayControl(run.out)));
    for (const char* escape : { "\\x1b]0;pwned\\x07", "\\u009b31mred", "\\u202egpj.exe", "a\\u2028forged line",
             "\\ufeffbom", "gateway \\u009b2J said \\u202ekO\\x0d\\x1b[1A" })
        QVERIFY2(run.out.contains(QLatin1String(escape)), escape);
    // Seven rows, one line each (plus its error line): nothing forged a line of its own.
    QCOMPARE(run.out.count(QLatin1Char('\n')), 1 + 7 * 2);

    run = idemctl({ QStringLiteral("tasks"), QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto rows = QJsonDocument::fromJson(run.out.toUtf8()).object().value(QStringLiteral("rows")).toArray();
    QSet<QString> keys;
    for (const auto& r : rows) {
        keys.insert(r.toObject().value(QStringLiteral("key")).toString());
        QCOMPARE(r.toObject().value(QStringLiteral("error_message")).toString(), qs(hostileMessage));
    }
    QSet<QString> expected;
    for (const auto& k : hostileKeys())
        expected.insert(qs(k));
    QCOMPARE(keys, expected);
}

void TestHostileText::actionsAndAuditEscape()
{
    const std::string reason = "gateway fixed \xe2\x80\xae"
                               "24-CNI\xe2\x80\xa8"
                               "(not really)";
    QStringList args { QStringLiteral("requeue"), QStringLiteral("--reason"), qs(reason) };
    for (const auto& k : hostileKeys())
        args << qs(k);
    auto run = idemctl(args);
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(firstDisplayControl(run.out).isEmpty(), qPrintable(firstDisplayControl(run.out)));
    QVERIFY2(run.out.contains(QStringLiteral("applied  t:charge:\\u202egpj.exe")), qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("reason: gateway fixed \\u202e24-CNI\\u2028(not really)")),
        qPrintable(run.out));

    // Back to failed, for the snapshot's row set below, with a reason a spreadsheet would evaluate.
    args[0] = QStringLiteral("fail");
    args[2] = qs(failReason);
    QCOMPARE(idemctl(args).exitCode, 0);

    run = idemctl({ QStringLiteral("audit"), QStringLiteral("list"), QStringLiteral("--images") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(firstDisplayControl(run.out).isEmpty(), qPrintable(firstDisplayControl(run.out)));
    QVERIFY(run.out.contains(QStringLiteral("t:charge:\\u009b31mred")));
    QVERIFY(run.out.contains(QStringLiteral("reason: gateway fixed \\u202e24-CNI\\u2028(not really)")));

    run = idemctl({ QStringLiteral("audit"), QStringLiteral("list"), QStringLiteral("--json") });
    const auto entries = QJsonDocument::fromJson(run.out.toUtf8()).object().value(QStringLiteral("entries")).toArray();
    QCOMPARE(entries.size(), qsizetype(2 * hostileKeys().size()));
    for (const auto& e : entries) {
        const auto action = e.toObject().value(QStringLiteral("action")).toString();
        QCOMPARE(e.toObject().value(QStringLiteral("reason")).toString(),
            qs(action == QStringLiteral("fail") ? failReason : reason));
    }
}

void TestHostileText::errorMessagesEscape()
{
    // The server's own message quotes the database name it could not find.
    const std::string dsn = idem::test::dsnWith(m_db->dsn(),
        { { "dbname",
            "nope\xe2\x80\xae\xc2\x9b"
            "db" } });
    const auto run = idem::test::runProgram(
        idem::test::idemctlPath(), { QStringLiteral("tasks"), QStringLiteral("--dsn"), qs(dsn) }, 30000);
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(firstDisplayControl(run.err).isEmpty(), qPrintable(firstDisplayControl(run.err)));
    QVERIFY2(run.err.contains(QStringLiteral("nope\\u202e\\u009bdb")), qPrintable(run.err));
    // And a user's argument echoed in a usage error.
    const auto usage = idemctl({ QStringLiteral("audit"), QStringLiteral("list"), QStringLiteral("--since"),
        QStringLiteral("\u202Eyesterday") });
    QCOMPARE(usage.exitCode, 2);
    QVERIFY2(firstDisplayControl(usage.err).isEmpty() && usage.err.contains(QStringLiteral("\\u202eyesterday")),
        qPrintable(usage.err));
}

void TestHostileText::snapshotCsvAndReportEscape()
{
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("bundle"));
    const auto run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("export"), QStringLiteral("--out"), out });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto read = [&](const QString& name) {
        QFile f(out + QLatin1Char('/') + name);
        return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
    };
    for (const QString& name :
        { QStringLiteral("rows/failed.csv"), QStringLiteral("report.html"), QStringLiteral("audit_tail.csv") }) {
        const QString text = read(name);
        QVERIFY2(!text.isEmpty(), qPrintable(name));
        QVERIFY2(firstDisplayControl(text).isEmpty(), qPrintable(name + QLatin1Char(' ') + firstDisplayControl(text)));
    }
    const QString csv = read(QStringLiteral("rows/failed.csv"));
    QVERIFY2(csv.contains(QStringLiteral("\nt:charge:\\u202egpj.exe,failed,")), qPrintable(csv));
    // Formula injection: a key or message a spreadsheet would evaluate starts with '.
    QVERIFY2(csv.contains(QStringLiteral("\n\"'=HYPERLINK(\"\"http://evil.example\"\"):charge:1\",failed,")),
        qPrintable(csv));
    QVERIFY(csv.contains(QStringLiteral(",marked failed by an operator: =2+3 \\u202eback,permanent,")));
    QVERIFY(read(QStringLiteral("audit_tail.csv")).contains(QStringLiteral(",fail,'=2+3 \\u202eback,")));
    // The error list is JSON and stays JSON, with the control characters as JSON escapes.
    QVERIFY2(csv.contains(QStringLiteral("said \\u202ekO\\r\\u001b[1A")), qPrintable(csv));
    QVERIFY(read(QStringLiteral("report.html")).contains(QStringLiteral("t:charge:\\u202egpj.exe")));
    // snapshot.json is the exact record.
    QVERIFY(read(QStringLiteral("snapshot.json")).contains(QStringLiteral("t:charge:\u202Egpj.exe")));
}

QTEST_GUILESS_MAIN(TestHostileText)
#include "tst_hostiletext.moc"
