#include <QtTest>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTableView>
#include <QTableWidget>

#include "operations/actions.h"
#include "models/auditmodel.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "views/auditwidget.h"

using idem::RecoveryAction;
using idem::console::AuditModel;
using idem::console::AuditWidget;
using idem::console::ConsoleSession;
using namespace idem::test;

// The Audit page: filters by key, actor, action and time answer what the trail holds; an
// entry's before/after diff marks exactly the changed fields; "Verify chain" reports an intact
// chain, then the first entry an edit broke.
class TestAuditView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void pagesNewestFirst();
    void filters_data();
    void filters();
    void badTimeIsReported();
    void diffHighlightsChangedFields();
    void verifyChainReportsFirstBrokenEntry();

private:
    void act(const std::string& key, RecoveryAction action, const std::string& actor, const std::string& reason);
    std::vector<std::int64_t> shownIds(AuditWidget& w);
    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<ConsoleSession> m_session;
};

void TestAuditView::act(
    const std::string& key, RecoveryAction action, const std::string& actor, const std::string& reason)
{
    const auto v = idem::readRowVersions(*m_conn, idem::SchemaName(), { key });
    QVERIFY(v[0]);
    idem::ActionOptions o;
    o.reason = reason;
    o.actor = actor;
    o.extraAttempts = 2;
    const auto r = idem::applyAction(*m_conn, idem::SchemaName(), action, *v[0], o);
    QCOMPARE(r.outcome, idem::ActionOutcome::Applied);
}

void TestAuditView::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("auditview", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
    // 12 entries: 4 keys, alice and bob, all three actions.
    for (int i = 0; i < 4; ++i) {
        const auto key = "audit:charge:k" + std::to_string(i);
        plantTask(*m_conn, key, "failed", 3, 3, "permanent");
        act(key, RecoveryAction::Requeue, "alice@host1", "requeue " + key);
        act(key, RecoveryAction::Fail, i % 2 ? "bob@host2" : "alice@host1", "stop " + key);
        act(key, RecoveryAction::Requeue, "bob@host2", "again; it's 100% fixed");
    }
    m_session = std::make_unique<ConsoleSession>();
    QVERIFY(connectSession(*m_session, m_db->dsn()));
}

void TestAuditView::cleanupTestCase()
{
    m_session.reset();
    m_conn.reset();
    m_db.reset();
}

std::vector<std::int64_t> TestAuditView::shownIds(AuditWidget& w)
{
    std::vector<std::int64_t> ids;
    for (int i = 0; i < w.model()->rowCount(); ++i)
        ids.push_back(w.model()->entry(i).id);
    return ids;
}

void TestAuditView::pagesNewestFirst()
{
    AuditModel model(m_session.get());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setPageSize(5);
    QSignalSpy pages(&model, &AuditModel::pageLoaded);
    model.setFilter({});
    QVERIFY(pages.wait(browserTimeoutMs));
    // The tester asks for more by itself (as a view scrolled to the end does); so do we.
    while (model.busy() || model.canFetchMore({})) {
        model.fetchMore({});
        QVERIFY(QTest::qWaitFor([&] { return !model.busy(); }, browserTimeoutMs));
    }
    QCOMPARE(model.rowCount(), 12);
    for (int i = 0; i < 12; ++i)
        QCOMPARE(model.entry(i).id, 12 - i);
    for (const auto& args : pages)
        QVERIFY(args.first().toInt() <= 5);
}

void TestAuditView::filters_data()
{
    QTest::addColumn<QString>("control");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("where");
    QTest::addRow("key") << QStringLiteral("auditKeyFilter") << QStringLiteral("audit:charge:k2")
                         << QStringLiteral("idempotency_key = 'audit:charge:k2'");
    QTest::addRow("actor") << QStringLiteral("auditActorFilter") << QStringLiteral("bob@host2")
                           << QStringLiteral("os_user = 'bob@host2'");
    QTest::addRow("action") << QStringLiteral("auditActionFilter") << QStringLiteral("fail")
                            << QStringLiteral("action = 'fail'");
    QTest::addRow("since (future)") << QStringLiteral("auditSinceFilter") << QStringLiteral("2999-01-01")
                                    << QStringLiteral("false");
    QTest::addRow("until (future)") << QStringLiteral("auditUntilFilter") << QStringLiteral("2999-01-01T00:00:00Z")
                                    << QStringLiteral("true");
}

void TestAuditView::filters()
{
    QFETCH(QString, control);
    QFETCH(QString, value);
    QFETCH(QString, where);
    AuditWidget widget(m_session.get());
    widget.show();
    QVERIFY(QTest::qWaitFor([&] { return !widget.model()->busy(); }, browserTimeoutMs));
    QSignalSpy pages(widget.model(), &AuditModel::pageLoaded);
    if (auto* combo = widget.findChild<QComboBox*>(control)) {
        combo->setCurrentIndex(combo->findData(value));
        QTest::mouseClick(widget.findChild<QPushButton*>(QStringLiteral("auditApply")), Qt::LeftButton);
    } else {
        auto* edit = widget.findChild<QLineEdit*>(control);
        QVERIFY(edit);
        QTest::keyClicks(edit, value);
        QTest::keyClick(edit, Qt::Key_Return);
    }
    QVERIFY(QTest::qWaitFor([&] { return !pages.isEmpty() && !widget.model()->busy(); }, browserTimeoutMs));
    std::vector<std::int64_t> expected;
    for (const auto& r : querySql(
             *m_conn, "SELECT id FROM idem.task_idempotency_audit WHERE " + where.toStdString() + " ORDER BY id DESC"))
        expected.push_back(r[0].as<std::int64_t>());
    QVERIFY(shownIds(widget) == expected);
}

void TestAuditView::badTimeIsReported()
{
    AuditWidget widget(m_session.get());
    widget.show();
    auto* since = widget.findChild<QLineEdit*>(QStringLiteral("auditSinceFilter"));
    QTest::keyClicks(since, QStringLiteral("last tuesday"));
    QTest::keyClick(since, Qt::Key_Return);
    auto* error = widget.findChild<QLabel*>(QStringLiteral("auditError"));
    QVERIFY(error->isVisible());
    QVERIFY(error->text().contains(QStringLiteral("last tuesday")));
}

void TestAuditView::diffHighlightsChangedFields()
{
    AuditWidget widget(m_session.get());
    widget.show();
    QVERIFY(
        QTest::qWaitFor([&] { return widget.model()->rowCount() == 12 && !widget.model()->busy(); }, browserTimeoutMs));
    // Entry #1: the first requeue of k0 (failed -> retryable_failed, 2 more attempts).
    const int row = 11;
    QCOMPARE(widget.model()->entry(row).id, 1);
    widget.view()->selectRow(row);
    auto* diff = widget.diffTable();
    QVERIFY(diff->rowCount() > 5);
    QMap<QString, bool> changed;
    QMap<QString, QString> after;
    for (int i = 0; i < diff->rowCount(); ++i) {
        changed[diff->item(i, 0)->text()] = diff->item(i, 0)->data(Qt::UserRole).toBool();
        after[diff->item(i, 0)->text()] = diff->item(i, 2)->text();
        QCOMPARE(diff->item(i, 1)->font().bold(), changed[diff->item(i, 0)->text()]);
    }
    QCOMPARE(changed.value(QStringLiteral("status")), true);
    QCOMPARE(after.value(QStringLiteral("status")), QStringLiteral("retryable_failed"));
    QCOMPARE(changed.value(QStringLiteral("max_attempts")), true);
    QCOMPARE(after.value(QStringLiteral("max_attempts")), QStringLiteral("5"));
    QCOMPARE(changed.value(QStringLiteral("updated_at")), true);
    QCOMPARE(changed.value(QStringLiteral("request_hash")), false);
    QCOMPARE(changed.value(QStringLiteral("attempts")), false);
    QCOMPARE(changed.value(QStringLiteral("idempotency_key")), false);
    QCOMPARE(widget.reasonView()->toPlainText(), QStringLiteral("requeue audit:charge:k0"));
}

void TestAuditView::verifyChainReportsFirstBrokenEntry()
{
    AuditWidget widget(m_session.get());
    widget.show();
    QTest::mouseClick(widget.verifyButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(widget.chainLabel()->text().contains(QStringLiteral("Chain intact")), browserTimeoutMs);
    QVERIFY(widget.chainLabel()->text().contains(QStringLiteral("12 entries verified")));
    // Someone with the owner's rights edits entry 7's reason: the chain says where.
    execSql(*m_conn, "UPDATE idem.task_idempotency_audit SET reason = 'nothing to see' WHERE id = 7");
    QTRY_VERIFY_WITH_TIMEOUT(widget.verifyButton()->isEnabled(), browserTimeoutMs);
    QTest::mouseClick(widget.verifyButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(
        widget.chainLabel()->text().contains(QStringLiteral("Chain broken at entry #7")), browserTimeoutMs);
    QVERIFY(widget.chainLabel()->text().contains(QStringLiteral("hash_mismatch")));
    QVERIFY(widget.chainLabel()->text().contains(QStringLiteral("6 entries verified")));
}

QTEST_MAIN(TestAuditView)
#include "tst_auditview.moc"
