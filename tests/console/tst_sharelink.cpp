#include <QtTest>

#include <QAction>
#include <QClipboard>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>

#include <pqxx/pqxx>

#include "app/mainwindow.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/profilestore.h"
#include "models/taskbrowsermodel.h"
#include "schema/migrate.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "views/consolewidget.h"
#include "views/dashboardwidget.h"
#include "views/taskbrowserwidget.h"

using namespace idem::console;
using idem::test::browserTimeoutMs;

// Share a view (issue 41 item 9): File > Copy link in one window, the link opened in another
// console (its own profiles, the same profile name): the same connection, page, Tasks filter
// and dashboard window; a hostile link or an unknown profile says why and changes nothing.
class TestShareLink : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void copyInOneWindowOpenInAnother();
    void hostileLinkChangesNothing();

private:
    struct Console {
        QTemporaryDir dir;
        std::unique_ptr<ProfileStore> profiles;
        std::unique_ptr<ConsoleSession> session;
        std::unique_ptr<MainWindow> window;
        TaskBrowserWidget* tasks() const { return window->console()->findChild<TaskBrowserWidget*>(); }
    };
    void makeConsole(Console& c);
    static QStringList keysShown(TaskBrowserWidget* page);
    static QMessageBox* linkMessage(MainWindow* w);

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
};

void TestShareLink::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("sharelink");
    auto conn = m_db->connect();
    idem::migrate(*conn, { idem::SchemaName(), false });
    pqxx::work w(*conn);
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, error_class, error_message,
                                           created_at, updated_at)
        VALUES ('ta:charge:1', 'v1:' || repeat('a', 64), 'failed', 3, 'retryable', 'gateway 503', now(), now()),
               ('ta:charge:2', 'v1:' || repeat('a', 64), 'failed', 1, 'permanent', 'card declined', now(), now()),
               ('ta:charge:3', 'v1:' || repeat('a', 64), 'failed', 2, 'retryable', 'gateway 503', now(), now()),
               ('ta:refund:4', 'v1:' || repeat('a', 64), 'failed', 2, 'retryable', 'gateway 503', now(), now())
    )");
    w.commit();
}

void TestShareLink::cleanupTestCase() { m_db.reset(); }

void TestShareLink::makeConsole(Console& c)
{
    // Each console its own settings file, each with a profile "incident db" for this database.
    c.profiles = std::make_unique<ProfileStore>(
        std::make_unique<QSettings>(c.dir.filePath(QStringLiteral("console.conf")), QSettings::IniFormat));
    Profile p;
    p.name = QStringLiteral("incident db");
    p.settings = idem::test::settingsFor(m_db->dsn());
    c.profiles->save(p);
    c.session = std::make_unique<ConsoleSession>();
    c.window = std::make_unique<MainWindow>(c.session.get(), c.profiles.get());
    c.window->resize(1280, 900);
    c.window->show();
}

QStringList TestShareLink::keysShown(TaskBrowserWidget* page)
{
    QStringList keys;
    for (int r = 0; r < page->model()->rowCount(); ++r)
        keys << page->model()->data(page->model()->index(r, 0), TaskBrowserModel::KeyRole).toString();
    keys.sort();
    return keys;
}

QMessageBox* TestShareLink::linkMessage(MainWindow* w)
{
    for (auto* box : w->findChildren<QMessageBox*>(QStringLiteral("linkMessage")))
        if (box->isVisible())
            return box;
    return nullptr;
}

void TestShareLink::copyInOneWindowOpenInAnother()
{
    Console a;
    makeConsole(a);
    // A's user connects with the profile (as the dialog does), looks at 60 minutes and filters
    // the Tasks page.
    a.profiles->setLastUsed(QStringLiteral("incident db"));
    a.session->connectTo(a.profiles->profile(QStringLiteral("incident db"))->settings);
    QTRY_VERIFY_WITH_TIMEOUT(a.window->monitorSession()->state() == ConsoleSession::State::Connected, browserTimeoutMs);
    a.window->dashboard()->model()->setWindowMinutes(60);
    idem::TaskFilter filter;
    filter.statuses = { "failed" };
    filter.operation = "charge";
    filter.errorContains = "gateway";
    filter.minAttempts = 2;
    filter.updatedWithinMinutes = 60;
    a.tasks()->applyFilter(filter, QStringLiteral("the gateway's failures"));
    QVERIFY(a.window->showPage(QStringLiteral("tasks")));
    QTRY_COMPARE_WITH_TIMEOUT(keysShown(a.tasks()),
        QStringList({ QStringLiteral("ta:charge:1"), QStringLiteral("ta:charge:3") }), browserTimeoutMs);

    auto* copy = a.window->findChild<QAction*>(QStringLiteral("copyLinkAction"));
    QVERIFY(copy);
    QCOMPARE(copy->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    QGuiApplication::clipboard()->clear();
    copy->trigger();
    const QString link = QGuiApplication::clipboard()->text();
    QVERIFY2(link.startsWith(QStringLiteral("idem://view?profile=incident%20db&page=tasks")), qPrintable(link));
    // Never the connection: no host, port, password file or user from the DSN.
    const auto dsn = QString::fromStdString(m_db->dsn());
    for (const auto& part : dsn.split(QLatin1Char(' '), Qt::SkipEmptyParts))
        QVERIFY2(!link.contains(QString::fromUtf8(QUrl::toPercentEncoding(part.section(QLatin1Char('='), 1)))),
            qPrintable(link));

    // A colleague's console, not connected, opens it.
    Console b;
    makeConsole(b);
    QVERIFY(b.window->openLink(link));
    QTRY_VERIFY_WITH_TIMEOUT(b.window->monitorSession()->state() == ConsoleSession::State::Connected, browserTimeoutMs);
    QCOMPARE(b.window->connectionProfile(), QStringLiteral("incident db"));
    QCOMPARE(b.window->console()->pages()->currentWidget(), b.tasks());
    QTRY_COMPARE_WITH_TIMEOUT(keysShown(b.tasks()), keysShown(a.tasks()), browserTimeoutMs);
    QCOMPARE(b.tasks()->filter(), a.tasks()->filter());
    QCOMPARE(b.window->dashboard()->model()->settings().windowMinutes, 60);
    // The same view copies to the same link.
    QCOMPARE(buildViewLink(b.window->currentView()), link);
}

void TestShareLink::hostileLinkChangesNothing()
{
    Console b;
    makeConsole(b);
    b.profiles->setLastUsed(QStringLiteral("incident db"));
    b.session->connectTo(b.profiles->profile(QStringLiteral("incident db"))->settings);
    QTRY_VERIFY_WITH_TIMEOUT(b.window->monitorSession()->state() == ConsoleSession::State::Connected, browserTimeoutMs);
    QVERIFY(b.window->showPage(QStringLiteral("audit")));
    const ViewLink before = b.window->currentView();
    const auto settingsBefore = b.session->settings();

    // A link carrying a connection string: refused, said, nothing changed.
    QVERIFY(!b.window->openLink(
        QStringLiteral("idem://view?profile=incident%20db&page=tasks&dsn=host%3Devil.example%20password%3Dx")));
    QMessageBox* box = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT((box = linkMessage(b.window.get())) != nullptr, browserTimeoutMs);
    QVERIFY2(box->text().contains(QStringLiteral("never does"))
            && box->text().contains(QStringLiteral("Nothing was changed")),
        qPrintable(box->text()));
    box->close();
    QCOMPARE(b.window->currentView(), before);
    QCOMPARE(b.session->settings().conninfo, settingsBefore.conninfo);

    // A profile this console lacks: said, with the way to the profiles.
    QVERIFY(!b.window->openLink(QStringLiteral("idem://view?profile=prod%20eu&page=dashboard")));
    QTRY_VERIFY_WITH_TIMEOUT((box = linkMessage(b.window.get())) != nullptr, browserTimeoutMs);
    QVERIFY2(box->text().contains(QStringLiteral("no saved profile named “prod eu”")), qPrintable(box->text()));
    auto* profilesButton = box->findChild<QPushButton*>(QStringLiteral("linkOpenProfiles"));
    QVERIFY(profilesButton);
    QTest::mouseClick(profilesButton, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(b.window->frontWindow() != b.window.get(), browserTimeoutMs);
    QCOMPARE(b.window->currentView(), before);
    QCOMPARE(b.session->settings().conninfo, settingsBefore.conninfo);
}

QTEST_MAIN(TestShareLink)
#include "tst_sharelink.moc"
