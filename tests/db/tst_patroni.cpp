#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

#include <memory>

#include <pqxx/pqxx>

#include "models/consolesession.h"
#include "models/patronimodel.h"
#include "operations/events.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/demoredrive.h"
#include "views/clusterpanel.h"
#include "views/consolewidget.h"
#include "views/statuspanel.h"

using idem::test::CliRun;
using idem::test::describe;

namespace {

// A Patroni cluster of this test's own (scripts/patroni-cluster): etcd, three PostgreSQL nodes
// and HAProxy routing to the leader, all on loopback; stopped and removed when it goes.
class PatroniCluster {
public:
    explicit PatroniCluster(bool synchronous)
    {
        if (!m_dir.isValid()) {
            m_problem = QStringLiteral("no temporary directory");
            return;
        }
        QStringList args { QStringLiteral("start"), QStringLiteral("--nodes"), QStringLiteral("3") };
        if (synchronous)
            args << QStringLiteral("--sync");
        // The cluster is this test's ground, not what it tests: a start that fails (its script
        // says why, with the nodes' logs) is shown and tried once more from nothing.
        CliRun started = run(args, 300000);
        if (started.exitCode != 0) {
            qWarning("scripts/patroni-cluster start failed, trying once more: %s", qPrintable(describe(started)));
            run({ QStringLiteral("stop") }, 60000);
            started = run(args, 300000);
        }
        if (started.exitCode != 0)
            m_problem = QStringLiteral("scripts/patroni-cluster start failed twice: ") + describe(started);
    }
    ~PatroniCluster() { run({ QStringLiteral("stop") }, 60000); }
    PatroniCluster(const PatroniCluster&) = delete;
    PatroniCluster& operator=(const PatroniCluster&) = delete;

    const QString& problem() const { return m_problem; }

    // A conninfo through HAProxy (the leader, whichever it is), or to one node.
    QString dsn(const QString& which = QStringLiteral("haproxy")) const
    {
        return run({ QStringLiteral("dsn"), which }, 10000).out.trimmed();
    }
    QString leader() const { return run({ QStringLiteral("leader") }, 10000).out.trimmed(); }
    // A member's REST API, host:port.
    QString rest(const QString& member) const { return run({ QStringLiteral("rest"), member }, 10000).out.trimmed(); }
    CliRun command(const QString& verb, int timeoutMs = 120000) const { return run({ verb }, timeoutMs); }

private:
    CliRun run(const QStringList& args, int timeoutMs) const
    {
        QProcess p;
        auto env = idem::test::cleanEnvironment();
        env.insert(QStringLiteral("IDEM_PATRONI_DIR"), m_dir.filePath(QStringLiteral("cluster")));
        p.setProcessEnvironment(env);
        p.start(qEnvironmentVariable("IDEM_SOURCE_DIR") + QStringLiteral("/scripts/patroni-cluster"), args);
        return idem::test::finishProcess(p, timeoutMs);
    }

    QTemporaryDir m_dir;
    QString m_problem;
};

// The address:port a member's PostgreSQL listens on, as inet_server_addr() names it.
QString nodeAddress(const PatroniCluster& cluster, const QString& member)
{
    const auto m = QRegularExpression(QStringLiteral("host=(\\S+) port=(\\d+)")).match(cluster.dsn(member));
    return m.captured(1) + QLatin1Char(':') + m.captured(2);
}

// The Connection page's cluster table, row by row: "member|role|console on it".
QStringList clusterRows(const idem::console::PatroniModel& model)
{
    QStringList rows;
    for (int r = 0; r < model.rowCount(); ++r)
        rows << model.index(r, idem::console::PatroniModel::Member).data().toString() + QLatin1Char('|')
                + model.index(r, idem::console::PatroniModel::Role).data().toString() + QLatin1Char('|')
                + model.index(r, idem::console::PatroniModel::Console).data().toString();
    return rows;
}

std::int64_t count(const QString& dsn, const char* sql)
{
    pqxx::connection c(dsn.toStdString());
    pqxx::nontransaction n(c);
    return n.exec(sql)[0][0].as<std::int64_t>();
}

} // namespace

// Issue #29: Idem under Patroni, as users run it highly available: a switchover and a kill of
// the leader's postmaster while the demo runs through HAProxy, and verify across a switchover.
class TestPatroni : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void synchronousSwitchoverAndLeaderKillLoseNothing();
    void verifyAcrossASwitchover();

private:
    // One cluster, synchronous, for both: each test starts from whatever member leads then.
    std::unique_ptr<PatroniCluster> m_cluster;
};

void TestPatroni::initTestCase()
{
    QVERIFY2(!qEnvironmentVariable("IDEM_SOURCE_DIR").isEmpty(), "IDEM_SOURCE_DIR is not set (run through ctest)");
    m_cluster = std::make_unique<PatroniCluster>(true);
    QVERIFY2(m_cluster->problem().isEmpty(), qPrintable(m_cluster->problem()));
}

void TestPatroni::cleanupTestCase() { m_cluster.reset(); }

void TestPatroni::synchronousSwitchoverAndLeaderKillLoseNothing()
{
    auto& cluster = *m_cluster;
    const QString dsn = cluster.dsn();
    {
        pqxx::connection c(dsn.toStdString());
        idem::migrate(c, { idem::SchemaName(), false });
    }
    const QString first = cluster.leader();
    // A console through HAProxy, reading its server info every half second: it records the first
    // timeline, and after the switchover names the new leader and records the failover.
    idem::console::ConsoleSession console;
    // Its Connection page, pointed at every member's REST API (issue #29): the cluster table.
    idem::console::ConsoleWidget page(&console);
    page.show();
    console.setInfoRefreshInterval(std::chrono::milliseconds(500));
    page.clusterPanel()->setInterval(std::chrono::milliseconds(500));
    QStringList rest;
    for (const QString& member : { QStringLiteral("node1"), QStringLiteral("node2"), QStringLiteral("node3") })
        rest << QStringLiteral("http://") + cluster.rest(member);
    console.setPatroniEndpoint(rest.join(QLatin1Char(',')));
    idem::console::ConnectionSettings settings;
    settings.conninfo = dsn;
    console.connectTo(settings);
    QTRY_VERIFY_WITH_TIMEOUT(console.state() == idem::console::ConsoleSession::State::Connected, 30000);
    QCOMPARE(console.serverInfo().serverAddress, nodeAddress(cluster, first));
    const int firstTimeline = console.serverInfo().timeline;
    QVERIFY(firstTimeline > 0);
    const auto& members = *page.clusterPanel()->model();
    const auto leaderRow = [&](const QString& leader) {
        QStringList expected;
        for (const QString& member : { QStringLiteral("node1"), QStringLiteral("node2"), QStringLiteral("node3") })
            expected << (member == leader
                    ? QString(member + QStringLiteral("|leader (primary)|this console (actions and pages)"))
                    : QString(member + QStringLiteral("|synchronous standby|") + QLatin1Char('\n') + member
                        + QStringLiteral("|replica (asynchronous)|")));
        return expected;
    };
    // Each row: the leader marked as what this console is on, the others a synchronous standby or
    // a replica (which one Patroni made synchronous is its choice).
    const auto matches = [&](const QString& leader) {
        const QStringList rows = clusterRows(members);
        const QStringList expected = leaderRow(leader);
        if (rows.size() != 3)
            return false;
        for (int i = 0; i < 3; ++i)
            if (!expected[i].split(QLatin1Char('\n')).contains(rows[i]))
                return false;
        return rows.join(QLatin1Char(' ')).count(QStringLiteral("synchronous standby")) == 1;
    };
    QTRY_VERIFY2_WITH_TIMEOUT(matches(first),
        qPrintable(clusterRows(members).join(QStringLiteral("; ")) + QStringLiteral(" / ")
            + page.clusterPanel()->statusText()),
        30000);
    QVERIFY2(page.clusterPanel()->statusText().startsWith(QStringLiteral("3 member(s), leader %1; read ").arg(first)),
        qPrintable(page.clusterPanel()->statusText()));
    QVERIFY(page.findChild<QWidget*>(QStringLiteral("clusterBox"))->isVisible());
    // Synchronous mode: nothing acknowledged is at risk, and the page says why.
    QTRY_VERIFY2_WITH_TIMEOUT(page.statusPanel()->atRiskText().startsWith(
                                  QStringLiteral("0: every acknowledged commit waits for a synchronous standby")),
        qPrintable(page.statusPanel()->atRiskText()), 30000);

    QProcess demo;
    demo.setProcessEnvironment(idem::test::cleanEnvironment());
    demo.start(idem::test::idemctlPath(),
        { QStringLiteral("demo"), QStringLiteral("--dsn"), dsn, QStringLiteral("--json"), QStringLiteral("--quiet"),
            // With its re-drivers (issue 42): a lost server is theirs as it is the workers', across
            // the switchover and the leader's kill. It runs until it is told to stop (SIGTERM), once
            // both have happened and a re-drive after each has succeeded: a fixed duration could end
            // before a switchover that takes its time, and the re-drive would wait for nobody.
            QStringLiteral("--duration"), QStringLiteral("0"), QStringLiteral("--workers"), QStringLiteral("4"),
            QStringLiteral("--rate"), QStringLiteral("150"), QStringLiteral("--lease-ms"), QStringLiteral("1000"),
            QStringLiteral("--slow-ms"), QStringLiteral("100") });
    QElapsedTimer demoClock;
    demoClock.start();
    QThread::msleep(3000);
    const CliRun switched = cluster.command(QStringLiteral("switchover"));
    QVERIFY2(switched.exitCode == 0, qPrintable(describe(switched)));
    const QString second = cluster.leader();
    QVERIFY2(second != first, qPrintable(second));
    // A failed key requeued with re-execute on the new leader: the demo's re-driver of charge,
    // reconnected through HAProxy, runs it (one effect) while the demo still runs.
    const auto redrive = [&](const char* key) {
        const auto item = idem::test::requeueDemoKeyForRedrive(dsn.toStdString(), key);
        QVERIFY2(item > 0, "the requeue queued no re-drive item");
        const auto redriven = idem::test::waitForRedrive(dsn.toStdString(), item, std::chrono::seconds(30));
        qInfo("%s re-driven at %.1f s of the demo: %s", key, demoClock.elapsed() / 1000.0, redriven.c_str());
        QCOMPARE(QString::fromStdString(redriven), QStringLiteral("succeeded succeeded 1"));
    };
    qInfo("switchover done at %.1f s of the demo", demoClock.elapsed() / 1000.0);
    redrive("tp:charge:after-switchover");
    if (QTest::currentTestFailed())
        return;
    QTRY_VERIFY2_WITH_TIMEOUT(console.serverInfo().serverAddress == nodeAddress(cluster, second)
            && console.serverInfo().timeline > firstTimeline,
        qPrintable(console.serverInfo().nodeText()), 30000);
    // What it was on before: the old leader, or (HAProxy's health checks lag the switchover by a
    // second or two, so a reconnect may land on a standby first) a standby of the old timeline.
    const QString previous = console.serverInfo().previousNode;
    QVERIFY2(previous.contains(nodeAddress(cluster, first))
            || (previous.contains(QLatin1String("standby"))
                && previous.contains(QStringLiteral("timeline %1").arg(firstTimeline))),
        qPrintable(previous));
    QVERIFY(!console.serverInfo().inRecovery);
    // The cluster table names the new leader as the one this console is on, the old one as a
    // standby now, on the new timeline.
    QTRY_VERIFY2_WITH_TIMEOUT(matches(second),
        qPrintable(clusterRows(members).join(QStringLiteral("; ")) + QStringLiteral(" / ")
            + page.clusterPanel()->statusText()),
        30000);
    for (int r = 0; r < members.rowCount(); ++r)
        if (members.index(r, idem::console::PatroniModel::Member).data().toString() == second)
            QCOMPARE(members.index(r, idem::console::PatroniModel::Timeline).data().toString(),
                QString::number(console.serverInfo().timeline));
    QVERIFY2(page.clusterPanel()->statusText().contains(QStringLiteral("leader %1;").arg(second)),
        qPrintable(page.clusterPanel()->statusText()));
    {
        pqxx::connection c(dsn.toStdString());
        const auto nowUs
            = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
                  .count();
        int failovers = 0;
        for (const auto& e : idem::listEvents(c, idem::SchemaName(), nowUs - 600000000LL, nowUs + 60000000LL))
            if (e.action == "failover" && e.text.find(nodeAddress(cluster, second).toStdString()) != std::string::npos)
                ++failovers;
        QCOMPARE(failovers, 1);
    }
    console.disconnectFromServer();
    const CliRun killed = cluster.command(QStringLiteral("kill-leader"));
    QVERIFY2(killed.exitCode == 0, qPrintable(describe(killed)));
    const CliRun back = cluster.command(QStringLiteral("wait-leader"));
    QVERIFY2(back.exitCode == 0, qPrintable(describe(back)));
    qInfo("leader back at %.1f s of the demo", demoClock.elapsed() / 1000.0);
    // And after the leader's kill: the re-drivers found the new one too.
    redrive("tp:charge:after-kill");
    if (QTest::currentTestFailed())
        return;

    demo.terminate();
    const CliRun run = idem::test::finishProcess(demo, 120000);
    QJsonParseError error;
    const QJsonObject summary = QJsonDocument::fromJson(run.out.toUtf8(), &error).object();
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(describe(run)));
    const QJsonObject ledger = summary.value(QStringLiteral("ledger")).toObject();
    // How the re-drivers met the switchover and the kill, in their words (one line each).
    for (const QString& line : run.err.split(QLatin1Char('\n')))
        if (line.contains(QStringLiteral("re-driver")))
            qInfo("demo: %s", qPrintable(line.left(300)));
    qInfo("ledger %s, expired leases %lld", QJsonDocument(ledger).toJson(QJsonDocument::Compact).constData(),
        static_cast<long long>(summary.value(QStringLiteral("expired_leases")).toInteger()));
    // Synchronous replication: nothing acknowledged is missing or run again on the new leader.
    QVERIFY2(ledger.value(QStringLiteral("acknowledged")).toInteger() > 100, qPrintable(describe(run)));
    QCOMPARE(ledger.value(QStringLiteral("lost_acknowledged")).toInteger(), 0);
    QCOMPARE(ledger.value(QStringLiteral("reexecuted_after_ack")).toInteger(), 0);
    // No lease left stuck: a key claimed just before an event was claimed again (or taken over)
    // by its client, never given up; what is processing with an expired lease at the end is only
    // what the clients were still asking about when the run stopped (queued for a retry at exit).
    QCOMPARE(summary.value(QStringLiteral("stuck_keys")).toInteger(), 0);
    QCOMPARE(summary.value(QStringLiteral("dropped_requests")).toInteger(), 0);
    QVERIFY2(
        count(dsn, "SELECT count(*) FROM idem.task_idempotency WHERE status = 'processing' AND lease_until < now()")
            <= summary.value(QStringLiteral("pending_retries")).toInteger(),
        qPrintable(describe(run)));
    QVERIFY2(summary.value(QStringLiteral("clean")).toBool(), qPrintable(describe(run)));
    QCOMPARE(run.exitCode, 0);
    // What the workers said, in words: never libpqxx's "client encoding" text or a bare SQLSTATE.
    QVERIFY2(!run.err.contains(QStringLiteral("client encoding")), qPrintable(run.err));
    QVERIFY2(!run.err.contains(QStringLiteral("SQLSTATE 25006")), qPrintable(run.err));
}

void TestPatroni::verifyAcrossASwitchover()
{
    auto& cluster = *m_cluster;
    const CliRun leading = cluster.command(QStringLiteral("wait-leader"));
    QVERIFY2(leading.exitCode == 0, qPrintable(describe(leading)));
    const QString dsn = cluster.dsn();
    QProcess verify;
    verify.setProcessEnvironment(idem::test::cleanEnvironment());
    verify.start(idem::test::idemctlPath(),
        { QStringLiteral("verify"), QStringLiteral("--dsn"), dsn, QStringLiteral("--rounds"), QStringLiteral("200") });
    QThread::msleep(1500);
    const CliRun switched = cluster.command(QStringLiteral("switchover"));
    QVERIFY2(switched.exitCode == 0, qPrintable(describe(switched)));
    const CliRun run = idem::test::finishProcess(verify, 300000);
    qInfo("%s", qPrintable(describe(run)));
    // Every scenario holds across the switchover: exit 0 (1 is a scenario that failed).
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    // Its table is whole: a line for each scenario, whatever the failover did to it.
    for (int scenario = 1; scenario <= 7; ++scenario)
        QVERIFY2(run.out.contains(QRegularExpression(
                     QStringLiteral("^\\s*%1\\s").arg(scenario), QRegularExpression::MultilineOption)),
            qPrintable(describe(run)));
    QVERIFY2(!run.err.contains(QStringLiteral("client encoding")), qPrintable(run.err));
    // No scratch schema left on the new leader.
    QCOMPARE(count(dsn, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'idem\\_verify\\_%'"), 0);
}

QTEST_MAIN(TestPatroni)
#include "tst_patroni.moc"
