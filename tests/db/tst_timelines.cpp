// Issue #29 item 3: which node the console is on, and a failover as an event for every client.
// idem_note_timeline (schema v20) records the primary's timeline the first time any client sees
// it; a timeline after another is a failover that idem_events lists. The node as the server says
// (address, system identifier, timeline) degrades in words where the control functions are not
// allowed. Last, a real promotion under a console connected through a multi-host conninfo: the
// session's server info and the Connection page name the new node and its timeline, and the
// failover is an event.

#include <QtTest>

#include <QDir>
#include <QLabel>
#include <QTabWidget>

#include <atomic>
#include <thread>

#include <pqxx/pqxx>

#include "models/consolesession.h"
#include "models/eventwatch.h"
#include "operations/events.h"
#include "operations/node.h"
#include "schema/migrate.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "tests/support/cliprocess.h"
#include "tests/support/pgservers.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"
#include "views/consolewidget.h"
#include "views/statuspanel.h"

using idem::console::ConsoleSession;
using idem::test::operator""_b;
using idem::test::scalar;
using idem::test::sqlstateOf;

namespace {
constexpr const char* workerRole = "idem_t_tl_worker";
constexpr const char* readerRole = "idem_t_tl_reader";
constexpr const char* operatorRole = "idem_t_tl_operator";
constexpr const char* outsiderRole = "idem_t_tl_outsider";
constexpr const char* password = "pw-timelines";

const idem::SchemaName schema;

std::vector<idem::Event> failovers(pqxx::connection& reader)
{
    std::vector<idem::Event> out;
    const std::int64_t nowUs
        = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count();
    for (auto& e : idem::listEvents(reader, schema, nowUs - 3600LL * 1000000, nowUs + 60LL * 1000000))
        if (e.action == "failover")
            out.push_back(e);
    return out;
}
} // namespace

class TestTimelines : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void firstCallRecordsThenOnlyReads();
    void newTimelineIsOneFailoverForEveryReader();
    void readOnlyTransactionRecordsNothing();
    void rolesAndHostileSearchPath();
    void nodeIdentityWithoutControlFunctions();
    void promotionUnderAConsoleIsANewNodeAndAnEvent();
    void idemctlStatsRecordsItAsItsLogin();

private:
    std::unique_ptr<pqxx::connection> login(const char* role)
    {
        return std::make_unique<pqxx::connection>(idem::test::loginDsn(m_db->dsn(), role, password));
    }
    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
};

void TestTimelines::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("timelines", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    idem::test::createLoginRole(workerRole, password, "idem_worker");
    idem::test::createLoginRole(readerRole, password, "idem_reader");
    idem::test::createLoginRole(operatorRole, password, "idem_operator");
    idem::test::createLoginRole(outsiderRole, password, "");
}

void TestTimelines::cleanupTestCase()
{
    m_owner.reset();
    m_db.reset();
}

void TestTimelines::init()
{
    pqxx::work w(*m_owner);
    w.exec("TRUNCATE idem.idem_timelines");
    w.commit();
}

// The first reader to look records the system's timeline; every later call is one read by primary
// key, with no transaction id assigned, and the row stays as it was. The first timeline is no
// failover.
void TestTimelines::firstCallRecordsThenOnlyReads()
{
    auto reader = login(readerRole);
    const auto first = idem::noteTimeline(*reader, schema);
    QCOMPARE(first.outcome, std::string("first"));
    QCOMPARE(QByteArray::fromStdString(first.systemIdentifier),
        scalar(*m_owner, "SELECT system_identifier::text FROM pg_control_system()"));
    QCOMPARE(QByteArray::number(first.timeline),
        scalar(*m_owner, "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int::text"));
    QCOMPARE(first.previousTimeline, 0);
    QVERIFY(first.sinceUs > 0);
    const QByteArray row = scalar(*m_owner, "SELECT t::text || '/' || t.xmin FROM idem.idem_timelines t");
    QVERIFY2(row.contains(readerRole) && row.contains("127.0.0.1:"), row.constData());

    for (int i = 0; i < 2; ++i) {
        pqxx::work w(*reader);
        const auto r = w.exec("SELECT outcome, previous_timeline FROM idem.idem_note_timeline()");
        QCOMPARE(r[0][0].as<std::string>(), std::string("known"));
        QVERIFY(r[0][1].is_null());
        QVERIFY2(w.exec("SELECT txid_current_if_assigned()")[0][0].is_null(), "the call wrote something");
        w.commit();
    }
    QCOMPARE(scalar(*m_owner, "SELECT t::text || '/' || t.xmin FROM idem.idem_timelines t"), row);
    QCOMPARE(failovers(*reader).size(), std::size_t(0));
}

// A history where the system was on another timeline before (the server's own timeline cannot be
// changed here; the last test promotes a real standby): the readers and workers who call at once
// make one failover row, and every reader lists the same one event.
void TestTimelines::newTimelineIsOneFailoverForEveryReader()
{
    const int now
        = scalar(*m_owner, "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int").toInt();
    {
        pqxx::work w(*m_owner);
        w.exec_params("INSERT INTO idem.idem_timelines SELECT system_identifier, $1, now() - interval '1 hour', NULL,"
                      " '10.0.0.9:5432', 'postgres' FROM pg_control_system()",
            now + 7);
        w.commit();
    }
    std::atomic<int> failoverAnswers { 0 }, knownAnswers { 0 }, errors { 0 };
    std::vector<std::thread> callers;
    for (const char* role : { readerRole, workerRole, readerRole, workerRole }) {
        callers.emplace_back([&, dsn = idem::test::loginDsn(m_db->dsn(), role, password)] {
            try {
                pqxx::connection c(dsn);
                const auto note = idem::noteTimeline(c, schema);
                (note.outcome == "failover" ? failoverAnswers : note.outcome == "known" ? knownAnswers : errors)++;
            } catch (const std::exception&) {
                errors++;
            }
        });
    }
    for (auto& t : callers)
        t.join();
    QCOMPARE(errors.load(), 0);
    QCOMPARE(failoverAnswers.load(), 1);
    QCOMPARE(knownAnswers.load(), 3);
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_timelines WHERE previous_timeline IS NOT NULL"), "1"_b);

    auto reader = login(readerRole);
    const auto again = idem::noteTimeline(*reader, schema);
    QCOMPARE(again.outcome, std::string("known"));
    QCOMPARE(again.previousTimeline, now + 7);
    for (const char* role : { readerRole, operatorRole }) {
        auto c = login(role);
        const auto events = failovers(*c);
        QCOMPARE(events.size(), std::size_t(1));
        QCOMPARE(events[0].tenant, std::string("*"));
        QCOMPARE(events[0].operation, std::string("*"));
        QVERIFY2(events[0].text.rfind("a new primary: timeline " + std::to_string(now + 7) + " -> "
                         + std::to_string(now) + ", at 127.0.0.1:",
                     0)
                == 0,
            events[0].text.c_str());
        QVERIFY2(events[0].actor.find("(127.0.0.1:") != std::string::npos, events[0].actor.c_str());
    }
    // The console's event marks draw it as the failover kind.
    QCOMPARE(idem::console::eventKindStyle(QStringLiteral("failover")).letter, QStringLiteral("F"));
}

// A read-only transaction (a primary being demoted, default_transaction_read_only) records
// nothing and says so; the next call on a writable primary does.
void TestTimelines::readOnlyTransactionRecordsNothing()
{
    auto reader = login(readerRole);
    {
        pqxx::work w(*reader);
        w.exec("SET TRANSACTION READ ONLY");
        QCOMPARE(
            w.exec("SELECT outcome FROM idem.idem_note_timeline()")[0][0].as<std::string>(), std::string("read_only"));
        w.commit();
    }
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_timelines"), "0"_b);
    QCOMPARE(idem::noteTimeline(*reader, schema).outcome, std::string("first"));
}

// Readers, operators and workers may call it; nobody else. Nobody writes the table directly (the
// privilege matrix has every table and operation). A caller's search_path with a table of the same
// name ahead of the schema changes nothing: the function records in its own schema.
void TestTimelines::rolesAndHostileSearchPath()
{
    auto outsider = login(outsiderRole);
    QCOMPARE(sqlstateOf(*outsider, "SELECT * FROM idem.idem_note_timeline()"), std::string("42501"));
    for (const char* role : { workerRole, operatorRole })
        QCOMPARE(sqlstateOf(*login(role), "SELECT * FROM idem.idem_note_timeline()"), std::string("ok"));
    auto worker = login(workerRole);
    QCOMPARE(sqlstateOf(*worker, "SELECT count(*) FROM idem.idem_timelines"), std::string("42501"));
    auto op = login(operatorRole);
    QCOMPARE(sqlstateOf(*op, "DELETE FROM idem.idem_timelines"), std::string("42501"));
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_timelines"), "1"_b);

    pqxx::work w(*m_owner);
    w.exec("TRUNCATE idem.idem_timelines");
    w.exec("CREATE SCHEMA IF NOT EXISTS decoy");
    w.exec("CREATE TABLE decoy.idem_timelines (LIKE idem.idem_timelines)");
    w.exec_params("GRANT USAGE ON SCHEMA decoy TO " + std::string(readerRole));
    w.exec_params("GRANT ALL ON decoy.idem_timelines TO " + std::string(readerRole));
    w.commit();
    auto reader = login(readerRole);
    {
        pqxx::work r(*reader);
        r.exec("SET LOCAL search_path = decoy, idem");
        QCOMPARE(r.exec("SELECT outcome FROM idem.idem_note_timeline()")[0][0].as<std::string>(), std::string("first"));
        r.commit();
    }
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_timelines"), "1"_b);
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM decoy.idem_timelines"), "0"_b);
    pqxx::work drop(*m_owner);
    drop.exec("DROP SCHEMA decoy CASCADE");
    drop.commit();
}

// EXECUTE on the control functions revoked from PUBLIC (as some sites do): the node is still
// named by its address and, on a primary, its timeline; the system identifier is said to be not
// allowed, in words.
void TestTimelines::nodeIdentityWithoutControlFunctions()
{
    auto reader = login(readerRole);
    {
        pqxx::read_transaction t(*reader);
        const auto n = idem::readNodeIdentity(t);
        QVERIFY(n.systemAllowed);
        QCOMPARE(QByteArray::fromStdString(n.systemIdentifier),
            scalar(*m_owner, "SELECT system_identifier::text FROM pg_control_system()"));
        QVERIFY(n.timeline > 0);
        QVERIFY2(n.serverAddress.rfind("127.0.0.1:", 0) == 0, n.serverAddress.c_str());
        QVERIFY(!n.inRecovery);
    }
    {
        pqxx::work w(*m_owner);
        w.exec("REVOKE EXECUTE ON FUNCTION pg_control_system(), pg_control_checkpoint() FROM PUBLIC");
        w.commit();
    }
    idem::NodeIdentity n;
    {
        pqxx::read_transaction t(*reader);
        n = idem::readNodeIdentity(t);
    }
    {
        pqxx::work w(*m_owner);
        w.exec("GRANT EXECUTE ON FUNCTION pg_control_system(), pg_control_checkpoint() TO PUBLIC");
        w.commit();
    }
    QVERIFY(!n.systemAllowed);
    QVERIFY(!n.checkpointAllowed);
    QVERIFY(n.systemIdentifier.empty());
    QVERIFY(n.timeline > 0); // a primary's comes from its WAL file name, which needs no privilege
    idem::console::ServerInfo info;
    info.host = QStringLiteral("127.0.0.1");
    info.port = QStringLiteral("5432");
    info.serverAddress = QString::fromStdString(n.serverAddress);
    info.timeline = n.timeline;
    info.systemAllowed = n.systemAllowed;
    QVERIFY2(info.nodeText().contains(QStringLiteral("system not known (this role may not call pg_control_system())")),
        qPrintable(info.nodeText()));
    info.inRecovery = true;
    info.timeline = 0;
    QVERIFY2(info.nodeText().contains(QStringLiteral("standby, timeline not known (this role may not call "
                                                     "pg_control_checkpoint())")),
        qPrintable(info.nodeText()));
}

// A primary and its streaming standby; a console on a multi-host conninfo that finds the primary.
// The primary goes down, the standby is promoted: the console reconnects by itself, its server
// info and Connection page name the new node on timeline 2, with when it changed and what was
// before, and the failover is an event that a reader on the new primary lists.
void TestTimelines::promotionUnderAConsoleIsANewNodeAndAnEvent()
{
    const QString problem = idem::test::postgresServerProblem();
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    auto primary = idem::test::LocalCluster::primary();
    QVERIFY2(primary->problem().isEmpty(), qPrintable(primary->problem()));
    {
        pqxx::connection c(primary->dsn());
        idem::migrate(c, { idem::SchemaName(), false });
    }
    auto standby = idem::test::LocalCluster::standbyOf(*primary, QStringLiteral("idem_standby"));
    QVERIFY2(standby->problem().isEmpty(), qPrintable(standby->problem()));
    const std::string multiHost = "host=127.0.0.1,127.0.0.1 port=" + std::to_string(primary->port()) + ","
        + std::to_string(standby->port()) + " dbname=postgres user=postgres sslmode=disable connect_timeout=5"
        + " target_session_attrs=read-write";

    ConsoleSession admin;
    idem::console::ConsoleWidget console(&admin);
    auto& panel = *console.statusPanel();
    admin.setInfoRefreshInterval(std::chrono::milliseconds(500));
    // The Connection page as a person sees it, saved before and after the promotion when
    // IDEM_TEST_SCREENSHOTS names a directory (to look at, not compared).
    if (auto* page = console.findChild<QWidget*>(QStringLiteral("connectionPage")))
        console.pages()->setCurrentWidget(page);
    console.resize(1100, 760);
    console.show();
    const auto picture = [&](const char* name) {
        const QString dir = qEnvironmentVariable("IDEM_TEST_SCREENSHOTS");
        if (!dir.isEmpty())
            QVERIFY(console.grab().save(QDir(dir).filePath(QString::fromLatin1(name))));
    };
    QVERIFY(idem::test::connectSession(admin, multiHost));
    const auto before = admin.serverInfo();
    QCOMPARE(before.port.toInt(), primary->port());
    QCOMPARE(before.timeline, 1);
    // "first" on the first read, "known" on the re-reads after it: the system's first timeline.
    QVERIFY2(before.timelineOutcome == QLatin1String("first") || before.timelineOutcome == QLatin1String("known"),
        qPrintable(before.timelineOutcome));
    QCOMPARE(before.previousTimeline, 0);
    QVERIFY(!before.systemIdentifier.isEmpty());
    QVERIFY(before.previousNode.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(panel.nodeText().contains(QStringLiteral("primary, timeline 1")), 10000);
    QVERIFY2(panel.nodeSinceText().contains(QStringLiteral("since connecting")), qPrintable(panel.nodeSinceText()));
    // The standby is streaming: the primary lists it.
    QTRY_VERIFY_WITH_TIMEOUT(panel.standbysText().contains(QStringLiteral("idem_standby (async, streaming")), 20000);
    const QString connectedBefore = panel.connectedAtText();
    picture("connection-before-promotion.png");

    QTest::qWait(1100); // "Connected at" shows the second
    primary->crash();
    QVERIFY2(standby->promote(), qPrintable(standby->problem()));
    QTRY_VERIFY2_WITH_TIMEOUT(admin.state() == ConsoleSession::State::Connected
            && admin.serverInfo().port.toInt() == standby->port() && admin.serverInfo().timeline == 2,
        qPrintable(admin.serverInfo().nodeText()), 60000);
    const auto after = admin.serverInfo();
    QCOMPARE(after.systemIdentifier, before.systemIdentifier); // the same system, another node
    QVERIFY2(after.timelineOutcome == QLatin1String("failover") || after.timelineOutcome == QLatin1String("known"),
        qPrintable(after.timelineOutcome));
    QCOMPARE(after.previousTimeline, 1);
    QVERIFY(after.nodeSince > before.nodeSince);
    QVERIFY2(after.previousNode.contains(QStringLiteral("timeline 1")), qPrintable(after.previousNode));
    QTRY_VERIFY_WITH_TIMEOUT(panel.nodeText().contains(QStringLiteral("primary, timeline 2")), 10000);
    QVERIFY2(panel.nodeText().contains(QString::number(standby->port())), qPrintable(panel.nodeText()));
    QVERIFY2(panel.nodeSinceText().contains(QStringLiteral("before: 127.0.0.1:%1").arg(primary->port())),
        qPrintable(panel.nodeSinceText()));
    QVERIFY2(panel.nodeSinceText().contains(QStringLiteral("timeline 2 follows 1 since")),
        qPrintable(panel.nodeSinceText()));
    QVERIFY2(panel.connectedAtText() != connectedBefore, qPrintable(panel.connectedAtText()));
    QTRY_COMPARE_WITH_TIMEOUT(panel.standbysText(), QStringLiteral("none connected now"), 10000);
    picture("connection-after-promotion.png");

    pqxx::connection reader(standby->dsn());
    const auto events = failovers(reader);
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events[0].text, "a new primary: timeline 1 -> 2, at 127.0.0.1:" + std::to_string(standby->port()));
}

// idemctl stats reads the primary, so it records a timeline it is the first to see, as the
// console and the exporter do; on a login with only idem_reader. Its figures are printed either
// way, and a second run writes nothing.
void TestTimelines::idemctlStatsRecordsItAsItsLogin()
{
    const auto dsn = QString::fromStdString(idem::test::loginDsn(m_db->dsn(), readerRole, password));
    const auto run = idem::test::runProgram(idem::test::idemctlPath(), { QStringLiteral("stats"), QStringLiteral("--dsn"), dsn, QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("\"expired_leases\"")), qPrintable(run.out));
    QVERIFY2(run.err.isEmpty(), qPrintable(run.err));
    QCOMPARE(scalar(*m_owner,
                 "SELECT count(*) || ' ' || min(db_role) || ' ' || bool_and(previous_timeline IS NULL)"
                 "  FROM idem.idem_timelines t, pg_control_system() c WHERE t.system_identifier = c.system_identifier"
                 "   AND t.timeline = ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer"),
        QByteArray("1 ") + readerRole + " true");
    const auto before = scalar(*m_owner, "SELECT xmin::text || first_seen::text FROM idem.idem_timelines");
    const auto again = idem::test::runProgram(idem::test::idemctlPath(), { QStringLiteral("stats"), QStringLiteral("--dsn"), dsn });
    QVERIFY2(again.exitCode == 0, qPrintable(idem::test::describe(again)));
    QCOMPARE(scalar(*m_owner, "SELECT xmin::text || first_seen::text FROM idem.idem_timelines"), before);
}

QTEST_MAIN(TestTimelines)
#include "tst_timelines.moc"
