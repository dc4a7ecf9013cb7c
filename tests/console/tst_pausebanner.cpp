// Issue #26 in the console: while intake is paused, a banner above every page of the real main
// window says which scope, why, by whom, until when and how many claims it turned away, as the
// database has them; the dashboard's tiles carry a badge and its charts a band over the paused
// time; Pause intake… / Resume intake… on the dashboard and in the Tasks page's context menu
// write exactly one pause row and one audit entry each, with the reason typed; a reader sees the
// banner and can change nothing. Issue 41 item 5: the dialog starts from the dashboard's scope,
// and '*:*' (all intake everywhere) needs a second explicit step: a reason and Enter never
// pause everything.

#include <QtTest>

#include <QSettings>

#include <QAreaSeries>
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>

#include "app/mainwindow.h"
#include "core/connection.h"
#include "core/counters.h"
#include "core/runner.h"
#include "core/taskstore.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/pausewatch.h"
#include "models/profilestore.h"
#include "models/taskbrowsermodel.h"
#include "models/visibletext.h"
#include "operations/pauses.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "tests/support/taskrows.h"
#include "views/chartpanel.h"
#include "views/consolewidget.h"
#include "views/dashboardwidget.h"
#include "views/pausebanner.h"
#include "views/pausedialog.h"
#include "views/refusalnote.h"
#include "views/resumeramppanel.h"
#include "views/taskbrowserwidget.h"
#include "views/theme.h"
#include "views/tilewidget.h"

using namespace idem::console;
using namespace idem::test;

namespace {
constexpr const char* operatorRole = "idem_t_pausebanner_operator";
constexpr const char* readerRole = "idem_t_pausebanner_reader";
constexpr const char* password = "pw-pausebanner";
const idem::SchemaName schema;

std::string one(pqxx::connection& c, const std::string& sql)
{
    const auto r = querySql(c, sql);
    return r.empty() || r[0][0].is_null() ? "<null>" : r[0][0].as<std::string>();
}
} // namespace

class TestPauseBanner : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void cleanupTestCase();
    void bannerOnEveryPageMatchesTheDatabase();
    void bannerGoesAfterResumeAndExpiry();
    void pauseAndResumeFromTheDashboard();
    void pauseAndResumeFromTheTaskMenu();
    void everythingNeedsASecondStep();
    void readerSeesTheBannerButCannotPause();
    void resumeInStepsFromTheDialog();

private:
    void openWindow(const char* role);
    PauseBanner* banner() const { return m_window->console()->pauseBanner(); }
    QString bannerText() const { return banner()->text(); }
    // Claims of tenant:operation turned away by a pause, counted as a worker counts them.
    void claimUnderPause(const std::string& tenant, const std::string& operation, int claims);
    // The dialog a click opened, once it is shown.
    template <typename T> T* waitForDialog(const char* name);
    // Types a reason and runs the dialog; true when it finished.
    bool runWithReason(PauseDialog* dialog, const QString& reason);
    int pauses() { return std::stoi(one(*m_owner, "SELECT count(*) FROM idem.idem_pauses")); }
    int auditEntries(const char* action)
    {
        return std::stoi(
            one(*m_owner, std::string("SELECT count(*) FROM idem.task_idempotency_audit WHERE action = '") + action + "'"));
    }

    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
    std::unique_ptr<pqxx::connection> m_operator;
    std::unique_ptr<ConsoleSession> m_session;
    std::unique_ptr<ProfileStore> m_profiles;
    std::unique_ptr<MainWindow> m_window;
    int m_keys = 0;
};

void TestPauseBanner::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    // The window keeps its filters in the test-mode settings between runs: start from none, so a
    // second run on the same machine sees what the first did.
    QSettings(QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console")).clear();
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("pausebanner", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    createLoginRole(operatorRole, password, "idem_operator");
    createLoginRole(readerRole, password, "idem_reader");
    m_operator = idem::connect(loginDsn(m_db->dsn(), operatorRole, password));
    plantTask(*m_owner, "shop:charge:order-1", "failed", 3, 3, "permanent");
    plantTask(*m_owner, "acme:invoice:inv-7", "retryable_failed", 1, 5, "retryable");
}

void TestPauseBanner::init()
{
    execSql(*m_owner, "DELETE FROM idem.idem_pauses");
}

void TestPauseBanner::openWindow(const char* role)
{
    m_session = std::make_unique<ConsoleSession>();
    m_profiles = std::make_unique<ProfileStore>();
    m_window = std::make_unique<MainWindow>(m_session.get(), m_profiles.get());
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    m_session->connectTo(settingsFor(loginDsn(m_db->dsn(), role, password)));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->dashboard()->model()->ticks() >= 1, browserTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->pauseWatch()->reads() >= 1, browserTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(m_session->state() == ConsoleSession::State::Connected, browserTimeoutMs);
}

void TestPauseBanner::cleanup()
{
    m_window.reset();
    m_profiles.reset();
    m_session.reset();
}

void TestPauseBanner::cleanupTestCase()
{
    m_operator.reset();
    m_owner.reset();
    m_db.reset();
}

void TestPauseBanner::claimUnderPause(const std::string& tenant, const std::string& operation, int claims)
{
    auto conn = m_db->connect();
    idem::OutcomeCounters counters;
    idem::TaskStore store(*conn, storeOptions(std::chrono::seconds(30)), &counters);
    for (int i = 0; i < claims; ++i) {
        const auto out = idem::runTask(store, idem::TaskKey(tenant, operation, "k" + std::to_string(++m_keys)),
            digestOf('a'), [](pqxx::work&, const idem::TaskContext&) { return std::string("{}"); });
        QCOMPARE(idem::runOutcomeName(out.kind), "paused");
    }
    counters.flush(*conn, schema);
}

template <typename T> T* TestPauseBanner::waitForDialog(const char* name)
{
    T* found = nullptr;
    const bool shown = QTest::qWaitFor(
        [&] {
            found = m_window->findChild<T*>(QLatin1String(name));
            return found && found->isVisible();
        },
        browserTimeoutMs);
    return shown ? found : nullptr;
}

bool TestPauseBanner::runWithReason(PauseDialog* dialog, const QString& reason)
{
    // Blank or white space only: Run stays disabled (the recovery actions' rule).
    if (dialog->runButton()->isEnabled())
        return false;
    QTest::keyClicks(dialog->reasonEdit(), QStringLiteral("   "));
    if (dialog->runButton()->isEnabled())
        return false;
    dialog->reasonEdit()->clear();
    dialog->reasonEdit()->insertPlainText(reason);
    if (!dialog->runButton()->isEnabled())
        return false;
    QTest::mouseClick(dialog->runButton(), Qt::LeftButton);
    return QTest::qWaitFor([&] { return dialog->finished(); }, browserTimeoutMs);
}

void TestPauseBanner::bannerOnEveryPageMatchesTheDatabase()
{
    openWindow(operatorRole);
    QVERIFY(banner()->isHidden());
    QVERIFY(bannerText().isEmpty());

    // A reason with a line break and an RTL override: shown as escapes, never rearranged.
    const std::string reason = "PSP outage INC-42\nsee \u202Erunbook";
    idem::PauseRequest r;
    r.tenant = "acme";
    r.operation = "invoice";
    r.reason = reason;
    r.actor = "alice@ops-7";
    r.lengthMs = 3600 * 1000;
    const auto set = idem::setPause(*m_operator, schema, r);
    claimUnderPause("acme", "invoice", 3);
    m_window->pauseWatch()->refreshNow();
    QTRY_VERIFY_WITH_TIMEOUT(!bannerText().isEmpty(), browserTimeoutMs);

    // What the database says, in the banner's words.
    const QString pausedBy = QString::fromStdString(one(*m_owner, "SELECT paused_by FROM idem.idem_pauses"));
    QCOMPARE(pausedBy, QStringLiteral("%1 (alice@ops-7)").arg(QLatin1String(operatorRole)));
    const qint64 untilMs = std::stoll(one(*m_owner, "SELECT (extract(epoch FROM until) * 1000)::bigint FROM idem.idem_pauses"));
    // The time alone when the pause ends today; the date and minutes when it ends another day (an
    // hour's pause begun after 23:00).
    const QDateTime untilAt = QDateTime::fromMSecsSinceEpoch(untilMs).toLocalTime();
    const QString until = untilAt.toString(untilAt.date() == QDate::currentDate() ? QStringLiteral("HH:mm:ss")
                                                                                   : QStringLiteral("yyyy-MM-dd HH:mm"));
    const QString expected[] = { QStringLiteral("acme:invoice"), visibleText(reason), pausedBy,
        QStringLiteral("until %1").arg(until), QStringLiteral("claims turned away in the last 15 min: 3") };
    const auto pages = { "dashboard", "tasks", "audit", "storage", "connection" };
    for (const char* page : pages) {
        QVERIFY(m_window->showPage(QLatin1String(page)));
        QVERIFY2(banner()->isVisible(), page);
        for (const auto& e : expected)
            QVERIFY2(bannerText().contains(e), qPrintable(QStringLiteral("%1: no \"%2\" in \"%3\"").arg(QLatin1String(page), e, bannerText())));
    }
    QVERIFY2(!bannerText().contains(QChar(0x202E)), qPrintable(bannerText()));
    QCOMPARE(bannerText().count(QLatin1Char('\n')), 1); // two lines: the reason's break is an escape
    // Time left by the server's clock: between 59 and 60 minutes.
    QVERIFY2(bannerText().contains(QStringLiteral("(59 min")) || bannerText().contains(QStringLiteral("(1 h left)")),
        qPrintable(bannerText()));
    QCOMPARE(m_window->pauseWatch()->list()->pauses.at(0).auditId, set.auditId);

    // The dashboard: over all tenants, partly paused (said in the tooltip, no badge); filtered to the scope, paused. The charts
    // shade the time since the pause began on each of their six time axes (latency's included).
    QVERIFY(m_window->showPage(QStringLiteral("dashboard")));
    auto* dashboard = m_window->dashboard();
    QTRY_VERIFY2_WITH_TIMEOUT(dashboard->tile(Tile::Processing)->toolTip().contains(
                                  QStringLiteral("Intake of some of *:* (everything) is paused by: acme:invoice.")),
        qPrintable(dashboard->tile(Tile::Processing)->toolTip()), browserTimeoutMs);
    QCOMPARE(dashboard->tile(Tile::Processing)->pausedText(), QString());
    dashboard->model()->setFilter(QStringLiteral("acme"), QStringLiteral("invoice"));
    QTRY_COMPARE_WITH_TIMEOUT(dashboard->tile(Tile::Failed)->pausedText(), QStringLiteral("intake paused"), browserTimeoutMs);
    QVERIFY2(dashboard->tile(Tile::Failed)->toolTip().contains(QStringLiteral("acme:invoice")),
        qPrintable(dashboard->tile(Tile::Failed)->toolTip()));
    const auto bands = dashboard->charts()->pauseBands();
    QCOMPARE(bands.size(), 6);
    const qint64 pausedAtMs = set.pause.pausedAtUs / 1000;
    for (auto* band : bands) {
        QCOMPARE(band->upperSeries()->count(), 2);
        QCOMPARE(qint64(band->upperSeries()->at(0).x()), pausedAtMs);
        QVERIFY(band->upperSeries()->at(1).x() >= double(pausedAtMs));
    }
    // Another operation: neither badge nor band.
    dashboard->model()->setFilter(QStringLiteral("acme"), QStringLiteral("refund"));
    QTRY_VERIFY_WITH_TIMEOUT(dashboard->tile(Tile::Failed)->pausedText().isEmpty(), browserTimeoutMs);
    QVERIFY(dashboard->charts()->pauseBands().isEmpty());
    dashboard->model()->setFilter(QString(), QString());

    // A second pause, of names no traffic has used: "and 1 more", and all of them under Details.
    idem::PauseRequest all;
    all.operation = "export-typo";
    all.reason = "exports frozen";
    all.actor = "bob@ops-2";
    idem::setPause(*m_operator, schema, all);
    m_window->pauseWatch()->refreshNow();
    QTRY_VERIFY2_WITH_TIMEOUT(bannerText().contains(QStringLiteral("and 1 more pause")), qPrintable(bannerText()),
        browserTimeoutMs);
    const QString details = banner()->detailsText();
    QVERIFY2(details.contains(QStringLiteral("*:export-typo (all tenants)")), qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral("until resumed")), qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral("matches no traffic yet")), qPrintable(details));
    QCOMPARE(banner()->toolTip(), details);
    QTest::mouseClick(banner()->detailsButton(), Qt::LeftButton);
    auto* shown = waitForDialog<QDialog>("pauseDetailsDialog");
    QVERIFY(shown);
    QCOMPARE(shown->findChild<QPlainTextEdit*>(QStringLiteral("pauseDetails"))->toPlainText(), details);
    shown->close();
}

void TestPauseBanner::bannerGoesAfterResumeAndExpiry()
{
    openWindow(operatorRole);
    idem::PauseRequest r;
    r.tenant = "acme";
    r.reason = "ERP maintenance";
    idem::setPause(*m_operator, schema, r);
    m_window->pauseWatch()->refreshNow();
    QTRY_VERIFY_WITH_TIMEOUT(bannerText().contains(QStringLiteral("acme:* (all operations)")), browserTimeoutMs);
    QVERIFY(bannerText().contains(QStringLiteral("until resumed")));
    idem::resumePause(*m_operator, schema, "acme", "*", "maintenance over");
    m_window->pauseWatch()->refreshNow();
    QTRY_VERIFY_WITH_TIMEOUT(banner()->isHidden(), browserTimeoutMs);
    QCOMPARE(m_window->dashboard()->tile(Tile::Processing)->pausedText(), QString());

    // Expiry by the server's clock: the shortest pause there is goes by itself, and the banner
    // with it (the row stays, listed as expired).
    r.lengthMs = idem::PauseRequest::minLengthMs;
    idem::setPause(*m_operator, schema, r);
    m_window->pauseWatch()->refreshNow();
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->pauseWatch()->list()->pauses.empty(), browserTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(banner()->isHidden() && m_window->pauseWatch()->list()
            && !m_window->pauseWatch()->list()->pauses.empty() && !m_window->pauseWatch()->list()->pauses[0].active,
        browserTimeoutMs);
    QCOMPARE(pauses(), 1);
    QVERIFY2(banner()->detailsText().contains(QStringLiteral("expired at")), qPrintable(banner()->detailsText()));
}

void TestPauseBanner::pauseAndResumeFromTheDashboard()
{
    openWindow(operatorRole);
    auto* dashboard = m_window->dashboard();
    dashboard->model()->setFilter(QStringLiteral("acme"), QStringLiteral("refund"));
    const int pauseEntries = auditEntries("pause"), resumeEntries = auditEntries("resume");
    auto* pauseButton = dashboard->pauseIntakeButton();
    QTRY_VERIFY_WITH_TIMEOUT(pauseButton->isVisible() && pauseButton->isEnabled(), browserTimeoutMs);
    QVERIFY(!dashboard->resumeIntakeButton()->isEnabled()); // nothing of acme:refund is paused
    QTest::mouseClick(pauseButton, Qt::LeftButton);
    auto* dialog = waitForDialog<PauseDialog>("pauseDialog");
    QVERIFY(dialog);
    QCOMPARE(dialog->tenantEdit()->text(), QStringLiteral("acme"));
    QCOMPARE(dialog->operationEdit()->text(), QStringLiteral("refund"));
    dialog->lengthCombo()->setCurrentIndex(dialog->lengthCombo()->findData(60));
    QCOMPARE(dialog->lengthMs(), std::optional<qint64>(3600000));
    QVERIFY(runWithReason(dialog, QStringLiteral("refund provider down, INC-77")));
    QVERIFY2(dialog->succeeded(), qPrintable(dialog->resultLabel()->text()));
    // Exactly one row and one entry, with the reason typed; the result names the entry.
    QCOMPARE(pauses(), 1);
    QCOMPARE(auditEntries("pause"), pauseEntries + 1);
    const auto row = querySql(*m_owner,
        "SELECT p.tenant, p.operation, p.reason, p.audit_id, a.reason, a.action,"
        " round(extract(epoch FROM p.until - p.changed_at))::int FROM idem.idem_pauses p"
        " JOIN idem.task_idempotency_audit a ON a.id = p.audit_id");
    QCOMPARE(row.size(), std::size_t(1));
    QCOMPARE(row[0][0].as<std::string>(), std::string("acme"));
    QCOMPARE(row[0][1].as<std::string>(), std::string("refund"));
    QCOMPARE(row[0][2].as<std::string>(), std::string("refund provider down, INC-77"));
    QCOMPARE(row[0][3].as<qint64>(), dialog->auditId());
    QCOMPARE(row[0][4].as<std::string>(), std::string("refund provider down, INC-77"));
    QCOMPARE(row[0][5].as<std::string>(), std::string("pause"));
    QCOMPARE(row[0][6].as<int>(), 3600);
    QVERIFY2(dialog->resultLabel()->text().contains(QStringLiteral("Audit entry #%1").arg(dialog->auditId())),
        qPrintable(dialog->resultLabel()->text()));
    // The banner and the tiles follow at once, without waiting for the next poll.
    QTRY_VERIFY_WITH_TIMEOUT(bannerText().contains(QStringLiteral("refund provider down, INC-77")), browserTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(dashboard->tile(Tile::Processing)->pausedText(), QStringLiteral("intake paused"),
        browserTimeoutMs);
    QTest::mouseClick(dialog->findChild<QPushButton*>(QStringLiteral("closeButton")), Qt::LeftButton);

    // Resume: the one pause of the scope, its own reason.
    QTRY_VERIFY_WITH_TIMEOUT(dashboard->resumeIntakeButton()->isEnabled(), browserTimeoutMs);
    QTest::mouseClick(dashboard->resumeIntakeButton(), Qt::LeftButton);
    auto* resume = waitForDialog<PauseDialog>("resumeDialog");
    QVERIFY(resume);
    QCOMPARE(resume->mode(), PauseDialog::Mode::Resume);
    QVERIFY(runWithReason(resume, QStringLiteral("provider back")));
    QVERIFY2(resume->succeeded(), qPrintable(resume->resultLabel()->text()));
    QCOMPARE(pauses(), 0);
    QCOMPARE(auditEntries("resume"), resumeEntries + 1);
    QCOMPARE(one(*m_owner, "SELECT reason FROM idem.task_idempotency_audit ORDER BY id DESC LIMIT 1"),
        std::string("provider back"));
    QTRY_VERIFY_WITH_TIMEOUT(banner()->isHidden(), browserTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(dashboard->tile(Tile::Processing)->pausedText().isEmpty(), browserTimeoutMs);
    QTest::mouseClick(resume->findChild<QPushButton*>(QStringLiteral("closeButton")), Qt::LeftButton);
}

void TestPauseBanner::everythingNeedsASecondStep()
{
    openWindow(operatorRole);
    auto* dashboard = m_window->dashboard();
    // The dashboard's scope: a tenant only.
    dashboard->model()->setFilter(QStringLiteral("acme"), QString());
    auto* pauseButton = dashboard->pauseIntakeButton();
    QTRY_VERIFY_WITH_TIMEOUT(pauseButton->isVisible() && pauseButton->isEnabled(), browserTimeoutMs);
    QTest::mouseClick(pauseButton, Qt::LeftButton);
    auto* dialog = waitForDialog<PauseDialog>("pauseDialog");
    QVERIFY(dialog);
    QCOMPARE(dialog->tenantEdit()->text(), QStringLiteral("acme"));
    QCOMPARE(dialog->operationEdit()->text(), QStringLiteral("*"));
    auto* confirm = dialog->findChild<QCheckBox*>(QStringLiteral("pauseEverythingConfirm"));
    QVERIFY2(confirm, "the dialog has a confirmation for *:*");
    QVERIFY(!confirm->isVisible()); // a tenant's pause needs no second step
    // The operator widens it to everything, types a reason and presses Enter: nothing is paused.
    dialog->tenantEdit()->selectAll();
    QTest::keyClicks(dialog->tenantEdit(), QStringLiteral("*"));
    QTest::keyClicks(dialog->reasonEdit(), QStringLiteral("gateway 503 everywhere"));
    QVERIFY(confirm->isVisible());
    QVERIFY(!confirm->isChecked());
    QVERIFY(!dialog->runButton()->isEnabled());
    auto* why = dialog->findChild<QLabel*>(QStringLiteral("pauseRefusal"));
    QVERIFY(why && why->isVisible());
    QVERIFY2(why->text().contains(QStringLiteral("*:*")), qPrintable(why->text()));
    for (QWidget* at : std::initializer_list<QWidget*> { dialog->tenantEdit(), dialog->operationEdit(), dialog }) {
        QTest::keyClick(at, Qt::Key_Return);
        QTest::keyClick(at, Qt::Key_Enter);
    }
    QVERIFY(dialog->isVisible());
    QVERIFY(!dialog->finished());
    QCOMPARE(pauses(), 0);
    // IDEM_SCREENSHOT_DIR: the second step, light and dark, to look at.
    if (const QString dir = qEnvironmentVariable("IDEM_SCREENSHOT_DIR"); !dir.isEmpty()) {
        for (const bool dark : { false, true }) {
            theme::apply(dark ? Theme::Dark : Theme::Light);
            QCoreApplication::processEvents();
            dialog->grab().save(dir
                + (dark ? QStringLiteral("/pause-everything-dark.png")
                        : QStringLiteral("/pause-everything-light.png")));
        }
        theme::apply(Theme::Light);
    }
    // Ticked, Enter still does not run it: only a click on Run does.
    QTest::mouseClick(confirm, Qt::LeftButton);
    QVERIFY(confirm->isChecked());
    QVERIFY(dialog->runButton()->isEnabled());
    QVERIFY(!dialog->runButton()->isDefault());
    QCOMPARE(dialog->runButton()->text(), QStringLiteral("Pause everything"));
    QTest::keyClick(dialog->operationEdit(), Qt::Key_Return);
    // A run starts synchronously (Run greys out at once, before the database answers).
    QVERIFY(dialog->runButton()->isEnabled());
    QVERIFY(!dialog->finished());
    QCOMPARE(pauses(), 0);
    QTest::mouseClick(dialog->runButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(dialog->finished(), browserTimeoutMs);
    QVERIFY2(dialog->succeeded(), qPrintable(dialog->resultLabel()->text()));
    QCOMPARE(one(*m_owner, "SELECT tenant || ':' || operation || ' ' || reason FROM idem.idem_pauses"),
        std::string("*:* gateway 503 everywhere"));
    QTest::mouseClick(dialog->findChild<QPushButton*>(QStringLiteral("closeButton")), Qt::LeftButton);
}

void TestPauseBanner::pauseAndResumeFromTheTaskMenu()
{
    openWindow(operatorRole);
    auto* tasks = m_window->findChild<TaskBrowserWidget*>();
    QVERIFY(m_window->showPage(QStringLiteral("tasks")));
    QSignalSpy pages(tasks->model(), &TaskBrowserModel::pageLoaded);
    idem::TaskFilter f;
    f.keyPrefix = "shop:charge:";
    tasks->applyFilter(f);
    QVERIFY(QTest::qWaitFor([&] { return !pages.isEmpty() && !tasks->model()->busy(); }, browserTimeoutMs));
    QCOMPARE(tasks->model()->rowCount(), 1);
    const int pauseEntries = auditEntries("pause");

    std::unique_ptr<QMenu> menu(tasks->contextMenuFor(tasks->model()->index(0, 0)));
    auto* pauseAction = menu->findChild<QAction*>(QStringLiteral("pauseIntakeAction"));
    QVERIFY(pauseAction);
    QVERIFY2(pauseAction->text().contains(QStringLiteral("shop:charge")), qPrintable(pauseAction->text()));
    QVERIFY(pauseAction->isEnabled());
    QVERIFY(!menu->findChild<QAction*>(QStringLiteral("resumeIntakeAction"))); // nothing to lift yet
    pauseAction->trigger();
    auto* dialog = waitForDialog<PauseDialog>("pauseDialog");
    QVERIFY(dialog);
    QCOMPARE(dialog->tenantEdit()->text(), QStringLiteral("shop"));
    QCOMPARE(dialog->operationEdit()->text(), QStringLiteral("charge"));
    // A custom length, in minutes.
    dialog->lengthCombo()->setCurrentIndex(dialog->lengthCombo()->findData(-1));
    QVERIFY(dialog->customMinutes()->isEnabled());
    dialog->customMinutes()->setValue(20);
    QVERIFY(runWithReason(dialog, QStringLiteral("card network maintenance")));
    QVERIFY2(dialog->succeeded(), qPrintable(dialog->resultLabel()->text()));
    QCOMPARE(pauses(), 1);
    QCOMPARE(auditEntries("pause"), pauseEntries + 1);
    QCOMPARE(one(*m_owner,
                 "SELECT tenant || ':' || operation || '|' || reason || '|' || round(extract(epoch FROM until - changed_at))"
                 " FROM idem.idem_pauses"),
        std::string("shop:charge|card network maintenance|1200"));
    QTRY_VERIFY_WITH_TIMEOUT(bannerText().contains(QStringLiteral("shop:charge")), browserTimeoutMs);
    QTest::mouseClick(dialog->findChild<QPushButton*>(QStringLiteral("closeButton")), Qt::LeftButton);

    // The row's menu now offers to lift it. Lifted elsewhere meanwhile, the dialog says so in the
    // server's words and writes nothing.
    menu.reset(tasks->contextMenuFor(tasks->model()->index(0, 0)));
    auto* resumeAction = menu->findChild<QAction*>(QStringLiteral("resumeIntakeAction"));
    QVERIFY(resumeAction);
    QCOMPARE(resumeAction->data().toString(), QStringLiteral("shop:charge"));
    resumeAction->trigger();
    auto* resume = waitForDialog<PauseDialog>("resumeDialog");
    QVERIFY(resume);
    idem::resumePause(*m_operator, schema, "shop", "charge", "lifted by a colleague");
    const int resumeEntries = auditEntries("resume");
    QVERIFY(runWithReason(resume, QStringLiteral("done")));
    QVERIFY(!resume->succeeded());
    QVERIFY2(resume->resultLabel()->text().contains(QStringLiteral("there is no pause of tenant 'shop' and operation 'charge'")),
        qPrintable(resume->resultLabel()->text()));
    QCOMPARE(auditEntries("resume"), resumeEntries);
    QTest::mouseClick(resume->findChild<QPushButton*>(QStringLiteral("closeButton")), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(banner()->isHidden(), browserTimeoutMs);
}

void TestPauseBanner::readerSeesTheBannerButCannotPause()
{
    idem::PauseRequest r;
    r.tenant = "shop";
    r.operation = "charge";
    r.reason = "chargebacks spike";
    idem::setPause(*m_operator, schema, r);
    const auto before = one(*m_owner, "SELECT (SELECT count(*) FROM idem.idem_pauses) || '/' || "
                                      "(SELECT count(*) FROM idem.task_idempotency_audit)");
    openWindow(readerRole);
    QVERIFY(!m_session->serverInfo().isOperator);
    QTRY_VERIFY_WITH_TIMEOUT(bannerText().contains(QStringLiteral("chargebacks spike")), browserTimeoutMs);

    auto* dashboard = m_window->dashboard();
    QVERIFY(!dashboard->pauseIntakeButton()->isEnabled());
    QVERIFY2(dashboard->pauseIntakeButton()->toolTip().contains(QStringLiteral("GRANT idem_may_pause TO")),
        qPrintable(dashboard->pauseIntakeButton()->toolTip()));
    QVERIFY(!dashboard->resumeIntakeButton()->isEnabled());
    // Issue 41 item 6: the reason is said beside the greyed-out buttons, not only when hovering.
    QVERIFY(dashboard->pauseRefusalNote()->isVisible());
    QVERIFY2(dashboard->pauseRefusalNote()->text().contains(QStringLiteral("GRANT idem_may_pause TO")),
        qPrintable(dashboard->pauseRefusalNote()->text()));

    auto* tasks = m_window->findChild<TaskBrowserWidget*>();
    QVERIFY(m_window->showPage(QStringLiteral("tasks")));
    QSignalSpy pages(tasks->model(), &TaskBrowserModel::pageLoaded);
    idem::TaskFilter f;
    f.keyPrefix = "shop:charge:";
    tasks->applyFilter(f);
    QVERIFY(QTest::qWaitFor([&] { return !pages.isEmpty() && !tasks->model()->busy(); }, browserTimeoutMs));
    std::unique_ptr<QMenu> menu(tasks->contextMenuFor(tasks->model()->index(0, 0)));
    for (const char* name : { "pauseIntakeAction", "resumeIntakeAction" }) {
        auto* a = menu->findChild<QAction*>(QLatin1String(name));
        QVERIFY2(a, name);
        QVERIFY2(!a->isEnabled(), name);
        QVERIFY2(a->toolTip().contains(QStringLiteral("GRANT idem_may_pause TO")), qPrintable(a->toolTip()));
    }
    // The dialog itself will not run for a reader, whatever is typed, and says why.
    PauseDialog dialog(m_session.get(), QStringLiteral("shop"), QStringLiteral("refund"));
    dialog.show();
    dialog.reasonEdit()->insertPlainText(QStringLiteral("trying anyway"));
    QVERIFY(!dialog.runButton()->isEnabled());
    auto* refusal = dialog.findChild<QLabel*>(QStringLiteral("pauseRefusal"));
    QVERIFY(refusal && refusal->isVisible());
    QVERIFY2(refusal->text().contains(QLatin1String(readerRole)), qPrintable(refusal->text()));
    // And the database refuses anyway: nothing written.
    auto conn = idem::connect(loginDsn(m_db->dsn(), readerRole, password));
    idem::PauseRequest sneaky;
    sneaky.tenant = "shop";
    sneaky.reason = "bypassing the console";
    QVERIFY_THROWS_EXCEPTION(pqxx::insufficient_privilege, idem::setPause(*conn, schema, sneaky));
    QCOMPARE(one(*m_owner, "SELECT (SELECT count(*) FROM idem.idem_pauses) || '/' || "
                           "(SELECT count(*) FROM idem.task_idempotency_audit)"),
        before);
}

// Issue 46 item 4: the resume dialog shows what a resume sends (the forecast, as the database
// holds it), resumes in steps when asked (the pause row carries the ramp, one 'ramp' audit
// entry), and the banner then shows the ramp's step and its failure rate. Screenshots with
// IDEM_SCREENSHOT_DIR.
void TestPauseBanner::resumeInStepsFromTheDialog()
{
    execSql(*m_owner, "SELECT * FROM idem.idem_pause('acme', 'ship', 'carrier API down', 'ops')");
    execSql(*m_owner, "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts,"
                      " created_at, updated_at, next_attempt_at, error_class, errors)"
                      " SELECT 'acme:ship:r' || g, 'v1:x', 'retryable_failed', 1, 5, now(), now(),"
                      " now() - interval '1 min' + (g % 3) * interval '2 min', 'retryable', '[]'"
                      " FROM generate_series(1, 30) g");
    execSql(*m_owner, "INSERT INTO idem.idem_counters (bucket, tenant, operation, outcome, n)"
                      " VALUES (date_trunc('minute', now()), 'acme', 'ship', 'paused', 12)");
    openWindow(operatorRole);
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->pauseWatch()->active().empty(), browserTimeoutMs);
    auto* dialog = openResumeDialog(m_window.get(), m_session.get(), m_window->pauseWatch(),
        m_window->pauseWatch()->active().front());
    QVERIFY(dialog && dialog->rampPanel());
    // 30 retryable keys, 10 due already; 12 claims turned away; 42 in all.
    QTRY_VERIFY_WITH_TIMEOUT(dialog->rampPanel()->forecastLabel()->text().contains(
                                 QStringLiteral("Resuming sends 30 retries due in the next 30 min (10 due already")),
        browserTimeoutMs);
    const QString forecast = dialog->rampPanel()->forecastLabel()->text();
    QVERIFY2(forecast.contains(QStringLiteral("12 claims turned away")) && forecast.contains(QStringLiteral("42 in all")),
        qPrintable(forecast));
    dialog->rampPanel()->inStepsBox()->setChecked(true);
    dialog->rampPanel()->stepsEdit()->setText(QStringLiteral("10,50"));
    QVERIFY(!dialog->runButton()->isEnabled()); // the last step is 100
    dialog->rampPanel()->stepsEdit()->setText(QStringLiteral("10,50,100"));
    const QString dir = qEnvironmentVariable("IDEM_SCREENSHOT_DIR");
    if (!dir.isEmpty()) {
        dialog->reasonEdit()->insertPlainText(QStringLiteral("carrier back, INC-90"));
        QCoreApplication::processEvents();
        dialog->grab().save(dir + QStringLiteral("/resume-in-steps.png"));
        dialog->reasonEdit()->clear();
    }
    QVERIFY(runWithReason(dialog, QStringLiteral("carrier back, INC-90")));
    QVERIFY2(dialog->succeeded(), qPrintable(dialog->resultLabel()->text()));
    QCOMPARE(one(*m_owner, "SELECT array_to_string(ramp_steps, ',') || ' ' || ramp_step_ms || ' ' || ramp_abort_above"
                           " FROM idem.idem_pauses WHERE tenant = 'acme' AND operation = 'ship'"),
        std::string("10,50,100 300000 0.2"));
    QCOMPARE(one(*m_owner, "SELECT action || ' ' || reason FROM idem.task_idempotency_audit ORDER BY id DESC LIMIT 1"),
        std::string("ramp carrier back, INC-90"));
    QTRY_VERIFY_WITH_TIMEOUT(
        bannerText().contains(QStringLiteral("Ramping: step 1 of 3, 10 % of keys admitted; no admitted claim yet")),
        browserTimeoutMs);
    if (!dir.isEmpty())
        m_window->grab().save(dir + QStringLiteral("/ramp-banner.png"));
    QTest::mouseClick(dialog->findChild<QPushButton*>(QStringLiteral("closeButton")), Qt::LeftButton);
}

QTEST_MAIN(TestPauseBanner)
#include "tst_pausebanner.moc"
