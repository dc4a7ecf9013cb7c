#include <QtTest>

#include <QChart>
#include <QChartView>
#include <QHeaderView>
#include <QScrollBar>
#include <QAbstractAxis>
#include <QDateTimeAxis>
#include <QLabel>
#include <QRegularExpression>
#include <QLineSeries>
#include <QTableWidget>

#include "core/connection.h"
#include "models/auditmodel.h"
#include "models/storagemodel.h"
#include "operations/purge.h"
#include "operations/storagehistory.h"
#include "tests/console/roundticks.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "views/horizonnotice.h"
#include "views/storagewidget.h"
#include "models/horizonwatch.h"

using idem::console::AuditModel;
using idem::console::ConsoleSession;
using idem::console::StorageModel;
using idem::console::StorageWidget;
using idem::console::HorizonNotice;
using namespace idem::test;

// The Storage page shows what the database holds and what a purge would remove, as SQL says:
// the rows due per operation against its horizon (charge 30 days, every other operation 7), the
// plain sentence of what purging means, the last purge run once one ran, the table sizes, and
// the size over time; a reader (no write, no purge) sees the same page.
class TestStoragePage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void showsWhatAPurgeWouldRemove();
    void lastRunAfterAPurge();
    void rowsHistoryCountsBack();
    void readerSeesThePage();
    void chartIsEmptyBeforeTheFirstRead();
    void succeededFollowsInsertsBetweenAnalyses();
    void policySetIsWholeOrInItsTooltip();
    void runningPurgeSaysWhetherItsSessionLives();
    void readerSeesWhoHoldsTheHorizon();

private:
    // The page shown on `session`, loaded once (fails the test if it does not load).
    std::unique_ptr<StorageWidget> loaded(ConsoleSession& session);
    static int rowOf(QTableWidget* t, const QString& first);
    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<ConsoleSession> m_session;
};

void TestStoragePage::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("storagepage", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), true }); // with the roles: a reader logs in below
    const double day = 86400;
    // charge (30 days): 3 due, 2 kept; email (default 7 days): 4 due, 1 kept.
    for (int i = 0; i < 3; ++i)
        plantTask(*m_conn, "t1:charge:old" + std::to_string(i), "succeeded", 1, 5, nullptr, 0, 31 * day);
    for (int i = 0; i < 2; ++i)
        plantTask(*m_conn, "t1:charge:new" + std::to_string(i), "succeeded", 1, 5, nullptr, 0, 29 * day);
    for (int i = 0; i < 4; ++i)
        plantTask(*m_conn, "t1:email:old" + std::to_string(i), "succeeded", 1, 5, nullptr, 0, 8 * day);
    plantTask(*m_conn, "t1:email:new", "succeeded", 1, 5, nullptr, 0, 6 * day);
    // Never purged, whatever their age.
    plantTask(*m_conn, "t1:email:failed", "failed", 5, 5, "permanent", 0, 400 * day);
    plantTask(*m_conn, "t1:charge:running", "processing", 1, 5, nullptr, 60, 40 * day);
    execSql(*m_conn, "ANALYZE idem.task_idempotency");
    m_session = std::make_unique<ConsoleSession>();
    QVERIFY(connectSession(*m_session, m_db->dsn()));
}

void TestStoragePage::cleanupTestCase()
{
    m_session.reset();
    m_conn.reset();
    m_db.reset();
}

std::unique_ptr<StorageWidget> TestStoragePage::loaded(ConsoleSession& session)
{
    auto w = std::make_unique<StorageWidget>(&session);
    QSignalSpy updated(w->model(), &StorageModel::updated);
    QSignalSpy failed(w->model(), &StorageModel::failed);
    w->resize(1280, 800);
    w->show(); // reads on show
    if (!QTest::qWaitFor([&] { return !updated.isEmpty() || !failed.isEmpty(); }, browserTimeoutMs))
        qWarning("the Storage page did not load");
    if (!failed.isEmpty())
        qWarning("the Storage page failed: %s", qPrintable(failed.first().first().toString()));
    return updated.isEmpty() ? nullptr : std::move(w);
}

int TestStoragePage::rowOf(QTableWidget* t, const QString& first)
{
    for (int r = 0; r < t->rowCount(); ++r)
        if (t->item(r, 0) && t->item(r, 0)->text() == first)
            return r;
    return -1;
}

void TestStoragePage::showsWhatAPurgeWouldRemove()
{
    auto w = loaded(*m_session);
    QVERIFY(w);
    auto* retention = w->retentionTable();
    const int charge = rowOf(retention, QStringLiteral("charge"));
    const int email = rowOf(retention, QStringLiteral("email"));
    QVERIFY(charge >= 0);
    QVERIFY(email >= 0);
    QCOMPARE(retention->item(charge, 1)->text(), QStringLiteral("30 days"));
    QCOMPARE(retention->item(email, 1)->text(), QStringLiteral("7 days (default)"));
    QCOMPARE(retention->item(charge, 3)->text(), QStringLiteral("3"));
    QCOMPARE(retention->item(email, 3)->text(), QStringLiteral("4"));
    // The oldest succeeded charge key (31 days) and email key (8 days), as ages.
    QVERIFY2(retention->item(charge, 2)->text().startsWith(QStringLiteral("31 d")),
        qPrintable(retention->item(charge, 2)->text()));
    QVERIFY2(retention->item(email, 2)->text().startsWith(QStringLiteral("8 d")),
        qPrintable(retention->item(email, 2)->text()));

    const QString meaning = w->meaningLabel()->text();
    QVERIFY2(meaning.contains(QStringLiteral("A retry of a “charge” key older than 30 days executes again.")),
        qPrintable(meaning));
    QVERIFY2(meaning.contains(QStringLiteral("A retry of any other key older than 7 days executes again.")),
        qPrintable(meaning));
    QVERIFY(w->purgeLabel()->text().contains(QStringLiteral("Last run: never")));
    QVERIFY2(w->purgeLabel()->text().contains(QStringLiteral("Due for purge now: 7 succeeded rows")),
        qPrintable(w->purgeLabel()->text()));

    // Rows by status: the unfinished ones exact (1 processing, 1 failed), succeeded labelled.
    auto* status = w->statusTable();
    const int processing = rowOf(status, QStringLiteral("Processing"));
    const int failed = rowOf(status, QStringLiteral("Failed"));
    const int succeeded = rowOf(status, QStringLiteral("Succeeded"));
    QVERIFY(processing >= 0 && failed >= 0 && succeeded >= 0);
    QCOMPARE(status->item(processing, 1)->text(), QStringLiteral("1"));
    QCOMPARE(status->item(failed, 1)->text(), QStringLiteral("1"));
    QVERIFY(!status->item(succeeded, 2)->text().isEmpty());

    // The task table's size is the server's.
    auto* tables = w->tablesTable();
    const int task = rowOf(tables, QStringLiteral("task_idempotency"));
    QVERIFY(task >= 0);
    const auto total = querySql(*m_conn, "SELECT pg_total_relation_size('idem.task_idempotency')")[0][0]
                           .as<std::int64_t>();
    QCOMPARE(tables->item(task, 3)->text(), idem::console::storagetext::bytes(total));
    // One size sample at least (taken by this read): the chart has its points.
    QVERIFY(w->tableSeries()->count() >= 1);
    QCOMPARE(w->tableSeries()->count(), w->indexSeries()->count());
    // One set of grid lines (issue 24 item 12's pictures: the rows axis drew a second, misaligned one).
    const auto verticalAxes = w->findChild<QChartView*>(QStringLiteral("storageSizeChart"))->chart()->axes(Qt::Vertical);
    QCOMPARE(std::count_if(verticalAxes.begin(), verticalAxes.end(), [](const QAbstractAxis* a) { return a->isGridLineVisible(); }), 1);
}

void TestStoragePage::lastRunAfterAPurge()
{
    idem::PurgeOptions o;
    o.batch = 2;
    o.actor = "ops@storagepage";
    const auto result = idem::runPurge(*m_conn, idem::SchemaName(), o);
    QCOMPARE(result.rowsRemoved, 7);
    // What stayed: every row that is not succeeded past its horizon.
    QCOMPARE(querySql(*m_conn, "SELECT count(*) FROM idem.task_idempotency")[0][0].as<int>(), 5);

    auto w = loaded(*m_session);
    QVERIFY(w);
    const QString purge = w->purgeLabel()->text();
    QVERIFY2(purge.contains(QStringLiteral("7 rows removed")), qPrintable(purge));
    QVERIFY2(purge.contains(QStringLiteral("ops@storagepage")), qPrintable(purge));
    QVERIFY2(purge.contains(QStringLiteral("Due for purge now: 0 succeeded rows")), qPrintable(purge));
    const int charge = rowOf(w->retentionTable(), QStringLiteral("charge"));
    QVERIFY(charge >= 0);
    QCOMPARE(w->retentionTable()->item(charge, 3)->text(), QStringLiteral("0"));

    // The run's one audit entry, on the Audit page's "purge" filter: many keys, so no single one.
    AuditModel audit(m_session.get());
    QSignalSpy loadedPage(&audit, &AuditModel::pageLoaded);
    idem::AuditFilter f;
    f.action = "purge";
    audit.setFilter(f);
    QVERIFY(QTest::qWaitFor([&] { return !loadedPage.isEmpty(); }, browserTimeoutMs));
    QCOMPARE(audit.rowCount(), 1);
    QCOMPARE(audit.entry(0).id, result.auditId);
    QCOMPARE(audit.data(audit.index(0, AuditModel::KeyColumn)).toString(), QStringLiteral("—"));
    QCOMPARE(audit.data(audit.index(0, AuditModel::ActionColumn)).toString(), QStringLiteral("purge"));
}

void TestStoragePage::rowsHistoryCountsBack()
{
    // 100 rows from before the counters (adopted), 40 keys created 5 hours ago and 25 three days
    // ago through the workers' flush; the purge of lastRunAfterAPurge removed 7 just now.
    for (int i = 0; i < 100; ++i)
        plantTask(*m_conn, "t2:email:adopted" + std::to_string(i), "succeeded", 1, 5, nullptr, 0, 3600);
    execSql(*m_conn, R"(
        SELECT idem.add_counters(jsonb_build_array(
            jsonb_build_object('m', extract(epoch FROM date_trunc('minute', now() - interval '5 hours'))::bigint,
                               't', 't2', 'o', 'email', 'w', 'acquired', 'n', 40),
            jsonb_build_object('m', extract(epoch FROM date_trunc('minute', now() - interval '3 days'))::bigint,
                               't', 't2', 'o', 'email', 'w', 'acquired', 'n', 25)))
    )");
    execSql(*m_conn, "ANALYZE idem.task_idempotency");
    pqxx::read_transaction tx(*m_conn);
    const auto h = idem::readRowsHistory(tx, idem::SchemaName(), 7);
    QCOMPARE(h.rowsNow, 105);
    QVERIFY(!h.points.empty());
    QCOMPARE(h.points.back().rows, 105);
    // Counted back: 105 now, 112 before the purge, 72 before the 40, 47 before the 25.
    QList<qint64> steps;
    qint64 created = 0;
    qint64 purged = 0;
    for (const auto& p : h.points) {
        if (steps.isEmpty() || steps.back() != p.rows)
            steps << p.rows;
        created += p.created;
        purged += p.purged;
    }
    QCOMPARE(steps, (QList<qint64> { 47, 72, 112, 105 }));
    QCOMPARE(created, 65);
    QCOMPARE(purged, 7);
    // Hours before the last two days, ten minutes within them; the first point is just before
    // the first activity (three days ago), not seven days back.
    const auto at = [](const std::string& iso) { return QDateTime::fromString(QString::fromStdString(iso), Qt::ISODate); };
    const auto first = at(h.points.front().at);
    QVERIFY2(first.secsTo(QDateTime::currentDateTimeUtc()) < 3 * 86400 + 2 * 3600, h.points.front().at.c_str());
    QCOMPARE(at(h.points[1].at).toSecsSinceEpoch() - first.toSecsSinceEpoch(), 3600);
    QCOMPARE(at(h.points[h.points.size() - 2].at).toSecsSinceEpoch() % 600, 0);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, idem::readRowsHistory(tx, idem::SchemaName(), 0));

    // The page draws it: the last point of its rows line is the table's rows now.
    auto w = loaded(*m_session);
    QVERIFY(w);
    QVERIFY(w->rowsSeries()->count() >= 4);
    QCOMPARE(w->rowsSeries()->at(w->rowsSeries()->count() - 1).y(), 105.0);
    // Three days of history tick on local midnights, as the dashboard ticks on round minutes
    // (they fell at 22:03, 22:07, wherever the first sample was).
    const auto horizontal = w->findChild<QChartView*>(QStringLiteral("storageSizeChart"))->chart()->axes(Qt::Horizontal);
    QCOMPARE(horizontal.size(), 1);
    auto* x = qobject_cast<QDateTimeAxis*>(horizontal.first());
    QVERIFY(x);
    const QString problem = roundTicksProblem(x);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY2(x->min().secsTo(x->max()) >= 3 * 86400, qPrintable(x->min().toString() + x->max().toString()));
}

void TestStoragePage::readerSeesThePage()
{
    const std::string role = "idem_t_storagepage_reader";
    createLoginRole(role, "reader-pw-7c2", "idem_reader");
    ConsoleSession reader;
    QVERIFY(connectSession(reader, dsnWith(m_db->dsn(), { { "user", role }, { "password", "reader-pw-7c2" } })));
    auto w = loaded(reader);
    QVERIFY(w);
    QVERIFY(rowOf(w->retentionTable(), QStringLiteral("charge")) >= 0);
    QVERIFY(rowOf(w->tablesTable(), QStringLiteral("task_idempotency")) >= 0);
}

void TestStoragePage::chartIsEmptyBeforeTheFirstRead()
{
    // Nothing read yet (no connection): no 1970 axis and no made-up scale, an empty state.
    ConsoleSession idle;
    StorageWidget w(&idle);
    auto* view = w.findChild<QChartView*>(QStringLiteral("storageSizeChart"));
    QVERIFY(view);
    QVERIFY2(view->chart()->title().contains(QStringLiteral("not read yet")), qPrintable(view->chart()->title()));
    const auto axes = view->chart()->axes();
    QVERIFY(!axes.isEmpty());
    for (const auto* axis : axes)
        QVERIFY(!axis->isVisible());
    // Once read, the axes and the plain title are back.
    auto loadedPage = loaded(*m_session);
    QVERIFY(loadedPage);
    auto* shown = loadedPage->findChild<QChartView*>(QStringLiteral("storageSizeChart"));
    QCOMPARE(shown->chart()->title(), QStringLiteral("Size of the task table over time"));
    for (const auto* axis : shown->chart()->axes())
        QVERIFY(axis->isVisible());
}

void TestStoragePage::succeededFollowsInsertsBetweenAnalyses()
{
    // After an ANALYZE, succeeded rows keep coming: the estimate must rise with them, not stay
    // at the analysed count (or fall as the live unfinished rows grow).
    // No autoanalyze in between: the point is what the page shows until the next one.
    {
        pqxx::nontransaction n(*m_conn);
        n.exec("ALTER TABLE idem.task_idempotency SET (autovacuum_enabled = false)");
        n.exec("ANALYZE idem.task_idempotency");
    }
    const auto restore = qScopeGuard([this] {
        pqxx::nontransaction n(*m_conn);
        n.exec("ALTER TABLE idem.task_idempotency RESET (autovacuum_enabled)");
    });
    auto before = loaded(*m_session);
    QVERIFY(before);
    const int row = rowOf(before->statusTable(), QStringLiteral("Succeeded"));
    QVERIFY(row >= 0);
    const auto figure = [](const QString& text) { return QString(text).remove(QRegularExpression(QStringLiteral("[^0-9]"))).toLongLong(); };
    const long long was = figure(before->statusTable()->item(row, 1)->text());
    for (int i = 0; i < 500; ++i)
        plantTask(*m_conn, "t3:charge:fresh" + std::to_string(i), "succeeded", 1, 5, nullptr, 0, 60);
    // The statistics collector reports the inserts within a second or so; reltuples never moves.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            auto page = loaded(*m_session);
            const int r = page ? rowOf(page->statusTable(), QStringLiteral("Succeeded")) : -1;
            return r >= 0 && figure(page->statusTable()->item(r, 1)->text()) >= was + 500;
        }(),
        20000);
}

void TestStoragePage::policySetIsWholeOrInItsTooltip()
{
    // Issue 24 item 12: "Policy set" is "when, session user (actor)", long enough to be cut off by
    // the page's default width. The same horizon again: only who set it changes.
    const std::string actor = "alice.operator@payments-reconciliation-eu-west-1.example.com";
    idem::setRetention(*m_conn, idem::SchemaName(), "charge", 30 * 86400, "INC-4713: who keeps a month", actor);
    auto w = loaded(*m_session);
    QVERIFY(w);
    auto* retention = w->retentionTable();
    const int charge = rowOf(retention, QStringLiteral("charge"));
    QVERIFY(charge >= 0);
    const auto* item = retention->item(charge, 4);
    QVERIFY2(item->text().contains(QString::fromStdString(actor)), qPrintable(item->text()));
    // What a user sees: the whole text in its column, or elided with the whole text a hover away.
    const int needed = retention->fontMetrics().horizontalAdvance(item->text());
    const bool whole = retention->columnWidth(4) >= needed;
    QVERIFY2(whole || item->toolTip() == item->text(),
        qPrintable(QStringLiteral("%1 px column for %2 px of \"%3\", tooltip \"%4\"")
                       .arg(retention->columnWidth(4))
                       .arg(needed)
                       .arg(item->text(), item->toolTip())));
    // The last column takes the rest of the table: no blank column after it, no scroll bar.
    QCOMPARE(retention->horizontalHeader()->length(), retention->viewport()->width());
    QVERIFY(!retention->horizontalScrollBar()->isVisible());
}

// A run row says running until the next purge closes it; the page says what the row cannot
// (issue #29): its session is gone (a failover, a killed process), or it cannot be told (a standby).
void TestStoragePage::runningPurgeSaysWhetherItsSessionLives()
{
    idem::PurgeRun run;
    run.id = 7;
    run.state = "running";
    run.startedAt = "2026-12-03T10:00:00Z";
    run.rowsRemoved = 1200;
    run.actor = "ops@host";
    run.alive = true;
    const QString live = idem::console::storagetext::purgeRun(run);
    QVERIFY2(live.startsWith(QStringLiteral("running since")), qPrintable(live));
    run.alive = false;
    const QString gone = idem::console::storagetext::purgeRun(run);
    QVERIFY2(gone.contains(QStringLiteral("stopped without finishing")) && gone.contains(QStringLiteral("closes it as abandoned"))
            && gone.contains(QLocale().toString(1200)),
        qPrintable(gone));
    run.alive.reset();
    const QString standby = idem::console::storagetext::purgeRun(run);
    QVERIFY2(standby.contains(QStringLiteral("as of the replay point")), qPrintable(standby));
}

// Issue 46 item 1: a report holds a REPEATABLE READ snapshot open while the claims go on updating
// rows. A reader login's Storage page names the session (pid, application) in its holders table,
// with the query text hidden, and the dashboard's line says the horizon is held while the dead
// rows grow, both within one refresh of the hold; once it ends, both clear.
void TestStoragePage::readerSeesWhoHoldsTheHorizon()
{
    const std::string role = "idem_t_storagepage_reader";
    createLoginRole(role, "reader-pw-7c2", "idem_reader");
    ConsoleSession reader;
    QVERIFY(connectSession(reader, dsnWith(m_db->dsn(), { { "user", role }, { "password", "reader-pw-7c2" } })));
    StorageWidget page(&reader);
    page.model()->setHeldAfterSeconds(1);
    HorizonNotice notice(&reader);
    notice.watch()->setHeldAfterSeconds(1);
    notice.watch()->setInterval(300);
    QSignalSpy pageRead(page.model(), &StorageModel::updated);
    page.resize(1280, 1000);
    page.show();
    QVERIFY(QTest::qWaitFor([&] { return !pageRead.isEmpty(); }, browserTimeoutMs));
    QVERIFY(page.holdersTable()->rowCount() == 0 || !page.horizonLabel()->text().contains(QStringLiteral("Held past")));

    auto holder = idem::connect(dsnWith(m_db->dsn(), { { "application_name", "storage-report" } }));
    const int pid = holder->backendpid();
    pqxx::work report(*holder);
    report.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    report.exec("SELECT count(*) AS report_secret_rows FROM idem.task_idempotency");
    const auto work = [this] {
        execSql(*m_conn, "UPDATE idem.task_idempotency SET attempts = attempts WHERE idempotency_key LIKE 't1:%'");
    };
    work();
    const auto holderRow = [&]() -> int {
        for (int r = 0; r < page.holdersTable()->rowCount(); ++r)
            if (page.holdersTable()->item(r, 1)->text() == QString::number(pid))
                return r;
        return -1;
    };
    // One refresh after the hold began (the page reads every 30 s; here at once).
    pageRead.clear();
    page.reload();
    QVERIFY(QTest::qWaitFor([&] { return !pageRead.isEmpty(); }, browserTimeoutMs));
    const int row = holderRow();
    QVERIFY2(row >= 0, qPrintable(page.horizonLabel()->text()));
    QCOMPARE(page.holdersTable()->item(row, 3)->text(), QStringLiteral("storage-report"));
    QCOMPARE(page.holdersTable()->item(row, 5)->text(), QStringLiteral("idle in transaction"));
    QCOMPARE(page.holdersTable()->item(row, 4)->text(), QStringLiteral("hidden"));
    QVERIFY(page.holdersTable()->item(row, 8)->text().startsWith(QStringLiteral("hidden")));
    QVERIFY(page.horizonLabel()->text().contains(QStringLiteral("This login lacks pg_read_all_stats")));
    for (int r = 0; r < page.holdersTable()->rowCount(); ++r)
        QVERIFY(!page.holdersTable()->item(r, 8)->text().contains(QStringLiteral("report_secret_rows")));

    // The dashboard's line: held past 1 s while dead rows grow (the workload goes on meanwhile).
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                     work();
                     return notice.isVisibleTo(nullptr) && !notice.isHidden();
                 },
                 browserTimeoutMs),
        qPrintable(notice.watch()->error()));
    QVERIFY2(notice.text().contains(QStringLiteral("pid %1").arg(pid)), qPrintable(notice.text()));
    QVERIFY(notice.text().contains(QStringLiteral("application storage-report")));
    QVERIFY(!notice.text().contains(QStringLiteral("report_secret_rows")));
    pageRead.clear();
    page.reload();
    QVERIFY(QTest::qWaitFor([&] { return !pageRead.isEmpty(); }, browserTimeoutMs));
    QVERIFY2(page.horizonLabel()->text().contains(QStringLiteral("Held past")), qPrintable(page.horizonLabel()->text()));
    if (!qEnvironmentVariableIsEmpty("IDEM_SCREENSHOT_DIR"))
        page.grab().save(qEnvironmentVariable("IDEM_SCREENSHOT_DIR") + QStringLiteral("/storage-horizon.png"));

    // Released: the line goes at the next read, the holder leaves the page's table.
    report.commit();
    holder.reset();
    QVERIFY(QTest::qWaitFor([&] { return notice.isHidden(); }, browserTimeoutMs));
    pageRead.clear();
    page.reload();
    QVERIFY(QTest::qWaitFor([&] { return !pageRead.isEmpty(); }, browserTimeoutMs));
    QCOMPARE(holderRow(), -1);
    QVERIFY(!page.horizonLabel()->text().contains(QStringLiteral("Held past")));
}

QTEST_MAIN(TestStoragePage)
#include "tst_storagepage.moc"
