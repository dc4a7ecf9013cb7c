#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <atomic>
#include <thread>

#include <pqxx/pqxx>

#include "core/workerversion.h"
#include "operations/events.h"
#include "operations/pauses.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"

using idem::test::operator""_b;
using idem::test::scalar;
using idem::test::sqlstateOf;

namespace {
// Cluster-wide login roles, named for this test alone.
constexpr const char* workerRole = "idem_t_deploy_worker";
constexpr const char* readerRole = "idem_t_deploy_reader";
constexpr const char* operatorRole = "idem_t_deploy_operator";
constexpr const char* outsiderRole = "idem_t_deploy_outsider";
constexpr const char* password = "pw-deploys";

const idem::SchemaName schema;

QJsonObject json(const idem::test::CliRun& run) { return QJsonDocument::fromJson(run.out.toUtf8()).object(); }
} // namespace

// Issue #27: deploys. A worker reports its version when it starts or reconnects; a row is written
// only when something changes, and a version the fleet has not run before is one `deploy` event
// (old and new version, the worker) in idem_events, listEvents and `idemctl events`.
class TestLatencyDeploys : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void sameVersionTwiceWritesNothing();
    void newVersionIsOneDeployEvent();
    void concurrentFirstReportsMakeOneDeploy();
    void hostileInputsAreRefusedAndWriteNothing_data();
    void hostileInputsAreRefusedAndWriteNothing();
    void libraryRefusesBeforeAnyIo();
    void rolesAndPrivileges();
    void idemctlEventsShowsDeploys();
    void deploysNeverHideAnOperatorsPause();
    void deployReportsAreBoundedPerLogin();
    void demoWorkersReportTheBuildVersion();

private:
    std::unique_ptr<pqxx::connection> login(const char* role)
    {
        return std::make_unique<pqxx::connection>(idem::test::loginDsn(m_db->dsn(), role, password));
    }
    // Both tables as the owner sees them: what a report that changes nothing must leave.
    QByteArray everything()
    {
        return scalar(*m_owner,
            "SELECT md5((SELECT coalesce(string_agg(w::text, ',' ORDER BY w.worker), '') FROM "
            "idem.idem_worker_versions w)"
            " || '|' || (SELECT coalesce(string_agg(d::text, ',' ORDER BY d.id), '') FROM idem.idem_deploys d))");
    }
    std::int64_t nowUs()
    {
        return std::stoll(
            scalar(*m_owner, "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint").toStdString());
    }
    std::vector<idem::Event> deploysSince(std::int64_t fromUs)
    {
        auto reader = login(readerRole);
        std::vector<idem::Event> out;
        for (auto& e : idem::listEvents(*reader, schema, fromUs, nowUs() + 1))
            if (e.isDeploy())
                out.push_back(e);
        return out;
    }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
};

void TestLatencyDeploys::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("deploys", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    idem::test::createLoginRole(workerRole, password, "idem_worker");
    idem::test::createLoginRole(readerRole, password, "idem_reader");
    idem::test::createLoginRole(operatorRole, password, "idem_operator");
    idem::test::createLoginRole(outsiderRole, password, "");
}

void TestLatencyDeploys::cleanupTestCase()
{
    m_owner.reset();
    m_db.reset();
}

void TestLatencyDeploys::init()
{
    pqxx::work w(*m_owner);
    w.exec("TRUNCATE idem.idem_worker_versions, idem.idem_deploys");
    w.commit();
}

// The report of every start: one read, no transaction id even assigned (so no tuple, no WAL), the
// row as it was.
void TestLatencyDeploys::sameVersionTwiceWritesNothing()
{
    auto worker = login(workerRole);
    const auto first = idem::reportVersion(*worker, schema, "host-a/charge", "2.3.1");
    QCOMPARE(idem::versionReportOutcomeName(first.outcome), "new_worker");
    QVERIFY(first.deployId > 0); // the first version the fleet ever reported
    const QByteArray row = scalar(*m_owner, "SELECT w::text || '/' || w.xmin FROM idem.idem_worker_versions w");
    QVERIFY(row.contains("(host-a/charge,2.3.1,"));
    QVERIFY(row.contains(workerRole));
    const QByteArray before = everything();

    for (int i = 0; i < 2; ++i) {
        pqxx::work w(*worker);
        const auto r
            = w.exec_params("SELECT outcome, previous_version, deploy_id FROM idem.idem_report_version($1, $2)",
                "host-a/charge", "2.3.1");
        QCOMPARE(r[0][0].as<std::string>(), std::string("unchanged"));
        QCOMPARE(r[0][1].as<std::string>(), std::string("2.3.1"));
        QVERIFY(r[0][2].is_null());
        QVERIFY2(w.exec("SELECT txid_current_if_assigned()")[0][0].is_null(), "the report wrote something");
        w.commit();
    }
    const auto again = idem::reportVersion(*worker, schema, "host-a/charge", "2.3.1");
    QCOMPARE(idem::versionReportOutcomeName(again.outcome), "unchanged");
    QCOMPARE(again.previousVersion, std::string("2.3.1"));
    QCOMPARE(again.deployId, std::int64_t(0));
    QCOMPARE(everything(), before);
    QCOMPARE(scalar(*m_owner, "SELECT w::text || '/' || w.xmin FROM idem.idem_worker_versions w"), row);
}

// A rolling upgrade of named workers, a worker new by name, a rollback: one deploy per version the
// fleet had not run, with its old version, the worker and the reporting role.
void TestLatencyDeploys::newVersionIsOneDeployEvent()
{
    auto worker = login(workerRole);
    const auto from = nowUs();
    for (const char* w : { "host-a/charge", "host-b/charge" })
        idem::reportVersion(*worker, schema, w, "2.3.1");
    QCOMPARE(deploysSince(from).size(), std::size_t(1));
    QCOMPARE(deploysSince(from)[0].oldVersion, std::string()); // nothing was reported before

    const auto upgrade = nowUs();
    const auto a = idem::reportVersion(*worker, schema, "host-a/charge", "2.4.0");
    QCOMPARE(idem::versionReportOutcomeName(a.outcome), "changed");
    QCOMPARE(a.previousVersion, std::string("2.3.1"));
    QVERIFY(a.deployId > 0);
    const auto b = idem::reportVersion(*worker, schema, "host-b/charge", "2.4.0");
    QCOMPARE(idem::versionReportOutcomeName(b.outcome), "changed");
    QCOMPARE(b.deployId, std::int64_t(0)); // the fleet runs 2.4.0 already
    QCOMPARE(idem::versionReportOutcomeName(idem::reportVersion(*worker, schema, "host-b/charge", "2.4.0").outcome),
        "unchanged");

    auto deploys = deploysSince(upgrade);
    QCOMPARE(deploys.size(), std::size_t(1));
    QCOMPARE(deploys[0].auditId, a.deployId);
    QCOMPARE(deploys[0].worker, std::string("host-a/charge"));
    QCOMPARE(deploys[0].oldVersion, std::string("2.3.1"));
    QCOMPARE(deploys[0].newVersion, std::string("2.4.0"));
    QCOMPARE(deploys[0].tenant, std::string("*"));
    QCOMPARE(deploys[0].operation, std::string("*"));
    QCOMPARE(deploys[0].text, std::string("host-a/charge: 2.3.1 -> 2.4.0"));
    QCOMPARE(deploys[0].actor, std::string(workerRole) + " (host-a/charge)");
    QCOMPARE(deploys[0].atUs,
        std::stoll(scalar(*m_owner,
            "SELECT (extract(epoch FROM at) * 1000000)::bigint FROM idem.idem_deploys WHERE id = $1", a.deployId)
                       .toStdString()));
    // What the other worker's row says: the same first report, a later version since.
    QCOMPARE(scalar(*m_owner,
                 "SELECT version || ' ' || (since > first_seen) FROM idem.idem_worker_versions"
                 " WHERE worker = 'host-b/charge'"),
        "2.4.0 true"_b);

    // A worker new by name (a container named anew) with a version nobody ran: its old version is
    // the one the fleet took up last.
    const auto fresh = nowUs();
    const auto c = idem::reportVersion(*worker, schema, "pod-7f9c", "2.5.0");
    QCOMPARE(idem::versionReportOutcomeName(c.outcome), "new_worker");
    QVERIFY(c.deployId > 0);
    deploys = deploysSince(fresh);
    QCOMPARE(deploys.size(), std::size_t(1));
    QCOMPARE(deploys[0].oldVersion, std::string("2.4.0"));
    QCOMPARE(deploys[0].newVersion, std::string("2.5.0"));
    QCOMPARE(deploys[0].worker, std::string("pod-7f9c"));

    // Back to a version the fleet ran before: recorded, not a deploy (an operator annotates it).
    const auto back = idem::reportVersion(*worker, schema, "pod-7f9c", "2.4.0");
    QCOMPARE(idem::versionReportOutcomeName(back.outcome), "changed");
    QCOMPARE(back.deployId, std::int64_t(0));
    QCOMPARE(deploysSince(from).size(), std::size_t(3));
    QCOMPARE(scalar(*m_owner,
                 "SELECT string_agg(coalesce(old_version, '-') || '>' || new_version, ',' ORDER BY id)"
                 " FROM idem.idem_deploys"),
        "->2.3.1,2.3.1>2.4.0,2.4.0>2.5.0"_b);

    // Deploys concern every tenant and operation; the events' other filters and the limit hold.
    auto reader = login(readerRole);
    QCOMPARE(idem::listEvents(*reader, schema, from, nowUs() + 1, "acme", "refund").size(), std::size_t(3));
    QCOMPARE(idem::listEvents(*reader, schema, from, nowUs() + 1, {}, {}, 2).size(), std::size_t(2));
    QCOMPARE(idem::listEvents(*reader, schema, fresh, nowUs() + 1).size(), std::size_t(1));
}

// Eight workers start at once on a version nobody ran: eight rows, one deploy.
void TestLatencyDeploys::concurrentFirstReportsMakeOneDeploy()
{
    std::vector<std::unique_ptr<pqxx::connection>> conns;
    for (int i = 0; i < 8; ++i)
        conns.push_back(login(workerRole));
    std::atomic<int> ready { 0 };
    std::atomic<int> deploys { 0 };
    std::atomic<int> errors { 0 };
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i)
        threads.emplace_back([&, i] {
            ++ready;
            while (ready.load() < 8)
                std::this_thread::yield();
            try {
                if (idem::reportVersion(
                        *conns[static_cast<std::size_t>(i)], schema, "host-" + std::to_string(i), "3.0.0")
                        .deployId
                    > 0)
                    ++deploys;
            } catch (const std::exception&) {
                ++errors;
            }
        });
    for (auto& t : threads)
        t.join();
    QCOMPARE(errors.load(), 0);
    QCOMPARE(deploys.load(), 1);
    QCOMPARE(
        scalar(*m_owner, "SELECT count(*) || '/' || count(DISTINCT version) FROM idem.idem_worker_versions"), "8/1"_b);
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_deploys WHERE new_version = '3.0.0'"), "1"_b);
}

void TestLatencyDeploys::hostileInputsAreRefusedAndWriteNothing_data()
{
    QTest::addColumn<bool>("nullWorker");
    QTest::addColumn<QByteArray>("worker");
    QTest::addColumn<bool>("nullVersion");
    QTest::addColumn<QByteArray>("version");
    const QByteArray ok = "host-a/charge";
    const QByteArray v = "2.3.1";
    QTest::addRow("NULL worker") << true << QByteArray() << false << v;
    QTest::addRow("NULL version") << false << ok << true << QByteArray();
    QTest::addRow("empty worker") << false << QByteArray("") << false << v;
    QTest::addRow("empty version") << false << ok << false << QByteArray("");
    QTest::addRow("10 MB version") << false << ok << false << QByteArray(10 * 1024 * 1024, 'x');
    QTest::addRow("10 MB worker") << false << QByteArray(10 * 1024 * 1024, 'w') << false << v;
    QTest::addRow("201 characters") << false << ok << false << QByteArray(201, '9');
    QTest::addRow("201 characters, 2 bytes each") << false << ok << false << QByteArray("\xc3\xa9").repeated(201);
    QTest::addRow("newline (git describe output)") << false << ok << false << QByteArray("2.3.1\n");
    QTest::addRow("escape sequence") << false << ok << false << QByteArray("2.3.1\x1b[2J");
    QTest::addRow("SOH") << false << QByteArray("host\x01") << false << v;
    QTest::addRow("DEL") << false << ok << false << QByteArray("2.3\x7f");
    QTest::addRow("C1 CSI U+009B") << false << ok << false
                                   << QByteArray("2.3\xc2\x9b"
                                                 "31m");
    QTest::addRow("right-to-left override U+202E") << false
                                                   << QByteArray("host-\xe2\x80\xae"
                                                                 "a")
                                                   << false << v;
    QTest::addRow("zero width space U+200B") << false << ok << false << QByteArray("2.3\xe2\x80\x8b");
    QTest::addRow("line separator U+2028") << false << ok << false
                                           << QByteArray("2.3\xe2\x80\xa8"
                                                         "1");
    QTest::addRow("tag character U+E0041") << false << ok << false << QByteArray("2.3\xf3\xa0\x81\x81");
    QTest::addRow("leading space") << false << ok << false << QByteArray(" 2.3.1");
    QTest::addRow("trailing space") << false << QByteArray("host-a ") << false << v;
    QTest::addRow("only spaces") << false << QByteArray("   ") << false << v;
    QTest::addRow("only an ideographic space") << false << ok << false << QByteArray("\xe3\x80\x80");
}

// NULLs, oversize and invisible or terminal-controlling text: ID003 from the function itself
// (called as the worker, with SQL), nothing written, the library's own refusal before any I/O.
void TestLatencyDeploys::hostileInputsAreRefusedAndWriteNothing()
{
    QFETCH(bool, nullWorker);
    QFETCH(QByteArray, worker);
    QFETCH(bool, nullVersion);
    QFETCH(QByteArray, version);
    auto w = login(workerRole);
    idem::reportVersion(*w, schema, "host-z/seed", "1.0.0");
    const QByteArray before = everything();
    const auto arg = [](bool isNull, const QByteArray& b) {
        return isNull ? std::optional<std::string>() : std::optional<std::string>(b.toStdString());
    };
    QCOMPARE(sqlstateOf(*w, "SELECT * FROM idem.idem_report_version($1, $2)", arg(nullWorker, worker),
                 arg(nullVersion, version)),
        std::string("ID003"));
    QCOMPARE(everything(), before);
    if (!nullWorker && !nullVersion) {
        QVERIFY_EXCEPTION_THROWN(
            idem::reportVersion(*w, schema, worker.toStdString(), version.toStdString()), std::invalid_argument);
        QCOMPARE(everything(), before);
    }
}

// What the library refuses it refuses without a round trip (a closed connection would throw
// something else); the edges it accepts, the server accepts too.
void TestLatencyDeploys::libraryRefusesBeforeAnyIo()
{
    auto w = login(workerRole);
    auto closed = login(workerRole);
    closed->disconnect();
    QVERIFY_EXCEPTION_THROWN(
        idem::reportVersion(*closed, schema, "host", std::string("2.3\0", 4)), std::invalid_argument);
    QVERIFY_EXCEPTION_THROWN(idem::reportVersion(*closed, schema, "host", "\xff\xfe"), std::invalid_argument);
    QVERIFY_EXCEPTION_THROWN(idem::reportVersion(*closed, schema, std::string(201, 'h'), "1"), std::invalid_argument);
    QVERIFY_EXCEPTION_THROWN(idem::reportVersion(*closed, schema, "host", "1\t2"), std::invalid_argument);

    const std::string longest(200, 'v');
    const std::string wide = std::string("\xe7\x89\x88\xe6\x9c\xac-") + std::string(197, '1'); // 200 characters
    QCOMPARE(
        idem::versionReportOutcomeName(idem::reportVersion(*w, schema, "h\xc3\xb4te/charge worker 1", longest).outcome),
        "new_worker");
    QCOMPARE(
        idem::versionReportOutcomeName(idem::reportVersion(*w, schema, "h\xc3\xb4te/charge worker 1", wide).outcome),
        "changed");
    QCOMPARE(scalar(*m_owner, "SELECT char_length(version) FROM idem.idem_worker_versions"), "200"_b);
    const std::string name = idem::hostWorkerName("idemctl-demo-0");
    QVERIFY(name.size() <= 200);
    QVERIFY(QByteArray::fromStdString(name).endsWith("/idemctl-demo-0"));
    idem::validateVersionText(name, "worker name");
}

// Only workers report (readers, operators and other roles get 42501); nobody but the owner writes
// the tables directly; readers read them and list deploys, workers read neither.
void TestLatencyDeploys::rolesAndPrivileges()
{
    for (const char* role : { readerRole, operatorRole, outsiderRole }) {
        auto c = login(role);
        QCOMPARE(sqlstateOf(*c, "SELECT * FROM idem.idem_report_version('host-a', '1.0')"), std::string("42501"));
    }
    auto worker = login(workerRole);
    QCOMPARE(sqlstateOf(*worker, "SELECT * FROM idem.idem_report_version('host-a', '1.0')"), std::string("ok"));
    QCOMPARE(
        sqlstateOf(*worker, "SELECT * FROM idem.idem_events(now() - interval '1 hour', now())"), std::string("42501"));
    for (const char* table : { "idem_worker_versions", "idem_deploys" }) {
        const std::string t = std::string("idem.") + table;
        QCOMPARE(sqlstateOf(*worker, "SELECT count(*) FROM " + t), std::string("42501"));
        QCOMPARE(sqlstateOf(*worker, "DELETE FROM " + t), std::string("42501"));
        auto reader = login(readerRole);
        QCOMPARE(sqlstateOf(*reader, "SELECT count(*) FROM " + t), std::string("ok"));
        for (const char* role : { readerRole, operatorRole }) {
            auto c = login(role);
            QCOMPARE(sqlstateOf(*c, "DELETE FROM " + t), std::string("42501"));
            QCOMPARE(sqlstateOf(*c, "TRUNCATE " + t), std::string("42501"));
        }
    }
    auto op = login(operatorRole);
    QCOMPARE(sqlstateOf(*op, "UPDATE idem.idem_worker_versions SET version = 'forged'"), std::string("42501"));
    QCOMPARE(sqlstateOf(*op,
                 "INSERT INTO idem.idem_deploys (at, worker, new_version, db_role)"
                 " VALUES (now(), 'w', 'forged', 'me')"),
        std::string("42501"));
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_worker_versions"), "1"_b);
}

// idemctl events, as a reader: the deploy in the text listing and in --json.
void TestLatencyDeploys::idemctlEventsShowsDeploys()
{
    auto worker = login(workerRole);
    idem::reportVersion(*worker, schema, "host-a/charge", "2.3.1");
    idem::reportVersion(*worker, schema, "host-a/charge", "2.4.0");
    const auto dsn = QString::fromStdString(idem::test::loginDsn(m_db->dsn(), readerRole, password));
    const auto text = idem::test::runProgram(idem::test::idemctlPath(),
        QStringList {
            QStringLiteral("events"), QStringLiteral("--minutes"), QStringLiteral("5"), QStringLiteral("--dsn"), dsn },
        60000);
    QVERIFY2(text.exitCode == 0, qPrintable(idem::test::describe(text)));
    QVERIFY2(text.out.contains(QLatin1String(" deploy ")), qPrintable(text.out));
    QVERIFY2(text.out.contains(QLatin1String("host-a/charge: 2.3.1 -> 2.4.0")), qPrintable(text.out));
    QVERIFY2(
        text.out.contains(QLatin1String("host-a/charge: 2.3.1 (the first version reported)")), qPrintable(text.out));

    const auto run = idem::test::runProgram(idem::test::idemctlPath(),
        QStringList { QStringLiteral("events"), QStringLiteral("--json"), QStringLiteral("--operation"),
            QStringLiteral("charge"), QStringLiteral("--dsn"), dsn },
        60000);
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto events = json(run).value(QLatin1String("events")).toArray();
    QCOMPARE(events.size(), 2);
    const auto first = events[0].toObject();
    QCOMPARE(first.value(QLatin1String("action")).toString(), QStringLiteral("deploy"));
    QVERIFY(first.value(QLatin1String("old_version")).isNull());
    QCOMPARE(first.value(QLatin1String("new_version")).toString(), QStringLiteral("2.3.1"));
    const auto second = events[1].toObject();
    QCOMPARE(second.value(QLatin1String("old_version")).toString(), QStringLiteral("2.3.1"));
    QCOMPARE(second.value(QLatin1String("new_version")).toString(), QStringLiteral("2.4.0"));
    QCOMPARE(second.value(QLatin1String("worker")).toString(), QStringLiteral("host-a/charge"));
    QCOMPARE(static_cast<qint64>(second.value(QLatin1String("deploy_id")).toDouble()),
        scalar(*m_owner, "SELECT max(id) FROM idem.idem_deploys").toLongLong());
    QVERIFY(!second.contains(QLatin1String("audit_id")));
}

// Issue 40 item 2: 1,500 deploys older than an operator's pause (a worker login reporting versions
// before the operator acted) pushed the pause out of `idemctl events`, which listed the oldest
// 1,000 and said nothing of the rest. Each kind is bounded on its own now, its newest first: the
// pause is listed, and the deploys left out are counted, in the text and in --json.
void TestLatencyDeploys::deploysNeverHideAnOperatorsPause()
{
    pqxx::nontransaction(*m_owner).exec_params(
        "INSERT INTO idem.idem_deploys (at, worker, old_version, new_version, db_role)"
        " SELECT now() - interval '10 minutes' + g * interval '1 millisecond', 'spam', NULL, 'v' || g, $1"
        "   FROM generate_series(1, 1500) g",
        std::string(workerRole));
    auto op = login(operatorRole);
    idem::PauseRequest pause;
    pause.tenant = "acme";
    pause.operation = "charge";
    pause.reason = "card network outage";
    pause.actor = "bob@ops";
    idem::setPause(*op, schema, pause);
    const auto cleanup = qScopeGuard([&] { idem::resumePause(*op, schema, "acme", "charge", "done", "bob@ops"); });

    const auto dsn = QString::fromStdString(idem::test::loginDsn(m_db->dsn(), readerRole, password));
    const auto text = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("events"), QStringLiteral("--minutes"), QStringLiteral("30"), QStringLiteral("--dsn"), dsn },
        60000);
    QVERIFY2(text.exitCode == 0, qPrintable(idem::test::describe(text)));
    QVERIFY2(text.out.contains(QRegularExpression(QStringLiteral("\n\\S+  pause +acme:charge  \\S+ \\(bob@ops\\): card network outage\n"))),
        qPrintable(text.out.right(2000)));
    QVERIFY2(text.out.endsWith(QStringLiteral("500 more events not listed (0 operator actions, 500 deploys, 0 failovers):"
                                              " each kind shows its newest 1000 (--limit); narrow the window or raise"
                                              " --limit\n")),
        qPrintable(text.out.right(500)));
    QCOMPARE(text.out.count(QLatin1String(" deploy ")), 1000);

    const auto run = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("events"), QStringLiteral("--json"), QStringLiteral("--minutes"), QStringLiteral("30"),
            QStringLiteral("--dsn"), dsn },
        60000);
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto j = json(run);
    QCOMPARE(j.value(QLatin1String("truncated")).toBool(), true);
    const auto omitted = j.value(QLatin1String("omitted")).toObject();
    QCOMPARE(omitted.value(QLatin1String("deploy")).toInt(), 500);
    QCOMPARE(omitted.value(QLatin1String("audit")).toInt(), 0);
    QCOMPARE(omitted.value(QLatin1String("failover")).toInt(), 0);
    int pauses = 0, deploys = 0;
    QString newestDeploy;
    for (const auto& v : j.value(QLatin1String("events")).toArray()) {
        const auto e = v.toObject();
        const auto action = e.value(QLatin1String("action")).toString();
        pauses += action == QLatin1String("pause");
        if (action == QLatin1String("deploy")) {
            ++deploys;
            newestDeploy = e.value(QLatin1String("new_version")).toString();
        }
    }
    QCOMPARE(pauses, 1);
    QCOMPARE(deploys, 1000);
    QCOMPARE(newestDeploy, QStringLiteral("v1500")); // the newest are kept
    // The database holds every deploy; the pause is audited.
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_deploys"), "1500"_b);
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.task_idempotency_audit WHERE action = 'pause'"), "1"_b);
}

// Issue 40 item 2: a worker login named workers and versions without limit (each a row, each new
// version a mark). Now at most 20 deploys an hour per login, the rest coalesced into its newest
// deploy's mark (which says so); at most 200 new worker names an hour, the rest not recorded; and
// rows past 90 days go with the counter upkeep.
void TestLatencyDeploys::deployReportsAreBoundedPerLogin()
{
    auto worker = login(workerRole);
    for (int i = 1; i <= 25; ++i) {
        const auto r = idem::reportVersion(*worker, schema, "host-a/charge", "v" + std::to_string(i));
        QCOMPARE(r.deployId > 0, i <= 20);
        QCOMPARE(idem::versionReportOutcomeName(r.outcome), i == 1 ? "new_worker" : "changed");
    }
    QCOMPARE(scalar(*m_owner, "SELECT count(*) || ' ' || (SELECT new_version FROM idem.idem_deploys ORDER BY id DESC LIMIT 1)"
                              " FROM idem.idem_deploys"), "20 v20"_b);
    QCOMPARE(scalar(*m_owner, "SELECT coalesced || ' ' || last_coalesced_version FROM idem.idem_deploys"
                              " ORDER BY id DESC LIMIT 1"),
        "5 v25"_b);
    QCOMPARE(scalar(*m_owner, "SELECT version FROM idem.idem_worker_versions"), "v25"_b);
    const auto dsn = QString::fromStdString(idem::test::loginDsn(m_db->dsn(), readerRole, password));
    const auto text = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("events"), QStringLiteral("--minutes"), QStringLiteral("5"), QStringLiteral("--dsn"), dsn },
        60000);
    QVERIFY2(text.exitCode == 0, qPrintable(idem::test::describe(text)));
    QVERIFY2(text.out.contains(QStringLiteral("host-a/charge: v19 -> v20 (and 5 more new versions from login %1 within"
                                              " the hour, not marked: the last v25)")
                                   .arg(QLatin1String(workerRole))),
        qPrintable(text.out));

    // 205 new names: the login's 200th is the last one recorded.
    int notRecorded = 0;
    for (int i = 0; i < 205; ++i)
        notRecorded += idem::reportVersion(*worker, schema, "pod-" + std::to_string(i), "v25").outcome
            == idem::VersionReport::Outcome::NotRecorded;
    QCOMPARE(notRecorded, 6);
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_worker_versions"), "200"_b);
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_worker_versions WHERE worker = 'pod-204'"), "0"_b);

    // Past 90 days they go, in the upkeep (the owner's; nobody else may call it).
    pqxx::nontransaction(*m_owner).exec("UPDATE idem.idem_deploys SET at = now() - interval '91 days' WHERE new_version = 'v1';"
                                        " UPDATE idem.idem_worker_versions SET since = now() - interval '91 days'"
                                        " WHERE worker = 'pod-0'");
    QCOMPARE(sqlstateOf(*worker, "SELECT * FROM idem.idem_deploys_expire(100)"), std::string("42501"));
    {
        pqxx::work w(*m_owner);
        QCOMPARE(w.exec1("SELECT deploys || '/' || workers FROM idem.idem_deploys_expire(100)")[0].as<std::string>(),
            std::string("1/1"));
        w.commit();
    }
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_deploys"), "19"_b);
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_worker_versions"), "199"_b);
}

// idemctl demo's workers report this build's version (idemctl --version) when they connect: one
// row per worker, one deploy; a second run with another version is one deploy more, with both.
void TestLatencyDeploys::demoWorkersReportTheBuildVersion()
{
    const auto version = idem::test::runProgram(idem::test::idemctlPath(), { QStringLiteral("--version") });
    QCOMPARE(version.exitCode, 0);
    const QString build = version.out.trimmed().section(QLatin1Char(' '), 1);
    QVERIFY2(!build.isEmpty(), qPrintable(version.out));
    const auto demo = [&](const QStringList& extra) {
        QStringList args { QStringLiteral("demo"), QStringLiteral("--workers"), QStringLiteral("2"),
            QStringLiteral("--duration"), QStringLiteral("1"), QStringLiteral("--rate"), QStringLiteral("20"),
            QStringLiteral("--quiet"), QStringLiteral("--dsn"), QString::fromStdString(m_db->dsn()) };
        const auto run = idem::test::runProgram(idem::test::idemctlPath(), args + extra, 120000);
        QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    };
    demo({});
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(scalar(*m_owner,
                 "SELECT string_agg(split_part(worker, '/', 2) || '=' || version, ',' ORDER BY worker)"
                 " FROM idem.idem_worker_versions"),
        QStringLiteral("idemctl-demo-0=%1,idemctl-demo-1=%1").arg(build).toUtf8());
    QCOMPARE(scalar(*m_owner, "SELECT count(*) || ' ' || new_version FROM idem.idem_deploys GROUP BY new_version"),
        QStringLiteral("1 %1").arg(build).toUtf8());
    demo({ QStringLiteral("--worker-version"), build + QStringLiteral("-next") });
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(scalar(*m_owner, "SELECT string_agg(DISTINCT version, ',') FROM idem.idem_worker_versions"),
        (build + QStringLiteral("-next")).toUtf8());
    QCOMPARE(
        scalar(*m_owner, "SELECT old_version || ' -> ' || new_version FROM idem.idem_deploys ORDER BY id DESC LIMIT 1"),
        (build + QStringLiteral(" -> ") + build + QStringLiteral("-next")).toUtf8());
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_deploys"), "2"_b);

    const auto bad = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("demo"), QStringLiteral("--worker-version"), QStringLiteral("1.0\n"), QStringLiteral("--dsn"),
            QString::fromStdString(m_db->dsn()) });
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.contains(QLatin1String("--worker-version")), qPrintable(bad.err));
}

QTEST_GUILESS_MAIN(TestLatencyDeploys)
#include "tst_latency_deploys.moc"
