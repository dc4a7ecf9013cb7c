#include <QtTest>

#include <QElapsedTimer>

#include <pqxx/pqxx>

#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/testdb.h"

// Issue 31, item 3: migrate's advisory lock is one any login role can take. Held by a worker, it
// must not make `idemctl migrate` (or a service that migrates at start) hang: a schema with
// something to apply gives up after --lock-timeout naming the holder, changing nothing; a current
// schema takes no lock to find that out and returns at once.
namespace {
const char* const workerLogin = "idem_migratelock_worker";
const char* const workerPassword = "migratelock-worker-pw-31";
const char* const holderApp = "mallory-holds-the-lock";

QString qs(const std::string& s) { return QString::fromStdString(s); }

idem::test::CliRun idemctl(const QStringList& args)
{
    // Well above the lock timeouts used here, far below "forever": the old code hit it.
    return idem::test::runProgram(idem::test::idemctlPath(), args, 20000);
}

// A worker's session holding migrate's lock of `schema`, as a session lock (idle) or inside an
// open transaction.
class LockHolder {
public:
    LockHolder(const std::string& dbDsn, const std::string& schema, bool inTransaction)
        : m_conn(idem::test::dsnWith(
            idem::test::loginDsn(dbDsn, workerLogin, workerPassword), { { "application_name", holderApp } }))
    {
        const std::string lock = inTransaction ? "pg_advisory_xact_lock" : "pg_advisory_lock";
        const std::string sql = "SELECT " + lock + "(hashtext('idem.migrate'), hashtext($1)), pg_backend_pid()";
        if (inTransaction) {
            m_tx = std::make_unique<pqxx::work>(m_conn);
            m_pid = m_tx->exec_params(sql, schema)[0][1].as<int>();
        } else {
            pqxx::nontransaction n(m_conn);
            m_pid = n.exec_params(sql, schema)[0][1].as<int>();
        }
    }
    int pid() const { return m_pid; }

private:
    pqxx::connection m_conn;
    std::unique_ptr<pqxx::work> m_tx;
    int m_pid = 0;
};

bool schemaExists(pqxx::connection& c, const std::string& schema)
{
    pqxx::read_transaction t(c);
    return t.exec_params("SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1)", schema)[0][0].as<bool>();
}
} // namespace

class TestMigrateLock : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void pendingMigrateGivesUpNamingTheHolder();
    void libraryGivesUpWithinItsTimeout();
    void currentSchemaReturnsAtOnce();
    void lockTimeoutUsage();
};

void TestMigrateLock::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    // The Idem roles are cluster-wide: one migrate makes sure idem_worker exists to be granted.
    idem::test::ScratchDatabase db("migratelock_roles");
    auto c = db.connect();
    idem::migrate(*c, { idem::SchemaName(), true });
    idem::test::createLoginRole(workerLogin, workerPassword, "idem_worker");
}

void TestMigrateLock::pendingMigrateGivesUpNamingTheHolder()
{
    idem::test::ScratchDatabase db("migratelock_pending");
    auto c = db.connect();
    LockHolder holder(db.dsn(), "idem", false);

    QElapsedTimer t;
    t.start();
    const auto run = idemctl({ QStringLiteral("migrate"), QStringLiteral("--dsn"), qs(db.dsn()),
        QStringLiteral("--lock-timeout"), QStringLiteral("2s") });
    const auto took = t.elapsed();
    QVERIFY2(run.exitCode == 1, qPrintable(idem::test::describe(run)));
    QVERIFY2(took >= 1900 && took < 10000, qPrintable(QString::number(took)));
    // The holder, as an operator needs it to act: pid, role, application and since when.
    QVERIFY2(run.err.contains(QStringLiteral("pid %1 (role %2, application '%3', idle, holding it as a session lock,"
                                             " connected since ")
                                  .arg(holder.pid())
                                  .arg(QLatin1String(workerLogin), QLatin1String(holderApp))),
        qPrintable(run.err));
    QVERIFY2(run.err.contains(QStringLiteral("Nothing was changed")), qPrintable(run.err));
    QVERIFY(run.out.isEmpty());
    // Nothing changed: not even the schema or the version table exist.
    QVERIFY(!schemaExists(*c, "idem"));
}

void TestMigrateLock::libraryGivesUpWithinItsTimeout()
{
    // A service that migrates at start, against a worker holding the lock in an open transaction.
    idem::test::ScratchDatabase db("migratelock_library");
    auto c = db.connect();
    LockHolder holder(db.dsn(), "jobs", true);
    QElapsedTimer t;
    t.start();
    QString message;
    try {
        idem::migrate(*c, { idem::SchemaName("jobs"), false, std::chrono::milliseconds(800) });
    } catch (const idem::MigrationLockTimeout& e) {
        message = QString::fromUtf8(e.what());
    }
    QVERIFY2(t.elapsed() < 8000, qPrintable(QString::number(t.elapsed())));
    QVERIFY2(message.contains(QStringLiteral("pid %1 (role %2, application '%3', in a transaction since ")
                                  .arg(holder.pid())
                                  .arg(QLatin1String(workerLogin), QLatin1String(holderApp))),
        qPrintable(message));
    QVERIFY(!schemaExists(*c, "jobs"));
    // The connection is usable afterwards, and the lock timeout did not stay in force.
    pqxx::read_transaction r(*c);
    QCOMPARE(qs(r.exec("SELECT current_setting('lock_timeout')")[0][0].as<std::string>()), QStringLiteral("0"));
}

void TestMigrateLock::currentSchemaReturnsAtOnce()
{
    idem::test::ScratchDatabase db("migratelock_current");
    auto c = db.connect();
    idem::migrate(*c, { idem::SchemaName(), true });
    LockHolder holder(db.dsn(), "idem", false);

    // A service at start, without roles: no lock at all.
    QElapsedTimer t;
    t.start();
    const auto report = idem::migrate(*c, { idem::SchemaName(), false, std::chrono::milliseconds(60000) });
    QVERIFY2(t.elapsed() < 3000, qPrintable(QString::number(t.elapsed())));
    QVERIFY(report.applied.empty());
    QCOMPARE(report.toVersion, idem::latestSchemaVersion());

    // idemctl migrate with roles: at once, exit 0, saying why the roles were not re-applied.
    t.restart();
    const auto run = idemctl({ QStringLiteral("migrate"), QStringLiteral("--dsn"), qs(db.dsn()) });
    QVERIFY2(t.elapsed() < 5000, qPrintable(QString::number(t.elapsed())));
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("is up to date at version %1").arg(idem::latestSchemaVersion())),
        qPrintable(run.out));
    QVERIFY2(
        run.out.contains(
            QStringLiteral("roles and grants not re-applied: the migrate lock is held by pid %1").arg(holder.pid())),
        qPrintable(run.out));
}

void TestMigrateLock::lockTimeoutUsage()
{
    for (const char* bad : { "0", "soon", "-1s", "2h" }) {
        const auto run = idemctl({ QStringLiteral("migrate"), QStringLiteral("--dsn"),
            QStringLiteral("host=/nonexistent"), QStringLiteral("--lock-timeout"), QLatin1String(bad) });
        QVERIFY2(run.exitCode == 2 && run.err.contains(QStringLiteral("--lock-timeout")),
            qPrintable(idem::test::describe(run)));
    }
}

QTEST_GUILESS_MAIN(TestMigrateLock)
#include "tst_migratelock.moc"
