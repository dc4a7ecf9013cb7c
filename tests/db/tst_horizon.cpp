#include <QtTest>

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "operations/horizon.h"
#include "operations/storage.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"

using namespace idem::test;

// Who holds back the transaction horizon (issue 46 item 1), as an operator meets it: a report
// opens a REPEATABLE READ transaction, takes its snapshot and stays open while the claims go on
// updating rows; idem_horizon_holders names that session (pid, role, application, state, age in
// time and transaction ids), `idemctl storage` says it held while task_idempotency's dead rows
// grew since the size sample before it began, and a reader login sees the holder without its
// query text or client; once it ends, nothing is held.
namespace {
const char* const readerLogin = "idem_t_horizon_reader";
const char* const readerPassword = "horizon-reader-pw-41c";
const char* const workerLogin = "idem_t_horizon_worker";
const char* const workerPassword = "horizon-worker-pw-41c";
constexpr int timeoutMs = 20000;
} // namespace

class TestHorizon : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void nothingHeldWithoutALongTransaction();
    void namesTheHolderAndTheDeadRowsItKeeps();
    void limitsAndRights();

private:
    // Updates every planted row once (the claims' and completions' effect on the table): n dead rows.
    void workload();
    QJsonObject storageJson(const std::string& dsn, const QStringList& extra = {});
    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
};

void TestHorizon::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("horizon", migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), true });
    createLoginRole(readerLogin, readerPassword, "idem_reader");
    createLoginRole(workerLogin, workerPassword, "idem_worker");
    pqxx::work w(*m_conn);
    w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts)"
           " SELECT 'th:charge:k' || g, 'v1:' || repeat('a', 64), 'succeeded', '{}', 1 FROM generate_series(1, 200) g");
    w.commit();
}

void TestHorizon::cleanupTestCase()
{
    m_conn.reset();
    m_db.reset();
}

void TestHorizon::workload()
{
    pqxx::work w(*m_conn);
    w.exec("UPDATE idem.task_idempotency SET attempts = attempts + 1, updated_at = now()"
           " WHERE idempotency_key LIKE 'th:charge:%'");
    w.commit();
}

QJsonObject TestHorizon::storageJson(const std::string& dsn, const QStringList& extra)
{
    const auto run = runProgram(idemctlPath(),
        QStringList { QStringLiteral("storage"), QStringLiteral("--dsn"), QString::fromStdString(dsn),
            QStringLiteral("--json") }
            + extra);
    if (run.exitCode != 0)
        qWarning("%s", qPrintable(describe(run)));
    return QJsonDocument::fromJson(run.out.toUtf8()).object();
}

void TestHorizon::nothingHeldWithoutALongTransaction()
{
    // Only this test's own connections, none of them inside a transaction: no session is listed
    // for long, and nothing is judged held even at a 1 s threshold.
    auto c = m_db->connect();
    pqxx::read_transaction tx(*c);
    const auto h = idem::readHorizon(tx, idem::SchemaName());
    QVERIFY(h.available);
    QVERIFY(h.ownerSeesAll);
    for (const auto& x : h.holders)
        QVERIFY2(!x.ageSeconds || *x.ageSeconds < 5, qPrintable(QString::fromStdString(idem::describeHolder(x))));
    QVERIFY(!idem::judgeHorizon(h, 5).held);
    QVERIFY(!h.tables.empty());
}

void TestHorizon::namesTheHolderAndTheDeadRowsItKeeps()
{
    // A size sample before the report begins: what "dead rows grew" is judged against.
    idem::StorageOptions o;
    {
        auto c = m_db->connect();
        idem::readStorage(*c, idem::SchemaName(), o);
    }
    QCOMPARE(scalar(*m_conn, "SELECT count(*) FROM idem.idem_storage_samples WHERE dead_tuples IS NOT NULL"), "1"_b);
    const QByteArray deadBefore = scalar(*m_conn, "SELECT dead_tuples FROM idem.idem_storage_samples");
    QTest::qWait(1100); // the holder's transaction must begin after the sample's second

    // The report: REPEATABLE READ, its snapshot taken by its first query, left open.
    auto holder = idem::connect(dsnWith(m_db->dsn(), { { "application_name", "nightly-report" } }));
    const int pid = holder->backendpid();
    pqxx::work report(*holder);
    report.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    report.exec("SELECT count(*) AS report_rows FROM idem.task_idempotency");

    // The workload goes on: every update leaves a dead row the horizon keeps.
    for (int i = 0; i < 3; ++i)
        workload();
    pqxx::nontransaction(*m_conn).exec("VACUUM idem.task_idempotency"); // cannot remove them: it runs during the hold

    // As the reader: the holder named, its query and client hidden.
    const std::string readerDsn = loginDsn(m_db->dsn(), readerLogin, readerPassword);
    QJsonObject json;
    QElapsedTimer t;
    t.start();
    // The statistics reach the views at the backends' next flush (at most a second).
    do {
        json = storageJson(readerDsn, { QStringLiteral("--held-after"), QStringLiteral("1"), QStringLiteral("--no-sample") });
        if (json[QLatin1String("horizon")].toObject()[QLatin1String("alert")].toBool())
            break;
        QTest::qWait(300);
    } while (t.elapsed() < timeoutMs);
    const auto horizon = json[QLatin1String("horizon")].toObject();
    QVERIFY2(horizon[QLatin1String("alert")].toBool(), QJsonDocument(horizon).toJson().constData());
    const auto first = horizon[QLatin1String("holders")].toArray().first().toObject();
    QCOMPARE(first[QLatin1String("kind")].toString(), QStringLiteral("session"));
    QCOMPARE(first[QLatin1String("pid")].toInt(), pid);
    QCOMPARE(first[QLatin1String("application")].toString(), QStringLiteral("nightly-report"));
    QCOMPARE(first[QLatin1String("state")].toString(), QStringLiteral("idle in transaction"));
    QCOMPARE(first[QLatin1String("role")].toString(),
        QString::fromUtf8(scalar(*m_conn, "SELECT usename FROM pg_stat_activity WHERE pid = $1", pid)));
    QVERIFY(first[QLatin1String("query_hidden")].toBool());
    QVERIFY(first[QLatin1String("query")].isNull());
    QVERIFY(first[QLatin1String("client")].isNull());
    QVERIFY(first[QLatin1String("age_seconds")].toDouble() >= 1);
    QVERIFY(first[QLatin1String("xid_age")].toInt() >= 3); // the three updates' transactions at least
    QCOMPARE(horizon[QLatin1String("login_sees_all")].toBool(), false);
    // 600 dead row versions of task_idempotency, all kept: the VACUUM ran after the report began.
    const auto tables = horizon[QLatin1String("tables")].toArray();
    QJsonObject task;
    for (const auto& x : tables)
        if (x.toObject()[QLatin1String("name")].toString() == QLatin1String("task_idempotency"))
            task = x.toObject();
    QVERIFY(task[QLatin1String("dead_tuples")].toInt() >= 600);
    QVERIFY(task[QLatin1String("vacuumed_during_hold")].toBool());
    QVERIFY(horizon[QLatin1String("kept_at_least")].toInt() >= 600);
    QVERIFY(horizon[QLatin1String("dead_rows_grew_by")].toInt() >= 600 - deadBefore.toInt());
    QVERIFY(horizon[QLatin1String("held")].toBool());

    // The text names it too, without its query.
    const auto text = runProgram(idemctlPath(),
        { QStringLiteral("storage"), QStringLiteral("--dsn"), QString::fromStdString(readerDsn),
            QStringLiteral("--held-after"), QStringLiteral("1"), QStringLiteral("--no-sample") });
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(text.out.contains(QStringLiteral("transaction horizon: HELD while dead rows grow")), qPrintable(text.out));
    QVERIFY2(text.out.contains(QStringLiteral("session pid %1 (").arg(pid)), qPrintable(text.out));
    QVERIFY(text.out.contains(QStringLiteral("application nightly-report")));
    QVERIFY(text.out.contains(QStringLiteral("query: hidden")));
    QVERIFY(!text.out.contains(QStringLiteral("report_rows")));

    // The incident snapshot keeps the holder, as the reader read it, in its JSON and its report.
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString out = dir.filePath(QStringLiteral("snap"));
        const auto run = runProgram(idemctlPath(),
            { QStringLiteral("snapshot"), QStringLiteral("export"), QStringLiteral("--dsn"),
                QString::fromStdString(readerDsn), QStringLiteral("--out"), out });
        QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
        QFile snapFile(out + QStringLiteral("/snapshot.json"));
        QVERIFY(snapFile.open(QIODevice::ReadOnly));
        const auto snap = QJsonDocument::fromJson(snapFile.readAll()).object()[QLatin1String("horizon")].toObject();
        const auto held = snap[QLatin1String("holders")].toArray().first().toObject();
        QCOMPARE(held[QLatin1String("pid")].toInt(), pid);
        QCOMPARE(held[QLatin1String("application")].toString(), QStringLiteral("nightly-report"));
        QVERIFY(held[QLatin1String("query")].isNull());
        QVERIFY(snap[QLatin1String("dead_total")].toInt() >= 600);
        QFile reportFile(out + QStringLiteral("/report.html"));
        QVERIFY(reportFile.open(QIODevice::ReadOnly));
        const QString html = QString::fromUtf8(reportFile.readAll());
        QVERIFY(html.contains(QStringLiteral("<h2>Transaction horizon: ")));
        QVERIFY(html.contains(QStringLiteral("nightly-report")));
        QVERIFY(!html.contains(QStringLiteral("report_rows")));
    }

    // The owner (pg_read_all_stats through superuser) sees the query and the client as well.
    {
        auto c = m_db->connect();
        pqxx::read_transaction tx(*c);
        const auto h = idem::readHorizon(tx, idem::SchemaName());
        QVERIFY(h.loginSeesAll);
        QVERIFY(!h.holders.empty());
        QCOMPARE(*h.holders.front().pid, pid);
        QVERIFY2(h.holders.front().query.find("report_rows") != std::string::npos, h.holders.front().query.c_str());
        QVERIFY(!h.holders.front().client.empty());
    }

    // Released: nothing held, the alert gone.
    report.commit();
    holder.reset();
    const auto after = storageJson(readerDsn, { QStringLiteral("--held-after"), QStringLiteral("1"), QStringLiteral("--no-sample") })
                           [QLatin1String("horizon")]
                               .toObject();
    for (const auto& x : after[QLatin1String("holders")].toArray())
        QVERIFY(x.toObject()[QLatin1String("pid")].toInt() != pid);
    QCOMPARE(after[QLatin1String("alert")].toBool(), false);
    // And VACUUM removes what it could not before.
    pqxx::nontransaction(*m_conn).exec("VACUUM idem.task_idempotency");
    QVERIFY(QTest::qWaitFor(
        [&] { return scalar(*m_conn, "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'idem.task_idempotency'::regclass") == "0"_b; },
        timeoutMs));
}

void TestHorizon::limitsAndRights()
{
    QCOMPARE(sqlstateOf(*m_conn, "SELECT * FROM idem.idem_horizon_holders(NULL)"), std::string("ID003"));
    QCOMPARE(sqlstateOf(*m_conn, "SELECT * FROM idem.idem_horizon_holders(0)"), std::string("ID003"));
    QCOMPARE(sqlstateOf(*m_conn, "SELECT * FROM idem.idem_horizon_holders(51)"), std::string("ID003"));
    QCOMPARE(sqlstateOf(*m_conn, "SELECT * FROM idem.idem_horizon_holders(50)"), std::string("ok"));
    auto reader = idem::connect(loginDsn(m_db->dsn(), readerLogin, readerPassword));
    QCOMPARE(sqlstateOf(*reader, "SELECT * FROM idem.idem_horizon_holders(5)"), std::string("ok"));
    auto worker = idem::connect(loginDsn(m_db->dsn(), workerLogin, workerPassword));
    QCOMPARE(sqlstateOf(*worker, "SELECT * FROM idem.idem_horizon_holders(5)"), std::string("42501"));
}

QTEST_GUILESS_MAIN(TestHorizon)
#include "tst_horizon.moc"
