// Issue #29: the acknowledged successes at risk from a failover under asynchronous replication.
// idem_successes_since against an independent count over planted rows (three operations, other
// statuses, rows on the boundary, the future, a cap), its refusals (NULL, a cap out of range), who
// may call it; readAtRisk on a real server (no standby, the function missing as in an older
// schema); and the Connection page's words for each reading.

#include <QtTest>

#include <QLabel>

#include <memory>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "models/consolesession.h"
#include "operations/node.h"
#include "schema/migrate.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"
#include "views/consolewidget.h"
#include "views/statuspanel.h"

using idem::test::operator""_b;
using idem::test::scalar;
using idem::test::sqlstateOf;

namespace {
constexpr const char* readerRole = "idem_t_atrisk_rd";
constexpr const char* workerRole = "idem_t_atrisk_wk";
constexpr const char* password = "atrisk-pw-1";
// The planted rows' clock: a fixed time in the past, so the counts do not move while the test runs.
const std::string anchor = "'2020-01-01 00:00:00+00'::timestamptz";
}

class TestAtRisk : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void countMatchesAnIndependentCount_data();
    void countMatchesAnIndependentCount();
    void capBoundsTheCount();
    void refusesNullAndOutOfRange();
    void rolesThatMayCount();
    void readingOnARealServer();
    void olderSchemaSaysMigrate();
    void pageWords();

private:
    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
};

void TestAtRisk::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    m_db = std::make_unique<idem::test::ScratchDatabase>("atrisk", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    idem::test::createLoginRole(readerRole, password, "idem_reader");
    idem::test::createLoginRole(workerRole, password, "idem_worker");
    // Planted: succeeded keys one per second for 300 s before the anchor over three operations, keys with
    // no operation at all (no ':'), and recent keys in every other status, which never count.
    pqxx::work w(*m_owner);
    w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, updated_at, created_at)"
           " SELECT 't' || (i % 4) || ':' || (ARRAY['charge', 'refund', 'ship'])[1 + i % 3] || ':' || i, 'v1:x',"
           "        'succeeded', "
        + anchor + " - make_interval(secs => i), " + anchor
        + " - make_interval(secs => i + 1)"
          "   FROM generate_series(0, 299) i");
    w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, updated_at)"
           " SELECT 'bare-' || i, 'v1:x', 'succeeded', "
        + anchor
        + " - make_interval(secs => i * 7)"
          "   FROM generate_series(0, 9) i");
    w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, updated_at, error_class)"
           " SELECT 't:charge:other-' || i, 'v1:x', (ARRAY['processing', 'retryable_failed', 'failed'])[1 + i % 3],"
           "        "
        + anchor
        + " - make_interval(secs => i), CASE WHEN i % 3 = 0 THEN NULL ELSE 'retryable' END"
          "   FROM generate_series(0, 59) i");
    w.commit();
}

void TestAtRisk::cleanupTestCase()
{
    m_owner.reset();
    m_db.reset();
}

void TestAtRisk::countMatchesAnIndependentCount_data()
{
    QTest::addColumn<QString>("since");
    QTest::addColumn<qint64>("planted"); // -1: only compared
    const QString a = QString::fromStdString(anchor);
    QTest::newRow("10 s") << a + QStringLiteral(" - interval '10 s'") << qint64(11 + 2); // 0..10 s, bare-0, bare-1
    QTest::newRow("61.5 s") << a + QStringLiteral(" - interval '61.5 s'") << qint64(62 + 9); // 0..61 s, bare-0..8
    QTest::newRow("on a row's time") << a + QStringLiteral(" - interval '42 s'") << qint64(43 + 7);
    QTest::newRow("everything") << a + QStringLiteral(" - interval '1 day'") << qint64(310);
    QTest::newRow("-infinity") << QStringLiteral("'-infinity'::timestamptz") << qint64(310);
    QTest::newRow("the anchor") << a << qint64(2); // t0:charge:0 and bare-0
    QTest::newRow("after every row") << QStringLiteral("now() - interval '1 hour'") << qint64(0);
    QTest::newRow("future") << QStringLiteral("now() + interval '1 hour'") << qint64(0);
    QTest::newRow("infinity") << QStringLiteral("'infinity'::timestamptz") << qint64(0);
}

void TestAtRisk::countMatchesAnIndependentCount()
{
    QFETCH(QString, since);
    QFETCH(qint64, planted);
    // One transaction, so now() is the same for both; the independent count reads the table
    // itself, no index, no function.
    pqxx::read_transaction t(*m_owner);
    const auto row = t.exec("SELECT idem.idem_successes_since(" + since.toStdString()
        + "),"
          "       (SELECT count(*) FROM idem.task_idempotency"
          "         WHERE status = 'succeeded' AND updated_at >= "
        + since.toStdString() + ")")[0];
    const auto counted = row[0].as<std::int64_t>();
    QCOMPARE(counted, row[1].as<std::int64_t>());
    // And the numbers are the planted ones, not just equal to each other.
    QCOMPARE(counted, std::int64_t(planted));
}

void TestAtRisk::capBoundsTheCount()
{
    const std::string day = "SELECT idem.idem_successes_since(" + anchor + " - interval '1 day', ";
    QCOMPARE(scalar(*m_owner, day + "5)"), "6"_b); // more than 5
    QCOMPARE(scalar(*m_owner, day + "310)"), "310"_b);
    QCOMPARE(scalar(*m_owner, day + "309)"), "310"_b);
    QCOMPARE(scalar(*m_owner, day + "1)"), "2"_b);
    // As bound arguments.
    QCOMPARE(scalar(*m_owner, "SELECT idem.idem_successes_since($1::timestamptz - $2::interval, $3)",
                 std::string("2020-01-01 00:00:00+00"), std::string("5 s"), 100000),
        "7"_b); // 0..5 s and bare-0
}

void TestAtRisk::refusesNullAndOutOfRange()
{
    const auto before = scalar(*m_owner, "SELECT count(*) FROM idem.task_idempotency");
    QCOMPARE(sqlstateOf(*m_owner, "SELECT idem.idem_successes_since(NULL)"), std::string("ID003"));
    QCOMPARE(sqlstateOf(*m_owner, "SELECT idem.idem_successes_since(now(), NULL)"), std::string("ID003"));
    QCOMPARE(sqlstateOf(*m_owner, "SELECT idem.idem_successes_since(now(), 0)"), std::string("ID003"));
    QCOMPARE(sqlstateOf(*m_owner, "SELECT idem.idem_successes_since(now(), -5)"), std::string("ID003"));
    QCOMPARE(sqlstateOf(*m_owner, "SELECT idem.idem_successes_since(now(), 10000001)"), std::string("ID003"));
    QCOMPARE(sqlstateOf(*m_owner, "SELECT idem.idem_successes_since(now(), 10000000)"), std::string("ok"));
    // The refusal says what was wrong, in words.
    try {
        pqxx::work w(*m_owner);
        w.exec("SELECT idem.idem_successes_since(NULL)");
        QFAIL("NULL was counted");
    } catch (const pqxx::sql_error& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("the time to count from is NULL")), e.what());
    }
    try {
        pqxx::work w(*m_owner);
        w.exec("SELECT idem.idem_successes_since(now(), 0)");
        QFAIL("a cap of 0 was taken");
    } catch (const pqxx::sql_error& e) {
        QVERIFY2(
            QString::fromUtf8(e.what()).contains(QStringLiteral("the cap must be 1 to 10000000, not 0")), e.what());
    }
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.task_idempotency"), before);
    // STABLE, as the function file says (a reader's read-only transaction may call it).
    QCOMPARE(
        scalar(*m_owner, "SELECT provolatile FROM pg_proc WHERE oid = 'idem.idem_successes_since'::regproc"), "s"_b);
}

void TestAtRisk::rolesThatMayCount()
{
    auto reader = idem::connect(idem::test::loginDsn(m_db->dsn(), readerRole, password));
    QCOMPARE(scalar(*reader, "SELECT idem.idem_successes_since('-infinity')"), "310"_b);
    auto worker = idem::connect(idem::test::loginDsn(m_db->dsn(), workerRole, password));
    QCOMPARE(sqlstateOf(*worker, "SELECT idem.idem_successes_since(now())"), std::string("42501"));
    // What the reading says for a role that may not count: the lags without the number.
    pqxx::read_transaction t(*worker);
    const auto r = idem::readAtRisk(t, idem::SchemaName());
    QVERIFY(!r.functionMissing);
    QVERIFY(!r.functionAllowed);
}

void TestAtRisk::readingOnARealServer()
{
    // The test cluster has no standby and no synchronous_standby_names: nothing streams.
    pqxx::read_transaction t(*m_owner);
    const auto r = idem::readAtRisk(t, idem::SchemaName(), 1000);
    QVERIFY(!r.inRecovery);
    QVERIFY(!r.functionMissing);
    QVERIFY(r.functionAllowed);
    QCOMPARE(r.synchronous, false);
    QCOMPARE(r.cap, std::int64_t(1000));
    QCOMPARE(static_cast<int>(r.standbys.size()), 0);
    QCOMPARE(idem::console::StatusPanel::atRiskText(r), QStringLiteral("none: no standby streams from this server"));
    t.commit();

    // And on the Connection page of a console connected to it, read after the server is.
    idem::console::ConsoleSession admin;
    idem::console::ConsoleWidget console(&admin);
    idem::console::ConnectionSettings settings;
    settings.conninfo = QString::fromStdString(m_db->dsn());
    settings.schema = QStringLiteral("idem");
    admin.connectTo(settings);
    auto* value = console.findChild<QLabel*>(QStringLiteral("atRiskValue"));
    QVERIFY(value);
    // From the first read of the server, not the next one 10 s later.
    QTRY_COMPARE_WITH_TIMEOUT(value->text(), QStringLiteral("none: no standby streams from this server"), 5000);
    QCOMPARE(console.statusPanel()->atRiskText(), value->text());
}

void TestAtRisk::olderSchemaSaysMigrate()
{
    idem::test::ScratchDatabase old("atrisk_old");
    auto c = old.connect();
    idem::migrate(*c, { idem::SchemaName(), true });
    {
        pqxx::work w(*c);
        // As a schema migrated by an idemctl from before the function file: not there.
        w.exec("DROP FUNCTION idem.idem_successes_since(timestamptz, integer)");
        w.commit();
    }
    pqxx::read_transaction t(*c);
    const auto r = idem::readAtRisk(t, idem::SchemaName());
    QVERIFY(r.functionMissing);
    QVERIFY(!r.functionAllowed);
    // The transaction is still usable: nothing called what is not there.
    QCOMPARE(t.exec("SELECT 1")[0][0].as<int>(), 1);
    QCOMPARE(idem::console::StatusPanel::atRiskText(r),
        QStringLiteral("not available (idemctl migrate); no standby streams from this server"));
    idem::AtRiskReading lagging = r;
    lagging.standbys.push_back({ "node2", "async", 2500000, -1 });
    QCOMPARE(idem::console::StatusPanel::atRiskText(lagging),
        QStringLiteral("node2 lags 2.500 s; the successes in that window: not available (idemctl migrate)"));
}

void TestAtRisk::pageWords()
{
    idem::AtRiskReading r;
    r.functionAllowed = true;
    r.cap = 100000;
    r.standbys = { { "node2", "async", 1500000, 42 }, { "node3", "potential", 0, -1 }, { "node4", "sync", 20000, -1 },
        { "node5", "async", 350, 1 } };
    QCOMPARE(idem::console::StatusPanel::atRiskText(r),
        QStringLiteral("42 success(es) acknowledged in the last 1.500 s of lag are not on node2 yet\n"
                       "0 on node3 (no lag)\n0 on node4 (synchronous)\n"
                       "1 success(es) acknowledged in the last 0.35 ms of lag are not on node5 yet"));
    r.standbys = { { "node2", "async", 61000000, 100001 } };
    r.hiddenStandbys = 1;
    QCOMPARE(idem::console::StatusPanel::atRiskText(r),
        QStringLiteral("more than 100,000 successes acknowledged in the last 61.000 s of lag are not on node2 yet\n"
                       "1 standby(s) whose lag this role may not read (grant pg_monitor)"));
    r.synchronous = true;
    r.synchronousNames = "\"node2\"";
    QCOMPARE(idem::console::StatusPanel::atRiskText(r),
        QStringLiteral("0: every acknowledged commit waits for a synchronous standby (synchronous_standby_names = "
                       "\"node2\")"));
    r.inRecovery = true;
    QCOMPARE(
        idem::console::StatusPanel::atRiskText(r), QStringLiteral("read on the primary: this server is a standby"));
}

QTEST_MAIN(TestAtRisk)
#include "tst_atrisk.moc"
