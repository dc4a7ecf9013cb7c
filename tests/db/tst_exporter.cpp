#include <QtTest>

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QUrl>
#include <QUrlQuery>
#include <algorithm>
#include <cmath>
#include <functional>
#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/counters.h"
#include "core/runner.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/countingproxy.h"
#include "tests/support/exporterprocess.h"
#include "tests/support/pgservers.h"
#include "tests/support/testdb.h"

// `idemctl exporter` as an operator runs it: scraped by a real Prometheus (Debian's, started
// here on loopback with its own port and data directory), every series equal to the number the
// fixture planted, written out by hand,
// the shipped alert rule firing when expired leases are planted; scrapes that never reach the
// database (counted by a relay); a database it cannot read served as idem_up 0, with the reason
// and never the password on stderr.
namespace {
constexpr int timeoutMs = 20000;
const char* const readerLogin = "idem_exporter_reader";
const char* const readerPassword = "exporter-reader-pw-7f3a";

quint16 freePort()
{
    QTcpServer s;
    s.listen(QHostAddress::LocalHost, 0);
    return s.serverPort();
}

using idem::test::httpGet;
using idem::test::sampleIn;

// Latency planted in one closed minute, operation 'lat' of tenants tl and tm (the exporter sums
// tenants): succeeded keys with their run time, time to success, attempts and, for some, the run
// time of an earlier failed attempt; and keys whose only attempt failed. Microseconds.
struct PlantedSuccess {
    const char* tenant;
    qint64 runUs;
    qint64 ttsUs;
    int attempts;
    qint64 earlierRunUs; // 0: none
};
const PlantedSuccess plantedSuccesses[] = {
    { "tl", 1500, 1500, 1, 0 },
    { "tm", 1770, 1770, 1, 0 }, // the last slot under le 0.00177827941003892
    { "tl", 1790, 1790, 1, 0 }, // the first slot over it
    { "tl", 4100, 4100, 1, 0 },
    { "tm", 7000, 7000, 1, 0 },
    { "tl", 12000, 12000, 1, 0 },
    { "tl", 15500, 15500, 1, 0 },
    { "tm", 33000, 33000, 1, 0 },
    { "tl", 48000, 48000, 1, 0 },
    { "tl", 90000, 90000, 1, 0 },
    { "tm", 120000, 240000, 1, 0 },
    { "tl", 250000, 2000000, 2, 0 }, // a takeover
    { "tl", 640000, 3300000, 2, 0 },
    { "tm", 1200000, 31000000, 3, 800 },
    { "tl", 2500000, 45000000, 6, 350000 },
    { "tl", 4400000, 650000000, 12, 0 },
};
const std::pair<const char*, qint64> plantedFailures[] = { { "tm", 5000 }, { "tl", 9000000 }, { "tl", 61000000 } };

// Every run time planted (each attempt), ascending.
std::vector<qint64> plantedRunUs()
{
    std::vector<qint64> v;
    for (const auto& p : plantedSuccesses) {
        v.push_back(p.runUs);
        if (p.earlierRunUs)
            v.push_back(p.earlierRunUs);
    }
    for (const auto& [tenant, run] : plantedFailures)
        v.push_back(run);
    std::sort(v.begin(), v.end());
    return v;
}

// The histogram's le bounds, as the exporter must write them: 10^(k/4) ms, 1 ms to 100000 s.
double durationBound(int k) { return std::pow(10.0, k / 4.0 - 3); }
constexpr int durationBounds = 33;

// One histogram series' buckets in exposition text, in order: le as written, cumulative count.
QList<std::pair<QString, double>> bucketsIn(const QByteArray& text, const char* name)
{
    const QByteArray prefix = QByteArray(name) + "_bucket{schema=\"idem\",operation=\"lat\",le=\"";
    QList<std::pair<QString, double>> out;
    for (const auto& line : text.split('\n')) {
        if (!line.startsWith(prefix))
            continue;
        const QByteArray rest = line.mid(prefix.size());
        const auto end = rest.indexOf("\"} ");
        out.append({ QString::fromUtf8(rest.left(end)), rest.mid(end + 3).toDouble() });
    }
    return out;
}

// What `promtool check metrics` prints about an exposition: nothing when every family passes its
// lint (names, types, units, HELP), or each problem on a line (issue 40 item 10: it refused
// idem_counter_flushes_refused, a gauge whose name says counter).
QString promtoolSays(const QByteArray& exposition)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral("promtool"), { QStringLiteral("check"), QStringLiteral("metrics") });
    if (!p.waitForStarted(10000))
        return QStringLiteral("promtool did not start: install Debian's prometheus (scripts/deps.sh test)");
    p.write(exposition);
    p.closeWriteChannel();
    if (!p.waitForFinished(30000)) {
        p.kill();
        p.waitForFinished();
        return QStringLiteral("promtool did not finish in 30 s");
    }
    const QString out = QString::fromUtf8(p.readAll()).trimmed();
    if (out.isEmpty() && (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0))
        return QStringLiteral("promtool exited %1 and said nothing").arg(p.exitCode());
    return out;
}

// The exporter, scraped over Qt's sockets.
class ExporterProcess : public idem::test::ExporterProcessBase {
public:
    QByteArray scrape() const { return httpGet(port(), QStringLiteral("/metrics")).body; }
    // Scrapes until the sample has the value (or, atLeast, more), processing events meanwhile
    // (a relay may need them).
    bool waitFor(const QString& series, double value, bool atLeast = false)
    {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < timeoutMs) {
            const double v = sampleIn(scrape(), series);
            if (v == value || (atLeast && v > value))
                return true;
            QTest::qWait(100);
        }
        return false;
    }
};
} // namespace

class TestExporter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void prometheusScrapesWhatSqlSays();
    void labelsByTenantAndOperation();
    void pausesAndPausedClaims();
    void pauseReadFailureKeepsTheRest();
    void scrapesNeverReachTheDatabase();
    void unreadableDatabaseKeepsServing();
    void readOnlyServerAndLostConnectionInWords();
    void usageErrors();
    void nodeAndTimeline();
    void throughAPoolerLeavesNothing();
    void latencyHistogramsCountEachMinuteOnce();
    void latencyWithoutTheLatencySchema();

private:
    void latencyDueAgain();
    void addCounter(const char* tenant, const char* operation, const char* outcome, int n, int minutesBack = 0);
    std::string readerDsn() const { return idem::test::loginDsn(m_db->dsn(), readerLogin, readerPassword); }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    qint64 m_latencyMinuteUs = 0; // the minute the latency is planted in
};

// Sets the roll-up back before the planted minute (as the owner), so that the next exporter,
// which counts what is folded after it starts, folds and counts it.
void TestExporter::latencyDueAgain()
{
    pqxx::work w(*m_conn);
    const auto from = "to_timestamp(0) + ($1::bigint - 60000000) * interval '1 microsecond'";
    w.exec_params(std::string("DELETE FROM idem.idem_latency WHERE bucket >= ") + from, m_latencyMinuteUs);
    w.exec_params(std::string("UPDATE idem.idem_latency_state SET folded_to = ") + from, m_latencyMinuteUs);
    w.commit();
}

// Through add_counters(), the workers' flush: the detailed rows (the outcome counters' source)
// and the totals (the window figures' source) alike.
void TestExporter::addCounter(const char* tenant, const char* operation, const char* outcome, int n, int minutesBack)
{
    pqxx::work w(*m_conn);
    w.exec_params("SELECT idem.add_counters(jsonb_build_array(jsonb_build_object('m',"
                  " extract(epoch FROM date_trunc('minute', now()) - make_interval(mins => $5))::bigint,"
                  " 't', $1::text, 'o', $2::text, 'w', $3::text, 'n', $4::int)))",
        tenant, operation, outcome, n, minutesBack);
    w.commit();
}

void TestExporter::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("exporter", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), true });
    // The exporter runs as a read-only login, as the packaged unit's role would.
    idem::test::createLoginRole(readerLogin, readerPassword, "idem_reader");

    pqxx::work w(*m_conn);
    // Rows of every state, with the ones that tell a figure's definition from a near miss (the
    // operator's guide says what each figure is): n1 processing with no lease at all (expired:
    // the next claim takes it over); x2, u1 out of attempts (max 5) but still waiting to retry;
    // f4, x1 failed hours ago (failed, never long-unfinished: not in flight); x4 failed with no
    // error class (failed and not permanent: exhausted).
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until,
                                           attempts, error_class, next_attempt_at, created_at, updated_at)
        SELECT k, 'v1:' || repeat('a', 64), st,
               CASE WHEN st = 'processing' THEN gen_random_uuid() END,
               CASE WHEN st = 'processing' THEN now() + lease END, att, ec,
               CASE WHEN st = 'retryable_failed' THEN now() + interval '1 minute' END, now() - age, now() - age
        FROM (VALUES ('ta:charge:p1', 'processing', interval '1 hour', 1, NULL, interval '0'),
                     ('ta:charge:p2', 'processing', interval '1 hour', 1, NULL, interval '0'),
                     ('tb:refund:p3', 'processing', interval '1 hour', 2, NULL, interval '2 hours'),
                     ('ta:charge:e1', 'processing', interval '-1 minute', 2, NULL, interval '0'),
                     ('tb:refund:n1', 'processing', NULL, 1, NULL, interval '3 hours'),
                     ('ta:charge:r1', 'retryable_failed', NULL, 1, 'retryable', interval '90 minutes'),
                     ('tb:refund:r2', 'retryable_failed', NULL, 1, 'unknown', interval '0'),
                     ('ta:charge:x2', 'retryable_failed', NULL, 5, 'retryable', interval '0'),
                     ('tb:refund:u1', 'retryable_failed', NULL, 6, 'unknown', interval '0'),
                     ('ta:charge:f1', 'failed', NULL, 1, 'permanent', interval '0'),
                     ('tb:refund:f4', 'failed', NULL, 1, 'permanent', interval '5 hours'),
                     ('ta:charge:x1', 'failed', NULL, 5, 'retryable', interval '4 hours'),
                     ('tb:refund:x3', 'failed', NULL, 5, 'unknown', interval '0'),
                     ('ta:charge:x4', 'failed', NULL, 5, NULL, interval '0'))
            AS v(k, st, lease, att, ec, age)
    )");
    w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts)"
           " SELECT 'tc:ship:s' || g, 'v1:' || repeat('b', 64), 'succeeded', '{}', 1 FROM generate_series(1, 7) g");
    w.exec("INSERT INTO idem.task_idempotency_audit (idempotency_key, action, reason, db_role, os_user,"
           " client_host, before_image, after_image, prev_hash, entry_hash)"
           " SELECT 'ta:charge:f1', 'requeue', 'planted ' || g, 'owner', 'tester', '[local]', '{}', '{}',"
           "        repeat('0', 64), encode(sha256(('entry ' || g)::bytea), 'hex')"
           " FROM generate_series(1, 4) g");
    // The planted latency (see plantedSuccesses), in the minute before last: closed for a minute,
    // so due to be folded. Times by the server's clock, as claim(), complete() and fail() set them.
    m_latencyMinuteUs = w.exec("SELECT (extract(epoch FROM date_trunc('minute', now()) - interval '2 minutes')"
                               " * 1000000)::bigint")[0][0]
                            .as<qint64>();
    const auto at = [this](int second) { return m_latencyMinuteUs + second * 1000000LL; };
    int n = 0;
    for (const auto& p : plantedSuccesses) {
        ++n;
        w.exec_params(
            "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts,"
            " created_at, attempt_started_at, updated_at, errors)"
            " SELECT $1, 'v1:' || repeat('e', 64), 'succeeded', '{}', $2, u - $5::bigint * us,"
            "        u - $4::bigint * us, u,"
            "        CASE WHEN $6::bigint = 0 THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object("
            "            'attempt', 1, 'at', e, 'class', 'retryable', 'message', 'planted', 'run_us', $6::bigint))"
            "        END"
            " FROM (SELECT interval '1 microsecond' AS us) i,"
            " LATERAL (SELECT to_timestamp(0) + $3::bigint * i.us AS u, to_timestamp(0) + $7::bigint * i.us AS e) t",
            std::string(p.tenant) + ":lat:s" + std::to_string(n), p.attempts, at(n), p.runUs, p.ttsUs, p.earlierRunUs,
            at(30));
    }
    for (const auto& [tenant, run] : plantedFailures) {
        ++n;
        w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, error_class,"
                      " attempt_started_at, updated_at, errors)"
                      " SELECT $1, 'v1:' || repeat('e', 64), 'failed', 1, 'permanent', u - $3::bigint * us, u,"
                      "        jsonb_build_array(jsonb_build_object('attempt', 1, 'at', u, 'class', 'permanent',"
                      "            'message', 'planted', 'run_us', $3::bigint))"
                      " FROM (SELECT interval '1 microsecond' AS us) i,"
                      " LATERAL (SELECT to_timestamp(0) + $2::bigint * i.us AS u) t",
            std::string(tenant) + ":lat:f" + std::to_string(n), at(n), run);
    }
    w.commit();
    pqxx::nontransaction(*m_conn).exec("ANALYZE idem.task_idempotency");
    // Counted before the exporter starts: its counters begin at 0 and count only what follows;
    // its window figures (the last 15 minutes) take them all but those of 20 minutes ago.
    addCounter("ta", "charge", "acquired", 10);
    addCounter("ta", "charge", "succeeded", 8);
    addCounter("ta", "charge", "replayed", 3);
    addCounter("tb", "refund", "in_progress", 2);
    addCounter("ta", "charge", "conflict", 1);
    addCounter("ta", "charge", "reacquired_lease", 4);
    addCounter("tb", "refund", "reacquired_retry", 2);
    addCounter("ta", "charge", "retry_failed", 5);
    addCounter("ta", "charge", "failed_retryable", 6);
    addCounter("tb", "refund", "stale_token", 7);
    addCounter("tb", "refund", "acquired", 20, 3);
    addCounter("tb", "refund", "conflict", 9, 3);
    addCounter("ta", "charge", "acquired", 1000, 20);
    addCounter("ta", "charge", "conflict", 500, 20);
    addCounter("ta", "charge", "stale_token", 300, 20);
}

void TestExporter::cleanupTestCase()
{
    m_conn.reset();
    m_db.reset();
}

void TestExporter::prometheusScrapesWhatSqlSays()
{
    const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
    QVERIFY2(!prometheus.isEmpty(), "no prometheus on PATH: install Debian's prometheus (scripts/deps.sh test)");

    latencyDueAgain();
    ExporterProcess exporter;
    QVERIFY2(exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(readerDsn()),
                 QStringLiteral("--interval"), QStringLiteral("500ms") }),
        qPrintable(exporter.err()));
    QVERIFY2(exporter.waitFor(QStringLiteral("idem_up{schema=\"idem\"}"), 1), qPrintable(exporter.err()));
    // After the exporter's first reading: what its counters must show (acquired 5, stale_token 2).
    addCounter("ta", "charge", "acquired", 4);
    addCounter("tb", "refund", "acquired", 1);
    addCounter("tb", "refund", "stale_token", 2);

    // Two pauses in force without an end (planted as the owner: idem_pause() cannot backdate):
    // tz:old set two hours ago, past IdemPauseOverdue's hour; tz:new just now.
    {
        pqxx::work w(*m_conn);
        w.exec("INSERT INTO idem.idem_pauses (tenant, operation, reason, paused_by, paused_at, changed_at, until,"
               " audit_id) VALUES ('tz', 'old', 'planted', 'owner (test)', now() - interval '2 hours',"
               " now() - interval '2 hours', NULL, 0), ('tz', 'new', 'planted', 'owner (test)', now(), now(), NULL, 0)");
        w.commit();
    }
    const auto removePlanted = qScopeGuard([this] {
        pqxx::nontransaction(*m_conn).exec("DELETE FROM idem.idem_pauses WHERE tenant = 'tz'");
    });

    // Prometheus on loopback, its own port and data directory; the shipped rules with their
    // `for:` and ranges shortened to seconds so the test takes seconds.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile shipped(qEnvironmentVariable("IDEM_SOURCE_DIR") + QStringLiteral("/packaging/prometheus/idem-alerts.yml"));
    QVERIFY2(shipped.open(QIODevice::ReadOnly), qPrintable(shipped.fileName()));
    QString rules = QString::fromUtf8(shipped.readAll());
    rules.replace(QRegularExpression(QStringLiteral("for: \\d+m")), QStringLiteral("for: 1s"));
    rules.replace(QStringLiteral("[10m]"), QStringLiteral("[3s]"))
        .replace(QStringLiteral("[15m]"), QStringLiteral("[5s]"))
        .replace(QStringLiteral("idem_horizon_age_seconds > 300"), QStringLiteral("idem_horizon_age_seconds > 2"));
    QFile rulesFile(dir.filePath(QStringLiteral("idem-alerts.yml")));
    QVERIFY(rulesFile.open(QIODevice::WriteOnly));
    rulesFile.write(rules.toUtf8());
    rulesFile.close();
    QFile config(dir.filePath(QStringLiteral("prometheus.yml")));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(QStringLiteral("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                "rule_files: [%1]\nscrape_configs:\n  - job_name: idem\n"
                                "    static_configs: [{ targets: ['127.0.0.1:%2'] }]\n")
                     .arg(rulesFile.fileName())
                     .arg(exporter.port())
                     .toUtf8());
    config.close();
    const quint16 promPort = freePort();
    QProcess prom;
    prom.setProcessChannelMode(QProcess::MergedChannels);
    prom.start(prometheus,
        { QStringLiteral("--config.file=") + config.fileName(),
            QStringLiteral("--storage.tsdb.path=") + dir.filePath(QStringLiteral("data")),
            QStringLiteral("--web.listen-address=127.0.0.1:%1").arg(promPort), QStringLiteral("--log.level=warn") });
    const auto stopPrometheus = qScopeGuard([&] {
        prom.terminate();
        if (!prom.waitForFinished(10000))
            prom.kill();
        prom.waitForFinished();
    });
    const auto log = [&] { return QString::fromUtf8(prom.readAll()); };

    const auto query = [&](const QString& expr) {
        QUrlQuery q;
        q.addQueryItem(QStringLiteral("query"), expr);
        const auto r = httpGet(promPort, QStringLiteral("/api/v1/query?") + q.query(QUrl::FullyEncoded));
        return QJsonDocument::fromJson(r.body)
            .object()[QLatin1String("data")]
            .toObject()[QLatin1String("result")]
            .toArray();
    };
    const auto valueOf = [&](const QString& expr) {
        const auto result = query(expr);
        return result.size() == 1 ? result[0].toObject()[QLatin1String("value")].toArray()[1].toString().toDouble()
                                  : qQNaN();
    };
    const auto waitUntil = [&](const std::function<bool()>& ok) {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < timeoutMs) {
            if (ok())
                return true;
            QTest::qWait(250);
        }
        return false;
    };

    QVERIFY2(waitUntil([&] { return httpGet(promPort, QStringLiteral("/-/ready")).status == 200; }), qPrintable(log()));
    // Two scrapes of the exporter, as Prometheus stored them.
    QVERIFY2(
        waitUntil([&] { return valueOf(QStringLiteral("count_over_time(idem_up[1m])")) >= 2; }), qPrintable(log()));
    QCOMPARE(valueOf(QStringLiteral("up{job=\"idem\"}")), 1.0);

    // Each series against the number planted (polled: the exporter reads every 500 ms). The rows
    // by key; the window's counters: acquired 10 + 20 (3 min back) + 4 + 1 after the start,
    // duplicates replayed 3 + in progress 2 + conflict 1 + 9; the minute 20 min back is outside.
    const std::pair<const char*, double> planted[] = {
        { "idem_processing", 3 }, // p1 p2 p3
        { "idem_expired_leases", 2 }, // e1 n1 (no lease at all)
        { "idem_retryable_failed", 4 }, // r1 r2 x2 u1 (x2, u1 out of attempts)
        { "idem_uncertain", 2 }, // r2 u1
        { "idem_failed_permanent", 5 }, // f1 f4, and the planted latency's three failures
        { "idem_failed_exhausted", 3 }, // x1 x3 x4 (no class)
        { "idem_long_unfinished", 3 }, // p3 n1 r1; not the old failed f4, x1
        { "idem_claims", 50 }, // 35 acquired + 15 duplicates
        { "idem_duplicate_ratio", 15.0 / 50.0 },
        { "idem_retries", 6 }, // reacquired_lease 4 + reacquired_retry 2
        { "idem_failed_retries", 5 }, // retry_failed, not the 6 failed_retryable
        { "idem_digest_conflicts", 10 },
        { "idem_stale_token_rejections", 9 }, // 7 + 2
        { "idem_total_rows_estimate", 40 }, // 14 + 7 succeeded + 19 of the planted latency, analysed
        { "idem_audit_head_id", 4 },
        { "idem_in_recovery", 0 },
        // Counted since the exporter started: what was added after its first reading, and 0
        // for every other outcome.
        { "idem_outcomes_total{outcome=\"acquired\"}", 5 },
        { "idem_outcomes_total{outcome=\"stale_token\"}", 2 },
        { "idem_outcomes_total{outcome=\"reacquired_lease\"}", 0 },
        { "idem_outcomes_total{outcome=\"reacquired_retry\"}", 0 },
        { "idem_outcomes_total{outcome=\"replayed\"}", 0 },
        { "idem_outcomes_total{outcome=\"in_progress\"}", 0 },
        { "idem_outcomes_total{outcome=\"conflict\"}", 0 },
        { "idem_outcomes_total{outcome=\"retry_later\"}", 0 },
        { "idem_outcomes_total{outcome=\"rejected_failed\"}", 0 },
        { "idem_outcomes_total{outcome=\"succeeded\"}", 0 },
        { "idem_outcomes_total{outcome=\"failed_retryable\"}", 0 },
        { "idem_outcomes_total{outcome=\"failed_permanent\"}", 0 },
        { "idem_outcomes_total{outcome=\"failed_unknown\"}", 0 },
        { "idem_outcomes_total{outcome=\"exhausted\"}", 0 },
        { "idem_outcomes_total{outcome=\"retry_failed\"}", 0 },
        { "idem_outcomes_total{outcome=\"paused\"}", 0 },
        // tz:old and tz:new, planted below before Prometheus started.
        { "idem_pauses_active", 2 },
        { "idem_pause_active{tenant=\"tz\",operation=\"old\"}", 1 },
        { "idem_pause_active{tenant=\"tz\",operation=\"new\"}", 1 },
        // Schema v31, the window's takeovers and late calls refused per operation.
        { "idem_fencing_takeovers{operation=\"charge\"}", 4 },
        { "idem_fencing_refused{operation=\"refund\"}", 9 }, // 7 + 2
        { "idem_fencing_refused{operation=\"charge\"}", 0 }, // its 300 are 20 minutes back
    };
    for (const auto& [series, value] : planted) {
        const QString expr = QString::fromLatin1(series);
        const double expected = value;
        QVERIFY2(waitUntil([&] { return valueOf(expr) == expected; }),
            qPrintable(
                QStringLiteral("%1 is %2 in Prometheus, planted %3").arg(expr).arg(valueOf(expr)).arg(expected)));
    }
    // The oldest processing row (n1) was first seen three hours before the fixture ran.
    const double oldest = valueOf(QStringLiteral("idem_oldest_processing_age_seconds"));
    QVERIFY2(oldest >= 3 * 3600 && oldest < 3 * 3600 + 600, qPrintable(QString::number(oldest)));
    QVERIFY(query(QStringLiteral("idem_replication_lag_seconds")).isEmpty()); // a primary: no sample
    // The types Prometheus learnt from the TYPE lines.
    const auto meta = QJsonDocument::fromJson(httpGet(promPort, QStringLiteral("/api/v1/metadata")).body)
                          .object()[QLatin1String("data")]
                          .toObject();
    QCOMPARE(meta[QLatin1String("idem_outcomes_total")].toArray()[0].toObject()[QLatin1String("type")].toString(),
        QStringLiteral("counter"));
    QCOMPARE(meta[QLatin1String("idem_processing")].toArray()[0].toObject()[QLatin1String("type")].toString(),
        QStringLiteral("gauge"));

    // The run-time histogram as Prometheus reads it: histogram_quantile's p95 lies in the bucket
    // (10^(k/4) ms bounds) that holds the exact p95 (nearest rank) of the planted run times.
    const auto runs = plantedRunUs();
    QVERIFY2(waitUntil([&] {
        return valueOf(QStringLiteral("idem_task_run_seconds_count{operation=\"lat\"}")) == double(runs.size());
    }),
        qPrintable(log()));
    QCOMPARE(meta[QLatin1String("idem_task_run_seconds")].toArray()[0].toObject()[QLatin1String("type")].toString(),
        QStringLiteral("histogram"));
    // Every family the exporter serves (figures, counters, pauses, histograms, its own) passes
    // promtool's lint, as an operator's CI would check it.
    {
        const QByteArray body = exporter.scrape();
        QVERIFY(body.contains("idem_task_run_seconds_bucket") && body.contains("idem_pause_active{"));
        const QString said = promtoolSays(body);
        QVERIFY2(said.isEmpty(), qPrintable(said));
    }
    const double exactP95 = double(runs[size_t(std::ceil(0.95 * double(runs.size()))) - 1]) / 1e6;
    int k = 0;
    while (durationBound(k) < exactP95)
        ++k;
    const double lower = k == 0 ? 0.0 : durationBound(k - 1), upper = durationBound(k);
    const double p95 = valueOf(
        QStringLiteral("histogram_quantile(0.95, sum by (le) (idem_task_run_seconds_bucket{operation=\"lat\"}))"));
    QVERIFY2(p95 > lower && p95 <= upper * (1 + 1e-12),
        qPrintable(QStringLiteral("histogram_quantile says %1 s; the exact p95 %2 s is in (%3, %4]")
                       .arg(p95)
                       .arg(exactP95)
                       .arg(lower)
                       .arg(upper)));

    // Two expired leases, under the rule's 5, so it is quiet; then six more leases run out and it fires.
    const auto firing = [&](const char* alert) {
        const auto alerts = QJsonDocument::fromJson(httpGet(promPort, QStringLiteral("/api/v1/alerts")).body)
                                .object()[QLatin1String("data")]
                                .toObject()[QLatin1String("alerts")]
                                .toArray();
        for (const auto& a : alerts) {
            const auto o = a.toObject();
            if (o[QLatin1String("labels")].toObject()[QLatin1String("alertname")].toString() == QLatin1String(alert)
                && o[QLatin1String("state")].toString() == QLatin1String("firing"))
                return o;
        }
        return QJsonObject();
    };
    // The alerting rule as Prometheus last evaluated it (/api/v1/rules): its lastEvaluation, state
    // and health.
    const auto rule = [&](const char* alert) {
        const auto groups = QJsonDocument::fromJson(httpGet(promPort, QStringLiteral("/api/v1/rules?type=alert")).body)
                                .object()[QLatin1String("data")]
                                .toObject()[QLatin1String("groups")]
                                .toArray();
        for (const auto& g : groups)
            for (const auto& r : g.toObject()[QLatin1String("rules")].toArray())
                if (r.toObject()[QLatin1String("name")].toString() == QLatin1String(alert))
                    return r.toObject();
        return QJsonObject();
    };
    // Quiet, not by a fixed wait: Prometheus holds the 2 (above), then evaluates the rule twice
    // more (each evaluation a new lastEvaluation), and it is still inactive, not even pending.
    QString seen = rule("IdemExpiredLeasesPilingUp")[QLatin1String("lastEvaluation")].toString();
    for (int evaluation = 0; evaluation < 2; ++evaluation) {
        QVERIFY2(waitUntil([&] {
            const QString at = rule("IdemExpiredLeasesPilingUp")[QLatin1String("lastEvaluation")].toString();
            if (at == seen)
                return false;
            seen = at;
            return true;
        }),
            qPrintable(QStringLiteral("the rule was not evaluated again after %1\n%2").arg(seen, log())));
    }
    QCOMPARE(rule("IdemExpiredLeasesPilingUp")[QLatin1String("health")].toString(), QStringLiteral("ok"));
    QCOMPARE(rule("IdemExpiredLeasesPilingUp")[QLatin1String("state")].toString(), QStringLiteral("inactive"));
    QVERIFY(firing("IdemExpiredLeasesPilingUp").isEmpty());
    {
        pqxx::work w(*m_conn);
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until,"
               " attempts, created_at, updated_at)"
               " SELECT 'tc:ship:e' || g, 'v1:' || repeat('c', 64), 'processing', gen_random_uuid(),"
               "        now() - interval '1 minute', 1, now(), now() FROM generate_series(1, 6) g");
        w.commit();
    }
    QVERIFY2(waitUntil([&] { return !firing("IdemExpiredLeasesPilingUp").isEmpty(); }),
        qPrintable(QStringLiteral("never fired; idem_expired_leases = %1\n%2")
                       .arg(valueOf(QStringLiteral("idem_expired_leases")))
                       .arg(log())));
    const auto alert = firing("IdemExpiredLeasesPilingUp");
    QCOMPARE(alert[QLatin1String("labels")].toObject()[QLatin1String("schema")].toString(), QStringLiteral("idem"));
    QVERIFY(alert[QLatin1String("annotations")].toObject()[QLatin1String("runbook_url")].toString().endsWith(
        QLatin1String("#idemexpiredleasespilingup")));
    QCOMPARE(valueOf(QStringLiteral("idem_expired_leases")), 2.0 + 6.0);
    // The pause set two hours ago with no end is overdue; the one just set is not.
    const auto firingScopes = [&](const char* name) {
        QStringList scopes;
        const auto alerts = QJsonDocument::fromJson(httpGet(promPort, QStringLiteral("/api/v1/alerts")).body)
                                .object()[QLatin1String("data")]
                                .toObject()[QLatin1String("alerts")]
                                .toArray();
        for (const auto& a : alerts) {
            const auto o = a.toObject();
            const auto labels = o[QLatin1String("labels")].toObject();
            if (labels[QLatin1String("alertname")].toString() == QLatin1String(name)
                && o[QLatin1String("state")].toString() == QLatin1String("firing"))
                scopes << labels[QLatin1String("tenant")].toString() + QLatin1Char(':')
                        + labels[QLatin1String("operation")].toString();
        }
        return scopes;
    };
    QVERIFY2(waitUntil([&] { return !firingScopes("IdemPauseOverdue").isEmpty(); }), qPrintable(log()));
    QCOMPARE(firingScopes("IdemPauseOverdue"), QStringList { QStringLiteral("tz:old") });
    const double overdueAge = valueOf(QStringLiteral("idem_pause_age_seconds{tenant=\"tz\",operation=\"old\"}"));
    QVERIFY2(overdueAge >= 2 * 3600 && overdueAge < 2 * 3600 + 600, qPrintable(QString::number(overdueAge)));
    QVERIFY(firing("IdemPauseOverdue")[QLatin1String("annotations")].toObject()[QLatin1String("runbook_url")]
                .toString()
                .endsWith(QLatin1String("#idempauseoverdue")));
    // Late calls of refund refused in the window: IdemLateCompletions fires for refund only.
    QVERIFY2(waitUntil([&] { return !firing("IdemLateCompletions").isEmpty(); }), qPrintable(log()));
    QCOMPARE(firing("IdemLateCompletions")[QLatin1String("labels")].toObject()[QLatin1String("operation")].toString(),
        QStringLiteral("refund"));
    QVERIFY(firing("IdemLateCompletions")[QLatin1String("annotations")].toObject()[QLatin1String("runbook_url")]
                .toString()
                .endsWith(QLatin1String("#idemlatecompletions")));
    // The other rules stayed quiet where nothing called for them.
    QVERIFY(firing("IdemLeaseTooShort").isEmpty()); // no lease measured
    QVERIFY(firing("IdemExporterCannotReadDatabase").isEmpty());
    QVERIFY(firing("IdemAuditHeadMovedBackwards").isEmpty());
    QVERIFY(firing("IdemRunTimeP95High").isEmpty()); // nothing ran while Prometheus watched
    QVERIFY(firing("IdemTimeToSuccessP95High").isEmpty());

    QVERIFY(firing("IdemHorizonHeld").isEmpty());

    // Issue 46: a report holds a REPEATABLE READ snapshot while the claims go on updating rows.
    // The exporter (a reader login) serves its age and the dead rows; IdemHorizonHeld (its 300 s
    // shortened to 2 s, its 10 minutes of growth to 3 s) fires, and clears once the report ends.
    {
        auto holder = idem::connect(idem::test::dsnWith(m_db->dsn(), { { "application_name", "exporter-report" } }));
        pqxx::work report(*holder);
        report.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        report.exec("SELECT count(*) FROM idem.task_idempotency");
        const auto work = [this] {
            pqxx::work w(*m_conn);
            w.exec("UPDATE idem.task_idempotency SET attempts = attempts WHERE idempotency_key LIKE 'tc:ship:%'");
            w.commit();
        };
        QVERIFY2(waitUntil([&] {
            work();
            return !firing("IdemHorizonHeld").isEmpty();
        }),
            qPrintable(QStringLiteral("never fired; idem_horizon_age_seconds = %1\n%2")
                           .arg(valueOf(QStringLiteral("idem_horizon_age_seconds")))
                           .arg(log())));
        QVERIFY(valueOf(QStringLiteral("idem_horizon_age_seconds")) > 2);
        QVERIFY(valueOf(QStringLiteral("idem_horizon_age_xids")) >= 1);
        QVERIFY(valueOf(QStringLiteral("idem_table_dead_rows{table=\"task_idempotency\"}")) > 0);
        QVERIFY(firing("IdemHorizonHeld")[QLatin1String("annotations")]
                    .toObject()[QLatin1String("runbook_url")]
                    .toString()
                    .endsWith(QLatin1String("#idemhorizonheld")));
        report.commit();
    }
    QVERIFY2(waitUntil([&] { return firing("IdemHorizonHeld").isEmpty(); }), qPrintable(log()));
    QVERIFY(valueOf(QStringLiteral("idem_horizon_age_seconds")) < 2);

    QCOMPARE(exporter.stop(), 0);
    QVERIFY2(exporter.err().contains(QLatin1String("stopping (SIGTERM)")), qPrintable(exporter.err()));
    QVERIFY(!exporter.err().contains(QLatin1String(readerPassword)));
}

void TestExporter::labelsByTenantAndOperation()
{
    ExporterProcess exporter;
    QVERIFY2(
        exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(readerDsn()), QStringLiteral("--interval"),
            QStringLiteral("200ms"), QStringLiteral("--labels"), QStringLiteral("tenant,operation") }),
        qPrintable(exporter.err()));
    QVERIFY2(exporter.waitFor(QStringLiteral("idem_up{schema=\"idem\"}"), 1), qPrintable(exporter.err()));
    addCounter("ta", "charge", "conflict", 3);
    addCounter("tb", "refund", "conflict", 1);
    QVERIFY2(exporter.waitFor(
                 QStringLiteral(
                     "idem_outcomes_total{schema=\"idem\",outcome=\"conflict\",tenant=\"ta\",operation=\"charge\"}"),
                 3),
        exporter.scrape().constData());
    QVERIFY(exporter.waitFor(
        QStringLiteral("idem_outcomes_total{schema=\"idem\",outcome=\"conflict\",tenant=\"tb\",operation=\"refund\"}"),
        1));
    // Without labels a counter is one series per outcome; with them, no unlabelled series.
    QVERIFY(qIsNaN(
        sampleIn(exporter.scrape(), QStringLiteral("idem_outcomes_total{schema=\"idem\",outcome=\"conflict\"}"))));
}

// The pauses as the exporter serves them, checked against what the database holds; then claims
// turned away by a pause, counted by the library as a worker counts them, in the 'paused' counter.
void TestExporter::pausesAndPausedClaims()
{
    ExporterProcess exporter;
    QVERIFY2(
        exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(readerDsn()), QStringLiteral("--interval"),
            QStringLiteral("200ms"), QStringLiteral("--labels"), QStringLiteral("tenant,operation") }),
        qPrintable(exporter.err()));
    const QString count = QStringLiteral("idem_pauses_active{schema=\"idem\"}");
    QVERIFY2(exporter.waitFor(count, 0), exporter.scrape().constData());
    QVERIFY(!exporter.scrape().contains("idem_pause_active{"));

    const auto owner = [this](const std::string& sql) {
        pqxx::work w(*m_conn);
        w.exec(sql);
        w.commit();
    };
    // acme:charge for 60 s; every tenant's refund until resumed; acme:ship set three hours ago
    // for two, so past its end an hour ago (planted: idem_pause() takes no start in the past).
    // The expired one first: the count of those in force waited for below does not include it.
    owner("INSERT INTO idem.idem_pauses (tenant, operation, reason, paused_by, paused_at, changed_at, until, audit_id)"
          " VALUES ('acme', 'ship', 'planted', 'owner (test)', now() - interval '3 hours', now() - interval '3 hours',"
          " now() - interval '1 hour', 0)");
    owner("SELECT * FROM idem.idem_pause('acme', 'charge', 'reason', 'me', 60000)");
    owner("SELECT * FROM idem.idem_pause('*', 'refund', 'reason', 'me')");
    QVERIFY2(exporter.waitFor(count, 2), exporter.scrape().constData());
    const QByteArray text = exporter.scrape();
    // With --labels tenant,operation and pauses listed, too.
    QVERIFY2(promtoolSays(text).isEmpty(), qPrintable(promtoolSays(text)));
    const auto series = [](const char* name, const char* tenant, const char* operation) {
        return QStringLiteral("%1{schema=\"idem\",tenant=\"%2\",operation=\"%3\"}")
            .arg(QLatin1String(name), QLatin1String(tenant), QLatin1String(operation));
    };
    QCOMPARE(sampleIn(text, series("idem_pause_active", "acme", "charge")), 1.0);
    QCOMPARE(sampleIn(text, series("idem_pause_active", "*", "refund")), 1.0);
    QCOMPARE(sampleIn(text, series("idem_pause_active", "acme", "ship")), 0.0); // expired, still listed
    QCOMPARE(sampleIn(text, series("idem_pause_planned_seconds", "acme", "charge")), 60.0);
    QCOMPARE(sampleIn(text, series("idem_pause_planned_seconds", "acme", "ship")), 2 * 3600.0);
    QVERIFY(qIsNaN(sampleIn(text, series("idem_pause_planned_seconds", "*", "refund")))); // until resumed
    // Each age lies between 0 (the reading came after the pause) and its age by the server's
    // clock now (the reading came before this query).
    {
        pqxx::read_transaction r(*m_conn);
        for (const auto& row : r.exec("SELECT tenant, operation, extract(epoch FROM now() - paused_at)::float8"
                                      " FROM idem.idem_pauses ORDER BY 1, 2")) {
            const auto t = row[0].as<std::string>(), o = row[1].as<std::string>();
            const double age = sampleIn(text, series("idem_pause_age_seconds", t.c_str(), o.c_str()));
            const double upper = row[2].as<double>();
            const double lower = t == "acme" && o == "ship" ? 3 * 3600.0 : 0.0;
            QVERIFY2(age >= lower && age <= upper,
                qPrintable(QStringLiteral("%1:%2 age %3, server says at most %4")
                               .arg(QString::fromStdString(t), QString::fromStdString(o))
                               .arg(age)
                               .arg(upper)));
        }
    }

    // Claims under the pauses, through the library with its counters, as a worker makes them.
    auto conn = m_db->connect();
    idem::OutcomeCounters counters;
    idem::StoreOptions options;
    idem::TaskStore store(*conn, options, &counters);
    const std::pair<const char*, const char*> claims[] = { { "acme", "charge" }, { "acme", "charge" },
        { "acme", "charge" }, { "acme", "charge" }, { "tq", "refund" }, { "tq", "refund" } };
    int n = 0, ran = 0;
    for (const auto& [tenant, operation] : claims) {
        const auto out = idem::runTask(store, idem::TaskKey(tenant, operation, "paused-" + std::to_string(++n)),
            "v1:" + std::string(64, 'd'), [&](pqxx::work&, const idem::TaskContext&) {
                ++ran;
                return std::string("{}");
            });
        QCOMPARE(int(out.kind), int(idem::RunOutcome::Kind::Paused));
    }
    QCOMPARE(ran, 0);
    QVERIFY(counters.flush(*conn, idem::SchemaName()) > 0);
    // The database holds what the library counted; the exporter shows the same, per scope.
    {
        pqxx::read_transaction r(*m_conn);
        QCOMPARE(r.exec("SELECT string_agg(tenant || ':' || operation || '=' || n, ' ' ORDER BY tenant) FROM"
                        " (SELECT tenant, operation, sum(n) n FROM idem.idem_counters WHERE outcome = 'paused'"
                        " GROUP BY 1, 2) c")[0][0]
                     .as<std::string>(),
            std::string("acme:charge=4 tq:refund=2"));
    }
    QVERIFY2(exporter.waitFor(QStringLiteral("idem_outcomes_total{schema=\"idem\",outcome=\"paused\",tenant=\"acme\","
                                             "operation=\"charge\"}"),
                 4),
        exporter.scrape().constData());
    QVERIFY2(exporter.waitFor(QStringLiteral("idem_outcomes_total{schema=\"idem\",outcome=\"paused\",tenant=\"tq\","
                                             "operation=\"refund\"}"),
                 2),
        exporter.scrape().constData());

    // Lifted: its series go; the others stay until they are lifted too.
    owner("SELECT * FROM idem.idem_resume('acme', 'charge', 'reason', 'me')");
    QVERIFY2(exporter.waitFor(count, 1), exporter.scrape().constData());
    const QByteArray after = exporter.scrape();
    for (const char* name : { "idem_pause_active", "idem_pause_age_seconds", "idem_pause_planned_seconds" })
        QVERIFY2(qIsNaN(sampleIn(after, series(name, "acme", "charge"))), name);
    QCOMPARE(sampleIn(after, series("idem_pause_active", "*", "refund")), 1.0);
    owner("SELECT * FROM idem.idem_resume('*', 'refund', 'reason', 'me')");
    owner("SELECT * FROM idem.idem_resume('acme', 'ship', 'reason', 'me')");
    QVERIFY2(exporter.waitFor(count, 0), exporter.scrape().constData());
    const QByteArray none = exporter.scrape();
    QVERIFY2(!none.contains("idem_pause_active") && !none.contains("idem_pause_age_seconds")
            && !none.contains("idem_pause_planned_seconds"),
        none.constData());
    QCOMPARE(exporter.stop(), 0);
}

// The pauses are one part of a reading: when that part fails (here the exporter's role may no
// longer run idem_pause_list) the rest is served as usual, without pause series, and the failure
// is counted and said once on stderr.
void TestExporter::pauseReadFailureKeepsTheRest()
{
    pqxx::nontransaction(*m_conn).exec("REVOKE EXECUTE ON FUNCTION idem.idem_pause_list(integer) FROM idem_reader");
    const auto grantBack = qScopeGuard([this] {
        pqxx::nontransaction(*m_conn).exec("GRANT EXECUTE ON FUNCTION idem.idem_pause_list(integer) TO idem_reader");
    });
    ExporterProcess exporter;
    QVERIFY2(exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(readerDsn()),
                 QStringLiteral("--interval"), QStringLiteral("200ms") }),
        qPrintable(exporter.err()));
    QVERIFY2(exporter.waitFor(QStringLiteral("idem_exporter_pause_read_errors_total{schema=\"idem\"}"), 3, true),
        exporter.scrape().constData());
    const QByteArray text = exporter.scrape();
    QCOMPARE(sampleIn(text, QStringLiteral("idem_up{schema=\"idem\"}")), 1.0);
    QCOMPARE(sampleIn(text, QStringLiteral("idem_exporter_read_errors_total{schema=\"idem\"}")), 0.0);
    QCOMPARE(sampleIn(text, QStringLiteral("idem_processing{schema=\"idem\"}")), 3.0); // p1 p2 p3
    QVERIFY2(!text.contains("idem_pauses_active"), text.constData());
    // The latency's savepoint comes after the failed one, and is read as usual.
    QVERIFY2(sampleIn(text, QStringLiteral("idem_exporter_latency_read_errors_total{schema=\"idem\"}")) == 0,
        qPrintable(exporter.err()));
    const QString err = exporter.err();
    QCOMPARE(err.count(QLatin1String("cannot read the pauses")), 1);
    QVERIFY2(err.contains(QLatin1String("permission denied for function idem_pause_list")), qPrintable(err));
    QVERIFY(!err.contains(QLatin1String("cannot read the database")));

    // Allowed again: the pause series come back, and it says so.
    pqxx::nontransaction(*m_conn).exec("GRANT EXECUTE ON FUNCTION idem.idem_pause_list(integer) TO idem_reader");
    QVERIFY2(exporter.waitFor(QStringLiteral("idem_pauses_active{schema=\"idem\"}"), 0), qPrintable(exporter.err()));
    QVERIFY2(exporter.err().contains(QLatin1String("reading the pauses again")), qPrintable(exporter.err()));
    QCOMPARE(exporter.stop(), 0);
}

void TestExporter::scrapesNeverReachTheDatabase()
{
    // The exporter reaches the server only through the relay, which counts its round trips.
    const auto params = idem::parseConninfo(m_db->dsn());
    idem::test::CountingProxy proxy(QString::fromStdString(params.at("host")), quint16(std::stoi(params.at("port"))));
    QVERIFY(proxy.listening());
    const auto dsn = idem::test::dsnWith(readerDsn(),
        { { "host", "127.0.0.1" }, { "port", std::to_string(proxy.port()) }, { "sslmode", "disable" },
            { "gssencmode", "disable" } });
    ExporterProcess exporter;
    // The reconcile probes run on a connection and a clock of their own (every 30 s, not per
    // scrape; tst_reconcile covers them): their round trips would fall into this window or not
    // depending on when the exporter started, so they are left out of this count.
    QVERIFY2(exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(dsn), QStringLiteral("--interval"),
                 QStringLiteral("1s"), QStringLiteral("--no-reconcile") }),
        qPrintable(exporter.err()));
    QVERIFY2(exporter.waitFor(QStringLiteral("idem_up{schema=\"idem\"}"), 1), qPrintable(exporter.err()));

    const QString reads = QStringLiteral("idem_exporter_reads_total{schema=\"idem\"}");
    const double reads0 = sampleIn(exporter.scrape(), reads);
    const int trips0 = proxy.roundTrips();
    QElapsedTimer t;
    t.start();
    int scrapes = 0;
    // At least 3 s and at least 150 scrapes, however slowly a loaded machine answers them: far
    // more scrapes than seconds, so one reading per second is far fewer than one per scrape.
    while (t.elapsed() < 3000 || scrapes < 150) {
        QVERIFY(!exporter.scrape().isEmpty());
        ++scrapes;
        QCoreApplication::processEvents(); // let the relay pass the exporter's reading on
    }
    const double seconds = double(t.elapsed()) / 1000.0;
    const double readings = sampleIn(exporter.scrape(), reads) - reads0;
    const int trips = proxy.roundTrips() - trips0;
    qInfo("%d scrapes in %.1f s: %.0f readings, %d round trips", scrapes, seconds, readings, trips);
    QVERIFY2(readings >= 1 && readings <= seconds + 1, qPrintable(QString::number(readings)));
    // One reading is thirty-nine round trips, whatever the scrapes: the latency roll-up's begin,
    // timeout, roll-up, commit (4); begin, timeout, figures, counters (4); the pauses' savepoint,
    // its first statement, search path, list, server time, release (6); the latency's savepoint,
    // first statement, search path, folded_to, release (5); the node, its system identifier, its
    // standbys (3); the at-risk part's savepoint, first statement, head, standbys, slots, release
    // (6); the horizon's savepoint, first statement, probe, holders, storage, storage samples, the
    // reconcile probes' last runs (schema v30), the fencing probe and document (schema v31),
    // release (10); commit (1). The latency's first
    // reading and each minute folded add one; the shared exact refresh, due at most once in 20 s,
    // adds eight at most once here. The timeline is recorded at the first reading only (before these).
    QVERIFY2(trips <= 39 * (readings + 1) + 8 + 2, qPrintable(QStringLiteral("%1 round trips").arg(trips)));
}

void TestExporter::unreadableDatabaseKeepsServing()
{
    const std::string wrongPassword = "not-the-password-91c2";
    const auto badAuth = idem::test::loginDsn(m_db->dsn(), readerLogin, wrongPassword);
    const auto closedPort
        = idem::test::dsnWith(m_db->dsn(), { { "host", "127.0.0.1" }, { "port", std::to_string(freePort()) } });
    const std::pair<std::string, const char*> cases[] = {
        { badAuth, "authentication failed" },
        { closedPort, "server not reachable" },
    };
    for (const auto& [dsn, reason] : cases) {
        ExporterProcess exporter;
        QVERIFY2(exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(dsn), QStringLiteral("--interval"),
                     QStringLiteral("300ms") }),
            qPrintable(exporter.err()));
        QVERIFY(exporter.waitFor(QStringLiteral("idem_exporter_read_errors_total{schema=\"idem\"}"), 3, true));
        const auto text = exporter.scrape();
        QCOMPARE(sampleIn(text, QStringLiteral("idem_up{schema=\"idem\"}")), 0.0);
        // No database figure rather than a stale or made-up one.
        QVERIFY2(!text.contains("idem_processing"), text.constData());
        QVERIFY(exporter.running());
        const QString err = exporter.err();
        QVERIFY2(err.contains(QLatin1String(reason)), qPrintable(err));
        QCOMPARE(err.count(QLatin1String("cannot read the database")), 1); // said once, not per reading
        QVERIFY2(!err.contains(QString::fromStdString(wrongPassword)), qPrintable(err));
        QCOMPARE(exporter.stop(), 0);
    }
}

// Issue 29: a read-only server (a standby, default_transaction_read_only) is read without
// writing (no latency roll-up, no shared exact refresh), not failed with SQLSTATE 25006; a lost
// connection is said in words, not as libpqxx's "Could not obtain client encoding", and mended.
void TestExporter::readOnlyServerAndLostConnectionInWords()
{
    {
        const auto readOnly
            = idem::test::dsnWith(readerDsn(), { { "options", "-c default_transaction_read_only=on" } });
        ExporterProcess exporter;
        QVERIFY2(exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(readOnly),
                     QStringLiteral("--interval"), QStringLiteral("300ms") }),
            qPrintable(exporter.err()));
        QVERIFY2(exporter.waitFor(QStringLiteral("idem_exporter_reads_total{schema=\"idem\"}"), 3, true),
            qPrintable(exporter.err()));
        const auto text = exporter.scrape();
        QCOMPARE(sampleIn(text, QStringLiteral("idem_up{schema=\"idem\"}")), 1.0);
        QCOMPARE(sampleIn(text, QStringLiteral("idem_exporter_read_errors_total{schema=\"idem\"}")), 0.0);
        QCOMPARE(sampleIn(text, QStringLiteral("idem_exporter_latency_read_errors_total{schema=\"idem\"}")), 0.0);
        QVERIFY2(text.contains("idem_processing"), text.constData());
        const QString err = exporter.err();
        QVERIFY2(
            err.contains(QLatin1String("the server is read-only (a standby, or not the primary)")), qPrintable(err));
        QVERIFY2(!err.contains(QLatin1String("25006")), qPrintable(err));
        QCOMPARE(exporter.stop(), 0);
    }
    ExporterProcess exporter;
    QVERIFY2(exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(readerDsn()),
                 QStringLiteral("--interval"), QStringLiteral("300ms") }),
        qPrintable(exporter.err()));
    QVERIFY2(exporter.waitFor(QStringLiteral("idem_up{schema=\"idem\"}"), 1), qPrintable(exporter.err()));
    pqxx::nontransaction(*m_conn).exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                                       " WHERE datname = current_database() AND application_name = 'idemctl exporter'");
    QTRY_VERIFY2_WITH_TIMEOUT(
        exporter.err().contains(QLatin1String("reading the database again")), qPrintable(exporter.err()), timeoutMs);
    const QString err = exporter.err();
    // In words: the server ended the session, or closed the connection (as libpq saw it).
    QVERIFY2(
        err.contains(QRegularExpression(QStringLiteral("cannot read the database: lost the connection to the "
                                                       "database server: the server (ended this session|closed the "
                                                       "connection)"))),
        qPrintable(err));
    QVERIFY2(err.contains(QLatin1String("; reconnecting")), qPrintable(err));
    QVERIFY2(!err.contains(QLatin1String("client encoding")), qPrintable(err));
    QVERIFY(exporter.waitFor(QStringLiteral("idem_up{schema=\"idem\"}"), 1));
    QCOMPARE(exporter.stop(), 0);
}

// Issue #29: which node answered (address as the server saw it, system identifier, primary) and
// its timeline, as the server says; the exporter records the timeline for the consoles' charts
// (idem_note_timeline, schema v20) as the first client to see it.
void TestExporter::nodeAndTimeline()
{
    pqxx::nontransaction(*m_conn).exec("TRUNCATE idem.idem_timelines");
    ExporterProcess exporter;
    QVERIFY2(exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(readerDsn()),
                 QStringLiteral("--interval"), QStringLiteral("300ms") }),
        qPrintable(exporter.err()));
    QVERIFY2(exporter.waitFor(QStringLiteral("idem_exporter_reads_total{schema=\"idem\"}"), 3, true),
        qPrintable(exporter.err()));
    const auto text = exporter.scrape();
    QCOMPARE(sampleIn(text, QStringLiteral("idem_up{schema=\"idem\"}")), 1.0);
    pqxx::read_transaction t(*m_conn);
    const auto row = t.exec("SELECT host(inet_server_addr()) || ':' || inet_server_port(),"
                            " (SELECT system_identifier::text FROM pg_control_system()),"
                            " ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int")[0];
    const QString info
        = QStringLiteral("idem_node_info{schema=\"idem\",server_address=\"%1\",system_identifier=\"%2\","
                         "role=\"primary\"}")
              .arg(QString::fromStdString(row[0].as<std::string>()), QString::fromStdString(row[1].as<std::string>()));
    QVERIFY2(sampleIn(text, info) == 1.0, text.constData());
    QCOMPARE(sampleIn(text, QStringLiteral("idem_node_timeline{schema=\"idem\"}")), double(row[2].as<int>()));
    QCOMPARE(sampleIn(text, QStringLiteral("idem_exporter_node_changes_total{schema=\"idem\"}")), 0.0);
    t.commit();
    // Recorded by the exporter's login, the system's first timeline: no failover.
    const auto recorded = pqxx::nontransaction(*m_conn).exec(
        "SELECT db_role, timeline, previous_timeline IS NULL FROM idem.idem_timelines");
    QCOMPARE(recorded.size(), pqxx::result::size_type(1));
    QCOMPARE(recorded[0][0].as<std::string>(), std::string(readerLogin));
    QCOMPARE(recorded[0][1].as<int>(), row[2].as<int>());
    QVERIFY(recorded[0][2].as<bool>());
    QVERIFY2(!exporter.err().contains(QLatin1String("cannot record")), qPrintable(exporter.err()));
    QCOMPARE(exporter.stop(), 0);
}

void TestExporter::usageErrors()
{
    const auto run = [](const QStringList& args) {
        return idem::test::runProgram(idem::test::idemctlPath(), QStringList { QStringLiteral("exporter") } + args);
    };
    QCOMPARE(run({ QStringLiteral("--interval"), QStringLiteral("fast") }).exitCode, 2);
    QCOMPARE(run({ QStringLiteral("--interval"), QStringLiteral("10ms") }).exitCode, 2);
    QCOMPARE(run({ QStringLiteral("--labels"), QStringLiteral("tenant,region") }).exitCode, 2);
    QCOMPARE(run({ QStringLiteral("--listen"), QStringLiteral("9187") }).exitCode, 2);
    QCOMPARE(run({ QStringLiteral("--dsn"), QStringLiteral("host='unterminated") }).exitCode, 2);
    // A port taken: a clear failure, not a server that serves nothing.
    QTcpServer taken;
    QVERIFY(taken.listen(QHostAddress::LocalHost, 0));
    const auto busy = run({ QStringLiteral("--listen"), QStringLiteral("127.0.0.1:%1").arg(taken.serverPort()) });
    QCOMPARE(busy.exitCode, 1);
    QVERIFY2(busy.err.contains(QLatin1String("cannot listen")), qPrintable(idem::test::describe(busy)));
}

// Through PgBouncer in transaction mode the exporter keeps nothing on the pooled backends: on a
// direct connection it prepares its reading once, but a pooled backend serves other clients,
// which would find that statement (or miss it, when the pool hands the next reading another
// backend). Readings keep succeeding and show what SQL says.
void TestExporter::throughAPoolerLeavesNothing()
{
    idem::test::LocalPgBouncer::Options o;
    o.defaultPoolSize = 2;
    o.users = { { readerLogin, readerPassword } };
    idem::test::LocalPgBouncer bouncer(idem::test::adminDsn(), o);
    QVERIFY2(bouncer.problem().isEmpty(), qPrintable(bouncer.problem()));
    ExporterProcess exporter;
    QVERIFY2(exporter.start({ QStringLiteral("--dsn"),
                 QString::fromStdString(idem::test::loginDsn(bouncer.dsn(m_db->name(), readerLogin), readerLogin,
                     readerPassword)),
                 QStringLiteral("--interval"), QStringLiteral("100ms") }),
        qPrintable(exporter.err()));
    QVERIFY2(exporter.waitFor(QStringLiteral("idem_exporter_reads_total{schema=\"idem\"}"), 8, true),
        qPrintable(exporter.err()));
    const QByteArray text = exporter.scrape();
    QCOMPARE(sampleIn(text, QStringLiteral("idem_up{schema=\"idem\"}")), 1.0);
    QCOMPARE(sampleIn(text, QStringLiteral("idem_exporter_read_errors_total{schema=\"idem\"}")), 0.0);
    QCOMPARE(sampleIn(text, QStringLiteral("idem_processing{schema=\"idem\"}")), 3.0); // p1 p2 p3
    const auto left = idem::test::pooledBackendLeftovers(bouncer, m_db->name(), readerLogin);
    QVERIFY2(left.isEmpty(), qPrintable(left.join(QLatin1Char('\n'))));
    QCOMPARE(exporter.stop(), 0);
}

// The planted latency as the exporter serves it: every bucket, sum and count of the three
// histograms equal to what the planted values give by Prometheus' definition (a bucket counts the
// values at most its le), computed here from the values; then the minutes folded again (the
// roll-up set back by hand) and more readings leave every figure as it was.
void TestExporter::latencyHistogramsCountEachMinuteOnce()
{
    latencyDueAgain();
    ExporterProcess exporter;
    QVERIFY2(exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(readerDsn()),
                 QStringLiteral("--interval"), QStringLiteral("200ms") }),
        qPrintable(exporter.err()));
    const auto runs = plantedRunUs();
    QVERIFY2(exporter.waitFor(
                 QStringLiteral("idem_task_run_seconds_count{schema=\"idem\",operation=\"lat\"}"), double(runs.size())),
        exporter.scrape().constData());

    std::vector<qint64> tts;
    std::vector<qint64> attempts;
    for (const auto& p : plantedSuccesses) {
        tts.push_back(p.ttsUs);
        attempts.push_back(p.attempts);
    }
    const auto check = [](const QByteArray& text, const char* name, const std::vector<qint64>& values,
                           const std::vector<double>& bounds, double unit) {
        const auto buckets = bucketsIn(text, name);
        QCOMPARE(buckets.size(), qsizetype(bounds.size() + 1));
        for (qsizetype i = 0; i < buckets.size(); ++i) {
            const bool inf = i == qsizetype(bounds.size());
            const double le = inf ? qInf() : buckets[i].first.toDouble();
            if (inf)
                QCOMPARE(buckets[i].first, QStringLiteral("+Inf"));
            else
                QVERIFY2(std::abs(le - bounds[size_t(i)]) <= 1e-12 * bounds[size_t(i)],
                    qPrintable(QStringLiteral("%1 le %2, not %3")
                                   .arg(QLatin1String(name), buckets[i].first)
                                   .arg(bounds[size_t(i)])));
            const auto expected
                = std::count_if(values.begin(), values.end(), [&](qint64 v) { return double(v) / unit <= le; });
            QVERIFY2(buckets[i].second == double(expected),
                qPrintable(QStringLiteral("%1 le %2: %3, planted %4")
                               .arg(QLatin1String(name), buckets[i].first)
                               .arg(buckets[i].second)
                               .arg(expected)));
        }
        const QString labels = QStringLiteral("{schema=\"idem\",operation=\"lat\"}");
        QCOMPARE(sampleIn(text, QLatin1String(name) + QStringLiteral("_count") + labels), double(values.size()));
        double sum = 0;
        for (qint64 v : values)
            sum += double(v) / unit;
        const double served = sampleIn(text, QLatin1String(name) + QStringLiteral("_sum") + labels);
        QVERIFY2(std::abs(served - sum) <= 1e-9 * sum,
            qPrintable(QStringLiteral("%1_sum %2, planted %3").arg(QLatin1String(name)).arg(served).arg(sum)));
    };
    std::vector<double> durations;
    for (int k = 0; k < durationBounds; ++k)
        durations.push_back(durationBound(k));
    const std::vector<double> attemptBounds { 1, 2, 3, 4, 5, 7, 10, 20, 50, 100 };
    const auto checkAll = [&](const QByteArray& text) {
        check(text, "idem_task_run_seconds", runs, durations, 1e6);
        check(text, "idem_task_time_to_success_seconds", tts, durations, 1e6);
        check(text, "idem_task_attempts_per_success", attempts, attemptBounds, 1);
    };
    const QByteArray first = exporter.scrape();
    checkAll(first);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(sampleIn(first, QStringLiteral("idem_exporter_latency_read_errors_total{schema=\"idem\"}")), 0.0);
    QVERIFY(first.contains("# TYPE idem_task_run_seconds histogram"));

    // Set back to before the planted minute while the exporter may not fold (its role loses
    // EXECUTE on the roll-up): it reads a folded_to behind where it stopped, and counts nothing;
    // allowed again, it folds those minutes again, which it has counted already.
    const auto foldedTo = [this] {
        pqxx::read_transaction r(*m_conn);
        return r.exec("SELECT (extract(epoch FROM folded_to) * 1000000)::bigint FROM idem.idem_latency_state")[0][0]
            .as<qint64>();
    };
    const qint64 stoppedAt = foldedTo();
    const auto allowRollup = [this](bool allow) {
        pqxx::nontransaction(*m_conn).exec(allow
                ? "GRANT EXECUTE ON FUNCTION idem.idem_latency_rollup(integer) TO idem_reader"
                : "REVOKE EXECUTE ON FUNCTION idem.idem_latency_rollup(integer) FROM idem_reader");
    };
    allowRollup(false);
    auto grantBack = qScopeGuard([&] { allowRollup(true); });
    latencyDueAgain();
    const QString reads = QStringLiteral("idem_exporter_reads_total{schema=\"idem\"}");
    const QString errors = QStringLiteral("idem_exporter_latency_read_errors_total{schema=\"idem\"}");
    // Three readings whose roll-up was refused (a reading under way when EXECUTE was revoked
    // may still have folded: counting readings alone raced it on a loaded machine).
    QVERIFY(exporter.waitFor(errors, 3, true));
    QCOMPARE(foldedTo(), m_latencyMinuteUs - 60000000);
    const QByteArray behind = exporter.scrape();
    QVERIFY(sampleIn(behind, errors) >= 3); // the roll-up refused, the reading served
    QVERIFY(sampleIn(behind, reads) >= 3);
    checkAll(behind);
    if (QTest::currentTestFailed())
        return;
    grantBack.dismiss();
    allowRollup(true);
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeoutMs && foldedTo() < stoppedAt)
        QTest::qWait(100);
    QVERIFY2(foldedTo() >= stoppedAt, "the exporter never folded the minutes again");
    QVERIFY(exporter.waitFor(reads, sampleIn(exporter.scrape(), reads) + 3, true));
    const QByteArray again = exporter.scrape();
    checkAll(again);
    QCOMPARE(exporter.stop(), 0);
}

// A schema before v17 has no roll-up and no latency state (made here by renaming both): the
// latency part of each reading fails, is counted and said once, and everything else is served.
void TestExporter::latencyWithoutTheLatencySchema()
{
    const auto rename = [this](const char* from, const char* to) {
        pqxx::work w(*m_conn);
        w.exec(std::string("ALTER FUNCTION idem.idem_latency_rollup") + from + "(integer) RENAME TO idem_latency_rollup"
            + to);
        w.exec(std::string("ALTER TABLE idem.idem_latency_state") + from + " RENAME TO idem_latency_state" + to);
        w.commit();
    };
    rename("", "_gone");
    auto restore = qScopeGuard([&] { rename("_gone", ""); });
    ExporterProcess exporter;
    QVERIFY2(exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(readerDsn()),
                 QStringLiteral("--interval"), QStringLiteral("200ms") }),
        qPrintable(exporter.err()));
    const QString errors = QStringLiteral("idem_exporter_latency_read_errors_total{schema=\"idem\"}");
    const QString reads = QStringLiteral("idem_exporter_reads_total{schema=\"idem\"}");
    QVERIFY2(exporter.waitFor(errors, 3, true), exporter.scrape().constData());
    const QByteArray text = exporter.scrape();
    QCOMPARE(sampleIn(text, QStringLiteral("idem_up{schema=\"idem\"}")), 1.0);
    QCOMPARE(sampleIn(text, QStringLiteral("idem_exporter_read_errors_total{schema=\"idem\"}")), 0.0);
    QCOMPARE(sampleIn(text, QStringLiteral("idem_processing{schema=\"idem\"}")), 3.0); // p1 p2 p3
    QCOMPARE(sampleIn(text, QStringLiteral("idem_pauses_active{schema=\"idem\"}")), 0.0);
    QCOMPARE(sampleIn(text, errors), sampleIn(text, reads)); // once per reading, roll-up and read alike
    QVERIFY2(!text.contains("idem_task_run_seconds"), text.constData());
    const QString err = exporter.err();
    QCOMPARE(err.count(QLatin1String("cannot read the latency")), 1);
    QVERIFY2(err.contains(QLatin1String("\"idem.idem_latency_state\" does not exist")), qPrintable(err));
    QVERIFY(!err.contains(QLatin1String("cannot read the database")));

    // At v17 again: read, and said.
    restore.dismiss();
    rename("_gone", "");
    QVERIFY2(exporter.waitFor(reads, sampleIn(exporter.scrape(), reads) + 2, true), qPrintable(exporter.err()));
    QVERIFY2(exporter.err().contains(QLatin1String("reading the latency again")), qPrintable(exporter.err()));
    const double settled = sampleIn(exporter.scrape(), errors);
    QVERIFY(exporter.waitFor(reads, sampleIn(exporter.scrape(), reads) + 2, true));
    QCOMPARE(sampleIn(exporter.scrape(), errors), settled);
    QCOMPARE(exporter.stop(), 0);
}

QTEST_GUILESS_MAIN(TestExporter)
#include "tst_exporter.moc"
