#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>

#include <pqxx/pqxx>

#include "core/counters.h"
#include "core/taskstore.h"
#include "models/fencingwatch.h"
#include "operations/fencing.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"
#include "views/fencingpanel.h"

using namespace std::chrono_literals;
using idem::test::digestOf;
using idem::test::scalar;
using idem::test::sqlstateOf;
using idem::test::storeOptions;

namespace {
constexpr const char* readerRole = "idem_t_fencing_reader";
constexpr const char* workerRole = "idem_t_fencing_worker";
constexpr const char* password = "pw-fencing";
const idem::SchemaName schema;
} // namespace

// Issue 46 item 2: a worker whose lease ends, a takeover by another, the late complete refused;
// what the database records (the lease of each claim, the takeover and the refusal by worker,
// the run time against the lease) and what the operator reads (idemctl fencing, its --json, the
// dashboard's panel).
class TestFencing : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void lateCompletionRefusedAfterTakeover();
    void badArgumentsAndRoles();

private:
    // Waits (bounded) until the key's lease has been over for `afterMs`.
    bool waitLeaseOver(const idem::TaskKey& key, int afterMs);
    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
};

void TestFencing::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("fencing", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    idem::test::createLoginRole(readerRole, password, "idem_reader");
    idem::test::createLoginRole(workerRole, password, "idem_worker");
}

void TestFencing::cleanupTestCase()
{
    m_owner.reset();
    m_db.reset();
}

bool TestFencing::waitLeaseOver(const idem::TaskKey& key, int afterMs)
{
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < 20000) {
        if (idem::test::field(*m_owner, key,
                "(t.lease_until + " + std::to_string(afterMs) + " * interval '1 millisecond' < now())::text")
            == "true")
            return true;
        QThread::msleep(20);
    }
    return false;
}

void TestFencing::lateCompletionRefusedAfterTakeover()
{
    // Two workers, each on its own connection under its own application_name, each with its own
    // counters, as the library runs them.
    auto connA
        = std::make_unique<pqxx::connection>(idem::test::dsnWith(m_db->dsn(), { { "application_name", "worker-a" } }));
    auto connB
        = std::make_unique<pqxx::connection>(idem::test::dsnWith(m_db->dsn(), { { "application_name", "worker-b" } }));
    idem::OutcomeCounters countersA, countersB;
    idem::TaskStore a(*connA, storeOptions(1000ms, 5), &countersA);
    idem::TaskStore b(*connB, storeOptions(1000ms, 5), &countersB);

    // Worker A claims with a 1 s lease and is still working when it ends; B takes the key over.
    const idem::TaskKey key("acme", "charge", "late-1");
    const auto first = a.claim(key, digestOf('a'));
    QVERIFY(first.mayExecute());
    QCOMPARE(idem::test::field(*m_owner, key, "t.lease_ms::text"), QByteArray("1000"));
    QVERIFY(waitLeaseOver(key, 0));
    const auto second = b.claim(key, digestOf('a'));
    QCOMPARE(idem::decisionName(second.decision), "reacquired");
    QCOMPARE(second.detail, std::string("lease_expired"));
    // A's late complete is refused: its transaction cannot commit, the row stays B's.
    {
        pqxx::work tx(*connA);
        QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, a.complete(tx, key, first.token, R"({"charged":true})"));
    }
    {
        pqxx::work tx(*connB);
        b.complete(tx, key, second.token, R"({"charged":true})");
        tx.commit();
    }
    QCOMPARE(idem::test::field(*m_owner, key, "t.status || ' ' || t.attempts || ' ' || t.lease_ms"),
        QByteArray("succeeded 2 1000"));

    // A second key of B outlives its lease without being taken over: its success counts as an
    // attempt that outlived its lease (the run time measured against the 1 s asked for).
    const idem::TaskKey slow("acme", "charge", "slow-1");
    const auto s = b.claim(slow, digestOf('b'));
    QVERIFY(s.mayExecute());
    QVERIFY(waitLeaseOver(slow, 400));
    {
        pqxx::work tx(*connB);
        b.complete(tx, slow, s.token, "{}");
        tx.commit();
    }

    // The libraries flush their counts: the takeover under B's name, the refusal under A's.
    countersA.flush(*connA, schema);
    countersB.flush(*connB, schema);
    QCOMPARE(
        scalar(*m_owner,
            "SELECT string_agg(worker || ' ' || operation || ' ' || outcome || ' ' || n, ', ' ORDER BY worker, outcome)"
            " FROM idem.idem_counters_workers"),
        QByteArray("worker-a charge stale_token 1, worker-b charge reacquired_lease 1"));

    // The minutes fold when closed: the rows are moved 5 minutes into the past (durations kept)
    // and the roll-up set back, as tst_latency does.
    {
        pqxx::work w(*m_owner);
        w.exec("UPDATE idem.task_idempotency SET created_at = created_at - interval '5 minutes',"
               " updated_at = updated_at - interval '5 minutes', attempt_started_at = attempt_started_at - interval '5 "
               "minutes'");
        w.exec("UPDATE idem.idem_latency_state SET folded_to = date_trunc('minute', now()) - interval '7 minutes'");
        w.commit();
    }
    const std::string readerDsn = idem::test::loginDsn(m_db->dsn(), readerRole, password);
    auto reader = std::make_unique<pqxx::connection>(readerDsn);
    const auto r = idem::readFencing(*reader, schema, 60, 50, 5000);
    QCOMPARE(scalar(*m_owner,
                 // summed over the minutes: the two completions may fall either side of a minute's end
                 "SELECT operation || ' ' || lease_ms || ' ' || sum(attempts) || ' ' || sum(overruns)"
                 " FROM idem.idem_lease GROUP BY operation, lease_ms"),
        QByteArray("charge 1000 2 1"));
    QVERIFY(r.available);
    QCOMPARE(r.operations.size(), std::size_t(1));
    const auto& op = r.operations.front();
    QCOMPARE(op.operation, std::string("charge"));
    QCOMPARE(op.takeovers, std::int64_t(1));
    QCOMPARE(op.refused, std::int64_t(1));
    QCOMPARE(op.leaseMs, std::optional<std::int64_t>(1000));
    QCOMPARE(op.measured, std::int64_t(2));
    QCOMPARE(op.overruns, std::int64_t(1));
    QVERIFY(op.runP99Ms && *op.runP99Ms > 1000);
    QVERIFY(op.leaseTooShort());
    QCOMPARE(r.worst(), &op);

    // idemctl fencing: the sentence, the table, the workers.
    const auto text = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("fencing"), QStringLiteral("--dsn"), QString::fromStdString(readerDsn) });
    QVERIFY2(text.exitCode == 0, qPrintable(text.err));
    QVERIFY2(
        text.out.contains(QStringLiteral("1 takeovers of expired leases, 1 late calls refused")), qPrintable(text.out));
    const QRegularExpression advice(QStringLiteral(
        "! charge: p99 run time [0-9.]+ s exceeds the 1 s lease: 50\\.0 % of attempts outlive their lease"));
    QVERIFY2(advice.match(text.out).hasMatch(), qPrintable(text.out));
    QVERIFY2(QRegularExpression(QStringLiteral("worker-a +charge +0 +1\n")).match(text.out).hasMatch(),
        qPrintable(text.out));
    QVERIFY2(QRegularExpression(QStringLiteral("worker-b +charge +1 +0\n")).match(text.out).hasMatch(),
        qPrintable(text.out));

    const auto json = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("fencing"), QStringLiteral("--json"), QStringLiteral("--dsn"),
            QString::fromStdString(readerDsn) });
    QVERIFY2(json.exitCode == 0, qPrintable(json.err));
    const auto doc = QJsonDocument::fromJson(json.out.toUtf8()).object();
    QCOMPARE(doc[QLatin1String("refused")].toInt(), 1);
    QCOMPARE(doc[QLatin1String("takeovers")].toInt(), 1);
    const auto jop = doc[QLatin1String("operations")].toArray().first().toObject();
    QCOMPARE(jop[QLatin1String("operation")].toString(), QStringLiteral("charge"));
    QCOMPARE(jop[QLatin1String("lease_ms")].toInt(), 1000);
    QCOMPARE(jop[QLatin1String("overruns")].toInt(), 1);
    QCOMPARE(jop[QLatin1String("measured")].toInt(), 2);
    QCOMPARE(jop[QLatin1String("overrun_percent")].toDouble(), 50.0);
    QVERIFY(jop[QLatin1String("lease_too_short")].toBool());
    QVERIFY(jop[QLatin1String("advice")].toString().contains(QStringLiteral("exceeds the 1 s lease")));
    const auto workers = doc[QLatin1String("workers")].toArray();
    QCOMPARE(workers.size(), 2);
    QCOMPARE(workers[0].toObject()[QLatin1String("worker")].toString(), QStringLiteral("worker-a"));
    QCOMPARE(workers[0].toObject()[QLatin1String("refused")].toInt(), 1);
    QCOMPARE(workers[1].toObject()[QLatin1String("takeovers")].toInt(), 1);
    int refusedInMinutes = 0;
    for (const auto& m : doc[QLatin1String("per_minute")].toArray())
        refusedInMinutes += m.toObject()[QLatin1String("refused")].toInt();
    QCOMPARE(refusedInMinutes, 1);

    // The incident snapshot keeps them: snapshot.json's fencing and the report's section.
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString out = dir.filePath(QStringLiteral("snap"));
        const auto run = idem::test::runProgram(idem::test::idemctlPath(),
            { QStringLiteral("snapshot"), QStringLiteral("export"), QStringLiteral("--dsn"),
                QString::fromStdString(readerDsn), QStringLiteral("--out"), out });
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QFile snapFile(out + QStringLiteral("/snapshot.json"));
        QVERIFY(snapFile.open(QIODevice::ReadOnly));
        const auto snap = QJsonDocument::fromJson(snapFile.readAll()).object()[QLatin1String("fencing")].toObject();
        QCOMPARE(snap[QLatin1String("refused")].toInt(), 1);
        const auto sop = snap[QLatin1String("operations")].toArray().first().toObject();
        QCOMPARE(sop[QLatin1String("lease_ms")].toInt(), 1000);
        QVERIFY(sop[QLatin1String("lease_too_short")].toBool());
        QFile reportFile(out + QStringLiteral("/report.html"));
        QVERIFY(reportFile.open(QIODevice::ReadOnly));
        const QString html = QString::fromUtf8(reportFile.readAll());
        QVERIFY(html.contains(QStringLiteral("<h2>Fencing: 1 late calls refused, 1 leases taken over, in the last ")));
        QVERIFY(html.contains(QStringLiteral("exceeds the 1 s lease: 50.0 % of attempts outlive their lease")));
        QVERIFY(html.contains(QStringLiteral("<td>worker-a</td>")));
    }

    // The dashboard's panel, from the same reading.
    idem::console::FencingPanel panel(nullptr);
    panel.resize(900, 260);
    panel.present(r);
    QVERIFY(!panel.isHidden());
    const auto label = [&](const char* name) { return panel.findChild<QLabel*>(QLatin1String(name))->text(); };
    QVERIFY2(label("fencingHeadline")
                 .startsWith(
                     QStringLiteral("Fencing, last 60 min: leases taken over 1, late calls refused 1 (the fence held")),
        qPrintable(label("fencingHeadline")));
    QVERIFY2(
        QRegularExpression(
            QStringLiteral(
                "⚠ charge: p99 run time [0-9.]+ s exceeds the 1 s lease: 50\\.0 % of attempts outlive their lease"))
            .match(label("fencingAdvice"))
            .hasMatch(),
        qPrintable(label("fencingAdvice")));
    QVERIFY2(label("fencingWorkers")
                 .contains(QStringLiteral("worker-a (charge): late calls refused 1, leases taken over 0")),
        qPrintable(label("fencingWorkers")));
    if (const QByteArray dir = qgetenv("IDEM_SCREENSHOT_DIR"); !dir.isEmpty()) {
        panel.show();
        QVERIFY(panel.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/fencing-panel.png")));
    }

    // Nothing to say: the panel hides.
    idem::FencingReading quiet;
    quiet.available = true;
    quiet.minutes = 60;
    panel.present(quiet);
    QVERIFY(panel.isHidden());
}

void TestFencing::badArgumentsAndRoles()
{
    QCOMPARE(
        sqlstateOf(*m_owner, "SELECT idem.idem_fencing(now(), now() - interval '1 minute', 10)"), std::string("ID003"));
    QCOMPARE(
        sqlstateOf(*m_owner, "SELECT idem.idem_fencing(now() - interval '25 hours', now(), 10)"), std::string("ID003"));
    QCOMPARE(
        sqlstateOf(*m_owner, "SELECT idem.idem_fencing(now() - interval '1 hour', now(), 0)"), std::string("ID003"));
    QCOMPARE(sqlstateOf(*m_owner, "SELECT idem.idem_fencing(NULL, now(), 10)"), std::string("ID003"));
    auto reader = std::make_unique<pqxx::connection>(idem::test::loginDsn(m_db->dsn(), readerRole, password));
    QCOMPARE(sqlstateOf(*reader, "SELECT idem.idem_fencing(now() - interval '1 hour', now(), 10)"), std::string("ok"));
    auto worker = std::make_unique<pqxx::connection>(idem::test::loginDsn(m_db->dsn(), workerRole, password));
    QCOMPARE(
        sqlstateOf(*worker, "SELECT idem.idem_fencing(now() - interval '1 hour', now(), 10)"), std::string("42501"));
    QCOMPARE(sqlstateOf(*worker, "SELECT count(*) FROM idem.idem_counters_workers"), std::string("42501"));
    QCOMPARE(sqlstateOf(*reader, "DELETE FROM idem.idem_lease"), std::string("42501"));
    const auto bad = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("fencing"), QStringLiteral("--minutes"), QStringLiteral("0"), QStringLiteral("--dsn"),
            QString::fromStdString(m_db->dsn()) });
    QCOMPARE(bad.exitCode, 2);
}

QTEST_MAIN(TestFencing)
#include "tst_fencing.moc"
