// The Connection page after the server restarts (issue 24 item 9): it showed "Connected at" and
// "Read" from before two restarts, because it reads the idle admin connection, which noticed
// nothing while the pages' (monitor) connection reconnected. A cluster of the test's own is
// restarted twice under a console wired as the main window wires it; after each restart the
// page shows the server as read after that restart.

#include <QtTest>

#include <QLabel>
#include <QRegularExpression>

#include <QDir>
#include <QTableView>

#include "models/consolesession.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "tests/support/fakepatroni.h"
#include "tests/support/pgservers.h"
#include "views/clusterpanel.h"
#include "views/consolewidget.h"
#include "views/statuspanel.h"
#include "views/theme.h"

using idem::console::ConsoleSession;
using idem::console::ConsoleWidget;
using namespace idem::test;

class TestConnectionPage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rereadAfterEveryRestart();
    void lyingPatroniIsFlagged();
};

void TestConnectionPage::rereadAfterEveryRestart()
{
    auto cluster = LocalCluster::primary();
    QVERIFY2(cluster->problem().isEmpty(), qPrintable(cluster->problem()));
    ConsoleSession admin, monitor;
    ConsoleWidget console(&admin);
    console.statusPanel()->watch(&monitor);
    console.show();
    QVERIFY(connectSession(admin, cluster->dsn()));
    QVERIFY(connectSession(monitor, cluster->dsn()));
    auto* asOf = console.findChild<QLabel*>(QStringLiteral("asOfValue"));
    auto* age = console.findChild<QLabel*>(QStringLiteral("connectionAge"));
    QVERIFY(asOf && age);
    QTRY_VERIFY(asOf->text() != QStringLiteral("–"));

    // What the pages do all the time: read through the monitor connection.
    const auto poll = [&] {
        monitor.submit([](pqxx::connection& c, const idem::SchemaName&) {
            pqxx::nontransaction(c).exec("SELECT 1");
            return QVariant();
        }, &console, [](const QVariant&) {});
    };
    for (int restart = 1; restart <= 2; ++restart) {
        const QDateTime before = admin.serverInfo().asOf;
        const QString shownBefore = asOf->text();
        QTest::qWait(1100); // the page shows the server clock to the second: let it move on
        QVERIFY2(cluster->restart(), qPrintable(cluster->problem()));
        // The monitor finds its connection gone on its next read and reconnects by itself.
        poll();
        QTRY_VERIFY_WITH_TIMEOUT(monitor.state() == ConsoleSession::State::Failed, browserTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(monitor.state() == ConsoleSession::State::Connected, browserTimeoutMs);
        // And the Connection page reads the server again: a clock from after the restart.
        QTRY_VERIFY2_WITH_TIMEOUT(admin.serverInfo().asOf > before && asOf->text() != shownBefore,
            qPrintable(QStringLiteral("restart %1: still %2").arg(restart).arg(asOf->text())), browserTimeoutMs);
        QCOMPARE(admin.state(), ConsoleSession::State::Connected);
        // "Read" counts from this read, not from the first connection.
        const QRegularExpression fresh(QStringLiteral("^([0-9]|1[0-9]) s ago, "));
        QVERIFY2(fresh.match(age->text()).hasMatch(), qPrintable(age->text()));
    }
}

// Issue 40 item 3: a Patroni endpoint that says the console's server (a primary on timeline 1,
// with no standbys) is a synchronous standby on timeline 7 under another leader, with a member
// whose name carries U+202E. The page said "primary, timeline 1, no standbys" above a table saying
// the opposite and flagged nothing; the name was drawn raw. Now the contradiction is said in the
// alert tone and every string from Patroni is escaped; an endpoint telling the truth raises nothing.
void TestConnectionPage::lyingPatroniIsFlagged()
{
    auto cluster = LocalCluster::primary();
    QVERIFY2(cluster->problem().isEmpty(), qPrintable(cluster->problem()));
    const QByteArray self = "\"host\": \"127.0.0.1\", \"port\": " + QByteArray::number(cluster->port());
    const QByteArray lie
        = R"({"members": [{"name": "node1\u202e", "role": "leader", "state": "running", "host": "10.9.9.9", "port": 5432, "timeline": 7},)"
          R"( {"name": "node2", "role": "sync_standby", "state": "streaming", )"
        + self + R"(, "timeline": 7, "lag": 0}]})";
    FakePatroni patroni(FakePatroni::http(200, lie));
    ConsoleSession admin;
    ConsoleWidget console(&admin);
    console.resize(1100, 900);
    console.show();
    console.clusterPanel()->setInterval(std::chrono::milliseconds(300));
    admin.setPatroniEndpoint(patroni.url());
    QVERIFY(connectSession(admin, cluster->dsn()));
    auto* node = console.findChild<QLabel*>(QStringLiteral("nodeValue"));
    auto* disagreement = console.findChild<QLabel*>(QStringLiteral("clusterDisagreement"));
    QVERIFY(node && disagreement);
    // What the server says of itself.
    QTRY_VERIFY_WITH_TIMEOUT(node->text().contains(QStringLiteral("primary, timeline 1")), browserTimeoutMs);
    const QString expected = QStringLiteral(
        "Patroni and the server disagree (the Node line above is the server's own answer):\n"
        "Patroni says node2 is a synchronous standby; the server says it is a primary (not in recovery)\n"
        "Patroni's leader is node1\\u202e, not this server, which is a primary too: two primaries, or Patroni's view "
        "is not the cluster's\n"
        "Patroni says timeline 7; the server is on timeline 1");
    QTRY_COMPARE_WITH_TIMEOUT(console.clusterPanel()->disagreementText(), expected, browserTimeoutMs);
    QVERIFY(disagreement->isVisibleTo(&console));
    QVERIFY2(disagreement->styleSheet().contains(idem::console::theme::toneCss(idem::console::theme::Tone::Bad)),
        qPrintable(disagreement->styleSheet()));
    // Every string from Patroni escaped: the table's cell, the status line naming the leader.
    auto* table = console.clusterPanel()->table();
    QCOMPARE(table->model()->index(0, 0).data().toString(), QStringLiteral("node1\\u202e"));
    QVERIFY2(console.clusterPanel()->statusText().startsWith(QStringLiteral("2 member(s), leader node1\\u202e; read ")),
        qPrintable(console.clusterPanel()->statusText()));
    for (auto* label : console.findChildren<QLabel*>())
        QVERIFY2(!label->text().contains(QChar(0x202e)), qPrintable(label->objectName()));
    if (const QByteArray dir = qgetenv("IDEM_SCREENSHOT_DIR"); !dir.isEmpty()) {
        QTest::qWait(200);
        console.grab().save(QDir(QString::fromLocal8Bit(dir)).filePath(QStringLiteral("connection-lying-patroni.png")));
    }

    // The endpoint tells the truth (the server is the leader, alone): nothing flagged.
    patroni.setAnswer(FakePatroni::http(200,
        R"({"members": [{"name": "node2", "role": "leader", "state": "running", )" + self + R"(, "timeline": 1}]})"));
    QTRY_COMPARE_WITH_TIMEOUT(console.clusterPanel()->disagreementText(), QString(), browserTimeoutMs);
    QVERIFY(!disagreement->isVisibleTo(&console));
}

QTEST_MAIN(TestConnectionPage)
#include "tst_connectionpage.moc"
