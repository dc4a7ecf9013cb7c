// The Connection page after the server restarts (issue 24 item 9): it showed "Connected at" and
// "Read" from before two restarts, because it reads the idle admin connection, which noticed
// nothing while the pages' (monitor) connection reconnected. A cluster of the test's own is
// restarted twice under a console wired as the main window wires it; after each restart the
// page shows the server as read after that restart.

#include <QtTest>

#include <QLabel>
#include <QRegularExpression>

#include "models/consolesession.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "tests/support/pgservers.h"
#include "views/consolewidget.h"
#include "views/statuspanel.h"

using idem::console::ConsoleSession;
using idem::console::ConsoleWidget;
using namespace idem::test;

class TestConnectionPage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rereadAfterEveryRestart();
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

QTEST_MAIN(TestConnectionPage)
#include "tst_connectionpage.moc"
