#include <QtTest>

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSettings>
#include <QTemporaryDir>
#include <QThread>

#include <memory>
#include <pqxx/pqxx>

#include "core/connection.h"
#include "schema/migrate.h"
#include "core/runner.h"
#include "core/taskstore.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/eventwatch.h"
#include "models/latencywatch.h"
#include "models/pausewatch.h"
#include "operations/purge.h"
#include "tests/support/cliprocess.h"
#include "tests/support/pgservers.h"
#include "tests/support/testdb.h"
#include "views/dashboardwidget.h"
#include "views/statuspanel.h"
#include "views/tilewidget.h"

using namespace idem::console;
using idem::test::CliRun;
using idem::test::describe;
using idem::test::LocalPgBouncer;

namespace {
constexpr int timeoutMs = 30000;

CliRun idemctl(const QStringList& args, int timeout = 60000)
{
    return idem::test::runProgram(idem::test::idemctlPath(), args, timeout);
}
} // namespace

// Issue 15 item 1: Idem behind PgBouncer 1.18 in transaction pooling mode. Under transaction
// pooling a client's next transaction may run on any server backend, and whatever a client set
// for the session there stays for the next client of that backend. The protocol, the demo,
// stats, recovery actions and the console's tick all run through a real PgBouncer here, and
// afterwards every backend of the pool is looked at for settings or prepared statements left
// behind.
class TestPooler : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void consoleTickLeavesNoSessionState();
    void protocolDemoStatsAndActionsThroughThePool();
    void demoDoesNotDeadlockASmallPool();
    void durationEndsTheDemoWhenThePoolIsExhausted();
    void purgeRefusesThePool();
    void jobStartRefusesThePoolBeforeRecording();

private:
    QString pooledDsn() const { return QString::fromStdString(m_bouncer->dsn(m_db->name())); }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<LocalPgBouncer> m_bouncer;
};

void TestPooler::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("pooler", idem::test::migrated);
    auto c = m_db->connect();
    idem::migrate(*c, { idem::SchemaName(), false });
    pqxx::work w(*c);
    w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until) "
           "SELECT 'ta:charge:' || i, 'v1:' || repeat('a', 64), 'processing', gen_random_uuid(), "
           "now() + interval '1 hour' FROM generate_series(1, 3) i");
    w.commit();
    LocalPgBouncer::Options o;
    o.defaultPoolSize = 3;
    m_bouncer = std::make_unique<LocalPgBouncer>(idem::test::adminDsn(), o);
    QVERIFY2(m_bouncer->problem().isEmpty(), qPrintable(m_bouncer->problem()));
    // Before anything ran: the check itself finds nothing on clean backends.
    const auto before = idem::test::pooledBackendLeftovers(*m_bouncer, m_db->name(), {});
    QVERIFY2(before.isEmpty(), qPrintable(before.join(QLatin1Char('\n'))));
}

void TestPooler::cleanupTestCase()
{
    m_bouncer.reset();
    m_db.reset();
}

void TestPooler::consoleTickLeavesNoSessionState()
{
    QTemporaryDir dir;
    QSettings settings(dir.filePath(QStringLiteral("console.conf")), QSettings::IniFormat);
    ConsoleSession session;
    StatusPanel status(&session);
    DashboardWidget dashboard(&session, &settings);
    auto* model = dashboard.model();
    model->setStatementTimeoutMs(3000);
    model->setInterval(200);
    dashboard.show();
    QStringList failures;
    connect(model, &DashboardModel::freshnessChanged, this, [&] {
        if (model->freshness() == DashboardModel::Freshness::Failed)
            failures << model->reason();
    });
    ConnectionSettings s;
    s.conninfo = pooledDsn();
    session.connectTo(s);
    QTRY_VERIFY_WITH_TIMEOUT(model->ticks() >= 8, timeoutMs);
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    QCOMPARE(dashboard.tile(Tile::Processing)->valueText(), QStringLiteral("3"));
    // The connection view says the console found a pooler and what it does about it.
    QVERIFY2(session.serverInfo().pooler, "the console did not notice PgBouncer in between");
    QVERIFY2(status.findChild<QLabel*>(QStringLiteral("poolerValue"))
                 ->text()
                 .contains(QStringLiteral("no session state"), Qt::CaseInsensitive),
        qPrintable(status.findChild<QLabel*>(QStringLiteral("poolerValue"))->text()));
    // Also the filtered tick (planned each time) and a migration check through the pool.
    model->setFilter(QStringLiteral("ta"), QString());
    const int ticks = model->ticks();
    QTRY_VERIFY_WITH_TIMEOUT(model->ticks() >= ticks + 3, timeoutMs);
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));

    // The watches beside the tick (issue 45 item 3): behind the pooler each read keeps its
    // statement-by-statement form in a transaction of its own, and reads.
    PauseWatch pauses(&session);
    LatencyWatch latency(&session);
    EventWatch events(&session);
    QTRY_VERIFY_WITH_TIMEOUT(pauses.reads() >= 1 && latency.reads() >= 1 && events.reads() >= 1
            && !pauses.pending() && !latency.pending() && !events.pending(),
        timeoutMs);
    QVERIFY2(pauses.error().isEmpty() && latency.error().isEmpty() && events.error().isEmpty(),
        qPrintable(pauses.error() + latency.error() + events.error()));
    QVERIFY(latency.reading().has_value());

    // While the console is still connected and after it has gone.
    auto left = idem::test::pooledBackendLeftovers(*m_bouncer, m_db->name(), {});
    QVERIFY2(left.isEmpty(), qPrintable(left.join(QLatin1Char('\n'))));
    session.disconnectFromServer();
    left = idem::test::pooledBackendLeftovers(*m_bouncer, m_db->name(), {});
    QVERIFY2(left.isEmpty(), qPrintable(left.join(QLatin1Char('\n'))));

    // Another client's writes on those backends still work (they failed with 25006 before).
    auto c = pqxx::connection(m_bouncer->dsn(m_db->name()));
    pqxx::work w(c);
    w.exec("CREATE TABLE after_console (x int)");
    w.commit();
}

void TestPooler::protocolDemoStatsAndActionsThroughThePool()
{
    // The protocol through core, on one pooled connection.
    {
        pqxx::connection conn(m_bouncer->dsn(m_db->name()));
        idem::TaskStore store(conn);
        const idem::TaskKey key("tp", "charge", "pooled-1");
        const auto task = [](pqxx::work&, const idem::TaskContext&) { return std::string("{\"ok\":true}"); };
        QCOMPARE(idem::runTask(store, key, "v1:" + std::string(64, 'b'), task).kind, idem::RunOutcome::Kind::Succeeded);
        QCOMPARE(idem::runTask(store, key, "v1:" + std::string(64, 'b'), task).kind, idem::RunOutcome::Kind::Replayed);
        const idem::TaskKey failing("tp", "charge", "pooled-2");
        const auto claim = store.claim(failing, "v1:" + std::string(64, 'c'));
        QVERIFY(claim.mayExecute());
        store.heartbeat(failing, claim.token);
        QCOMPARE(store.fail(failing, claim.token, claim.attempts, idem::FailureClass::Permanent, "no").status,
            std::string("failed"));
    }

    // The demo, with its counter flusher, through the pool.
    const CliRun demo = idemctl({ QStringLiteral("demo"), QStringLiteral("--dsn"), pooledDsn(),
        QStringLiteral("--json"), QStringLiteral("--quiet"), QStringLiteral("--duration"), QStringLiteral("3"),
        QStringLiteral("--workers"), QStringLiteral("4"), QStringLiteral("--rate"), QStringLiteral("150"),
        QStringLiteral("--lease-ms"), QStringLiteral("500"), QStringLiteral("--slow-ms"), QStringLiteral("100") });
    QVERIFY2(demo.exitCode == 0, qPrintable(describe(demo)));
    const QJsonObject summary = QJsonDocument::fromJson(demo.out.toUtf8()).object();
    QVERIFY2(summary.value(QStringLiteral("clean")).toBool(), qPrintable(describe(demo)));
    QCOMPARE(summary.value(QStringLiteral("events")).toObject().value(QStringLiteral("errors")).toInteger(), 0);
    QVERIFY2(summary.value(QStringLiteral("outcomes")).toObject().value(QStringLiteral("succeeded")).toInteger() > 50,
        qPrintable(describe(demo)));

    // Stats and a recovery action (with its audit entry) through the pool.
    const CliRun stats
        = idemctl({ QStringLiteral("stats"), QStringLiteral("--dsn"), pooledDsn(), QStringLiteral("--json") });
    QVERIFY2(stats.exitCode == 0, qPrintable(describe(stats)));
    const CliRun requeue = idemctl({ QStringLiteral("requeue"), QStringLiteral("tp:charge:pooled-2"),
        QStringLiteral("--reason"), QStringLiteral("through the pool"), QStringLiteral("--dsn"), pooledDsn() });
    QVERIFY2(requeue.exitCode == 0, qPrintable(describe(requeue)));
    QVERIFY2(requeue.out.contains(QStringLiteral("applied")), qPrintable(describe(requeue)));
    const CliRun audit
        = idemctl({ QStringLiteral("audit"), QStringLiteral("verify"), QStringLiteral("--dsn"), pooledDsn() });
    QVERIFY2(audit.exitCode == 0, qPrintable(describe(audit)));

    const auto left = idem::test::pooledBackendLeftovers(*m_bouncer, m_db->name(), {});
    QVERIFY2(left.isEmpty(), qPrintable(left.join(QLatin1Char('\n'))));
}

// Issue 15 item 2: 8 workers on a pool of 5. A worker that held its business transaction (and
// so a server connection) while its downstream call waited for a pooled connection of its own
// deadlocked the pool until PgBouncer's query_wait_timeout (120 s).
void TestPooler::demoDoesNotDeadlockASmallPool()
{
    LocalPgBouncer::Options o;
    o.defaultPoolSize = 5;
    LocalPgBouncer small(idem::test::adminDsn(), o);
    QVERIFY2(small.problem().isEmpty(), qPrintable(small.problem()));
    QElapsedTimer clock;
    clock.start();
    const CliRun run = idemctl(
        { QStringLiteral("demo"), QStringLiteral("--dsn"), QString::fromStdString(small.dsn(m_db->name())),
            QStringLiteral("--json"), QStringLiteral("--quiet"), QStringLiteral("--duration"), QStringLiteral("4"),
            QStringLiteral("--workers"), QStringLiteral("8"), QStringLiteral("--rate"), QStringLiteral("0"),
            QStringLiteral("--slow-rate"), QStringLiteral("0.5"), QStringLiteral("--slow-ms"), QStringLiteral("100"),
            QStringLiteral("--lease-ms"), QStringLiteral("2000") },
        30000);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run) + QStringLiteral("\n") + small.logTail()));
    QVERIFY2(clock.elapsed() < 15000, qPrintable(QStringLiteral("the demo took %1 ms").arg(clock.elapsed())));
    const QJsonObject summary = QJsonDocument::fromJson(run.out.toUtf8()).object();
    QVERIFY2(summary.value(QStringLiteral("clean")).toBool(), qPrintable(describe(run)));
    QVERIFY2(summary.value(QStringLiteral("outcomes")).toObject().value(QStringLiteral("succeeded")).toInteger() > 40,
        qPrintable(describe(run)));
}

// --duration ends the run even when the pool has no server connection to give: the test holds
// all of them from before the stop until well after it, and the workers waiting on PgBouncer's
// queue are cut after the grace period instead of waiting for query_wait_timeout.
void TestPooler::durationEndsTheDemoWhenThePoolIsExhausted()
{
    LocalPgBouncer::Options o;
    o.defaultPoolSize = 5;
    LocalPgBouncer small(idem::test::adminDsn(), o);
    QVERIFY2(small.problem().isEmpty(), qPrintable(small.problem()));
    QProcess demo;
    demo.setProcessEnvironment(idem::test::cleanEnvironment());
    QElapsedTimer clock;
    clock.start();
    demo.start(idem::test::idemctlPath(),
        { QStringLiteral("demo"), QStringLiteral("--dsn"), QString::fromStdString(small.dsn(m_db->name())),
            QStringLiteral("--json"), QStringLiteral("--duration"), QStringLiteral("3"), QStringLiteral("--workers"),
            QStringLiteral("4"), QStringLiteral("--rate"), QStringLiteral("100"), QStringLiteral("--slow-ms"),
            QStringLiteral("100") });
    QThread::msleep(1000);
    std::vector<std::unique_ptr<pqxx::connection>> conns;
    std::vector<std::unique_ptr<pqxx::work>> held;
    for (int i = 0; i < small.poolSize(); ++i) {
        conns.push_back(std::make_unique<pqxx::connection>(small.dsn(m_db->name())));
        held.push_back(std::make_unique<pqxx::work>(*conns.back()));
        held.back()->exec("SELECT 1");
    }
    // The stop comes at 3 s, the grace (2 s) ends at 5 s; the pool stays full until 9 s.
    while (clock.elapsed() < 9000)
        QThread::msleep(50);
    held.clear();
    conns.clear();
    const CliRun run = idem::test::finishProcess(demo, 30000);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    const QJsonObject summary = QJsonDocument::fromJson(run.out.toUtf8()).object();
    const double drain = summary.value(QStringLiteral("drain_seconds")).toDouble();
    // From the stop: cut after the grace (2 s), not held until the pool frees up (6 s) or
    // query_wait_timeout (120 s); 3 s more than the grace for what a loaded machine adds to the cut.
    QVERIFY2(drain < 5, qPrintable(QStringLiteral("the workers took %1 s to stop\n").arg(drain) + describe(run)));
    QVERIFY2(summary.value(QStringLiteral("events")).toObject().value(QStringLiteral("cut_at_stop")).toInteger() > 0,
        qPrintable(describe(run)));
    QVERIFY2(run.err.contains(QStringLiteral("still waiting on the database")), qPrintable(describe(run)));
    QVERIFY2(summary.value(QStringLiteral("clean")).toBool(), qPrintable(describe(run)));
}

// Issue 16: a purge run's liveness is a session advisory lock, which a transaction pooler would
// leave on whichever server backend took it. The purge sees the pooler and refuses before it
// begins a run; the same database directly purges.
void TestPooler::purgeRefusesThePool()
{
    auto direct = m_db->connect();
    pqxx::connection pooled(m_bouncer->dsn(m_db->name()));
    QVERIFY(idem::behindPooler(pooled));
    QVERIFY(!idem::behindPooler(*direct));
    const auto runs = [&] {
        pqxx::read_transaction t(*direct);
        return t.exec("SELECT count(*) FROM idem.idem_purge_runs")[0][0].as<int>();
    };
    const int before = runs();
    idem::PurgeOptions o;
    o.actor = "ops@pooler";
    try {
        idem::runPurge(pooled, idem::SchemaName(), o);
        QFAIL("a purge through the pool was not refused");
    } catch (const std::runtime_error& e) {
        QVERIFY2(std::string(e.what()).find("connection pooler") != std::string::npos, e.what());
    }
    const CliRun cli = idemctl({ QStringLiteral("purge"), QStringLiteral("--dsn"), pooledDsn() });
    QVERIFY2(cli.exitCode != 0, qPrintable(describe(cli)));
    QVERIFY2(cli.err.contains(QStringLiteral("direct connection")), qPrintable(describe(cli)));
    QCOMPARE(runs(), before); // no run began, so no session lock was taken anywhere
    const auto left = idem::test::pooledBackendLeftovers(*m_bouncer, m_db->name(), {});
    QVERIFY2(left.isEmpty(), qPrintable(left.join(QLatin1Char('\n'))));
    // Directly, the same purge runs (nothing is due: one run, one audit entry).
    const auto r = idem::runPurge(*direct, idem::SchemaName(), o);
    QCOMPARE(r.rowsRemoved, 0);
    QVERIFY(r.auditId > 0);
    QCOMPARE(runs(), before + 1);
}

// Issue #40 item E: `idemctl job start` through PgBouncer recorded the job (active, audited,
// holding its rows from the next job), then said "Nothing was changed" when its runner was refused.
// Now the pooler is seen before anything is written; --detach (a runner elsewhere) still starts it.
void TestPooler::jobStartRefusesThePoolBeforeRecording()
{
    auto direct = m_db->connect();
    {
        pqxx::work w(*direct);
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts,"
               " error_class, updated_at) SELECT 'tj:charge:' || i, 'h', 'failed', 5, 5, 'retryable', now()"
               " FROM generate_series(1, 5) i");
        w.commit();
    }
    const auto jobs = [&] {
        pqxx::read_transaction t(*direct);
        return t.exec("SELECT count(*) || '/' || (SELECT count(*) FROM idem.task_idempotency_audit WHERE action = 'job')"
                      " FROM idem.idem_jobs")[0][0]
            .as<std::string>();
    };
    const auto before = jobs();
    const QStringList start { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"),
        QStringLiteral("requeue"), QStringLiteral("--tenant"), QStringLiteral("tj"), QStringLiteral("--reason"),
        QStringLiteral("gateway back"), QStringLiteral("--dsn"), pooledDsn() };
    CliRun run = idemctl(start);
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(QStringLiteral("Nothing was started")) && run.err.contains(QStringLiteral("--detach")),
        qPrintable(describe(run)));
    QVERIFY2(!run.out.contains(QStringLiteral("started:")), qPrintable(describe(run)));
    QCOMPARE(jobs(), before);
    // Recorded through the pool for a runner elsewhere, then run directly.
    run = idemctl(start + QStringList { QStringLiteral("--detach") });
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    pqxx::read_transaction t(*direct);
    const auto id = t.exec("SELECT max(id) FROM idem.idem_jobs")[0][0].as<std::int64_t>();
    t.commit();
    run = idemctl({ QStringLiteral("job"), QStringLiteral("resume"), QString::number(id), QStringLiteral("--quiet"),
        QStringLiteral("--dsn"), QString::fromStdString(m_db->dsn()) });
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    pqxx::read_transaction t2(*direct);
    QCOMPARE(t2.exec("SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'tj:%' AND status = "
                     "'retryable_failed'")[0][0]
                 .as<int>(),
        5);
}

QTEST_MAIN(TestPooler)
#include "tst_pooler.moc"
