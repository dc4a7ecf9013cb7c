// What a person sees of the audit witness (issue 12, item 7): nothing while the trail is intact;
// after the owner removed the newest entries, a red banner above every page saying so in plain
// words until acknowledged, and the Audit page saying it too with "Accept current trail", which
// resets this console's memory only.

#include <QtTest>

#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>

#include "models/auditwitness.h"
#include "tests/console/tst_auditwitness_support.h"
#include "views/auditwidget.h"
#include "views/consolewidget.h"
#include "views/noticebanner.h"

using idem::console::AuditWidget;
using idem::console::AuditWitness;
using idem::console::ConsoleWidget;
using idem::console::NoticeBanner;
using namespace idem::test;

class TestAuditWitnessView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void truncationShowsARedBannerUntilAcknowledged();
};

void TestAuditWitnessView::initTestCase() { IDEM_REQUIRE_DATABASE(); }

void TestAuditWitnessView::truncationShowsARedBannerUntilAcknowledged()
{
    QTemporaryDir dir;
    Trail t("witness_view");
    t.act(4);
    QVERIFY(t.connect());
    AuditWitness witness(
        &t.session, std::make_unique<QSettings>(dir.filePath(QStringLiteral("w.conf")), QSettings::IniFormat));
    witness.follow(&t.dashboard);
    ConsoleWidget window(&t.session);
    window.setAuditWitness(&witness);
    auto* audit = new AuditWidget(&t.session);
    audit->setWitness(&witness);
    window.addPage(audit, QStringLiteral("Audit"), 0);
    window.pages()->setCurrentWidget(audit);
    window.resize(1100, 700);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QTRY_COMPARE_WITH_TIMEOUT(witness.verdict(), AuditWitness::Verdict::Intact, browserTimeoutMs);

    NoticeBanner* banner = window.banner();
    QVERIFY2(banner->text().isEmpty(), qPrintable(banner->text()));
    QVERIFY(audit->witnessLabel()->isVisible());
    QVERIFY2(audit->witnessLabel()->text().contains(QStringLiteral("up to entry 4")),
        qPrintable(audit->witnessLabel()->text()));
    QVERIFY(!audit->acceptTrailButton()->isVisible());

    execSql(*t.conn, "DELETE FROM idem.task_idempotency_audit WHERE id > 2");
    QTRY_VERIFY_WITH_TIMEOUT(!banner->text().isEmpty(), browserTimeoutMs);
    const QString text = banner->text();
    QVERIFY2(text.startsWith(QStringLiteral("The audit trail is shorter than when this console last verified it: "
                                            "entry 4 (verified ")),
        qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("is gone; the trail now ends at entry 2. Someone with the owner's rights "
                                          "removed entries.")),
        qPrintable(text));
    QVERIFY(banner->isVisible());
    QVERIFY2(banner->styleSheet().contains(QStringLiteral("#fdecea")), qPrintable(banner->styleSheet())); // red
    QCOMPARE(banner->actionButton()->text(), QStringLiteral("Acknowledge"));
    QVERIFY(audit->acceptTrailButton()->isVisible());
    QVERIFY(audit->witnessLabel()->text().contains(QStringLiteral("entry 4 (verified ")));
    // "Verify chain" checks against the remembered head: the shorter chain is a break there too.
    QTest::mouseClick(audit->verifyButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(audit->chainLabel()->text().contains(QStringLiteral("(truncated)")), browserTimeoutMs);
    QVERIFY2(audit->chainLabel()->text().contains(QStringLiteral("the trail ends at entry 2 but entry 4")),
        qPrintable(audit->chainLabel()->text()));

    // Ticks that bring nothing new keep it there; acknowledging hides the banner only.
    const int ticks = t.dashboard.ticks();
    QTRY_VERIFY_WITH_TIMEOUT(t.dashboard.ticks() >= ticks + 2, browserTimeoutMs);
    QCOMPARE(banner->text(), text);
    QTest::mouseClick(banner->actionButton(), Qt::LeftButton);
    QVERIFY(banner->text().isEmpty());
    QVERIFY(!banner->isVisible());
    QVERIFY(audit->witnessLabel()->text().contains(QStringLiteral("is shorter")));

    // Another entry removed is another situation: the banner comes back.
    execSql(*t.conn, "DELETE FROM idem.task_idempotency_audit WHERE id = 2");
    QTRY_VERIFY_WITH_TIMEOUT(banner->text().contains(QStringLiteral("now ends at entry 1")), browserTimeoutMs);

    // Accepting the current trail is local: the trail is verified whole and the alarm ends.
    const auto entries = querySql(*t.conn, "SELECT count(*) FROM idem.task_idempotency_audit")[0][0].as<int>();
    QTest::mouseClick(audit->acceptTrailButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(witness.verdict(), AuditWitness::Verdict::Intact, browserTimeoutMs);
    QVERIFY(banner->text().isEmpty());
    QVERIFY(!audit->acceptTrailButton()->isVisible());
    QVERIFY2(audit->witnessLabel()->text().contains(QStringLiteral("up to entry 1")),
        qPrintable(audit->witnessLabel()->text()));
    QCOMPARE(querySql(*t.conn, "SELECT count(*) FROM idem.task_idempotency_audit")[0][0].as<int>(), entries);
}

QTEST_MAIN(TestAuditWitnessView)
#include "tst_auditwitnessview.moc"
