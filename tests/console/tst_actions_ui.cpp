#include <QtTest>

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QTextBrowser>

#include "operations/actions.h"
#include "core/connection.h"
#include "models/bulkaction.h"
#include "models/taskbrowsermodel.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "tests/support/reasons.h"
#include "views/actiondialog.h"
#include "views/taskbrowserwidget.h"

using idem::ActionOutcome;
using idem::RecoveryAction;
using idem::console::ActionDialog;
using idem::console::BulkActionModel;
using idem::console::ConsoleSession;
using idem::console::TaskBrowserModel;
using idem::console::TaskBrowserWidget;
using namespace idem::test;

Q_DECLARE_METATYPE(idem::RecoveryAction)

// Recovery actions driven from the console as an operator would: select rows, open the
// action, read the plan, type a reason, confirm; then what landed in the table and the audit.
class TestActionsUi : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void actionChangesRowAndAudits_data();
    void actionChangesRowAndAudits();
    void staleViewIsRefused();
    void bulkShowsPlanProgressAndPerKeyResults();
    void hostileReasonsRoundTrip_data();
    void hostileReasonsRoundTrip();
    void readerSeesActionsDisabled();
    void keysOpenTheActions();
    void invisibleReasonKeepsRunDisabled_data();
    void invisibleReasonKeepsRunDisabled();
    void reasonHintLosesItsWarningColour();

private:
    // Loads the browser on keys with `prefix`, selects `keys` and opens `action`'s dialog.
    ActionDialog* openDialog(TaskBrowserWidget& widget, const std::string& prefix, const std::vector<std::string>& keys,
        RecoveryAction action);
    bool runAndWait(ActionDialog* dialog, const QString& reason);

    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<ConsoleSession> m_session;
};

void TestActionsUi::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("actions_ui", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), true }); // with the roles: a reader logs in below
    m_session = std::make_unique<ConsoleSession>();
    QVERIFY(connectSession(*m_session, m_db->dsn()));
    QVERIFY(m_session->serverInfo().isOperator);
    QVERIFY2(!m_session->readOnly(), qPrintable(m_session->serverInfo().schemaProblems.join(QLatin1Char(';'))));
}

void TestActionsUi::cleanupTestCase()
{
    m_session.reset();
    m_conn.reset();
    m_db.reset();
}

ActionDialog* TestActionsUi::openDialog(
    TaskBrowserWidget& widget, const std::string& prefix, const std::vector<std::string>& keys, RecoveryAction action)
{
    QSignalSpy pages(widget.model(), &TaskBrowserModel::pageLoaded);
    idem::TaskFilter f;
    f.keyPrefix = prefix;
    widget.applyFilter(f);
    if (!QTest::qWaitFor([&] { return !pages.isEmpty() && !widget.model()->busy(); }, browserTimeoutMs)) {
        qWarning("no page loaded: %s", qPrintable(widget.model()->lastError()));
        return nullptr;
    }
    auto* view = widget.view();
    view->clearSelection();
    for (const auto& k : keys) {
        const int row = widget.model()->rowOfKey(QString::fromStdString(k));
        if (row < 0) {
            qWarning("key not listed (%d rows)", widget.model()->rowCount());
            return nullptr;
        }
        // Ctrl+click, as a person extends a selection.
        const auto rect = view->visualRect(widget.model()->index(row, 0));
        QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::ControlModifier, rect.center());
    }
    const char* name = action == RecoveryAction::Requeue ? "requeueButton"
        : action == RecoveryAction::Release              ? "releaseButton"
                                                         : "failButton";
    auto* button = widget.findChild<QPushButton*>(QString::fromLatin1(name));
    if (!button || !button->isEnabled()) {
        qWarning("action disabled: %d selected; %s", int(view->selectionModel()->selectedRows().size()),
            button ? qPrintable(button->toolTip()) : "no button");
        return nullptr;
    }
    QTest::mouseClick(button, Qt::LeftButton);
    auto* dialog = widget.findChild<ActionDialog*>();
    return dialog && dialog->isVisible() ? dialog : nullptr;
}

bool TestActionsUi::runAndWait(ActionDialog* dialog, const QString& reason)
{
    auto* edit = dialog->reasonEdit();
    // Blank or whitespace-only: Run stays disabled.
    if (dialog->runButton()->isEnabled())
        return false;
    QTest::keyClicks(edit, QStringLiteral("   "));
    if (dialog->runButton()->isEnabled())
        return false;
    edit->clear();
    edit->insertPlainText(reason); // typed or pasted
    if (!dialog->runButton()->isEnabled())
        return false;
    QTest::mouseClick(dialog->runButton(), Qt::LeftButton);
    return QTest::qWaitFor([&] { return dialog->finished(); }, browserTimeoutMs);
}

void TestActionsUi::actionChangesRowAndAudits_data()
{
    QTest::addColumn<RecoveryAction>("action");
    QTest::addColumn<QString>("status");
    QTest::addColumn<QString>("errorClass");
    QTest::addColumn<QString>("expectedStatus");
    QTest::addColumn<QString>("check"); // an SQL predicate over t that must hold afterwards
    QTest::addRow("requeue failed") << RecoveryAction::Requeue << QStringLiteral("failed")
                                    << QStringLiteral("permanent") << QStringLiteral("retryable_failed")
                                    << QStringLiteral("t.max_attempts = t.attempts + 3 AND t.next_attempt_at <= now() "
                                                      "AND t.owner_token IS NULL AND t.error_class = 'retryable'");
    QTest::addRow("requeue retryable") << RecoveryAction::Requeue << QStringLiteral("retryable_failed")
                                       << QStringLiteral("unknown") << QStringLiteral("retryable_failed")
                                       << QStringLiteral("t.max_attempts = t.attempts + 3 AND t.next_attempt_at <= "
                                                         "now() AND t.error_class = 'unknown'");
    QTest::addRow("release lease") << RecoveryAction::Release << QStringLiteral("processing") << QString()
                                   << QStringLiteral("processing")
                                   << QStringLiteral("t.lease_until <= now() AND t.owner_token IS NULL");
    QTest::addRow("mark failed") << RecoveryAction::Fail << QStringLiteral("retryable_failed")
                                 << QStringLiteral("retryable") << QStringLiteral("failed")
                                 << QStringLiteral("t.error_class = 'permanent' AND t.next_attempt_at IS NULL AND "
                                                   "t.error_message LIKE 'marked failed by an operator: %'");
}

void TestActionsUi::actionChangesRowAndAudits()
{
    QFETCH(RecoveryAction, action);
    QFETCH(QString, status);
    QFETCH(QString, errorClass);
    QFETCH(QString, expectedStatus);
    QFETCH(QString, check);
    const std::string key = std::string("one:") + QTest::currentDataTag() + ":k1";
    const auto cls = errorClass.toStdString();
    plantTask(*m_conn, key, status.toStdString(), 4, 4, cls.empty() ? nullptr : cls.c_str(), 300);
    const auto before = taskField(*m_conn, key, "row_to_json(t)");
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.resize(1100, 600);
    widget.show();
    auto* dialog = openDialog(widget, key, { key }, action);
    QVERIFY(dialog);
    // The plan says what happens, to how many, and lists the key under its status.
    QCOMPARE(dialog->targets().size(), std::size_t(1));
    QVERIFY(dialog->plan()->toPlainText().contains(QStringLiteral("1 record(s)")));
    QVERIFY(dialog->plan()->toPlainText().contains(QString::fromStdString(key)));
    QVERIFY(dialog->plan()->toPlainText().contains(status));
    if (auto* extra = dialog->extraAttempts())
        extra->setValue(3);
    const QString reason = QStringLiteral("INC-42: ") + QString::fromLatin1(QTest::currentDataTag());
    QVERIFY(runAndWait(dialog, reason));
    auto* results = dialog->results();
    QCOMPARE(results->rowCount(), 1);
    QCOMPARE(results->data(results->index(0, BulkActionModel::OutcomeColumn)).toString(), QStringLiteral("applied"));
    QCOMPARE(results->data(results->index(0, BulkActionModel::StatusColumn)).toString(), expectedStatus);
    QCOMPARE(dialog->progress()->value(), 1);
    // In the database: changed as specified, one audit entry with actor, reason and both images.
    QCOMPARE(QString::fromStdString(taskField(*m_conn, key, "status")), expectedStatus);
    QCOMPARE(taskField(*m_conn, key, check.toStdString()), std::string("true"));
    QVERIFY(taskField(*m_conn, key, "row_to_json(t)") != before);
    const auto audit = querySql(*m_conn,
        "SELECT action, reason, db_role, os_user, before_image->>'status', after_image->>'status',"
        " (before_image->>'updated_at') IS NOT NULL FROM idem.task_idempotency_audit WHERE idempotency_key = $1",
        key);
    QCOMPARE(audit.size(), 1);
    QCOMPARE(audit[0][0].as<std::string>(), std::string(idem::actionName(action)));
    QCOMPARE(QString::fromStdString(audit[0][1].as<std::string>()), reason);
    QCOMPARE(audit[0][2].as<std::string>(), std::string("postgres"));
    QCOMPARE(audit[0][3].as<std::string>(), idem::localActor());
    QCOMPARE(QString::fromStdString(audit[0][4].as<std::string>()), status);
    QCOMPARE(QString::fromStdString(audit[0][5].as<std::string>()), expectedStatus);
    QVERIFY(audit[0][6].as<bool>());
    // The browser shows the new state once the dialog closes (merged in place).
    QTest::mouseClick(dialog->findChild<QPushButton*>(QStringLiteral("closeButton")), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(
        QString::fromStdString(widget.model()->task(widget.model()->rowOfKey(QString::fromStdString(key))).status),
        expectedStatus, browserTimeoutMs);
}

void TestActionsUi::staleViewIsRefused()
{
    const std::string key = "stale:charge:k1";
    plantTask(*m_conn, key, "retryable_failed", 1, 5, "retryable");
    execSql(*m_conn,
        "UPDATE idem.task_idempotency SET next_attempt_at = now() - interval '1 second' "
        "WHERE idempotency_key = $1",
        key);
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.resize(1100, 600);
    widget.show();
    auto* dialog = openDialog(widget, key, { key }, RecoveryAction::Requeue);
    QVERIFY(dialog);
    // Between load and confirm, a worker takes the task (its backoff elapsed).
    {
        pqxx::work w(*m_conn);
        const auto claimed = w.exec_params(
            "SELECT decision FROM idem.claim($1, 'v1:' || repeat('c', 64), gen_random_uuid(), 60000)", key);
        w.commit();
        QCOMPARE(claimed[0][0].as<std::string>(), std::string("reacquired"));
    }
    const auto afterWorker = taskField(*m_conn, key, "row_to_json(t)");
    QVERIFY(runAndWait(dialog, QStringLiteral("requeue after outage")));
    auto* results = dialog->results();
    QCOMPARE(
        results->data(results->index(0, BulkActionModel::OutcomeColumn)).toString(), QStringLiteral("refused-stale"));
    // What changed, for the operator: the status as it is now and the message naming both.
    QCOMPARE(results->data(results->index(0, BulkActionModel::StatusColumn)).toString(), QStringLiteral("processing"));
    const auto message = results->data(results->index(0, BulkActionModel::MessageColumn)).toString();
    QVERIFY2(message.contains(QStringLiteral("it is now processing")), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("read as retryable_failed")), qPrintable(message));
    QVERIFY(dialog->summary()->text().contains(QStringLiteral("1 refused-stale")));
    // Nothing changed, nothing audited.
    QCOMPARE(taskField(*m_conn, key, "row_to_json(t)"), afterWorker);
    QCOMPARE(auditCount(*m_conn, key), 0);
}

void TestActionsUi::bulkShowsPlanProgressAndPerKeyResults()
{
    std::vector<std::string> keys;
    for (int i = 0; i < 60; ++i) {
        keys.push_back("bulk:charge:k" + std::to_string(100 + i));
        plantTask(*m_conn, keys.back(), i % 3 == 0 ? "retryable_failed" : "failed", 5, 5,
            i % 3 == 0 ? "retryable" : "permanent");
    }
    const std::string done = "bulk:charge:k999-succeeded";
    plantTask(*m_conn, done, "succeeded");
    const auto doneBefore = taskField(*m_conn, done, "row_to_json(t)");
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.resize(1100, 700);
    widget.show();
    auto selected = std::vector<std::string>(keys.begin(), keys.begin() + 12);
    selected.push_back(done);
    auto* dialog = openDialog(widget, "bulk:", selected, RecoveryAction::Requeue);
    QVERIFY(dialog);
    QAbstractItemModelTester tester(dialog->results(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    // 12 go, per status; the succeeded one is left out and listed as such.
    QCOMPARE(dialog->targets().size(), std::size_t(12));
    QCOMPARE(dialog->leftOut(), 1);
    const auto plan = dialog->plan()->toPlainText();
    QVERIFY(plan.contains(QStringLiteral("Requeue 12 record(s)")));
    QVERIFY(plan.contains(QStringLiteral("failed: 8 record(s)")));
    QVERIFY(plan.contains(QStringLiteral("retryable_failed: 4 record(s)")));
    QVERIFY(plan.contains(QStringLiteral("Left out")));
    QVERIFY(plan.contains(QString::fromStdString(done)));
    // Each row left out says why: its status.
    QVERIFY2(plan.contains(QString::fromStdString(done) + QStringLiteral(" – succeeded,")), qPrintable(plan));
    QCOMPARE(dialog->runButton()->text(), QStringLiteral("Requeue 12 record(s)"));
    // One key changes under us before confirming: that one alone is refused.
    execSql(*m_conn, "UPDATE idem.task_idempotency SET updated_at = now() WHERE idempotency_key = $1", keys[4]);
    QVERIFY(runAndWait(dialog, QStringLiteral("bulk requeue after fix #7")));
    auto* results = dialog->results();
    QCOMPARE(results->rowCount(), 12);
    QCOMPARE(results->count(ActionOutcome::Applied), 11);
    QCOMPARE(results->count(ActionOutcome::Stale), 1);
    QCOMPARE(
        results->data(results->index(4, BulkActionModel::OutcomeColumn)).toString(), QStringLiteral("refused-stale"));
    QCOMPARE(dialog->progress()->value(), 12);
    QCOMPARE(dialog->progress()->maximum(), 12);
    for (int i = 0; i < 12; ++i) {
        const auto expect = i == 4 ? std::string("failed") : std::string("retryable_failed");
        QCOMPARE(taskField(*m_conn, keys[static_cast<std::size_t>(i)], "status"), expect);
        QCOMPARE(auditCount(*m_conn, keys[static_cast<std::size_t>(i)]), i == 4 ? 0 : 1);
    }
    QCOMPARE(taskField(*m_conn, done, "row_to_json(t)"), doneBefore);
    QCOMPARE(auditCount(*m_conn, done), 0);
    QCOMPARE(auditCount(*m_conn, keys[20]), 0); // not selected, not touched
    // The Details column shows its whole message (the refused one is the longest).
    auto* resultView = dialog->findChild<QTableView*>(QStringLiteral("actionResults"));
    QVERIFY(resultView);
    const QString details = results->data(results->index(4, BulkActionModel::MessageColumn)).toString();
    QVERIFY(!details.isEmpty());
    QVERIFY2(resultView->columnWidth(BulkActionModel::MessageColumn)
            >= resultView->fontMetrics().horizontalAdvance(details) + 6,
        qPrintable(QStringLiteral("%1 px for \"%2\"").arg(resultView->columnWidth(BulkActionModel::MessageColumn)).arg(details)));

    // Cancel: a run over many keys stops promptly; the rest are reported skipped, not applied.
    BulkActionModel bulk;
    std::vector<idem::RowVersion> versions;
    for (const auto& r : querySql(*m_conn,
             "SELECT idempotency_key, status, " + idem::updatedAtMicrosSql()
                 + " FROM idem.task_idempotency WHERE idempotency_key LIKE 'bulk:%' AND status = "
                   "'failed' ORDER BY 1"))
        versions.push_back({ r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::int64_t>() });
    QVERIFY(versions.size() > 2 * BulkActionModel::chunkSize / 2);
    idem::ActionOptions options;
    options.reason = "cancel test";
    QSignalSpy finished(&bulk, &BulkActionModel::finished);
    bulk.start(m_session.get(), RecoveryAction::Fail, versions, options);
    bulk.cancel();
    QVERIFY(finished.wait(browserTimeoutMs) || finished.count() == 1);
    QCOMPARE(bulk.done(), bulk.total());
    QVERIFY(bulk.count(ActionOutcome::Skipped) > 0);
    const int applied = bulk.count(ActionOutcome::Applied);
    QVERIFY(applied <= BulkActionModel::chunkSize);
    const auto audited = querySql(*m_conn,
        "SELECT count(*) FROM idem.task_idempotency_audit WHERE action = 'fail' "
        "AND reason = 'cancel test'")[0][0]
                             .as<int>();
    QCOMPARE(audited, applied);
}

void TestActionsUi::hostileReasonsRoundTrip_data()
{
    QTest::addColumn<QString>("reason");
    QTest::addRow("quotes and semicolons") << QStringLiteral("it's \"done\"; DROP TABLE task_idempotency; --");
    QTest::addRow("percent and backslash") << QStringLiteral("100% sure \\ %s %n _x_");
    QTest::addRow("tabs and newlines") << QStringLiteral("line one\n\tline two\nline three");
    QTest::addRow("control characters") << QString::fromUtf8("bell\x07 esc\x1b[31m red\x01");
    QTest::addRow("10 kB") << QString(10 * 1024, QLatin1Char('r')) + QStringLiteral(";'%");
    QTest::addRow("unicode") << QStringLiteral("日本語の理由 ✓ 🚀");
}

void TestActionsUi::hostileReasonsRoundTrip()
{
    QFETCH(QString, reason);
    const std::string key = std::string("hostile-reason:op:") + QTest::currentDataTag();
    plantTask(*m_conn, key, "failed", 3, 3, "permanent");
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.resize(1100, 600);
    widget.show();
    auto* dialog = openDialog(widget, key, { key }, RecoveryAction::Requeue);
    QVERIFY(dialog);
    QVERIFY(runAndWait(dialog, reason));
    QCOMPARE(dialog->results()->count(ActionOutcome::Applied), 1);
    const auto stored
        = querySql(*m_conn, "SELECT reason FROM idem.task_idempotency_audit WHERE idempotency_key = $1", key)[0][0]
              .as<std::string>();
    QCOMPARE(QString::fromStdString(stored), reason);
    QCOMPARE(stored, reason.toStdString());
}

void TestActionsUi::readerSeesActionsDisabled()
{
    const std::string role = "idem_t_actions_ui_reader";
    createLoginRole(role, "reader-pw-5e1", "idem_reader");
    const std::string key = "reader:charge:k1";
    plantTask(*m_conn, key, "failed", 5, 5, "permanent");
    const auto before = taskField(*m_conn, key, "row_to_json(t)");
    ConsoleSession reader;
    QVERIFY(connectSession(reader, dsnWith(m_db->dsn(), { { "user", role }, { "password", "reader-pw-5e1" } })));
    QVERIFY(!reader.serverInfo().isOperator);
    TaskBrowserWidget widget(&reader, &reader);
    widget.show();
    QSignalSpy pages(widget.model(), &TaskBrowserModel::pageLoaded);
    idem::TaskFilter f;
    f.keyPrefix = key;
    widget.applyFilter(f);
    QVERIFY(QTest::qWaitFor([&] { return !pages.isEmpty() && !widget.model()->busy(); }, browserTimeoutMs));
    QCOMPARE(widget.model()->rowCount(), 1);
    widget.view()->selectRow(0);
    for (const char* name : { "requeueButton", "releaseButton", "failButton" }) {
        auto* b = widget.findChild<QPushButton*>(QString::fromLatin1(name));
        QVERIFY(!b->isEnabled());
        QVERIFY2(b->toolTip().contains(QStringLiteral("does not hold the")), qPrintable(b->toolTip()));
    }
    // Copying still works for a reader.
    QVERIFY(widget.findChild<QPushButton*>(QStringLiteral("copyKeyButton"))->isEnabled());
    // The dialog itself will not run for a reader, whatever is typed.
    ActionDialog dialog(&reader, RecoveryAction::Requeue, { widget.model()->task(0) });
    dialog.show();
    dialog.reasonEdit()->insertPlainText(QStringLiteral("trying anyway"));
    QVERIFY(!dialog.runButton()->isEnabled());
    // And the database refuses anyway.
    auto conn = idem::connect(dsnWith(m_db->dsn(), { { "user", role }, { "password", "reader-pw-5e1" } }));
    idem::ActionOptions options;
    options.reason = "bypassing the console";
    const auto r = idem::applyAction(*conn, idem::SchemaName(), RecoveryAction::Requeue,
        { key, "failed", std::stoll(taskField(*m_conn, key, idem::updatedAtMicrosSql("t.updated_at"))) }, options);
    QCOMPARE(r.outcome, ActionOutcome::Denied);
    QCOMPARE(taskField(*m_conn, key, "row_to_json(t)"), before);
    QCOMPARE(auditCount(*m_conn, key), 0);
}

// Ctrl+Shift+R / L / F open the same dialogs as the buttons, for the selected rows, and only
// when the button would: a key on a row the action does not apply to opens nothing.
void TestActionsUi::keysOpenTheActions()
{
    const std::string key = "keys:charge:k1";
    plantTask(*m_conn, key, "failed", 5, 5, "permanent");
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.resize(1100, 600);
    widget.show();
    widget.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&widget));
    QSignalSpy pages(widget.model(), &TaskBrowserModel::pageLoaded);
    idem::TaskFilter f;
    f.keyPrefix = key;
    widget.applyFilter(f);
    QVERIFY(QTest::qWaitFor([&] { return !pages.isEmpty() && !widget.model()->busy(); }, browserTimeoutMs));
    widget.view()->setFocus();
    widget.view()->selectRow(0);
    QVERIFY(widget.findChild<QPushButton*>(QStringLiteral("requeueButton"))->toolTip().contains(
        QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R).toString(QKeySequence::NativeText)));

    // A failed row cannot be released: the key does nothing. It can be requeued: the key opens the
    // requeue dialog for that row. Pressed after the release key, the requeue key's dialog is the
    // evidence that the release key has been handled: by then, it is the only dialog.
    QTest::keyClick(widget.view(), Qt::Key_L, Qt::ControlModifier | Qt::ShiftModifier);
    QTest::keyClick(widget.view(), Qt::Key_R, Qt::ControlModifier | Qt::ShiftModifier);
    ActionDialog* dialog = nullptr;
    QTRY_VERIFY((dialog = widget.findChild<ActionDialog*>()) && dialog->isVisible());
    QCOMPARE(widget.findChildren<ActionDialog*>().size(), 1);
    QCOMPARE(dialog->action(), RecoveryAction::Requeue);
    QCOMPARE(dialog->targets().size(), std::size_t(1));
    dialog->reject();
}

namespace {
    // A row as the browser hands it to a dialog: failed after its last attempt.
    idem::TaskRow exhaustedRow(const char* key)
    {
        idem::TaskRow row;
        row.key = key;
        row.status = "failed";
        row.attempts = 3;
        row.maxAttempts = 3;
        row.updatedAtUs = 1714557600123456;
        return row;
    }
} // namespace

void TestActionsUi::invisibleReasonKeepsRunDisabled_data()
{
    QTest::addColumn<QString>("reason");
    QTest::addColumn<bool>("refused");
    for (const auto& c : reasonCases())
        QTest::addRow("%s", c.tag) << QString::fromStdString(c.utf8) << c.refused;
}

// Issue #12 item 6, as the operator meets it: a reason of only invisible characters (U+00A0,
// U+200B, ...) typed or pasted leaves Run disabled; one visible character enables it. The
// library and the SQL function refuse the same reasons (tst_actions).
void TestActionsUi::invisibleReasonKeepsRunDisabled()
{
    QFETCH(QString, reason);
    QFETCH(bool, refused);
    ActionDialog dialog(m_session.get(), RecoveryAction::Requeue, { exhaustedRow("invisible:charge:k1") });
    dialog.show();
    QVERIFY(!dialog.runButton()->isEnabled());
    // Typed, one key event per character (QTest::keyClicks knows only ASCII); the edit drops
    // what a keyboard cannot insert, such as ASCII controls...
    for (qsizetype i = 0; i < reason.size(); ++i) {
        const qsizetype n = reason.at(i).isHighSurrogate() && i + 1 < reason.size() ? 2 : 1;
        QTest::sendKeyEvent(QTest::Click, dialog.reasonEdit(), Qt::Key_unknown, reason.mid(i, n), Qt::NoModifier);
        i += n - 1;
    }
    QCOMPARE(dialog.runButton()->isEnabled(), !refused);
    dialog.reasonEdit()->clear();
    QVERIFY(!dialog.runButton()->isEnabled());
    // ...or pasted, which keeps every character (but U+FEFF, which the document drops).
    dialog.reasonEdit()->insertPlainText(reason);
    QCOMPARE(dialog.runButton()->isEnabled(), !refused);
}

namespace {
    // Pixels of a strong colour (the amber warning tone), as against the palette's own text,
    // which is grey to black or white: what an operator sees as "still a warning".
    int colouredPixels(QWidget* w)
    {
        const QImage image = w->grab().toImage();
        int n = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x) {
                const QColor c = image.pixelColor(x, y);
                n += c.hsvSaturation() > 110 && c.value() > 70 ? 1 : 0;
            }
        return n;
    }
} // namespace

// The hint under the reason is amber while the reason is missing, and the palette's own text
// colour once there is one, also after a theme change (a style follower used to put the amber
// back as soon as its style sheet was cleared).
void TestActionsUi::reasonHintLosesItsWarningColour()
{
    ActionDialog dialog(m_session.get(), RecoveryAction::Requeue, { exhaustedRow("hint:charge:k1") });
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    auto* hint = dialog.findChild<QLabel*>(QStringLiteral("reasonHint"));
    QVERIFY(hint);
    QVERIFY2(colouredPixels(hint) > 20, "the hint is not amber while the reason is missing");
    dialog.reasonEdit()->insertPlainText(QStringLiteral("INC-4411: card processor confirmed no charge"));
    QCoreApplication::processEvents();
    QCOMPARE(colouredPixels(hint), 0);
    // A theme change (the application palette) must not bring it back.
    const QPalette before = QApplication::palette();
    QPalette dark = before;
    dark.setColor(QPalette::Window, QColor(0x20, 0x20, 0x20));
    dark.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
    QApplication::setPalette(dark);
    QCoreApplication::processEvents();
    QCOMPARE(colouredPixels(hint), 0);
    // Cleared again, it is a warning again.
    dialog.reasonEdit()->clear();
    QCoreApplication::processEvents();
    QVERIFY(colouredPixels(hint) > 20);
    QApplication::setPalette(before);
}

QTEST_MAIN(TestActionsUi)
#include "tst_actions_ui.moc"
