#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <memory>
#include <pqxx/pqxx>

#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/testdb.h"

namespace {

using idem::test::CliRun;
using idem::test::describe;

CliRun idemctl(const QStringList& args, int timeoutMs = 60000)
{
    return idem::test::runProgram(idem::test::idemctlPath(), args, timeoutMs);
}

long long count(pqxx::connection& c, const std::string& sql)
{
    pqxx::read_transaction t(c);
    return t.exec(sql)[0][0].as<long long>();
}

} // namespace

class TestDemo : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void faultyWorkloadLeavesOneEffectPerKey();
    void stopsCleanlyOnSigterm();
    void reportsPlantedDuplicates();
    void refusesBadRates();
    void purgedKeysAreNotLosses();
    void keyDeletedWithoutPurgeIsALoss();

private:
    // A demo running in the background; stopped by SIGTERM, its summary (text) returned.
    CliRun stopDemo(QProcess& p);
    void startDemo(QProcess& p, const QString& operations);
    long long succeededOf(const QString& operation);
    QString dsn() const { return QString::fromStdString(m_db->dsn()); }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
};

void TestDemo::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("demo", idem::test::migrated);
    m_conn = m_db->connect();
    // Roles are cluster-wide and not what this test is about.
    idem::migrate(*m_conn, idem::MigrateOptions { idem::SchemaName(), false });
}

void TestDemo::cleanupTestCase()
{
    m_conn.reset();
    m_db.reset();
}

void TestDemo::faultyWorkloadLeavesOneEffectPerKey()
{
    QCOMPARE(count(*m_conn, "SELECT count(*) FROM idem.idem_timelines"), 0LL);
    const CliRun run = idemctl({ QStringLiteral("demo"), QStringLiteral("--dsn"), dsn(), QStringLiteral("--json"),
        QStringLiteral("--quiet"), QStringLiteral("--seed"), QStringLiteral("7"), QStringLiteral("--duration"),
        QStringLiteral("5"), QStringLiteral("--workers"), QStringLiteral("6"), QStringLiteral("--tenants"),
        QStringLiteral("2"), QStringLiteral("--rate"), QStringLiteral("200"), QStringLiteral("--duplicate-rate"),
        QStringLiteral("0.2"), QStringLiteral("--conflict-rate"), QStringLiteral("0.05"), QStringLiteral("--slow-rate"),
        QStringLiteral("0.03"), QStringLiteral("--slow-ms"), QStringLiteral("200"), QStringLiteral("--transient-rate"),
        QStringLiteral("0.15"), QStringLiteral("--permanent-rate"), QStringLiteral("0.08"),
        QStringLiteral("--unknown-rate"), QStringLiteral("0.1"), QStringLiteral("--die-rate"), QStringLiteral("0.05"),
        QStringLiteral("--stale-rate"), QStringLiteral("0.05"), QStringLiteral("--lease-ms"), QStringLiteral("400") });
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));

    QJsonParseError parseError;
    const QJsonObject summary = QJsonDocument::fromJson(run.out.toUtf8(), &parseError).object();
    QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(describe(run)));
    QVERIFY2(summary.value(QStringLiteral("clean")).toBool(), qPrintable(describe(run)));
    QVERIFY(summary.value(QStringLiteral("duplicate_effects")).toArray().isEmpty());
    QVERIFY(summary.value(QStringLiteral("violations")).toArray().isEmpty());
    QVERIFY2(summary.value(QStringLiteral("requests")).toInteger() >= 300, qPrintable(describe(run)));
    const QJsonObject outcomes = summary.value(QStringLiteral("outcomes")).toObject();
    const QJsonObject events = summary.value(QStringLiteral("events")).toObject();
    for (const char* kind : { "succeeded", "replayed", "failed", "will_retry", "lost_ownership" })
        QVERIFY2(outcomes.value(QLatin1String(kind)).toInteger() > 0, kind);
    for (const char* kind : { "died", "stale_attempts", "downstream_deduped" })
        QVERIFY2(events.value(QLatin1String(kind)).toInteger() > 0, kind);
    QCOMPARE(events.value(QStringLiteral("errors")).toInteger(), 0);

    // The database, read independently of what the demo reported.
    QCOMPARE(count(*m_conn,
                 "SELECT count(*) FROM (SELECT idempotency_key FROM idem.demo_orders_effects"
                 " GROUP BY 1 HAVING count(*) > 1) d"),
        0LL);
    QCOMPARE(count(*m_conn,
                 "SELECT count(*) FROM idem.task_idempotency t WHERE t.status = 'succeeded' AND"
                 " (SELECT count(*) FROM idem.demo_orders_effects e WHERE e.idempotency_key = t.idempotency_key) <> 1"),
        0LL);
    QCOMPARE(count(*m_conn,
                 "SELECT count(*) FROM idem.demo_orders_effects e LEFT JOIN idem.task_idempotency t"
                 " USING (idempotency_key) WHERE t.status IS DISTINCT FROM 'succeeded'"),
        0LL);
    QVERIFY(count(*m_conn, "SELECT count(*) FROM idem.demo_orders_effects") > 0);
    QVERIFY(count(*m_conn, "SELECT count(*) FROM idem.task_idempotency WHERE status = 'succeeded'") > 0);
    QVERIFY(count(*m_conn, "SELECT count(*) FROM idem.task_idempotency WHERE status = 'failed'") > 0);
    QVERIFY(
        count(*m_conn, "SELECT count(*) FROM idem.task_idempotency WHERE status IN ('retryable_failed', 'processing')")
        > 0);
    // Several kinds of outcome reached the counters, the takeovers and stale tokens included.
    QVERIFY(count(*m_conn, "SELECT count(DISTINCT outcome) FROM idem.idem_counters") >= 6);
    for (const char* outcome : { "acquired", "succeeded", "replayed", "failed_permanent", "failed_unknown",
             "reacquired_lease", "stale_token" })
        QVERIFY2(
            count(*m_conn, std::string("SELECT count(*) FROM idem.idem_counters WHERE outcome = '") + outcome + "'")
                > 0,
            outcome);
    // The workers recorded the primary's timeline when they connected (schema v20), as this
    // server's system identifier and WAL file name say: one row, the system's first timeline.
    QCOMPARE(count(*m_conn,
                 "SELECT count(*) FROM idem.idem_timelines t, pg_control_system() c"
                 " WHERE t.system_identifier = c.system_identifier AND t.previous_timeline IS NULL"
                 "   AND t.timeline = ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer"),
        1LL);
    QCOMPARE(count(*m_conn, "SELECT count(*) FROM idem.idem_timelines"), 1LL);
    // The payment service kept one payment per key, and every business effect was paid.
    QCOMPARE(count(*m_conn, "SELECT count(*) - count(DISTINCT idempotency_key) FROM idem.demo_payments"), 0LL);
    QCOMPARE(count(*m_conn,
                 "SELECT count(*) FROM idem.demo_orders_effects e LEFT JOIN idem.demo_payments p"
                 " USING (idempotency_key) WHERE p.idempotency_key IS NULL"),
        0LL);
}

void TestDemo::stopsCleanlyOnSigterm()
{
    QProcess p;
    p.setProcessEnvironment(idem::test::cleanEnvironment());
    p.start(idem::test::idemctlPath(),
        { QStringLiteral("demo"), QStringLiteral("--dsn"), dsn(), QStringLiteral("--duration"), QStringLiteral("0"),
            QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--slow-ms"), QStringLiteral("200") });
    QVERIFY(p.waitForStarted());
    // Until it has printed a progress line (left in the buffer for finishProcess to read).
    QTRY_VERIFY_WITH_TIMEOUT(p.peek(p.bytesAvailable()).contains(" req/s |"), 30000);
    p.terminate();
    const CliRun run = idem::test::finishProcess(p, 30000);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral(" req/s |")), qPrintable(describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("stopping on signal")), qPrintable(describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("check: no duplicate effects")), qPrintable(describe(run)));
}

void TestDemo::reportsPlantedDuplicates()
{
    // The check is only worth something if it can fail: plant a double effect.
    {
        pqxx::work w(*m_conn);
        for (int i = 0; i < 2; ++i)
            w.exec("INSERT INTO idem.demo_orders_effects (idempotency_key, run_id, worker, attempt, amount_cents,"
                   " currency, target) VALUES ('tenant-9:charge:planted-double', 'planted', 0, 1, 100, 'EUR', 'x')");
        w.commit();
    }
    const CliRun run = idemctl({ QStringLiteral("demo"), QStringLiteral("--dsn"), dsn(), QStringLiteral("--quiet"),
        QStringLiteral("--duration"), QStringLiteral("1") });
    QVERIFY2(run.exitCode == 1, qPrintable(describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("DUPLICATE EFFECTS")), qPrintable(describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("tenant-9:charge:planted-double: 2 rows")), qPrintable(describe(run)));
}

void TestDemo::refusesBadRates()
{
    const CliRun run = idemctl({ QStringLiteral("demo"), QStringLiteral("--dsn"), dsn(), QStringLiteral("--die-rate"),
        QStringLiteral("1.5") });
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(QStringLiteral("--die-rate")), qPrintable(describe(run)));
}

void TestDemo::startDemo(QProcess& p, const QString& operations)
{
    p.setProcessEnvironment(idem::test::cleanEnvironment());
    // No faults: what this is about is what the ledger makes of rows gone from the table.
    p.start(idem::test::idemctlPath(),
        { QStringLiteral("demo"), QStringLiteral("--dsn"), dsn(), QStringLiteral("--duration"), QStringLiteral("0"),
            QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--operations"), operations,
            QStringLiteral("--rate"), QStringLiteral("200"), QStringLiteral("--duplicate-rate"), QStringLiteral("0.3"),
            QStringLiteral("--transient-rate"), QStringLiteral("0"), QStringLiteral("--permanent-rate"),
            QStringLiteral("0"), QStringLiteral("--unknown-rate"), QStringLiteral("0"), QStringLiteral("--die-rate"),
            QStringLiteral("0"), QStringLiteral("--stale-rate"), QStringLiteral("0"), QStringLiteral("--conflict-rate"),
            QStringLiteral("0"), QStringLiteral("--slow-rate"), QStringLiteral("0") });
    QVERIFY(p.waitForStarted());
}

CliRun TestDemo::stopDemo(QProcess& p)
{
    p.terminate();
    return idem::test::finishProcess(p, 60000);
}

long long TestDemo::succeededOf(const QString& operation)
{
    return count(*m_conn,
        "SELECT count(*) FROM idem.task_idempotency WHERE status = 'succeeded' AND split_part(idempotency_key, ':', 2) = '"
            + operation.toStdString() + "'");
}

void TestDemo::purgedKeysAreNotLosses()
{
    // reportsPlantedDuplicates' double effect would make every later run unclean.
    {
        pqxx::work w(*m_conn);
        w.exec("DO $$BEGIN IF to_regclass('idem.demo_orders_effects') IS NOT NULL THEN"
               " DELETE FROM idem.demo_orders_effects WHERE run_id = 'planted'; END IF; END$$");
        w.commit();
    }
    QProcess demo;
    startDemo(demo, QStringLiteral("pship"));
    QTRY_VERIFY_WITH_TIMEOUT(succeededOf(QStringLiteral("pship")) >= 50, 30000);
    // An hour and more passes for the rows completed so far (their record and their business
    // effect were written in one transaction: the effect at its now(), the completion since
    // schema v13 at clock_timestamp(), a moment later); then a 1 h horizon and a purge.
    {
        pqxx::work w(*m_conn);
        // One statement, one snapshot: a record completing meanwhile is aged with its effect or not at all.
        w.exec("WITH aged AS (UPDATE idem.task_idempotency SET updated_at = updated_at - interval '2 hours',"
               "   created_at = created_at - interval '2 hours' WHERE status = 'succeeded'"
               "   AND split_part(idempotency_key, ':', 2) = 'pship'"
               "   RETURNING idempotency_key, updated_at + interval '2 hours' AS completed)"
               " UPDATE idem.demo_orders_effects e SET created_at = e.created_at - interval '2 hours'"
               "   FROM aged a WHERE e.idempotency_key = a.idempotency_key AND e.created_at <= a.completed");
        w.commit();
    }
    const auto set = idemctl({ QStringLiteral("retention"), QStringLiteral("set"), QStringLiteral("pship"),
        QStringLiteral("1h"), QStringLiteral("--reason"), QStringLiteral("demo: short horizon"), QStringLiteral("--dsn"),
        dsn() });
    QVERIFY2(set.exitCode == 0, qPrintable(describe(set)));
    const auto purge = idemctl({ QStringLiteral("purge"), QStringLiteral("--dsn"), dsn() });
    QVERIFY2(purge.exitCode == 0, qPrintable(describe(purge)));
    const long long runId = count(*m_conn, "SELECT max(id) FROM idem.idem_purge_runs");
    const long long removed = count(*m_conn, "SELECT rows_removed FROM idem.idem_purge_runs ORDER BY id DESC LIMIT 1");
    QVERIFY2(removed >= 50, qPrintable(describe(purge)));
    QTest::qWait(1000); // the workload goes on a moment: replays of purged keys run them again

    const CliRun run = stopDemo(demo);
    // The summary's end says why (a whole describe() would be cut before it).
    QVERIFY2(run.exitCode == 0, qPrintable(run.out.right(900) + run.err.right(300)));
    QVERIFY2(!run.out.contains(QStringLiteral("VIOLATION")), qPrintable(describe(run)));
    QVERIFY2(!run.out.contains(QStringLiteral("LOST ACKNOWLEDGED")), qPrintable(describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("\nclean: ")), qPrintable(describe(run)));
    // Every removed row is this run's (the operation is its own), each named with its run and horizon.
    QVERIFY2(run.out.contains(QStringLiteral("retention: %1 keys of this run were purged by retention, not lost").arg(removed)),
        qPrintable(describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("purge run %1 removed %2 (operation pship, horizon 1 h)").arg(runId).arg(removed)),
        qPrintable(describe(run)));
}

void TestDemo::keyDeletedWithoutPurgeIsALoss()
{
    QProcess demo;
    startDemo(demo, QStringLiteral("lship"));
    QTRY_VERIFY_WITH_TIMEOUT(succeededOf(QStringLiteral("lship")) >= 20, 30000);
    // A superuser deletes a succeeded row by hand: no purge run explains it (the earlier purge
    // walked another operation, and only rows completed hours ago).
    std::string key;
    {
        pqxx::work w(*m_conn);
        key = w.exec("DELETE FROM idem.task_idempotency WHERE idempotency_key = (SELECT idempotency_key FROM"
                     " idem.task_idempotency WHERE status = 'succeeded' AND split_part(idempotency_key, ':', 2) = 'lship'"
                     " ORDER BY updated_at LIMIT 1) RETURNING idempotency_key")[0][0]
                  .as<std::string>();
        w.commit();
    }
    const CliRun run = stopDemo(demo);
    QVERIFY2(run.exitCode == 1, qPrintable(describe(run)));
    // Either the key stays without a record (its effect row is an orphan), or a replay of it came
    // before the end and ran it again at attempt 1: a second effect row. Both are the loss, named.
    const QString deleted = QString::fromStdString(key);
    const bool orphan = run.out.contains(QStringLiteral("VIOLATION: effect row for %1 whose record is no record").arg(deleted));
    const bool ranAgain = run.out.contains(QStringLiteral("DUPLICATE EFFECTS"))
        && run.out.contains(QStringLiteral("  %1: 2 rows").arg(deleted));
    QVERIFY2(orphan || ranAgain, qPrintable(describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("NOT CLEAN")), qPrintable(describe(run)));
    QVERIFY(!run.out.contains(QStringLiteral("purged by retention, not lost")));
}

QTEST_GUILESS_MAIN(TestDemo)
#include "tst_demo.moc"
