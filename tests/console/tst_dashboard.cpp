#include <QtTest>

#include <QBarSet>
#include <QComboBox>
#include <QLineEdit>
#include <QSettings>
#include <QTableWidget>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QXYSeries>

#include <array>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "operations/dashboardquery.h"
#include "schema/migrate.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/eventwatch.h"
#include "models/latencywatch.h"
#include "models/pausewatch.h"
#include "operations/readframe.h"
#include "models/profilestore.h"
#include "tests/support/testdb.h"
#include "views/chartpanel.h"
#include "views/dashboardrowsdialog.h"
#include "views/dashboardwidget.h"
#include "views/tilewidget.h"
#include "tests/support/countingproxy.h"

using namespace idem::console;
using idem::test::CountingProxy;

namespace {
constexpr int timeoutMs = 20000;

} // namespace

// The dashboard against a table in a known state: every tile's text and every chart point equal
// the numbers the fixture planted, written out by hand (with and without a tenant filter); one
// tick is one round trip; thresholds alert once per crossing and persist; a tile opens its rows.
class TestDashboard : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void tilesAndChartsShowTheTruth();
    void filterNarrowsTilesAndCharts();
    void criticalAlertsOncePerCrossing();
    void settingsPersistWithoutSecrets();
    void tileOpensItsRows();
    void oneRoundTripPerTick();
    void watchReadsOneRoundTripEach();
    void framedReadsKeepTheirGuarantees();
    void historyIsBoundedAndDownsampled();
    void monitorConnectionSettings();
    void tickNeverScansSucceededRows(); // it adds 20,000 succeeded rows
    void cappedFiguresReadAsLowerBounds(); // last: it adds 10,500 failed rows

private:
    std::unique_ptr<DashboardWidget> dashboard(ConsoleSession& session, int ticks = 1);
    void checkTiles(DashboardWidget& w, const char* tenant);
    ConnectionSettings settings() const;

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    QTemporaryDir m_dir;
    std::unique_ptr<QSettings> m_settings;
    // The server's clock when the fixture was planted: the minute its counters call "now"
    // (epoch seconds) and the instant its rows' ages count from (epoch ms).
    qint64 m_plantedMinute = 0;
    qint64 m_plantedAtMs = 0;
};

ConnectionSettings TestDashboard::settings() const
{
    ConnectionSettings s;
    s.conninfo = QString::fromStdString(m_db->dsn());
    return s;
}

void TestDashboard::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("dashboard", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("console.conf")), QSettings::IniFormat);
    pqxx::work w(*m_conn);
    // Every state: live and expired leases, retryable (one uncertain), failed permanent and
    // exhausted, old unfinished rows, succeeded rows (old ones too, which are not long-unfinished).
    // And the rows that tell a figure's definition from a near miss (the operator's guide and
    // the tiles' tooltips say what each is): n1 is processing with no lease at all (an expired
    // lease: the next claim takes it over); u1 and x2 are out of attempts (max 5) but still
    // waiting to retry; f3 and f4 failed hours ago (failed, never long-unfinished: not in flight);
    // x5 failed with no error class (failed and not permanent: exhausted).
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until,
                                           attempts, error_class, error_message, next_attempt_at, created_at, updated_at)
        SELECT k, 'v1:' || repeat('a', 64), st, CASE WHEN st = 'processing' THEN gen_random_uuid() END,
               CASE WHEN st = 'processing' THEN now() + lease END, att, ec,
               CASE WHEN st <> 'processing' THEN 'boom' END,
               CASE WHEN st = 'retryable_failed' THEN now() + interval '1 minute' END, now() - age, now() - age
        FROM (VALUES
            ('ta:charge:p1', 'processing', interval '10 minutes', 1, NULL, interval '0'),
            ('ta:charge:p2', 'processing', interval '10 minutes', 2, NULL, interval '4 hours'),
            ('tb:refund:p3', 'processing', interval '10 minutes', 1, NULL, interval '3 minutes'),
            ('ta:charge:e1', 'processing', interval '-1 minute', 3, NULL, interval '1 minute'),
            ('tb:refund:e2', 'processing', interval '-5 minutes', 4, NULL, interval '3 hours'),
            ('tb:refund:n1', 'processing', NULL, 2, NULL, interval '90 minutes'),
            ('ta:charge:r1', 'retryable_failed', NULL, 2, 'retryable', interval '2 hours'),
            ('ta:charge:r2', 'retryable_failed', NULL, 1, 'retryable', interval '0'),
            ('tb:refund:r3', 'retryable_failed', NULL, 2, 'unknown', interval '0'),
            ('ta:charge:u1', 'retryable_failed', NULL, 12, 'unknown', interval '0'),
            ('ta:charge:x2', 'retryable_failed', NULL, 5, 'retryable', interval '0'),
            ('ta:charge:f1', 'failed', NULL, 1, 'permanent', interval '0'),
            ('tb:refund:f2', 'failed', NULL, 1, 'permanent', interval '0'),
            ('tb:charge:x1', 'failed', NULL, 5, 'retryable', interval '0'),
            ('ta:charge:f3', 'failed', NULL, 5, 'unknown', interval '5 hours'),
            ('tb:refund:f4', 'failed', NULL, 1, 'permanent', interval '2 hours'),
            ('tb:refund:x5', 'failed', NULL, 3, NULL, interval '0')
        ) AS v(k, st, lease, att, ec, age)
    )");
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts, created_at, updated_at)
        SELECT 'ta:charge:s' || i, 'v1:' || repeat('b', 64), 'succeeded', '{}', 1,
               now() - CASE WHEN i <= 10 THEN interval '2 hours' ELSE interval '0' END, now()
        FROM generate_series(1, 40) i
    )");
    // Counters in the current minute (m0: on the tiles, not yet on the charts), the minute before
    // (m1, the charts' newest point) and four minutes back (m4), each outcome a number of its own
    // so that a series drawn from another outcome or another minute shows; three hours back
    // (outside every window). The expectations are written out in checkTiles().
    w.exec(R"(
        -- through add_counters(), the workers' flush: it writes the totals the tick reads too
        SELECT idem.add_counters(jsonb_agg(jsonb_build_object('m', extract(epoch FROM date_trunc('minute', now()) - back)::bigint,
               't', t, 'o', o, 'w', oc, 'n', n)))
        FROM (VALUES
            (interval '0', 'ta', 'charge', 'acquired', 50), (interval '0', 'ta', 'charge', 'conflict', 32),
            (interval '0', 'ta', 'charge', 'stale_token', 2),
            (interval '0', 'tb', 'refund', 'acquired', 60), (interval '0', 'tb', 'refund', 'stale_token', 3),
            (interval '1 minute', 'ta', 'charge', 'acquired', 11), (interval '1 minute', 'ta', 'charge', 'replayed', 5),
            (interval '1 minute', 'ta', 'charge', 'in_progress', 3), (interval '1 minute', 'ta', 'charge', 'conflict', 2),
            (interval '1 minute', 'ta', 'charge', 'reacquired_lease', 4),
            (interval '1 minute', 'ta', 'charge', 'reacquired_retry', 2),
            (interval '1 minute', 'ta', 'charge', 'retry_failed', 7), (interval '1 minute', 'ta', 'charge', 'failed_permanent', 10),
            (interval '1 minute', 'ta', 'charge', 'failed_retryable', 6), (interval '1 minute', 'ta', 'charge', 'stale_token', 1),
            (interval '1 minute', 'tb', 'refund', 'acquired', 13), (interval '1 minute', 'tb', 'refund', 'replayed', 4),
            (interval '1 minute', 'tb', 'refund', 'in_progress', 1), (interval '1 minute', 'tb', 'refund', 'conflict', 6),
            (interval '1 minute', 'tb', 'refund', 'reacquired_retry', 8),
            (interval '1 minute', 'tb', 'refund', 'retry_failed', 5), (interval '1 minute', 'tb', 'refund', 'failed_permanent', 3),
            (interval '4 minutes', 'ta', 'charge', 'acquired', 30), (interval '4 minutes', 'ta', 'charge', 'replayed', 16),
            (interval '4 minutes', 'ta', 'charge', 'in_progress', 17), (interval '4 minutes', 'ta', 'charge', 'conflict', 18),
            (interval '4 minutes', 'ta', 'charge', 'reacquired_lease', 19),
            (interval '4 minutes', 'ta', 'charge', 'retry_failed', 23), (interval '4 minutes', 'ta', 'charge', 'failed_permanent', 22),
            (interval '4 minutes', 'tb', 'refund', 'acquired', 40), (interval '4 minutes', 'tb', 'refund', 'conflict', 3),
            (interval '3 hours', 'ta', 'charge', 'acquired', 100), (interval '3 hours', 'ta', 'charge', 'conflict', 50)
        ) AS v(back, t, o, oc, n)
    )");
    const auto clock = w.exec("SELECT extract(epoch FROM date_trunc('minute', now()))::bigint,"
                              " (extract(epoch FROM now()) * 1000)::bigint")[0];
    m_plantedMinute = clock[0].as<qint64>();
    m_plantedAtMs = clock[1].as<qint64>();
    w.commit();
    pqxx::nontransaction(*m_conn).exec("ANALYZE idem.task_idempotency");
}

void TestDashboard::cleanupTestCase()
{
    m_conn.reset();
    m_db.reset();
}

std::unique_ptr<DashboardWidget> TestDashboard::dashboard(ConsoleSession& session, int ticks)
{
    m_settings->clear();
    auto w = std::make_unique<DashboardWidget>(&session, m_settings.get());
    w->resize(1200, 800);
    w->show();
    session.connectTo(settings());
    const auto* model = w->model();
    if (!QTest::qWaitFor([&] { return model->ticks() >= ticks && model->attempts(); }, timeoutMs))
        qWarning("dashboard did not tick: %s", qPrintable(w->freshnessText()));
    return w;
}

namespace {
// What the fixture planted, counted by hand, unfiltered and for tenant tb (row keys in the comments).
struct PlantedRows {
    std::int64_t processing, expired, waiting, uncertain, permanent, exhausted, longUnfinished;
    int oldestHours; // the oldest processing row's age when planted
    std::array<double, idem::attemptsHistogramTopBin> attempts; // rows by attempts 1, 2, ..., 10 or more
};
// One minute of counters as the console's per-minute series draw it.
struct PlantedMinute {
    int back; // minutes before the fixture's current minute
    double fresh, replay, inProgress, conflict, reclaim, failedRetries, permanent;
};
struct PlantedCounts {
    std::int64_t acquired, duplicates, retries, failedRetries, conflicts, staleTokens; // the tiles' window
    std::array<PlantedMinute, 3> minutes;
};
constexpr std::int64_t plantedTotalRows = 17 + 40;

const PlantedRows& plantedRows(const char* tenant)
{
    static const PlantedRows all {
        3, // p1 p2 p3
        3, // e1 e2 n1 (no lease at all)
        5, // r1 r2 r3 u1 x2 (u1, x2 out of attempts)
        2, // r3 u1
        3, // f1 f2 f4
        3, // x1 f3 x5 (no class)
        4, // p2 e2 n1 r1; not the old failed f3, f4, nor the old succeeded rows
        4, // p2
        { 6 /* p1 p3 r2 f1 f2 f4 */, 4 /* p2 n1 r1 r3 */, 2 /* e1 x5 */, 1 /* e2 */, 3 /* x2 x1 f3 */, 0, 0, 0, 0,
            1 /* u1 */ },
    };
    static const PlantedRows tb {
        1, // p3
        2, // e2 n1
        1, // r3
        1, // r3
        2, // f2 f4
        2, // x1 x5
        2, // e2 n1
        3, // e2
        { 3 /* p3 f2 f4 */, 2 /* n1 r3 */, 1 /* x5 */, 1 /* e2 */, 1 /* x1 */, 0, 0, 0, 0, 0 },
    };
    return tenant ? tb : all;
}

const PlantedCounts& plantedCounts(const char* tenant)
{
    // new = acquired, replay, in progress, conflict, reclaim = retries = reacquired_*, failed
    // retries = retry_failed, permanent = failed_permanent
    static const PlantedCounts all {
        110 + 24 + 70, // acquired
        (9 + 16) + (4 + 17) + (32 + 8 + 21), // replayed, in progress, conflict
        14 + 19,
        12 + 23,
        32 + 8 + 21,
        2 + 3 + 1,
        { { { 0, 110, 0, 0, 32, 0, 0, 0 }, { 1, 24, 9, 4, 8, 14, 12, 13 }, { 4, 70, 16, 17, 21, 19, 23, 22 } } },
    };
    static const PlantedCounts tb {
        60 + 13 + 40,
        4 + 1 + (6 + 3),
        8,
        5,
        6 + 3,
        3,
        { { { 0, 60, 0, 0, 0, 0, 0, 0 }, { 1, 13, 4, 1, 6, 8, 5, 3 }, { 4, 40, 0, 0, 3, 0, 0, 0 } } },
    };
    return tenant ? tb : all;
}
} // namespace

void TestDashboard::checkTiles(DashboardWidget& w, const char* tenant)
{
    // tenant: nullptr or "tb", the two views the fixture wrote the numbers of.
    QVERIFY(!tenant || std::string(tenant) == "tb");
    const auto& rows = plantedRows(tenant);
    const auto& counts = plantedCounts(tenant);
    QVERIFY(w.model()->latest());
    const qint64 serverNowMs = w.model()->latest()->serverNowMs;
    const auto text = [&](Tile t) { return w.tile(t)->valueText(); };
    const auto number = [](std::int64_t n) { return QLocale().toString(qint64(n)); };
    QCOMPARE(text(Tile::Processing), number(rows.processing));
    QCOMPARE(text(Tile::ExpiredLeases), number(rows.expired));
    QCOMPARE(text(Tile::WaitingRetry), number(rows.waiting));
    QCOMPARE(text(Tile::Uncertain), number(rows.uncertain));
    QCOMPARE(text(Tile::Failed), number(rows.permanent + rows.exhausted));
    QCOMPARE(w.tile(Tile::Failed)->detailText(),
        QStringLiteral("%1 permanent · %2 exhausted").arg(number(rows.permanent), number(rows.exhausted)));
    QCOMPARE(text(Tile::LongUnfinished), number(rows.longUnfinished));
    QCOMPARE(text(Tile::Retries), number(counts.retries));
    // Failures of a retry (attempt 2 or later), not every failure.
    QCOMPARE(text(Tile::FailedRetries), number(counts.failedRetries));
    QCOMPARE(text(Tile::DigestConflicts), number(counts.conflicts));
    QCOMPARE(text(Tile::StaleTokens), number(counts.staleTokens));
    QCOMPARE(text(Tile::DuplicateRatio),
        QStringLiteral("%1 %").arg(QLocale().toString(
            100.0 * double(counts.duplicates) / double(counts.acquired + counts.duplicates), 'f', 1)));
    // The oldest processing row has aged since it was planted by what the server's clock says
    // (the reading's now); within a few milliseconds either way of a minute's turn both are fine.
    const double oldest = rows.oldestHours * 3600.0 + double(serverNowMs - m_plantedAtMs) / 1000.0;
    QStringList oldestTexts;
    for (double s : { oldest - 0.01, oldest + 0.01 }) {
        const auto whole = qint64(s);
        const auto minutes = (whole % 3600) / 60; // a zero minute is left out: "4 h"
        oldestTexts << (minutes ? QStringLiteral("%1 h %2 min").arg(whole / 3600).arg(minutes)
                                : QStringLiteral("%1 h").arg(whole / 3600));
    }
    QVERIFY2(text(Tile::OldestProcessing).startsWith(oldestTexts.first())
            || text(Tile::OldestProcessing).startsWith(oldestTexts.last()),
        qPrintable(text(Tile::OldestProcessing) + QStringLiteral(" / ") + oldestTexts.join(QLatin1Char('|'))));
    // Table-wide whatever the filter: after ANALYZE of a small table the estimate is exact.
    QCOMPARE(text(Tile::TotalRows), QStringLiteral("≈ ") + number(plantedTotalRows));

    // Charts: the live lines end on this tick's rows.
    auto* charts = w.charts();
    const auto last = [&](const char* name) {
        auto* s = charts->series(QString::fromLatin1(name));
        return s && s->count() ? s->at(s->count() - 1) : QPointF(-1, -1);
    };
    QCOMPARE(last("processing").y(), double(rows.processing));
    QCOMPARE(last("expired").y(), double(rows.expired));
    // The per-minute lines: one point per complete minute of the window, the planted counts in
    // their minutes and 0 in every other. The current minute is still counting: it is left out
    // until it closes (drawn as a full minute it would drop every line at the right edge), so
    // the lines end on the minute before the reading's. A run that crossed a minute since the
    // fixture was planted finds m0 closed and drawn, with its own numbers.
    const qint64 newestMinute = serverNowMs / 60000 * 60 - 60;
    const auto planted = [&](qint64 minute) -> const PlantedMinute* {
        for (const auto& m : counts.minutes)
            if (minute == m_plantedMinute - 60 * m.back)
                return &m;
        return nullptr;
    };
    const std::pair<const char*, double PlantedMinute::*> perMinute[]
        = { { "new", &PlantedMinute::fresh }, { "replay", &PlantedMinute::replay },
              { "inprogress", &PlantedMinute::inProgress }, { "conflict", &PlantedMinute::conflict },
              { "reclaim", &PlantedMinute::reclaim }, { "retries", &PlantedMinute::reclaim },
              { "failedretries", &PlantedMinute::failedRetries }, { "permanent", &PlantedMinute::permanent } };
    for (const auto& [name, field] : perMinute) {
        auto* series = charts->series(QString::fromLatin1(name));
        QVERIFY2(series && series->count() > 0, name);
        QVERIFY2(qint64(series->at(series->count() - 1).x()) == newestMinute * 1000,
            qPrintable(QStringLiteral("%1 ends at %2, the newest complete minute is %3")
                           .arg(QLatin1String(name))
                           .arg(qint64(series->at(series->count() - 1).x()))
                           .arg(newestMinute * 1000)));
        int plantedSeen = 0;
        for (int i = 0; i < series->count(); ++i) {
            const qint64 minute = qint64(series->at(i).x()) / 1000;
            const auto* m = planted(minute);
            plantedSeen += m ? 1 : 0;
            const double expected = m ? m->*field : 0.0;
            QVERIFY2(series->at(i).y() == expected,
                qPrintable(QStringLiteral("%1 at %2 min from the fixture's minute: %3, planted %4")
                               .arg(QLatin1String(name))
                               .arg((minute - m_plantedMinute) / 60)
                               .arg(series->at(i).y())
                               .arg(expected)));
        }
        // m1 and m4 always (closed, in the 15 minutes), m0 once it has closed.
        QCOMPARE(plantedSeen, newestMinute >= m_plantedMinute ? 3 : 2);
    }
    // The duplicate ratio per minute: a point for each minute with claims, none for the others.
    auto* ratio = charts->series(QStringLiteral("duplicateratio"));
    QVERIFY(ratio);
    QList<QPointF> expectedRatio;
    for (auto it = counts.minutes.rbegin(); it != counts.minutes.rend(); ++it) {
        const qint64 minute = m_plantedMinute - 60 * it->back;
        const double dup = it->replay + it->inProgress + it->conflict;
        if (minute <= newestMinute)
            expectedRatio.append(QPointF(double(minute) * 1000.0, dup / (it->fresh + dup) * 100.0));
    }
    QCOMPARE(ratio->points(), expectedRatio);

    auto* bars = charts->attemptsBars();
    QCOMPARE(bars->count(), idem::attemptsHistogramTopBin);
    for (int bin = 1; bin <= idem::attemptsHistogramTopBin; ++bin)
        QVERIFY2(bars->at(bin - 1) == rows.attempts[std::size_t(bin - 1)],
            qPrintable(QStringLiteral("attempts %1: %2 rows, planted %3")
                           .arg(bin)
                           .arg(bars->at(bin - 1))
                           .arg(rows.attempts[std::size_t(bin - 1)])));
}

void TestDashboard::tilesAndChartsShowTheTruth()
{
    ConsoleSession session;
    auto w = dashboard(session);
    QCOMPARE(w->model()->freshness(), DashboardModel::Freshness::Live);
    checkTiles(*w, nullptr);
    QVERIFY2(w->freshnessText().contains(QStringLiteral("Live")), qPrintable(w->freshnessText()));
    QVERIFY2(w->statusText().contains(QStringLiteral("ms per tick")), qPrintable(w->statusText()));
    QVERIFY2(w->statusText().contains(QStringLiteral("primary")), qPrintable(w->statusText()));
    for (auto t : { Tile::Processing, Tile::Failed })
        QVERIFY(!w->tile(t)->stale());
    // Default thresholds: 3 expired leases is amber (from 1), not red (from 10).
    QCOMPARE(w->tile(Tile::ExpiredLeases)->level(), Level::Warning);
    // The console's own cost: the chart ends on the last tick's measured milliseconds.
    auto* cost = w->charts()->series(QStringLiteral("tickms"));
    QVERIFY(cost && cost->count() > 0);
    QCOMPARE(cost->at(cost->count() - 1).y(), double(w->model()->lastTickMs()));
    QVERIFY2(w->statusText().contains(QStringLiteral("%1 ms per tick").arg(w->model()->lastTickMs())),
        qPrintable(w->statusText()));
}

void TestDashboard::filterNarrowsTilesAndCharts()
{
    ConsoleSession session;
    auto w = dashboard(session);
    const int before = w->model()->ticks();
    QTest::keyClicks(w->findChild<QLineEdit*>(QStringLiteral("tenantFilter")), QStringLiteral("tb"));
    QTest::keyClick(w->findChild<QLineEdit*>(QStringLiteral("tenantFilter")), Qt::Key_Return);
    QCOMPARE(w->model()->settings().tenant, QStringLiteral("tb"));
    QTRY_VERIFY_WITH_TIMEOUT(w->model()->ticks() > before && w->model()->attempts(), timeoutMs);
    checkTiles(*w, "tb");
    QCOMPARE(w->model()->filterFor(Tile::Failed).tenant, std::optional<std::string>("tb"));
}

void TestDashboard::criticalAlertsOncePerCrossing()
{
    ConsoleSession session;
    auto w = dashboard(session);
    QSignalSpy alerts(w->model(), &DashboardModel::alert);
    w->model()->setInterval(1000);
    w->model()->setThreshold(Tile::ExpiredLeases, { 1, 2 }); // three expired rows: red
    const int start = w->model()->ticks();
    QTRY_VERIFY_WITH_TIMEOUT(w->model()->ticks() >= start + 3, timeoutMs);
    QCOMPARE(alerts.count(), 1); // not once per tick
    QCOMPARE(alerts.first().first().value<Tile>(), Tile::ExpiredLeases);
    QCOMPARE(w->tile(Tile::ExpiredLeases)->level(), Level::Critical);
    QVERIFY2(
        w->alertText().contains(QStringLiteral("Expired leases 3 (red from 2) since ")), qPrintable(w->alertText()));
    w->model()->setThreshold(Tile::ExpiredLeases, { 1, 50 }); // back to amber
    QCOMPARE(w->tile(Tile::ExpiredLeases)->level(), Level::Warning);
    w->model()->setThreshold(Tile::ExpiredLeases, { 1, 2 }); // crosses again
    QTRY_COMPARE_WITH_TIMEOUT(alerts.count(), 2, timeoutMs);
}

void TestDashboard::settingsPersistWithoutSecrets()
{
    ConsoleSession session;
    auto w = dashboard(session);
    auto* model = w->model();
    model->setInterval(5000);
    model->setWindowMinutes(360);
    model->setThreshold(Tile::DigestConflicts, { std::nullopt, 3 });
    model->setFilter(QStringLiteral("ta"), QStringLiteral("charge"));
    model->setPaused(true);
    auto* window = w->findChild<QComboBox*>(QStringLiteral("windowCombo"));
    QCOMPARE(window->currentText(), QStringLiteral("6 h"));
    QSettings reread(m_settings->fileName(), QSettings::IniFormat);
    const auto loaded = DashboardSettings::load(reread);
    QCOMPARE(loaded.intervalMs, 5000);
    QCOMPARE(loaded.windowMinutes, 360);
    QCOMPARE(loaded.paused, true);
    QCOMPARE(loaded.tenant, QStringLiteral("ta"));
    QVERIFY(!loaded.thresholds[std::size_t(Tile::DigestConflicts)].warning);
    QCOMPARE(*loaded.thresholds[std::size_t(Tile::DigestConflicts)].critical, 3.0);
    QVERIFY(loaded == model->settings());
    // Paused: once the tick the filter asked for has answered, no tick comes by itself, not even
    // at the shortest interval the model accepts: none starts in five such intervals.
    QTRY_VERIFY_WITH_TIMEOUT(!model->tickPending(), timeoutMs);
    model->setInterval(DashboardSettings::minIntervalMs);
    QVERIFY(model->settings().paused);
    const int ticks = model->ticks();
    const bool ticked = QTest::qWaitFor(
        [&] { return model->ticks() != ticks || model->tickPending(); }, 5 * DashboardSettings::minIntervalMs);
    QVERIFY2(!ticked,
        qPrintable(QStringLiteral("paused, yet a tick came: %1 ticks, then %2%3")
                       .arg(ticks)
                       .arg(model->ticks())
                       .arg(model->tickPending() ? QStringLiteral(" and one pending") : QString())));
    // Unpaused, the same interval brings ticks by themselves (the one the resume asks for, then more).
    model->setPaused(false);
    QTRY_VERIFY_WITH_TIMEOUT(model->ticks() >= ticks + 3, timeoutMs);
    QFile file(m_settings->fileName());
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray content = file.readAll();
    QVERIFY(!content.contains("password"));
    QVERIFY(!content.contains("host="));
}

void TestDashboard::tileOpensItsRows()
{
    ConsoleSession session;
    auto w = dashboard(session);
    QSignalSpy open(w.get(), &DashboardWidget::openRows);
    QTest::mouseClick(w->tile(Tile::Failed), Qt::LeftButton);
    QCOMPARE(open.count(), 1);
    const auto filter = open.first().first().value<idem::TaskFilter>();
    QCOMPARE(filter.statuses, std::vector<std::string>({ "failed" }));
    QTest::mouseClick(w->tile(Tile::StaleTokens), Qt::LeftButton); // no rows behind it
    QCOMPARE(open.count(), 1);

    DashboardRowsDialog dialog(&session, filter, QStringLiteral("Failed"));
    QSignalSpy loaded(&dialog, &DashboardRowsDialog::loaded);
    QVERIFY(loaded.wait(timeoutMs));
    QCOMPARE(dialog.table()->rowCount(), 6); // the failed rows planted
    QStringList keys;
    for (int r = 0; r < dialog.table()->rowCount(); ++r)
        keys << dialog.table()->item(r, 0)->text();
    keys.sort();
    QCOMPARE(keys,
        QStringList({ QStringLiteral("ta:charge:f1"), QStringLiteral("ta:charge:f3"), QStringLiteral("tb:charge:x1"),
            QStringLiteral("tb:refund:f2"), QStringLiteral("tb:refund:f4"), QStringLiteral("tb:refund:x5") }));
}

void TestDashboard::oneRoundTripPerTick()
{
    // The console reaches the server only through the relay, as a login role that can read.
    const std::string role = "idem_t_dashboard_rt";
    idem::test::createLoginRole(role, "pw-rt", "");
    {
        pqxx::work w(*m_conn);
        // What roles.sql gives idem_reader (this database is migrated without it): read every
        // table, run the bounded figures and the shared exact refresh.
        w.exec("GRANT USAGE ON SCHEMA idem TO " + role + "; GRANT SELECT ON ALL TABLES IN SCHEMA idem TO " + role
            + "; GRANT EXECUTE ON FUNCTION idem.idem_live_stats(text, text, integer), idem.idem_exact_refresh_begin(),"
              " idem.idem_exact_refresh_finish(uuid, integer) TO "
            + role);
        w.commit();
    }
    const auto options = idem::parseConninfo(m_db->dsn());
    CountingProxy proxy(QString::fromStdString(options.at("host")), quint16(std::stoi(options.at("port"))));
    QVERIFY(proxy.listening());
    ConsoleSession session;
    m_settings->clear();
    DashboardWidget w(&session, m_settings.get());
    w.model()->setInterval(1000);
    ConnectionSettings s;
    s.conninfo = QString::fromStdString(idem::test::dsnWith(m_db->dsn(),
        { { "host", "127.0.0.1" }, { "port", std::to_string(proxy.port()) }, { "user", role }, { "password", "pw-rt" },
            { "sslmode", "disable" }, { "gssencmode", "disable" }, { "passfile", "/dev/null" } }));
    session.connectTo(s);
    QTRY_VERIFY2_WITH_TIMEOUT(w.model()->ticks() >= 2, qPrintable(w.model()->reason()), timeoutMs);
    // The first tick found the shared exact figures due and refreshed them (two round trips of
    // their own, then not again for at least 20 s): the ticks are counted after that.
    QTRY_VERIFY_WITH_TIMEOUT(w.model()->sharedRefreshes() == 1 && !w.model()->exactRefreshPending(), timeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(!w.model()->tickPending(), timeoutMs);
    const int trips = proxy.roundTrips();
    const int ticks = w.model()->ticks();
    QTRY_VERIFY_WITH_TIMEOUT(w.model()->ticks() >= ticks + 3 && !w.model()->tickPending(), timeoutMs);
    QCOMPARE(proxy.roundTrips() - trips, w.model()->ticks() - ticks);

    // The first tick of the connection set the bound for the rest, and it is in force. The
    // session stays read-write (the tick may store the shared figures); what the role may
    // write is what keeps it harmless (tst_boundedstats).
    QString seen;
    QObject context;
    session.submit(
        [](pqxx::connection& c, const idem::SchemaName&) {
            pqxx::nontransaction n(c);
            const auto r = n.exec("SELECT current_setting('statement_timeout') || ' ' || "
                                  "current_setting('default_transaction_read_only')");
            return QVariant(QString::fromStdString(r[0][0].as<std::string>()));
        },
        &context, [&seen](const QVariant& v) { seen = v.toString(); });
    QTRY_VERIFY_WITH_TIMEOUT(!seen.isEmpty(), timeoutMs);
    QCOMPARE(seen, QStringLiteral("5s off"));
}

// Issue 45 item 3: the reads the dashboard's slower watches make beside the tick (pauses, the
// latency roll-up and view, the chart's events) are one round trip each on a direct connection:
// a read's BEGIN READ ONLY, bound timeout, catalog path, statements and COMMIT travel together.
void TestDashboard::watchReadsOneRoundTripEach()
{
    const auto options = idem::parseConninfo(m_db->dsn());
    CountingProxy proxy(QString::fromStdString(options.at("host")), quint16(std::stoi(options.at("port"))));
    QVERIFY(proxy.listening());
    ConsoleSession session;
    PauseWatch pauses(&session);
    pauses.setInterval(3600000); // read when asked, below
    LatencyWatch latency(&session);
    EventWatch events(&session);
    ConnectionSettings s;
    s.conninfo = QString::fromStdString(idem::test::dsnWith(m_db->dsn(),
        { { "host", "127.0.0.1" }, { "port", std::to_string(proxy.port()) }, { "sslmode", "disable" },
            { "gssencmode", "disable" } }));
    session.connectTo(s);
    const auto idle = [&] { return !pauses.pending() && !latency.pending() && !events.pending(); };
    QTRY_VERIFY_WITH_TIMEOUT(pauses.reads() >= 1 && latency.reads() >= 1 && events.reads() >= 1 && idle(), timeoutMs);
    QVERIFY2(pauses.error().isEmpty() && latency.error().isEmpty() && events.error().isEmpty(),
        qPrintable(pauses.error() + latency.error() + events.error()));
    QVERIFY(latency.reading().has_value());
    // Each watch read three times more, one at a time; whatever else reads meanwhile (a watch's
    // own timer) is one of the reads counted too.
    const int trips = proxy.roundTrips();
    const auto readsNow = [&] { return pauses.reads() + latency.reads() + events.reads(); };
    const int reads = readsNow();
    for (int i = 0; i < 3; ++i) {
        for (auto refresh : { std::function<void()>([&] { pauses.refreshNow(); }),
                 std::function<void()>([&] { latency.refreshNow(); }),
                 std::function<void()>([&] { events.refreshNow(); }) }) {
            const int before = readsNow();
            refresh();
            QTRY_VERIFY_WITH_TIMEOUT(readsNow() > before && idle(), timeoutMs);
        }
    }
    QVERIFY2(pauses.error().isEmpty() && latency.error().isEmpty() && events.error().isEmpty(),
        qPrintable(pauses.error() + latency.error() + events.error()));
    QVERIFY(readsNow() - reads >= 9);
    QCOMPARE(proxy.roundTrips() - trips, readsNow() - reads);
}

// What a framed read guarantees whichever way it travels: read-only, bounded by its statement
// timeout, every value bound; a refused read is rolled back and leaves the connection as it was
// (same backend, no transaction, the session's own statement timeout untouched).
void TestDashboard::framedReadsKeepTheirGuarantees()
{
    ConsoleSession session;
    session.connectTo(settings());
    QTRY_VERIFY_WITH_TIMEOUT(session.state() == ConsoleSession::State::Connected, timeoutMs);
    QStringList seen;
    QObject context;
    session.submit(
        [](pqxx::connection& c, const idem::SchemaName&) {
            QStringList out;
            const auto pid = c.backendpid();
            const auto setting = [&c] {
                pqxx::nontransaction n(c);
                return n.exec("SELECT current_setting('statement_timeout')")[0][0].as<std::string>();
            };
            const std::string before = setting();
            const auto refused = [&](const std::string& sql, int timeoutMs) {
                idem::FrameTransaction t;
                t.statementTimeoutMs = timeoutMs;
                idem::ReadFrame frame(t);
                frame.add(sql);
                try {
                    frame.run(c);
                    return std::string("ran");
                } catch (const pqxx::sql_error& e) {
                    return e.sqlstate();
                }
            };
            out << QString::fromStdString(refused("UPDATE idem.task_idempotency SET attempts = attempts", 5000));
            out << QString::fromStdString(refused("SELECT pg_sleep(3)", 200));
            idem::ReadFrame frame;
            frame.add("SELECT $1::text, $2::text IS NULL, current_setting('transaction_read_only'),"
                      " current_setting('statement_timeout'), current_setting('search_path')",
                "it's; COMMIT", static_cast<const char*>(nullptr));
            frame.add("SELECT pg_backend_pid()");
            const auto r = frame.run(c);
            const auto row = r[0].at(0);
            out << QString::fromStdString(row[0].as<std::string>() + "|" + row[1].as<std::string>() + "|"
                + row[2].as<std::string>() + "|" + row[3].as<std::string>() + "|" + row[4].as<std::string>());
            out << QString::number(r[1].at(0)[0].as<int>() == pid) << QString::number(setting() == before);
            return QVariant(out);
        },
        &context, [&seen](const QVariant& v) { seen = v.toStringList(); });
    QTRY_VERIFY_WITH_TIMEOUT(!seen.isEmpty(), timeoutMs);
    QCOMPARE(seen, QStringList({ QStringLiteral("25006"), QStringLiteral("57014"),
                       QStringLiteral("it's; COMMIT|t|on|5s|pg_catalog"), QStringLiteral("1"), QStringLiteral("1") }));
}

void TestDashboard::historyIsBoundedAndDownsampled()
{
    DashboardHistory h;
    const qint64 t0 = 1'700'000'000'000;
    for (int i = 0; i < DashboardHistory::liveCapacity + 500; ++i)
        h.addLive({ t0 + qint64(i) * 1000, i % 97, (i == 40'000) ? 999 : 0 });
    QCOMPARE(h.live().size(), DashboardHistory::liveCapacity);
    QCOMPARE(h.live().at(0).ms, t0 + 500 * 1000); // the oldest 500 are gone
    const qint64 end = h.live().back().ms;
    const auto all = allPoints(h.live(), &LiveSample::expired, end - 86'400'000, end);
    const auto reduced = downsampleMinMax(h.live(), &LiveSample::expired, end - 86'400'000, end, 800);
    QVERIFY(all.size() > 80'000);
    QVERIFY2(reduced.size() <= 2 * 800 + 1, qPrintable(QString::number(reduced.size())));
    // The one-second spike survives the reduction, and the line ends on the newest sample.
    QVERIFY(std::any_of(reduced.begin(), reduced.end(), [](const QPointF& p) { return p.y() == 999; }));
    QCOMPARE(reduced.last(), all.last());

    std::vector<idem::CounterBucket> buckets(3);
    for (int i = 0; i < 3; ++i) {
        buckets[std::size_t(i)].minuteEpoch = 60 * (1000 + i);
        buckets[std::size_t(i)].acquired = i;
    }
    h.mergeBuckets(buckets);
    buckets[2].acquired = 42; // the current minute kept counting
    h.mergeBuckets({ buckets[2] });
    QCOMPARE(int(h.minutes().size()), 3);
    QCOMPARE(h.minutes().back().acquired, 42);
    idem::CounterBucket later;
    later.minuteEpoch = 60 * (1000 + 2 + DashboardHistory::minuteCapacity);
    h.mergeBuckets({ later });
    QCOMPARE(int(h.minutes().size()), 1); // a day later, the old minutes are gone
}

void TestDashboard::monitorConnectionSettings()
{
    ConnectionSettings s;
    s.conninfo = QStringLiteral("host=primary.example dbname=app");
    s.password = QStringLiteral("secret-pw");
    s.monitorConninfo = QStringLiteral("host=standby.example dbname=app password=monitor-pw");
    // The monitor prefers a standby unless told otherwise, and keeps the rest of the settings.
    const auto m = monitorSettings(s);
    const auto options = idem::parseConninfo(m.conninfo.toStdString());
    QCOMPARE(options.at("host"), std::string("standby.example"));
    QCOMPARE(options.at("target_session_attrs"), std::string("prefer-standby"));
    QCOMPARE(m.password, s.password);
    QVERIFY(m.monitorConninfo.isEmpty());
    s.monitorConninfo = QStringLiteral("host=standby.example target_session_attrs=any");
    QCOMPARE(
        idem::parseConninfo(monitorSettings(s).conninfo.toStdString()).at("target_session_attrs"), std::string("any"));
    s.monitorConninfo.clear();
    QCOMPARE(monitorSettings(s).conninfo, s.conninfo);

    // A profile keeps the monitor DSN, never a password from it.
    const QString file = m_dir.filePath(QStringLiteral("profiles.conf"));
    {
        ProfileStore store(std::make_unique<QSettings>(file, QSettings::IniFormat));
        s.monitorConninfo = QStringLiteral("host=standby.example dbname=app password=monitor-pw");
        store.save({ QStringLiteral("prod"), s });
        const auto back = store.profile(QStringLiteral("prod"));
        QVERIFY(back);
        QCOMPARE(idem::parseConninfo(back->settings.monitorConninfo.toStdString()).at("host"),
            std::string("standby.example"));
    }
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray content = f.readAll();
    QVERIFY(content.contains("standby.example"));
    QVERIFY(!content.contains("monitor-pw"));
    QVERIFY(!content.contains("secret-pw"));
}

namespace {
// The lines of an EXPLAIN ANALYZE that ran: a node under a false one-time filter is in the plan,
// "(never executed)", and is left out.
std::string executedPlan(const pqxx::result& r)
{
    std::string plan;
    for (const auto& row : r) {
        const auto line = row[0].as<std::string>();
        if (line.find("never executed") == std::string::npos)
            plan += line + "\n";
    }
    return plan;
}
} // namespace

void TestDashboard::tickNeverScansSucceededRows()
{
    {
        pqxx::work w(*m_conn);
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts) "
               "SELECT 'tc:bulk:' || i, 'v1:' || repeat('c', 64), 'succeeded', '{}', 1 "
               "FROM generate_series(1, 20000) i");
        w.commit();
    }
    pqxx::nontransaction(*m_conn).exec("ANALYZE idem.task_idempotency");
    for (const char* tenant : { static_cast<const char*>(nullptr), "ta" }) {
        pqxx::read_transaction t(*m_conn);
        // The whole tick as the planner would run it: the row figures are idem_live_stats()'s
        // (its own plans are checked in tst_boundedstats), the rest reads counters and one audit row.
        const auto plan = executedPlan(t.exec_params("EXPLAIN (ANALYZE) " + idem::dashboardSql(idem::SchemaName()),
            tenant, static_cast<const char*>(nullptr), 15, 60, 1440));
        QVERIFY2(plan.find("Seq Scan on task_idempotency ") == std::string::npos, plan.c_str());
        QVERIFY2(plan.find("idem_live_stats") != std::string::npos, plan.c_str());
    }
    // The statement the console prepares for the unfiltered view holds no filtered form at all.
    pqxx::read_transaction t(*m_conn);
    const auto plan = executedPlan(
        t.exec_params("EXPLAIN (ANALYZE) " + idem::unfilteredDashboardSql(idem::SchemaName()), 15, 60, 1440));
    QVERIFY2(plan.find("Seq Scan on task_idempotency ") == std::string::npos, plan.c_str());
    QVERIFY2(plan.find("Scan on idem_counters ") == std::string::npos, plan.c_str()); // the totals, not per tenant
    QVERIFY2(plan.find("split_part") == std::string::npos, plan.c_str());
    t.commit();

    // The console's ticks: one prepared statement on the connection, planned generically once the
    // server chose to (after five custom plans at most) and reused since; its figures are
    // readStats()'s, and a filtered tick still answers for its tenant only.
    idem::DashboardOptions options;
    options.historyMinutes = 30;
    idem::prepareDashboardConnection(*m_conn, 5000);
    std::optional<idem::DashboardReading> last;
    for (int i = 0; i < 8; ++i)
        last = idem::readDashboard(*m_conn, idem::SchemaName(), options);
    options.stats.tenant = "ta";
    const auto filtered = idem::readDashboard(*m_conn, idem::SchemaName(), options);
    const auto all = idem::readStats(*m_conn, idem::SchemaName(), {});
    idem::StatsOptions onlyTa;
    onlyTa.tenant = "ta";
    const auto ta = idem::readStats(*m_conn, idem::SchemaName(), onlyTa);
    QCOMPARE(last->stats.processing, all.processing);
    QCOMPARE(last->stats.expiredLeases, all.expiredLeases);
    QCOMPARE(last->stats.longUnfinished, all.longUnfinished);
    QCOMPARE(last->stats.failedPermanent, all.failedPermanent);
    QCOMPARE(filtered.stats.processing, ta.processing);
    QCOMPARE(filtered.stats.expiredLeases, ta.expiredLeases);
    QVERIFY(ta.processing < all.processing);
    // readStats() ran the shared exact refresh (it was due): the next tick carries its histogram.
    QVERIFY(all.exact.has_value());
    QVERIFY(idem::readDashboard(*m_conn, idem::SchemaName(), options).attempts.has_value() == false); // filtered
    options.stats.tenant.reset();
    QVERIFY(idem::readDashboard(*m_conn, idem::SchemaName(), options).attempts.has_value());
    pqxx::nontransaction n(*m_conn);
    const auto prepared = n.exec("SELECT count(*), max(generic_plans), max(custom_plans) FROM pg_prepared_statements"
                                 " WHERE name LIKE 'idem_tick_%'");
    QCOMPARE(prepared.at(0)[0].as<int>(), 1);
    QVERIFY2(prepared.at(0)[1].as<int>() >= 3, prepared.at(0)[1].c_str());
    QVERIFY2(prepared.at(0)[2].as<int>() <= 5, prepared.at(0)[2].c_str());
}

void TestDashboard::cappedFiguresReadAsLowerBounds()
{
    // Past the cap, as a person reads it: "≥ 10,000", and under it the exact count the console
    // had the database refresh (it was due) with its age; uncapped tiles stay plain numbers.
    const auto count = [this](const char* query) {
        return pqxx::nontransaction(*m_conn).exec(query).at(0).at(0).as<std::int64_t>();
    };
    const auto permanentBefore = count("SELECT count(*) FROM idem.task_idempotency WHERE status = 'failed'"
                                     " AND error_class = 'permanent'");
    {
        pqxx::work w(*m_conn);
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, error_class)"
               " SELECT 'ta:charge:dead-' || i, 'v1:x', 'failed', 3, 'permanent' FROM generate_series(1, 10500) i");
        w.exec("UPDATE idem.idem_stats_live SET taken_at = '-infinity'");
        w.exec("UPDATE idem.idem_stats_exact SET taken_at = now() - interval '1 hour', attempt_at = NULL");
        w.commit();
    }
    ConsoleSession session;
    auto w = dashboard(session);
    QTRY_VERIFY_WITH_TIMEOUT(w->model()->sharedRefreshes() == 1, timeoutMs);
    const int ticks = w->model()->ticks();
    w->model()->tickNow();
    QTRY_VERIFY_WITH_TIMEOUT(w->model()->ticks() > ticks, timeoutMs);
    auto* failed = w->tile(Tile::Failed);
    QVERIFY2(failed->valueText().startsWith(QStringLiteral("≥ 10,")), qPrintable(failed->valueText()));
    QVERIFY2(failed->detailText().contains(QStringLiteral("≥\u00a010,000 permanent")), qPrintable(failed->detailText()));
    const auto exact = QLocale().toString(qlonglong(count("SELECT count(*) FROM idem.task_idempotency WHERE status = 'failed'")));
    QVERIFY2(failed->qualityText().startsWith(QStringLiteral("exact ") + exact + QStringLiteral(" · ")),
        qPrintable(failed->qualityText() + QStringLiteral(" / ") + exact));
    QVERIFY2(failed->qualityText().endsWith(QStringLiteral(" s ago")), qPrintable(failed->qualityText()));
    QVERIFY(permanentBefore + 10500 > idem::boundedCountCap);
    // Below the cap: the plain number, no quality line.
    QCOMPARE(w->tile(Tile::Processing)->qualityText(), QString());
    QVERIFY(!w->tile(Tile::Processing)->valueText().startsWith(QStringLiteral("≥")));
}

QTEST_MAIN(TestDashboard)
#include "tst_dashboard.moc"
