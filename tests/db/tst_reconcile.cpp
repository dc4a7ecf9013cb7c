#include <QtTest>

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <map>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "operations/reconcile.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/exporterprocess.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"

using namespace idem::test;

// Continuous reconciliation (issue 46 item 5), as an operator meets it: a shop whose charge
// succeeded for 21 orders, two of which have no payment and one two payments. The owner registers
// a probe counting shop.payments by order id; a runner login (idem_reconcile) runs it; idemctl,
// the exporter's metrics and the database say 2 keys with no effect and 1 with two of 21 sampled.
// Hostile probes are refused at registration or fail cleanly at run time, writing nothing to the
// business tables; readers, workers and operators cannot register probes.
namespace {
const char* const runnerLogin = "idem_t_rc_runner";
const char* const runnerPassword = "rc-runner-pw-5d1";
const char* const readerLogin = "idem_t_rc_reader";
const char* const readerPassword = "rc-reader-pw-5d1";
const char* const workerLogin = "idem_t_rc_worker";
const char* const workerPassword = "rc-worker-pw-5d1";
const char* const operatorLogin = "idem_t_rc_operator";
const char* const operatorPassword = "rc-operator-pw-5d1";
const QString chargeQuery = QStringLiteral("SELECT count(*) FROM shop.payments WHERE order_id = $1");
constexpr int timeoutMs = 20000;
} // namespace

class TestReconcile : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void onlyTheOwnerRegisters();
    void aRunFindsTheMissingAndTheDuplicated();
    void theProbeRunsAsIdemReconcileOnly();
    void hostileProbesAreRefusedOrFailCleanly();
    void theExporterRunsDueProbesAndServesTheResult();

private:
    CliRun idemctl(const std::string& dsn, const QStringList& args);
    QJsonObject json(const std::string& dsn, const QStringList& args);
    QByteArray payments() { return scalar(*m_conn, "SELECT count(*) || '/' || sum(amount) FROM shop.payments"); }
    std::string runnerDsn() const { return loginDsn(m_db->dsn(), runnerLogin, runnerPassword); }
    CliRun add(const std::string& dsn, const QString& operation, const QString& query, const QStringList& extra = {});
    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
};

void TestReconcile::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("reconcile", migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), true });
    createLoginRole(runnerLogin, runnerPassword, "idem_reconcile");
    createLoginRole(readerLogin, readerPassword, "idem_reader");
    createLoginRole(workerLogin, workerPassword, "idem_worker");
    createLoginRole(operatorLogin, operatorPassword, "idem_operator");
    pqxx::work w(*m_conn);
    w.exec(std::string("GRANT idem_reader TO ") + runnerLogin);
    // The shop: orders 1 to 20 charged, order-3 and order-7 without a payment, order-12 paid twice;
    // order:21 (a business id with a ':') paid once.
    w.exec("CREATE SCHEMA shop");
    w.exec("CREATE TABLE shop.payments (order_id text NOT NULL, amount integer NOT NULL)");
    w.exec("INSERT INTO shop.payments SELECT 'order-' || g, 100 FROM generate_series(1, 20) g WHERE g NOT IN (3, 7)");
    w.exec("INSERT INTO shop.payments VALUES ('order-12', 100), ('order:21', 100)");
    w.exec("CREATE TABLE shop.secrets (order_id text)");
    w.exec("GRANT USAGE ON SCHEMA shop TO idem_reconcile");
    w.exec("GRANT SELECT ON shop.payments TO idem_reconcile");
    // The runner login itself may read the secrets; the probe runs as idem_reconcile, which may not.
    w.exec(std::string("GRANT USAGE ON SCHEMA shop TO ") + runnerLogin);
    w.exec(std::string("GRANT SELECT ON shop.secrets TO ") + runnerLogin);
    w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts, updated_at)"
           " SELECT 'tr:charge:order-' || g, 'v1:' || repeat('a', 64), 'succeeded', '{}', 1, now() - g * interval '1 s'"
           " FROM generate_series(1, 20) g");
    w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts, updated_at)"
           " VALUES ('tr:charge:order:21', 'v1:' || repeat('a', 64), 'succeeded', '{}', 1, now() - interval '30 s'),"
           // Not sampled: another operation, a key still processing, one that succeeded two days ago.
           " ('tr:refund:order-3', 'v1:' || repeat('a', 64), 'succeeded', '{}', 1, now()),"
           " ('tr:charge:order-90', 'v1:' || repeat('a', 64), 'processing', NULL, 1, now()),"
           " ('tr:charge:order-91', 'v1:' || repeat('a', 64), 'succeeded', '{}', 1, now() - interval '2 days')");
    w.commit();
}

void TestReconcile::cleanupTestCase()
{
    m_conn.reset();
    m_db.reset();
}

CliRun TestReconcile::idemctl(const std::string& dsn, const QStringList& args)
{
    return runProgram(idemctlPath(),
        QStringList { QStringLiteral("reconcile") } + args
            + QStringList { QStringLiteral("--dsn"), QString::fromStdString(dsn) });
}

QJsonObject TestReconcile::json(const std::string& dsn, const QStringList& args)
{
    const auto run = idemctl(dsn, args + QStringList { QStringLiteral("--json") });
    // `run` exits 1 when a key was not ok, its JSON whole all the same.
    if (run.exitCode > 1 || (run.exitCode == 1 && args.value(0) != QStringLiteral("run")))
        qWarning("%s", qPrintable(describe(run)));
    return QJsonDocument::fromJson(run.out.toUtf8()).object();
}

CliRun TestReconcile::add(const std::string& dsn, const QString& operation, const QString& query, const QStringList& extra)
{
    return idemctl(dsn,
        QStringList { QStringLiteral("add"), QStringLiteral("--operation"), operation, QStringLiteral("--query"), query,
            QStringLiteral("--reason"), QStringLiteral("nightly payments check"), QStringLiteral("--every-seconds"),
            QStringLiteral("3600") }
            + extra);
}

void TestReconcile::onlyTheOwnerRegisters()
{
    const QByteArray audit = scalar(*m_conn, "SELECT count(*) FROM idem.task_idempotency_audit");
    using Logins = std::initializer_list<std::pair<const char*, const char*>>;
    for (const auto& [login, password] : Logins { { readerLogin, readerPassword }, { workerLogin, workerPassword },
             { operatorLogin, operatorPassword }, { runnerLogin, runnerPassword } }) {
        const auto run = add(loginDsn(m_db->dsn(), login, password), QStringLiteral("charge"), chargeQuery);
        QVERIFY2(run.exitCode == 3, qPrintable(describe(run)));
        QVERIFY2(run.err.contains(QStringLiteral("SQLSTATE 42501")), qPrintable(run.err));
        QVERIFY2(run.err.contains(QStringLiteral("only the owner of the Idem schema")), qPrintable(run.err));
    }
    QCOMPARE(scalar(*m_conn, "SELECT count(*) FROM idem.idem_reconcile_probes"), "0"_b);
    QCOMPARE(scalar(*m_conn, "SELECT count(*) FROM idem.task_idempotency_audit"), audit);
    // Nor may they record a run: taking and finishing runs is idem_reconcile's.
    for (const auto& [login, password] :
        Logins { { readerLogin, readerPassword }, { workerLogin, workerPassword }, { operatorLogin, operatorPassword } }) {
        const auto run = idemctl(loginDsn(m_db->dsn(), login, password), { QStringLiteral("run") });
        QVERIFY2(run.exitCode == 3 && run.err.contains(QStringLiteral("needs idem_reconcile")), qPrintable(describe(run)));
    }
}

void TestReconcile::aRunFindsTheMissingAndTheDuplicated()
{
    const auto added = add(m_db->dsn(), QStringLiteral("charge"), chargeQuery + QStringLiteral(";"));
    QVERIFY2(added.exitCode == 0, qPrintable(describe(added)));
    QVERIFY2(added.out.contains(QStringLiteral("registered the reconcile probe of charge")), qPrintable(added.out));
    QCOMPARE(scalar(*m_conn, "SELECT query FROM idem.idem_reconcile_probes WHERE operation = 'charge'"),
        chargeQuery.toUtf8()); // stored without its trailing ';'
    QCOMPARE(scalar(*m_conn, "SELECT count(*) FROM idem.task_idempotency_audit WHERE action = 'reconcile_probe'"
                             " AND after_image ->> 'operation' = 'charge'"),
        "1"_b);

    const QByteArray before = payments();
    // Keys that are not ok: exit 1, as verify says it, with the run in the output all the same.
    const auto ranRun = idemctl(runnerDsn(),
        { QStringLiteral("run"), QStringLiteral("--operation"), QStringLiteral("charge"), QStringLiteral("--json") });
    QVERIFY2(ranRun.exitCode == 1, qPrintable(describe(ranRun)));
    const auto ran = QJsonDocument::fromJson(ranRun.out.toUtf8()).object();
    const auto runs = ran.value(QStringLiteral("runs")).toArray();
    QCOMPARE(runs.size(), 1);
    const auto r = runs.at(0).toObject();
    QCOMPARE(r.value(QStringLiteral("sampled")).toInt(), 21);
    QCOMPARE(r.value(QStringLiteral("ok")).toInt(), 18);
    QCOMPARE(r.value(QStringLiteral("missing")).toInt(), 2);
    QCOMPARE(r.value(QStringLiteral("duplicated")).toInt(), 1);
    QCOMPARE(r.value(QStringLiteral("errors")).toInt(), 0);
    std::map<QString, int> offenders;
    for (const auto& o : r.value(QStringLiteral("offenders")).toArray())
        offenders[o.toObject().value(QStringLiteral("key")).toString()] = o.toObject().value(QStringLiteral("count")).toInt();
    const std::map<QString, int> expected { { QStringLiteral("tr:charge:order-3"), 0 },
        { QStringLiteral("tr:charge:order-7"), 0 }, { QStringLiteral("tr:charge:order-12"), 2 } };
    QCOMPARE(offenders, expected);
    QCOMPARE(payments(), before);

    // What the database keeps: one finished run with those figures.
    QCOMPARE(scalar(*m_conn, "SELECT concat_ws(' ', sampled, ok, missing, duplicated, errors, finished_at IS NOT NULL,"
                             " jsonb_array_length(offenders), problem IS NULL) FROM idem.idem_reconcile_runs"),
        "21 18 2 1 0 t 3 t"_b);

    // What a reader sees.
    const auto list = idemctl(loginDsn(m_db->dsn(), readerLogin, readerPassword), { QStringLiteral("list") });
    QVERIFY2(list.exitCode == 0, qPrintable(describe(list)));
    QVERIFY2(list.out.contains(
                 QStringLiteral("charge: 2 keys with no effect, 1 with two or more, 0 errors in the last 21 sampled")),
        qPrintable(list.out));
    QVERIFY2(list.out.contains(QStringLiteral("no effect    tr:charge:order-3")), qPrintable(list.out));
    QVERIFY2(list.out.contains(QStringLiteral("2 effects    tr:charge:order-12")), qPrintable(list.out));
    QVERIFY2(list.out.contains(QStringLiteral("query: ") + chargeQuery), qPrintable(list.out));
    const auto listed = json(loginDsn(m_db->dsn(), readerLogin, readerPassword), { QStringLiteral("list") });
    QCOMPARE(listed.value(QStringLiteral("missing")).toInt(), 2);
    QCOMPARE(listed.value(QStringLiteral("duplicated")).toInt(), 1);
    QCOMPARE(listed.value(QStringLiteral("sampled")).toInt(), 21);

    // The incident snapshot keeps the run: its JSON and its report.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString out = dir.path() + QStringLiteral("/snap");
    const auto snap = runProgram(idemctlPath(),
        { QStringLiteral("snapshot"), QStringLiteral("export"), QStringLiteral("--dsn"),
            QString::fromStdString(loginDsn(m_db->dsn(), readerLogin, readerPassword)), QStringLiteral("--out"), out,
            QStringLiteral("--quiet") });
    QVERIFY2(snap.exitCode == 0, qPrintable(describe(snap)));
    QFile json(out + QStringLiteral("/snapshot.json"));
    QVERIFY(json.open(QIODevice::ReadOnly));
    const auto probe = QJsonDocument::fromJson(json.readAll())
                           .object()
                           .value(QStringLiteral("reconcile"))
                           .toObject()
                           .value(QStringLiteral("probes"))
                           .toArray()
                           .at(0)
                           .toObject();
    QCOMPARE(probe.value(QStringLiteral("operation")).toString(), QStringLiteral("charge"));
    const auto last = probe.value(QStringLiteral("last_run")).toObject();
    QCOMPARE(last.value(QStringLiteral("missing")).toInt(), 2);
    QCOMPARE(last.value(QStringLiteral("duplicated")).toInt(), 1);
    QCOMPARE(last.value(QStringLiteral("offenders")).toArray().size(), 3);
    // A snapshot scoped to another operation has no probe; to another tenant, the operation's
    // counts and none of the offenders (they are tenant tr's keys); to tenant tr, all three.
    const auto scoped = [&](const QString& option, const QString& value) {
        const QString to = dir.path() + QStringLiteral("/") + option + value;
        const auto run = runProgram(idemctlPath(),
            { QStringLiteral("snapshot"), QStringLiteral("export"), QStringLiteral("--dsn"),
                QString::fromStdString(loginDsn(m_db->dsn(), readerLogin, readerPassword)), QStringLiteral("--out"), to,
                QStringLiteral("--quiet"), QStringLiteral("--") + option, value });
        QFile f(to + QStringLiteral("/snapshot.json"));
        if (run.exitCode != 0 || !f.open(QIODevice::ReadOnly))
            qWarning("%s", qPrintable(describe(run)));
        return QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("reconcile")).toObject()
            .value(QStringLiteral("probes")).toArray();
    };
    QCOMPARE(scoped(QStringLiteral("operation"), QStringLiteral("ship")).size(), 0);
    const auto otherTenant = scoped(QStringLiteral("tenant"), QStringLiteral("zz"));
    QCOMPARE(otherTenant.size(), 1);
    const auto otherLast = otherTenant.at(0).toObject().value(QStringLiteral("last_run")).toObject();
    QCOMPARE(otherLast.value(QStringLiteral("missing")).toInt(), 2);
    QCOMPARE(otherLast.value(QStringLiteral("offenders")).toArray().size(), 0);
    const auto ownTenant = scoped(QStringLiteral("tenant"), QStringLiteral("tr"));
    QCOMPARE(ownTenant.at(0).toObject().value(QStringLiteral("last_run")).toObject()
                 .value(QStringLiteral("offenders")).toArray().size(),
        3);
    QFile report(out + QStringLiteral("/report.html"));
    QVERIFY(report.open(QIODevice::ReadOnly));
    QVERIFY(report.readAll().contains("Reconcile: 2 keys with no effect, 1 with two or more, in the last 21 sampled"));

    // Not due again for an hour: a second run does nothing.
    const auto again = idemctl(runnerDsn(), { QStringLiteral("run"), QStringLiteral("--operation"), QStringLiteral("charge") });
    QVERIFY2(again.exitCode == 0 && again.out.contains(QStringLiteral("not due yet")), qPrintable(describe(again)));
    QCOMPARE(scalar(*m_conn, "SELECT count(*) FROM idem.idem_reconcile_runs"), "1"_b);
}

void TestReconcile::theProbeRunsAsIdemReconcileOnly()
{
    // The runner login may read shop.secrets; the probe, as idem_reconcile, may not.
    QVERIFY(scalar(*m_conn, "SELECT has_table_privilege($1, 'shop.secrets', 'SELECT')::text", std::string(runnerLogin))
        == "true");
    QVERIFY2(add(m_db->dsn(), QStringLiteral("peek"),
                 QStringLiteral("SELECT count(*) FROM shop.secrets WHERE order_id = $1"))
                 .exitCode
            == 0,
        "add peek");
    pqxx::work w(*m_conn);
    w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts)"
           " VALUES ('tr:peek:a', 'v1:' || repeat('a', 64), 'succeeded', '{}', 1)");
    w.commit();
    const auto r = json(runnerDsn(), { QStringLiteral("run"), QStringLiteral("--operation"), QStringLiteral("peek") })
                       .value(QStringLiteral("runs"))
                       .toArray()
                       .at(0)
                       .toObject();
    QCOMPARE(r.value(QStringLiteral("errors")).toInt(), 1);
    const QString error = r.value(QStringLiteral("offenders")).toArray().at(0).toObject().value(QStringLiteral("error")).toString();
    QVERIFY2(error.contains(QStringLiteral("SQLSTATE 42501")), qPrintable(error));
}

void TestReconcile::hostileProbesAreRefusedOrFailCleanly()
{
    const QByteArray probes = scalar(*m_conn, "SELECT count(*) FROM idem.idem_reconcile_probes");
    const QByteArray audit = scalar(*m_conn, "SELECT count(*) FROM idem.task_idempotency_audit");
    const QByteArray before = payments();
    // Refused when registered: DML, two statements, no $1, another parameter.
    for (const QString& q : std::initializer_list<QString> { QStringLiteral("DELETE FROM shop.payments WHERE order_id = $1"),
             QStringLiteral("SELECT count(*) FROM shop.payments WHERE order_id = $1; DELETE FROM shop.payments"),
             QStringLiteral("SELECT count(*) FROM shop.payments"),
             QStringLiteral("SELECT count(*) FROM shop.payments WHERE order_id = $1 OR order_id = $2"),
             QStringLiteral("   ") }) {
        const auto run = add(m_db->dsn(), QStringLiteral("hostile"), q);
        QVERIFY2(run.exitCode == 3 && run.err.contains(QStringLiteral("SQLSTATE ID003")), qPrintable(describe(run)));
    }
    // NULL arguments, through SQL as any caller could send them.
    for (const char* sql : std::initializer_list<const char*> { "SELECT * FROM idem.idem_reconcile_add(NULL, 'SELECT $1', 1, 60, 60, 10, 'r')",
             "SELECT * FROM idem.idem_reconcile_add('x', NULL, 1, 60, 60, 10, 'r')",
             "SELECT * FROM idem.idem_reconcile_add('x', 'SELECT count(*) WHERE $1 = ''a''', NULL, 60, 60, 10, 'r')",
             "SELECT * FROM idem.idem_reconcile_add('x', 'SELECT count(*) WHERE $1 = ''a''', 1, 60, 60, NULL, 'r')",
             "SELECT * FROM idem.idem_reconcile_add('x', 'SELECT count(*) WHERE $1 = ''a''', 1, 60, 60, 10, NULL)",
             "SELECT idem.idem_reconcile_begin('charge', NULL, 'r')", "SELECT idem.idem_reconcile_begin(NULL, false, NULL)",
             "SELECT * FROM idem.idem_reconcile_finish(NULL, '[]')" }) {
        try {
            pqxx::work w(*m_conn);
            w.exec(sql);
            QFAIL(sql);
        } catch (const pqxx::sql_error& e) {
            QVERIFY2(e.sqlstate() == "ID003", sql);
        }
    }
    QCOMPARE(scalar(*m_conn, "SELECT count(*) FROM idem.idem_reconcile_probes"), probes);
    QCOMPARE(scalar(*m_conn, "SELECT count(*) FROM idem.task_idempotency_audit"), audit);

    // Accepted, but failing cleanly at run time: a data-modifying WITH (the READ ONLY transaction
    // refuses it), a text result, a query that sleeps past its timeout. Each stops after 5 keys.
    struct Case {
        QString query;
        QString timeoutMs;
        QString error;
    };
    for (const auto& c : std::initializer_list<Case> { Case { QStringLiteral("WITH d AS (DELETE FROM shop.payments WHERE order_id = $1 RETURNING 1)"
                                                 " SELECT count(*) FROM d"),
                                QStringLiteral("1000"), QStringLiteral("SQLSTATE 25006") },
             Case { QStringLiteral("SELECT 'one: ' || $1"), QStringLiteral("1000"), QStringLiteral("not an integer count") },
             Case { QStringLiteral("SELECT count(*) FROM shop.payments, pg_sleep(1) WHERE order_id = $1"),
                 QStringLiteral("50"), QStringLiteral("SQLSTATE 57014") },
             Case { QStringLiteral("SELECT count(*), 2 FROM shop.payments WHERE order_id = $1"), QStringLiteral("1000"),
                 QStringLiteral("2 columns, not one count") },
             Case { QStringLiteral("SELECT NULL::bigint WHERE $1::text IS NOT NULL"), QStringLiteral("1000"),
                 QStringLiteral("returned NULL") } }) {
        const auto a = add(m_db->dsn(), QStringLiteral("charge"), c.query,
            { QStringLiteral("--timeout-ms"), c.timeoutMs });
        QVERIFY2(a.exitCode == 0, qPrintable(describe(a)));
        QElapsedTimer t;
        t.start();
        const auto r = json(runnerDsn(), { QStringLiteral("run"), QStringLiteral("--operation"), QStringLiteral("charge") })
                           .value(QStringLiteral("runs"))
                           .toArray()
                           .at(0)
                           .toObject();
        QVERIFY2(t.elapsed() < 15000, qPrintable(c.query));
        QCOMPARE(r.value(QStringLiteral("errors")).toInt(), 5);
        QCOMPARE(r.value(QStringLiteral("sampled")).toInt(), 5);
        QVERIFY2(r.value(QStringLiteral("problem")).toString().startsWith(QStringLiteral("stopped after 5 keys' queries failed")),
            qPrintable(r.value(QStringLiteral("problem")).toString()));
        const QString error = r.value(QStringLiteral("offenders")).toArray().at(0).toObject().value(QStringLiteral("error")).toString();
        QVERIFY2(error.contains(c.error), qPrintable(c.query + QStringLiteral(": ") + error));
        QCOMPARE(payments(), before);
    }
    // A run is finished once, by the login that began it.
    try {
        pqxx::work w(*m_conn);
        w.exec("SELECT * FROM idem.idem_reconcile_finish((SELECT max(id) FROM idem.idem_reconcile_runs), '[]')");
        QFAIL("finished twice");
    } catch (const pqxx::sql_error& e) {
        QCOMPARE(e.sqlstate(), std::string("ID004"));
    }
    // Back to the counting probe for the exporter.
    QCOMPARE(add(m_db->dsn(), QStringLiteral("charge"), chargeQuery).exitCode, 0);
}

void TestReconcile::theExporterRunsDueProbesAndServesTheResult()
{
    const QByteArray runsBefore = scalar(*m_conn, "SELECT count(*) FROM idem.idem_reconcile_runs WHERE operation = 'charge'");
    ExporterProcessBase exporter;
    QVERIFY2(exporter.start({ QStringLiteral("--dsn"), QString::fromStdString(runnerDsn()), QStringLiteral("--interval"),
                 QStringLiteral("200ms"), QStringLiteral("--reconcile-every"), QStringLiteral("200ms") }),
        qPrintable(exporter.err()));
    const QString missing = QStringLiteral("idem_reconcile_missing{schema=\"idem\",operation=\"charge\"}");
    const QString duplicated = QStringLiteral("idem_reconcile_duplicated{schema=\"idem\",operation=\"charge\"}");
    const QString sampled = QStringLiteral("idem_reconcile_sampled{schema=\"idem\",operation=\"charge\"}");
    QElapsedTimer t;
    t.start();
    QByteArray body;
    while (t.elapsed() < timeoutMs) {
        body = httpGet(exporter.port(), QStringLiteral("/metrics")).body;
        if (sampleIn(body, sampled) == 21)
            break;
        QTest::qWait(100);
    }
    QVERIFY2(sampleIn(body, sampled) == 21, body.constData());
    QCOMPARE(sampleIn(body, missing), 2.0);
    QCOMPARE(sampleIn(body, duplicated), 1.0);
    QCOMPARE(sampleIn(body, QStringLiteral("idem_reconcile_errors{schema=\"idem\",operation=\"charge\"}")), 0.0);
    QCOMPARE(sampleIn(body, QStringLiteral("idem_reconcile_probes{schema=\"idem\"}")), 2.0);
    QTest::qWait(600); // three more checks: the probe is not due again for an hour
    QCOMPARE(scalar(*m_conn, "SELECT count(*) FROM idem.idem_reconcile_runs WHERE operation = 'charge'").toLongLong(),
        runsBefore.toLongLong() + 1);
    QCOMPARE(scalar(*m_conn, "SELECT runner FROM idem.idem_reconcile_runs WHERE operation = 'charge' ORDER BY id DESC LIMIT 1"),
        QByteArray(runnerLogin) + " (idemctl exporter)");
    QCOMPARE(exporter.stop(), 0);
}

QTEST_GUILESS_MAIN(TestReconcile)
#include "tst_reconcile.moc"
