#include <QProcess>
#include <QtTest>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "operations/scenarios.h"
#include "tests/support/cliprocess.h"
#include "tests/support/testdb.h"

// The article's verification scenarios, run by the same code as `idemctl verify`, then
// re-checked here with our own queries against the business tables they left behind.
class TestScenarios : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { IDEM_REQUIRE_DATABASE(); }
    void scenario_data();
    void scenario();
    void verifyCommand();
    void ledgerReportsALostSuccess();
    void verifyCommandBadDsn();
};

void TestScenarios::scenario_data()
{
    QTest::addColumn<int>("number");
    const auto& names = idem::verify::scenarioNames();
    for (int n = 1; n <= static_cast<int>(names.size()); ++n)
        QTest::addRow("%d %s", n, names[static_cast<std::size_t>(n - 1)].c_str()) << n;
}

// A success the client was told about and the database no longer holds (a failover to a
// standby that had not received it) fails the scenario that heard it, naming the key.
void TestScenarios::ledgerReportsALostSuccess()
{
    idem::test::ScratchDatabase db("scenarioledger");
    idem::verify::VerifyOptions options;
    options.conninfo = db.dsn();
    options.workerExecutable = idem::test::idemctlPath().toStdString();
    options.beforeLedgerCheck = [](pqxx::connection& c, const idem::SchemaName& schema) {
        pqxx::work w(c);
        w.exec("ALTER TABLE " + schema.qualify("task_idempotency") + " DISABLE TRIGGER USER");
        w.exec("DELETE FROM " + schema.qualify("task_idempotency") + " WHERE idempotency_key = 'verify:s3:order-1'");
        w.commit();
    };
    const auto results = idem::verify::runVerification(options, { 3 });
    QCOMPARE(results.size(), std::size_t(1));
    QVERIFY(!results[0].passed);
    QVERIFY2(results[0].detail.find("LOST ACKNOWLEDGED SUCCESSES: 1 of 1") != std::string::npos,
             results[0].detail.c_str());
    QVERIFY2(results[0].detail.find("verify:s3:order-1 (no record)") != std::string::npos, results[0].detail.c_str());
}

void TestScenarios::scenario()
{
    QFETCH(int, number);
    idem::test::ScratchDatabase db("scenario" + std::to_string(number));
    idem::verify::VerifyOptions options;
    options.conninfo = db.dsn();
    options.workerExecutable = idem::test::idemctlPath().toStdString();
    options.schema = "scenario";
    options.keepSchema = true;
    const auto results = idem::verify::runVerification(options, { number });
    QCOMPARE(results.size(), std::size_t(1));
    QVERIFY2(results[0].passed, results[0].detail.c_str());
    QCOMPARE(results[0].number, number);
    // Issue 15 item 3: what the scenario's clients were told, held against the database.
    if (number == 1 || number == 2 || number == 3 || number == 5)
        QVERIFY2(results[0].detail.find("acknowledged successes still recorded") != std::string::npos,
                 results[0].detail.c_str());

    // Independent of the scenario's own checks: no key has two business effects, every
    // succeeded record has exactly one, nothing that did not succeed has any, and the
    // downstream service holds at most one effect per key.
    auto c = db.connect();
    pqxx::read_transaction t(*c);
    const auto doubled = t.exec("SELECT idempotency_key, count(*) FROM scenario.verify_effects GROUP BY 1 HAVING count(*) > 1");
    QVERIFY2(doubled.empty(), doubled.empty() ? "" : doubled[0][0].c_str());
    const auto orphans = t.exec("SELECT t.idempotency_key, t.status, count(e.id) FROM scenario.task_idempotency t"
                                "  LEFT JOIN scenario.verify_effects e USING (idempotency_key)"
                                " GROUP BY 1, 2"
                                " HAVING (t.status = 'succeeded') <> (count(e.id) = 1)");
    QVERIFY2(orphans.empty(), orphans.empty() ? "" : (std::string(orphans[0][0].c_str()) + " " + orphans[0][1].c_str()).c_str());
    const auto effectsWithoutRecord = t.exec("SELECT count(*) FROM scenario.verify_effects e WHERE NOT EXISTS "
                                             "(SELECT FROM scenario.task_idempotency t WHERE t.idempotency_key = e.idempotency_key)");
    QCOMPARE(effectsWithoutRecord[0][0].as<long long>(), 0LL);
    const auto records = t.exec("SELECT count(*) FROM scenario.task_idempotency")[0][0].as<long long>();
    QVERIFY(records > 0);
    const auto processing = t.exec("SELECT count(*) FROM scenario.task_idempotency WHERE status = 'processing'")[0][0].as<long long>();
    QCOMPARE(processing, 0LL); // every scenario drives its keys to an end state
}

void TestScenarios::verifyCommand()
{
    idem::test::ScratchDatabase db("verifycmd");
    QProcess p;
    p.start(idem::test::idemctlPath(), { QStringLiteral("verify"), QStringLiteral("--dsn"), QString::fromStdString(db.dsn()),
                                          QStringLiteral("--only"), QStringLiteral("3"), QStringLiteral("--only"),
                                          QStringLiteral("7") });
    QVERIFY(p.waitForFinished(120000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    QCOMPARE(p.exitCode(), 0);
    QVERIFY2(out.contains(QLatin1String("repeat after success")) && out.contains(QLatin1String("PASS")), qPrintable(out));
    QVERIFY2(out.contains(QLatin1String("2 passed, 0 failed")), qPrintable(out));
    // The scratch schema is gone afterwards.
    auto c = db.connect();
    pqxx::read_transaction t(*c);
    QCOMPARE(t.exec("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'idem_verify_%'")[0][0].as<int>(), 0);
}

void TestScenarios::verifyCommandBadDsn()
{
    QProcess p;
    p.start(idem::test::idemctlPath(), { QStringLiteral("verify"), QStringLiteral("--dsn"), QStringLiteral("host=127.0.0.1 port=1") });
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 1);
    QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains(QLatin1String("cannot connect")));
}

QTEST_GUILESS_MAIN(TestScenarios)
#include "tst_scenarios.moc"
