#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>
#include <pqxx/pqxx>

#include "schema/migrate.h"
#include "operations/snapshot.h"
#include "operations/snapshotbundle.h"
#include "tests/support/cliprocess.h"
#include "tests/support/testdb.h"

// Snapshots taken while `idemctl demo` drives a faulty workload are internally consistent:
// wherever a figure and a row set describe the same set, and the set is under its bound,
// the figure equals the number of exported rows, and every row fits the figure's definition
// at the snapshot's instant. A torn read (figures and rows from different moments) fails this.
class TestSnapshotDemo : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void snapshotsUnderLoadAreConsistent();

private:
    void checkConsistent(const idem::SnapshotData& d);

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::int64_t m_sawExpired = 0, m_sawFailed = 0, m_sawUncertain = 0, m_sawConflicts = 0;
};

void TestSnapshotDemo::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("snapdemo", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
}

void TestSnapshotDemo::cleanupTestCase()
{
    m_conn.reset();
    m_db.reset();
}

void TestSnapshotDemo::checkConsistent(const idem::SnapshotData& d)
{
    const auto& f = d.figures;
    const auto* expired = d.rowSet("expired_leases");
    const auto* running = d.rowSet("longest_running");
    const auto* failed = d.rowSet("failed");
    const auto* uncertain = d.rowSet("uncertain");
    QVERIFY(expired && running && failed && uncertain);
    for (const auto* s : { expired, running, failed, uncertain }) {
        // The bound is generous: every set is complete, so rows must equal the figures exactly.
        QVERIFY2(!s->truncated, s->name.c_str());
        QCOMPARE(static_cast<std::int64_t>(s->rows.size()), s->total);
    }
    QCOMPARE(static_cast<std::int64_t>(expired->rows.size()), f.expiredLeases);
    QCOMPARE(static_cast<std::int64_t>(running->rows.size()), f.processing + f.expiredLeases);
    QCOMPARE(static_cast<std::int64_t>(failed->rows.size()), f.failedPermanent + f.failedExhausted);
    QCOMPARE(static_cast<std::int64_t>(uncertain->rows.size()), f.uncertain);

    // Each row fits its figure's definition at the snapshot's instant (ISO UTC text sorts as time).
    std::int64_t live = 0;
    for (const auto& r : running->rows) {
        QCOMPARE(r.status, std::string("processing"));
        if (r.leaseUntil && *r.leaseUntil > d.takenAt)
            ++live;
    }
    QCOMPARE(live, f.processing);
    for (const auto& r : expired->rows)
        QVERIFY2(r.status == "processing" && (!r.leaseUntil || *r.leaseUntil <= d.takenAt), r.key.c_str());
    std::int64_t permanent = 0;
    for (const auto& r : failed->rows) {
        QCOMPARE(r.status, std::string("failed"));
        permanent += r.errorClass.value_or("") == "permanent";
    }
    QCOMPARE(permanent, f.failedPermanent);
    for (const auto& r : uncertain->rows)
        QVERIFY(r.status == "retryable_failed" && r.errorClass.value_or("") == "unknown");

    // The conflicts set is the window's conflict counters: its sum is the figure.
    QVERIFY(!d.conflicts.truncated);
    std::int64_t conflicts = 0;
    for (const auto& c : d.conflicts.rows)
        conflicts += c.n;
    QCOMPARE(conflicts, f.digestConflicts);

    m_sawExpired += f.expiredLeases;
    m_sawFailed += f.failedPermanent + f.failedExhausted;
    m_sawUncertain += f.uncertain;
    m_sawConflicts += f.digestConflicts;
}

void TestSnapshotDemo::snapshotsUnderLoadAreConsistent()
{
    QProcess demo;
    demo.setProcessEnvironment(idem::test::cleanEnvironment());
    demo.start(idem::test::idemctlPath(),
        { QStringLiteral("demo"), QStringLiteral("--dsn"), QString::fromStdString(m_db->dsn()),
            QStringLiteral("--quiet"), QStringLiteral("--duration"), QStringLiteral("0"), QStringLiteral("--workers"),
            QStringLiteral("4"), QStringLiteral("--rate"), QStringLiteral("300"), QStringLiteral("--die-rate"),
            QStringLiteral("0.08"), QStringLiteral("--lease-ms"), QStringLiteral("500"),
            QStringLiteral("--permanent-rate"), QStringLiteral("0.05"), QStringLiteral("--unknown-rate"),
            QStringLiteral("0.08"), QStringLiteral("--conflict-rate"), QStringLiteral("0.05"), QStringLiteral("--seed"),
            QStringLiteral("11") });
    QVERIFY(demo.waitForStarted());

    idem::SnapshotOptions options;
    options.rowLimit = 100000;
    options.historyMinutes = 5;
    idem::SnapshotContext context;
    context.producer = "tst_snapshotdemo";
    context.conninfo = m_db->dsn();
    QTemporaryDir tmp;
    int taken = 0;
    QThread::msleep(1500); // let the workload build up some state
    // The workload runs until it is stopped: snapshots go on until there are enough of them and
    // they have seen every kind of row, however slowly a loaded machine takes them.
    const auto enough = [&] {
        return taken >= 6 && m_sawExpired > 0 && m_sawFailed > 0 && m_sawUncertain > 0 && m_sawConflicts > 0;
    };
    QDeadlineTimer deadline(120000);
    while (demo.state() == QProcess::Running && !enough() && !deadline.hasExpired()) {
        const auto d = idem::readSnapshot(*m_conn, options, context);
        checkConsistent(d);
        if (QTest::currentTestFailed())
            break;
        if (++taken == 3) {
            // A bundle written mid-run holds exactly what was read.
            const auto dir = tmp.filePath(QStringLiteral("mid")).toStdString();
            idem::writeSnapshotBundle(dir, d, false, nullptr);
            const auto loaded = idem::openSnapshotBundle(dir, std::nullopt);
            QVERIFY(loaded.verification.ok());
            QCOMPARE(loaded.data.figures.expiredLeases, d.figures.expiredLeases);
            QCOMPARE(loaded.data.rowSet("failed")->rows.size(), d.rowSet("failed")->rows.size());
        }
        QThread::msleep(400);
    }
    demo.terminate();
    const auto run = idem::test::finishProcess(demo, 60000);
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(taken >= 6, qPrintable(QStringLiteral("only %1 snapshots during the run").arg(taken)));
    // The workload did produce every kind of row the sets hold, so the checks were not vacuous.
    QVERIFY(m_sawExpired > 0);
    QVERIFY(m_sawFailed > 0);
    QVERIFY(m_sawUncertain > 0);
    QVERIFY(m_sawConflicts > 0);
}

QTEST_GUILESS_MAIN(TestSnapshotDemo)
#include "tst_snapshotdemo.moc"
