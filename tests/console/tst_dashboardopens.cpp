#include <QtTest>

#include <QSettings>
#include <QTableWidget>
#include <QTemporaryDir>

#include <pqxx/pqxx>

#include "schema/migrate.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/taskbrowsermodel.h"
#include "tests/support/testdb.h"
#include "views/dashboardrowsdialog.h"
#include "views/dashboardwidget.h"
#include "views/taskbrowserwidget.h"
#include "views/tilewidget.h"

using namespace idem::console;

namespace {
constexpr int timeoutMs = 20000;

QString number(qint64 n) { return QLocale().toString(n); }
} // namespace

// What a tile's click opens is what the tile and the dialog say it is, and the dialog's count is
// the rows it selects (issue 14 item 5); event tiles are coloured by their share of the claims
// (item 6b); the alert line shows the tiles red now with their latest values (item 6c); the tile
// for rows waiting to retry opens exactly those rows (item 7).
class TestDashboardOpens : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void tileOpensWhatItSays_data();
    void tileOpensWhatItSays();
    void tasksPageSaysWhatItShows();
    void eventTilesColourByShareOfClaims();
    void alertLineStaysCurrent();
    void olderSettingsLoadSanely();
    void alertSinceComesFromTheCounters();

private:
    std::int64_t sql(const std::string& query);
    void addCounters(const char* outcome, int n, int minutesBack = 0);
    std::unique_ptr<DashboardWidget> dashboard(ConsoleSession& session);

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    QTemporaryDir m_dir;
    std::unique_ptr<QSettings> m_settings;
};

std::int64_t TestDashboardOpens::sql(const std::string& query)
{
    pqxx::read_transaction t(*m_conn);
    return t.exec(query).at(0).at(0).as<std::int64_t>();
}

void TestDashboardOpens::addCounters(const char* outcome, int n, int minutesBack)
{
    pqxx::work w(*m_conn);
    w.exec_params("SELECT idem.add_counters(jsonb_build_array(jsonb_build_object('m', extract(epoch FROM "
                  "date_trunc('minute', now()) - $3::int * interval '1 minute')::bigint, 't', 'ta', 'o', 'charge', "
                  "'w', $1::text, 'n', $2::int)))",
        outcome, n, minutesBack);
    w.commit();
}

void TestDashboardOpens::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("dashopens", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("console.conf")), QSettings::IniFormat);
    pqxx::work w(*m_conn);
    // Rows of every kind a tile opens, inside and outside the 15-minute window.
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until, attempts,
                                           error_class, error_message, next_attempt_at, result_json, created_at, updated_at,
                                           errors)
        SELECT k, 'v1:' || repeat('a', 64), st, CASE WHEN st = 'processing' THEN gen_random_uuid() END,
               CASE WHEN st = 'processing' THEN now() + lease END, att, ec,
               CASE WHEN st IN ('retryable_failed', 'failed') THEN 'boom' END,
               CASE WHEN st = 'retryable_failed' THEN now() + interval '1 minute' END,
               CASE WHEN st = 'succeeded' THEN '{}'::jsonb END, now() - age, now() - touched,
               -- The error history as the protocol keeps it: the last failure; a succeeded row
               -- on attempt 2 or later failed the attempt before.
               CASE WHEN st IN ('retryable_failed', 'failed')
                    THEN jsonb_build_array(jsonb_build_object('attempt', att, 'at', now() - touched, 'class', ec,
                                                              'message', 'boom'))
                    WHEN st = 'succeeded' AND att >= 2
                    THEN jsonb_build_array(jsonb_build_object('attempt', att - 1, 'at', now() - touched,
                                                              'class', 'retryable', 'message', 'boom'))
                    ELSE '[]'::jsonb END
        FROM (VALUES
            ('ta:charge:p1', 'processing', interval '10 minutes', 1, NULL, interval '0', interval '0'),
            ('ta:charge:p2', 'processing', interval '10 minutes', 2, NULL, interval '2 hours', interval '0'),
            ('ta:charge:e1', 'processing', interval '-1 minute', 3, NULL, interval '3 hours', interval '3 hours'),
            ('ta:charge:w1', 'retryable_failed', NULL, 1, 'retryable', interval '0', interval '0'),
            ('ta:charge:w2', 'retryable_failed', NULL, 2, 'retryable', interval '0', interval '0'),
            ('ta:charge:w3', 'retryable_failed', NULL, 3, 'unknown', interval '2 hours', interval '2 hours'),
            ('ta:charge:w4', 'retryable_failed', NULL, 4, 'retryable', interval '0', interval '1 minute'),
            ('ta:charge:f1', 'failed', NULL, 1, 'permanent', interval '0', interval '0'),
            ('ta:charge:f2', 'failed', NULL, 2, 'permanent', interval '0', interval '0'),
            ('ta:charge:f3', 'failed', NULL, 5, 'retryable', interval '3 hours', interval '3 hours'),
            ('ta:charge:s1', 'succeeded', NULL, 1, NULL, interval '0', interval '0'),
            ('ta:charge:s2', 'succeeded', NULL, 3, NULL, interval '0', interval '0'),
            ('ta:charge:s3', 'succeeded', NULL, 2, NULL, interval '3 hours', interval '3 hours')
        ) AS v(k, st, lease, att, ec, age, touched)
    )");
    // Keys that saw a digest conflict: two in the window, one long before it.
    w.exec(R"(
        INSERT INTO idem.task_idempotency_conflicts (idempotency_key, first_at, last_at, n, last_digest)
        VALUES ('ta:charge:s1', now() - interval '1 day', now(), 3, 'v1:' || repeat('c', 64)),
               ('ta:charge:f1', now(), now(), 1, 'v1:' || repeat('c', 64)),
               ('ta:charge:s3', now() - interval '3 hours', now() - interval '3 hours', 9, 'v1:' || repeat('c', 64))
    )");
    w.commit();
    addCounters("acquired", 200);
    addCounters("conflict", 4);
    addCounters("reacquired_retry", 6);
    addCounters("failed_retryable", 9);
    addCounters("retry_failed", 3);
    addCounters("stale_token", 1);
    pqxx::nontransaction(*m_conn).exec("ANALYZE idem.task_idempotency");
}

void TestDashboardOpens::cleanupTestCase()
{
    m_conn.reset();
    m_db.reset();
}

std::unique_ptr<DashboardWidget> TestDashboardOpens::dashboard(ConsoleSession& session)
{
    m_settings->clear();
    auto w = std::make_unique<DashboardWidget>(&session, m_settings.get());
    w->resize(1280, 800);
    w->show();
    ConnectionSettings s;
    s.conninfo = QString::fromStdString(m_db->dsn());
    session.connectTo(s);
    const auto* model = w->model();
    if (!QTest::qWaitFor([&] { return model->ticks() >= 1; }, timeoutMs))
        qWarning("dashboard did not tick: %s", qPrintable(w->freshnessText()));
    return w;
}

void TestDashboardOpens::tileOpensWhatItSays_data()
{
    QTest::addColumn<Tile>("tile");
    QTest::addColumn<QString>("words"); // part of what the tile and the dialog say is opened
    QTest::addColumn<QString>("rows"); // an independent WHERE for exactly those rows
    QTest::addColumn<bool>("sameAsTile"); // a row tile: its number is the dialog's count
    const QString window = QStringLiteral("updated_at >= date_trunc('minute', now()) - interval '14 minutes'");
    QTest::newRow("waiting to retry") << Tile::WaitingRetry << QStringLiteral("rows waiting to retry")
                                      << QStringLiteral("status = 'retryable_failed'") << true;
    QTest::newRow("uncertain") << Tile::Uncertain << QStringLiteral("last outcome is unknown")
                               << QStringLiteral("status = 'retryable_failed' AND error_class = 'unknown'") << true;
    QTest::newRow("failed") << Tile::Failed << QStringLiteral("rows in failed") << QStringLiteral("status = 'failed'")
                            << true;
    QTest::newRow("expired leases") << Tile::ExpiredLeases << QStringLiteral("lease ran out")
                                    << QStringLiteral("status = 'processing' AND lease_until <= now()") << true;
    QTest::newRow("long-unfinished")
        << Tile::LongUnfinished << QStringLiteral("first seen over 60 min ago")
        << QStringLiteral("status IN ('processing', 'retryable_failed') AND created_at < now() - interval '1 hour'")
        << true;
    QTest::newRow("retries") << Tile::Retries << QStringLiteral("keys on attempt 2 or later, updated in the last 15 min")
                             << QStringLiteral("attempts >= 2 AND ") + window << false;
    // The keys the figure counted (issue 24 item 2), a later success included (ta:charge:s2).
    QTest::newRow("failed retries")
        << Tile::FailedRetries
        << QStringLiteral("keys with a failure of attempt 2 or later in the last 15 min, whatever their status now")
        << QStringLiteral("EXISTS (SELECT 1 FROM jsonb_array_elements(errors) e WHERE (e->>'attempt')::int >= 2 AND "
                          "(e->>'at')::timestamptz >= date_trunc('minute', now()) - interval '14 minutes')")
        << false;
    QTest::newRow("digest conflicts")
        << Tile::DigestConflicts << QStringLiteral("keys with a digest conflict in the last 15 min")
        << QStringLiteral("idempotency_key IN (SELECT idempotency_key FROM idem.task_idempotency_conflicts "
                          "WHERE last_at >= date_trunc('minute', now()) - interval '14 minutes')")
        << false;
}

void TestDashboardOpens::tileOpensWhatItSays()
{
    QFETCH(Tile, tile);
    QFETCH(QString, words);
    QFETCH(QString, rows);
    QFETCH(bool, sameAsTile);
    ConsoleSession session;
    auto w = dashboard(session);
    QSignalSpy open(w.get(), &DashboardWidget::openRows);
    QTest::mouseClick(w->tile(tile), Qt::LeftButton);
    QCOMPARE(open.count(), 1);
    const auto filter = open.first().at(0).value<idem::TaskFilter>();
    const auto title = open.first().at(1).toString();
    const auto what = open.first().at(2).value<LiveText>().text();
    // The tile says what its click opens, in the words the dialog uses.
    QVERIFY2(what.contains(words), qPrintable(what));
    QVERIFY2(w->tile(tile)->toolTip().contains(QStringLiteral("Click: opens ") + what), qPrintable(w->tile(tile)->toolTip()));

    const auto expected = sql("SELECT count(*) FROM idem.task_idempotency WHERE " + rows.toStdString());
    QVERIFY2(expected > 0, "the planted rows must give every tile something to open");
    DashboardRowsDialog dialog(&session, filter, title, what);
    QSignalSpy loaded(&dialog, &DashboardRowsDialog::loaded);
    QVERIFY(loaded.wait(timeoutMs));
    QCOMPARE(dialog.matched(), expected);
    QCOMPARE(qint64(dialog.table()->rowCount()), std::min<qint64>(expected, DashboardRowsDialog::rowLimit));
    QVERIFY2(dialog.statusText().startsWith(QStringLiteral("%1 rows match: %2").arg(number(expected), what)),
        qPrintable(dialog.statusText()));
    QVERIFY2(dialog.windowTitle().contains(what), qPrintable(dialog.windowTitle()));
    if (sameAsTile)
        QCOMPARE(w->tile(tile)->valueText(), number(expected));
}

void TestDashboardOpens::tasksPageSaysWhatItShows()
{
    ConsoleSession session;
    auto w = dashboard(session);
    TaskBrowserWidget browser(&session, &session);
    browser.show();
    const auto filter = w->model()->filterFor(Tile::DigestConflicts);
    const auto what = w->model()->opensText(Tile::DigestConflicts);
    browser.applyFilter(filter, what);
    const auto expected = sql("SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key IN (SELECT "
                              "idempotency_key FROM idem.task_idempotency_conflicts WHERE last_at >= "
                              "date_trunc('minute', now()) - interval '14 minutes')");
    QCOMPARE(expected, 2);
    QTRY_COMPARE_WITH_TIMEOUT(browser.countText(), QStringLiteral("2 record(s) match: ") + what, timeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(browser.model()->rowCount(), 2, timeoutMs);
}

void TestDashboardOpens::eventTilesColourByShareOfClaims()
{
    ConsoleSession session;
    auto w = dashboard(session);
    // 3 failed retries of 204 claims (200 new, 4 conflicts): 1.5 %, under the default amber (2 %).
    QCOMPARE(w->tile(Tile::FailedRetries)->valueText(), QStringLiteral("3"));
    QVERIFY2(w->tile(Tile::FailedRetries)->detailText().startsWith(QStringLiteral("1.5 % of claims")),
        qPrintable(w->tile(Tile::FailedRetries)->detailText()));
    QCOMPARE(w->tile(Tile::FailedRetries)->level(), Level::Normal);
    QVERIFY2(w->tile(Tile::FailedRetries)->toolTip().contains(QStringLiteral("Amber from 2 % of claims")),
        qPrintable(w->tile(Tile::FailedRetries)->toolTip()));
    // 4 conflicts: 1.96 %, amber from 0.5 %, red from 5 %.
    QCOMPARE(w->tile(Tile::DigestConflicts)->level(), Level::Warning);
    w->model()->setThreshold(Tile::FailedRetries, { 1, 5 });
    QCOMPARE(w->tile(Tile::FailedRetries)->level(), Level::Warning);
}

void TestDashboardOpens::alertLineStaysCurrent()
{
    ConsoleSession session;
    auto w = dashboard(session);
    w->model()->setInterval(1000);
    w->model()->setThreshold(Tile::StaleTokens, { std::nullopt, 0.1 }); // 1 of 204 claims: red
    QTRY_VERIFY_WITH_TIMEOUT(w->alertText().contains(QStringLiteral("Stale-token rejections 1 (")), timeoutMs);
    const QString first = w->alertText();
    QVERIFY2(first.startsWith(QStringLiteral("Red now: ")), qPrintable(first));
    const auto since = first.mid(first.indexOf(QStringLiteral(" since ")) + 7, 8);
    addCounters("stale_token", 20);
    // The next tick's value, not the one the tile turned red with; still red since then.
    QTRY_VERIFY_WITH_TIMEOUT(w->alertText().contains(QStringLiteral("Stale-token rejections 21 (")), timeoutMs);
    QVERIFY2(w->alertText().contains(QStringLiteral(" since ") + since), qPrintable(w->alertText()));
    QCOMPARE(w->tile(Tile::StaleTokens)->valueText(), QStringLiteral("21"));
    // No longer red: no longer on the line.
    w->model()->setThreshold(Tile::StaleTokens, {});
    QVERIFY2(!w->alertText().contains(QStringLiteral("Stale-token")), qPrintable(w->alertText()));
}

void TestDashboardOpens::alertSinceComesFromTheCounters()
{
    // Stale tokens 5 minutes ago with no claims (100 % of none), and every window since holds
    // them: the tile has been red since that minute, whenever the console started.
    addCounters("stale_token", 3, 5);
    const auto minute = QDateTime::fromSecsSinceEpoch(
        sql("SELECT extract(epoch FROM date_trunc('minute', now()) - interval '5 minutes')::bigint"));
    for (int start = 0; start < 2; ++start) { // a restart of the console changes nothing
        ConsoleSession session;
        auto w = dashboard(session);
        w->model()->setThreshold(Tile::StaleTokens, { std::nullopt, 0.1 });
        QTRY_VERIFY_WITH_TIMEOUT(w->alertText().contains(QStringLiteral("Stale-token rejections")), timeoutMs);
        // The minute may turn while the test runs: the run began at that minute or the next.
        const QString text = w->alertText();
        const QString at = minute.toLocalTime().toString(QStringLiteral("HH:mm"));
        QVERIFY2(text.contains(QStringLiteral(") since ") + at + QStringLiteral(" ")) || text.endsWith(QStringLiteral(") since ") + at),
            qPrintable(text + QStringLiteral(" / expected since ") + at));
        QVERIFY(text.startsWith(QStringLiteral("Red now: ")));
    }
}

void TestDashboardOpens::olderSettingsLoadSanely()
{
    // A settings file of the version that kept event thresholds as counts per window.
    QSettings old(m_dir.filePath(QStringLiteral("old.conf")), QSettings::IniFormat);
    old.setValue(QStringLiteral("dashboard/thresholds/failedRetries/warning"), QStringLiteral("1"));
    old.setValue(QStringLiteral("dashboard/thresholds/failedRetries/critical"), QStringLiteral("50"));
    old.setValue(QStringLiteral("dashboard/thresholds/staleTokens/warning"), QString()); // switched off
    old.setValue(QStringLiteral("dashboard/thresholds/staleTokens/critical"), QStringLiteral("20"));
    old.setValue(QStringLiteral("dashboard/thresholds/expiredLeases/critical"), QStringLiteral("7"));
    const auto loaded = DashboardSettings::load(old);
    const DashboardSettings defaults;
    // A count of 50 is no percentage: the new defaults.
    QCOMPARE(loaded.thresholds[std::size_t(Tile::FailedRetries)], defaults.thresholds[std::size_t(Tile::FailedRetries)]);
    QCOMPARE(*loaded.thresholds[std::size_t(Tile::FailedRetries)].critical, 10.0);
    // What was switched off stays off; the rest takes the new default.
    QVERIFY(!loaded.thresholds[std::size_t(Tile::StaleTokens)].warning);
    QCOMPARE(loaded.thresholds[std::size_t(Tile::StaleTokens)].critical, defaults.thresholds[std::size_t(Tile::StaleTokens)].critical);
    // A row tile's threshold is what it was.
    QCOMPARE(*loaded.thresholds[std::size_t(Tile::ExpiredLeases)].critical, 7.0);
    // Saved and read again, the percentages come back as they were.
    loaded.save(old);
    QSettings again(old.fileName(), QSettings::IniFormat);
    QVERIFY(DashboardSettings::load(again) == loaded);
}

QTEST_MAIN(TestDashboardOpens)
#include "tst_dashboardopens.moc"
