// Issue #29, many databases: the Fleet page watches ten scratch databases at once, one row each,
// with planted states (expired leases, a pause, no schema, a wrong password) said in words on red,
// amber and green cells; a double click opens that database in a console window of its own whose
// title and every dialog's title carry the profile's environment ("[prod]") and its colour; the
// environment is kept in the profile (never a password); and each database is read exactly as one
// console's dashboard reads it: one connection, the dashboard's own tick and the pauses' read, no
// other statement.

#include <QtTest>

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLineEdit>
#include <QMessageBox>
#include <QPainter>
#include <QSettings>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>

#include <memory>
#include <string>
#include <vector>

#include "app/fleetwindow.h"
#include "app/mainwindow.h"
#include "core/connection.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/environment.h"
#include "models/fleetmodel.h"
#include "models/pausewatch.h"
#include "models/profilestore.h"
#include "operations/pauses.h"
#include "tests/console/consolefixture.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "tests/support/pgservers.h"
#include "views/connectiondialog.h"
#include "views/dashboardwidget.h"
#include "views/environmentmark.h"
#include "views/fleetwidget.h"

using namespace idem::console;
using namespace idem::test;

namespace {
constexpr const char* readerRole = "idem_t_fleet_reader";
constexpr const char* password = "pw-fleet";
constexpr int databases = 10;

// Where the pictures a person looks at go (IDEM_SCREENSHOT_DIR), if anywhere.
void savePicture(const QImage& image, const QString& name)
{
    const QString dir = qEnvironmentVariable("IDEM_SCREENSHOT_DIR");
    if (dir.isEmpty())
        return;
    QDir().mkpath(dir);
    QVERIFY(image.save(QDir(dir).filePath(name)));
}

// A window's picture with its title above it (an offscreen grab has no title bar).
QImage withTitle(QWidget* w)
{
    const QImage body = w->grab().toImage();
    QImage out(body.width(), body.height() + 30, QImage::Format_ARGB32);
    out.fill(QColor(QStringLiteral("#dddddd")));
    QPainter p(&out);
    p.setPen(Qt::black);
    p.drawText(QRect(8, 0, body.width() - 16, 30), Qt::AlignVCenter, w->windowTitle());
    p.drawImage(0, 30, body);
    return out;
}
} // namespace

class TestFleet : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void environmentLivesInTheProfile();
    void tenDatabasesOnTheFleetPage();
    void doubleClickOpensTheDatabaseMarkedWithItsEnvironment();
    void eachDatabaseCostsOneDashboard();
    void rowWithoutSchemaFollowsItsServer();

private:
    struct Planted {
        QString name;
        QString environment;
        std::string dsn;
    };
    std::vector<FleetEntry> entries() const;
    int row(const QString& name) const { return m_fleet->model()->rowOf(name); }
    QString healthText(const QString& name) const { return m_fleet->model()->health(row(name)).text; }
    Level level(const QString& name) const { return m_fleet->model()->health(row(name)).level; }
    QModelIndex cell(const QString& name, int column) const { return m_fleet->model()->index(row(name), column); }

    std::vector<std::unique_ptr<ScratchDatabase>> m_dbs;
    std::vector<Planted> m_planted;
    QTemporaryDir m_dir;
    std::unique_ptr<ProfileStore> m_profiles;
    std::unique_ptr<FleetWindow> m_fleet;
};

void TestFleet::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QSettings(QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console"))
        .clear();
    IDEM_REQUIRE_DATABASE();
    // Ten databases, one per service and environment, as a user outgrowing one server has them.
    const char* names[databases][2] = { { "orders", "prod" }, { "billing", "prod" }, { "search", "staging" },
        { "ledger", "prod" }, { "catalog", "dev" }, { "payments", "prod" }, { "shipping", "staging" },
        { "mail", "dev" }, { "reports", "qa" }, { "identity", "prod" } };
    for (const auto& [name, env] : names) {
        const bool schema = std::string(name) != "catalog"; // catalog: no Idem schema yet
        auto db = std::make_unique<ScratchDatabase>(
            std::string("fleet_") + name, schema ? ScratchDatabase::Contents::Migrated : ScratchDatabase::Contents::Empty);
        auto owner = db->connect();
        if (schema) {
            idem::migrate(*owner, { idem::SchemaName(), true });
            if (m_dbs.empty())
                createLoginRole(readerRole, password, "idem_reader"); // the roles exist once migrated
            plantTask(*owner, "shop:charge:done-1", "succeeded");
        }
        std::string dsn = db->dsn();
        if (std::string(name) == "billing") {
            // Twelve leases expired a minute ago: red from 10 by default.
            for (int i = 0; i < 12; ++i)
                plantTask(*owner, "shop:charge:stuck-" + std::to_string(i), "processing", 1, 5, nullptr, -60);
        } else if (std::string(name) == "search") {
            idem::PauseRequest r;
            r.tenant = "acme";
            r.operation = "reindex";
            r.reason = "index rebuild INC-7";
            r.actor = "alice";
            r.lengthMs = 3600 * 1000;
            idem::setPause(*owner, idem::SchemaName(), r);
        } else if (std::string(name) == "ledger") {
            dsn = loginDsn(db->dsn(), readerRole, "not-the-password");
        } else if (std::string(name) == "payments") {
            dsn = loginDsn(db->dsn(), readerRole, password); // a reader, as most monitors are
        }
        m_planted.push_back({ QLatin1String(name), QLatin1String(env), dsn });
        m_dbs.push_back(std::move(db));
    }
    m_profiles = std::make_unique<ProfileStore>(
        std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("idem-console.conf")), QSettings::IniFormat));
}

void TestFleet::cleanupTestCase()
{
    m_fleet.reset();
    for (QWidget* w : QApplication::topLevelWidgets())
        if (qobject_cast<MainWindow*>(w))
            delete w;
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    m_dbs.clear();
}

std::vector<FleetEntry> TestFleet::entries() const
{
    std::vector<FleetEntry> out;
    for (const auto& p : m_planted) {
        FleetEntry e { p.name, settingsFor(p.dsn) };
        e.settings.environment = p.environment;
        out.push_back(e);
    }
    return out;
}

void TestFleet::environmentLivesInTheProfile()
{
    Profile p;
    p.name = QStringLiteral("orders");
    p.settings = settingsFor(m_planted.at(0).dsn);
    p.settings.password = QStringLiteral("s3cret-fleet");
    p.settings.environment = QStringLiteral("prod");
    p.settings.environmentColour = QStringLiteral("purple");
    m_profiles->save(p);
    const auto back = m_profiles->profile(QStringLiteral("orders"));
    QVERIFY(back);
    QCOMPARE(back->settings.environment, QStringLiteral("prod"));
    QCOMPARE(back->settings.environmentColour, QStringLiteral("purple"));
    QVERIFY(back->settings.password.isEmpty());
    QFile file(m_profiles->fileName());
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QVERIFY2(text.contains("environment=prod"), text.constData());
    QVERIFY(!text.contains("s3cret-fleet"));
    // The colour a profile names wins; without one the name suggests it.
    QCOMPARE(environment::colourOf(back->settings), environment::colour(QStringLiteral("purple")));
    auto s = back->settings;
    s.environmentColour.clear();
    QCOMPARE(environment::colourOf(s), environment::colour(QStringLiteral("red")));
    s.environment = QStringLiteral("staging");
    QCOMPARE(environment::colourOf(s), environment::colour(QStringLiteral("amber")));

    // The connection dialog shows and saves them.
    ConsoleSession session;
    ConnectionDialog dialog(&session, m_profiles.get());
    dialog.setSettings(back->settings);
    auto* env = dialog.findChild<QLineEdit*>(QStringLiteral("environmentEdit"));
    QVERIFY(env);
    QCOMPARE(env->text(), QStringLiteral("prod"));
    typeInto(env, QStringLiteral("staging"));
    QCOMPARE(dialog.settings().environment, QStringLiteral("staging"));
    // The Fleet window of the saved profiles has a row for it, with its environment.
    {
        FleetWindow fromProfiles(m_profiles.get());
        const int r = fromProfiles.model()->rowOf(QStringLiteral("orders"));
        QVERIFY(r >= 0);
        QCOMPARE(fromProfiles.model()->rowCount(), 1);
        QCOMPARE(fromProfiles.model()->entry(r).settings.environment, QStringLiteral("prod"));
    }
    m_profiles->remove(QStringLiteral("orders"));
}

void TestFleet::tenDatabasesOnTheFleetPage()
{
    m_fleet = std::make_unique<FleetWindow>(m_profiles.get(), entries());
    m_fleet->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_fleet.get()));
    FleetModel* model = m_fleet->model();
    QCOMPARE(model->rowCount(), databases);
    // Every database has said how it is, and the pause has been read.
    QTRY_VERIFY_WITH_TIMEOUT(model->count(Level::NoData) == 0, browserTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(model->pauses(row(QStringLiteral("search")))->reads() >= 1, browserTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(level(QStringLiteral("search")) == Level::Warning, browserTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(level(QStringLiteral("billing")) == Level::Critical, browserTimeoutMs);

    // The planted states, in the words and colours the rows show.
    QVERIFY2(healthText(QStringLiteral("billing")).contains(QStringLiteral("red: Expired leases 12")),
        qPrintable(healthText(QStringLiteral("billing"))));
    QVERIFY2(healthText(QStringLiteral("search")).contains(QStringLiteral("intake paused (acme:reindex)")),
        qPrintable(healthText(QStringLiteral("search"))));
    QCOMPARE(level(QStringLiteral("ledger")), Level::Critical);
    const QString ledger = healthText(QStringLiteral("ledger"));
    QVERIFY2(ledger.startsWith(QStringLiteral("Cannot connect: ")) && ledger.contains(QStringLiteral("password")),
        qPrintable(ledger));
    QCOMPARE(model->session(row(QStringLiteral("ledger")))->lastFailure()->kind, FailureKind::Authentication);
    QCOMPARE(model->costText(row(QStringLiteral("ledger"))), QStringLiteral("no reads: not connected"));
    QCOMPARE(model->costText(row(QStringLiteral("catalog"))), QStringLiteral("no reads: nothing to read"));
    QCOMPARE(level(QStringLiteral("catalog")), Level::Warning);
    QVERIFY2(healthText(QStringLiteral("catalog")).contains(QStringLiteral("No Idem schema")),
        qPrintable(healthText(QStringLiteral("catalog"))));
    for (const char* healthy : { "orders", "payments", "shipping", "mail", "reports", "identity" }) {
        QCOMPARE(healthText(QLatin1String(healthy)), QStringLiteral("Healthy"));
        QCOMPARE(level(QLatin1String(healthy)), Level::Normal);
        QVERIFY2(model->nodeText(row(QLatin1String(healthy))).startsWith(QStringLiteral("primary ")),
            qPrintable(model->nodeText(row(QLatin1String(healthy)))));
        // Every 2 s, or (on a loaded machine: ten sessions on 2 shared cores) the truth that the
        // ticks ran over their budget and stretched the interval from the 2 s asked for.
        const QString cost = model->costText(row(QLatin1String(healthy)));
        QVERIFY2(cost.contains(QStringLiteral(" ms, every "))
                && (cost.contains(QStringLiteral(" ms, every 2 s")) || cost.contains(QStringLiteral("stretched from 2 s"))),
            qPrintable(cost));
    }
    QCOMPARE(m_fleet->page()->summaryText(), QStringLiteral("10 databases: 2 red, 2 amber, 6 green, 0 not known yet"));

    // The colours: the health cell red, amber or green; the environment cell in its colour.
    const auto bg = [&](const char* name, int column) {
        return model->data(cell(QLatin1String(name), column), Qt::BackgroundRole).value<QColor>();
    };
    QCOMPARE(bg("billing", FleetModel::HealthColumn), environment::colour(QStringLiteral("red")));
    QCOMPARE(bg("ledger", FleetModel::HealthColumn), environment::colour(QStringLiteral("red")));
    QCOMPARE(bg("search", FleetModel::HealthColumn), environment::colour(QStringLiteral("amber")));
    QCOMPARE(bg("orders", FleetModel::HealthColumn), environment::colour(QStringLiteral("green")));
    QCOMPARE(bg("orders", FleetModel::EnvironmentColumn), environment::colour(QStringLiteral("red")));
    QCOMPARE(bg("search", FleetModel::EnvironmentColumn), environment::colour(QStringLiteral("amber")));
    QCOMPARE(bg("mail", FleetModel::EnvironmentColumn), environment::colour(QStringLiteral("green")));
    QCOMPARE(model->data(cell(QStringLiteral("search"), FleetModel::EnvironmentColumn)).toString(),
        QStringLiteral("staging"));
    // What the table draws is what the model says (the view's own cell text).
    auto* table = m_fleet->page()->table();
    QCOMPARE(table->model()
                 ->data(table->model()->index(row(QStringLiteral("billing")), FleetModel::DatabaseColumn))
                 .toString(),
        QStringLiteral("billing"));
    // Every row is readable on screen: none taller than the page shows (no text clipped to nothing).
    for (int r = 0; r < databases; ++r)
        QVERIFY(table->rowHeight(r) >= table->fontMetrics().height());
    QTest::qWait(300);
    savePicture(withTitle(m_fleet.get()), QStringLiteral("fleet-10-databases.png"));
}

void TestFleet::doubleClickOpensTheDatabaseMarkedWithItsEnvironment()
{
    QVERIFY(m_fleet);
    auto* table = m_fleet->page()->table();
    const QModelIndex orders = cell(QStringLiteral("orders"), FleetModel::DatabaseColumn);
    table->scrollTo(orders);
    const QPoint at = table->visualRect(orders).center();
    // Qt delivers a double click as press, release, double-click.
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, at);
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, at);
    MainWindow* prod = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(
        (prod = m_fleet->databaseWindow(row(QStringLiteral("orders")))) != nullptr, browserTimeoutMs);
    QVERIFY(QTest::qWaitForWindowExposed(prod));
    QTRY_VERIFY_WITH_TIMEOUT(prod->adminSession()->state() == ConsoleSession::State::Connected, browserTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(prod->dashboard()->model()->ticks() >= 1, browserTimeoutMs);
    const std::string dbName = m_dbs.at(0)->name();
    QVERIFY2(prod->windowTitle().startsWith(QStringLiteral("[prod] ")), qPrintable(prod->windowTitle()));
    QVERIFY2(prod->windowTitle().contains(QString::fromStdString(dbName)), qPrintable(prod->windowTitle()));
    EnvironmentBand* band = prod->environmentBand();
    QVERIFY(band->isVisible());
    QVERIFY2(band->text().startsWith(QStringLiteral("PROD — ")), qPrintable(band->text()));
    QCOMPARE(band->palette().color(QPalette::Window), environment::colour(QStringLiteral("red")));
    // Opening it again raises the same window.
    QCOMPARE(m_fleet->openDatabase(row(QStringLiteral("orders"))), prod);
    savePicture(withTitle(prod), QStringLiteral("prod-console-window.png"));

    // Every dialog of it says prod in its title and carries the band: the connection dialog, a
    // message box.
    prod->openConnectionDialog();
    QWidget* dialog = prod->frontWindow();
    QVERIFY(dialog != prod);
    QVERIFY(QTest::qWaitForWindowExposed(dialog));
    QVERIFY2(dialog->windowTitle().startsWith(QStringLiteral("[prod] ")), qPrintable(dialog->windowTitle()));
    auto* dialogBand = dialog->findChild<QWidget*>(QStringLiteral("environmentDialogBand"));
    QVERIFY(dialogBand && dialogBand->isVisible());
    QCOMPARE(dialogBand->palette().color(QPalette::Window), environment::colour(QStringLiteral("red")));
    QCOMPARE(dialogBand->width(), dialog->width());
    savePicture(withTitle(dialog), QStringLiteral("prod-connection-dialog.png"));
    dialog->close();
    QMessageBox box(QMessageBox::Question, QStringLiteral("Resume intake"), QStringLiteral("Resume?"),
        QMessageBox::Yes | QMessageBox::No, prod);
    box.show();
    QVERIFY(QTest::qWaitForWindowExposed(&box));
    QCOMPARE(box.windowTitle(), QStringLiteral("[prod] Resume intake"));
    // A title changed while shown keeps its prefix.
    box.setWindowTitle(QStringLiteral("Pause intake"));
    QCOMPARE(box.windowTitle(), QStringLiteral("[prod] Pause intake"));
    box.close();

    // A staging database: its own window, amber, never confused with prod.
    MainWindow* staging = m_fleet->openDatabase(row(QStringLiteral("shipping")));
    QVERIFY(staging && staging != prod);
    QTRY_VERIFY_WITH_TIMEOUT(staging->adminSession()->state() == ConsoleSession::State::Connected, browserTimeoutMs);
    QVERIFY2(staging->windowTitle().startsWith(QStringLiteral("[staging] ")), qPrintable(staging->windowTitle()));
    QCOMPARE(
        staging->environmentBand()->palette().color(QPalette::Window), environment::colour(QStringLiteral("amber")));
    QMessageBox other(
        QMessageBox::Information, QStringLiteral("Export snapshot"), QStringLiteral("Done"), QMessageBox::Ok, staging);
    other.show();
    QCOMPARE(other.windowTitle(), QStringLiteral("[staging] Export snapshot"));
    other.close();
    QVERIFY2(prod->windowTitle().startsWith(QStringLiteral("[prod] ")), qPrintable(prod->windowTitle()));
    staging->close();
    prod->close();
}

void TestFleet::eachDatabaseCostsOneDashboard()
{
    QVERIFY(m_fleet);
    FleetModel* model = m_fleet->model();
    const int r = row(QStringLiteral("identity"));
    DashboardModel* dash = model->dashboard(r);
    PauseWatch* pauses = model->pauses(r);
    ConsoleSession* session = model->session(r);
    // The dashboard's own settings: the same interval and thresholds a console window's dashboard
    // reads (the fleet adds no filter).
    QSettings settings(
        QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console"));
    const DashboardSettings console = DashboardSettings::load(settings);
    QCOMPARE(dash->settings().intervalMs, console.intervalMs);
    QVERIFY(dash->settings().thresholds == console.thresholds);
    QVERIFY(dash->settings().tenant.isEmpty() && dash->settings().operation.isEmpty());

    // Over several ticks at its own cadence: every job this database's connection ran was a
    // dashboard tick, an exact refresh of the dashboard's, or a read of the pauses; nothing else.
    const int ticksBefore = dash->ticks();
    QTRY_VERIFY_WITH_TIMEOUT(dash->ticks() >= ticksBefore + 3, browserTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(
        !dash->tickPending() && !pauses->pending() && !dash->exactRefreshPending(), browserTimeoutMs);
    QCOMPARE(dash->failuresInARow(), 0);
    QCOMPARE(session->jobsSubmitted(), quint64(dash->ticks() + pauses->reads() + dash->exactRefreshJobs()));

    // One connection per database, on the server: the fleet's, and no other.
    auto admin = idem::connect(adminDsn());
    const auto backends = querySql(*admin,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
        m_dbs.at(static_cast<std::size_t>(databases - 1))->name());
    QCOMPARE(backends[0][0].as<int>(), 1);
}

// Issue 40 item F: a row whose database has no Idem schema sends nothing (its dashboard cannot
// poll), so nothing noticed its connection die when the server restarted: it did not reconnect
// within 70 s of the server's return and said "No Idem schema" about a connection that was gone.
// Now it reads its server as a console's Connection page does: after a restart it reconnects, and
// sees the schema created meanwhile.
void TestFleet::rowWithoutSchemaFollowsItsServer()
{
    auto cluster = LocalCluster::primary();
    QVERIFY2(cluster->problem().isEmpty(), qPrintable(cluster->problem()));
    FleetModel model(DashboardSettings {});
    FleetEntry entry;
    entry.name = QStringLiteral("fresh");
    entry.settings = settingsFor(cluster->dsn());
    entry.settings.schema = QStringLiteral("idem");
    model.setEntries({ entry });
    QTRY_VERIFY_WITH_TIMEOUT(model.health(0).text.contains(QStringLiteral("No Idem schema")), browserTimeoutMs);
    const QDateTime before = model.session(0)->serverInfo().asOf;

    QVERIFY2(cluster->restart(), qPrintable(cluster->problem()));
    {
        auto c = idem::connect(cluster->dsn());
        idem::migrate(*c, { idem::SchemaName(), true });
    }
    // The row finds its connection gone, connects again, and reads the schema now there.
    QTRY_VERIFY2_WITH_TIMEOUT(model.session(0)->serverInfo().asOf > before
            && model.session(0)->serverInfo().schemaVersion > 0
            && model.session(0)->state() == ConsoleSession::State::Connected,
        qPrintable(model.health(0).text), 40000);
    QTRY_VERIFY2_WITH_TIMEOUT(
        !model.health(0).text.contains(QStringLiteral("No Idem schema")) && model.health(0).level != Level::Critical,
        qPrintable(model.health(0).text), browserTimeoutMs);
}

QTEST_MAIN(TestFleet)
#include "tst_fleet.moc"
