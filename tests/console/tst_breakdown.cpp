#include <QtTest>

#include <QCheckBox>
#include <QLabel>
#include <QSettings>
#include <QTableView>
#include <QTemporaryDir>

#include <pqxx/pqxx>

#include "models/breakdownmodel.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/taskbrowsermodel.h"
#include "operations/breakdown.h"
#include "core/connection.h"
#include "schema/migrate.h"
#include "tests/support/countingproxy.h"
#include "tests/support/testdb.h"
#include "views/breakdownpanel.h"
#include "views/dashboardwidget.h"
#include "views/taskbrowserwidget.h"

using namespace idem::console;

namespace {
constexpr int timeoutMs = 20000;
} // namespace

// Where it is failing (issue 41 item 3): the dashboard's breakdown by operation, by tenant on
// demand, and the window's top errors, with figures planted per operation and tenant; a
// double-click opens the Tasks page on that row's tasks.
class TestBreakdown : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void byOperation();
    void byTenant();
    void capMakesLowerBounds();
    void doubleClickOpensTasks();
    void oneRoundTripUnderTheTimeout();
    void oneRoundTripPerRead();

private:
    std::unique_ptr<DashboardWidget> dashboard(ConsoleSession& session);
    static QStringList rowTexts(const QTableView* view);
    static bool waitFor(BreakdownWatch* watch, int readsAfter);

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    QTemporaryDir m_dir;
    std::unique_ptr<QSettings> m_settings;
};

void TestBreakdown::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("breakdown");
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("console.conf")), QSettings::IniFormat);
    pqxx::work w(*m_conn);
    // Rows now: processing of two operations and two tenants; failures in the window with their
    // last error; one old failure outside the window; a success (never an error row).
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until, attempts,
                                           error_class, error_message, next_attempt_at, created_at, updated_at)
        SELECT k, 'v1:' || repeat('a', 64), st, CASE WHEN st = 'processing' THEN gen_random_uuid() END,
               CASE WHEN st = 'processing' THEN now() + interval '5 minutes' END, 1,
               CASE WHEN st = 'failed' THEN 'permanent' WHEN st = 'retryable_failed' THEN 'retryable' END, msg,
               CASE WHEN st = 'retryable_failed' THEN now() + interval '1 minute' END, now() - age, now() - age
        FROM (VALUES
            ('ta:charge:p1', 'processing', NULL, interval '0'),
            ('ta:charge:p2', 'processing', NULL, interval '0'),
            ('tb:charge:p3', 'processing', NULL, interval '0'),
            ('ta:refund:p4', 'processing', NULL, interval '0'),
            ('ta:charge:f1', 'retryable_failed', 'gateway 503 from psp', interval '1 minute'),
            ('ta:charge:f2', 'retryable_failed', 'gateway 503 from psp', interval '2 minutes'),
            ('tb:charge:f3', 'retryable_failed', 'gateway 503 from psp', interval '0'),
            ('tb:charge:f4', 'failed', 'card declined', interval '0'),
            ('ta:refund:f5', 'retryable_failed', 'gateway 503 from psp', interval '0'),
            ('ta:charge:old', 'failed', 'gateway 503 from psp', interval '3 hours'),
            ('ta:email:s1', 'succeeded', NULL, interval '0')
        ) AS v(k, st, msg, age)
    )");
    // The window's counters, per tenant and operation.
    w.exec(R"(
        SELECT idem.add_counters(jsonb_agg(jsonb_build_object('m', extract(epoch FROM date_trunc('minute', now()))::bigint,
                                                              't', t, 'o', o, 'w', oc, 'n', n)))
          FROM (VALUES ('ta', 'charge', 'failed_retryable', 7), ('tb', 'charge', 'failed_retryable', 2),
                       ('tb', 'charge', 'failed_permanent', 1), ('ta', 'charge', 'reacquired_retry', 4),
                       ('ta', 'refund', 'conflict', 2), ('tb', 'email', 'reacquired_lease', 1),
                       ('ta', 'charge', 'acquired', 50)) AS v(t, o, oc, n)
    )");
    // An hour ago: outside the 15-minute window.
    w.exec(R"(
        SELECT idem.add_counters(jsonb_build_array(jsonb_build_object('m', extract(epoch FROM date_trunc('minute', now())
               - interval '1 hour')::bigint, 't', 'ta', 'o', 'refund', 'w', 'failed_permanent', 'n', 50)))
    )");
    // Run times of a folded minute: charge all in slot 160, refund 90 in slot 100 and 10 in slot 200.
    w.exec(R"(
        UPDATE idem.idem_latency_state SET folded_to = date_trunc('minute', now()) - interval '1 minute'
    )");
    w.exec(R"(
        INSERT INTO idem.idem_latency (bucket, tenant, operation, kind, n, total, slots, counts)
        VALUES (date_trunc('minute', now()) - interval '4 minutes', 'ta', 'charge', 'run', 60, 6000000, '{160}', '{60}'),
               (date_trunc('minute', now()) - interval '4 minutes', 'tb', 'charge', 'run', 40, 4000000, '{160}', '{40}'),
               (date_trunc('minute', now()) - interval '4 minutes', 'ta', 'refund', 'run', 100, 100, '{100,200}', '{90,10}')
    )");
    w.commit();
}

void TestBreakdown::cleanupTestCase()
{
    m_conn.reset();
    m_db.reset();
}

std::unique_ptr<DashboardWidget> TestBreakdown::dashboard(ConsoleSession& session)
{
    m_settings->clear();
    auto w = std::make_unique<DashboardWidget>(&session, m_settings.get());
    w->resize(1400, 1000);
    w->show();
    ConnectionSettings s;
    s.conninfo = QString::fromStdString(m_db->dsn());
    session.connectTo(s);
    if (!waitFor(w->breakdown()->watch(), 0))
        qWarning("no breakdown read: %s", qPrintable(w->breakdown()->watch()->error()));
    return w;
}

bool TestBreakdown::waitFor(BreakdownWatch* watch, int readsAfter)
{
    return QTest::qWaitFor([&] { return watch->reads() > readsAfter && watch->reading(); }, timeoutMs);
}

QStringList TestBreakdown::rowTexts(const QTableView* view)
{
    // A row as a person reads it: its visible cells, left to right.
    QStringList out;
    const auto* m = view->model();
    for (int r = 0; r < m->rowCount(); ++r) {
        QStringList cells;
        for (int c = 0; c < m->columnCount(); ++c)
            if (!view->isColumnHidden(c))
                cells << m->index(r, c).data().toString();
        out << cells.join(QStringLiteral(" | "));
    }
    return out;
}

void TestBreakdown::byOperation()
{
    ConsoleSession session;
    auto w = dashboard(session);
    auto* panel = w->breakdown();
    QVERIFY(panel->isVisible());
    // Most failures first. p95: nearest rank; charge's 100 runs all in slot 160 (~103.7 ms, written
    // to three figures), refund's 95th of 100 in slot 200 (~1.84 s); email had no run.
    QCOMPARE(rowTexts(panel->operationsView()),
        QStringList({ QStringLiteral("charge | 3 | 10 | 4 | 0 | 104 ms"),
            QStringLiteral("refund | 1 | 0 | 0 | 2 | 1.84 s"), QStringLiteral("email | 0 | 0 | 1 | 0 | –") }));
    QCOMPARE(rowTexts(panel->errorsView()),
        QStringList({ QStringLiteral("charge | 3 | gateway 503 from psp"), QStringLiteral("charge | 1 | card declined"),
            QStringLiteral("refund | 1 | gateway 503 from psp") }));
    // Every figure says what it is.
    const auto* m = panel->operations();
    QVERIFY(m->index(0, BreakdownModel::Failed).data(Qt::ToolTipRole).toString().startsWith(QStringLiteral("Exact")));
    QVERIFY(
        m->index(0, BreakdownModel::Processing).data(Qt::ToolTipRole).toString().startsWith(QStringLiteral("Exact")));
    QVERIFY(panel->note()->toolTip().startsWith(
        QStringLiteral("In the last 15 min: failures, retries and conflicts counted per minute")));
    QCOMPARE(panel->note()->text(), QStringLiteral("last 15 min; ≥ n: at least n"));
    // The headers as a person reads them.
    QCOMPARE(m->headerData(BreakdownModel::Failed, Qt::Horizontal).toString(), QStringLiteral("Failures"));
    QCOMPARE(m->headerData(BreakdownModel::P95, Qt::Horizontal).toString(), QStringLiteral("p95 run"));
}

void TestBreakdown::byTenant()
{
    ConsoleSession session;
    auto w = dashboard(session);
    auto* panel = w->breakdown();
    const int reads = panel->watch()->reads();
    QTest::mouseClick(panel->byTenant(), Qt::LeftButton, {}, QPoint(4, panel->byTenant()->height() / 2));
    QVERIFY(panel->byTenant()->isChecked());
    QVERIFY(waitFor(panel->watch(), reads));
    QVERIFY(!panel->operationsView()->isColumnHidden(BreakdownModel::Tenant));
    QCOMPARE(rowTexts(panel->operationsView()),
        QStringList({ QStringLiteral("ta | charge | 2 | 7 | 4 | 0 | 104 ms"),
            QStringLiteral("tb | charge | 1 | 3 | 0 | 0 | 104 ms"),
            QStringLiteral("ta | refund | 1 | 0 | 0 | 2 | 1.84 s"),
            QStringLiteral("tb | email | 0 | 0 | 1 | 0 | –") }));
    QCOMPARE(rowTexts(panel->errorsView()),
        QStringList({ QStringLiteral("ta | charge | 2 | gateway 503 from psp"),
            QStringLiteral("tb | charge | 1 | card declined"), QStringLiteral("tb | charge | 1 | gateway 503 from psp"),
            QStringLiteral("ta | refund | 1 | gateway 503 from psp") }));
}

void TestBreakdown::capMakesLowerBounds()
{
    ConsoleSession session;
    auto w = dashboard(session);
    auto* panel = w->breakdown();
    const int reads = panel->watch()->reads();
    panel->watch()->setCap(2); // 4 processing rows, 5 counter rows, 7 unfinished rows in the window
    QVERIFY(waitFor(panel->watch(), reads));
    const auto* m = panel->operations();
    for (int r = 0; r < m->rowCount(); ++r) {
        QVERIFY2(m->index(r, BreakdownModel::Processing).data().toString().startsWith(QStringLiteral("≥")),
            qPrintable(m->index(r, BreakdownModel::Processing).data().toString()));
        QVERIFY(m->index(r, BreakdownModel::Failed).data().toString().startsWith(QStringLiteral("≥")));
        QVERIFY(m->index(r, BreakdownModel::Processing)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .startsWith(QStringLiteral("At least")));
    }
    QVERIFY(panel->errors()->index(0, BreakdownModel::ErrorRows).data().toString().startsWith(QStringLiteral("≥")));
}

void TestBreakdown::doubleClickOpensTasks()
{
    ConsoleSession session;
    auto w = dashboard(session);
    auto* panel = w->breakdown();
    ConsoleSession pageSession;
    ConnectionSettings s;
    s.conninfo = QString::fromStdString(m_db->dsn());
    pageSession.connectTo(s);
    QVERIFY(QTest::qWaitFor([&] { return pageSession.state() == ConsoleSession::State::Connected; }, timeoutMs));
    TaskBrowserWidget page(&pageSession, &pageSession);
    page.resize(1280, 700);
    page.show();
    // As MainWindow does with what the dashboard opens.
    connect(w.get(), &DashboardWidget::openRows, &page,
        [&page](const idem::TaskFilter& filter, const QString&, const LiveText& what,
            const std::optional<idem::TaskSort>& sort) { page.applyFilter(filter, what, sort); });
    const auto keysShown = [&page] {
        QStringList keys;
        for (int r = 0; r < page.model()->rowCount(); ++r)
            keys << page.model()->data(page.model()->index(r, 0), TaskBrowserModel::KeyRole).toString();
        keys.sort();
        return keys;
    };
    const auto doubleClick = [](QTableView* view, int row) {
        const QPoint at = view->visualRect(view->model()->index(row, 1)).center();
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
        QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, at);
    };
    // "refund": its rows updated in the window (not the old failure's operation's others).
    QSignalSpy opened(w.get(), &DashboardWidget::openRows);
    doubleClick(panel->operationsView(), 1);
    QCOMPARE(opened.count(), 1);
    auto filter = opened.at(0).at(0).value<idem::TaskFilter>();
    QCOMPARE(filter.operation, std::optional<std::string>("refund"));
    QCOMPARE(filter.updatedWithinMinutes, std::optional<int>(15));
    QTRY_COMPARE_WITH_TIMEOUT(
        keysShown(), QStringList({ QStringLiteral("ta:refund:f5"), QStringLiteral("ta:refund:p4") }), timeoutMs);
    // "card declined" of charge: the one row that failed with it.
    doubleClick(panel->errorsView(), 1);
    QCOMPARE(opened.count(), 2);
    filter = opened.at(1).at(0).value<idem::TaskFilter>();
    QCOMPARE(filter.errorContains, std::optional<std::string>("card declined"));
    QTRY_COMPARE_WITH_TIMEOUT(keysShown(), QStringList({ QStringLiteral("tb:charge:f4") }), timeoutMs);
    // "gateway 503" of charge: the three in the window, not the one of three hours ago.
    doubleClick(panel->errorsView(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(keysShown(),
        QStringList({ QStringLiteral("ta:charge:f1"), QStringLiteral("ta:charge:f2"), QStringLiteral("tb:charge:f3") }),
        timeoutMs);
}

void TestBreakdown::oneRoundTripUnderTheTimeout()
{
    // The read is one statement (no ';' in it: one round trip in autocommit), and a bad query
    // is refused before any I/O.
    pqxx::connection c(m_db->dsn());
    idem::BreakdownQuery q;
    q.windowMinutes = 0;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, idem::readBreakdown(c, idem::SchemaName(), q));
    QVERIFY(idem::breakdownSql(idem::SchemaName()).find(';') == std::string::npos);
}

void TestBreakdown::oneRoundTripPerRead()
{
    // Through a relay that counts the client's messages: after the connection's first read (which
    // sets the session's statement timeout once), each read is one round trip.
    const std::string role = "idem_t_breakdown_rt";
    idem::test::createLoginRole(role, "pw-bd", "");
    {
        pqxx::work w(*m_conn);
        w.exec("GRANT USAGE ON SCHEMA idem TO " + role + "; GRANT SELECT ON ALL TABLES IN SCHEMA idem TO " + role
            + "; GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA idem TO " + role);
        w.commit();
    }
    const auto options = idem::parseConninfo(m_db->dsn());
    idem::test::CountingProxy proxy(QString::fromStdString(options.at("host")), quint16(std::stoi(options.at("port"))));
    QVERIFY(proxy.listening());
    ConsoleSession session;
    BreakdownWatch watch(&session);
    ConnectionSettings s;
    s.conninfo = QString::fromStdString(idem::test::dsnWith(m_db->dsn(),
        { { "host", "127.0.0.1" }, { "port", std::to_string(proxy.port()) }, { "user", role }, { "password", "pw-bd" },
            { "sslmode", "disable" }, { "gssencmode", "disable" }, { "passfile", "/dev/null" } }));
    session.connectTo(s);
    QVERIFY2(waitFor(&watch, 0), qPrintable(watch.error()));
    QTRY_VERIFY_WITH_TIMEOUT(!session.pendingJobs(), timeoutMs);
    for (int i = 0; i < 3; ++i) {
        const int trips = proxy.roundTrips();
        const int reads = watch.reads();
        watch.refreshNow();
        QVERIFY(waitFor(&watch, reads));
        QTRY_VERIFY_WITH_TIMEOUT(!session.pendingJobs(), timeoutMs);
        QCOMPARE(proxy.roundTrips() - trips, 1);
    }
    QCOMPARE(watch.reading()->rows.size(), std::size_t(3));
}

QTEST_MAIN(TestBreakdown)
#include "tst_breakdown.moc"
