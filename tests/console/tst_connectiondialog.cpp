#include <QtTest>

#include <QElapsedTimer>

#include <cstdlib>
#include <pqxx/pqxx>

#include "schema/migrate.h"
#include "tests/console/consolefixture.h"
#include "tests/support/silentserver.h"
#include "tests/support/testdb.h"

using idem::test::ConsoleFixture;
using idem::test::SilentServer;
using idem::test::consoleTimeoutMs;
using State = idem::console::ConsoleSession::State;

// The connection dialog driven with keyboard and mouse against the real test cluster: what a
// person sees for a good connection and for each way a connection fails.
class TestConnectionDialog : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void goodDsnShowsRoleAndSchema_data();
    void goodDsnShowsRoleAndSchema();
    void wrongPasswordShowsAuthenticationError();
    void verifyFullWithTheRightRootCert();
    void verifyFullWithAWrongRootCertFails();
    void malformedConninfoIsRejectedInPlace();
    void refusedConnectionIsReported();
    void hungServerDoesNotFreezeTheDialog();
    void cancelAbandonsTheAttempt();

private:
    QString tlsFile(const char* name) const;

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    const std::string m_reader = "idem_t_console_dialog_reader";
    const std::string m_operator = "idem_t_console_dialog_operator";
    const std::string m_password = "correct horse 'battery'";
};

void TestConnectionDialog::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    QVERIFY2(std::getenv("IDEM_TEST_TLS_DIR"), "IDEM_TEST_TLS_DIR must name the test cluster's tls directory");
    m_db = std::make_unique<idem::test::ScratchDatabase>("console_dialog", idem::test::migrated);
    auto c = m_db->connect();
    idem::migrate(*c, { idem::SchemaName() });
    idem::test::createLoginRole(m_reader, m_password, "idem_reader");
    idem::test::createLoginRole(m_operator, m_password, "idem_operator");
}

void TestConnectionDialog::cleanupTestCase() { m_db.reset(); }

QString TestConnectionDialog::tlsFile(const char* name) const
{
    return QDir(QString::fromLocal8Bit(std::getenv("IDEM_TEST_TLS_DIR"))).filePath(QString::fromLatin1(name));
}

void TestConnectionDialog::goodDsnShowsRoleAndSchema_data()
{
    QTest::addColumn<QString>("role");
    QTest::addColumn<bool>("typePassword");
    QTest::addColumn<QString>("privilege");
    QTest::addRow("superuser via passfile")
        << QStringLiteral("postgres") << false << QStringLiteral("operator (superuser)");
    QTest::addRow("operator") << QString::fromStdString(m_operator) << true << QStringLiteral("operator");
    QTest::addRow("reader") << QString::fromStdString(m_reader) << true << QStringLiteral("reader");
}

void TestConnectionDialog::goodDsnShowsRoleAndSchema()
{
    QFETCH(QString, role);
    QFETCH(bool, typePassword);
    QFETCH(QString, privilege);
    ConsoleFixture f;
    idem::test::typeInto(f.child("conninfoEdit"), idem::test::dsnWith(m_db->dsn(), { { "user", role.toStdString() } }));
    if (typePassword)
        idem::test::typeInto(f.child("passwordEdit"), m_password);
    idem::test::click(f.child<QPushButton>("connectButton"));

    QTRY_COMPARE_WITH_TIMEOUT(f.session.state(), State::Connected, consoleTimeoutMs);
    QTRY_VERIFY(!f.dialog.isVisible());
    const auto* panel = f.window.statusPanel();
    QCOMPARE(panel->roleText(), role);
    QCOMPARE(panel->privilegeText(), privilege);
    QVERIFY2(panel->schemaText().contains(QStringLiteral("version %1 (current)").arg(idem::latestSchemaVersion())),
        qPrintable(panel->schemaText()));
    QVERIFY2(panel->serverText().startsWith(QStringLiteral("PostgreSQL ")), qPrintable(panel->serverText()));
    QVERIFY2(f.window.banner()->isHidden(), qPrintable(f.window.banner()->text()));
    // The reader may read, so the dashboard's figures arrive too.
    QTRY_VERIFY_WITH_TIMEOUT(f.dashboard->model()->ticks() > 0, consoleTimeoutMs);
    QVERIFY(!f.dashboard->tile(idem::console::Tile::Processing)->stale());
}

void TestConnectionDialog::wrongPasswordShowsAuthenticationError()
{
    ConsoleFixture f;
    idem::test::typeInto(f.child("conninfoEdit"), idem::test::dsnWith(m_db->dsn(), { { "user", m_reader } }));
    idem::test::typeInto(f.child("passwordEdit"), QStringLiteral("not the password"));
    idem::test::click(f.child<QPushButton>("connectButton"));

    QTRY_VERIFY_WITH_TIMEOUT(!idem::test::dialogError(f).isEmpty(), consoleTimeoutMs);
    const QString error = idem::test::dialogError(f);
    QVERIFY2(error.contains(QStringLiteral("authentication"), Qt::CaseInsensitive), qPrintable(error));
    QVERIFY2(!error.contains(QStringLiteral("not the password")), "the password leaked into the message");
    QVERIFY(f.dialog.isVisible());
    QVERIFY(f.child<QPushButton>("connectButton")->isEnabled());
    QCOMPARE(f.session.state(), State::Failed);

    // Fixing the password in place then works.
    idem::test::typeInto(f.child("passwordEdit"), m_password);
    idem::test::click(f.child<QPushButton>("connectButton"));
    QTRY_COMPARE_WITH_TIMEOUT(f.session.state(), State::Connected, consoleTimeoutMs);
    QTRY_VERIFY(!f.dialog.isVisible());
}

void TestConnectionDialog::verifyFullWithTheRightRootCert()
{
    ConsoleFixture f;
    // The TLS fields override whatever the string says, so take those out of it first.
    const auto dsn = idem::test::dsnWith(m_db->dsn(), { { "sslmode", "" }, { "sslrootcert", "" } });
    idem::test::typeInto(f.child("conninfoEdit"), dsn);
    idem::test::chooseSslMode(f.child<QComboBox>("sslModeCombo"), QStringLiteral("verify-full"));
    idem::test::typeInto(f.child("sslRootCertEdit"), tlsFile("ca.crt"));
    idem::test::click(f.child<QPushButton>("connectButton"));

    QTRY_COMPARE_WITH_TIMEOUT(f.session.state(), State::Connected, consoleTimeoutMs);
    const QString tls = f.window.statusPanel()->tlsText();
    QVERIFY2(tls.startsWith(QStringLiteral("yes (TLS")), qPrintable(tls));
}

void TestConnectionDialog::verifyFullWithAWrongRootCertFails()
{
    ConsoleFixture f;
    idem::test::typeInto(f.child("conninfoEdit"), m_db->dsn()); // sslmode=verify-full, the right sslrootcert
    idem::test::chooseSslMode(f.child<QComboBox>("sslModeCombo"), QStringLiteral("verify-full"));
    idem::test::typeInto(f.child("sslRootCertEdit"), tlsFile("other-ca.crt")); // overrides the string's
    idem::test::click(f.child<QPushButton>("connectButton"));

    QTRY_VERIFY_WITH_TIMEOUT(!idem::test::dialogError(f).isEmpty(), consoleTimeoutMs);
    const QString error = idem::test::dialogError(f);
    QVERIFY2(error.startsWith(QStringLiteral("TLS failure")), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("certificate")), qPrintable(error));
    QCOMPARE(f.session.lastFailure()->kind, idem::console::FailureKind::Tls);
    QVERIFY(f.dialog.isVisible());
}

void TestConnectionDialog::malformedConninfoIsRejectedInPlace()
{
    ConsoleFixture f;
    idem::test::typeInto(f.child("conninfoEdit"), QStringLiteral("host=localhost nosuchoption=1"));
    idem::test::click(f.child<QPushButton>("connectButton"));
    // Rejected before any I/O: no waiting.
    const QString error = idem::test::dialogError(f);
    QVERIFY2(error.contains(QStringLiteral("not valid")) && error.contains(QStringLiteral("nosuchoption")),
        qPrintable(error));
    QCOMPARE(f.session.state(), State::Disconnected);
}

void TestConnectionDialog::refusedConnectionIsReported()
{
    ConsoleFixture f;
    // Port 1 on loopback: nothing listens, so the refusal is immediate.
    idem::test::typeInto(f.child("conninfoEdit"), QStringLiteral("host=127.0.0.1 port=1 dbname=x user=x"));
    idem::test::click(f.child<QPushButton>("connectButton"));
    QTRY_VERIFY_WITH_TIMEOUT(!idem::test::dialogError(f).isEmpty(), consoleTimeoutMs);
    const QString error = idem::test::dialogError(f);
    QVERIFY2(error.startsWith(QStringLiteral("The server could not be reached")), qPrintable(error));
    QCOMPARE(f.session.lastFailure()->kind, idem::console::FailureKind::Refused);
}

void TestConnectionDialog::hungServerDoesNotFreezeTheDialog()
{
    SilentServer server;
    QVERIFY(server.port() > 0);
    ConsoleFixture f;
    idem::test::typeInto(f.child("conninfoEdit"), server.dsn());
    idem::test::click(f.child<QPushButton>("connectButton"));

    // While the worker waits on the server, the UI thread keeps running its event loop.
    QCOMPARE(f.session.state(), State::Connecting);
    QVERIFY(!f.child<QPushButton>("connectButton")->isEnabled());
    QVERIFY(f.child<QLabel>("progressLabel")->isVisible());
    // A UI thread that waited on the server would stand still until the connect timeout (2 s);
    // half of that is far beyond what a loaded machine adds to a 50 ms timer.
    QElapsedTimer clock;
    clock.start();
    bool ticked = false;
    QTimer::singleShot(50, this, [&ticked] { ticked = true; });
    QTRY_VERIFY_WITH_TIMEOUT(ticked, consoleTimeoutMs);
    QVERIFY2(clock.elapsed() < 1000, qPrintable(QStringLiteral("the event loop stalled while connecting: %1 ms").arg(clock.elapsed())));

    QTRY_VERIFY_WITH_TIMEOUT(!idem::test::dialogError(f).isEmpty(), consoleTimeoutMs);
    const QString error = idem::test::dialogError(f);
    QVERIFY2(error.startsWith(QStringLiteral("The connection timed out")), qPrintable(error));
    QVERIFY(f.child<QPushButton>("connectButton")->isEnabled());
}

void TestConnectionDialog::cancelAbandonsTheAttempt()
{
    SilentServer server;
    QVERIFY(server.port() > 0);
    ConsoleFixture f;
    QSignalSpy failures(&f.session, &idem::console::ConsoleSession::failed);
    idem::test::typeInto(f.child("conninfoEdit"), server.dsn());
    idem::test::click(f.child<QPushButton>("connectButton"));
    QCOMPARE(f.session.state(), State::Connecting);
    QTest::keyClick(&f.dialog, Qt::Key_Escape);
    QVERIFY(!f.dialog.isVisible());
    QCOMPARE(f.session.state(), State::Disconnected);
    // The abandoned attempt times out in the worker (2 s); nobody hears about it. Evidence that it
    // did, and that what the worker said of it has reached this thread: a call queued to the
    // worker behind it comes back.
    bool drained = false;
    f.session.afterQueued(&f.dialog, [&drained] { drained = true; });
    QTRY_VERIFY_WITH_TIMEOUT(drained, consoleTimeoutMs);
    QCOMPARE(failures.count(), 0);
    QCOMPARE(f.session.state(), State::Disconnected);
    QVERIFY(f.window.banner()->text().startsWith(QStringLiteral("Not connected")));
}

QTEST_MAIN(TestConnectionDialog)
#include "tst_connectiondialog.moc"
