#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <memory>
#include <pqxx/pqxx>

#include "core/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/testdb.h"

namespace {

using idem::test::CliRun;
using idem::test::describe;

CliRun idemctl(const QStringList& args, int timeoutMs = 60000)
{
    return idem::test::runProgram(QStringLiteral(IDEMCTL_PATH), args, timeoutMs);
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

private:
    QString dsn() const { return QString::fromStdString(m_db->dsn()); }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
};

void TestDemo::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("demo");
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
    p.start(QStringLiteral(IDEMCTL_PATH),
        { QStringLiteral("demo"), QStringLiteral("--dsn"), dsn(), QStringLiteral("--duration"), QStringLiteral("0"),
            QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--slow-ms"), QStringLiteral("200") });
    QVERIFY(p.waitForStarted());
    // Long enough for a few progress lines.
    QTest::qWait(2500);
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

QTEST_GUILESS_MAIN(TestDemo)
#include "tst_demo.moc"
