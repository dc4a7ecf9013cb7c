#include <QtTest>

#include <QElapsedTimer>
#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/migrate.h"
#include "models/consolesession.h"
#include "tests/support/testdb.h"

using idem::console::ConnectionSettings;
using idem::console::ConsoleSession;
using idem::console::Failure;
using idem::console::FailureKind;
using State = ConsoleSession::State;

// The session's promises to the UI: it never blocks, a superseded request's answer is
// dropped, and a lost connection comes back by itself.
class TestConsoleSession : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void connectDoesNotBlock();
    void supersededConnectIsDropped();
    void lostConnectionReconnects();
    void badSchemaNameIsReported();

private:
    static ConnectionSettings settingsFor(const std::string& dsn);
    std::unique_ptr<idem::test::ScratchDatabase> m_db;
};

void TestConsoleSession::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("console_session");
    auto c = m_db->connect();
    idem::migrate(*c, { idem::SchemaName() });
}

void TestConsoleSession::cleanupTestCase() { m_db.reset(); }

ConnectionSettings TestConsoleSession::settingsFor(const std::string& dsn)
{
    ConnectionSettings s;
    s.conninfo = QString::fromStdString(dsn);
    return s;
}

void TestConsoleSession::connectDoesNotBlock()
{
    ConsoleSession session;
    // 192.0.2.1 (TEST-NET-1) never answers: a connect there hangs until its timeout.
    QElapsedTimer clock;
    clock.start();
    session.connectTo(settingsFor("host=192.0.2.1 connect_timeout=5 dbname=x user=x"));
    QVERIFY2(clock.elapsed() < 200, "connectTo waited on the network");
    QCOMPARE(session.state(), State::Connecting);
    // Superseded by a good connection straight away; the hanging attempt's answer, when it
    // comes, must not overwrite the good one.
    QSignalSpy failures(&session, &ConsoleSession::failed);
    session.connectTo(settingsFor(m_db->dsn()));
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Connected, 20000);
    QCOMPARE(failures.count(), 0);
}

void TestConsoleSession::supersededConnectIsDropped()
{
    ConsoleSession session;
    QSignalSpy failures(&session, &ConsoleSession::failed);
    QSignalSpy infos(&session, &ConsoleSession::serverInfoChanged);
    session.connectTo(
        settingsFor(idem::test::dsnWith(m_db->dsn(), { { "password", "wrong" }, { "user", "nobody_here" } })));
    session.connectTo(settingsFor(m_db->dsn()));
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Connected, 20000);
    // Give the worker time to have answered everything queued.
    QTest::qWait(300);
    QCOMPARE(failures.count(), 0);
    QCOMPARE(infos.count(), 1);
    QCOMPARE(session.state(), State::Connected);
}

void TestConsoleSession::lostConnectionReconnects()
{
    ConsoleSession session;
    session.setPollInterval(std::chrono::milliseconds(100));
    QSignalSpy failures(&session, &ConsoleSession::failed);
    QSignalSpy counts(&session, &ConsoleSession::countsChanged);
    session.connectTo(settingsFor(m_db->dsn()));
    QVERIFY(counts.wait(20000));

    {
        auto admin = idem::connect(idem::test::adminDsn());
        pqxx::nontransaction n(*admin);
        n.exec_params(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = "
            "'idem-console'",
            m_db->name());
    }
    QTRY_VERIFY_WITH_TIMEOUT(!failures.isEmpty(), 20000);
    const auto failure = failures.first().first().value<Failure>();
    QCOMPARE(failure.kind, FailureKind::ConnectionLost);
    QVERIFY(failure.retryInSeconds > 0);
    QCOMPARE(session.state(), State::Failed);

    // Back by itself, and polling again.
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Connected, 20000);
    counts.clear();
    QVERIFY(counts.wait(20000));
}

void TestConsoleSession::badSchemaNameIsReported()
{
    ConsoleSession session;
    QSignalSpy failures(&session, &ConsoleSession::failed);
    auto settings = settingsFor(m_db->dsn());
    settings.schema = QStringLiteral("Robert'); DROP TABLE students;--");
    session.connectTo(settings);
    QVERIFY(failures.wait(20000));
    QCOMPARE(failures.first().first().value<Failure>().kind, FailureKind::BadSchemaName);
    QCOMPARE(session.state(), State::Failed);
}

QTEST_MAIN(TestConsoleSession)
#include "tst_consolesession.moc"
