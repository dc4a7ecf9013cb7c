#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryFile>

#include <pqxx/pqxx>

#include "operations/actions.h"
#include "operations/audit.h"
#include "tests/db/tst_actions_fixture.h"
#include "tests/support/cliprocess.h"

using idem::test::operator""_b;
using idem::test::bytes;
using idem::test::scalar;

// idemctl tasks / requeue / release / fail / audit: the real binary, what it prints, its exit
// code, and what landed in the database.
class TestActionsCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void help_data();
    void help();
    void tasksPages();
    void requeueReportsPerKey();
    void usageErrorsChangeNothing_data();
    void usageErrorsChangeNothing();
    void releaseJson();
    void failWithAnExpectedVersion();
    void keysFromFile();
    void auditListAndVerify();
    void refusesANewerSchema();

private:
    idem::test::CliRun idemctl(std::vector<std::string> args) const;
    static QJsonObject json(const idem::test::CliRun& run);

    idem::test::ActionsFixture m_fx;
};

void TestActionsCli::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_fx.open("actions_cli");
}

void TestActionsCli::cleanupTestCase() { m_fx.close(); }

namespace {

QStringList qargs(const std::vector<std::string>& args)
{
    QStringList out;
    for (const auto& a : args)
        out << QString::fromStdString(a);
    return out;
}

// What the command printed contains `text` (UTF-8).
bool printed(const idem::test::CliRun& run, const std::string& text)
{
    return run.out.contains(QString::fromStdString(text));
}

QJsonValue at(const QJsonObject& o, const char* name) { return o.value(QLatin1String(name)); }

} // namespace

idem::test::CliRun TestActionsCli::idemctl(std::vector<std::string> args) const
{
    args.push_back("--dsn");
    args.push_back(m_fx.db->dsn());
    return idem::test::runProgram(idem::test::idemctlPath(), qargs(args));
}

QJsonObject TestActionsCli::json(const idem::test::CliRun& run)
{
    QJsonParseError error;
    const auto doc = QJsonDocument::fromJson(run.out.toUtf8(), &error);
    if (!doc.isObject())
        qWarning("not a JSON object (%s): %s", qPrintable(error.errorString()), qPrintable(run.out));
    return doc.object();
}

void TestActionsCli::help_data()
{
    QTest::addColumn<QString>("args"); // space-separated
    QTest::addColumn<QString>("expected");
    QTest::addRow("tasks") << "tasks --help"
                           << "Usage: idemctl tasks";
    QTest::addRow("requeue") << "requeue --help"
                             << "Usage: idemctl requeue KEY...";
    QTest::addRow("release") << "release --help"
                             << "idemctl release KEY...";
    QTest::addRow("fail") << "fail --help"
                          << "idemctl fail    KEY...";
    QTest::addRow("audit") << "audit --help"
                           << "Usage: idemctl audit list";
    QTest::addRow("audit verify") << "audit verify --help"
                                  << "idemctl audit verify";
}

void TestActionsCli::help()
{
    QFETCH(QString, args);
    QFETCH(QString, expected);
    const auto run = idem::test::runProgram(idem::test::idemctlPath(), args.split(QLatin1Char(' ')));
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.contains(expected), qPrintable(run.out));
}

void TestActionsCli::tasksPages()
{
    const std::string a = "cli-tasks:charge:a", b = "cli-tasks:charge:b", c = "cli-tasks:refund:c";
    const auto va = m_fx.plant(a, "failed", 5, 5, "retryable");
    m_fx.plant(b, "succeeded", 1, 5, "");
    m_fx.plant(c, "failed", 2, 5, "permanent");

    auto run = idemctl({ "tasks", "--tenant", "cli-tasks", "--status", "failed", "--limit", "1", "--json" });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    auto j = json(run);
    QCOMPARE(at(j, "rows").toArray().size(), 1);
    const auto row = at(j, "rows").toArray().at(0).toObject();
    QCOMPARE(at(row, "key").toString().toStdString(), a);
    QCOMPARE(at(row, "status").toString(), QStringLiteral("failed"));
    QCOMPARE(at(row, "updated_at_us").toInteger(), va.updatedAtUs);
    QCOMPARE(at(j, "next_after").toString().toStdString(), a);

    run = idemctl({ "tasks", "--tenant", "cli-tasks", "--status", "failed", "--after", a });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(printed(run, c), qPrintable(run.out));
    QVERIFY2(!printed(run, a) && !printed(run, b), qPrintable(run.out));
    QVERIFY2(printed(run, "2/5"), qPrintable(run.out));
}

void TestActionsCli::requeueReportsPerKey()
{
    const std::string a = m_fx.nextKey("cli"), done = m_fx.nextKey("cli"), missing = m_fx.nextKey("cli");
    m_fx.plant(a, "failed", 5, 5, "retryable");
    m_fx.plant(done, "succeeded", 1, 5, "");
    const QByteArray doneBefore = m_fx.f(done, "row_to_json(t)");
    const auto auditBefore = m_fx.auditCount();

    const auto run = idemctl(
        { "requeue", a, done, missing, "--reason", "gateway back up", "--attempts", "2", "--actor", "ops@bastion" });
    QCOMPARE(run.exitCode, 3); // some refused by the database
    QVERIFY2(printed(run, "requeue: 3 key(s)"), qPrintable(run.out));
    QVERIFY2(printed(run, "applied  " + a + "  -> retryable_failed"), qPrintable(run.out));
    QVERIFY2(printed(run, "wrong_state  " + done), qPrintable(run.out));
    QVERIFY2(printed(run, "not_found  " + missing), qPrintable(run.out));
    QVERIFY2(printed(run, "summary: applied 1 not_found 1 wrong_state 1"), qPrintable(run.out));

    QCOMPARE(m_fx.f(a, "status || ' ' || attempts || '/' || max_attempts"), "retryable_failed 5/7"_b);
    QCOMPARE(m_fx.f(done, "row_to_json(t)"), doneBefore);
    QCOMPARE(m_fx.auditCount(), auditBefore + 1);
    QCOMPARE(scalar(*m_fx.admin,
                 "SELECT action || '|' || reason || '|' || os_user || '|' || application"
                 " FROM idem.task_idempotency_audit WHERE idempotency_key = $1",
                 a),
        "requeue|gateway back up|ops@bastion|idemctl requeue"_b);
}

void TestActionsCli::usageErrorsChangeNothing_data()
{
    QTest::addColumn<QString>("args"); // |-separated; the key goes after the first
    QTest::addRow("no reason") << "requeue";
    QTest::addRow("blank reason") << "requeue|--reason| \t ";
    QTest::addRow("attempts out of range") << "requeue|--reason|r|--attempts|0";
    QTest::addRow("attempts on release") << "release|--reason|r|--attempts|2";
    QTest::addRow("expect-status alone") << "fail|--reason|r|--expect-status|failed";
    QTest::addRow("unknown option") << "fail|--reason|r|--force";
}

void TestActionsCli::usageErrorsChangeNothing()
{
    QFETCH(QString, args);
    const std::string key = m_fx.nextKey("cli");
    m_fx.plant(key, "failed", 5, 5, "retryable");
    const QByteArray before = m_fx.f(key, "row_to_json(t)");
    const auto auditBefore = m_fx.auditCount();
    std::vector<std::string> argv;
    for (const auto& a : args.split(QLatin1Char('|')))
        argv.push_back(a.toStdString());
    argv.insert(argv.begin() + 1, key);
    const auto run = idemctl(argv);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(!run.err.isEmpty(), qPrintable(idem::test::describe(run)));
    QCOMPARE(m_fx.f(key, "row_to_json(t)"), before);
    QCOMPARE(m_fx.auditCount(), auditBefore);
}

void TestActionsCli::releaseJson()
{
    const std::string key = m_fx.nextKey("cli");
    m_fx.plant(key, "processing", 1, 5, "");
    const auto run = idemctl({ "release", key, "--reason", "worker host lost", "--json" });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto j = json(run);
    QCOMPARE(at(j, "action").toString(), QStringLiteral("release"));
    const auto r = at(j, "results").toArray().at(0).toObject();
    QCOMPARE(at(r, "outcome").toString(), QStringLiteral("applied"));
    QCOMPARE(at(r, "status").toString(), QStringLiteral("processing"));
    QVERIFY(at(r, "row").toObject().value(QLatin1String("owner_token")).isNull());
    QCOMPARE(at(r, "updated_at_us").toInteger(), m_fx.version(key)->updatedAtUs);
    QCOMPARE(scalar(*m_fx.admin, "SELECT id::text FROM idem.task_idempotency_audit WHERE idempotency_key = $1", key),
        QByteArray::number(at(r, "audit_id").toInteger()));
    QCOMPARE(m_fx.f(key, "(owner_token IS NULL AND lease_until <= now())"), "true"_b);
}

// A script that read the row earlier passes that version: a row changed since is refused.
void TestActionsCli::failWithAnExpectedVersion()
{
    const std::string key = m_fx.nextKey("cli");
    const auto seen = m_fx.plant(key, "retryable_failed", 1, 5, "retryable");
    {
        pqxx::work w(*m_fx.admin);
        w.exec_params(
            "UPDATE idem.task_idempotency SET attempts = 2, updated_at = now() WHERE idempotency_key = $1", key);
        w.commit();
    }
    const QByteArray before = m_fx.f(key, "row_to_json(t)");
    const std::vector<std::string> base { "fail", key, "--reason", "cancelled", "--expect-status", "retryable_failed",
        "--expect-updated-at" };
    auto withVersion = [&](std::int64_t us) {
        auto args = base;
        args.push_back(std::to_string(us));
        return args;
    };
    auto run = idemctl(withVersion(seen.updatedAtUs));
    QCOMPARE(run.exitCode, 3);
    QVERIFY2(printed(run, "stale  " + key), qPrintable(run.out));
    QVERIFY2(printed(run, "it was read as retryable_failed"), qPrintable(run.out));
    QCOMPARE(m_fx.f(key, "row_to_json(t)"), before);

    run = idemctl(withVersion(m_fx.version(key)->updatedAtUs));
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QCOMPARE(m_fx.f(key, "status || ' ' || error_class"), "failed permanent"_b);
}

void TestActionsCli::keysFromFile()
{
    QTemporaryFile file;
    QVERIFY(file.open());
    std::vector<std::string> keys;
    for (int i = 0; i < 3; ++i) {
        keys.push_back(m_fx.nextKey("cli-file"));
        m_fx.plant(keys.back(), "processing", 1, 5, "");
        file.write(QByteArray::fromStdString(keys.back() + (i == 1 ? "\r\n" : "\n")));
    }
    file.close();
    const auto run = idemctl({ "fail", "--keys-from", file.fileName().toStdString(), "--reason", "drain", "--json" });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto results = at(json(run), "results").toArray();
    QCOMPARE(results.size(), 3);
    for (int i = 0; i < 3; ++i) {
        QCOMPARE(results.at(i).toObject().value(QLatin1String("key")).toString(), QString::fromStdString(keys[i]));
        QCOMPARE(m_fx.f(keys[i], "status"), "failed"_b);
    }
}

void TestActionsCli::auditListAndVerify()
{
    const std::string key = m_fx.nextKey("cli-audit");
    m_fx.plant(key, "failed", 5, 5, "retryable");
    const std::string reason = "line1\nline2\x1b[31m; '%s'";
    auto run = idemctl({ "requeue", key, "--reason", reason });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));

    run = idemctl({ "audit", "list", "--key", key });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(printed(run, "requeue  " + key + "  failed -> retryable_failed"), qPrintable(run.out));
    // A terminal never receives the raw control characters; --json carries them exactly.
    QVERIFY2(printed(run, "reason: line1\\x0aline2\\x1b[31m; '%s'"), qPrintable(run.out));
    QVERIFY(!run.out.contains(QChar(0x1b)));
    run = idemctl({ "audit", "list", "--key", key, "--json" });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto entry = at(json(run), "entries").toArray().at(0).toObject();
    QCOMPARE(at(entry, "reason").toString().toStdString(), reason);
    QCOMPARE(at(entry, "before").toObject().value(QLatin1String("status")).toString(), QStringLiteral("failed"));
    QCOMPARE(
        at(entry, "after").toObject().value(QLatin1String("status")).toString(), QStringLiteral("retryable_failed"));

    run = idemctl({ "audit", "verify" });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.startsWith(QLatin1String("ok: ")), qPrintable(run.out));
    const auto head = idem::verifyChain(*m_fx.admin, idem::SchemaName()).head;
    const std::string headArg = std::to_string(head->id) + ':' + head->hash;
    QVERIFY2(printed(run, "head: " + headArg), qPrintable(run.out));
    run = idemctl({ "audit", "verify", "--expect-head", headArg });
    QCOMPARE(run.exitCode, 0);

    {
        pqxx::work w(*m_fx.admin);
        w.exec_params("UPDATE idem.task_idempotency_audit SET reason = 'nothing to see' WHERE id = $1",
            static_cast<long long>(head->id));
        w.commit();
    }
    run = idemctl({ "audit", "verify" });
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(printed(run, "BROKEN at entry " + std::to_string(head->id) + " (hash_mismatch)"), qPrintable(run.out));
    run = idemctl({ "audit", "verify", "--json" });
    QCOMPARE(run.exitCode, 1);
    QCOMPARE(at(json(run), "first_broken_id").toInteger(), head->id);
    {
        pqxx::work w(*m_fx.admin);
        w.exec("TRUNCATE idem.task_idempotency_audit");
        w.commit();
    }
    run = idemctl({ "audit", "verify", "--expect-head", headArg });
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(printed(run, "(truncated)"), qPrintable(run.out));
}

// As the console: no action against a schema newer than this binary knows.
void TestActionsCli::refusesANewerSchema()
{
    const std::string key = m_fx.nextKey("cli");
    m_fx.plant(key, "failed", 5, 5, "retryable");
    const QByteArray before = m_fx.f(key, "row_to_json(t)");
    {
        pqxx::work w(*m_fx.admin);
        w.exec("INSERT INTO idem.idem_schema_version (version, name, checksum) VALUES (999, '0999_future.sql', 'x')");
        w.commit();
    }
    const auto run = idemctl({ "requeue", key, "--reason", "r" });
    {
        pqxx::work w(*m_fx.admin);
        w.exec("DELETE FROM idem.idem_schema_version WHERE version = 999");
        w.commit();
    }
    QCOMPARE(run.exitCode, 3);
    QVERIFY2(run.err.contains(QLatin1String("version 999")), qPrintable(idem::test::describe(run)));
    QCOMPARE(m_fx.f(key, "row_to_json(t)"), before);
}

QTEST_GUILESS_MAIN(TestActionsCli)
#include "tst_actionscli.moc"
