// What a dashboard tile's click leaves on the Tasks page (issue 24, items 1, 2, 12 and 14), driven
// as an operator drives it against planted rows: the tile's conditions that have no control of
// their own are said above the table and removable; a filter changed afterwards means exactly
// what the controls show (the count as SQL counts it); a released row stays listed; Failed
// retries opens every key whose attempt 2 or later failed in the window, a later success
// included; the status list keeps one entry for a tile's statuses, in words; the page re-reads
// when shown with data older than one poll; the Key column fits the keys it shows. Issue 41
// item 2: every filter of idemctl job start and the error text are controls, typed and ticked as
// an operator does to single out what a gateway broke, and Apply to all says that filter in
// words and starts a job over exactly those rows.

#include <QtTest>

#include <QCheckBox>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QToolButton>

#include "models/dashboardmodel.h"
#include "models/taskbrowsermodel.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "views/actiondialog.h"
#include "views/applyalldialog.h"
#include "views/taskbrowserwidget.h"
#include "views/theme.h"

using idem::console::ActionDialog;
using idem::console::ApplyAllDialog;
using idem::console::ConsoleSession;
using idem::console::DashboardModel;
using idem::console::DashboardSettings;
using idem::console::TaskBrowserModel;
using idem::console::TaskBrowserWidget;
using idem::console::Tile;
using namespace idem::test;

class TestTaskBrowserTiles : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void processingTileThenFailed();
    void retriesTileThenFailedAnyAttempts();
    void tileConditionsAreShownAndRemovable();
    void releasedRowStaysListed();
    void failedRetriesOpensTheKeysItCounted();
    void tileStatusesKeepOneEntryInWords();
    void shownPageIsNotOlderThanOnePoll();
    void keyColumnFitsTheKeys();
    void gatewayFiltersAndApplyAllInWords();

private:
    bool waitLoaded(TaskBrowserWidget& w);
    qint64 sqlCount(const std::string& where);
    void chooseStatus(TaskBrowserWidget& w, const QString& statuses);
    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<ConsoleSession> m_session;
    DashboardModel m_dashboard; // what the tiles open, as the dashboard builds it
};

void TestTaskBrowserTiles::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("taskbrowser_tiles", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), true });
    m_session = std::make_unique<ConsoleSession>();
    QVERIFY(connectSession(*m_session, m_db->dsn()));
    QVERIFY(m_session->serverInfo().isOperator);
    DashboardSettings s;
    s.windowMinutes = 15;
    m_dashboard.setSettings(s);
}

void TestTaskBrowserTiles::cleanupTestCase()
{
    m_session.reset();
    m_conn.reset();
    m_db.reset();
}

void TestTaskBrowserTiles::init()
{
    execSql(*m_conn, "DELETE FROM idem.task_idempotency");
    // Processing with live leases, failed rows updated long ago and just now, retried rows.
    for (int i = 0; i < 4; ++i)
        plantTask(*m_conn, "live:charge:" + std::to_string(i), "processing", 1, 5, nullptr, 600, 10);
    for (int i = 0; i < 6; ++i) // failed an hour ago: outside a 15 minute window
        plantTask(*m_conn, "old:charge:" + std::to_string(i), "failed", 1 + i % 3, 5, "permanent", 0, 3600);
    for (int i = 0; i < 3; ++i) // failed now, on a retry
        plantTask(*m_conn, "new:charge:" + std::to_string(i), "failed", 3, 5, "retryable", 0, 5);
    plantTask(*m_conn, "again:charge:0", "retryable_failed", 2, 5, "retryable", 0, 5);
}

bool TestTaskBrowserTiles::waitLoaded(TaskBrowserWidget& w)
{
    return QTest::qWaitFor(
        [&] {
            return w.model()->started() && !w.model()->busy() && !w.countText().isEmpty()
                && !w.countText().startsWith(QStringLiteral("Counting"));
        },
        browserTimeoutMs);
}

qint64 TestTaskBrowserTiles::sqlCount(const std::string& where)
{
    return querySql(*m_conn, "SELECT count(*) FROM idem.task_idempotency t WHERE " + where)[0][0].as<qint64>();
}

// As a person picks it: the combo's entry, then activated (what a mouse choice sends).
void TestTaskBrowserTiles::chooseStatus(TaskBrowserWidget& w, const QString& statuses)
{
    auto* combo = w.findChild<QComboBox*>(QStringLiteral("statusFilter"));
    QVERIFY(combo);
    const int index = combo->findData(statuses);
    QVERIFY2(index >= 0, qPrintable(statuses));
    combo->setCurrentIndex(index);
    Q_EMIT combo->activated(index);
}

void TestTaskBrowserTiles::processingTileThenFailed()
{
    TaskBrowserWidget w(m_session.get(), m_session.get());
    w.applyFilter(m_dashboard.filterFor(Tile::Processing), m_dashboard.opensText(Tile::Processing));
    QVERIFY(waitLoaded(w));
    QCOMPARE(w.model()->rowCount(), 4);
    chooseStatus(w, QStringLiteral("failed"));
    QVERIFY(waitLoaded(w));
    // Every failed row: the tile's "lease still running" went with its status.
    const auto failed = sqlCount("status = 'failed'");
    QCOMPARE(failed, 9);
    QCOMPARE(w.model()->rowCount(), int(failed));
    QCOMPARE(w.countText(), QStringLiteral("9 record(s) match"));
    QVERIFY(w.tileConditionsText().isEmpty());
    QCOMPARE(w.filter(), [] {
        idem::TaskFilter f;
        f.statuses = { "failed" };
        return f;
    }());
}

void TestTaskBrowserTiles::retriesTileThenFailedAnyAttempts()
{
    TaskBrowserWidget w(m_session.get(), m_session.get());
    w.applyFilter(m_dashboard.filterFor(Tile::Retries), m_dashboard.opensText(Tile::Retries));
    QVERIFY(waitLoaded(w));
    QCOMPARE(w.model()->rowCount(), int(sqlCount("attempts >= 2 AND updated_at >= now() - interval '15 minutes'")));
    auto* attempts = w.findChild<QSpinBox*>(QStringLiteral("minAttemptsFilter"));
    QVERIFY(attempts);
    QCOMPARE(attempts->value(), 2);
    attempts->setValue(0); // "any"
    // The tile's window is a control of its own (issue 41): "any time" too.
    auto* window = w.findChild<QSpinBox*>(QStringLiteral("updatedWithinFilter"));
    QVERIFY(window);
    QCOMPARE(window->value(), 15);
    window->setValue(0);
    chooseStatus(w, QStringLiteral("failed"));
    QVERIFY(waitLoaded(w));
    QCOMPARE(w.model()->rowCount(), int(sqlCount("status = 'failed'"))); // all 9, not the 3 of the last 15 min
    QCOMPARE(w.countText(), QStringLiteral("9 record(s) match"));
    QVERIFY(w.tileConditionsText().isEmpty());
}

void TestTaskBrowserTiles::tileConditionsAreShownAndRemovable()
{
    TaskBrowserWidget w(m_session.get(), m_session.get());
    w.applyFilter(m_dashboard.filterFor(Tile::Retries), m_dashboard.opensText(Tile::Retries));
    QVERIFY(waitLoaded(w));
    // The window is a control of its own now (issue 41): it shows there, not above the table.
    auto* window = w.findChild<QSpinBox*>(QStringLiteral("updatedWithinFilter"));
    QVERIFY(window);
    QCOMPARE(window->value(), 15);
    auto* line = w.findChild<QLabel*>(QStringLiteral("tileConditions"));
    QVERIFY(line);
    QVERIFY(!line->isVisibleTo(&w));
    QCOMPARE(w.model()->rowCount(), 4);
    // Failed retries adds what no control says (a failure of a retry in the window): said above
    // the table, and × removes it.
    w.applyFilter(m_dashboard.filterFor(Tile::FailedRetries), m_dashboard.opensText(Tile::FailedRetries));
    QVERIFY(waitLoaded(w));
    QVERIFY2(line->isVisibleTo(&w) && line->text().contains(QStringLiteral("a failure of attempt 2 or later")),
        qPrintable(line->text()));
    QCOMPARE(w.tileConditionsText(), line->text());
    auto* clear = w.findChild<QToolButton*>(QStringLiteral("clearTileConditions"));
    QVERIFY(clear);
    QTest::mouseClick(clear, Qt::LeftButton);
    QVERIFY(waitLoaded(w));
    QVERIFY(!line->isVisibleTo(&w));
    QVERIFY(w.tileConditionsText().isEmpty());
    QVERIFY(!w.filter().failedRetryInWindow);
    // Clearing the window's control lists what the controls say: attempts >= 2, any time.
    window->setValue(0);
    QTest::mouseClick(w.findChild<QPushButton*>(QStringLiteral("applyFilter")), Qt::LeftButton);
    QVERIFY(waitLoaded(w));
    QCOMPARE(w.model()->rowCount(), int(sqlCount("attempts >= 2")));
    QVERIFY(!w.filter().updatedWithinMinutes);
}

void TestTaskBrowserTiles::releasedRowStaysListed()
{
    TaskBrowserWidget w(m_session.get(), m_session.get());
    w.show();
    w.applyFilter(m_dashboard.filterFor(Tile::Processing), m_dashboard.opensText(Tile::Processing));
    QVERIFY(waitLoaded(w));
    const QString key = QStringLiteral("live:charge:2");
    const int row = w.model()->rowOfKey(key);
    QVERIFY(row >= 0);
    w.view()->selectRow(row);
    auto* release = w.findChild<QPushButton*>(QStringLiteral("releaseButton"));
    QVERIFY(release && release->isEnabled());
    QTest::mouseClick(release, Qt::LeftButton);
    ActionDialog* dialog = nullptr;
    QTRY_VERIFY((dialog = w.findChild<ActionDialog*>()) && dialog->isVisible());
    dialog->reasonEdit()->insertPlainText(QStringLiteral("INC-24: worker host gone"));
    QTest::mouseClick(dialog->runButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(dialog->finished(), browserTimeoutMs);
    QCOMPARE(taskField(*m_conn, key.toStdString(), "lease_until <= now()"), std::string("true"));
    // Its lease is no longer live, and it is still in the list the operator acted on.
    QVERIFY(QTest::qWaitFor([&] { return !w.model()->busy(); }, browserTimeoutMs));
    QVERIFY(waitLoaded(w));
    QVERIFY2(w.model()->rowOfKey(key) >= 0, qPrintable(w.countText()));
    QCOMPARE(w.model()->rowCount(), int(sqlCount("status = 'processing'")));
    QVERIFY(w.tileConditionsText().isEmpty());
    dialog->close();
}

void TestTaskBrowserTiles::failedRetriesOpensTheKeysItCounted()
{
    execSql(*m_conn, "DELETE FROM idem.task_idempotency");
    // History as the protocol writes it: attempt, at, class, message.
    const auto plant = [&](const std::string& key, const std::string& status, int attempts, const std::string& errors,
                           const std::string& updatedAgo) {
        execSql(*m_conn,
            "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts,"
            " result_json, created_at, updated_at, errors) VALUES ($1, 'v1:' || repeat('a', 64), $2, $3, 5,"
            " CASE WHEN $2 = 'succeeded' THEN '{}'::jsonb END, now() - interval '2 hours',"
            " now() - $5::interval, $4::jsonb)",
            key, status, attempts, errors, updatedAgo);
    };
    const auto failure = [](int attempt, const char* ago) {
        return std::string("{\"attempt\": ") + std::to_string(attempt) + ", \"at\": \"" + ago
            + "\", \"class\": \"retryable\", \"message\": \"timeout\"}";
    };
    const auto at = [&](const char* ago) {
        return querySql(*m_conn, "SELECT to_json(now() - $1::interval)#>>'{}'", std::string(ago))[0][0].as<std::string>();
    };
    const auto recent = at("2 minutes"), older = at("1 hour");
    // Attempt 2 failed two minutes ago, attempt 3 succeeded: counted by the tile, listed now.
    plant("rf:charge:later-succeeded", "succeeded", 3, "[" + failure(1, at("3 minutes").c_str()) + ", "
            + failure(2, recent.c_str()) + "]", "1 minute");
    // Attempt 2 and 3 failed in the window: two failures, one key.
    plant("rf:charge:failed-twice", "retryable_failed", 3, "[" + failure(2, recent.c_str()) + ", "
            + failure(3, recent.c_str()) + "]", "1 minute");
    // Only a first attempt failed in the window: not a failed retry.
    plant("rf:charge:first-only", "succeeded", 2, "[" + failure(1, recent.c_str()) + "]", "1 minute");
    // Attempt 2 failed an hour ago, updated since: outside the window.
    plant("rf:charge:old-retry", "succeeded", 3, "[" + failure(2, older.c_str()) + "]", "1 minute");
    // Still failed, attempt 4 failed in the window.
    plant("rf:charge:still-failed", "failed", 4, "[" + failure(4, recent.c_str()) + "]", "1 minute");

    TaskBrowserWidget w(m_session.get(), m_session.get());
    w.applyFilter(m_dashboard.filterFor(Tile::FailedRetries), m_dashboard.opensText(Tile::FailedRetries));
    QVERIFY(waitLoaded(w));
    QStringList keys;
    for (int r = 0; r < w.model()->rowCount(); ++r)
        keys << w.model()->data(w.model()->index(r, 0), TaskBrowserModel::KeyRole).toString();
    QCOMPARE(keys,
        QStringList({ QStringLiteral("rf:charge:failed-twice"), QStringLiteral("rf:charge:later-succeeded"),
            QStringLiteral("rf:charge:still-failed") }));
    // The same keys as the error histories say, by SQL.
    QCOMPARE(sqlCount("EXISTS (SELECT 1 FROM jsonb_array_elements(t.errors) e WHERE (e->>'attempt')::int >= 2"
                      " AND (e->>'at')::timestamptz >= date_trunc('minute', now()) - interval '14 minutes')"),
        3);
    // What it opens and why the figures differ, in the match line and the tile's text.
    QVERIFY2(w.countText().contains(QStringLiteral("whatever their status now")), qPrintable(w.countText()));
    QVERIFY2(w.countText().contains(QStringLiteral("a key that failed twice counts twice")), qPrintable(w.countText()));
    QVERIFY2(w.tileConditionsText().contains(QStringLiteral("a failure of attempt 2 or later")),
        qPrintable(w.tileConditionsText()));
    QVERIFY(idem::console::tileDefinition(Tile::FailedRetries).contains(QStringLiteral("fewer keys than failures")));
    QVERIFY(w.filter().minAttempts == 2 && w.filter().failedRetryInWindow && w.filter().updatedWithinMinutes == 15);
}

void TestTaskBrowserTiles::tileStatusesKeepOneEntryInWords()
{
    TaskBrowserWidget w(m_session.get(), m_session.get());
    auto* combo = w.findChild<QComboBox*>(QStringLiteral("statusFilter"));
    QVERIFY(combo);
    const int presets = combo->count();
    for (int i = 0; i < 3; ++i) {
        w.applyFilter(m_dashboard.filterFor(Tile::LongUnfinished), m_dashboard.opensText(Tile::LongUnfinished));
        w.applyFilter(m_dashboard.filterFor(Tile::Processing), m_dashboard.opensText(Tile::Processing));
        idem::TaskFilter f;
        f.statuses = { "retryable_failed", "succeeded" };
        w.applyFilter(f);
    }
    QCOMPARE(combo->count(), presets + 1); // one tile entry, not one per click
    QCOMPARE(combo->currentText(), QStringLiteral("retryable_failed or succeeded"));
    for (int i = 0; i < combo->count(); ++i)
        QVERIFY2(!combo->itemText(i).contains(QLatin1Char(',')), qPrintable(combo->itemText(i)));
    QVERIFY(waitLoaded(w));
}

void TestTaskBrowserTiles::shownPageIsNotOlderThanOnePoll()
{
    TaskBrowserWidget w(m_session.get(), m_session.get());
    w.setPollInterval(300);
    idem::TaskFilter f;
    f.statuses = { "processing" };
    w.applyFilter(f);
    QVERIFY(waitLoaded(w));
    QCOMPARE(w.model()->rowCount(), 4);
    plantTask(*m_conn, "live:charge:9", "processing", 1, 5, nullptr, 600, 1);
    // Hidden, the page does not poll; its data ages past one poll.
    QTest::qWait(400);
    QVERIFY(!w.model()->busy());
    QCOMPARE(w.model()->rowCount(), 4);
    // Shown: it reads at once, not a poll later.
    w.show();
    QVERIFY(w.model()->busy());
    QTRY_COMPARE_WITH_TIMEOUT(w.model()->rowCount(), 5, browserTimeoutMs);
}

void TestTaskBrowserTiles::keyColumnFitsTheKeys()
{
    const std::string longKey = "tenant-0042:charge-with-a-longer-name:order-2024-05-01-000123456";
    plantTask(*m_conn, longKey, "processing", 1, 5, nullptr, 600, 1);
    TaskBrowserWidget w(m_session.get(), m_session.get());
    w.resize(1280, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    idem::TaskFilter f;
    f.statuses = { "processing" };
    w.applyFilter(f);
    QVERIFY(waitLoaded(w));
    const int needed = w.view()->fontMetrics().horizontalAdvance(QString::fromStdString(longKey));
    QVERIFY2(w.view()->columnWidth(TaskBrowserModel::KeyColumn) > needed,
        qPrintable(QStringLiteral("key column %1 px, the key needs %2")
                       .arg(w.view()->columnWidth(TaskBrowserModel::KeyColumn))
                       .arg(needed)));
    // Status is as wide as "processing" needs, not a fixed 185 px.
    const int status = w.view()->columnWidth(TaskBrowserModel::StatusColumn);
    QVERIFY2(status < 185, qPrintable(QString::number(status)));
}

// Issue 41 item 2, as the incident had it: 218 failed charges, 27 of them declined cards (a
// permanent error a requeue cannot mend) and 191 that ran out of attempts against a gateway
// answering 503. The page's own controls single out the 191; Apply to all says so in words and
// starts a job over exactly those rows.
void TestTaskBrowserTiles::gatewayFiltersAndApplyAllInWords()
{
    execSql(*m_conn, "DELETE FROM idem.task_idempotency");
    const auto plant = [&](const std::string& prefix, int n, const std::string& status, const std::string& errorClass,
                           const std::string& message) {
        execSql(*m_conn,
            "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts,"
            " error_class, error_message, next_attempt_at, created_at, updated_at)"
            " SELECT $1 || g, 'v1:' || repeat('d', 64), $3, 5, 5, $4, $5,"
            " CASE WHEN $3 = 'retryable_failed' THEN now() + interval '1 minute' END,"
            " now() - interval '40 minutes', now() - interval '5 minutes' FROM generate_series(1, $2::int) g",
            prefix, n, status, errorClass, message);
    };
    plant("shop:charge:exhausted-", 191, "failed", "retryable", "gateway answered 503 Service Unavailable");
    plant("shop:charge:declined-", 27, "failed", "permanent", "card declined");
    plant("shop:refund:exhausted-", 12, "failed", "retryable", "gateway answered 503 Service Unavailable");
    plant("shop:charge:waiting-", 9, "retryable_failed", "retryable", "gateway answered 503 Service Unavailable");

    TaskBrowserWidget w(m_session.get(), m_session.get());
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(waitLoaded(w));
    // Failed charges: the 218, declined cards among them.
    chooseStatus(w, QStringLiteral("failed"));
    QVERIFY(waitLoaded(w));
    auto* operation = w.findChild<QLineEdit*>(QStringLiteral("operationFilter"));
    QVERIFY(operation);
    QTest::keyClicks(operation, QStringLiteral("charge"));
    QTest::keyClick(operation, Qt::Key_Return);
    QVERIFY(waitLoaded(w));
    QCOMPARE(sqlCount("status = 'failed' AND split_part(idempotency_key, ':', 2) = 'charge'"), 218);
    QCOMPARE(w.countText(), QStringLiteral("218 record(s) match"));
    // Retries exhausted, ticked: the 191.
    auto* exhausted = w.findChild<QCheckBox*>(QStringLiteral("exhaustedFilter"));
    QVERIFY2(exhausted && exhausted->isVisible(), "the page has an exhausted filter");
    QTest::mouseClick(exhausted, Qt::LeftButton);
    QVERIFY(waitLoaded(w));
    QCOMPARE(w.countText(), QStringLiteral("191 record(s) match"));
    // The error text, in another case than the message has it: still the 191.
    auto* contains = w.findChild<QLineEdit*>(QStringLiteral("errorContainsFilter"));
    QVERIFY2(contains && contains->isVisible(), "the page has an error text filter");
    QTest::keyClicks(contains, QStringLiteral("SERVICE unavailable"));
    QTest::keyClick(contains, Qt::Key_Return);
    QVERIFY(waitLoaded(w));
    QCOMPARE(w.countText(), QStringLiteral("191 record(s) match"));
    QCOMPARE(sqlCount("status = 'failed' AND split_part(idempotency_key, ':', 2) = 'charge'"
                      " AND error_class <> 'permanent' AND error_message ILIKE '%service unavailable%'"),
        191);
    // Error class and the other controls idemctl job start has are on the page too.
    auto* errorClass = w.findChild<QComboBox*>(QStringLiteral("errorClassFilter"));
    QVERIFY(errorClass && errorClass->isVisible());
    for (const char* name : { "liveLeaseFilter", "expiredFilter", "uncertainFilter", "conflictFilter" })
        QVERIFY2(w.findChild<QCheckBox*>(QLatin1String(name)), name);
    for (const char* name : { "unfinishedForFilter", "updatedWithinFilter", "minAttemptsFilter" })
        QVERIFY2(w.findChild<QSpinBox*>(QLatin1String(name)), name);
    // The declined cards alone, by their class: 27.
    errorClass->setCurrentIndex(errorClass->findData(QStringLiteral("permanent")));
    Q_EMIT errorClass->activated(errorClass->currentIndex());
    contains->clear();
    QTest::mouseClick(exhausted, Qt::LeftButton);
    QTest::mouseClick(w.findChild<QPushButton*>(QStringLiteral("applyFilter")), Qt::LeftButton);
    QVERIFY(waitLoaded(w));
    QCOMPARE(w.countText(), QStringLiteral("27 record(s) match"));
    // Back to what the gateway broke.
    errorClass->setCurrentIndex(0);
    QTest::mouseClick(exhausted, Qt::LeftButton);
    QTest::keyClicks(contains, QStringLiteral("503"));
    QTest::keyClick(contains, Qt::Key_Return);
    QVERIFY(waitLoaded(w));
    QCOMPARE(w.countText(), QStringLiteral("191 record(s) match"));

    // Apply to all: the filter in words before anything runs, then a job over exactly the 191.
    QTRY_VERIFY_WITH_TIMEOUT(w.applyAllButton()->isEnabled(), browserTimeoutMs);
    QTest::mouseClick(w.applyAllButton(), Qt::LeftButton);
    ApplyAllDialog* dialog = nullptr;
    QTRY_VERIFY((dialog = w.findChild<ApplyAllDialog*>()) && dialog->isVisible());
    const QString words = dialog->findChild<QLabel*>(QStringLiteral("filterLabel"))->text();
    for (const QString& term : { QStringLiteral("status failed"), QStringLiteral("operation charge"),
             QStringLiteral("retries exhausted"), QStringLiteral("error message containing \"503\"") })
        QVERIFY2(words.contains(term), qPrintable(words + QStringLiteral(" lacks ") + term));
    QVERIFY2(dialog->planLabel()->text().contains(QStringLiteral("retries exhausted")),
        qPrintable(dialog->planLabel()->text()));
    QTRY_VERIFY_WITH_TIMEOUT(dialog->preview().has_value(), browserTimeoutMs);
    QCOMPARE(dialog->preview()->matched, std::int64_t(191));
    // IDEM_SCREENSHOT_DIR: the page and the dialog in light, dark and Chinese, to look at.
    if (const QString dir = qEnvironmentVariable("IDEM_SCREENSHOT_DIR"); !dir.isEmpty()) {
        // (Chinese: tst_desktop, whose binary embeds the translations.)
        for (const auto& [name, dark] : { std::pair { "light", false }, std::pair { "dark", true } }) {
            idem::console::theme::apply(dark ? idem::console::Theme::Dark : idem::console::Theme::Light);
            QCoreApplication::processEvents();
            w.grab().save(dir + QStringLiteral("/tasks-filters-%1.png").arg(QLatin1String(name)));
            dialog->grab().save(dir + QStringLiteral("/applyall-words-%1.png").arg(QLatin1String(name)));
        }
        idem::console::theme::apply(idem::console::Theme::Light);
        QCoreApplication::processEvents();
    }
    dialog->runHereBox()->setChecked(false);
    QTest::keyClicks(dialog->reasonEdit(), QStringLiteral("INC-41: gateway 503, requeue what ran out"));
    QTRY_VERIFY(dialog->startButton()->isEnabled());
    QTest::mouseClick(dialog->startButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(dialog->startedJob().has_value(), browserTimeoutMs);
    const auto job = *dialog->startedJob();
    const auto row = querySql(*m_conn,
        "SELECT j.matched, j.filter ->> 'error_contains', (j.filter ->> 'exhausted')::bool,"
        " (SELECT count(*) FROM idem.idem_job_items i JOIN idem.task_idempotency t USING (idempotency_key)"
        "   WHERE i.job_id = j.id AND t.error_class = 'retryable' AND t.idempotency_key LIKE 'shop:charge:exhausted-%')"
        " FROM idem.idem_jobs j WHERE j.id = $1",
        job);
    QCOMPARE(row.size(), std::size_t(1));
    QCOMPARE(row[0][0].as<qint64>(), 191);
    QCOMPARE(row[0][1].as<std::string>(), std::string("503"));
    QVERIFY(row[0][2].as<bool>());
    QCOMPARE(row[0][3].as<qint64>(), 191); // every one of them, and no declined card
    dialog->close();
}

QTEST_MAIN(TestTaskBrowserTiles)
#include "tst_taskbrowser_tiles.moc"
