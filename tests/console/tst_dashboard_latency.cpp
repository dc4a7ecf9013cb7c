// Issue #27 in the console: the dashboard's latency chart and its worst p95 run time tile show
// what the rows say. Succeeded rows with known claim, first-seen and completion times are planted
// in two closed minutes and the roll-up is set back so that it folds them; the chart's p50 / p95 /
// p99 points (all operations as one, then one operation) and the tile's value, operation, colour
// and tooltip are checked against nearest-rank percentiles computed here from the planted
// durations (the product reports a histogram slot's geometric middle, within 3.7 %: 4 % allowed).
// On a schema older than v17 the dashboard says in words that there are no latency figures and
// reads none.

#include <QtTest>

#include <QChart>
#include <QLabel>
#include <QLineEdit>
#include <QLogValueAxis>
#include <QSettings>
#include <QStandardPaths>
#include <QXYSeries>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "app/mainwindow.h"
#include "models/dashboardmodel.h"
#include "models/latencywatch.h"
#include "models/profilestore.h"
#include "schema/migrate.h"
#include "tests/console/consolewindow_support.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "views/chartpanel.h"
#include "views/dashboardwidget.h"
#include "views/language.h"
#include "views/latencychart.h"
#include "views/tilegrid.h"
#include "views/tilewidget.h"

using namespace idem::console;
using namespace idem::test;

namespace {
constexpr qint64 minuteUs = 60'000'000;

// One planted success: its operation, minute (0 or 1), run time and wait before the claim.
struct Planted {
    std::string operation;
    int minute = 0;
    double runMs = 0;
    double waitMs = 0;
};

// Nearest rank: the smallest value with at least p of them at or below it.
double percentile(std::vector<double> values, double p)
{
    std::sort(values.begin(), values.end());
    const auto rank = static_cast<std::size_t>(std::ceil(p * double(values.size())));
    return values.at(std::max<std::size_t>(rank, 1) - 1);
}

bool near(double shown, double exact) { return std::abs(shown - exact) <= 0.04 * exact; }

// "6.21 s", "850 ms", "1 min 5 s" (as the tile writes it, in English) back to milliseconds.
double parseDuration(const QString& text)
{
    const auto parts = text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (parts.size() == 2 && parts[1] == QLatin1String("ms"))
        return parts[0].toDouble();
    if (parts.size() == 2 && parts[1] == QLatin1String("s"))
        return parts[0].toDouble() * 1000.0;
    if (parts.size() == 4 && parts[1] == QLatin1String("min"))
        return (parts[0].toDouble() * 60 + parts[2].toDouble()) * 1000.0;
    return -1;
}
} // namespace

class TestDashboardLatency : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void chartAndTileShowThePlantedPercentiles();
    void olderSchemaSaysSoInWords();

private:
    void openWindow();
    void setOperation(const QString& operation);
    void checkChart(const QString& operation);
    void screenshot(const QString& name);

    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
    ConsoleWindow m_console;
    std::vector<Planted> m_planted;
    qint64 m_firstMinuteUs = 0; // the start of the first planted minute, server clock
};

void TestDashboardLatency::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QSettings(QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console")).clear();
    language::apply(QStringLiteral("en"));
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("dashlatency", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true });

    // charge is slow (200 ms growing by 10 % a call to 8 s in the first minute, 1 to 3.9 s in the
    // second), refund fast (5 to 52 ms, then 20 to 47 ms); each waited a while before its claim.
    for (int i = 0; i < 40; ++i)
        m_planted.push_back({ "charge", 0, 200.0 * std::pow(1.1, i), (i % 7) * 1500.0 });
    for (int i = 0; i < 20; ++i)
        m_planted.push_back({ "refund", 0, 5.0 + 2.5 * i, (i % 3) * 200.0 });
    for (int i = 0; i < 30; ++i)
        m_planted.push_back({ "charge", 1, 1000.0 + 100.0 * i, (i % 5) * 4000.0 });
    for (int i = 0; i < 10; ++i)
        m_planted.push_back({ "refund", 1, 20.0 + 3.0 * i, 50.0 * i });

    // Two closed minutes, the later one closed over a minute ago: both are due for the roll-up.
    m_firstMinuteUs = querySql(*m_owner, "SELECT (extract(epoch FROM date_trunc('minute', now()))::bigint - 240) * 1000000")[0][0]
                          .as<qint64>();
    int n = 0;
    for (const auto& p : m_planted) {
        // Completions spread over the minute, never at its edges.
        const qint64 doneUs = m_firstMinuteUs + p.minute * minuteUs + 1'000'000 + (n * 577'000) % 57'000'000;
        const qint64 startUs = doneUs - qint64(std::llround(p.runMs * 1000.0));
        const qint64 createdUs = startUs - qint64(std::llround(p.waitMs * 1000.0));
        execSql(*m_owner,
            "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts,"
            " created_at, attempt_started_at, updated_at)"
            " VALUES ($1, 'v1:' || repeat('a', 64), 'succeeded', '{}', 1,"
            " to_timestamp(0) + $2::bigint * interval '1 microsecond',"
            " to_timestamp(0) + $3::bigint * interval '1 microsecond',"
            " to_timestamp(0) + $4::bigint * interval '1 microsecond')",
            "ta:" + p.operation + ":k" + std::to_string(++n), createdUs, startUs, doneUs);
    }
    // The roll-up started at the migration, after these minutes: set it back so it folds them.
    execSql(*m_owner, "UPDATE idem.idem_latency_state SET folded_to = to_timestamp($1::bigint / 1000000) - interval '1 minute'",
        m_firstMinuteUs);
}

void TestDashboardLatency::cleanupTestCase()
{
    m_console.reset();
    m_owner.reset();
    m_db.reset();
}

void TestDashboardLatency::openWindow()
{
    openConsoleWindow(m_console, m_db->dsn());
    if (QTest::currentTestFailed())
        return;
}

void TestDashboardLatency::setOperation(const QString& operation)
{
    auto* watch = m_console.window->dashboard()->latencyWatch();
    typeDashboardFilter(*m_console.window, QStringLiteral("operationFilter"), operation, [watch] { return watch->reads(); });
}

void TestDashboardLatency::checkChart(const QString& operation)
{
    auto* chart = m_console.window->dashboard()->charts()->latency();
    QCOMPARE(chart->titleText(),
        operation.isEmpty() ? QStringLiteral("Latency per minute, all operations")
                            : QStringLiteral("Latency per minute, ") + operation);
    for (const auto& [kind, id] : { std::pair { 0, "run" }, std::pair { 1, "tts" } }) {
        for (const auto& [p, name] : { std::pair { 0.50, "P50" }, std::pair { 0.95, "P95" }, std::pair { 0.99, "P99" } }) {
            const QString objectName = QLatin1String(id) + QLatin1String(name);
            auto* series = chart->series(objectName);
            QVERIFY2(series, qPrintable(objectName));
            const auto points = series->points();
            // One point per planted minute, at the minute's start, nothing elsewhere.
            QCOMPARE(points.size(), 2);
            for (int minute = 0; minute < 2; ++minute) {
                std::vector<double> values;
                for (const auto& planted : m_planted)
                    if (planted.minute == minute && (operation.isEmpty() || planted.operation == operation.toStdString()))
                        values.push_back(kind == 0 ? planted.runMs : planted.runMs + planted.waitMs);
                const double exactSeconds = percentile(values, p) / 1000.0;
                const auto& point = points.at(minute);
                QCOMPARE(qint64(point.x()), (m_firstMinuteUs + minute * minuteUs) / 1000);
                QVERIFY2(near(point.y(), exactSeconds),
                    qPrintable(QStringLiteral("%1, minute %2: %3 s shown, %4 s planted")
                                   .arg(objectName)
                                   .arg(minute)
                                   .arg(point.y())
                                   .arg(exactSeconds)));
            }
        }
    }
    // The log axis holds every point.
    auto* y = qobject_cast<QLogValueAxis*>(chart->chart()->axes(Qt::Vertical).value(0));
    QVERIFY(y);
    for (auto* s : chart->chart()->series())
        for (const auto& point : static_cast<QXYSeries*>(s)->points())
            QVERIFY(point.y() >= y->min() && point.y() <= y->max());
    // The note names the last folded minute, as the database has it.
    const qint64 foldedToMs
        = querySql(*m_owner, "SELECT (extract(epoch FROM folded_to) * 1000)::bigint FROM idem.idem_latency_state")[0][0]
              .as<qint64>();
    const QString to = QDateTime::fromMSecsSinceEpoch(foldedToMs).toLocalTime().toString(QStringLiteral("HH:mm"));
    const QString from
        = QDateTime::fromMSecsSinceEpoch(foldedToMs - 60000).toLocalTime().toString(QStringLiteral("HH:mm"));
    QVERIFY2(chart->noteText() == QStringLiteral("last point %1–%2: the last folded minute").arg(from, to),
        qPrintable(chart->noteText()));
}

void TestDashboardLatency::chartAndTileShowThePlantedPercentiles()
{
    openWindow();
    auto* dashboard = m_console.window->dashboard();
    auto* watch = dashboard->latencyWatch();
    QVERIFY(watch);
    QTRY_VERIFY_WITH_TIMEOUT(watch->reads() >= 1, browserTimeoutMs);
    QVERIFY2(watch->error().isEmpty(), qPrintable(watch->error()));
    // The first read folded the planted minutes; the next is armed for the next due minute, not
    // for the next tick.
    QVERIFY(watch->nextReadInMs() > 0);

    checkChart(QString());

    // The tile: charge, the slower, with its p95 over both minutes.
    std::map<std::string, std::vector<double>> runs;
    for (const auto& p : m_planted)
        runs[p.operation].push_back(p.runMs);
    const double chargeP95 = percentile(runs["charge"], 0.95);
    const double refundP95 = percentile(runs["refund"], 0.95);
    QVERIFY(chargeP95 > 5000 && chargeP95 < 30000); // amber by the default thresholds
    auto* tile = dashboard->latencyTile();
    QTRY_VERIFY_WITH_TIMEOUT(!tile->stale(), browserTimeoutMs);
    QCOMPARE(tile->titleText(), QStringLiteral("Worst p95 run time"));
    const double shown = parseDuration(tile->valueText());
    QVERIFY2(near(shown, chargeP95), qPrintable(tile->valueText() + QStringLiteral(" vs %1 ms").arg(chargeP95)));
    QVERIFY2(tile->detailText().startsWith(QStringLiteral("charge, last 15 min to ")), qPrintable(tile->detailText()));
    QCOMPARE(tile->level(), Level::Warning);
    const QString tip = tile->toolTip();
    QVERIFY2(tip.contains(QStringLiteral("Amber from 5 s, red from 30 s.")), qPrintable(tip));
    const auto chargeLine = tip.indexOf(QStringLiteral("\ncharge: "));
    const auto refundLine = tip.indexOf(QStringLiteral("\nrefund: "));
    QVERIFY2(chargeLine >= 0 && refundLine > chargeLine, qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("(70 runs)")) && tip.contains(QStringLiteral("(30 runs)")), qPrintable(tip));
    const QString refundText = tip.mid(refundLine + 9).section(QLatin1String(" ("), 0, 0);
    QVERIFY2(near(parseDuration(refundText), refundP95), qPrintable(refundText + QStringLiteral(" vs %1 ms").arg(refundP95)));

    screenshot(QStringLiteral("dashboard-latency-en.png"));

    // A catalogue tile like every other: its place in the grid, the threshold line of the others.
    QCOMPARE(tile, dashboard->tile(Tile::WorstP95RunTime));
    QCOMPARE(tile->objectName(), QStringLiteral("tile_worstP95RunTime"));

    // A red threshold below the value turns it red, and it joins the alert line as any red tile
    // does; its threshold is kept where the others' are.
    const auto worst = static_cast<std::size_t>(Tile::WorstP95RunTime);
    auto s = dashboard->model()->settings();
    s.thresholds[worst].critical = std::floor(chargeP95 / 100.0 * 0.9) / 10.0; // tenths of a second, as saved
    dashboard->model()->setSettings(s);
    QTRY_COMPARE_WITH_TIMEOUT(tile->level(), Level::Critical, browserTimeoutMs);
    QTRY_VERIFY2_WITH_TIMEOUT(dashboard->alertText().contains(QStringLiteral("Worst p95 run time ")),
        qPrintable(dashboard->alertText()), browserTimeoutMs);
    QVERIFY(std::any_of(dashboard->model()->openAlerts().begin(), dashboard->model()->openAlerts().end(),
        [](const OpenAlert& a) { return a.tile == Tile::WorstP95RunTime; }));
    {
        QSettings saved(QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console"));
        QCOMPARE(saved.value(QStringLiteral("dashboard/thresholds/worstP95RunTime/critical")).toString(),
            QString::number(*s.thresholds[worst].critical));
        QCOMPARE(DashboardSettings::load(saved).thresholds[worst].critical, s.thresholds[worst].critical);
    }
    s.thresholds[worst] = DashboardSettings().thresholds[worst];
    dashboard->model()->setSettings(s);
    QTRY_COMPARE_WITH_TIMEOUT(tile->level(), Level::Warning, browserTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(!dashboard->alertText().contains(QStringLiteral("Worst p95 run time")), browserTimeoutMs);

    // Fifteen tiles in rows that differ by one at most: 5 × 3 at 1280 px, 8 + 7 at 1920 px.
    for (const auto& [width, columns] : { std::pair { 1280, 5 }, std::pair { 1920, 8 } }) {
        m_console.window->resize(width, m_console.window->height());
        QTRY_COMPARE(dashboard->tileGrid()->columns(), columns);
        const auto rows = [dashboard] {
            std::map<int, int> perRow; // tiles by their top edge, as laid out
            for (int i = 0; i < tileCount; ++i)
                perRow[dashboard->tile(static_cast<Tile>(i))->y()] += 1;
            return perRow;
        };
        QTRY_COMPARE(int(rows().size()), (tileCount + columns - 1) / columns);
        const auto perRow = rows();
        for (const auto& [y, n] : perRow)
            QVERIFY2(n >= columns - 1, qPrintable(QStringLiteral("%1 tiles in the row at y %2").arg(n).arg(y)));
        screenshot(QStringLiteral("dashboard-tiles-%1.png").arg(width));
    }

    // One operation: the chart is charge's alone.
    setOperation(QStringLiteral("charge"));
    checkChart(QStringLiteral("charge"));
    setOperation(QStringLiteral("refund"));
    checkChart(QStringLiteral("refund"));
    QVERIFY(near(parseDuration(tile->valueText()), refundP95));
    QCOMPARE(tile->level(), Level::Normal);
    setOperation(QString());

    // The same in Chinese (a picture to look at; the strings are checked complete by tst_desktop).
    language::apply(QStringLiteral("zh_CN"));
    QTest::qWait(200);
    QVERIFY(!tile->titleText().isEmpty());
    QVERIFY(tile->titleText() != QStringLiteral("Worst p95 run time"));
    screenshot(QStringLiteral("dashboard-latency-zh_CN.png"));
    language::apply(QStringLiteral("en"));
}

void TestDashboardLatency::olderSchemaSaysSoInWords()
{
    // What an older schema looks like to the console: its version table ends one version short of
    // what the console ships. The console reads the schema it ships (docs/deployment.md): it says
    // so, offers the upgrade, and reads nothing, latency included.
    const int older = idem::latestSchemaVersion() - 1;
    execSql(*m_owner, "DELETE FROM idem.idem_schema_version WHERE version > " + std::to_string(older));
    // openConsoleWindow() but for its wait for the first tick: there is none.
    auto& w = m_console;
    w.reset();
    w.session = std::make_unique<ConsoleSession>();
    w.profiles = std::make_unique<ProfileStore>();
    w.window = std::make_unique<MainWindow>(w.session.get(), w.profiles.get());
    w.window->resize(1280, 900);
    w.window->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.window.get()));
    QVERIFY(connectSession(*w.session, m_db->dsn()));
    auto* dashboard = m_console.window->dashboard();
    QCOMPARE(m_console.session->serverInfo().schemaVersion, older);
    const QString says = QStringLiteral("Schema idem has version %1, older than this console (%2): upgrade the schema first.")
                             .arg(older)
                             .arg(idem::latestSchemaVersion());
    QTRY_COMPARE_WITH_TIMEOUT(dashboard->model()->reason(), says, browserTimeoutMs);
    QCOMPARE(dashboard->model()->freshness(), DashboardModel::Freshness::NoData);
    QVERIFY(!m_console.session->canPoll());
    // The session's answer is in (the reason above): no reader may start on it, and none did.
    auto* watch = dashboard->latencyWatch();
    QCOMPARE(watch->reads(), 0);
    QVERIFY(watch->error().isEmpty());
    QVERIFY(!watch->pending());
    QCOMPARE(dashboard->model()->ticks(), 0);
    screenshot(QStringLiteral("dashboard-older-schema-en.png"));
}

void TestDashboardLatency::screenshot(const QString& name)
{
    // IDEM_SCREENSHOT_DIR: the pictures, to look at (not checked).
    const QString dir = qEnvironmentVariable("IDEM_SCREENSHOT_DIR");
    if (dir.isEmpty())
        return;
    QTest::qWait(300);
    QVERIFY(m_console.window->grab().save(dir + QLatin1Char('/') + name));
}

QTEST_MAIN(TestDashboardLatency)
#include "tst_dashboard_latency.moc"
