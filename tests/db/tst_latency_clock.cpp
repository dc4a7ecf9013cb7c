#include <QtTest>

#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cstdlib>
#include <iterator>

#include <pqxx/pqxx>

#include "operations/latency.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"

using idem::test::operator""_b;
using idem::test::scalar;

namespace {
constexpr const char* workerRole = "idem_t_clock_worker";
constexpr const char* password = "pw-clock";
const idem::SchemaName schema;

constexpr int keys = 6; // tests/db/clockworker.cpp: 2 retried, 2 plain successes, 2 permanent failures
constexpr int runValues = 8; // attempts that ended: 2 x 2 + 2 + 2
constexpr int successes = 4;
constexpr std::int64_t workUs = 150'000; // what each attempt sleeps (monotonic, real)

// The worker's clock, in turn: a day ahead, then back 22 hours, then 3 days ahead, then 10 minutes
// ahead, and again. Never behind the real time: the test cluster's certificate may be minutes old,
// and a worker a day behind could not verify it (sslmode=verify-full), which is not what this test
// is about. Each claim is followed by a jump, so every attempt runs across one.
constexpr std::int64_t offsetsSeconds[] = { 86'400, 7'200, 259'200, 600 };

std::int64_t number(pqxx::connection& c, const std::string& sql) { return std::stoll(scalar(c, sql).toStdString()); }
} // namespace

// Issue #27: "a clock jump on a worker does not change a figure (server clock only)". A real worker
// process (idem-t-clockworker, idem_core alone) runs under Debian's faketime with a wall clock a day
// or more ahead that jumps back and forth while it holds each lease; its claims, completions and
// failures are then rolled up, and every run time, time to success and per-minute bucket must lie
// within what the server's own clock bounds: no value negative or a day long, no minute outside the
// run.
class TestLatencyClock : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void workerClockJumpsChangeNoFigure();

private:
    std::int64_t serverNowUs()
    {
        return number(*m_owner, "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint");
    }

    QString m_faketime;
    QString m_env;
    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
};

void TestLatencyClock::initTestCase()
{
    m_faketime = QStandardPaths::findExecutable(QStringLiteral("faketime"));
    if (m_faketime.isEmpty())
        QFAIL("faketime is not installed: this test runs a worker whose clock it moves with Debian's faketime "
              "package. Install it (apt-get install faketime; scripts/deps.sh test installs it) and run again.");
    m_env = QStandardPaths::findExecutable(QStringLiteral("env"));
    QVERIFY2(!m_env.isEmpty(), "env(1) not found");
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("latency_clock", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    idem::test::createLoginRole(workerRole, password, "idem_worker");
}

void TestLatencyClock::cleanupTestCase()
{
    m_owner.reset();
    m_db.reset();
}

void TestLatencyClock::workerClockJumpsChangeNoFigure()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString clockFile = dir.filePath(QStringLiteral("worker-clock"));
    std::size_t phase = 0;
    const auto setClock = [&](std::size_t p) {
        QFile f(clockFile);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QByteArray("+") + QByteArray::number(static_cast<qint64>(offsetsSeconds[p % std::size(offsetsSeconds)]))
            + "\n");
    };
    setClock(phase);

    const std::int64_t startUs = serverNowUs();
    QProcess worker;
    auto env = idem::test::cleanEnvironment();
    env.insert(QStringLiteral("IDEM_CLOCK_DSN"),
        QString::fromStdString(idem::test::loginDsn(m_db->dsn(), workerRole, password)));
    // faketime sets LD_PRELOAD and FAKETIME; without FAKETIME (which would take precedence) the
    // library reads the offset from FAKETIME_TIMESTAMP_FILE at every call, so the test can move the
    // clock under the running process. CLOCK_MONOTONIC stays true, as when NTP steps a clock.
    env.insert(QStringLiteral("FAKETIME_TIMESTAMP_FILE"), clockFile);
    env.insert(QStringLiteral("FAKETIME_NO_CACHE"), QStringLiteral("1"));
    env.insert(QStringLiteral("FAKETIME_DONT_FAKE_MONOTONIC"), QStringLiteral("1"));
    worker.setProcessEnvironment(env);
    worker.start(m_faketime,
        { QStringLiteral("-f"), QStringLiteral("+0"), m_env, QStringLiteral("-u"), QStringLiteral("FAKETIME"),
            idem::test::programFromEnvironment("IDEM_T_CLOCKWORKER_PATH"), QStringLiteral("clk"), QString::number(keys),
            QString::number(workUs / 1000) });
    QVERIFY2(worker.waitForStarted(10000), qPrintable(worker.errorString()));

    // The worker's clock against the server's at each step: it must be off by the offset in force
    // (within a minute), or faketime did not take and the test would prove nothing.
    int claims = 0;
    int resumes = 0;
    QStringList transcript;
    const auto checkClock = [&](std::int64_t clientUs, std::size_t p) {
        const std::int64_t skewUs = clientUs - serverNowUs();
        const std::int64_t wantUs = offsetsSeconds[p % std::size(offsetsSeconds)] * 1'000'000;
        QVERIFY2(std::llabs(skewUs - wantUs) < 60'000'000,
            qPrintable(QStringLiteral("the worker's clock is %1 s off the server's, not %2 s: is faketime working?\n%3")
                           .arg(skewUs / 1e6)
                           .arg(wantUs / 1e6)
                           .arg(transcript.join(QLatin1Char('\n')))));
    };
    while (worker.state() != QProcess::NotRunning || worker.canReadLine()) {
        if (!worker.canReadLine() && !worker.waitForReadyRead(30000) && !worker.canReadLine())
            break;
        while (worker.canReadLine()) {
            const QString line = QString::fromUtf8(worker.readLine()).trimmed();
            transcript << line;
            const QStringList f = line.split(QLatin1Char(' '));
            if (f.value(0) == QLatin1String("claimed")) {
                checkClock(f.value(3).toLongLong(), phase);
                setClock(++phase); // the jump, while the worker holds the lease
                worker.write("go\n");
                ++claims;
            } else if (f.value(0) == QLatin1String("resumed")) {
                checkClock(f.value(1).toLongLong(), phase);
                ++resumes;
            }
            if (QTest::currentTestFailed()) {
                worker.kill();
                worker.waitForFinished();
                return;
            }
        }
    }
    worker.waitForFinished(30000);
    const QString err = QString::fromUtf8(worker.readAllStandardError());
    QVERIFY2(worker.exitStatus() == QProcess::NormalExit && worker.exitCode() == 0,
        qPrintable(transcript.join(QLatin1Char('\n')) + QLatin1Char('\n') + err));
    QCOMPARE(claims, runValues);
    QCOMPARE(resumes, runValues);
    const std::int64_t endUs = serverNowUs();
    const std::int64_t spanUs = endUs - startUs;
    QVERIFY(spanUs < 10LL * 60 * 1'000'000); // the bounds below mean something only if the run was short

    // What the server stored, each value within the server's bounds: every time between the run's
    // start and end by its clock; every attempt at least the work it slept, at most the whole run.
    const std::string bounds = "BETWEEN to_timestamp(" + std::to_string(startUs) + " / 1e6) AND to_timestamp("
        + std::to_string(endUs) + " / 1e6)";
    QCOMPARE(number(*m_owner,
                 "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'clock:charge:clk-%'"
                 " AND created_at "
                     + bounds + " AND updated_at " + bounds + " AND attempt_started_at " + bounds),
        std::int64_t(keys));
    QCOMPARE(number(*m_owner,
                 "SELECT count(*) FROM idem.task_idempotency t, jsonb_array_elements(t.errors) e"
                 " WHERE (e->>'at')::timestamptz "
                     + bounds),
        std::int64_t(runValues - successes));
    const auto values = [&](const std::string& sql) {
        pqxx::read_transaction t(*m_owner);
        std::vector<std::int64_t> out;
        for (const auto& row : t.exec(sql))
            out.push_back(row[0].as<std::int64_t>());
        return out;
    };
    std::vector<std::int64_t> runs = values(
        "SELECT round(extract(epoch FROM updated_at - attempt_started_at) * 1000000)::bigint FROM idem.task_idempotency"
        " WHERE status = 'succeeded' UNION ALL SELECT (e->>'run_us')::bigint FROM idem.task_idempotency t,"
        " jsonb_array_elements(t.errors) e");
    const std::vector<std::int64_t> tts
        = values("SELECT round(extract(epoch FROM updated_at - created_at) * 1000000)::bigint"
                 " FROM idem.task_idempotency WHERE status = 'succeeded'");
    QCOMPARE(static_cast<int>(runs.size()), runValues);
    QCOMPARE(static_cast<int>(tts.size()), successes);
    std::int64_t runTotal = 0;
    for (const auto us : runs) {
        QVERIFY2(
            us >= workUs && us <= spanUs, qPrintable(QStringLiteral("run time %1 us, run %2 us").arg(us).arg(spanUs)));
        runTotal += us;
    }
    for (const auto us : tts)
        QVERIFY2(us >= workUs && us <= spanUs, qPrintable(QStringLiteral("time to success %1 us").arg(us)));

    // The roll-up: move every stored time 10 minutes back (durations kept) so that the run's minutes
    // are due, fold them, and read the figures.
    {
        pqxx::work w(*m_owner);
        w.exec("UPDATE idem.task_idempotency SET created_at = created_at - interval '10 minutes',"
               " updated_at = updated_at - interval '10 minutes',"
               " attempt_started_at = attempt_started_at - interval '10 minutes',"
               " errors = (SELECT COALESCE(jsonb_agg(jsonb_set(e, '{at}', to_jsonb((e->>'at')::timestamptz"
               "            - interval '10 minutes'))), '[]'::jsonb) FROM jsonb_array_elements(errors) e)");
        w.exec("UPDATE idem.idem_latency_state SET folded_to = date_trunc('minute', now()) - interval '13 minutes'");
        w.commit();
    }
    QVERIFY(idem::rollupLatency(*m_owner, schema) >= 3);
    const std::int64_t shiftUs = 600'000'000;
    const auto minuteOf = [](std::int64_t us) { return us - (us % 60'000'000); };
    // Every minute by the server's clock: within the run's own minutes, none a day away.
    QCOMPARE(number(*m_owner,
                 "SELECT count(*) FROM idem.idem_latency WHERE bucket NOT BETWEEN to_timestamp("
                     + std::to_string(minuteOf(startUs - shiftUs)) + " / 1e6) AND to_timestamp("
                     + std::to_string(minuteOf(endUs - shiftUs)) + " / 1e6)"),
        std::int64_t(0));
    // Every value counted, none dropped as negative, and the run times' sum exact.
    QCOMPARE(scalar(*m_owner,
                 "SELECT string_agg(kind || '=' || n, ',' ORDER BY kind) FROM (SELECT kind, sum(n) AS n"
                 " FROM idem.idem_latency GROUP BY kind) k"),
        QStringLiteral("attempts=%1,run=%2,tts=%3").arg(successes).arg(runValues).arg(successes).toUtf8());
    QCOMPARE(number(*m_owner, "SELECT round(sum(total))::bigint FROM idem.idem_latency WHERE kind = 'run'"), runTotal);
    QCOMPARE(scalar(*m_owner,
                 "SELECT string_agg(s || ':' || c, ',' ORDER BY s) FROM (SELECT s, sum(c) AS c"
                 " FROM idem.idem_latency, unnest(slots, counts) AS u(s, c) WHERE kind = 'attempts' GROUP BY s) a"),
        "1:2,2:2"_b);

    idem::LatencyQuery q;
    q.minutes = 30;
    const auto report = idem::readLatency(*m_owner, schema, q);
    QCOMPARE(report.histograms.size(), std::size_t(3));
    for (const auto& h : report.histograms) {
        if (h.kind == idem::LatencyKind::Attempts) {
            QCOMPARE(h.p50, 1.0);
            QCOMPARE(h.p99, 2.0);
            continue;
        }
        QCOMPARE(h.count, std::int64_t(h.kind == idem::LatencyKind::Run ? runValues : successes));
        // Within the slots' 7.5 % of what the server's clock bounds (milliseconds).
        for (const double p : { h.p50, h.p95, h.p99, h.mean })
            QVERIFY2(p >= workUs / 1000.0 * 0.925 && p <= spanUs / 1000.0 * 1.075,
                qPrintable(QStringLiteral("%1: %2 ms outside %3 to %4 ms")
                               .arg(QString::fromLatin1(idem::latencyKindName(h.kind)))
                               .arg(p)
                               .arg(workUs / 1000.0)
                               .arg(spanUs / 1000.0)));
    }
}

QTEST_GUILESS_MAIN(TestLatencyClock)
#include "tst_latency_clock.moc"
