#include <QtTest>

#include <QElapsedTimer>
#include <QSignalSpy>

#include <optional>
#include <pqxx/pqxx>

#include "core/connection.h"
#include "schema/migrate.h"
#include "models/consolesession.h"
#include "tests/support/silentserver.h"
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
    void jobsAnswerInOrder();
    void jobErrorKeepsConnection();
    void cancelledJobNeverRuns();
    void lostConnectionFailsPendingJobs();
    void readOnlyServerIsAStateNotAFailure();
    void lockFailuresAreSaidInWords();

private:
    static ConnectionSettings settingsFor(const std::string& dsn);
    std::unique_ptr<idem::test::ScratchDatabase> m_db;
};

void TestConsoleSession::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("console_session", idem::test::migrated);
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
    // A server on the loopback that never answers: a connect there hangs until its timeout, 5 s.
    // A connectTo that waited on it would return after all of that, with the attempt failed;
    // half of it is far beyond what a loaded machine adds to starting a connect.
    idem::test::SilentServer silent;
    QVERIFY(silent.port() > 0);
    QElapsedTimer clock;
    clock.start();
    session.connectTo(settingsFor(silent.dsn(5).toStdString()));
    QVERIFY2(clock.elapsed() < 2500, "connectTo waited on the network");
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
    // Once the worker has answered everything queued (the refused connect first).
    bool drained = false;
    session.afterQueued(this, [&drained] { drained = true; });
    QTRY_VERIFY_WITH_TIMEOUT(drained, 20000);
    QCOMPARE(failures.count(), 0);
    QCOMPARE(infos.count(), 1);
    QCOMPARE(session.state(), State::Connected);
}

void TestConsoleSession::lostConnectionReconnects()
{
    ConsoleSession session;
    QSignalSpy failures(&session, &ConsoleSession::failed);
    session.connectTo(settingsFor(m_db->dsn()));
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Connected, 20000);
    const auto ping = [&session](QObject* context, bool* answered) {
        return session.submit(
            [](pqxx::connection& c, const idem::SchemaName&) {
                pqxx::nontransaction n(c);
                return QVariant(n.exec("SELECT 1")[0][0].as<int>());
            },
            context, [answered](const QVariant&) { *answered = true; });
    };

    {
        auto admin = idem::connect(idem::test::adminDsn());
        pqxx::nontransaction n(*admin);
        n.exec_params(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = "
            "'idem-console'",
            m_db->name());
    }
    // The next job (a dashboard tick, in the console) finds the connection gone.
    QObject context;
    bool answered = false;
    QVERIFY(ping(&context, &answered) != 0);
    QTRY_VERIFY_WITH_TIMEOUT(!failures.isEmpty(), 20000);
    QVERIFY(!answered);
    const auto failure = failures.first().first().value<Failure>();
    QCOMPARE(failure.kind, FailureKind::ConnectionLost);
    QVERIFY(failure.retryInSeconds > 0);
    QCOMPARE(session.state(), State::Failed);

    // Back by itself, and answering jobs again.
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Connected, 20000);
    QVERIFY(ping(&context, &answered) != 0);
    QTRY_VERIFY_WITH_TIMEOUT(answered, 20000);
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


namespace {
// Runs a job against the session and waits for its answer, on the UI thread's event loop.
struct JobOutcome {
    bool done = false;
    bool failed = false;
    QVariant answer;
    Failure failure;
};
} // namespace

void TestConsoleSession::jobsAnswerInOrder()
{
    ConsoleSession session;
    session.connectTo(settingsFor(m_db->dsn()));
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Connected, 20000);
    QStringList answers;
    QObject context;
    for (int i = 0; i < 5; ++i) {
        const auto id = session.submit(
            [i](pqxx::connection& c, const idem::SchemaName& schema) {
                pqxx::read_transaction t(c);
                const auto r = t.exec_params("SELECT $1::int * 10, $2::text", i, schema.name());
                return QVariant(QStringLiteral("%1 %2").arg(r[0][0].as<int>()).arg(
                    QString::fromStdString(r[0][1].as<std::string>())));
            },
            &context, [&answers](const QVariant& v) { answers << v.toString(); });
        QVERIFY(id != 0);
    }
    QCOMPARE(session.pendingJobs(), 5);
    QTRY_COMPARE_WITH_TIMEOUT(answers.size(), 5, 20000);
    QCOMPARE(answers,
        QStringList({ QStringLiteral("0 idem"), QStringLiteral("10 idem"), QStringLiteral("20 idem"),
            QStringLiteral("30 idem"), QStringLiteral("40 idem") }));
    QCOMPARE(session.pendingJobs(), 0);
}

void TestConsoleSession::jobErrorKeepsConnection()
{
    ConsoleSession session;
    QSignalSpy sessionFailures(&session, &ConsoleSession::failed);
    session.connectTo(settingsFor(m_db->dsn()));
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Connected, 20000);
    QObject context;
    JobOutcome out;
    session.submit(
        [](pqxx::connection& c, const idem::SchemaName&) {
            pqxx::read_transaction t(c);
            t.exec("SELECT * FROM no_such_table_here");
            return QVariant();
        },
        &context, [&out](const QVariant&) { out.done = true; },
        [&out](const Failure& f) {
            out.failed = true;
            out.failure = f;
        });
    QTRY_VERIFY_WITH_TIMEOUT(out.failed, 20000);
    QVERIFY(!out.done);
    QCOMPARE(out.failure.kind, FailureKind::Query);
    QCOMPARE(out.failure.sqlstate, QStringLiteral("42P01"));
    QCOMPARE(out.failure.request, Failure::Request::Job);
    // A statement error belongs to whoever asked; the connection stays up and says nothing.
    QCOMPARE(session.state(), State::Connected);
    QCOMPARE(sessionFailures.count(), 0);
    JobOutcome next;
    session.submit([](pqxx::connection&, const idem::SchemaName&) { return QVariant(7); }, &context,
        [&next](const QVariant& v) { next.answer = v; next.done = true; });
    QTRY_VERIFY_WITH_TIMEOUT(next.done, 20000);
    QCOMPARE(next.answer.toInt(), 7);
}

void TestConsoleSession::cancelledJobNeverRuns()
{
    ConsoleSession session;
    session.connectTo(settingsFor(m_db->dsn()));
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Connected, 20000);
    QObject context;
    auto ran = std::make_shared<std::atomic_int>(0);
    bool slowDone = false;
    bool answered = false;
    // The first job holds the worker, so the second is still queued when it is cancelled.
    session.submit(
        [](pqxx::connection& c, const idem::SchemaName&) {
            pqxx::nontransaction n(c);
            n.exec("SELECT pg_sleep(0.5)");
            return QVariant();
        },
        &context, [&slowDone](const QVariant&) { slowDone = true; });
    const auto id = session.submit(
        [ran](pqxx::connection&, const idem::SchemaName&) {
            ++*ran;
            return QVariant();
        },
        &context, [&answered](const QVariant&) { answered = true; }, [&answered](const Failure&) { answered = true; });
    session.cancel(id);
    // A job queued after it: by the time it has answered, the cancelled one would have run
    // (the worker runs jobs in order, jobsAnswerInOrder).
    bool lastDone = false;
    session.submit([](pqxx::connection&, const idem::SchemaName&) { return QVariant(); }, &context,
        [&lastDone](const QVariant&) { lastDone = true; });
    QTRY_VERIFY_WITH_TIMEOUT(slowDone, 20000);
    QTRY_VERIFY_WITH_TIMEOUT(lastDone, 20000);
    QCOMPARE(ran->load(), 0);
    QVERIFY(!answered);
    QCOMPARE(session.pendingJobs(), 0);
}

void TestConsoleSession::lostConnectionFailsPendingJobs()
{
    ConsoleSession session;
    session.connectTo(settingsFor(m_db->dsn()));
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Connected, 20000);
    QObject context;
    QList<Failure> failures;
    const auto onFailed = [&failures](const Failure& f) { failures << f; };
    // The first job's backend is terminated under it; the second waits behind it.
    session.submit(
        [](pqxx::connection& c, const idem::SchemaName&) {
            pqxx::nontransaction n(c);
            n.exec("SELECT pg_sleep(30)");
            return QVariant();
        },
        &context, {}, onFailed);
    session.submit([](pqxx::connection&, const idem::SchemaName&) { return QVariant(1); }, &context, {}, onFailed);
    {
        auto admin = idem::connect(idem::test::adminDsn());
        // Once the first job is in its statement (seen in pg_stat_activity), not before.
        const auto sleeping = [&] {
            pqxx::read_transaction t(*admin);
            return t.exec_params("SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND"
                                 " application_name = 'idem-console' AND state = 'active' AND pid <> pg_backend_pid()"
                                 " AND query LIKE '%pg_sleep(30)%'",
                        m_db->name())[0][0]
                       .as<int>()
                == 1;
        };
        QTRY_VERIFY_WITH_TIMEOUT(sleeping(), 20000);
        pqxx::nontransaction n(*admin);
        n.exec_params("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND "
                      "application_name = 'idem-console'",
            m_db->name());
    }
    QTRY_COMPARE_WITH_TIMEOUT(failures.size(), 2, 20000);
    for (const auto& f : failures)
        QCOMPARE(f.kind, FailureKind::ConnectionLost);
    QCOMPARE(session.pendingJobs(), 0);
    // The session noticed through the job and comes back by itself.
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Connected, 20000);
    bool done = false;
    session.submit([](pqxx::connection&, const idem::SchemaName&) { return QVariant(2); }, &context,
        [&done](const QVariant&) { done = true; });
    QTRY_VERIFY_WITH_TIMEOUT(done, 20000);
}

// Issue 29: a connection opened on a writable server that meets a read-only refusal (SQLSTATE
// 25006: a switchover demoted it) is left, in words, and the session reconnects; one opened on a
// read-only server (a standby watched on purpose) shows it as a state, and a write there fails
// in words with the connection kept.
void TestConsoleSession::readOnlyServerIsAStateNotAFailure()
{
    idem::test::ScratchDatabase db("console_readonly");
    auto admin = db.connect(); // opened before the database turns read-only: stays writable
    ConsoleSession session;
    QSignalSpy sessionFailures(&session, &ConsoleSession::failed);
    session.connectTo(settingsFor(db.dsn()));
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Connected, 20000);
    QVERIFY(!session.serverInfo().readOnly);
    QVERIFY(!session.serverInfo().replicationText().contains(QLatin1String("read-only")));

    QObject context;
    const auto write = [](pqxx::connection& c, const idem::SchemaName&) {
        pqxx::work w(c);
        w.exec("CREATE TABLE console_wrote (x int)");
        w.commit();
        return QVariant();
    };
    // The server turns read-only under the console: its session at once (as a reload of the
    // setting does), new sessions too.
    bool flipped = false;
    session.submit(
        [](pqxx::connection& c, const idem::SchemaName&) {
            pqxx::nontransaction(c).exec("SET default_transaction_read_only = on");
            return QVariant();
        },
        &context, [&flipped](const QVariant&) { flipped = true; });
    QTRY_VERIFY_WITH_TIMEOUT(flipped, 20000);
    pqxx::nontransaction(*admin).exec("ALTER DATABASE \"" + db.name() + "\" SET default_transaction_read_only = on");

    std::optional<Failure> demoted;
    session.submit(write, &context, {}, [&demoted](const Failure& f) { demoted = f; });
    QTRY_VERIFY_WITH_TIMEOUT(demoted.has_value(), 20000);
    QCOMPARE(demoted->kind, FailureKind::ConnectionLost);
    QVERIFY2(demoted->text().startsWith(QLatin1String("The server is read-only now: it is not the primary any more")),
        qPrintable(demoted->text()));
    QVERIFY2(!demoted->text().contains(QLatin1String("SQLSTATE")), qPrintable(demoted->text()));
    // The session left it and reconnected by itself, onto the (still) read-only server.
    QTRY_VERIFY_WITH_TIMEOUT(sessionFailures.count() >= 1, 20000);
    QVERIFY2(
        sessionFailures.first().first().value<Failure>().textWithRetry().contains(QLatin1String("Reconnecting in")),
        qPrintable(sessionFailures.first().first().value<Failure>().textWithRetry()));
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Connected, 20000);
    QVERIFY(session.serverInfo().readOnly);
    QVERIFY(!session.serverInfo().inRecovery);
    QVERIFY2(session.serverInfo().replicationText().contains(QLatin1String("read-only")),
        qPrintable(session.serverInfo().replicationText()));

    // Read-only from the start: a state. A write fails in words; the connection stays.
    const int failuresBefore = sessionFailures.count();
    std::optional<Failure> refused;
    session.submit(write, &context, {}, [&refused](const Failure& f) { refused = f; });
    QTRY_VERIFY_WITH_TIMEOUT(refused.has_value(), 20000);
    QCOMPARE(refused->kind, FailureKind::Query);
    QVERIFY2(refused->text().startsWith(QLatin1String("The server is read-only (a standby, or not the primary): this "
                                                      "needs the primary.")),
        qPrintable(refused->text()));
    QVERIFY2(!refused->text().contains(QLatin1String("SQLSTATE")), qPrintable(refused->text()));
    bool read = false;
    session.submit([](pqxx::connection&, const idem::SchemaName&) { return QVariant(3); }, &context,
        [&read](const QVariant&) { read = true; });
    QTRY_VERIFY_WITH_TIMEOUT(read, 20000);
    QCOMPARE(session.state(), State::Connected);
    QCOMPARE(sessionFailures.count(), failuresBefore);
    pqxx::nontransaction(*admin).exec("ALTER DATABASE \"" + db.name() + "\" RESET default_transaction_read_only");
}

// Issue 29 item 4: a lock another session holds reached the pages as the server's text
// ("SQLSTATE 57014 ... CONTEXT: SQL statement "WITH p AS (..."). The failure now says what happened
// in words; the server's message, SQLSTATE and context are its detail, for a tooltip.
void TestConsoleSession::lockFailuresAreSaidInWords()
{
    {
        auto c = m_db->connect();
        pqxx::nontransaction(*c).exec("CREATE TABLE IF NOT EXISTS public.held (i int);"
                                      "CREATE OR REPLACE FUNCTION public.read_held() RETURNS bigint LANGUAGE plpgsql AS"
                                      " $f$ BEGIN RETURN (SELECT count(*) FROM public.held); END $f$");
    }
    auto holder = m_db->connect();
    pqxx::work hold(*holder);
    hold.exec("LOCK TABLE public.held IN ACCESS EXCLUSIVE MODE");
    ConsoleSession session;
    session.connectTo(settingsFor(m_db->dsn()));
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Connected, 20000);
    QObject context;
    const auto failureOf = [&](const char* setting) {
        std::optional<Failure> out;
        session.submit(
            [setting](pqxx::connection& c, const idem::SchemaName&) {
                pqxx::read_transaction t(c);
                t.exec(setting);
                t.exec("SELECT public.read_held()");
                return QVariant();
            },
            &context, [](const QVariant&) {}, [&out](const Failure& f) { out = f; });
        if (!QTest::qWaitFor([&out] { return out.has_value(); }, 20000))
            return Failure {}; // none in time: the comparisons below fail
        return *out;
    };
    const Failure timeout = failureOf("SET LOCAL statement_timeout = '300ms'");
    QCOMPARE(timeout.sqlstate, QStringLiteral("57014"));
    QCOMPARE(timeout.text(),
        QStringLiteral("The database did not answer in time: the statement reached its time limit (a lock held by "
                       "another session, or a busy server)."));
    QVERIFY2(
        timeout.detail().startsWith(QStringLiteral("SQLSTATE 57014: canceling statement due to statement timeout")),
        qPrintable(timeout.detail()));
    QVERIFY2(timeout.detail().contains(QStringLiteral("CONTEXT:")), qPrintable(timeout.detail()));
    const Failure locked = failureOf("SET LOCAL lock_timeout = '300ms'");
    QCOMPARE(locked.sqlstate, QStringLiteral("55P03"));
    QCOMPARE(locked.text(),
        QStringLiteral(
            "A row or table this needs is locked by another session, and the statement gave up waiting for it."));
    QVERIFY2(locked.detail().contains(QStringLiteral("read_held")), qPrintable(locked.detail()));
    // Any other SQLSTATE keeps the server's first line, without the SQL a function ran.
    std::optional<Failure> other;
    session.submit(
        [](pqxx::connection& c, const idem::SchemaName&) {
            pqxx::read_transaction t(c);
            t.exec("DO $d$ BEGIN PERFORM 1 / 0; END $d$");
            return QVariant();
        },
        &context, [](const QVariant&) {}, [&other](const Failure& f) { other = f; });
    QTRY_VERIFY_WITH_TIMEOUT(other.has_value(), 20000);
    QCOMPARE(other->text(), QStringLiteral("A query failed (SQLSTATE 22012): division by zero"));
    QVERIFY2(other->detail().contains(QStringLiteral("CONTEXT:")), qPrintable(other->detail()));
    // A deadlock (the server's words with its SQLSTATE, as the worker passes them on).
    Failure deadlock;
    deadlock.kind = FailureKind::Query;
    deadlock.sqlstate = QStringLiteral("40P01");
    deadlock.message = QStringLiteral("deadlock detected\nDETAIL: Process 1 waits for ShareLock on transaction 2");
    QCOMPARE(deadlock.text(),
        QStringLiteral(
            "The statement was caught in a deadlock with another session; the database cancelled it to break "
            "the deadlock."));
    hold.abort();
}

QTEST_MAIN(TestConsoleSession)
#include "tst_consolesession.moc"
