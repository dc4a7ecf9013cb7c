#include <QtTest>

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <map>
#include <pqxx/pqxx>

#include "core/connection.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/testdb.h"

// idemctl finds its database the way psql does: PG* variables, a service in pg_service.conf,
// a postgresql:// URI, ~/.pgpass (PGPASSFILE), TLS settings from the environment; $IDEM_DSN
// before PG*, --dsn before both. Each case runs the real binary (`idemctl stats --json`, a
// read-only command) in an environment holding only what the case sets, and checks that it
// reached the scratch database (the figures of the rows planted there) as the intended role.
class TestConninfoConventions : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void nothingGivenFails();
    void pgEnvironmentOnly();
    void pgUserDecidesTheRole();
    void serviceFile();
    void uriWithPassfile();
    void idemDsnBeforePgEnvironment();
    void dsnBeforeIdemDsn();
    void tlsSettingsFromEnvironment();
    void wrongPasswordInPassfile();
    void wrongPasswordInDsnNotEchoed();
    void nothingChanged();

private:
    // `idemctl stats --json [extra...]` with the clean environment plus `env`.
    idem::test::CliRun stats(const std::map<QString, QString>& env, const QStringList& extra = {});
    // Exit 0 and the planted figures: the command read this test's scratch database.
    void expectPlantedFigures(const idem::test::CliRun& run);
    // PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSFILE and the TLS variables for `user`.
    std::map<QString, QString> pgEnvironment(const QString& user) const;
    QString writeFile(const QString& name, const QByteArray& text) const;
    QByteArray tableState();

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<QTemporaryDir> m_dir;
    std::map<std::string, std::string> m_admin; // the admin DSN's options: host, port, sslmode, ...
    QString m_passfile;
    QByteArray m_stateBefore;
};

namespace {
const QString reader = QStringLiteral("idem_t_conninfo_reader");
const QString outsider = QStringLiteral("idem_t_conninfo_outsider"); // may log in, holds no Idem role
const QString readerPassword = QStringLiteral("Rd-6f2b9c41-pass");
const QString outsiderPassword = QStringLiteral("Out-0d93e7aa-pass");
const QString wrongPassword = QStringLiteral("Wrong-5be0c1d7-secret");
} // namespace

void TestConninfoConventions::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_admin = idem::parseConninfo(idem::test::adminDsn());
    QVERIFY2(m_admin.count("host") && m_admin.count("port"), "IDEM_TEST_DSN must name host and port");
    m_db = std::make_unique<idem::test::ScratchDatabase>("conninfo", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), true });
    idem::test::createLoginRole(reader.toStdString(), readerPassword.toStdString(), "idem_reader");
    idem::test::createLoginRole(outsider.toStdString(), outsiderPassword.toStdString(), "");

    pqxx::work w(*m_conn);
    // Three live leases and two permanent failures: figures no other database of the cluster has.
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until,
                                           attempts, error_class, error_message)
        SELECT 'tc:charge:' || k, 'v1:' || repeat('c', 64), st,
               CASE WHEN st = 'processing' THEN gen_random_uuid() END,
               CASE WHEN st = 'processing' THEN now() + interval '1 hour' END,
               1, ec, CASE WHEN st = 'failed' THEN 'declined' END
        FROM (VALUES ('p1', 'processing', NULL), ('p2', 'processing', NULL), ('p3', 'processing', NULL),
                     ('f1', 'failed', 'permanent'), ('f2', 'failed', 'permanent')) AS v(k, st, ec)
    )");
    w.commit();

    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    // A passfile names host:port:database:user:password; libpq ignores one others may read.
    const QString prefix
        = QString::fromStdString(m_admin.at("host") + ':' + m_admin.at("port") + ':' + m_db->name()) + QLatin1Char(':');
    m_passfile = writeFile(QStringLiteral("pgpass"),
        (prefix + reader + QLatin1Char(':') + readerPassword + QLatin1Char('\n') + prefix + outsider + QLatin1Char(':')
            + outsiderPassword + QLatin1Char('\n'))
            .toUtf8());
    m_stateBefore = tableState();
}

void TestConninfoConventions::cleanupTestCase()
{
    m_conn.reset();
    m_db.reset();
}

QString TestConninfoConventions::writeFile(const QString& name, const QByteArray& text) const
{
    const QString path = m_dir->filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        qFatal("cannot write %s", qPrintable(path));
    f.write(text);
    f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    return path;
}

std::map<QString, QString> TestConninfoConventions::pgEnvironment(const QString& user) const
{
    std::map<QString, QString> env {
        { QStringLiteral("PGHOST"), QString::fromStdString(m_admin.at("host")) },
        { QStringLiteral("PGPORT"), QString::fromStdString(m_admin.at("port")) },
        { QStringLiteral("PGDATABASE"), QString::fromStdString(m_db->name()) },
        { QStringLiteral("PGUSER"), user },
        { QStringLiteral("PGPASSFILE"), m_passfile },
    };
    if (m_admin.count("sslmode"))
        env[QStringLiteral("PGSSLMODE")] = QString::fromStdString(m_admin.at("sslmode"));
    if (m_admin.count("sslrootcert"))
        env[QStringLiteral("PGSSLROOTCERT")] = QString::fromStdString(m_admin.at("sslrootcert"));
    return env;
}

idem::test::CliRun TestConninfoConventions::stats(const std::map<QString, QString>& env, const QStringList& extra)
{
    auto environment = idem::test::cleanEnvironment();
    // cleanEnvironment() keeps what cannot pick a database; these could still pick a passfile,
    // service file or TLS files, so only the case's own values count.
    for (const auto& name : { "PGPASSFILE", "PGSERVICEFILE", "PGSYSCONFDIR", "PGSSLMODE", "PGSSLROOTCERT", "PGSSLCERT",
             "PGSSLKEY", "PGCONNECT_TIMEOUT" })
        environment.remove(QString::fromLatin1(name));
    // No ~/.pgpass or ~/.pg_service.conf of whoever runs the tests.
    environment.insert(QStringLiteral("HOME"), m_dir->path());
    for (const auto& [name, value] : env)
        environment.insert(name, value);
    QProcess p;
    p.setProcessEnvironment(environment);
    p.start(idem::test::idemctlPath(), QStringList { QStringLiteral("stats"), QStringLiteral("--json") } + extra);
    return idem::test::finishProcess(p, 30000);
}

void TestConninfoConventions::expectPlantedFigures(const idem::test::CliRun& run)
{
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto j = QJsonDocument::fromJson(run.out.toUtf8()).object();
    QVERIFY2(!j.isEmpty(), qPrintable(run.out));
    QCOMPARE(j.value(QLatin1String("processing")).toInteger(), 3);
    QCOMPARE(j.value(QLatin1String("failed_permanent")).toInteger(), 2);
    QCOMPARE(j.value(QLatin1String("schema")).toString(), QStringLiteral("idem"));
}

QByteArray TestConninfoConventions::tableState()
{
    pqxx::read_transaction t(*m_conn);
    const auto r = t.exec("SELECT coalesce(string_agg(row_to_json(x)::text, E'\\n' ORDER BY idempotency_key), '') "
                          "FROM idem.task_idempotency x");
    return QByteArray::fromStdString(r[0][0].as<std::string>());
}

void TestConninfoConventions::nothingGivenFails()
{
    // The control for the cases below: with none of them, idemctl has nowhere to go. libpq
    // falls back to the Unix socket and the OS user, which this cluster does not serve.
    const auto run = stats({});
    QVERIFY2(run.exitCode == 1, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.err.contains(QLatin1String("cannot connect")), qPrintable(run.err));
    QVERIFY(run.out.isEmpty());
}

void TestConninfoConventions::pgEnvironmentOnly() { expectPlantedFigures(stats(pgEnvironment(reader))); }

void TestConninfoConventions::pgUserDecidesTheRole()
{
    // Same variables, a role without idem_reader: the database refuses the read, which shows
    // PGUSER chose the role.
    const auto run = stats(pgEnvironment(outsider));
    QVERIFY2(run.exitCode == 3, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.err.contains(QLatin1String("refused by the database")), qPrintable(run.err));
    QVERIFY(run.out.isEmpty());
}

void TestConninfoConventions::serviceFile()
{
    QString service = QStringLiteral("[idem-test]\nhost=%1\nport=%2\ndbname=%3\nuser=%4\n")
                          .arg(QString::fromStdString(m_admin.at("host")), QString::fromStdString(m_admin.at("port")),
                              QString::fromStdString(m_db->name()), reader);
    if (m_admin.count("sslmode"))
        service += QStringLiteral("sslmode=") + QString::fromStdString(m_admin.at("sslmode")) + QLatin1Char('\n');
    if (m_admin.count("sslrootcert"))
        service
            += QStringLiteral("sslrootcert=") + QString::fromStdString(m_admin.at("sslrootcert")) + QLatin1Char('\n');
    const QString file = writeFile(QStringLiteral("pg_service.conf"), service.toUtf8());
    const std::map<QString, QString> env {
        { QStringLiteral("PGSERVICEFILE"), file },
        { QStringLiteral("PGPASSFILE"), m_passfile },
    };
    // --dsn service=NAME, as psql "service=NAME".
    expectPlantedFigures(stats(env, { QStringLiteral("--dsn"), QStringLiteral("service=idem-test") }));
    // PGSERVICE alone, with no --dsn.
    auto withVariable = env;
    withVariable[QStringLiteral("PGSERVICE")] = QStringLiteral("idem-test");
    expectPlantedFigures(stats(withVariable));
    // An unknown service is a clear error.
    const auto unknown = stats(env, { QStringLiteral("--dsn"), QStringLiteral("service=no-such-service") });
    QVERIFY2(unknown.exitCode == 1, qPrintable(idem::test::describe(unknown)));
    QVERIFY2(unknown.err.contains(QLatin1String("no-such-service")), qPrintable(unknown.err));
}

void TestConninfoConventions::uriWithPassfile()
{
    QString uri = QStringLiteral("postgresql://%1@%2:%3/%4")
                      .arg(reader, QString::fromStdString(m_admin.at("host")),
                          QString::fromStdString(m_admin.at("port")), QString::fromStdString(m_db->name()));
    if (m_admin.count("sslmode"))
        uri += QStringLiteral("?sslmode=%1&sslrootcert=%2")
                   .arg(QString::fromStdString(m_admin.at("sslmode")),
                       QString::fromStdString(m_admin.count("sslrootcert") ? m_admin.at("sslrootcert") : ""));
    expectPlantedFigures(stats({ { QStringLiteral("PGPASSFILE"), m_passfile } }, { QStringLiteral("--dsn"), uri }));
}

void TestConninfoConventions::idemDsnBeforePgEnvironment()
{
    // PG* point at the outsider (who would be refused); IDEM_DSN names the reader and wins.
    auto env = pgEnvironment(outsider);
    env[QStringLiteral("IDEM_DSN")] = QStringLiteral("user=") + reader;
    expectPlantedFigures(stats(env));
}

void TestConninfoConventions::dsnBeforeIdemDsn()
{
    auto env = pgEnvironment(outsider);
    env[QStringLiteral("IDEM_DSN")] = QStringLiteral("user=") + outsider;
    expectPlantedFigures(stats(env, { QStringLiteral("--dsn"), QStringLiteral("user=") + reader }));
}

void TestConninfoConventions::tlsSettingsFromEnvironment()
{
    // PGSSLMODE=verify-full with a root certificate of another CA: libpq must refuse the server's
    // certificate, as psql would, and idemctl says it is a TLS failure.
    const QString tlsDir = QString::fromLocal8Bit(qgetenv("IDEM_TEST_TLS_DIR"));
    QVERIFY2(!tlsDir.isEmpty(), "IDEM_TEST_TLS_DIR must name the cluster's tls directory (scripts/test.sh sets it)");
    QVERIFY(QFile::exists(tlsDir + QStringLiteral("/other-ca.crt")));
    auto env = pgEnvironment(reader);
    env[QStringLiteral("PGSSLMODE")] = QStringLiteral("verify-full");
    env[QStringLiteral("PGSSLROOTCERT")] = tlsDir + QStringLiteral("/other-ca.crt");
    const auto run = stats(env);
    QVERIFY2(run.exitCode == 1, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.err.contains(QLatin1String("TLS failure")), qPrintable(run.err));
    QVERIFY2(run.err.contains(QLatin1String("certificate")), qPrintable(run.err));

    // The right CA and verify-full: connects.
    env[QStringLiteral("PGSSLROOTCERT")] = tlsDir + QStringLiteral("/ca.crt");
    expectPlantedFigures(stats(env));
}

void TestConninfoConventions::wrongPasswordInPassfile()
{
    const QString prefix
        = QString::fromStdString(m_admin.at("host") + ':' + m_admin.at("port") + ':' + m_db->name()) + QLatin1Char(':');
    const QString badPassfile = writeFile(QStringLiteral("pgpass-wrong"),
        (prefix + reader + QLatin1Char(':') + wrongPassword + QLatin1Char('\n')).toUtf8());
    auto env = pgEnvironment(reader);
    env[QStringLiteral("PGPASSFILE")] = badPassfile;
    const auto run = stats(env);
    QVERIFY2(run.exitCode == 1, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.err.contains(QLatin1String("authentication failed")), qPrintable(run.err));
    QVERIFY2(
        run.err.contains(QLatin1String("password authentication failed for user \"") + reader), qPrintable(run.err));
    QVERIFY(run.out.isEmpty());
    QVERIFY2(!run.err.contains(wrongPassword), qPrintable(run.err));
}

void TestConninfoConventions::wrongPasswordInDsnNotEchoed()
{
    auto env = pgEnvironment(reader);
    env.erase(QStringLiteral("PGPASSFILE"));
    // In a conninfo string and in a URI, and in PGPASSWORD: never in what idemctl prints.
    const QString inConninfo = QStringLiteral("user=%1 password=%2").arg(reader, wrongPassword);
    const QString inUri
        = QStringLiteral("postgresql://%1:%2@%3:%4/%5?sslmode=%6&sslrootcert=%7")
              .arg(reader, wrongPassword, QString::fromStdString(m_admin.at("host")),
                  QString::fromStdString(m_admin.at("port")), QString::fromStdString(m_db->name()),
                  QString::fromStdString(m_admin.count("sslmode") ? m_admin.at("sslmode") : "prefer"),
                  QString::fromStdString(m_admin.count("sslrootcert") ? m_admin.at("sslrootcert") : ""));
    auto withVariable = env;
    withVariable[QStringLiteral("PGPASSWORD")] = wrongPassword;
    const std::vector<idem::test::CliRun> runs {
        stats(env, { QStringLiteral("--dsn"), inConninfo }),
        stats(env, { QStringLiteral("--dsn"), inUri }),
        stats(withVariable),
    };
    for (const auto& run : runs) {
        QVERIFY2(run.exitCode == 1, qPrintable(idem::test::describe(run)));
        QVERIFY2(run.err.contains(QLatin1String("authentication failed")), qPrintable(run.err));
        QVERIFY2(!run.err.contains(wrongPassword) && !run.out.contains(wrongPassword), qPrintable(run.err));
    }
}

void TestConninfoConventions::nothingChanged()
{
    // Every run above was read-only: the rows are byte for byte what was planted.
    QCOMPARE(tableState(), m_stateBefore);
}

QTEST_GUILESS_MAIN(TestConninfoConventions)
#include "tst_conninfo_conventions.moc"
