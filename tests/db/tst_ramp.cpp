#include <QtTest>

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <map>
#include <set>

#include <pqxx/pqxx>

#include "operations/audit.h"
#include "operations/pauseramp.h"
#include "operations/pauses.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/exporterprocess.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"

using idem::test::operator""_b;
using idem::test::scalar;
using idem::test::sqlstateOf;

namespace {
constexpr const char* workerRole = "idem_t_ramp_worker";
constexpr const char* operatorRole = "idem_t_ramp_operator";
constexpr const char* readerRole = "idem_t_ramp_reader";
constexpr const char* password = "pw-ramp";

const idem::SchemaName schema;

QJsonObject json(const idem::test::CliRun& run) { return QJsonDocument::fromJson(run.out.toUtf8()).object(); }

// Waits for the condition with a bounded clock (the evidence, not a sleep).
template <typename F> bool waitUntil(F&& done, int ms = 15000)
{
    QElapsedTimer t;
    t.start();
    while (!done()) {
        if (t.elapsed() > ms)
            return false;
        QTest::qWait(50);
    }
    return true;
}
} // namespace

// Issue 46 item 4: before a resume, what it sends downstream (the forecast); a resume in steps
// that admits exactly the keys whose hash is inside each step's share, advances by the server's
// clock, and pauses the scope again when the admitted keys fail past the threshold; every step
// and the abort on the audit chain, which verifies; idemctl (text and --json) and the exporter.
class TestRamp : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void forecastIsWhatTheDatabaseHolds();
    void rampAdmitsTheHashedShareAndAdvances();
    void failuresPastTheThresholdPauseAgain();
    void badRampsChangeNothing();
    void auditActionsAreARegistry();

private:
    std::unique_ptr<pqxx::connection> login(const char* role)
    {
        return std::make_unique<pqxx::connection>(idem::test::loginDsn(m_db->dsn(), role, password));
    }
    idem::test::CliRun idemctl(const char* role, QStringList args)
    {
        args << QStringLiteral("--dsn") << QString::fromStdString(idem::test::loginDsn(m_db->dsn(), role, password));
        return idem::test::runProgram(idem::test::idemctlPath(), args, 60000);
    }
    void owner(const std::string& sql)
    {
        pqxx::work w(*m_owner);
        w.exec(sql);
        w.commit();
    }
    // One claim as a worker makes it: the decision.
    std::string claim(const std::string& key)
    {
        pqxx::work w(*m_worker);
        const auto d = w.exec_params1("SELECT decision FROM idem.claim($1, 'v1:aa', gen_random_uuid(), 60000)", key)[0]
                           .as<std::string>();
        w.commit();
        return d;
    }
    void failAsWorker(const std::string& key)
    {
        const auto token = scalar(*m_owner, "SELECT owner_token::text FROM idem.task_idempotency WHERE idempotency_key = $1",
            key).toStdString();
        pqxx::work w(*m_worker);
        w.exec_params("SELECT * FROM idem.fail($1, $2::uuid, 'retryable', 'gateway 503', 1000)", key, token);
        w.commit();
    }
    int bucket(const std::string& key)
    {
        return scalar(*m_owner, "SELECT idem.idem_ramp_bucket($1)", key).toInt();
    }
    // A business id whose key (tenant t, operation op) falls in bucket b: searched in SQL.
    std::string keyInBucket(const std::string& operation, int b)
    {
        return scalar(*m_owner,
            "SELECT k FROM generate_series(1, 400000) g, LATERAL (SELECT 't:' || $1 || ':b' || g AS k) x"
            " WHERE idem.idem_ramp_bucket(k) = $2 LIMIT 1",
            operation, b)
            .toStdString();
    }
    void pause(const std::string& operation)
    {
        const auto run = idemctl(operatorRole,
            { QStringLiteral("pause"), QStringLiteral("--tenant"), QStringLiteral("t"), QStringLiteral("--operation"),
                QString::fromStdString(operation), QStringLiteral("--reason"), QStringLiteral("gateway down") });
        QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    }
    idem::Pause pauseOf(const std::string& operation)
    {
        const auto list = idem::listPauses(*m_owner, schema, 15);
        for (const auto& p : list.pauses)
            if (p.tenant == "t" && p.operation == operation)
                return p;
        throw std::runtime_error("no pause of t:" + operation);
    }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
    std::unique_ptr<pqxx::connection> m_worker;
};

void TestRamp::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("ramp", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true }); // with the roles' grants
    idem::test::createLoginRole(workerRole, password, "idem_worker");
    idem::test::createLoginRole(operatorRole, password, "idem_operator");
    idem::test::createLoginRole(readerRole, password, "idem_reader");
    m_worker = login(workerRole);
}

void TestRamp::cleanupTestCase()
{
    m_worker.reset();
    m_owner.reset();
    m_db.reset();
}

void TestRamp::init()
{
    owner("DELETE FROM idem.idem_pauses");
    owner("SELECT idem.idem_pause_summarise()");
}

// A paused operation with retryable keys due now and over the next minutes, keys of another
// operation beside them, and claims turned away counted: idemctl pause forecast (--json and text)
// reports per minute what the table holds, the turned-away claims, their sum; a cap below the
// rows labels them "at least".
void TestRamp::forecastIsWhatTheDatabaseHolds()
{
    pause("fc");
    owner("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts, created_at,"
          " updated_at, next_attempt_at, error_class, errors)"
          " SELECT 't:fc:r' || g, 'v1:x', 'retryable_failed', 1, 5, now(), now(),"
          "        date_trunc('minute', now()) + (g % 7) * interval '1 minute' + interval '10 s'"
          "          - CASE WHEN g % 7 = 0 THEN interval '5 min' ELSE interval '0' END,"
          "        'retryable', '[]' FROM generate_series(1, 140) g");
    owner("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts, created_at,"
          " updated_at, next_attempt_at, error_class, errors)"
          " SELECT 't:other:r' || g, 'v1:x', 'retryable_failed', 1, 5, now(), now(), now() + interval '1 min',"
          "        'retryable', '[]' FROM generate_series(1, 30) g");
    owner("INSERT INTO idem.idem_counters (bucket, tenant, operation, outcome, n) VALUES"
          " (date_trunc('minute', now()), 't', 'fc', 'paused', 37), (date_trunc('minute', now()), 't', 'other', 'paused', 5)");

    const auto run = idemctl(readerRole,
        { QStringLiteral("pause"), QStringLiteral("forecast"), QStringLiteral("--tenant"), QStringLiteral("t"),
            QStringLiteral("--operation"), QStringLiteral("fc"), QStringLiteral("--minutes"), QStringLiteral("10"),
            QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto f = json(run);
    // What the database holds, counted here without the index or the cap.
    std::map<QString, qint64> expected;
    {
        pqxx::read_transaction t(*m_owner);
        for (const auto& row : t.exec(
                 "SELECT to_char(greatest(date_trunc('minute', next_attempt_at), date_trunc('minute', now()))"
                 "   AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI'), count(*) FROM idem.task_idempotency"
                 " WHERE idempotency_key LIKE 't:fc:%' AND status = 'retryable_failed' GROUP BY 1"))
            expected[QString::fromStdString(row[0].as<std::string>())] = row[1].as<qint64>();
    }
    QCOMPARE(expected.size(), std::size_t(7));
    std::map<QString, qint64> got;
    for (const auto& m : f[QStringLiteral("due_by_minute")].toArray())
        got[m[QStringLiteral("minute")].toString().left(16)] = m[QStringLiteral("due")].toInteger();
    QCOMPARE(got, expected);
    QCOMPARE(f[QStringLiteral("due_total")].toInteger(), 140);
    QCOMPARE(f[QStringLiteral("due_now")].toInteger(), 20); // g % 7 = 0: due five minutes ago
    QCOMPARE(f[QStringLiteral("turned_away")].toInteger(), 37);
    QCOMPARE(f[QStringLiteral("total")].toInteger(), 177);
    QCOMPARE(f[QStringLiteral("at_least")].toBool(), false);

    const auto text = idemctl(readerRole,
        { QStringLiteral("pause"), QStringLiteral("forecast"), QStringLiteral("--tenant"), QStringLiteral("t"),
            QStringLiteral("--operation"), QStringLiteral("fc"), QStringLiteral("--minutes"), QStringLiteral("10") });
    QVERIFY2(text.exitCode == 0, qPrintable(idem::test::describe(text)));
    QVERIFY2(text.out.contains(QStringLiteral("retries due in the next 10 min: 140 (20 due already)"))
            && text.out.contains(QStringLiteral("claims turned away since")) && text.out.contains(QStringLiteral("sum: 177")),
        qPrintable(text.out));

    // A cap below the rows: lower bounds, said so.
    const auto capped = idemctl(readerRole,
        { QStringLiteral("pause"), QStringLiteral("forecast"), QStringLiteral("--tenant"), QStringLiteral("t"),
            QStringLiteral("--operation"), QStringLiteral("fc"), QStringLiteral("--cap"), QStringLiteral("50") });
    QVERIFY2(capped.exitCode == 0, qPrintable(idem::test::describe(capped)));
    QVERIFY2(capped.out.contains(QStringLiteral("sum: at least ")) && capped.out.contains(QStringLiteral("lower bounds")),
        qPrintable(capped.out));
    const auto cappedJson = idemctl(readerRole,
        { QStringLiteral("pause"), QStringLiteral("forecast"), QStringLiteral("--operation"), QStringLiteral("fc"),
            QStringLiteral("--tenant"), QStringLiteral("t"), QStringLiteral("--cap"), QStringLiteral("50"),
            QStringLiteral("--json") });
    const auto cj = json(cappedJson);
    QVERIFY(cj[QStringLiteral("at_least")].toBool());
    QVERIFY(cj[QStringLiteral("due_total")].toInteger() <= 50);

    // No pause of that scope: exit 3.
    const auto none = idemctl(readerRole,
        { QStringLiteral("pause"), QStringLiteral("forecast"), QStringLiteral("--operation"), QStringLiteral("nothing") });
    QCOMPARE(none.exitCode, 3);
}

// A ramp of three short steps (10 %, 50 %, 100 %): every claim's answer is exactly what its key's
// bucket and the step say (acquired below the step's percentage times 100, paused otherwise), the
// boundary keys 999 / 1000 and 4999 / 5000 included; each batch of claims runs in one statement,
// so one step (by the transaction's clock) decides all of it, and the step is read beside it. The
// step advances by the server's clock, waited for in the list; the ramp's start and its second
// step are audited; at 100 % the pause no longer covers anything.
void TestRamp::rampAdmitsTheHashedShareAndAdvances()
{
    pause("rp");
    const auto k999 = keyInBucket("rp", 999), k1000 = keyInBucket("rp", 1000), k4999 = keyInBucket("rp", 4999),
               k5000 = keyInBucket("rp", 5000);
    QVERIFY(!k999.empty() && !k1000.empty() && !k4999.empty() && !k5000.empty());

    const auto run = idemctl(operatorRole,
        { QStringLiteral("resume"), QStringLiteral("--tenant"), QStringLiteral("t"), QStringLiteral("--operation"),
            QStringLiteral("rp"), QStringLiteral("--reason"), QStringLiteral("gateway back"), QStringLiteral("--ramp"),
            QStringLiteral("10,50,100"), QStringLiteral("--step-seconds"), QStringLiteral("3"),
            QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QCOMPARE(json(run)[QStringLiteral("steps")].toArray().size(), 3);

    // Claims of the given keys in one statement, with the step that statement saw: the count of
    // answers that are not what the key's bucket and the step say, and the step.
    const auto batch = [&](const std::vector<std::string>& keys, int& step, int& acquired) {
        std::string list = "{";
        for (std::size_t i = 0; i < keys.size(); ++i)
            list += (i ? "," : "") + keys[i];
        list += "}";
        pqxx::work w(*m_owner);
        const auto r = w.exec_params1(
            "SELECT idem.idem_ramp_step(p),"
            "       count(*) FILTER (WHERE (c.decision = 'acquired')"
            "                          <> (idem.idem_ramp_bucket(k) < p.ramp_steps[idem.idem_ramp_step(p) + 1] * 100)"
            "                       OR c.decision NOT IN ('acquired', 'paused')),"
            "       count(*) FILTER (WHERE c.decision = 'acquired')"
            "  FROM idem.idem_pauses p, unnest($1::text[]) k, LATERAL idem.claim(k, 'v1:aa', gen_random_uuid(), 60000) c"
            " WHERE p.tenant = 't' AND p.operation = 'rp' GROUP BY p.*",
            list);
        w.commit();
        step = r[0].as<int>();
        acquired = r[2].as<int>();
        return r[1].as<int>();
    };
    const auto keys = [](int from, int to) {
        std::vector<std::string> out;
        for (int i = from; i < to; ++i)
            out.push_back("t:rp:k" + std::to_string(i));
        return out;
    };
    int step = -1, acquired = 0;
    QCOMPARE(batch({ k999, k1000, k4999, k5000 }, step, acquired), 0);
    QCOMPARE(step, 0); // a 3 s step: the first claims come well inside it
    QCOMPARE(acquired, 1); // k999 alone
    QCOMPARE(batch(keys(0, 400), step, acquired), 0);
    if (step == 0)
        QCOMPARE(pauseOf("rp").ramp->claimed, qint64(acquired + 1));

    // Step 2 (50 %), by the server's clock: waited for in the list, not slept.
    QVERIFY(waitUntil([&] { return pauseOf("rp").ramp && pauseOf("rp").ramp->step == 1; }));
    QCOMPARE(batch({ k1000, k4999, k5000 }, step, acquired), 0);
    QCOMPARE(step, 1);
    QCOMPARE(acquired, 2); // k1000 and k4999; k5000 still paused
    QCOMPARE(batch(keys(400, 800), step, acquired), 0);
    QVERIFY2(acquired > 100 && acquired < 300, qPrintable(QString::number(acquired))); // about half of 400
    const auto list = idemctl(readerRole, { QStringLiteral("pauses") });
    QVERIFY2(list.out.contains(QStringLiteral("ramping: step 2 of 3, 50 % of keys admitted"))
            || pauseOf("rp").ramp->step != 1,
        qPrintable(list.out));

    // 100 %: the pause ends by itself; every key acquires.
    QVERIFY(waitUntil([&] { return !pauseOf("rp").active; }));
    QCOMPARE(claim(k5000), std::string("acquired"));
    QCOMPARE(scalar(*m_owner, "SELECT string_agg(action || ':' || reason, ' | ' ORDER BY id) FROM idem.task_idempotency_audit"
                              " WHERE action IN ('ramp', 'ramp_step') AND after_image ->> 'operation' = 'rp'"),
        "ramp:gateway back | ramp_step:ramp step 2 of 3: 50 % of keys admitted"_b);
    QVERIFY(idem::verifyChain(*m_owner, schema).ok());
}

// Admitted keys failing: the step aborts only once it admitted --abort-min claims and failed /
// claimed exceeds --abort-above; then the scope is paused whole again (its reason says why), the
// abort is audited, the exporter serves idem_pause_ramp_aborted, and the chain verifies.
void TestRamp::failuresPastTheThresholdPauseAgain()
{
    pause("ab");
    idem::test::ExporterProcessBase exporter;
    QVERIFY2(exporter.start({ QStringLiteral("--dsn"),
                 QString::fromStdString(idem::test::loginDsn(m_db->dsn(), readerRole, password)),
                 QStringLiteral("--interval"), QStringLiteral("200ms") }),
        qPrintable(exporter.err()));
    const auto scrape = [&] { return idem::test::httpGet(exporter.port(), QStringLiteral("/metrics")).body; };
    const auto run = idemctl(operatorRole,
        { QStringLiteral("resume"), QStringLiteral("--tenant"), QStringLiteral("t"), QStringLiteral("--operation"),
            QStringLiteral("ab"), QStringLiteral("--reason"), QStringLiteral("try again"), QStringLiteral("--ramp"),
            QStringLiteral("50,100"), QStringLiteral("--step-minutes"), QStringLiteral("10"),
            QStringLiteral("--abort-above"), QStringLiteral("0.3"), QStringLiteral("--abort-min"), QStringLiteral("10") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const QString step = QStringLiteral("idem_pause_ramp_step{schema=\"idem\",tenant=\"t\",operation=\"ab\"}");
    QVERIFY(waitUntil([&] { return idem::test::sampleIn(scrape(), step) == 1.0; }));
    QCOMPARE(idem::test::sampleIn(scrape(), QStringLiteral("idem_pause_ramp_admitted_percent{schema=\"idem\",tenant=\"t\",operation=\"ab\"}")), 50.0);

    std::vector<std::string> admitted;
    for (int i = 0; admitted.size() < 20; ++i) {
        const std::string k = "t:ab:k" + std::to_string(i);
        if (claim(k) == "acquired")
            admitted.push_back(k);
    }
    // 3 of 20 fail (15 %): no abort.
    for (int i = 0; i < 3; ++i)
        failAsWorker(admitted[i]);
    QVERIFY(pauseOf("ab").ramp.has_value());
    QCOMPARE(pauseOf("ab").ramp->failed, qint64(3));
    QCOMPARE(pauseOf("ab").ramp->claimed, qint64(20));
    // 6 of 20 (30 %) is not above 0.3; the 7th (35 %) is.
    for (int i = 3; i < 6; ++i)
        failAsWorker(admitted[i]);
    QVERIFY(pauseOf("ab").ramp.has_value());
    failAsWorker(admitted[6]);
    const auto p = pauseOf("ab");
    QVERIFY(!p.ramp.has_value());
    QVERIFY(p.active && !p.untilUs);
    QVERIFY(p.rampAbortedAtUs.has_value());
    QCOMPARE(QString::fromStdString(p.reason),
        QStringLiteral("ramp aborted at step 1 of 2 (50 % of keys): 7 of 20 admitted claims failed (35.0 %, above 30.0 %)"));
    // An admitted key no longer acquires: the scope is paused whole.
    QCOMPARE(claim(keyInBucket("ab", 10)), std::string("paused"));
    QCOMPARE(claim(admitted[7]), std::string("in_progress"));
    QCOMPARE(scalar(*m_owner, "SELECT count(*) || ' ' || min(os_user) || ' ' || min(after_image ->> 'failed')"
                              " FROM idem.task_idempotency_audit WHERE action = 'ramp_abort'"
                              " AND after_image ->> 'operation' = 'ab'"),
        "1 ramp 7"_b);
    const QString aborted = QStringLiteral("idem_pause_ramp_aborted{schema=\"idem\",tenant=\"t\",operation=\"ab\"}");
    QVERIFY(waitUntil([&] { return idem::test::sampleIn(scrape(), aborted) == 1.0; }));
    QVERIFY(qIsNaN(idem::test::sampleIn(scrape(), step)));
    const auto list = idemctl(readerRole, { QStringLiteral("pauses"), QStringLiteral("--json") });
    const auto listed = json(list)[QStringLiteral("pauses")].toArray();
    QVERIFY(std::any_of(listed.begin(), listed.end(), [](const QJsonValue& v) {
        return v[QStringLiteral("operation")].toString() == QStringLiteral("ab")
            && !v[QStringLiteral("ramp_aborted_at")].isNull() && v[QStringLiteral("ramp")].isNull();
    }));
    const auto verify = idemctl(readerRole, { QStringLiteral("audit"), QStringLiteral("verify") });
    QVERIFY2(verify.exitCode == 0 && verify.out.startsWith(QLatin1String("ok: ")), qPrintable(idem::test::describe(verify)));
}

// Bad ramps are refused before anything changes; a reader and a worker may not ramp.
void TestRamp::badRampsChangeNothing()
{
    pause("bad");
    const auto before = scalar(*m_owner, "SELECT count(*) FROM idem.task_idempotency_audit");
    for (const char* steps : { "10,50", "50,10,100", "0,100", "100", "10,,100", "10,50,101" }) {
        const auto run = idemctl(operatorRole,
            { QStringLiteral("resume"), QStringLiteral("--tenant"), QStringLiteral("t"), QStringLiteral("--operation"),
                QStringLiteral("bad"), QStringLiteral("--reason"), QStringLiteral("x"), QStringLiteral("--ramp"),
                QLatin1String(steps) });
        QVERIFY2(run.exitCode == 2, qPrintable(idem::test::describe(run)));
    }
    QCOMPARE(sqlstateOf(*m_owner, "SELECT * FROM idem.idem_resume_ramp('t', 'bad', '{10,100}', 999, 0.2, 20, 'r')"),
        std::string("ID003"));
    QCOMPARE(sqlstateOf(*m_owner, "SELECT * FROM idem.idem_resume_ramp('t', 'bad', '{10,100}', 1000, 0, 20, 'r')"),
        std::string("ID003"));
    QCOMPARE(sqlstateOf(*m_owner, "SELECT * FROM idem.idem_resume_ramp('t', 'none', '{10,100}', 1000, 0.2, 20, 'r')"),
        std::string("ID002"));
    auto reader = login(readerRole);
    QCOMPARE(sqlstateOf(*reader, "SELECT * FROM idem.idem_resume_ramp('t', 'bad', '{10,100}', 1000, 0.2, 20, 'r')"),
        std::string("42501"));
    QCOMPARE(sqlstateOf(*m_worker, "SELECT * FROM idem.idem_resume_ramp('t', 'bad', '{10,100}', 1000, 0.2, 20, 'r')"),
        std::string("42501"));
    // The registry and the tally: readers read them, nobody but the owner writes them, workers see neither.
    QCOMPARE(sqlstateOf(*reader, "SELECT count(*) FROM idem.idem_audit_actions, idem.idem_ramp_tally"), std::string("ok"));
    QCOMPARE(sqlstateOf(*reader, "INSERT INTO idem.idem_audit_actions VALUES ('forged', true)"), std::string("42501"));
    QCOMPARE(sqlstateOf(*m_worker, "SELECT count(*) FROM idem.idem_ramp_tally"), std::string("42501"));
    auto op = login(operatorRole);
    QCOMPARE(sqlstateOf(*op, "INSERT INTO idem.idem_ramp_tally (tenant, operation, step, slot) VALUES ('t', 'bad', 0, 0)"),
        std::string("42501"));
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.task_idempotency_audit"), before);
    QVERIFY(!pauseOf("bad").ramp.has_value());
}

// The audit actions are rows of idem_audit_actions: every action the chain holds is one, an entry
// of an unknown action or with a key where its action takes none is refused (ID003), and adding
// an action is an INSERT.
void TestRamp::auditActionsAreARegistry()
{
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM pg_constraint WHERE conrelid = 'idem.task_idempotency_audit'::regclass"
                              " AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%action%'"),
        "0"_b);
    QCOMPARE(scalar(*m_owner, "SELECT string_agg(action, ',' ORDER BY action) FROM idem.idem_audit_actions"
                              " WHERE action IN ('requeue', 'pause', 'ramp', 'ramp_step', 'ramp_abort', 'reconcile_probe')"),
        "pause,ramp,ramp_abort,ramp_step,reconcile_probe,requeue"_b);
    QCOMPARE(sqlstateOf(*m_owner, "SELECT idem.audit_append('', 'no_such_action', 'r', 'a', '{}', '{}')"),
        std::string("ID003"));
    QCOMPARE(sqlstateOf(*m_owner, "SELECT idem.audit_append('t:op:1', 'pause', 'r', 'a', '{}', '{}')"),
        std::string("ID003"));
    QCOMPARE(sqlstateOf(*m_owner, "SELECT idem.audit_append('', 'requeue', 'r', 'a', '{}', '{}')"), std::string("ID003"));
    owner("INSERT INTO idem.idem_audit_actions (action, keyless) VALUES ('t_custom', true)");
    QCOMPARE(sqlstateOf(*m_owner, "SELECT idem.audit_append('', 't_custom', 'r', 'a', '{}', '{}')"), std::string("ok"));
    QVERIFY(idem::verifyChain(*m_owner, schema).ok());
}

QTEST_GUILESS_MAIN(TestRamp)
#include "tst_ramp.moc"
