#include <QtTest>

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>
#include <QThread>

#include <csignal>
#include <memory>
#include <pqxx/pqxx>

#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "operations/stats.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/demoredrive.h"
#include "tests/support/pgservers.h"
#include "views/dashboardwidget.h"
#include "views/tilewidget.h"

using idem::test::CliRun;
using idem::test::describe;
using idem::test::LocalCluster;

// Issue 15 item 3: a failover to a streaming standby, with the demo running through it. The
// demo's clients keep a ledger of every success they were told about and hold the promoted
// standby to it: under synchronous replication nothing acknowledged may be missing; under
// asynchronous replication, with the walsender stopped before the primary dies, successes
// acknowledged in that window are gone and the demo must say so ("clean": false).
class TestFailover : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void synchronousFailoverLosesNothing();
    void asynchronousFailoverReportsLostSuccesses();
    void standbyLagByLsnWhenCaughtUp();
    void demoThroughAReadOnlyFlipLosesNothing();
    void standbyJudgesLeasesAtItsReplayPoint();

private:
    // Runs the demo across a failover and returns its JSON summary (and its exit code).
    QJsonObject failover(bool synchronous, int* exitCode);
};

void TestFailover::initTestCase()
{
    const QString problem = idem::test::postgresServerProblem();
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
}

// QVERIFY2 for a function that returns a value: records the failure and returns {} from it (a
// QVERIFY in a lambda only left the lambda, and the run went on with no standby or no demo).
#define REQUIRE_OR_RETURN(cond, description)                                                                           \
    do {                                                                                                               \
        if (!QTest::qVerify(static_cast<bool>(cond), #cond, description, __FILE__, __LINE__))                          \
            return {};                                                                                                 \
    } while (false)

QJsonObject TestFailover::failover(bool synchronous, int* exitCode)
{
    auto primary = LocalCluster::primary();
    REQUIRE_OR_RETURN(primary->problem().isEmpty(), qPrintable(primary->problem()));
    {
        pqxx::connection c(primary->dsn());
        idem::migrate(c, { idem::SchemaName(), false });
    }
    auto standby = LocalCluster::standbyOf(*primary, QStringLiteral("idem_standby"));
    REQUIRE_OR_RETURN(standby->problem().isEmpty(), qPrintable(standby->problem()));
    // Synchronous once the standby is there: before, every commit would wait for it.
    if (synchronous)
        primary->reconfigure({ QStringLiteral("synchronous_standby_names = 'idem_standby'"),
            QStringLiteral("synchronous_commit = on") });
    // Streaming (and, synchronous, counted as the synchronous standby) before the demo starts.
    const std::string wanted = synchronous ? "sync" : "async";
    bool streaming = false;
    for (int i = 0; i < 100 && !streaming; ++i) {
        pqxx::connection c(primary->dsn());
        pqxx::nontransaction n(c);
        streaming
            = !n.exec_params("SELECT 1 FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = $1", wanted)
                   .empty();
        if (!streaming)
            QThread::msleep(100);
    }
    REQUIRE_OR_RETURN(streaming, "the standby never streamed from the primary");

    // Both servers in one conninfo: after the failover libpq finds the one that takes writes.
    const QString dsn = QStringLiteral("host=127.0.0.1,127.0.0.1 port=%1,%2 dbname=postgres user=postgres "
                                       "sslmode=disable connect_timeout=2 target_session_attrs=read-write")
                            .arg(primary->port())
                            .arg(standby->port());
    QProcess demo;
    demo.setProcessEnvironment(idem::test::cleanEnvironment());
    // With its re-drivers (issue 42): they carry on across the failover as the workers do.
    demo.start(idem::test::idemctlPath(),
        { QStringLiteral("demo"), QStringLiteral("--dsn"), dsn, QStringLiteral("--json"), QStringLiteral("--quiet"),
            QStringLiteral("--duration"), QStringLiteral("12"), QStringLiteral("--workers"), QStringLiteral("4"),
            QStringLiteral("--rate"), QStringLiteral("250"), QStringLiteral("--lease-ms"), QStringLiteral("1000"),
            QStringLiteral("--slow-ms"), QStringLiteral("100") });
    pqxx::connection watch(primary->dsn());
    const auto succeeded = [&] {
        return pqxx::nontransaction(watch)
            .exec("SELECT count(*) FROM idem.task_idempotency WHERE status = 'succeeded'")[0][0]
            .as<long long>();
    };
    // The demo at work: successes committed (and replicated) before anything is stopped.
    QElapsedTimer clock;
    clock.start();
    while (succeeded() < 50 && clock.elapsed() < 20000)
        QThread::msleep(100);
    REQUIRE_OR_RETURN(succeeded() >= 50, "the demo committed fewer than 50 successes in 20 s");
    // The walsender stops: the standby receives nothing more. Under synchronous replication the
    // commits now wait; under asynchronous they are acknowledged and never reach the standby.
    const auto senders = primary->walSenderPids();
    REQUIRE_OR_RETURN(!senders.empty(), "no walsender on the primary");
    for (const long pid : senders)
        ::kill(static_cast<pid_t>(pid), SIGSTOP);
    // The window, counted rather than slept: asynchronous, at least 20 successes committed (and
    // acknowledged to the demo's clients) that the standby never received; synchronous, commits
    // waiting for the standby (wait event SyncRep).
    const long long atStop = succeeded();
    const auto windowSeen = [&] {
        if (!synchronous)
            return succeeded() >= atStop + 20;
        return pqxx::nontransaction(watch)
                   .exec("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")[0][0]
                   .as<long long>()
            > 0;
    };
    clock.restart();
    while (!windowSeen() && clock.elapsed() < 20000)
        QThread::msleep(50);
    REQUIRE_OR_RETURN(windowSeen(),
        synchronous ? "no commit waited for the stopped standby in 20 s"
                    : "fewer than 20 successes committed after the walsender stopped, in 20 s");
    watch.disconnect();
    // The primary dies (restart_after_crash is off: a killed child takes the server down).
    for (const long pid : senders)
        ::kill(static_cast<pid_t>(pid), SIGKILL);
    primary->crash();
    REQUIRE_OR_RETURN(standby->promote(), qPrintable(standby->problem()));
    // A failed key requeued with re-execute on the promoted standby: the demo's re-driver of
    // charge, reconnected, runs it (one effect) while the demo still runs.
    const auto item = idem::test::requeueDemoKeyForRedrive(standby->dsn(), "tf:charge:after-failover");
    REQUIRE_OR_RETURN(item > 0, "the requeue queued no re-drive item");
    const auto redriven = idem::test::waitForRedrive(standby->dsn(), item, std::chrono::seconds(30));
    REQUIRE_OR_RETURN(redriven == "succeeded succeeded 1", qPrintable(QString::fromStdString(redriven)));

    const CliRun run = idem::test::finishProcess(demo, 60000);
    *exitCode = run.exitCode;
    QJsonParseError error;
    const QJsonObject summary = QJsonDocument::fromJson(run.out.toUtf8(), &error).object();
    REQUIRE_OR_RETURN(error.error == QJsonParseError::NoError, qPrintable(describe(run)));
    // Issue 15 item 6: what the workers say when the primary goes away, in words.
    REQUIRE_OR_RETURN(!run.err.contains(QStringLiteral("client encoding")), qPrintable(run.err));
    REQUIRE_OR_RETURN(run.err.contains(QStringLiteral("the server closed the connection")), qPrintable(run.err));
    REQUIRE_OR_RETURN(run.err.contains(QStringLiteral("reconnecting")), qPrintable(run.err));
    qInfo("%s: %s", synchronous ? "synchronous" : "asynchronous",
        QJsonDocument(summary.value(QStringLiteral("ledger")).toObject()).toJson(QJsonDocument::Compact).constData());
    return summary;
}

void TestFailover::synchronousFailoverLosesNothing()
{
    int exitCode = -1;
    const QJsonObject summary = failover(true, &exitCode);
    if (QTest::currentTestFailed())
        return;
    const QJsonObject ledger = summary.value(QStringLiteral("ledger")).toObject();
    QVERIFY2(
        ledger.value(QStringLiteral("acknowledged")).toInteger() > 100, QJsonDocument(summary).toJson().constData());
    QCOMPARE(ledger.value(QStringLiteral("lost_acknowledged")).toInteger(), 0);
    QCOMPARE(ledger.value(QStringLiteral("reexecuted_after_ack")).toInteger(), 0);
    QVERIFY2(summary.value(QStringLiteral("clean")).toBool(), QJsonDocument(summary).toJson().constData());
    QCOMPARE(exitCode, 0);
}

void TestFailover::asynchronousFailoverReportsLostSuccesses()
{
    int exitCode = -1;
    const QJsonObject summary = failover(false, &exitCode);
    if (QTest::currentTestFailed())
        return;
    const QJsonObject ledger = summary.value(QStringLiteral("ledger")).toObject();
    QVERIFY2(
        ledger.value(QStringLiteral("acknowledged")).toInteger() > 100, QJsonDocument(summary).toJson().constData());
    // Successes acknowledged while the walsender was stopped: gone from the promoted standby,
    // or run again there by a client's retry with another result.
    const auto lost = ledger.value(QStringLiteral("lost_acknowledged")).toInteger()
        + ledger.value(QStringLiteral("reexecuted_after_ack")).toInteger();
    QVERIFY2(lost > 0, QJsonDocument(summary).toJson().constData());
    QVERIFY(!ledger.value(QStringLiteral("lost_keys")).toArray().isEmpty());
    QVERIFY2(!summary.value(QStringLiteral("clean")).toBool(), QJsonDocument(summary).toJson().constData());
    QCOMPARE(exitCode, 1);
}

// Issue 15 item 4: the lag was now() - pg_last_xact_replay_timestamp(), which grows while the
// primary is idle (49.7 s with nothing outstanding) and could print "-0.0 s".
void TestFailover::standbyLagByLsnWhenCaughtUp()
{
    auto primary = LocalCluster::primary();
    QVERIFY2(primary->problem().isEmpty(), qPrintable(primary->problem()));
    pqxx::connection p(primary->dsn());
    idem::migrate(p, { idem::SchemaName(), false });
    auto standby = LocalCluster::standbyOf(*primary, QStringLiteral("idem_standby"));
    QVERIFY2(standby->problem().isEmpty(), qPrintable(standby->problem()));
    pqxx::nontransaction(p).exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status,"
                                 " owner_token, lease_until) VALUES ('tl:charge:1', 'v1:' || repeat('a', 64),"
                                 " 'processing', gen_random_uuid(), now() + interval '1 hour')");
    pqxx::connection s(standby->dsn());
    QTRY_VERIFY_WITH_TIMEOUT(
        pqxx::nontransaction(s).exec("SELECT count(*) FROM idem.task_idempotency")[0][0].as<int>() == 1, 10000);
    // Caught up, the primary idle: no lag, however long it stays idle.
    QThread::msleep(2500);
    const auto idle = idem::readStats(s, idem::SchemaName(), {});
    QVERIFY(idle.inRecovery);
    QVERIFY(idle.replicationLagSeconds.has_value());
    QCOMPARE(*idle.replicationLagSeconds, 0.0);

    // The console on the standby: live, the status line saying what the figures are as of.
    QTemporaryDir dir;
    QSettings settings(dir.filePath(QStringLiteral("console.conf")), QSettings::IniFormat);
    idem::console::ConsoleSession session;
    idem::console::DashboardWidget dashboard(&session, &settings);
    dashboard.model()->setInterval(500);
    dashboard.show();
    idem::console::ConnectionSettings cs;
    cs.conninfo = QString::fromStdString(standby->dsn());
    session.connectTo(cs);
    QTRY_VERIFY_WITH_TIMEOUT(dashboard.model()->ticks() >= 2, 20000);
    QCOMPARE(dashboard.freshnessText(), QStringLiteral("● Live"));
    QVERIFY2(
        dashboard.statusText().contains(QStringLiteral("as of its replay point")), qPrintable(dashboard.statusText()));
    QVERIFY2(
        dashboard.statusText().contains(QStringLiteral("replication lag 0.0 s")), qPrintable(dashboard.statusText()));

    // Replay paused with a write outstanding: a real lag, positive and growing.
    pqxx::nontransaction(s).exec("SELECT pg_wal_replay_pause()");
    pqxx::nontransaction(p).exec("UPDATE idem.task_idempotency SET lease_until = now()");
    QThread::msleep(1500);
    const auto behind = idem::readStats(s, idem::SchemaName(), {});
    QVERIFY(behind.replicationLagSeconds.has_value());
    QVERIFY2(*behind.replicationLagSeconds >= 1.0, qPrintable(QString::number(*behind.replicationLagSeconds)));
    // Past the amber threshold (5 s) the banner says the standby is behind.
    QTRY_VERIFY2_WITH_TIMEOUT(dashboard.freshnessText().contains(QStringLiteral("behind its primary")),
        qPrintable(dashboard.freshnessText()), 15000);
    pqxx::nontransaction(s).exec("SELECT pg_wal_replay_resume()");
}

// Issue 29 item 2: the server turns read-only under the running demo, as a primary demoted by a
// switchover does (its open sessions' next writes refused with SQLSTATE 25006), and its sessions
// are then cut, so that the workers reconnect to a read-only server, until it takes writes again.
// The workers say so in words, reconnect and retry (a claim again, a completion fenced with the
// same token, a key whose lease expired meanwhile taken over): nothing is dropped, no key is left
// processing, and the verdict is what the database holds.
void TestFailover::demoThroughAReadOnlyFlipLosesNothing()
{
    auto server = LocalCluster::primary();
    QVERIFY2(server->problem().isEmpty(), qPrintable(server->problem()));
    auto admin = std::make_unique<pqxx::connection>(server->dsn());
    idem::migrate(*admin, { idem::SchemaName(), false });
    const auto scalar
        = [&](const std::string& sql) { return pqxx::nontransaction(*admin).exec(sql)[0][0].as<long long>(); };

    QProcess demo;
    demo.setProcessEnvironment(idem::test::cleanEnvironment());
    demo.start(idem::test::idemctlPath(),
        { QStringLiteral("demo"), QStringLiteral("--dsn"), QString::fromStdString(server->dsn()),
            QStringLiteral("--json"), QStringLiteral("--quiet"), QStringLiteral("--duration"), QStringLiteral("12"),
            QStringLiteral("--workers"), QStringLiteral("4"), QStringLiteral("--rate"), QStringLiteral("200"),
            QStringLiteral("--lease-ms"), QStringLiteral("1000"), QStringLiteral("--slow-ms"), QStringLiteral("300"),
            QStringLiteral("--slow-rate"), QStringLiteral("0.2"), QStringLiteral("--die-rate"), QStringLiteral("0"),
            QStringLiteral("--stale-rate"), QStringLiteral("0") });
    QVERIFY(demo.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(
        scalar("SELECT count(*) FROM idem.task_idempotency WHERE status = 'succeeded'") >= 50, 30000);

    // Read-only for every session at its next transaction: claims, fences and completions of
    // the workers' open connections are refused.
    QVERIFY2(
        server->reconfigure({ QStringLiteral("default_transaction_read_only = on") }), qPrintable(server->problem()));
    QTRY_COMPARE_WITH_TIMEOUT(pqxx::nontransaction(*admin)
                                  .exec("SELECT current_setting('default_transaction_read_only')")[0][0]
                                  .as<std::string>(),
        std::string("on"), 10000);
    QThread::msleep(1000);
    const std::string records = "SELECT count(*) FROM idem.task_idempotency";
    const long long readOnlyAt = scalar(records);
    // The node restarts as a standby would: the sessions are cut; new ones are read-only too.
    pqxx::nontransaction(*admin).exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'idemctl demo%'");
    // Longer than a lease: the keys claimed before the flip wait for a takeover or their fence.
    QThread::msleep(2000);
    const long long during = scalar(records);
    QVERIFY2(
        server->reconfigure({ QStringLiteral("default_transaction_read_only = off") }), qPrintable(server->problem()));

    const CliRun run = idem::test::finishProcess(demo, 90000);
    QJsonParseError error;
    const QJsonObject summary = QJsonDocument::fromJson(run.out.toUtf8(), &error).object();
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(describe(run)));
    const QByteArray text = QJsonDocument(summary).toJson(QJsonDocument::Compact);
    qInfo("%s", text.constData());
    // Said in words, not as a bare SQLSTATE; not as libpqxx's "client encoding" either.
    QVERIFY2(run.err.contains(QStringLiteral("the server is read-only (not the primary)")), qPrintable(run.err));
    QVERIFY2(run.err.contains(QStringLiteral("; reconnecting")), qPrintable(run.err));
    QVERIFY2(!run.err.contains(QStringLiteral("SQLSTATE")), qPrintable(run.err));
    QVERIFY2(!run.err.contains(QStringLiteral("client encoding")), qPrintable(run.err));
    const QJsonObject events = summary.value(QStringLiteral("events")).toObject();
    QVERIFY2(events.value(QStringLiteral("not_primary")).toInteger() > 0, text.constData());
    QCOMPARE(events.value(QStringLiteral("errors")).toInteger(), 0);
    QCOMPARE(summary.value(QStringLiteral("dropped_requests")).toInteger(), 0);
    QCOMPARE(summary.value(QStringLiteral("stuck_keys")).toInteger(), 0);
    // Nothing was written while read-only, and the work went on after it.
    QCOMPARE(during, readOnlyAt);
    QVERIFY(scalar(records) > during);

    // The verdict is the database's: no key left processing (every one was retried or taken
    // over), the summary's record states are the table's, and every acknowledged success is there.
    const std::string run_ = summary.value(QStringLiteral("run")).toString().toStdString();
    const std::string mine = " WHERE split_part(idempotency_key, ':', 3) LIKE 'order-" + run_ + "-%'";
    QCOMPARE(scalar("SELECT count(*) FROM idem.task_idempotency" + mine + " AND status = 'processing'"), 0LL);
    QCOMPARE(summary.value(QStringLiteral("expired_leases")).toInteger(), 0);
    const QJsonObject states = summary.value(QStringLiteral("states")).toObject();
    for (const char* status : { "succeeded", "failed", "retryable_failed", "processing" })
        QCOMPARE(states.value(QLatin1String(status)).toInteger(),
            scalar("SELECT count(*) FROM idem.task_idempotency" + mine + " AND status = '" + status + "'"));
    const QJsonObject ledger = summary.value(QStringLiteral("ledger")).toObject();
    QVERIFY2(ledger.value(QStringLiteral("acknowledged")).toInteger() > 50, text.constData());
    QCOMPARE(ledger.value(QStringLiteral("lost_acknowledged")).toInteger(), 0);
    QCOMPARE(ledger.value(QStringLiteral("reexecuted_after_ack")).toInteger(), 0);
    QCOMPARE(scalar("SELECT count(*) FROM (SELECT idempotency_key FROM idem.demo_orders_effects GROUP BY 1"
                    " HAVING count(*) > 1) d"),
        0LL);
    QVERIFY2(summary.value(QStringLiteral("clean")).toBool(), text.constData());
    QCOMPARE(run.exitCode, 0);
}

// Issue 29 item 5: on a standby with replay paused, lease expiry was judged by the standby's
// clock while the page said "as of its replay point": leases that ran out after the replay point
// showed as expired (0 live, 16 expired where 14 were live then) and lag alone turned the
// Expired leases tile red. The row figures now hold at the replay point, and say when that was.
void TestFailover::standbyJudgesLeasesAtItsReplayPoint()
{
    auto primary = LocalCluster::primary();
    QVERIFY2(primary->problem().isEmpty(), qPrintable(primary->problem()));
    pqxx::connection p(primary->dsn());
    idem::migrate(p, { idem::SchemaName(), false });
    auto standby = LocalCluster::standbyOf(*primary, QStringLiteral("idem_standby"));
    QVERIFY2(standby->problem().isEmpty(), qPrintable(standby->problem()));
    // 16 in processing: 14 whose leases run out 20 s from now, 2 already expired.
    pqxx::nontransaction(p).exec(
        "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until)"
        " SELECT 'rp:charge:' || i, 'v1:' || repeat('a', 64), 'processing', gen_random_uuid(),"
        "        CASE WHEN i <= 14 THEN now() + interval '20 seconds' ELSE now() - interval '1 minute' END"
        "   FROM generate_series(1, 16) i");
    pqxx::connection s(standby->dsn());
    const auto onStandby = [&s](const char* sql) { return pqxx::nontransaction(s).exec(sql)[0][0]; };
    QTRY_VERIFY_WITH_TIMEOUT(onStandby("SELECT count(*) FROM idem.task_idempotency").as<int>() == 16, 20000);
    onStandby("SELECT pg_wal_replay_pause()");
    const auto resume = qScopeGuard([&s] { pqxx::nontransaction(s).exec("SELECT pg_wal_replay_resume()"); });
    // The premise: the replay point is before the 14 leases run out.
    QCOMPARE(onStandby("SELECT count(*) FILTER (WHERE lease_until > pg_last_xact_replay_timestamp())"
                       "  FROM idem.task_idempotency")
                 .as<int>(),
        14);
    // A write the standby receives but does not replay: it is behind, not merely idle.
    pqxx::nontransaction(p).exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status)"
                                 " VALUES ('rp:charge:later', 'v1:' || repeat('b', 64), 'succeeded')");
    QTRY_VERIFY_WITH_TIMEOUT(
        onStandby("SELECT pg_last_wal_receive_lsn() > pg_last_wal_replay_lsn()").as<bool>(), 20000);
    // By the standby's clock all 16 leases have run out now.
    QTRY_VERIFY_WITH_TIMEOUT(
        onStandby("SELECT count(*) FILTER (WHERE lease_until <= now()) FROM idem.task_idempotency").as<int>() == 16,
        40000);
    const std::string replayPoint = onStandby("SELECT to_char(pg_last_xact_replay_timestamp() AT TIME ZONE 'UTC',"
                                              " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')")
                                        .as<std::string>();

    const auto behind = idem::readStats(s, idem::SchemaName(), {});
    QVERIFY(behind.inRecovery);
    QVERIFY(behind.replicationLagSeconds && *behind.replicationLagSeconds > 0);
    QCOMPARE(behind.processing, std::int64_t(14));
    QCOMPARE(behind.expiredLeases, std::int64_t(2));
    QCOMPARE(behind.liveTakenAt, replayPoint);
    QCOMPARE(behind.label(idem::Figure::ExpiredLeases).observedAt, replayPoint);

    // The exact figures (idemctl stats --exact, the console's own exact count) are judged at the
    // same moment: the two never disagree on a standby.
    idem::ReadStatsOptions exactly;
    exactly.exactRows = true;
    const auto exact = idem::readStats(s, idem::SchemaName(), {}, exactly);
    QCOMPARE(exact.processing, std::int64_t(14));
    QCOMPARE(exact.expiredLeases, std::int64_t(2));
    QCOMPARE(exact.liveTakenAt, replayPoint);
    const auto own = idem::readOwnExact(s, idem::SchemaName(), {}, 5000);
    QCOMPARE(own.processing, std::int64_t(14));
    QCOMPARE(own.expiredLeases, std::int64_t(2));
    QCOMPARE(own.takenAt, replayPoint);

    // idemctl stats says so.
    const CliRun cli = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("stats"), QStringLiteral("--dsn"), QString::fromStdString(standby->dsn()) });
    QVERIFY2(cli.exitCode == 0, qPrintable(describe(cli)));
    const QRegularExpression judged(QStringLiteral("leases judged as of +%1 \\(the replay point\\)\n")
                                        .arg(QRegularExpression::escape(QString::fromStdString(replayPoint))));
    QVERIFY2(cli.out.contains(judged), qPrintable(cli.out));
    QVERIFY2(cli.out.contains(QRegularExpression(QStringLiteral("processing \\(live leases\\) +14\\n"))),
        qPrintable(cli.out));
    QVERIFY2(cli.out.contains(QRegularExpression(QStringLiteral("expired leases +2\\n"))), qPrintable(cli.out));

    // The console on the standby: 14 live, 2 expired, and the Expired leases tile amber (red
    // from 10): the lag has its own words and colours in the freshness line.
    QTemporaryDir dir;
    QSettings settings(dir.filePath(QStringLiteral("console.conf")), QSettings::IniFormat);
    idem::console::ConsoleSession session;
    idem::console::DashboardWidget dashboard(&session, &settings);
    dashboard.model()->setInterval(500);
    dashboard.show();
    idem::console::ConnectionSettings cs;
    cs.conninfo = QString::fromStdString(standby->dsn());
    session.connectTo(cs);
    QTRY_VERIFY_WITH_TIMEOUT(dashboard.model()->ticks() >= 2, 20000);
    using idem::console::Tile;
    QCOMPARE(dashboard.tile(Tile::Processing)->valueText(), QStringLiteral("14"));
    QCOMPARE(dashboard.tile(Tile::ExpiredLeases)->valueText(), QStringLiteral("2"));
    QCOMPARE(dashboard.tile(Tile::ExpiredLeases)->level(), idem::console::Level::Warning);
    const QString at = QDateTime::fromString(QString::fromStdString(replayPoint), Qt::ISODateWithMs)
                           .toLocalTime()
                           .toString(QStringLiteral("HH:mm:ss"));
    QVERIFY2(
        dashboard.statusText().contains(
            QStringLiteral("standby (figures and lease expiry as of its replay point, %1), replication lag").arg(at)),
        qPrintable(dashboard.statusText()));

    // Replay resumed and caught up: as current as the primary, judged by now (the primary, idle,
    // renewed no lease either): all 16 expired.
    onStandby("SELECT pg_wal_replay_resume()");
    QTRY_COMPARE_WITH_TIMEOUT(idem::readStats(s, idem::SchemaName(), {}).expiredLeases, std::int64_t(16), 20000);
    QTRY_COMPARE_WITH_TIMEOUT(dashboard.tile(Tile::ExpiredLeases)->valueText(), QStringLiteral("16"), 20000);
}

QTEST_MAIN(TestFailover)
#include "tst_failover.moc"
