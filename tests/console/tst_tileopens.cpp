// What three tiles open, as an operator sees it (issue 24 item 13): Oldest processing opens its
// rows oldest first with the oldest one selected; Duplicate ratio says why it opens nothing; the
// Total rows tile and the page it opens give the same estimate.
#include <QtTest>

#include <QItemSelectionModel>
#include <QSettings>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolTip>

#include "schema/migrate.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/taskbrowsermodel.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "views/dashboardrowsdialog.h"
#include "views/dashboardwidget.h"
#include "views/taskbrowserwidget.h"
#include "views/tilewidget.h"

using namespace idem::console;
using namespace idem::test;

namespace {
constexpr int timeoutMs = 20000;
} // namespace

class TestTileOpens : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void oldestProcessingOpensOldestFirst();
    void oldestProcessingPagesInAgeOrder();
    void duplicateRatioSaysWhyNothingOpens();
    void totalRowsTileAndPageAgree();

private:
    std::unique_ptr<DashboardWidget> dashboard(ConsoleSession& session);
    // Clicks `tile` and hands what it opens to a Tasks page, as MainWindow does.
    void openOnPage(DashboardWidget& w, Tile tile, TaskBrowserWidget& page);
    bool waitLoaded(TaskBrowserWidget& w);

    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<ConsoleSession> m_session;
    QTemporaryDir m_dir;
    std::unique_ptr<QSettings> m_settings;
};

void TestTileOpens::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("tileopens", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
    // Processing rows whose keys sort the other way round from their age: key order would put
    // the newest first.
    plantTask(*m_conn, "ta:charge:a-newest", "processing", 1, 5, nullptr, 600, 60);
    plantTask(*m_conn, "ta:charge:m-middle", "processing", 1, 5, nullptr, 600, 1800);
    plantTask(*m_conn, "ta:charge:z-oldest", "processing", 1, 5, nullptr, 600, 7200);
    // Last touched the other way round again: the order is by first seen, not by last update.
    execSql(*m_conn,
        "UPDATE idem.task_idempotency SET updated_at = now() - interval '5 seconds' "
        "WHERE idempotency_key = 'ta:charge:z-oldest'");
    execSql(*m_conn,
        "SELECT idem.add_counters(jsonb_build_array(jsonb_build_object('m', extract(epoch FROM "
        "date_trunc('minute', now()))::bigint, 't', 'ta', 'o', 'charge', 'w', 'replayed', 'n', 30), "
        "jsonb_build_object('m', extract(epoch FROM date_trunc('minute', now()))::bigint, 't', 'ta', 'o', 'charge', "
        "'w', 'acquired', 'n', 70)))");
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("console.conf")), QSettings::IniFormat);
    m_session = std::make_unique<ConsoleSession>();
    QVERIFY(connectSession(*m_session, m_db->dsn()));
}

void TestTileOpens::cleanupTestCase()
{
    m_session.reset();
    m_conn.reset();
    m_db.reset();
}

std::unique_ptr<DashboardWidget> TestTileOpens::dashboard(ConsoleSession& session)
{
    m_settings->clear();
    auto w = std::make_unique<DashboardWidget>(&session, m_settings.get());
    w->resize(1280, 800);
    w->show();
    session.connectTo(settingsFor(m_db->dsn()));
    const auto* model = w->model();
    const int before = model->ticks();
    if (!QTest::qWaitFor([&] { return model->ticks() > before; }, timeoutMs))
        qWarning("dashboard did not tick: %s", qPrintable(w->freshnessText()));
    return w;
}

void TestTileOpens::openOnPage(DashboardWidget& w, Tile tile, TaskBrowserWidget& page)
{
    connect(&w, &DashboardWidget::openRows, &page,
        [&page](const idem::TaskFilter& filter, const QString&, const LiveText& what,
            const std::optional<idem::TaskSort>& sort) { page.applyFilter(filter, what, sort); });
    QTest::mouseClick(w.tile(tile), Qt::LeftButton);
}

bool TestTileOpens::waitLoaded(TaskBrowserWidget& w)
{
    return QTest::qWaitFor(
        [&] {
            return w.model()->started() && !w.model()->busy() && !w.countText().isEmpty()
                && !w.countText().startsWith(QStringLiteral("Counting"));
        },
        timeoutMs);
}

void TestTileOpens::oldestProcessingOpensOldestFirst()
{
    ConsoleSession session;
    auto w = dashboard(session);
    // The tile's figure is the oldest row's age (two hours).
    QVERIFY2(w->model()->tile(Tile::OldestProcessing).value.value_or(0) >= 7200,
        qPrintable(w->tile(Tile::OldestProcessing)->valueText()));
    QVERIFY2(w->tile(Tile::OldestProcessing)->toolTip().contains(QStringLiteral("the oldest first (selected)")),
        qPrintable(w->tile(Tile::OldestProcessing)->toolTip()));

    TaskBrowserWidget page(m_session.get(), m_session.get());
    page.resize(1280, 700);
    page.show();
    openOnPage(*w, Tile::OldestProcessing, page);
    QVERIFY(waitLoaded(page));
    QCOMPARE(page.model()->rowCount(), 3);
    QStringList keys;
    for (int r = 0; r < page.model()->rowCount(); ++r)
        keys << page.model()->data(page.model()->index(r, 0), TaskBrowserModel::KeyRole).toString();
    QCOMPARE(keys,
        QStringList({ QStringLiteral("ta:charge:z-oldest"), QStringLiteral("ta:charge:m-middle"),
            QStringLiteral("ta:charge:a-newest") }));
    // The row the tile's number is about is the one marked.
    QTRY_VERIFY_WITH_TIMEOUT(page.view()->selectionModel()->hasSelection(), timeoutMs);
    const auto selected = page.view()->selectionModel()->selectedRows();
    QCOMPARE(selected.size(), 1);
    QCOMPARE(selected.first().row(), 0);

    // Without a Tasks page, the list dialog keeps the order and marks the same row.
    DashboardRowsDialog dialog(m_session.get(), w->model()->filterFor(Tile::OldestProcessing), QStringLiteral("Oldest"),
        QString(), DashboardModel::sortFor(Tile::OldestProcessing));
    QSignalSpy loaded(&dialog, &DashboardRowsDialog::loaded);
    QVERIFY(loaded.wait(timeoutMs));
    QCOMPARE(dialog.table()->item(0, 0)->text(), QStringLiteral("ta:charge:z-oldest"));
    QVERIFY(dialog.table()->item(0, 0)->isSelected());
}

void TestTileOpens::oldestProcessingPagesInAgeOrder()
{
    // Keyset paging by first seen: one row a page walks every row once, oldest to newest.
    auto filter = DashboardModel().filterFor(Tile::OldestProcessing);
    const auto sort = *DashboardModel::sortFor(Tile::OldestProcessing);
    std::vector<std::string> keys;
    std::optional<idem::TaskCursor> after;
    for (int i = 0; i < 10; ++i) {
        const auto page = idem::listTasks(*m_conn, {}, filter, sort, after, 1);
        for (const auto& r : page.rows)
            keys.push_back(r.key);
        if (!page.next)
            break;
        after = page.next;
    }
    QCOMPARE(keys, std::vector<std::string>({ "ta:charge:z-oldest", "ta:charge:m-middle", "ta:charge:a-newest" }));
    // A first-seen order over every status would sort the whole table: refused before any I/O.
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, idem::validateTaskQuery({}, sort));
}

void TestTileOpens::duplicateRatioSaysWhyNothingOpens()
{
    ConsoleSession session;
    auto w = dashboard(session);
    QSignalSpy open(w.get(), &DashboardWidget::openRows);
    auto* tile = w->tile(Tile::DuplicateRatio);
    QSignalSpy nothing(tile, &TileWidget::clickedNothing);
    const QString said = QStringLiteral(
        "Click: opens nothing. It would open the keys whose claims were answered as duplicates, but a replayed or "
        "in-progress answer leaves no mark on the row, so those keys cannot be found. Digest conflicts opens the "
        "keys with a conflicting claim.");
    QVERIFY2(tile->toolTip().endsWith(said), qPrintable(tile->toolTip()));
    QTest::mouseClick(tile, Qt::LeftButton);
    QCOMPARE(open.count(), 0);
    QCOMPARE(nothing.count(), 1);
    QCOMPARE(nothing.first().at(1).toString(), said);
    QCOMPARE(QToolTip::text(), said);
}

void TestTileOpens::totalRowsTileAndPageAgree()
{
    // More rows than the page counts exactly, analysed, then the table grows: the plan's own
    // estimate extrapolates from the grown file, the statistics have not moved yet.
    // (No autovacuum here: an ANALYZE between the tile's reading and the page's would move both.)
    execSql(*m_conn, "ALTER TABLE idem.task_idempotency SET (autovacuum_enabled = false)");
    execSql(*m_conn,
        "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, result_json) "
        "SELECT 'tb:bulk:' || g, 'v1:' || repeat('b', 64), 'succeeded', 1, '{}'::jsonb FROM generate_series(1, 12000) g");
    pqxx::nontransaction(*m_conn).exec("ANALYZE idem.task_idempotency");
    execSql(*m_conn,
        "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, result_json) "
        "SELECT 'tb:more:' || g, 'v1:' || repeat('b', 64), 'succeeded', 1, '{}'::jsonb FROM generate_series(1, 6000) g");

    ConsoleSession session;
    auto w = dashboard(session);
    const auto tileText = w->tile(Tile::TotalRows)->valueText();
    const auto tileDetail = w->tile(Tile::TotalRows)->detailText();
    QVERIFY2(tileText.startsWith(QStringLiteral("≈ ")), qPrintable(tileText));
    const auto figure = tileText.mid(2);

    TaskBrowserWidget page(m_session.get(), m_session.get());
    page.resize(1280, 700);
    page.show();
    openOnPage(*w, Tile::TotalRows, page);
    QVERIFY(waitLoaded(page));
    // The same number with the same label.
    QVERIFY2(page.countText().startsWith(QStringLiteral("about %1 records match: %2").arg(figure, tileDetail)),
        qPrintable(page.countText() + QStringLiteral(" / tile ") + tileText + QStringLiteral(" ") + tileDetail));
}

QTEST_MAIN(TestTileOpens)
#include "tst_tileopens.moc"
