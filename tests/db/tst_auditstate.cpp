#include <QtTest>

#include <QFile>
#include <QTemporaryDir>

#include <pqxx/pqxx>

#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/testdb.h"

// Issue 31, item 11: `idemctl audit verify --state FILE` keeps the last head it verified, so a
// truncation is noticed even after new entries bring the id back, which the Prometheus rule
// (ids only) misses. The file is written only after a successful verification, atomically, and a
// damaged one is refused, never overwritten.
namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }

QByteArray fileBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
} // namespace

class TestAuditState : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void truncationWithTheIdBackIsCaught();
    void tailRewriteIsCaught();
    void damagedStateIsRefused_data();
    void damagedStateIsRefused();
    void stateOfAnotherTrailIsRefused();
    void usage();

private:
    idem::test::CliRun verify(const QStringList& extra = {}, const std::string& schema = "idem");
    // One audited retention change: one audit entry.
    std::int64_t appendEntry(const std::string& schema = "idem");
    std::int64_t headId(const std::string& schema = "idem");

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_state;
    int m_n = 0;
};

idem::test::CliRun TestAuditState::verify(const QStringList& extra, const std::string& schema)
{
    return idem::test::runProgram(idem::test::idemctlPath(),
        QStringList { QStringLiteral("audit"), QStringLiteral("verify"), QStringLiteral("--dsn"), qs(m_db->dsn()),
            QStringLiteral("--schema"), qs(schema) }
            + extra,
        30000);
}

std::int64_t TestAuditState::appendEntry(const std::string& schema)
{
    ++m_n;
    pqxx::work w(*m_conn);
    const auto r = w.exec_params("SELECT audit_id FROM \"" + schema + "\".idem_set_retention($1, $2, 'test', 'tester')",
        "op" + std::to_string(m_n % 3), 3600 * (1 + m_n));
    w.commit();
    return r[0][0].as<std::int64_t>();
}

std::int64_t TestAuditState::headId(const std::string& schema)
{
    pqxx::read_transaction t(*m_conn);
    return t.exec("SELECT coalesce(max(id), 0) FROM \"" + schema + "\".task_idempotency_audit")[0][0]
        .as<std::int64_t>();
}

void TestAuditState::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("auditstate", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), true });
    idem::migrate(*m_conn, { idem::SchemaName("other"), true });
}

void TestAuditState::init()
{
    pqxx::work w(*m_conn);
    w.exec("TRUNCATE idem.task_idempotency_audit");
    w.commit();
    m_dir = std::make_unique<QTemporaryDir>();
    m_state = m_dir->filePath(QStringLiteral("audit.state"));
}

void TestAuditState::truncationWithTheIdBackIsCaught()
{
    appendEntry();
    QCOMPARE(appendEntry(), std::int64_t(2));
    auto run = verify({ QStringLiteral("--state"), m_state });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("state: %1 created, head 2").arg(m_state)), qPrintable(run.out));
    QCOMPARE(
        QFile(m_state).permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther), QFileDevice::Permissions());
    // Without new entries the state stays as it is; with one it moves up.
    QCOMPARE(appendEntry(), std::int64_t(3));
    run = verify({ QStringLiteral("--state"), m_state });
    QVERIFY2(run.exitCode == 0 && run.out.contains(QStringLiteral("updated, head 3")), qPrintable(run.out));
    QVERIFY(fileBytes(m_state).contains("\nhead 3 "));
    QVERIFY(!QDir(m_dir->path()).entryList(QDir::Files).filter(QStringLiteral(".tmp")).size());

    // The owner (here the superuser) empties the trail, and three new actions bring the id back
    // to 3 before anyone looks: the id alone (the Prometheus rule) sees nothing wrong.
    {
        pqxx::work w(*m_conn);
        w.exec("TRUNCATE idem.task_idempotency_audit");
        w.commit();
    }
    appendEntry();
    appendEntry();
    QCOMPARE(appendEntry(), std::int64_t(3));
    QCOMPARE(headId(), std::int64_t(3));
    const QByteArray before = fileBytes(m_state);
    // The chain itself is intact: only the remembered head says otherwise.
    QCOMPARE(verify().exitCode, 0);
    run = verify({ QStringLiteral("--state"), m_state });
    QVERIFY2(run.exitCode == 1, qPrintable(idem::test::describe(run)));
    QVERIFY2(
        run.out.contains(QStringLiteral("BROKEN at entry 3 (truncated): entry 3 now hashes to ")), qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("state: %1 kept as it was (entry 3:").arg(m_state)), qPrintable(run.out));
    // A failed verification never moves the state: it fails again, and again.
    QCOMPARE(fileBytes(m_state), before);
    QCOMPARE(verify({ QStringLiteral("--state"), m_state }).exitCode, 1);
    QCOMPARE(fileBytes(m_state), before);
}

void TestAuditState::tailRewriteIsCaught()
{
    for (int i = 0; i < 4; ++i)
        appendEntry();
    QCOMPARE(verify({ QStringLiteral("--state"), m_state }).exitCode, 0);
    {
        pqxx::work w(*m_conn);
        w.exec("DELETE FROM idem.task_idempotency_audit WHERE id > 2");
        w.commit();
    }
    // Shorter than remembered.
    auto run = verify({ QStringLiteral("--state"), m_state, QStringLiteral("--json") });
    QVERIFY2(
        run.exitCode == 1 && run.out.contains(QStringLiteral("\"broken_by\": \"truncated\"")), qPrintable(run.out));
    QVERIFY(run.out.contains(QStringLiteral("\"updated\": false")));
    // Longer again, with other entries: still caught.
    for (int i = 0; i < 3; ++i)
        appendEntry();
    run = verify({ QStringLiteral("--state"), m_state });
    QVERIFY2(
        run.exitCode == 1 && run.out.contains(QStringLiteral("BROKEN at entry 4 (truncated)")), qPrintable(run.out));
}

void TestAuditState::damagedStateIsRefused_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addRow("empty") << QByteArray();
    QTest::addRow("garbage") << QByteArray("\x00\xff not a state\n", 15);
    QTest::addRow("cut short") << QByteArray("idem-audit-state 1\ndatabase x\nschema idem\nhead 2 ab");
    QTest::addRow("bad hash") << QByteArray("idem-audit-state 1\ndatabase x\nschema idem\nhead 2 zz\nverified_at t\n");
    QTest::addRow("negative id") << QByteArray(
        "idem-audit-state 1\ndatabase x\nschema idem\nhead -2 " + QByteArray(64, 'a') + "\nverified_at t\n");
    QTest::addRow("other version") << QByteArray(
        "idem-audit-state 2\ndatabase x\nschema idem\nhead 2 " + QByteArray(64, 'a') + "\nverified_at t\n");
}

void TestAuditState::damagedStateIsRefused()
{
    QFETCH(QByteArray, content);
    appendEntry();
    QFile f(m_state);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(content);
    f.close();
    const auto run = verify({ QStringLiteral("--state"), m_state });
    QVERIFY2(run.exitCode == 1, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.err.contains(QStringLiteral("is not a valid idemctl audit state")), qPrintable(run.err));
    QVERIFY2(run.err.contains(QStringLiteral("refusing to use or overwrite it")), qPrintable(run.err));
    QVERIFY(run.out.isEmpty());
    QCOMPARE(fileBytes(m_state), content);
}

void TestAuditState::stateOfAnotherTrailIsRefused()
{
    appendEntry();
    QCOMPARE(verify({ QStringLiteral("--state"), m_state }).exitCode, 0);
    const QByteArray before = fileBytes(m_state);
    const auto run = verify({ QStringLiteral("--state"), m_state }, "other");
    QVERIFY2(run.exitCode == 1 && run.err.contains(QStringLiteral("is for schema idem of database ")),
        qPrintable(idem::test::describe(run)));
    QCOMPARE(fileBytes(m_state), before);
}

void TestAuditState::usage()
{
    const auto run = verify({ QStringLiteral("--state"), m_state, QStringLiteral("--expect-head"),
        QStringLiteral("1:") + QString(64, QLatin1Char('a')) });
    QVERIFY2(run.exitCode == 2 && run.err.contains(QStringLiteral("exclude each other")), qPrintable(run.err));
    QVERIFY(!QFile::exists(m_state));
}

QTEST_GUILESS_MAIN(TestAuditState)
#include "tst_auditstate.moc"
