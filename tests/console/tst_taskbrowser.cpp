#include <QtTest>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QCryptographicHash>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QTableView>
#include <QTemporaryDir>

#include <set>

#include "operations/tasklist.h"
#include "models/taskbrowsermodel.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "views/taskbrowserwidget.h"
#include "views/taskdetailpane.h"

using idem::console::ConsoleSession;
using idem::console::TaskBrowserModel;
using idem::console::TaskBrowserWidget;
using namespace idem::test;

// The task browser against a table of 5,000 rows (100 share each updated_at, so page
// boundaries fall inside ties): keyset pages stay bounded, in order, without duplicates or
// gaps; filters are the server's; a refresh merges in place and keeps the selection; hostile
// keys and a 10 MB result are shown and saved unchanged.
class TestTaskBrowser : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void pagesAreBoundedOrderedAndComplete_data();
    void pagesAreBoundedOrderedAndComplete();
    void scrollingFetchesPages();
    void filtersAreServerSide_data();
    void filtersAreServerSide();
    void badFilterIsReportedWithoutQuery();
    void refreshMergesInPlaceKeepingSelection();
    void hostileKeysRoundTrip();
    void bigResultPreviewAndSave();
    void matchCountFollowsTheRows();

private:
    std::vector<std::string> dbKeys(const std::string& where, const std::string& order);
    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<ConsoleSession> m_session;
};

void TestTaskBrowser::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("taskbrowser", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
    // 5,000 rows: tenants t0..t2, statuses cycling, updated_at in steps of one second every 100
    // rows (ties), attempts 1..7, some leases expired.
    execSql(*m_conn,
        "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts,"
        " error_class, owner_token, lease_until, created_at, updated_at)"
        " SELECT 't' || (i % 3) || ':' || (CASE WHEN i % 5 = 0 THEN 'refund' ELSE 'charge' END) || ':order-' ||"
        "        lpad(i::text, 5, '0'), 'v1:' || repeat('a', 64),"
        "        (ARRAY['processing','retryable_failed','failed','succeeded'])[1 + i % 4], 1 + i % 7, 10,"
        "        CASE i % 4 WHEN 1 THEN (CASE WHEN i % 8 = 1 THEN 'unknown' ELSE 'retryable' END)"
        "                   WHEN 2 THEN 'permanent' END,"
        "        CASE WHEN i % 4 = 0 THEN gen_random_uuid() END,"
        "        CASE WHEN i % 4 = 0 THEN now() + (CASE WHEN i % 8 = 0 THEN -60 ELSE 600 END) * interval '1 second' "
        "END,"
        "        timestamptz '2024-05-01 00:00:00Z' + (i / 100) * interval '1 second',"
        "        timestamptz '2024-05-01 00:00:00Z' + (i / 100) * interval '1 second'"
        " FROM generate_series(1, 5000) i");
    // Digest conflicts: the same keys claimed with another request's digest (twice for one).
    for (const char* key :
        { "t0:charge:order-00003", "t1:charge:order-00004", "t1:refund:order-00010", "t0:charge:order-00003" }) {
        pqxx::work w(*m_conn);
        const auto r = w.exec_params("SELECT decision FROM idem.claim($1, 'v1:' || repeat('f', 64),"
                                     " gen_random_uuid(), 30000)",
            key);
        w.commit();
        QCOMPARE(r[0][0].as<std::string>(), std::string("conflict"));
    }
    const auto recorded = querySql(*m_conn,
        "SELECT idempotency_key, n, last_digest FROM"
        " idem.task_idempotency_conflicts ORDER BY 1");
    QCOMPARE(recorded.size(), 3);
    QCOMPARE(recorded[0][0].as<std::string>(), std::string("t0:charge:order-00003"));
    QCOMPARE(recorded[0][1].as<int>(), 2);
    QCOMPARE(recorded[0][2].as<std::string>(), "v1:" + std::string(64, 'f'));
    // The stored digest is untouched (v2 behaviour).
    QCOMPARE(taskField(*m_conn, "t0:charge:order-00003", "request_hash"), "v1:" + std::string(64, 'a'));
    m_session = std::make_unique<ConsoleSession>();
    QVERIFY(connectSession(*m_session, m_db->dsn()));
}

void TestTaskBrowser::cleanupTestCase()
{
    m_session.reset();
    m_conn.reset();
    m_db.reset();
}

std::vector<std::string> TestTaskBrowser::dbKeys(const std::string& where, const std::string& order)
{
    std::vector<std::string> out;
    for (const auto& r :
        querySql(*m_conn, "SELECT idempotency_key FROM idem.task_idempotency t WHERE " + where + " ORDER BY " + order))
        out.push_back(r[0].as<std::string>());
    return out;
}

void TestTaskBrowser::pagesAreBoundedOrderedAndComplete_data()
{
    QTest::addColumn<int>("column");
    QTest::addColumn<bool>("descending");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("order");
    QTest::addRow("key ascending, all") << 0 << false << QStringLiteral("true") << QStringLiteral("idempotency_key");
    QTest::addRow("key descending, all") << 0 << true << QStringLiteral("true")
                                         << QStringLiteral("idempotency_key DESC");
    QTest::addRow("updated ascending, unfinished (ties)")
        << 1 << false << QStringLiteral("status <> 'succeeded'") << QStringLiteral("updated_at, idempotency_key");
    QTest::addRow("updated descending, unfinished (ties)") << 1 << true << QStringLiteral("status <> 'succeeded'")
                                                           << QStringLiteral("updated_at DESC, idempotency_key DESC");
}

void TestTaskBrowser::pagesAreBoundedOrderedAndComplete()
{
    QFETCH(int, column);
    QFETCH(bool, descending);
    QFETCH(QString, where);
    QFETCH(QString, order);
    TaskBrowserModel model(m_session.get());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setPageSize(173); // not a divisor of the 100-row ties: boundaries land inside them
    idem::TaskFilter filter;
    if (column == 1)
        filter.statuses = { "processing", "retryable_failed", "failed" };
    QSignalSpy pages(&model, &TaskBrowserModel::pageLoaded);
    model.setQuery(filter, { column == 1 ? idem::TaskSortColumn::UpdatedAt : idem::TaskSortColumn::Key, descending });
    QVERIFY(pages.wait(browserTimeoutMs));
    const auto expected = dbKeys(where.toStdString(), order.toStdString());
    QVERIFY(expected.size() > 1000);
    // Fetch to the end (the tester asks for more by itself, as a view scrolled to the end does).
    while (!model.atEnd()) {
        model.fetchMore({});
        QVERIFY(QTest::qWaitFor([&] { return !model.busy(); }, browserTimeoutMs));
    }
    // Every read was one bounded page; the model grew page by page.
    for (const auto& args : pages)
        QVERIFY2(args.first().toInt() <= 173, "a fetch brought more than a page");
    QVERIFY(model.atEnd());
    QCOMPARE(model.largestFetch(), 173);
    QCOMPARE(model.fetches(), static_cast<int>((expected.size() + 172) / 173));
    std::vector<std::string> got;
    for (int i = 0; i < model.rowCount(); ++i)
        got.push_back(model.task(i).key);
    QCOMPARE(std::set<std::string>(got.begin(), got.end()).size(), got.size()); // no duplicates
    QCOMPARE(got.size(), expected.size()); // no gaps
    QVERIFY(got == expected); // and the server's order, ties broken by the key
}

void TestTaskBrowser::scrollingFetchesPages()
{
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.resize(1000, 600);
    widget.show();
    auto* model = widget.model();
    model->setPageSize(100);
    QSignalSpy pages(model, &TaskBrowserModel::pageLoaded);
    widget.applyFilter({});
    QVERIFY(pages.wait(browserTimeoutMs));
    QCOMPARE(model->rowCount(), 100);
    // A person dragging the scroll bar to the bottom, three times: three more pages, no more.
    for (int i = 0; i < 3; ++i) {
        const int before = model->rowCount();
        widget.view()->scrollToBottom();
        auto* bar = widget.view()->verticalScrollBar();
        bar->setValue(bar->maximum());
        QVERIFY(QTest::qWaitFor([&] { return model->rowCount() > before && !model->busy(); }, browserTimeoutMs));
        QVERIFY(model->rowCount() <= before + 100);
    }
    QVERIFY(model->rowCount() <= 400);
    QVERIFY(!model->atEnd());
    QTRY_VERIFY_WITH_TIMEOUT(
        widget.findChild<QLabel*>(QStringLiteral("matchCount"))->text().contains(QStringLiteral("5,000")),
        browserTimeoutMs);
}

void TestTaskBrowser::filtersAreServerSide_data()
{
    QTest::addColumn<QString>("control");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("where");
    QTest::addRow("tenant") << QStringLiteral("tenantFilter") << QStringLiteral("t1")
                            << QStringLiteral("split_part(idempotency_key, ':', 1) = 't1'");
    QTest::addRow("operation") << QStringLiteral("operationFilter") << QStringLiteral("refund")
                               << QStringLiteral("split_part(idempotency_key, ':', 2) = 'refund'");
    QTest::addRow("key prefix") << QStringLiteral("prefixFilter") << QStringLiteral("t2:charge:order-01")
                                << QStringLiteral("idempotency_key LIKE 't2:charge:order-01%'");
    QTest::addRow("prefix with LIKE wildcards is literal")
        << QStringLiteral("prefixFilter") << QStringLiteral("t2:ch_rge%") << QStringLiteral("false");
    QTest::addRow("attempts at least") << QStringLiteral("minAttemptsFilter") << QStringLiteral("6")
                                       << QStringLiteral("attempts >= 6");
    QTest::addRow("expired lease") << QStringLiteral("expiredFilter") << QString()
                                   << QStringLiteral("status = 'processing' AND lease_until <= now()");
    QTest::addRow("uncertain") << QStringLiteral("uncertainFilter") << QString()
                               << QStringLiteral("status = 'retryable_failed' AND error_class = 'unknown'");
    QTest::addRow("digest conflicts") << QStringLiteral("conflictFilter") << QString()
                                      << QStringLiteral("idempotency_key IN ('t0:charge:order-00003',"
                                                        " 't1:charge:order-00004', 't1:refund:order-00010')");
    QTest::addRow("failed since") << QStringLiteral("failedSinceFilter") << QStringLiteral("2024-05-01T00:00:40Z")
                                  << QStringLiteral("status = 'failed' AND updated_at >= '2024-05-01 00:00:40Z'");
}

void TestTaskBrowser::filtersAreServerSide()
{
    QFETCH(QString, control);
    QFETCH(QString, value);
    QFETCH(QString, where);
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.show();
    widget.model()->setPageSize(5000);
    QSignalSpy pages(widget.model(), &TaskBrowserModel::pageLoaded);
    auto* obj = widget.findChild<QWidget*>(control);
    QVERIFY(obj);
    if (auto* edit = qobject_cast<QLineEdit*>(obj)) {
        QTest::keyClicks(edit, value);
        QTest::keyClick(edit, Qt::Key_Return);
    } else if (auto* spin = qobject_cast<QAbstractSpinBox*>(obj)) {
        spin->selectAll();
        QTest::keyClicks(spin, value);
        QTest::mouseClick(widget.findChild<QPushButton*>(QStringLiteral("applyFilter")), Qt::LeftButton);
    } else {
        QTest::mouseClick(obj, Qt::LeftButton, {}, QPoint(5, obj->height() / 2)); // the check box
    }
    QVERIFY(QTest::qWaitFor([&] { return !pages.isEmpty() && !widget.model()->busy(); }, browserTimeoutMs));
    const auto expected = dbKeys(where.toStdString(), "idempotency_key");
    std::vector<std::string> got;
    for (int i = 0; i < widget.model()->rowCount(); ++i)
        got.push_back(widget.model()->task(i).key);
    QCOMPARE(got.size(), expected.size());
    QVERIFY(got == expected);
    if (where != QStringLiteral("false"))
        QVERIFY(!got.empty());
    if (control == QStringLiteral("conflictFilter")) {
        // The detail says how often and with what.
        widget.view()->selectRow(widget.model()->rowOfKey(QStringLiteral("t0:charge:order-00003")));
        auto* conflicts = widget.findChild<QLabel*>(QStringLiteral("detailConflicts"));
        QTRY_VERIFY_WITH_TIMEOUT(conflicts->text().contains(QStringLiteral("2 digest conflict(s)")), browserTimeoutMs);
        QVERIFY(conflicts->text().contains(QStringLiteral("v1:ffff")));
    }
}

void TestTaskBrowser::badFilterIsReportedWithoutQuery()
{
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.show();
    QTest::keyClicks(widget.findChild<QLineEdit*>(QStringLiteral("failedSinceFilter")), QStringLiteral("yesterday"));
    QTest::keyClick(widget.findChild<QLineEdit*>(QStringLiteral("failedSinceFilter")), Qt::Key_Return);
    auto* error = widget.findChild<QLabel*>(QStringLiteral("browserError"));
    QVERIFY(error->isVisible());
    QVERIFY2(error->text().contains(QStringLiteral("ISO 8601")), qPrintable(error->text()));
    QCOMPARE(widget.model()->rowCount(), 0);
    QVERIFY(!widget.model()->busy());
    // Sorting all statuses by update time would read the whole table: refused, said why.
    idem::TaskFilter all;
    widget.applyFilter(all);
    widget.setSort({ idem::TaskSortColumn::UpdatedAt, true });
    QVERIFY(error->text().contains(QStringLiteral("sort by key")));
    QVERIFY(!widget.model()->busy());
}

void TestTaskBrowser::refreshMergesInPlaceKeepingSelection()
{
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.show();
    auto* model = widget.model();
    model->setPageSize(50);
    QSignalSpy pages(model, &TaskBrowserModel::pageLoaded);
    idem::TaskFilter f;
    f.tenant = "t0";
    widget.applyFilter(f);
    QVERIFY(pages.wait(browserTimeoutMs));
    QCOMPARE(model->rowCount(), 50);
    const auto selectedKey = model->task(20).key;
    const auto changedKey = model->task(5).key;
    const auto goneKey = model->task(10).key;
    const auto lastKey = model->task(49).key;
    widget.view()->selectRow(20);
    // Meanwhile: a row changes, one disappears, one appears before the selection.
    execSql(*m_conn, "UPDATE idem.task_idempotency SET attempts = 99, updated_at = now() WHERE idempotency_key = $1",
        changedKey);
    execSql(*m_conn, "DELETE FROM idem.task_idempotency WHERE idempotency_key = $1", goneKey);
    const std::string newKey = model->task(2).key + "-new";
    plantTask(*m_conn, newKey, "failed", 1, 5, "permanent");
    QSignalSpy refreshed(model, &TaskBrowserModel::refreshed);
    QSignalSpy resets(model, &QAbstractItemModel::modelReset);
    widget.refresh();
    QVERIFY(refreshed.wait(browserTimeoutMs));
    QCOMPARE(resets.count(), 0); // merged, not reset
    QCOMPARE(model->rowCount(), 50); // one gone, one new
    QCOMPARE(model->rowOfKey(QString::fromStdString(goneKey)), -1);
    QCOMPARE(model->rowOfKey(QString::fromStdString(newKey)), 3);
    QCOMPARE(model->task(model->rowOfKey(QString::fromStdString(changedKey))).attempts, 99);
    QCOMPARE(model->task(49).key, lastKey);
    const auto selected = widget.view()->selectionModel()->selectedRows();
    QCOMPARE(selected.size(), 1);
    QCOMPARE(model->task(selected.first().row()).key, selectedKey);
    QCOMPARE(selected.first().row(), 20);
    // And the next page continues after the last row, not after the shifted count.
    model->fetchMore({});
    QVERIFY(QTest::qWaitFor([&] { return !model->busy(); }, browserTimeoutMs));
    QVERIFY(model->task(50).key > lastKey);
    QCOMPARE(model->rowOfKey(QString::fromStdString(lastKey)), 49);
}

void TestTaskBrowser::hostileKeysRoundTrip()
{
    const std::vector<std::string> keys = {
        "hostile:op:it's \"quoted\"; DROP TABLE x; --",
        "hostile:op:100% _done_ \\ back",
        std::string("hostile:op:ctrl\x01\x02\t\n\r\x7f"
                    "end"),
        "hostile:op:" + std::string(10 * 1024, 'k') + "%;'",
        "hostile:op:日本語 ✓ émoji 🚀",
    };
    for (const auto& k : keys)
        plantTask(*m_conn, k, "failed", 2, 5, "permanent");
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.resize(1100, 600);
    widget.show();
    QSignalSpy pages(widget.model(), &TaskBrowserModel::pageLoaded);
    idem::TaskFilter f;
    f.tenant = "hostile";
    widget.applyFilter(f);
    QVERIFY(pages.wait(browserTimeoutMs));
    QCOMPARE(widget.model()->rowCount(), static_cast<int>(keys.size()));
    for (const auto& k : keys) {
        const int row = widget.model()->rowOfKey(QString::fromStdString(k));
        QVERIFY2(row >= 0, k.substr(0, 60).c_str());
        widget.view()->selectRow(row);
        auto* key = widget.detail()->keyField();
        // Every character, the invisible ones as escapes (issue 24 item 4); the copy is raw.
        const QString shown = k == keys[2] ? QStringLiteral("hostile:op:ctrl\\x01\\x02\\x09\\x0a\\x0d\\x7fend")
                                           : QString::fromStdString(k);
        QTRY_COMPARE_WITH_TIMEOUT(key->text(), shown, browserTimeoutMs);
        QTest::mouseClick(widget.findChild<QPushButton*>(QStringLiteral("copyKeyButton")), Qt::LeftButton);
        QCOMPARE(QApplication::clipboard()->text().toStdString(), k);
    }
    // A prefix holding LIKE's own wildcards matches only itself.
    f = {};
    f.keyPrefix = "hostile:op:100% _";
    widget.applyFilter(f);
    QVERIFY(QTest::qWaitFor([&] { return !widget.model()->busy(); }, browserTimeoutMs));
    QCOMPARE(widget.model()->rowCount(), 1);
    QCOMPARE(widget.model()->task(0).key, keys[1]);
}

void TestTaskBrowser::bigResultPreviewAndSave()
{
    const std::string key = "big:result:ten-megabytes";
    plantTask(*m_conn, key, "succeeded", 1, 5);
    // ~10 MB of JSON: an array of 100,000 objects.
    execSql(*m_conn,
        "UPDATE idem.task_idempotency SET result_json = (SELECT jsonb_agg(jsonb_build_object('n', i, 'pad',"
        " repeat('x', 70))) FROM generate_series(1, 100000) i) WHERE idempotency_key = $1",
        key);
    const auto bytes = std::stoll(taskField(*m_conn, key, "octet_length(result_json::text)"));
    QVERIFY(bytes > 9'000'000);
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.show();
    QSignalSpy pages(widget.model(), &TaskBrowserModel::pageLoaded);
    idem::TaskFilter f;
    f.keyPrefix = key;
    widget.applyFilter(f);
    QVERIFY(pages.wait(browserTimeoutMs));
    QCOMPARE(widget.model()->rowCount(), 1);
    widget.view()->selectRow(0);
    auto* pane = widget.detail();
    QTRY_COMPARE_WITH_TIMEOUT(pane->keyField()->text(), QString::fromStdString(key), browserTimeoutMs);
    // Only the preview came over: cut, pretty-printed, with the real size said.
    const auto shown = pane->resultView()->toPlainText();
    QVERIFY(shown.size() <= 64 * 1024);
    QVERIFY(shown.startsWith(QStringLiteral("[\n    {")));
    QVERIFY2(pane->resultInfo()->text().contains(QStringLiteral("MB")), qPrintable(pane->resultInfo()->text()));
    QVERIFY(pane->resultInfo()->text().contains(QStringLiteral("first")));
    QVERIFY(pane->saveButton()->isEnabled());
    QTemporaryDir dir;
    const auto path = dir.filePath(QStringLiteral("result.json"));
    pane->saveResultTo(path);
    QTRY_VERIFY_WITH_TIMEOUT(pane->resultInfo()->text().startsWith(QStringLiteral("Saved")), browserTimeoutMs);
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto saved = file.readAll();
    QCOMPARE(saved.size(), bytes);
    const auto sha = taskField(*m_conn, key, "encode(sha256(convert_to(result_json::text, 'UTF8')), 'hex')");
    QCOMPARE(QCryptographicHash::hash(saved, QCryptographicHash::Sha256).toHex().toStdString(), sha);
    QVERIFY(!QFile::exists(path + QStringLiteral(".part")));
}

// The count above the table is re-read with the rows: new matching records raise it, without
// a new query, and it always agrees with SQL.
void TestTaskBrowser::matchCountFollowsTheRows()
{
    const auto plant = [&](int from, int to) {
        execSql(*m_conn,
            "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, error_class)"
            " SELECT 'tz:charge:late-' || i, 'v1:' || repeat('b', 64), 'failed', 1, 'permanent'"
            " FROM generate_series($1::int, $2::int) i",
            from, to);
    };
    plant(1, 3);
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.show();
    auto* label = widget.findChild<QLabel*>(QStringLiteral("matchCount"));
    idem::TaskFilter f;
    f.statuses = { "failed" };
    f.tenant = "tz";
    widget.applyFilter(f);
    // "record(s)": the test loads no translator for the English plural forms.
    QTRY_COMPARE_WITH_TIMEOUT(label->text(), QStringLiteral("3 record(s) match"), browserTimeoutMs);

    plant(4, 7); // failures keep arriving during the incident
    widget.refresh(); // what the 5 s timer and F5 do
    QTRY_COMPARE_WITH_TIMEOUT(label->text(), QStringLiteral("7 record(s) match"), browserTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(widget.model()->rowCount(), 7, browserTimeoutMs);
    QCOMPARE(querySql(*m_conn, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'tz:%'")[0][0]
                 .as<int>(),
        7);
    execSql(*m_conn, "DELETE FROM idem.task_idempotency WHERE idempotency_key LIKE 'tz:%'");
}

QTEST_MAIN(TestTaskBrowser)
#include "tst_taskbrowser.moc"
