// Issue #29: the acknowledged successes at risk from a failover under asynchronous replication.
// idem_successes_since against an independent count over planted rows (three operations, other
// statuses, rows on the boundary, the future, a cap), its refusals (NULL, a cap out of range), who
// may call it; readAtRisk on a real server (no standby, the function missing as in an older
// schema); and the Connection page's words for each reading.

#include <QtTest>

#include <QLabel>

#include <QDir>
#include <QRegularExpression>

#include <memory>

#include <csignal>
#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/runner.h"
#include "core/taskstore.h"
#include "models/consolesession.h"
#include "operations/node.h"
#include "schema/migrate.h"
#include "tests/support/exporterprocess.h"
#include "tests/support/pgservers.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"
#include "views/consolewidget.h"
#include "views/statuspanel.h"
#include "views/theme.h"

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
    void standbyThatStopsReceiving();

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
    lagging.standbys.push_back({ "node2", "async", 2500000, -1, idem::AtRiskReading::Presence::Streaming, 4096 });
    QCOMPARE(idem::console::StatusPanel::atRiskText(lagging),
        QStringLiteral("node2 lags 2.500 s; the successes in that window: not available (idemctl migrate)"));
}

void TestAtRisk::pageWords()
{
    idem::AtRiskReading r;
    r.functionAllowed = true;
    r.cap = 100000;
    using Presence = idem::AtRiskReading::Presence;
    r.standbys = { { "node2", "async", 1500000, 42, Presence::Streaming, 8192 },
        { "node3", "potential", -1, -1, Presence::Streaming, 0 }, { "node4", "sync", 20000, -1 },
        { "node5", "async", 350, 1, Presence::Streaming, 120 } };
    QCOMPARE(idem::console::StatusPanel::atRiskText(r),
        QStringLiteral("42 success(es) acknowledged in the last 1.500 s of lag are not on node2 yet\n"
                       "0 on node3 (no lag)\n0 on node4 (synchronous)\n"
                       "1 success(es) acknowledged in the last 0.35 ms of lag are not on node5 yet"));
    r.standbys = { { "node2", "async", 61000000, 100001, Presence::Streaming, 1 << 20 } };
    r.hiddenStandbys = 1;
    QCOMPARE(idem::console::StatusPanel::atRiskText(r),
        QStringLiteral("more than 100,000 successes acknowledged in the last 61.000 s of lag are not on node2 yet\n"
                       "1 standby(s) whose lag this role may not read (grant pg_monitor)"));
    QVERIFY(!r.alert());
    // Stopped replying, and gone with a slot (issue 40): the words for each, in the alert tone; a
    // count from before the memory's first reading is a lower bound; names escaped.
    r.hiddenStandbys = 0;
    r.nowUs = 1000000000000000; // 2001-09-09 01:46:40 UTC
    idem::AtRiskReading::Standby silent { "stby", "async", -1, 1447, Presence::Silent, 3 * (1 << 20) };
    silent.replyAgeUs = 45000000;
    silent.sinceUs = r.nowUs - 45000000;
    idem::AtRiskReading::Standby gone { "node\u202e9", "", -1, 2206, Presence::Disconnected, 2048 };
    gone.slot = "node9";
    gone.sinceUs = r.nowUs - 70000000;
    gone.sinceBounded = false;
    r.standbys = { silent, gone };
    QVERIFY(r.alert());
    const QString text = idem::console::StatusPanel::atRiskText(r);
    QVERIFY2(
        QRegularExpression(
            QStringLiteral(
                "^1,447 acknowledged success\\(es\\) since [0-9:]{8} \\(server clock\\) are not on stby: it has not "
                "replied "
                "for 45 s and is 3.0 MB of WAL behind; a failover to it now loses them\n"
                "at least 2,206 acknowledged success\\(es\\) since [0-9:]{8} \\(server clock\\) are not on "
                "node\\\\u202e9: it "
                "is not connected; its replication slot node9 holds its point, 2,048 bytes of WAL behind; a failover "
                "to it now loses them$"))
            .match(text)
            .hasMatch(),
        qPrintable(text));
    r.synchronous = true;
    r.synchronousNames = "\"node2\"";
    QCOMPARE(idem::console::StatusPanel::atRiskText(r),
        QStringLiteral("0: every acknowledged commit waits for a synchronous standby (synchronous_standby_names = "
                       "\"node2\")"));
    r.inRecovery = true;
    QCOMPARE(
        idem::console::StatusPanel::atRiskText(r), QStringLiteral("read on the primary: this server is a standby"));
}

namespace {
// Successes through the protocol on the primary, as a worker makes them.
void succeed(pqxx::connection& c, const std::string& prefix, int n)
{
    idem::TaskStore store(c);
    for (int i = 0; i < n; ++i) {
        const idem::TaskKey key("t", "charge", prefix + std::to_string(i));
        const auto out = idem::runTask(store, key, "v1:" + prefix + std::to_string(i),
            [](pqxx::work&, const idem::TaskContext&) { return std::string("{}"); });
        QVERIFY(out.kind == idem::RunOutcome::Kind::Succeeded);
    }
}

long long succeededOn(const std::string& dsn)
{
    auto c = idem::connect(dsn);
    return pqxx::nontransaction(*c)
        .exec("SELECT count(*) FROM idem.task_idempotency WHERE status = 'succeeded'")[0][0]
        .as<long long>();
}

// The figure at the head of the page's line for stby: "40 acknowledged successes since …".
long long shownFigure(const QString& text)
{
    const auto m = QRegularExpression(QStringLiteral("(?:at least )?([0-9,]+) acknowledged success")).match(text);
    return m.hasMatch() ? QString(m.captured(1)).remove(QLatin1Char(',')).toLongLong() : -1;
}
} // namespace

// Issue 40 item A: an asynchronous standby whose walreceiver stops (SIGSTOP: it neither receives
// nor replies, and stays queryable) while successes go on. The page read "0 on stby (no lag)"
// then (flush_lag NULL or stale), and "none: no standby streams" once its walsender ended. Now it
// counts at least what the standby really lacks (counted on the standby itself), in the alert
// tone, and keeps counting from its replication slot when the walsender is gone.
void TestAtRisk::standbyThatStopsReceiving()
{
    auto primary = idem::test::LocalCluster::primary();
    QVERIFY2(primary->problem().isEmpty(), qPrintable(primary->problem()));
    {
        auto c = idem::connect(primary->dsn());
        idem::migrate(*c, { idem::SchemaName(), true });
        pqxx::nontransaction(*c).exec("SELECT pg_create_physical_replication_slot('stby')");
    }
    auto standby = idem::test::LocalCluster::standbyOf(
        *primary, QStringLiteral("stby"), { QStringLiteral("primary_slot_name = 'stby'") });
    QVERIFY2(standby->problem().isEmpty(), qPrintable(standby->problem()));
    // The exporter reads the primary too: it says the same per standby (and the alert rule reads it).
    idem::test::ExporterProcessBase exporter;
    QVERIFY2(exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(primary->dsn()),
                 QStringLiteral("--interval"), QStringLiteral("500ms") }),
        qPrintable(exporter.err()));
    const auto exported = [&](const char* name) {
        return idem::test::sampleIn(idem::test::httpGet(exporter.port(), QStringLiteral("/metrics")).body,
            QStringLiteral("%1{schema=\"idem\",standby=\"stby\"}").arg(QLatin1String(name)));
    };
    auto writer = idem::connect(primary->dsn());
    succeed(*writer, "before-", 30);
    QTRY_COMPARE_WITH_TIMEOUT(succeededOn(standby->dsn()), 30LL, 30000);

    idem::console::ConsoleSession admin;
    idem::console::ConsoleWidget console(&admin);
    console.resize(1000, 800);
    console.show();
    idem::console::ConnectionSettings settings;
    settings.conninfo = QString::fromStdString(primary->dsn());
    settings.schema = QStringLiteral("idem");
    admin.connectTo(settings);
    auto* value = console.findChild<QLabel*>(QStringLiteral("atRiskValue"));
    QVERIFY(value);
    // Read again and again (the page does every 10 s) until it says what is expected.
    const auto readsUntil = [&](const std::function<bool()>& done, int timeoutMs) {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < timeoutMs) {
            if (admin.state() == idem::console::ConsoleSession::State::Connected)
                admin.refreshServerInfo();
            if (QTest::qWaitFor(done, 1000))
                return true;
        }
        return false;
    };
    QVERIFY2(readsUntil([&] { return value->text() == QStringLiteral("0 on stby (no lag)"); }, 30000),
        qPrintable(value->text()));
    QVERIFY(!value->property("alert").toBool());
    // (The exporter's own reading writes WAL, so the standby may be a few bytes behind it.)
    QTRY_COMPARE_WITH_TIMEOUT(exported("idem_standby_not_receiving"), 0.0, 20000);
    QTRY_COMPARE_WITH_TIMEOUT(exported("idem_standby_at_risk_successes"), 0.0, 20000);

    // Its walreceiver stops; the successes go on, and none reaches it.
    long receiver = 0;
    {
        auto s = idem::connect(standby->dsn());
        receiver = pqxx::nontransaction(*s).exec("SELECT pid FROM pg_stat_wal_receiver")[0][0].as<long>();
    }
    QCOMPARE(::kill(static_cast<pid_t>(receiver), SIGSTOP), 0);
    struct Resume {
        long pid;
        ~Resume() { ::kill(static_cast<pid_t>(pid), SIGCONT); }
    } resume { receiver };
    succeed(*writer, "during-", 40);
    const long long lacking = succeededOn(primary->dsn()) - succeededOn(standby->dsn());
    QCOMPARE(lacking, 40LL); // what the database holds: the standby has none of them
    const QRegularExpression silent(
        QStringLiteral("^[0-9,]+ acknowledged success\\(es\\) since [0-9:]+ \\(server clock\\) are not on stby: it has "
                       "not replied for "
                       "[0-9,]+ s and is [0-9,.]+ (bytes|MB) of WAL behind; a failover to it now loses them$"));
    QVERIFY2(readsUntil([&] { return silent.match(value->text()).hasMatch(); }, 30000), qPrintable(value->text()));
    QVERIFY2(shownFigure(value->text()) >= lacking && shownFigure(value->text()) <= 70, qPrintable(value->text()));
    QVERIFY(value->property("alert").toBool());
    QVERIFY2(value->styleSheet().contains(idem::console::theme::toneCss(idem::console::theme::Tone::Bad)),
        qPrintable(value->styleSheet()));
    // The Standbys line beside it no longer shows the last replay lag it reported ("0.0 s") as now.
    QVERIFY2(readsUntil(
                 [&] {
                     return console.statusPanel()->standbysText().contains(
                         QRegularExpression(QStringLiteral("stby \\(async, streaming, no reply for [0-9]+ s and behind: "
                                                           "its replay lag is not known\\)")));
                 },
                 20000),
        qPrintable(console.statusPanel()->standbysText()));
    if (const QByteArray dir = qgetenv("IDEM_SCREENSHOT_DIR"); !dir.isEmpty()) {
        QTest::qWait(200); // the bold alert tone lays the line out again
        console.grab().save(
            QDir(QString::fromLocal8Bit(dir)).filePath(QStringLiteral("connection-lagging-standby.png")));
    }
    QTRY_COMPARE_WITH_TIMEOUT(exported("idem_standby_not_receiving"), 1.0, 20000);
    QVERIFY2(exported("idem_standby_at_risk_successes") >= double(lacking), qPrintable(exporter.err()));
    QVERIFY(exported("idem_standby_behind_bytes") > 0);

    // Its walsender ends (as wal_sender_timeout ends it): gone from pg_stat_replication, its slot stays.
    pqxx::nontransaction(*writer).exec("SELECT pg_terminate_backend(pid) FROM pg_stat_replication");
    QTRY_COMPARE_WITH_TIMEOUT(
        pqxx::nontransaction(*writer).exec("SELECT count(*) FROM pg_stat_replication")[0][0].as<int>(), 0, 10000);
    succeed(*writer, "after-", 10);
    const long long lackingNow = succeededOn(primary->dsn()) - succeededOn(standby->dsn());
    QCOMPARE(lackingNow, 50LL);
    const QRegularExpression gone(QStringLiteral(
        "^[0-9,]+ acknowledged success\\(es\\) since [0-9:]+ \\(server clock\\) are not on stby: it is not connected; "
        "its "
        "replication slot stby holds its point, [0-9,.]+ (bytes|MB) of WAL behind; a failover to it now loses them$"));
    QVERIFY2(readsUntil([&] { return gone.match(value->text()).hasMatch(); }, 20000), qPrintable(value->text()));
    QVERIFY2(shownFigure(value->text()) >= lackingNow && shownFigure(value->text()) <= 80, qPrintable(value->text()));
    QVERIFY(value->property("alert").toBool());
    // The exporter keeps it too (by its slot), though it is no longer in pg_stat_replication.
    QTRY_VERIFY_WITH_TIMEOUT(exported("idem_standby_at_risk_successes") >= double(lackingNow), 20000);
    QCOMPARE(exported("idem_standby_not_receiving"), 1.0);

    // It receives again: caught up, nothing at risk, the alert tone gone.
    ::kill(static_cast<pid_t>(receiver), SIGCONT);
    QTRY_COMPARE_WITH_TIMEOUT(succeededOn(standby->dsn()), 80LL, 60000);
    QVERIFY2(readsUntil([&] { return value->text() == QStringLiteral("0 on stby (no lag)"); }, 30000),
        qPrintable(value->text()));
    QVERIFY(!value->property("alert").toBool());
    QVERIFY(!value->styleSheet().contains(idem::console::theme::toneCss(idem::console::theme::Tone::Bad)));
}

QTEST_MAIN(TestAtRisk)
#include "tst_atrisk.moc"
