// Issue #29: the Patroni cluster the Connection page shows, without a database: GET /cluster
// bodies in Patroni 3.0's real shape and malformed or hostile ones (each a clear line, never a
// crash), the endpoint a profile keeps (never a password), the watcher against a local HTTP server
// that answers, refuses, stalls, floods and lies, and the members' table under the model tester.

#include <QtTest>

#include <QAbstractItemModelTester>
#include <QSettings>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>

#include <functional>
#include <memory>

#include "models/patronimodel.h"
#include "models/patroniwatcher.h"
#include "models/profilestore.h"
#include "models/visibletext.h"
#include "tests/support/fakepatroni.h"

using namespace idem::console;
using idem::test::FakePatroni;

namespace {

// What Patroni 3.0.2 answers on GET /cluster for scripts/patroni-cluster's three nodes (captured
// from a real cluster, then node2 made leader and node3 synchronous, as after a switchover in
// synchronous mode, with a lag and a pending restart planted): sorted by name, "lag" on every
// member but the leader, host/port from each member's connect_address, "running" for every
// healthy member (3.0 says "streaming" for none).
const QByteArray realCluster
    = R"({"members": [{"name": "node1", "role": "replica", "state": "running", "api_url": "http://127.0.0.1:41005/patroni", "host": "127.0.0.1", "port": 41011, "timeline": 2, "lag": 0}, {"name": "node2", "role": "leader", "state": "running", "api_url": "http://127.0.0.1:41006/patroni", "host": "127.0.0.1", "port": 41012, "timeline": 2}, {"name": "node3", "role": "sync_standby", "state": "running", "api_url": "http://127.0.0.1:41007/patroni", "host": "127.0.0.1", "port": 41013, "timeline": 2, "lag": 1572864, "tags": {"nofailover": false}, "pending_restart": true}]})";

// A port nothing listens on: bound, then closed.
quint16 closedPort()
{
    QTcpServer s;
    s.listen(QHostAddress::LocalHost);
    const quint16 port = s.serverPort();
    s.close();
    return port;
}

} // namespace

class TestPatroniParse : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The table's numbers as an English-speaking operator reads them, whatever the machine's locale.
    void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }
    void realShape();
    void malformed_data();
    void malformed();
    void hostileText();
    void disagreements();
    void endpoints_data();
    void endpoints();
    void profileKeepsEndpointNeverPassword();
    void watcherReadsAndMarks();
    void watcherFailures_data();
    void watcherFailures();
    void watcherTriesTheNextMember();
    void badEndpointNoRequest();
};

void TestPatroniParse::realShape()
{
    const PatroniParse p = parsePatroniCluster(realCluster);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    QCOMPARE(p.cluster.members.size(), 3);
    const auto& m = p.cluster.members;
    QCOMPARE(m[0].name, QStringLiteral("node1"));
    QCOMPARE(m[0].role, QStringLiteral("replica"));
    QCOMPARE(m[0].state, QStringLiteral("running"));
    QCOMPARE(m[0].address(), QStringLiteral("127.0.0.1:41011"));
    QCOMPARE(m[0].lagBytes, 0);
    QCOMPARE(m[0].timeline, 2);
    QVERIFY(!m[0].isLeader());
    QCOMPARE(m[1].role, QStringLiteral("leader"));
    QVERIFY(m[1].isLeader());
    QCOMPARE(m[1].lagBytes, -1); // the leader has none
    QCOMPARE(m[2].role, QStringLiteral("sync_standby"));
    QCOMPARE(m[2].lagBytes, 1572864);
    QVERIFY(m[2].pendingRestart);
    QVERIFY(p.cluster.leader());
    QCOMPARE(p.cluster.leader()->name, QStringLiteral("node2"));

    // As the table shows it, under the model tester.
    PatroniModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setCluster(p.cluster, QStringLiteral("127.0.0.1:41012"), QStringLiteral("127.0.0.1:41013"));
    QCOMPARE(model.rowCount(), 3);
    const auto cell = [&](int row, int column) { return model.index(row, column).data().toString(); };
    QCOMPARE(cell(1, PatroniModel::Member), QStringLiteral("node2"));
    QCOMPARE(cell(1, PatroniModel::Role), QStringLiteral("leader (primary)"));
    QCOMPARE(cell(1, PatroniModel::Lag), QStringLiteral("–"));
    QCOMPARE(cell(1, PatroniModel::Console), QStringLiteral("this console (actions)"));
    QCOMPARE(cell(2, PatroniModel::Console), QStringLiteral("this console (pages)"));
    QCOMPARE(cell(0, PatroniModel::Console), QString());
    QCOMPARE(cell(0, PatroniModel::Lag), QStringLiteral("0 bytes"));
    QCOMPARE(cell(2, PatroniModel::Lag), QStringLiteral("1.5 MB (1,572,864 bytes)"));
    QCOMPARE(cell(2, PatroniModel::Role), QStringLiteral("synchronous standby"));
    QCOMPARE(cell(2, PatroniModel::Member), QStringLiteral("node3 (restart pending)"));
    QCOMPARE(cell(0, PatroniModel::Role), QStringLiteral("replica (asynchronous)"));
    QCOMPARE(cell(0, PatroniModel::Timeline), QStringLiteral("2"));
    QCOMPARE(cell(0, PatroniModel::Host), QStringLiteral("127.0.0.1:41011"));
    QVERIFY(model.index(1, 0).data(PatroniModel::LeaderRole).toBool());
    QVERIFY(model.index(1, 0).data(Qt::FontRole).value<QFont>().bold());
    for (int c = 0; c < PatroniModel::COLUMN_COUNT; ++c)
        QVERIFY(!model.headerData(c, Qt::Horizontal).toString().isEmpty());
    // The same members again (a later read): rows kept, only their cells change.
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    PatroniCluster later = p.cluster;
    later.members[0].lagBytes = 4096;
    model.setCluster(later, QStringLiteral("127.0.0.1:41012"), QStringLiteral("127.0.0.1:41012"));
    QCOMPARE(reset.count(), 0);
    QCOMPARE(cell(0, PatroniModel::Lag), QStringLiteral("4,096 bytes"));
    QCOMPARE(cell(1, PatroniModel::Console), QStringLiteral("this console (actions and pages)"));
    // "unknown", as Patroni says for a member that reported no WAL position.
    const PatroniParse unknown = parsePatroniCluster(
        R"({"members": [{"name": "n", "role": "replica", "state": "starting", "lag": "unknown"}]})");
    QVERIFY2(unknown.error.isEmpty(), qPrintable(unknown.error));
    QVERIFY(unknown.cluster.members[0].lagUnknown);
    QCOMPARE(PatroniModel::lagText(unknown.cluster.members[0]), QStringLiteral("unknown (no WAL position reported)"));
    QVERIFY(!unknown.cluster.leader());
    // Maintenance mode and a scheduled switchover, as Patroni adds them.
    const PatroniParse paused = parsePatroniCluster(
        R"({"members": [], "pause": true, "scheduled_switchover": {"at": "2026-12-06T14:00:00+00:00", "from": "node1"}})");
    QVERIFY(paused.error.isEmpty());
    QVERIFY(paused.cluster.paused);
    QCOMPARE(paused.cluster.scheduledSwitchover, QStringLiteral("2026-12-06T14:00:00+00:00"));
}

void TestPatroniParse::malformed_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("error");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("the answer is empty, not JSON");
    QTest::newRow("html") << QByteArray("<html><body>502 Bad Gateway</body></html>")
                          << QStringLiteral("the answer is not JSON");
    QTest::newRow("truncated") << realCluster.left(120) << QStringLiteral("the answer is not JSON");
    QTest::newRow("array") << QByteArray("[1, 2]") << QStringLiteral("not an object with \"members\"");
    QTest::newRow("no members") << QByteArray(R"({"state": "running", "role": "master"})")
                                << QStringLiteral("no \"members\" list: not Patroni's GET /cluster");
    QTest::newRow("members object") << QByteArray(R"({"members": {"name": "x"}})")
                                    << QStringLiteral("no \"members\" list");
    QTest::newRow("member number") << QByteArray(R"({"members": [1]})") << QStringLiteral("member 1: not an object");
    QTest::newRow("no name") << QByteArray(R"({"members": [{"role": "leader"}]})")
                             << QStringLiteral("member 1: no name");
    QTest::newRow("blank name") << QByteArray(R"({"members": [{"name": "  "}]})")
                                << QStringLiteral("member 1: no name");
    QTest::newRow("name number") << QByteArray(R"({"members": [{"name": 7}]})") << QStringLiteral("member 1: no name");
    QTest::newRow("role object") << QByteArray(R"({"members": [{"name": "a", "role": {"x": 1}}]})")
                                 << QStringLiteral("member 1 (a): \"role\" is not text");
    QTest::newRow("port text") << QByteArray(R"({"members": [{"name": "a", "port": "5432"}]})")
                               << QStringLiteral("member 1 (a): \"port\" is not a port number");
    QTest::newRow("port range") << QByteArray(R"({"members": [{"name": "a", "port": 70000}]})")
                                << QStringLiteral("\"port\" is not a port number");
    QTest::newRow("lag negative") << QByteArray(R"({"members": [{"name": "a"}, {"name": "b", "lag": -1}]})")
                                  << QStringLiteral("member 2 (b): \"lag\" is neither a byte count nor \"unknown\"");
    QTest::newRow("lag fraction") << QByteArray(R"({"members": [{"name": "b", "lag": 1.5}]})")
                                  << QStringLiteral("\"lag\" is neither");
    QTest::newRow("lag huge") << QByteArray(R"({"members": [{"name": "b", "lag": 1e300}]})")
                              << QStringLiteral("\"lag\" is neither");
    QTest::newRow("lag text") << QByteArray(R"({"members": [{"name": "b", "lag": "10 MB"}]})")
                              << QStringLiteral("\"lag\" is neither");
    QTest::newRow("timeline zero") << QByteArray(R"({"members": [{"name": "b", "timeline": 0}]})")
                                   << QStringLiteral("\"timeline\" is not a timeline number");
    QByteArray many = "{\"members\": [";
    for (int i = 0; i < 65; ++i)
        many += (i ? ", " : "") + QByteArray("{\"name\": \"m") + QByteArray::number(i) + "\"}";
    many += "]}";
    QTest::newRow("65 members") << many << QStringLiteral("lists 65 members, more than 64");
    QTest::newRow("deep nesting") << QByteArray(100000, '[') << QStringLiteral("the answer is not JSON");
    QByteArray big = "{\"members\": [], \"pad\": \"" + QByteArray(10 * 1024 * 1024, 'x') + "\"}";
    QTest::newRow("10 MB") << big << QStringLiteral("larger than 1024 kB");
    QTest::newRow("NUL bytes") << QByteArray("{\"members\": [") + QByteArray(3, '\0') + QByteArray("]}")
                               << QStringLiteral("not JSON");
}

void TestPatroniParse::malformed()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, error);
    const PatroniParse p = parsePatroniCluster(body);
    QVERIFY2(p.error.contains(error), qPrintable(p.error));
    QVERIFY(p.cluster.members.isEmpty());
}

void TestPatroniParse::hostileText()
{
    // Text from the network is shown as it came (no markup, no %1 expansion), cut to 200 characters.
    const QByteArray body = R"({"members": [{"name": "%1 <b>x</b>", "role": "leader", "state": ")"
        + QByteArray(5000, 's') + R"(", "host": "\u202eevil"}]})";
    const PatroniParse p = parsePatroniCluster(body);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    QCOMPARE(p.cluster.members[0].name, QStringLiteral("%1 <b>x</b>"));
    QCOMPARE(p.cluster.members[0].state.size(), 201);
    QVERIFY(p.cluster.members[0].state.endsWith(QStringLiteral("…")));
    PatroniModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setCluster(p.cluster, {}, {});
    QCOMPARE(model.index(0, PatroniModel::Member).data().toString(), QStringLiteral("%1 <b>x</b>"));
    model.clear();
    QCOMPARE(model.rowCount(), 0);

    // Issue 40: every string from Patroni is escaped as one from the database is: a U+202E in a
    // name, a role, a state or a host shows as \u202e, in the table and in the console's own
    // error sentences (where it would otherwise reverse the rest of the line).
    const PatroniParse bidi = parsePatroniCluster(
        QByteArray(R"({"members": [{"name": "node\u202e1", "role": "lea\u202eder", "state": "run\u0007ning",)")
        + R"( "host": "\u202e127.0.0.1", "port": 5432}]})");
    QVERIFY2(bidi.error.isEmpty(), qPrintable(bidi.error));
    model.setCluster(bidi.cluster, {}, {});
    QCOMPARE(model.index(0, PatroniModel::Member).data().toString(), QStringLiteral("node\\u202e1"));
    QCOMPARE(model.index(0, PatroniModel::Role).data().toString(), QStringLiteral("lea\\u202eder"));
    QCOMPARE(model.index(0, PatroniModel::State).data().toString(), QStringLiteral("run\\x07ning"));
    QCOMPARE(model.index(0, PatroniModel::Host).data().toString(), QStringLiteral("\\u202e127.0.0.1:5432"));
    for (int c = 0; c < PatroniModel::COLUMN_COUNT; ++c)
        QVERIFY(!hasInvisible(model.index(0, c).data().toString()));
    const PatroniParse badPort = parsePatroniCluster(R"({"members": [{"name": "\u202enode2", "port": "x"}]})");
    QCOMPARE(badPort.error, QStringLiteral("member 1 (\\u202enode2): \"port\" is not a port number"));
}

void TestPatroniParse::disagreements()
{
    // Issue 40 item 3: the endpoint says the console's server (127.0.0.1:5433) is a synchronous
    // standby on timeline 7 under node1; the server says it is a primary on timeline 1 with no standbys.
    const PatroniParse lie = parsePatroniCluster(
        R"({"members": [{"name": "node1", "role": "leader", "state": "running", "host": "10.0.0.1", "port": 5432, "timeline": 7},)"
        R"( {"name": "node2", "role": "sync_standby", "state": "streaming", "host": "127.0.0.1", "port": 5433, "timeline": 7, "lag": 0}]})");
    QVERIFY2(lie.error.isEmpty(), qPrintable(lie.error));
    PatroniServerFacts primary;
    primary.address = QStringLiteral("127.0.0.1:5433");
    primary.timeline = 1;
    primary.standbysKnown = true;
    QCOMPARE(patroniDisagreements(lie.cluster, primary),
        (QStringList {
            QStringLiteral("Patroni says node2 is a synchronous standby; the server says it is a primary (not "
                           "in recovery)"),
            QStringLiteral("Patroni's leader is node1, not this server, which is a primary too: two primaries, or "
                           "Patroni's view is not the cluster's"),
            QStringLiteral("Patroni says timeline 7; the server is on timeline 1") }));
    // The truth: the server is that standby, in recovery: nothing to say.
    PatroniServerFacts standby = primary;
    standby.inRecovery = true;
    standby.timeline = 7;
    standby.standbysKnown = false;
    QCOMPARE(patroniDisagreements(lie.cluster, standby), QStringList());
    // A leader whose streaming replica the server does not have, and one it streams to asynchronously.
    const PatroniParse three = parsePatroniCluster(
        R"({"members": [{"name": "a", "role": "leader", "state": "running", "host": "127.0.0.1", "port": 5433, "timeline": 2},)"
        R"( {"name": "b", "role": "replica", "state": "streaming", "host": "h", "port": 1, "timeline": 2},)"
        R"( {"name": "c", "role": "sync_standby", "state": "streaming", "host": "h", "port": 2, "timeline": 2}]})");
    QVERIFY2(three.error.isEmpty(), qPrintable(three.error));
    PatroniServerFacts leader;
    leader.address = QStringLiteral("127.0.0.1:5433");
    leader.timeline = 2;
    leader.standbysKnown = true;
    leader.standbys.insert(QStringLiteral("c"), QStringLiteral("async"));
    QCOMPARE(patroniDisagreements(three.cluster, leader),
        (QStringList { QStringLiteral("Patroni lists b as a replica (asynchronous) streaming from this server; the "
                                      "server has no such standby"),
            QStringLiteral("Patroni says c is a synchronous standby; the server streams to it as async") }));
    leader.standbys.insert(QStringLiteral("b"), QStringLiteral("async"));
    leader.standbys.insert(QStringLiteral("c"), QStringLiteral("sync"));
    QCOMPARE(patroniDisagreements(three.cluster, leader), QStringList());
    // No member at the server's address: said by the page's other line, not here.
    leader.address = QStringLiteral("127.0.0.1:9999");
    QCOMPARE(patroniDisagreements(three.cluster, leader), QStringList());
}

void TestPatroniParse::endpoints_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("urls");
    QTest::addColumn<QString>("error");
    QTest::newRow("base") << QStringLiteral("http://10.0.0.1:8008")
                          << QStringList { QStringLiteral("http://10.0.0.1:8008/cluster") } << QString();
    QTest::newRow("slash") << QStringLiteral(" http://h:8008/ ")
                           << QStringList { QStringLiteral("http://h:8008/cluster") } << QString();
    QTest::newRow("cluster") << QStringLiteral("https://h:8008/cluster")
                             << QStringList { QStringLiteral("https://h:8008/cluster") } << QString();
    QTest::newRow("two") << QStringLiteral("http://a:8008, http://b:8008")
                         << QStringList { QStringLiteral("http://a:8008/cluster"),
                                QStringLiteral("http://b:8008/cluster") }
                         << QString();
    QTest::newRow("user only") << QStringLiteral("http://monitor@h:8008")
                               << QStringList { QStringLiteral("http://monitor@h:8008/cluster") } << QString();
    QTest::newRow("password") << QStringLiteral("http://u:secret@h:8008") << QStringList()
                              << QStringLiteral("must not carry a password");
    QTest::newRow("secret, no host") << QStringLiteral("http://u:secret@") << QStringList()
                                     << QStringLiteral("http://…@");
    QTest::newRow("ftp") << QStringLiteral("ftp://h/") << QStringList() << QStringLiteral("http or https, not ftp");
    QTest::newRow("no scheme") << QStringLiteral("patroni-host") << QStringList() << QStringLiteral("is not a URL");
    QTest::newRow("no host") << QStringLiteral("http:///cluster") << QStringList() << QStringLiteral("names no host");
    QTest::newRow("empty") << QString() << QStringList() << QString();
}

void TestPatroniParse::endpoints()
{
    QFETCH(QString, text);
    QFETCH(QStringList, urls);
    QFETCH(QString, error);
    const PatroniEndpoints e = parsePatroniEndpoints(text);
    if (error.isEmpty())
        QVERIFY2(e.error.isEmpty(), qPrintable(e.error));
    else
        QVERIFY2(e.error.contains(error), qPrintable(e.error));
    QStringList got;
    for (const QUrl& u : e.urls)
        got << u.toString();
    QCOMPARE(got, error.isEmpty() ? urls : QStringList());
    // The secret never reaches the error text either.
    QVERIFY(!e.error.contains(QStringLiteral("secret")));
}

void TestPatroniParse::profileKeepsEndpointNeverPassword()
{
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("profiles.conf"));
    {
        ProfileStore store(std::make_unique<QSettings>(file, QSettings::IniFormat));
        ConnectionSettings s;
        s.conninfo = QStringLiteral("host=db1 dbname=app");
        store.save({ QStringLiteral("prod"), s, QStringLiteral("http://db1:8008,http://db2:8008") });
        store.save({ QStringLiteral("plain"), s });
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
            store.save({ QStringLiteral("leaky"), s, QStringLiteral("http://admin:hunter2@db1:8008") }));
        QCOMPARE(store.profile(QStringLiteral("prod"))->patroni, QStringLiteral("http://db1:8008,http://db2:8008"));
        QCOMPARE(store.profile(QStringLiteral("plain"))->patroni, QString());
        QVERIFY(!store.profile(QStringLiteral("leaky")));
    }
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray saved = f.readAll();
    QVERIFY2(saved.contains("patroni=") && saved.contains("http://db1:8008"), saved.constData());
    QVERIFY(!saved.contains("hunter2"));
}

void TestPatroniParse::watcherReadsAndMarks()
{
    FakePatroni patroni(FakePatroni::http(200, realCluster));
    PatroniWatcher watcher;
    watcher.setInterval(std::chrono::milliseconds(500));
    QSignalSpy changed(&watcher, &PatroniWatcher::changed);
    watcher.setEndpoint(patroni.url());
    QTRY_VERIFY(watcher.hasCluster());
    QVERIFY2(watcher.error().isEmpty(), qPrintable(watcher.error()));
    QCOMPARE(watcher.cluster().members.size(), 3);
    QCOMPARE(watcher.answeredBy().toString(), patroni.url() + QStringLiteral("/cluster"));
    QVERIFY2(patroni.request().startsWith("GET /cluster HTTP/1.1"), patroni.request().constData());
    // Polled again at its pace, one request at a time.
    QTRY_VERIFY(patroni.requests >= 3);
    QTRY_VERIFY(watcher.reads() >= 3); // the third answer lands a moment after its request
    watcher.setEndpoint(QString());
    QVERIFY(!watcher.configured());
    QVERIFY(!watcher.hasCluster());
    const int after = patroni.requests;
    QTest::qWait(1200);
    QCOMPARE(patroni.requests, after);
}

void TestPatroniParse::watcherFailures_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("error");
    QTest::newRow("refused") << 0 << QStringLiteral("refused");
    QTest::newRow("silent") << 1 << QStringLiteral("no answer within 1 s");
    QTest::newRow("10 MB") << 2 << QStringLiteral("larger than 1024 kB");
    QTest::newRow("not JSON") << 3 << QStringLiteral("the answer is not JSON");
    QTest::newRow("503") << 4 << QStringLiteral("answered HTTP 503 Service Unavailable");
    QTest::newRow("redirect") << 5 << QStringLiteral("answered HTTP 302");
    QTest::newRow("trickle") << 6 << QStringLiteral("no answer within 1 s");
}

void TestPatroniParse::watcherFailures()
{
    QFETCH(int, kind);
    QFETCH(QString, error);
    std::unique_ptr<FakePatroni> server;
    QTimer trickle;
    switch (kind) {
    case 1:
        server = std::make_unique<FakePatroni>([](QTcpSocket*) {});
        break;
    case 2:
        server = std::make_unique<FakePatroni>(FakePatroni::http(200, "[" + QByteArray(10 * 1024 * 1024, ' ') + "]"));
        break;
    case 3:
        server = std::make_unique<FakePatroni>(FakePatroni::http(200, "<html>hello</html>"));
        break;
    case 4:
        server = std::make_unique<FakePatroni>(FakePatroni::http(503, "{}", "Service Unavailable"));
        break;
    case 5:
        server = std::make_unique<FakePatroni>([](QTcpSocket* s) {
            s->write("HTTP/1.1 302 Found\r\nLocation: http://example.invalid/\r\nContent-Length: 0\r\n\r\n");
        });
        break;
    case 6: // a byte every 200 ms: never idle, never done
        server = std::make_unique<FakePatroni>([&trickle](QTcpSocket* s) {
            s->write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n");
            QObject::connect(&trickle, &QTimer::timeout, s, [s] { s->write(" "); });
            trickle.start(200);
        });
        break;
    default:
        break;
    }
    const QString url = server ? server->url() : QStringLiteral("http://127.0.0.1:%1").arg(closedPort());
    PatroniWatcher watcher;
    watcher.setInterval(std::chrono::milliseconds(500));
    watcher.setTimeout(std::chrono::milliseconds(1000));
    watcher.setEndpoint(url);
    QTRY_VERIFY_WITH_TIMEOUT(!watcher.error().isEmpty(), 10000);
    QVERIFY2(watcher.error().contains(error), qPrintable(watcher.error()));
    QVERIFY2(watcher.error().startsWith(url + QStringLiteral("/cluster: ")), qPrintable(watcher.error()));
    QVERIFY(!watcher.hasCluster());
    // And it keeps trying, at its pace.
    const int reads = watcher.reads();
    QTRY_VERIFY_WITH_TIMEOUT(watcher.reads() > reads, 10000);
}

void TestPatroniParse::watcherTriesTheNextMember()
{
    FakePatroni good(FakePatroni::http(200, realCluster));
    const QString dead = QStringLiteral("http://127.0.0.1:%1").arg(closedPort());
    PatroniWatcher watcher;
    watcher.setInterval(std::chrono::milliseconds(500));
    watcher.setEndpoint(dead + QStringLiteral(",") + good.url());
    QTRY_VERIFY(watcher.hasCluster());
    QVERIFY2(watcher.error().isEmpty(), qPrintable(watcher.error()));
    QCOMPARE(watcher.answeredBy().toString(), good.url() + QStringLiteral("/cluster"));
    // The one that answered is asked first from then on.
    const int reads = watcher.reads();
    QTRY_VERIFY(watcher.reads() >= reads + 2);
    QCOMPARE(watcher.answeredBy().toString(), good.url() + QStringLiteral("/cluster"));
    // Both down: unreachable, naming each, and the last members kept as the last known picture.
    PatroniWatcher both;
    both.setInterval(std::chrono::milliseconds(500));
    both.setEndpoint(dead + QStringLiteral(",") + dead);
    QTRY_VERIFY(!both.error().isEmpty());
    QCOMPARE(both.error().count(QStringLiteral("/cluster: ")), 2);
}

void TestPatroniParse::badEndpointNoRequest()
{
    PatroniWatcher watcher;
    QSignalSpy changed(&watcher, &PatroniWatcher::changed);
    watcher.setEndpoint(QStringLiteral("http://u:pw@127.0.0.1:8008"));
    QCOMPARE(changed.count(), 1);
    QVERIFY(watcher.error().contains(QStringLiteral("must not carry a password")));
    QVERIFY(!watcher.hasCluster());
    watcher.setEndpoint(QStringLiteral("not a url at all"));
    QVERIFY(!watcher.error().isEmpty());
}

QTEST_MAIN(TestPatroniParse)
#include "tst_patroniparse.moc"
