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
#include <functional>
#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/countingproxy.h"
#include "tests/support/exporterprocess.h"
#include "tests/support/pgservers.h"
#include "tests/support/testdb.h"

// `idemctl exporter` as an operator runs it: scraped by a real Prometheus (Debian's, started
// here on loopback with its own port and data directory), every series equal to a plain SQL count,
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

struct Http {
    int status = 0;
    QByteArray body;
};

// One blocking HTTP/1.0 GET on loopback: enough for /metrics and Prometheus' API.
Http httpGet(quint16 port, const QString& pathAndQuery)
{
    QTcpSocket s;
    s.connectToHost(QHostAddress::LocalHost, port);
    Http out;
    if (!s.waitForConnected(5000))
        return out;
    s.write("GET " + pathAndQuery.toUtf8() + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    QByteArray all;
    while (s.state() == QAbstractSocket::ConnectedState && s.waitForReadyRead(5000))
        all += s.readAll();
    all += s.readAll();
    const auto headerEnd = all.indexOf("\r\n\r\n");
    if (!all.startsWith("HTTP/1.") || headerEnd < 0)
        return out;
    out.status = all.mid(9, 3).toInt();
    out.body = all.mid(headerEnd + 4);
    return out;
}

using idem::test::sampleIn;

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
    void scrapesNeverReachTheDatabase();
    void unreadableDatabaseKeepsServing();
    void usageErrors();
    void throughAPoolerLeavesNothing();

private:
    std::int64_t sql(const std::string& query);
    void addCounter(const char* tenant, const char* operation, const char* outcome, int n);
    std::string readerDsn() const { return idem::test::loginDsn(m_db->dsn(), readerLogin, readerPassword); }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
};

std::int64_t TestExporter::sql(const std::string& query)
{
    pqxx::read_transaction t(*m_conn);
    return t.exec(query).at(0).at(0).as<std::int64_t>();
}

void TestExporter::addCounter(const char* tenant, const char* operation, const char* outcome, int n)
{
    pqxx::work w(*m_conn);
    w.exec_params("INSERT INTO idem.idem_counters (bucket, tenant, operation, outcome, n)"
                  " VALUES (date_trunc('minute', now()), $1, $2, $3, $4)"
                  " ON CONFLICT (bucket, tenant, operation, outcome) DO UPDATE SET n = idem_counters.n + EXCLUDED.n",
        tenant, operation, outcome, n);
    w.commit();
}

void TestExporter::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("exporter");
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), true });
    // The exporter runs as a read-only login, as the packaged unit's role would.
    idem::test::createLoginRole(readerLogin, readerPassword, "idem_reader");

    pqxx::work w(*m_conn);
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until,
                                           attempts, error_class, next_attempt_at, created_at, updated_at)
        SELECT k, 'v1:' || repeat('a', 64), st,
               CASE WHEN st = 'processing' THEN gen_random_uuid() END,
               CASE WHEN st = 'processing' THEN now() + interval '1 hour' END, 1, ec,
               CASE WHEN st = 'retryable_failed' THEN now() + interval '1 minute' END, now(), now()
        FROM (VALUES ('ta:charge:p1', 'processing', NULL), ('ta:charge:p2', 'processing', NULL),
                     ('tb:refund:p3', 'processing', NULL), ('ta:charge:r1', 'retryable_failed', 'retryable'),
                     ('tb:refund:r2', 'retryable_failed', 'unknown'), ('ta:charge:f1', 'failed', 'permanent'))
            AS v(k, st, ec)
    )");
    w.exec("INSERT INTO idem.task_idempotency_audit (idempotency_key, action, reason, db_role, os_user,"
           " client_host, before_image, after_image, prev_hash, entry_hash)"
           " SELECT 'ta:charge:f1', 'requeue', 'planted ' || g, 'owner', 'tester', '[local]', '{}', '{}',"
           "        repeat('0', 64), encode(sha256(('entry ' || g)::bytea), 'hex')"
           " FROM generate_series(1, 4) g");
    w.commit();
    // Counted before the exporter starts: its counters begin at 0 and count only what follows.
    addCounter("ta", "charge", "acquired", 10);
    addCounter("ta", "charge", "succeeded", 8);
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

    ExporterProcess exporter;
    QVERIFY2(exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(readerDsn()),
                 QStringLiteral("--interval"), QStringLiteral("500ms") }),
        qPrintable(exporter.err()));
    QVERIFY2(exporter.waitFor(QStringLiteral("idem_up{schema=\"idem\"}"), 1), qPrintable(exporter.err()));
    // After the exporter's first reading: what its counters must show.
    const auto acquiredBefore = sql("SELECT sum(n) FROM idem.idem_counters WHERE outcome = 'acquired'");
    addCounter("ta", "charge", "acquired", 4);
    addCounter("tb", "refund", "acquired", 1);
    addCounter("tb", "refund", "stale_token", 2);
    const auto acquiredAdded = sql("SELECT sum(n) FROM idem.idem_counters WHERE outcome = 'acquired'") - acquiredBefore;
    QCOMPARE(acquiredAdded, 5);

    // Prometheus on loopback, its own port and data directory; the shipped rules with their
    // `for:` and ranges shortened to seconds so the test takes seconds.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile shipped(qEnvironmentVariable("IDEM_SOURCE_DIR") + QStringLiteral("/packaging/prometheus/idem-alerts.yml"));
    QVERIFY2(shipped.open(QIODevice::ReadOnly), qPrintable(shipped.fileName()));
    QString rules = QString::fromUtf8(shipped.readAll());
    rules.replace(QRegularExpression(QStringLiteral("for: \\d+m")), QStringLiteral("for: 1s"));
    rules.replace(QStringLiteral("[10m]"), QStringLiteral("[3s]"))
        .replace(QStringLiteral("[15m]"), QStringLiteral("[5s]"));
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

    // Each series against a plain SQL count (polled: the exporter reads every 500 ms).
    const std::pair<const char*, const char*> truths[] = {
        { "idem_processing",
            "SELECT count(*) FROM idem.task_idempotency WHERE status = 'processing' AND lease_until > now()" },
        { "idem_expired_leases",
            "SELECT count(*) FROM idem.task_idempotency WHERE status = 'processing' AND lease_until <= now()" },
        { "idem_retryable_failed", "SELECT count(*) FROM idem.task_idempotency WHERE status = 'retryable_failed'" },
        { "idem_uncertain",
            "SELECT count(*) FROM idem.task_idempotency WHERE status = 'retryable_failed' AND error_class = "
            "'unknown'" },
        { "idem_failed_permanent",
            "SELECT count(*) FROM idem.task_idempotency WHERE status = 'failed' AND error_class = 'permanent'" },
        { "idem_audit_head_id", "SELECT max(id) FROM idem.task_idempotency_audit" },
        { "idem_outcomes_total{outcome=\"stale_token\"}",
            "SELECT sum(n) FROM idem.idem_counters WHERE outcome = 'stale_token'" },
        { "idem_in_recovery", "SELECT pg_is_in_recovery()::int" },
    };
    for (const auto& [series, truth] : truths) {
        const double expected = static_cast<double>(sql(truth));
        const QString expr = QString::fromLatin1(series);
        QVERIFY2(waitUntil([&] { return valueOf(expr) == expected; }),
            qPrintable(
                QStringLiteral("%1 is %2 in Prometheus, SQL says %3").arg(expr).arg(valueOf(expr)).arg(expected)));
    }
    QCOMPARE(sql("SELECT max(id) FROM idem.task_idempotency_audit"), 4);
    QVERIFY2(waitUntil(
                 [&] { return valueOf(QStringLiteral("idem_outcomes_total{outcome=\"acquired\"}")) == acquiredAdded; }),
        "idem_outcomes_total{outcome=\"acquired\"} is not what was added after the exporter started");
    QVERIFY(query(QStringLiteral("idem_replication_lag_seconds")).isEmpty()); // a primary: no sample
    // The types Prometheus learnt from the TYPE lines.
    const auto meta = QJsonDocument::fromJson(httpGet(promPort, QStringLiteral("/api/v1/metadata")).body)
                          .object()[QLatin1String("data")]
                          .toObject();
    QCOMPARE(meta[QLatin1String("idem_outcomes_total")].toArray()[0].toObject()[QLatin1String("type")].toString(),
        QStringLiteral("counter"));
    QCOMPARE(meta[QLatin1String("idem_processing")].toArray()[0].toObject()[QLatin1String("type")].toString(),
        QStringLiteral("gauge"));

    // No expired lease yet, so the rule is quiet; then six leases run out and it fires.
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
    QTest::qWait(2000); // two evaluations
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
    QCOMPARE(valueOf(QStringLiteral("idem_expired_leases")),
        double(sql("SELECT count(*) FROM idem.task_idempotency WHERE status = 'processing' AND lease_until <= now()")));
    // The other rules stayed quiet where nothing called for them.
    QVERIFY(firing("IdemExporterCannotReadDatabase").isEmpty());
    QVERIFY(firing("IdemAuditHeadMovedBackwards").isEmpty());

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
    QVERIFY2(exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(dsn), QStringLiteral("--interval"),
                 QStringLiteral("1s") }),
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
    // One reading is five round trips (begin, timeout, figures, counters, commit), whatever the
    // scrapes; the shared exact refresh, due at most once in 20 s, adds eight at most once here.
    QVERIFY2(trips <= 5 * (readings + 1) + 8, qPrintable(QStringLiteral("%1 round trips").arg(trips)));
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

void TestExporter::usageErrors()
{
    const auto run = [](const QStringList& args) {
        return idem::test::runProgram(QStringLiteral(IDEMCTL_PATH), QStringList { QStringLiteral("exporter") } + args);
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
    QCOMPARE(sampleIn(text, QStringLiteral("idem_processing{schema=\"idem\"}")),
        double(sql("SELECT count(*) FROM idem.task_idempotency WHERE status = 'processing' AND lease_until > now()")));
    const auto left = idem::test::pooledBackendLeftovers(bouncer, m_db->name(), readerLogin);
    QVERIFY2(left.isEmpty(), qPrintable(left.join(QLatin1Char('\n'))));
    QCOMPARE(exporter.stop(), 0);
}

QTEST_GUILESS_MAIN(TestExporter)
#include "tst_exporter.moc"
