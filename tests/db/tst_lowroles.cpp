#include <QtTest>

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <pqxx/pqxx>

#include "core/workerversion.h"
#include "operations/purge.h"
#include "operations/stats.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"

using idem::test::scalar;
using idem::test::operator""_b;

namespace {
// Cluster-wide login roles, named for this test alone.
constexpr const char* workerRole = "idem_t_low_worker";
constexpr const char* operatorRole = "idem_t_low_operator";
constexpr const char* readerRole = "idem_t_low_reader";
constexpr const char* outsiderRole = "idem_t_low_outsider";
constexpr const char* password = "pw-low-roles";

std::int64_t number(pqxx::connection& c, const std::string& sql)
{
    return std::stoll(scalar(c, sql).toStdString());
}

// A flush of `rows` rows of one minute, `minutesAgo` before the server's current minute.
std::string batch(pqxx::connection& c, int minutesAgo, const char* outcome, std::int64_t n, int rows)
{
    pqxx::nontransaction t(c);
    return t.exec_params("SELECT jsonb_agg(jsonb_build_object('m', extract(epoch FROM date_trunc('minute', now())"
                         " - $1 * interval '1 minute')::bigint, 't', 'tenant-' || i, 'o', 'charge', 'w', $2::text,"
                         " 'n', $3::bigint))::text FROM generate_series(1, $4) i",
        minutesAgo, outcome, n, rows)
        .at(0)
        .at(0)
        .as<std::string>();
}

QJsonObject json(const idem::test::CliRun& run)
{
    return QJsonDocument::fromJson(run.out.toUtf8()).object();
}
} // namespace

// Issue #31: what the lowest roles (a worker, a reader, any login role) could do to blind or
// impersonate the operators, each tried as that role.
class TestLowRoles : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void workerCannotOverflowTheCounters();
    void futureMinutesAreNotCounted();
    void plantedShadowsNeverRunAsTheOperator();
    void anyRoleCannotStopOrFakePurges();
    void twoSchemasInOneDatabasePurge();
    void readerHoldingTheExactRefreshIsNamed();
    void retentionCountsFromTheCompletion();
    void conflictDoesNotRevealTheStoredDigest();

private:
    idem::test::CliRun idemctl(const char* role, QStringList args, const char* application = "idem-t-low");
    std::unique_ptr<pqxx::connection> login(const char* role, const char* application = "idem-t-low");

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
};

void TestLowRoles::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("lowroles");
    m_owner = m_db->connect();
    // As on a cluster made before PostgreSQL 15: everyone may create objects in public.
    pqxx::nontransaction(*m_owner).exec("GRANT CREATE ON SCHEMA public TO PUBLIC");
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    idem::test::createLoginRole(workerRole, password, "idem_worker");
    idem::test::createLoginRole(operatorRole, password, "idem_operator");
    idem::test::createLoginRole(readerRole, password, "idem_reader");
    idem::test::createLoginRole(outsiderRole, password, "");
}

void TestLowRoles::cleanupTestCase()
{
    m_owner.reset();
    m_db.reset();
}

std::unique_ptr<pqxx::connection> TestLowRoles::login(const char* role, const char* application)
{
    return std::make_unique<pqxx::connection>(idem::test::dsnWith(
        idem::test::loginDsn(m_db->dsn(), role, password), { { "application_name", application } }));
}

idem::test::CliRun TestLowRoles::idemctl(const char* role, QStringList args, const char* application)
{
    const auto dsn = idem::test::dsnWith(idem::test::loginDsn(m_db->dsn(), role, password),
        { { "application_name", application } });
    args << QStringLiteral("--dsn") << QString::fromStdString(dsn);
    return idem::test::runProgram(idem::test::idemctlPath(), args, 60000);
}

// Item 1: ten flushes, each inside the documented bounds, used to overflow a minute's sum
// (22003): every reading of the figures failed, the roll-up and the shared exact refresh with
// them, and honest flushes for that minute were refused. Now each is refused as implausible and
// recorded with who sent it; the honest flush lands; every reading works.
void TestLowRoles::workerCannotOverflowTheCounters()
{
    pqxx::nontransaction(*m_owner).exec("TRUNCATE idem.idem_counters, idem.idem_counters_total, idem.idem_counters_hourly, idem.idem_counters_refused");
    auto attacker = login(workerRole, "poisoner");
    const std::string now = batch(*attacker, 0, "acquired", 100000000000000LL, 10000);
    const std::string old = batch(*attacker, 3 * 24 * 60, "acquired", 100000000000000LL, 10000);
    for (const auto& b : { now, now, now, now, now, now, now, now, now, now, old, old, old, old, old, old, old, old, old, old }) {
        pqxx::nontransaction t(*attacker);
        QCOMPARE(t.exec_params("SELECT idem.add_counters($1::jsonb)", b).at(0).at(0).as<int>(), 0);
    }
    auto honest = login(workerRole, "honest-worker");
    {
        const auto fresh = batch(*honest, 0, "acquired", 5, 1);
        const auto late = batch(*honest, 3 * 24 * 60, "acquired", 3, 1);
        pqxx::nontransaction t(*honest);
        QCOMPARE(t.exec_params("SELECT idem.add_counters($1::jsonb)", fresh).at(0).at(0).as<int>(), 1);
        QCOMPARE(t.exec_params("SELECT idem.add_counters($1::jsonb)", late).at(0).at(0).as<int>(), 1);
    }
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.idem_counters_refused"), 20);
    QCOMPARE(scalar(*m_owner, "SELECT db_role || ' ' || application || ' ' || host(client_addr) || ' ' || rows"
                              " FROM idem.idem_counters_refused ORDER BY id DESC LIMIT 1"),
        QByteArray(workerRole) + " poisoner 127.0.0.1 10000");

    // What the operators see: every reading works and shows the honest counts and the refusals.
    const auto stats = idemctl(operatorRole, { QStringLiteral("stats"), QStringLiteral("--json") });
    QVERIFY2(stats.exitCode == 0, qPrintable(idem::test::describe(stats)));
    const auto j = json(stats);
    QCOMPARE(j[QStringLiteral("claims")].toInteger(), 5);
    const auto refused = j[QStringLiteral("counter_flushes_refused")].toObject();
    QCOMPARE(refused[QStringLiteral("last_24h")].toInteger(), 20);
    const auto last = refused[QStringLiteral("last")].toObject();
    QCOMPARE(last[QStringLiteral("role")].toString(), QString::fromLatin1(workerRole));
    QCOMPARE(last[QStringLiteral("application")].toString(), QStringLiteral("poisoner"));
    QCOMPARE(last[QStringLiteral("client_addr")].toString(), QStringLiteral("127.0.0.1"));
    QVERIFY2(last[QStringLiteral("reason")].toString().contains(QStringLiteral("more than the 10000000")),
        qPrintable(last[QStringLiteral("reason")].toString()));
    const auto text = idemctl(operatorRole, { QStringLiteral("stats") });
    QVERIFY2(text.exitCode == 0, qPrintable(idem::test::describe(text)));
    QVERIFY2(text.out.contains(QStringLiteral("counter flushes refused as implausible: 20 in the last 24 h"))
            && text.out.contains(QStringLiteral("by role idem_t_low_worker (application poisoner, from 127.0.0.1)")),
        qPrintable(text.out));
    const auto prom = idemctl(operatorRole, { QStringLiteral("stats"), QStringLiteral("--prometheus") });
    QVERIFY2(prom.out.contains(QStringLiteral("idem_outcome_flushes_refused{schema=\"idem\"} 20")), qPrintable(prom.out));

    // The roll-up of the hour 3 days back and the shared exact refresh run through.
    auto op = login(operatorRole);
    pqxx::nontransaction(*op).exec("SELECT * FROM idem.idem_counters_maintain(100000)");
    QCOMPARE(number(*m_owner, "SELECT coalesce(sum(n), 0) FROM idem.idem_counters_hourly"), 3);
    pqxx::nontransaction(*m_owner).exec("UPDATE idem.idem_stats_exact SET taken_at = '-infinity', attempt_at = NULL");
    QVERIFY(idem::refreshSharedExact(*op, idem::SchemaName(), 60, 5000));
}

// Item 1: a flush dated ahead of the server's clock is counted in the current minute, and a
// minute after now that is stored (written before schema v13) is in no window.
void TestLowRoles::futureMinutesAreNotCounted()
{
    pqxx::nontransaction(*m_owner).exec("TRUNCATE idem.idem_counters, idem.idem_counters_total");
    auto worker = login(workerRole);
    const auto ahead = batch(*worker, -45, "conflict", 7, 1);
    pqxx::nontransaction(*worker).exec_params("SELECT idem.add_counters($1::jsonb)", ahead);
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.idem_counters WHERE bucket > now()"), 0);
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.idem_counters_total WHERE bucket > now()"), 0);
    pqxx::nontransaction(*m_owner).exec(
        "INSERT INTO idem.idem_counters_total (minutes, bucket, outcome, n)"
        " VALUES (1, date_trunc('minute', now()) + interval '10 minutes', 'conflict', 1000)");
    const auto stats = idemctl(operatorRole, { QStringLiteral("stats"), QStringLiteral("--json") });
    QVERIFY2(stats.exitCode == 0, qPrintable(idem::test::describe(stats)));
    QCOMPARE(json(stats)[QStringLiteral("digest_conflicts")].toInteger(), 7);
}

// Item 2: a worker plants, in a schema on the operator's search_path that it may write,
// operators and functions that are closer matches than pg_catalog's for what Idem's functions
// and reads call. None of them may run as the operator: not in `idemctl stats` (--exact
// included), not in a scheduled purge (CALL idem_purge_run as pg_cron runs it).
void TestLowRoles::plantedShadowsNeverRunAsTheOperator()
{
    {
        pqxx::work w(*m_owner);
        w.exec("TRUNCATE idem.task_idempotency, idem.idem_stored_requests");
        w.exec("DELETE FROM idem.idem_retention_policy");
        // Completed 2 hours ago: 30 days of retention keep them; one hour would not.
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts,"
               " created_at, updated_at) SELECT 't:charge:k' || i, 'v1:x', 'succeeded', '{}', 1,"
               " now() - interval '3 hours', now() - interval '2 hours' FROM generate_series(1, 5) i");
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until,"
               " attempts, created_at, updated_at) VALUES ('t:charge:busy', 'v1:x', 'processing',"
               " gen_random_uuid(), now() + interval '1 hour', 2, now() - interval '2 hours', now())");
        w.commit();
    }
    auto worker = login(workerRole);
    {
        pqxx::work w(*worker);
        w.exec(R"sql(
CREATE TABLE public.planted_log (who text, what text);
GRANT ALL ON public.planted_log TO PUBLIC;
CREATE FUNCTION public.planted(what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.planted_log VALUES (current_user, what);
    BEGIN
        PERFORM idem.idem_set_retention('charge', 3600, 'planted', 'nobody');
    EXCEPTION WHEN others THEN NULL;
    END;
END $$;
CREATE FUNCTION public.p_mul(integer, interval) RETURNS interval LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('*(integer, interval)'); RETURN $1::float8 OPERATOR(pg_catalog.*) $2; END $$;
CREATE OPERATOR public.* (FUNCTION = public.p_mul, LEFTARG = integer, RIGHTARG = interval);
CREATE FUNCTION public.p_div(double precision, bigint) RETURNS double precision LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('/(double precision, bigint)'); RETURN $1 OPERATOR(pg_catalog./) $2::float8; END $$;
CREATE OPERATOR public./ (FUNCTION = public.p_div, LEFTARG = double precision, RIGHTARG = bigint);
CREATE FUNCTION public.p_ge(real, integer) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('>=(real, integer)'); RETURN $1 OPERATOR(pg_catalog.>=) $2::real; END $$;
CREATE OPERATOR public.>= (FUNCTION = public.p_ge, LEFTARG = real, RIGHTARG = integer);
CREATE FUNCTION public.p_gen(double precision, numeric) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('>=(double precision, numeric)'); RETURN $1 OPERATOR(pg_catalog.>=) $2::float8; END $$;
CREATE OPERATOR public.>= (FUNCTION = public.p_gen, LEFTARG = double precision, RIGHTARG = numeric);
CREATE FUNCTION public.p_muln(numeric, double precision) RETURNS double precision LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('*(numeric, double precision)'); RETURN $1::float8 OPERATOR(pg_catalog.*) $2; END $$;
CREATE OPERATOR public.* (FUNCTION = public.p_muln, LEFTARG = numeric, RIGHTARG = double precision);
CREATE FUNCTION public.unnest(bigint[]) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('unnest(bigint[])'); RETURN QUERY SELECT pg_catalog.unnest($1); END $$;
CREATE FUNCTION public.jsonb_build_array(integer, bigint) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN PERFORM public.planted('jsonb_build_array(integer, bigint)');
      RETURN pg_catalog.jsonb_build_array(VARIADIC ARRAY[$1::text, $2::text]); END $$;
)sql");
        w.commit();
    }
    // The plants work: what a role calls unqualified with the default path runs them.
    pqxx::nontransaction(*worker).exec("SELECT 2 * interval '1 minute', 1.5::float8 / 2::bigint");
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM public.planted_log"), 2);
    pqxx::nontransaction(*m_owner).exec("TRUNCATE public.planted_log");

    for (const QStringList& args : { QStringList { QStringLiteral("stats"), QStringLiteral("--exact") },
             QStringList { QStringLiteral("stats"), QStringLiteral("--exact"), QStringLiteral("--json") },
             QStringList { QStringLiteral("stats"), QStringLiteral("--json") },
             QStringList { QStringLiteral("stats"), QStringLiteral("--tenant"), QStringLiteral("t"),
                 QStringLiteral("--exact") } }) {
        const auto run = idemctl(operatorRole, args);
        QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    }
    auto op = login(operatorRole);
    pqxx::nontransaction(*op).exec("CALL idem.idem_purge_run(1000, 5)");
    pqxx::nontransaction(*op).exec("SELECT * FROM idem.idem_exact_stats(NULL, NULL, 60)");
    // Schema v18: the worker's version report (as its definer) and the events listing with it.
    QVERIFY(idem::reportVersion(*worker, idem::SchemaName(), "planted-host", "9.9.9").deployId > 0);
    const auto events = idemctl(operatorRole, { QStringLiteral("events"), QStringLiteral("--json") });
    QVERIFY2(
        events.exitCode == 0 && events.out.contains(QLatin1String("9.9.9")), qPrintable(idem::test::describe(events)));
    for (const QStringList& args :
        { QStringList { QStringLiteral("annotate"), QStringLiteral("--text"), QStringLiteral("planted?") },
            QStringList { QStringLiteral("latency"), QStringLiteral("--json") },
            // The audit list and the task pages turn times into microseconds: numeric times an
            // integer, which an unqualified * resolved to the *(numeric, double precision) plant.
            QStringList { QStringLiteral("audit"), QStringLiteral("list"), QStringLiteral("--json") },
            QStringList { QStringLiteral("tasks"), QStringLiteral("--json") },
            QStringList { QStringLiteral("pauses"), QStringLiteral("--json") },
            QStringList { QStringLiteral("pause"), QStringLiteral("--operation"), QStringLiteral("planted"),
                QStringLiteral("--reason"), QStringLiteral("planted?"), QStringLiteral("--until"),
                QDateTime::currentDateTimeUtc().addDays(2).toString(Qt::ISODate) },
            QStringList { QStringLiteral("resume"), QStringLiteral("--operation"), QStringLiteral("planted"),
                QStringLiteral("--reason"), QStringLiteral("planted?") } }) {
        const auto run = idemctl(operatorRole, args);
        QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    }

    QCOMPARE(scalar(*m_owner, "SELECT coalesce(string_agg(who || ': ' || what, ', '), 'nothing') FROM public.planted_log"),
        "nothing"_b);
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.idem_retention_policy"), 0);
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE status = 'succeeded'"), 5);
    pqxx::nontransaction(*m_owner).exec("DROP TABLE public.planted_log CASCADE; DROP FUNCTION public.planted CASCADE;"
                                        " DROP FUNCTION public.p_mul, public.p_div, public.p_ge, public.p_gen,"
                                        " public.p_muln, public.unnest(bigint[]),"
                                        " public.jsonb_build_array(integer, bigint) CASCADE");
}

// Item 4: any login role held the advisory keys of the next purge runs (every purge failed
// with 55P03) or of a dead run (shown as running for ever). Liveness is now the run's own
// backend holding a key nobody could know in advance.
void TestLowRoles::anyRoleCannotStopOrFakePurges()
{
    auto outsider = login(outsiderRole);
    const auto next = number(*m_owner, "SELECT coalesce(max(id), 0) FROM idem.idem_purge_runs");
    // v9's keys for the next 50 run ids, and v13's can only be guessed.
    pqxx::nontransaction(*outsider).exec_params(
        "SELECT pg_advisory_lock((hashtext('idem.purge')::bigint << 32) | (i & 4294967295))"
        "  FROM generate_series($1::bigint + 1, $1::bigint + 50) i",
        next);
    auto op = login(operatorRole);
    idem::PurgeOptions o;
    o.reason = "scheduled purge";
    const auto r = idem::runPurge(*op, idem::SchemaName(), o);
    QVERIFY(r.runId > next);

    // A run whose session died, with its key taken up by a reader who read it from the run's row.
    auto dying = login(operatorRole);
    std::int64_t dead = 0;
    {
        pqxx::work w(*dying);
        dead = w.exec("SELECT idem.idem_purge_begin('purge that dies', 'test')").at(0).at(0).as<std::int64_t>();
        w.commit();
    }
    auto reader = login(readerRole);
    const auto keys = pqxx::nontransaction(*reader).exec_params(
        "SELECT lock_key1, lock_key2 FROM idem.idem_purge_runs WHERE id = $1", dead);
    dying.reset();
    QVERIFY(idem::test::waitUntil([&] {
        return number(*m_owner, "SELECT count(*) FROM pg_stat_activity WHERE usename = 'idem_t_low_operator'"
                                " AND application_name = 'idem-t-low' AND backend_type = 'client backend'") <= 1;
    }));
    // (v9's key of that run id the outsider holds already)
    QCOMPARE(scalar(*reader, "SELECT pg_try_advisory_lock($1::int, $2::int)", keys.at(0).at(0).as<int>(),
                 keys.at(0).at(1).as<int>()),
        "t"_b);
    idem::runPurge(*op, idem::SchemaName(), o);
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_purge_runs WHERE id = " + std::to_string(dead)), "abandoned"_b);
}

// Item 4: two Idem schemas in one database computed the same lock keys; a run in each at once
// collided (the second failed with 55P03).
void TestLowRoles::twoSchemasInOneDatabasePurge()
{
    const idem::SchemaName second("idem_second");
    idem::migrate(*m_owner, { second, false });
    auto first = m_db->connect();
    auto other = m_db->connect();
    std::int64_t a = 0;
    std::int64_t b = 0;
    {
        pqxx::work w(*first);
        a = w.exec("SELECT idem.idem_purge_begin('first', 'test')").at(0).at(0).as<std::int64_t>();
        w.commit();
    }
    pqxx::nontransaction(*m_owner).exec_params(
        "SELECT setval(pg_get_serial_sequence('idem_second.idem_purge_runs', 'id'), $1::bigint, false)", a);
    {
        pqxx::work w(*other);
        b = w.exec("SELECT idem_second.idem_purge_begin('second', 'test')").at(0).at(0).as<std::int64_t>();
        w.commit();
    }
    QCOMPARE(b, a);
    pqxx::nontransaction(*first).exec_params("SELECT * FROM idem.idem_purge_finish($1)", a);
    pqxx::nontransaction(*other).exec_params("SELECT * FROM idem_second.idem_purge_finish($1)", b);
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem_second.idem_purge_runs WHERE id = " + std::to_string(b)), "finished"_b);
}

// Item 6: a reader that began the shared exact refresh and keeps its transaction open holds
// the one row: nobody else can refresh. The figures name it, and readers count for themselves.
void TestLowRoles::readerHoldingTheExactRefreshIsNamed()
{
    pqxx::nontransaction(*m_owner).exec("UPDATE idem.idem_stats_exact SET taken_at = '-infinity', attempt_at = NULL,"
                                        " attempt_token = NULL, period_s = 20");
    // The bounded figures an earlier reading shared (before this file's rows were planted) are
    // not what this test is about: let the next reading count them anew.
    pqxx::nontransaction(*m_owner).exec("UPDATE idem.idem_stats_live SET taken_at = '-infinity'");
    auto holder = login(readerRole, "holds-the-refresh");
    pqxx::work hold(*holder);
    QVERIFY(!hold.exec("SELECT idem.idem_exact_refresh_begin()").at(0).at(0).is_null());
    const int pid = hold.exec("SELECT pg_backend_pid()").at(0).at(0).as<int>();

    const auto run = idemctl(operatorRole, { QStringLiteral("stats"), QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto j = json(run);
    const auto h = j[QStringLiteral("exact_refresh_holder")].toObject();
    QCOMPARE(h[QStringLiteral("pid")].toInt(), pid);
    QCOMPARE(h[QStringLiteral("role")].toString(), QString::fromLatin1(readerRole));
    QCOMPARE(h[QStringLiteral("application")].toString(), QStringLiteral("holds-the-refresh"));
    QVERIFY(j[QStringLiteral("exact_refresh")].toObject()[QStringLiteral("counted_by_this_command")].toBool());
    QCOMPARE(j[QStringLiteral("figures")].toObject()[QStringLiteral("processing")].toObject()[QStringLiteral("value")].toInteger(),
        number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE status = 'processing' AND lease_until > now()"));

    auto console = login(readerRole);
    const auto s = idem::readStats(*console, idem::SchemaName(), {}, {});
    QVERIFY(s.exactHolder);
    QVERIFY(idem::needsOwnExact(s, false));
    hold.abort();
    const auto after = idem::readStats(*console, idem::SchemaName(), {}, {});
    QVERIFY(!after.exactHolder);
}

// Item 7: a completion inside a business transaction that ran for 3 s was stamped with the
// transaction's start, 3 s before it happened, and purged that much early.
void TestLowRoles::retentionCountsFromTheCompletion()
{
    auto worker = login(workerRole);
    const std::string key = "t:charge:slow-" + std::to_string(number(*m_owner, "SELECT (random() * 1e9)::bigint"));
    const std::string token = scalar(*m_owner, "SELECT gen_random_uuid()").toStdString();
    pqxx::nontransaction(*worker).exec_params("SELECT * FROM idem.claim($1, 'v1:x', $2::uuid, 60000)", key, token);
    pqxx::work business(*worker);
    business.exec_params("SELECT * FROM idem.fence($1, $2::uuid)", key, token);
    business.exec("SELECT pg_sleep(3)"); // the business writes
    const double lag = business
                           .exec_params("SELECT extract(epoch FROM idem.complete($1, $2::uuid, '{}') - now())::float8",
                               key, token)
                           .at(0)
                           .at(0)
                           .as<double>();
    business.commit();
    QVERIFY2(lag >= 2.9, qPrintable(QString::number(lag)));
    QVERIFY(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE updated_at > clock_timestamp() - interval"
                             " '2 seconds' AND idempotency_key = '" + key + "'")
        == 1);
}

// Item 10: a claim with a wrong digest answered with the stored one, which a second claim then
// turned into the stored result. The conflict no longer carries it.
void TestLowRoles::conflictDoesNotRevealTheStoredDigest()
{
    const std::string key = "t:charge:secret-" + std::to_string(number(*m_owner, "SELECT (random() * 1e9)::bigint"));
    pqxx::nontransaction(*m_owner).exec_params(
        "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts)"
        " VALUES ($1, 'v1:the-stored-digest', 'succeeded', '{\"card\": \"4242\"}', 1)",
        key);
    auto worker = login(workerRole);
    pqxx::nontransaction t(*worker);
    const auto r = t.exec_params(
        "SELECT decision, request_hash, result_json FROM idem.claim($1, 'v1:a-guess', gen_random_uuid(), 1000)", key);
    QCOMPARE(r.at(0).at(0).as<std::string>(), std::string("conflict"));
    QVERIFY(r.at(0).at(1).is_null());
    QVERIFY(r.at(0).at(2).is_null());
    // Operators still read it from the table.
    QCOMPARE(scalar(*login(operatorRole), "SELECT request_hash FROM idem.task_idempotency WHERE idempotency_key = $1", key),
        "v1:the-stored-digest"_b);
}

QTEST_GUILESS_MAIN(TestLowRoles)
#include "tst_lowroles.moc"
