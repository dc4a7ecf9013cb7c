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

#include <pqxx/pqxx>

#include "core/connection.h"
#include "operations/dashboardquery.h"
#include "schema/migrate.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
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

// The dashboard against a table in a known state: every tile's text and every chart series'
// newest point equal an independent count; one tick is one round trip; thresholds alert once
// per crossing and persist; a tile opens its rows.
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
    void historyIsBoundedAndDownsampled();
    void monitorConnectionSettings();
    void tickNeverScansSucceededRows(); // it adds 20,000 succeeded rows
    void cappedFiguresReadAsLowerBounds(); // last: it adds 10,500 failed rows

private:
    std::int64_t sql(const std::string& query, const char* tenant = nullptr);
    std::unique_ptr<DashboardWidget> dashboard(ConsoleSession& session, int ticks = 1);
    void checkTiles(DashboardWidget& w, const char* tenant);
    ConnectionSettings settings() const;

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    QTemporaryDir m_dir;
    std::unique_ptr<QSettings> m_settings;
};

std::int64_t TestDashboard::sql(const std::string& query, const char* tenant)
{
    pqxx::read_transaction t(*m_conn);
    return t.exec_params(query, tenant).at(0).at(0).as<std::int64_t>();
}

ConnectionSettings TestDashboard::settings() const
{
    ConnectionSettings s;
    s.conninfo = QString::fromStdString(m_db->dsn());
    return s;
}

void TestDashboard::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("dashboard");
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("console.conf")), QSettings::IniFormat);
    pqxx::work w(*m_conn);
    // Every state: live and expired leases, retryable (one uncertain), failed permanent and
    // exhausted, old unfinished rows, succeeded rows (old ones too, which are not long-unfinished).
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until,
                                           attempts, error_class, error_message, next_attempt_at, created_at, updated_at)
        SELECT k, 'v1:' || repeat('a', 64), st, CASE WHEN st = 'processing' THEN gen_random_uuid() END,
               CASE WHEN st = 'processing' THEN now() + lease END, att, ec,
               CASE WHEN st <> 'processing' THEN 'boom' END,
               CASE WHEN st = 'retryable_failed' THEN now() + interval '1 minute' END, now() - age, now() - age
        FROM (VALUES
            ('ta:charge:p1', 'processing', interval '10 minutes', 1, NULL, interval '0'),
            ('ta:charge:p2', 'processing', interval '10 minutes', 2, NULL, interval '2 hours'),
            ('tb:refund:p3', 'processing', interval '10 minutes', 1, NULL, interval '3 minutes'),
            ('ta:charge:e1', 'processing', interval '-1 minute', 3, NULL, interval '1 minute'),
            ('tb:refund:e2', 'processing', interval '-5 minutes', 4, NULL, interval '3 hours'),
            ('ta:charge:r1', 'retryable_failed', NULL, 2, 'retryable', interval '2 hours'),
            ('ta:charge:r2', 'retryable_failed', NULL, 1, 'retryable', interval '0'),
            ('tb:refund:r3', 'retryable_failed', NULL, 2, 'unknown', interval '0'),
            ('ta:charge:u1', 'retryable_failed', NULL, 12, 'unknown', interval '0'),
            ('ta:charge:f1', 'failed', NULL, 1, 'permanent', interval '0'),
            ('tb:refund:f2', 'failed', NULL, 1, 'permanent', interval '0'),
            ('tb:charge:x1', 'failed', NULL, 5, 'retryable', interval '0')
        ) AS v(k, st, lease, att, ec, age)
    )");
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts, created_at, updated_at)
        SELECT 'ta:charge:s' || i, 'v1:' || repeat('b', 64), 'succeeded', '{}', 1,
               now() - CASE WHEN i <= 10 THEN interval '2 hours' ELSE interval '0' END, now()
        FROM generate_series(1, 40) i
    )");
    // Counters in the current minute and two minutes ago (a chart point before the newest).
    w.exec(R"(
        -- through add_counters(), the workers' flush: it writes the totals the tick reads too
        SELECT idem.add_counters(jsonb_agg(jsonb_build_object('m', extract(epoch FROM date_trunc('minute', now()) - back)::bigint,
               't', t, 'o', o, 'w', oc, 'n', n)))
        FROM (VALUES
            (interval '0', 'ta', 'charge', 'acquired', 10), (interval '0', 'ta', 'charge', 'replayed', 3),
            (interval '0', 'ta', 'charge', 'in_progress', 2), (interval '0', 'ta', 'charge', 'conflict', 1),
            (interval '0', 'ta', 'charge', 'reacquired_lease', 2), (interval '0', 'ta', 'charge', 'reacquired_retry', 1),
            (interval '0', 'ta', 'charge', 'failed_retryable', 2), (interval '0', 'ta', 'charge', 'failed_unknown', 1),
            (interval '0', 'ta', 'charge', 'exhausted', 1), (interval '0', 'ta', 'charge', 'failed_permanent', 4),
            (interval '0', 'ta', 'charge', 'stale_token', 2), (interval '0', 'ta', 'charge', 'retry_failed', 2),
            (interval '0', 'tb', 'refund', 'acquired', 5), (interval '2 minutes', 'tb', 'refund', 'retry_failed', 1),
            (interval '0', 'tb', 'refund', 'replayed', 5), (interval '0', 'tb', 'refund', 'conflict', 2),
            (interval '0', 'tb', 'refund', 'stale_token', 1),
            (interval '2 minutes', 'ta', 'charge', 'acquired', 7), (interval '2 minutes', 'tb', 'refund', 'conflict', 3),
            (interval '3 hours', 'ta', 'charge', 'acquired', 100), (interval '3 hours', 'ta', 'charge', 'conflict', 50)
        ) AS v(back, t, o, oc, n)
    )");
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

void TestDashboard::checkTiles(DashboardWidget& w, const char* tenant)
{
    const std::string rows = "SELECT count(*) FROM idem.task_idempotency WHERE ($1::text IS NULL OR "
                             "idempotency_key LIKE $1::text || ':%') AND ";
    const std::string sums = "SELECT coalesce(sum(n), 0) FROM idem.idem_counters WHERE ($1::text IS NULL OR "
                             "tenant = $1::text) AND bucket > now() - interval '15 minutes' AND ";
    const auto text = [&](Tile t) { return w.tile(t)->valueText(); };
    const auto number = [](std::int64_t n) { return QLocale().toString(qint64(n)); };
    QCOMPARE(text(Tile::Processing), number(sql(rows + "status = 'processing' AND lease_until > now()", tenant)));
    QCOMPARE(text(Tile::ExpiredLeases), number(sql(rows + "status = 'processing' AND lease_until <= now()", tenant)));
    QCOMPARE(
        text(Tile::Uncertain), number(sql(rows + "status = 'retryable_failed' AND error_class = 'unknown'", tenant)));
    const auto permanent = sql(rows + "status = 'failed' AND error_class = 'permanent'", tenant);
    const auto exhausted = sql(rows + "status = 'failed' AND error_class <> 'permanent'", tenant);
    QCOMPARE(text(Tile::Failed), number(permanent + exhausted));
    QCOMPARE(w.tile(Tile::Failed)->detailText(),
        QStringLiteral("%1 permanent · %2 exhausted").arg(number(permanent), number(exhausted)));
    QCOMPARE(text(Tile::LongUnfinished),
        number(sql(rows + "status <> 'succeeded' AND created_at < now() - interval '60 minutes'", tenant)));
    QCOMPARE(text(Tile::Retries), number(sql(sums + "outcome LIKE 'reacquired%'", tenant)));
    // Failures of a retry (attempt 2 or later), not every failure.
    QCOMPARE(text(Tile::FailedRetries), number(sql(sums + "outcome = 'retry_failed'", tenant)));
    QCOMPARE(text(Tile::DigestConflicts), number(sql(sums + "outcome = 'conflict'", tenant)));
    QCOMPARE(text(Tile::StaleTokens), number(sql(sums + "outcome = 'stale_token'", tenant)));
    const auto dup = sql(sums + "outcome IN ('replayed', 'in_progress', 'conflict')", tenant);
    const auto claims = dup + sql(sums + "outcome = 'acquired'", tenant);
    QVERIFY(claims > 0);
    QCOMPARE(text(Tile::DuplicateRatio),
        QStringLiteral("%1 %").arg(QLocale().toString(100.0 * double(dup) / double(claims), 'f', 1)));
    const auto oldestMinutes = sql("SELECT floor(extract(epoch FROM now() - min(created_at)) / 60)::bigint FROM "
                                   "idem.task_idempotency WHERE status = 'processing' AND ($1::text IS NULL OR "
                                   "idempotency_key LIKE $1::text || ':%')",
        tenant);
    QVERIFY2(text(Tile::OldestProcessing)
                 .startsWith(oldestMinutes >= 60
                         ? QStringLiteral("%1 h %2 min").arg(oldestMinutes / 60).arg(oldestMinutes % 60)
                         : QStringLiteral("%1 min").arg(oldestMinutes)),
        qPrintable(text(Tile::OldestProcessing)));
    QCOMPARE(text(Tile::TotalRows),
        QStringLiteral("≈ ")
            + number(sql("SELECT reltuples::bigint FROM pg_class WHERE oid = "
                         "'idem.task_idempotency'::regclass AND ($1::text IS NULL OR true)")));

    // Charts: the newest point of each series is the truth of its minute (or of the tick).
    auto* charts = w.charts();
    const auto last = [&](const char* name) {
        auto* s = charts->series(QString::fromLatin1(name));
        return s && s->count() ? s->at(s->count() - 1) : QPointF(-1, -1);
    };
    QCOMPARE(last("processing").y(), double(sql(rows + "status = 'processing' AND lease_until > now()", tenant)));
    QCOMPARE(last("expired").y(), double(sql(rows + "status = 'processing' AND lease_until <= now()", tenant)));
    // The current minute is still counting: it is left out until it closes (drawn as a full
    // minute it would drop every line at the right edge), and the chart says so.
    const double currentMinuteMs = double(w.model()->latest()->serverNowMs / 60000 * 60000);
    for (const char* perMinute : { "new", "conflict", "retries", "permanent" })
        QVERIFY2(last(perMinute).x() < currentMinuteMs,
            qPrintable(QStringLiteral("%1 ends at %2, the current minute starts at %3")
                           .arg(QLatin1String(perMinute))
                           .arg(qint64(last(perMinute).x()))
                           .arg(qint64(currentMinuteMs))));
    const auto minute = std::to_string(qint64(last("new").x()) / 1000);
    const std::string bucket = "SELECT coalesce(sum(n), 0) FROM idem.idem_counters WHERE ($1::text IS NULL OR "
                               "tenant = $1::text) AND bucket = to_timestamp("
        + minute + ") AND ";
    QCOMPARE(last("new").y(), double(sql(bucket + "outcome = 'acquired'", tenant)));
    QCOMPARE(last("replay").y(), double(sql(bucket + "outcome = 'replayed'", tenant)));
    QCOMPARE(last("inprogress").y(), double(sql(bucket + "outcome = 'in_progress'", tenant)));
    QCOMPARE(last("conflict").y(), double(sql(bucket + "outcome = 'conflict'", tenant)));
    QCOMPARE(last("reclaim").y(), double(sql(bucket + "outcome LIKE 'reacquired%'", tenant)));
    QCOMPARE(last("retries").y(), double(sql(bucket + "outcome LIKE 'reacquired%'", tenant)));
    QCOMPARE(last("failedretries").y(), double(sql(bucket + "outcome = 'retry_failed'", tenant)));
    QCOMPARE(last("permanent").y(), double(sql(bucket + "outcome = 'failed_permanent'", tenant)));
    const auto bDup = sql(bucket + "outcome IN ('replayed', 'in_progress', 'conflict')", tenant);
    const auto bClaims = bDup + sql(bucket + "outcome = 'acquired'", tenant);
    if (bClaims > 0)
        QCOMPARE(last("duplicateratio").y(), 100.0 * double(bDup) / double(bClaims));
    // The planted current minute is on the chart (unless the test straddled a minute boundary).
    auto* fresh = charts->series(QStringLiteral("new"));
    bool planted = false;
    for (int i = 0; i < fresh->count(); ++i)
        planted = planted || fresh->at(i).y() == double(tenant ? 5 : 15) || fresh->at(i).y() == double(tenant ? 0 : 7);
    QVERIFY(planted);

    auto* bars = charts->attemptsBars();
    QCOMPARE(bars->count(), idem::attemptsHistogramTopBin);
    for (int bin = 1; bin <= idem::attemptsHistogramTopBin; ++bin) {
        const std::string cond = bin == idem::attemptsHistogramTopBin ? "attempts >= " : "attempts = ";
        QCOMPARE(
            bars->at(bin - 1), double(sql(rows + "status <> 'succeeded' AND " + cond + std::to_string(bin), tenant)));
    }
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
    // Default thresholds: 2 expired leases is amber (from 1), not red (from 10).
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
    w->model()->setThreshold(Tile::ExpiredLeases, { 1, 2 }); // two expired rows: red
    const int start = w->model()->ticks();
    QTRY_VERIFY_WITH_TIMEOUT(w->model()->ticks() >= start + 3, timeoutMs);
    QCOMPARE(alerts.count(), 1); // not once per tick
    QCOMPARE(alerts.first().first().value<Tile>(), Tile::ExpiredLeases);
    QCOMPARE(w->tile(Tile::ExpiredLeases)->level(), Level::Critical);
    QVERIFY2(w->alertText().contains(QStringLiteral("Expired leases 2 (red from 2) since ")), qPrintable(w->alertText()));
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
    // Paused: once the tick the filter asked for has answered, no tick comes by itself.
    QTRY_VERIFY_WITH_TIMEOUT(!model->tickPending(), timeoutMs);
    const int ticks = model->ticks();
    QTest::qWait(1500);
    QCOMPARE(model->ticks(), ticks);
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
    QCOMPARE(qint64(dialog.table()->rowCount()),
        qint64(sql("SELECT count(*) FROM idem.task_idempotency WHERE "
                   "status = 'failed' AND $1::text IS NULL")));
    QStringList keys;
    for (int r = 0; r < dialog.table()->rowCount(); ++r)
        keys << dialog.table()->item(r, 0)->text();
    keys.sort();
    QCOMPARE(keys,
        QStringList(
            { QStringLiteral("ta:charge:f1"), QStringLiteral("tb:charge:x1"), QStringLiteral("tb:refund:f2") }));
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
