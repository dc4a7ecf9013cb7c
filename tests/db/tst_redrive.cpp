// Re-execution that really runs (schema v25, issue 42, docs/redrive.md): a requeue that
// re-executes is run by a registered re-driver with the stored request and the same key, once.
#include <QtTest>

#include <QProcess>
#include <QUuid>

#include <chrono>
#include <csignal>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <pqxx/pqxx>
#include <sys/types.h>

#include "core/connection.h"
#include "core/digest.h"
#include "core/redrive.h"
#include "core/runner.h"
#include "operations/purge.h"
#include "operations/redrive.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/pgservers.h"
#include "tests/support/testdb.h"

using namespace std::chrono_literals;

namespace {

const std::string password = QUuid::createUuid().toString(QUuid::WithoutBraces).toStdString();

std::string scalar(pqxx::connection& c, const std::string& sql)
{
    pqxx::nontransaction t(c);
    const auto r = t.exec(sql);
    return r[0][0].is_null() ? std::string("<null>") : r[0][0].as<std::string>();
}

long long count(pqxx::connection& c, const std::string& sql) { return std::stoll(scalar(c, sql)); }

// The SQLSTATE a statement fails with ("" when it succeeds); libpqxx 6.4 leaves 42501's empty.
std::string sqlstateOf(pqxx::connection& c, const std::string& sql)
{
    try {
        pqxx::work w(c);
        w.exec(sql);
        w.commit();
        return {};
    } catch (const pqxx::insufficient_privilege&) {
        return "42501";
    } catch (const pqxx::sql_error& e) {
        return e.sqlstate().empty() ? std::string("?") : e.sqlstate();
    }
}

nlohmann::json requestOf(int i)
{
    return { { "amount", i }, { "card", "4242-" + std::to_string(i) }, { "currency", "EUR" } };
}

// Everything the functions could write, as one line: what "nothing written" is compared against.
std::string everything(pqxx::connection& c)
{
    return scalar(c,
        "SELECT concat_ws(' ', (SELECT count(*) FROM idem.task_idempotency),"
        " (SELECT count(*) FROM idem.idem_stored_requests), (SELECT count(*) FROM idem.idem_redrive_operations),"
        " (SELECT count(*) FROM idem.idem_redrivers), (SELECT count(*) FROM idem.idem_redrive_items),"
        " (SELECT string_agg(state || coalesce(worker, '') || tries, ',' ORDER BY id) FROM idem.idem_redrive_items),"
        " (SELECT count(*) FROM idem.task_idempotency_audit), (SELECT count(*) FROM idem.idem_jobs),"
        " (SELECT string_agg(tenant || operation || max_request_bytes, ',') FROM idem.idem_redrive_operations),"
        " (SELECT max(last_seen)::text FROM idem.idem_redrivers))");
}

bool waitFor(const std::function<bool()>& done, std::chrono::milliseconds bound)
{
    const auto until = std::chrono::steady_clock::now() + bound;
    while (std::chrono::steady_clock::now() < until) {
        if (done())
            return true;
        std::this_thread::sleep_for(100ms);
    }
    return done();
}

} // namespace

class TestRedrive : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanupTestCase();
    void exactlyOnceUnderKillsAndClientRetries();
    void exactlyOnceThroughPgBouncer();
    void storedRequestReadOnlyWithItsRight();
    void requestOverTheBoundStoresNothing();
    void purgeRemovesStoredRequests();
    void jobUnderApprovalWaits();
    void pauseHoldsRedrives();
    void laterWaitsAFewSeconds();
    void statusSaysWhenOfflineRedriversWereSeen();
    void outcomesOfManyJobsInOneRead();
    void badArgumentsAreRefused_data();
    void badArgumentsAreRefused();
    void idemctlRequeueReexecutes();

private:
    // 1000 (n) failed keys of t1:charge with stored requests; returns nothing, asserts.
    void plantFailed(int n);
    // The SIGKILL run: 4 re-driver processes (killed and replaced twice), 2 original clients.
    void killRun(const std::string& dsn, bool listen);
    std::unique_ptr<QProcess> startWorker(const std::string& dsn, const QStringList& args);
    idem::StoreOptions storeOptions() const;
    idem::RedriveOptions redriveOptions() const;
    idem::RedriveTask effectTask(const std::string& who);

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
};

void TestRedrive::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("redrive", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName() });
    for (const auto& [login, role] : std::vector<std::pair<std::string, std::string>> {
             { "idem_t_rd_reader", "idem_reader" }, { "idem_t_rd_requests", "idem_may_read_requests" },
             { "idem_t_rd_wka", "idem_worker" }, { "idem_t_rd_wkb", "idem_worker" },
             { "idem_t_rd_op", "idem_operator" }, { "idem_t_rd_approver", "idem_may_approve" } })
        idem::test::createLoginRole(login, password, role);
    pqxx::work w(*m_owner);
    w.exec("GRANT idem_reader TO idem_t_rd_requests");
    w.exec("CREATE TABLE public.redrive_effects (idempotency_key text NOT NULL, by_whom text NOT NULL)");
    w.exec("GRANT INSERT ON public.redrive_effects TO PUBLIC");
    w.commit();
}

void TestRedrive::init()
{
    pqxx::work w(*m_owner);
    w.exec("TRUNCATE idem.task_idempotency, idem.idem_stored_requests, idem.idem_redrive_items, idem.idem_redrivers,"
           " idem.idem_redrive_operations, idem.idem_pauses, idem.idem_job_items, idem.idem_approval_requests,"
           " idem.idem_jobs,"
           " public.redrive_effects");
    w.exec("UPDATE idem.idem_approval_kinds SET gated = false WHERE kind = 'job'");
    w.commit();
}

void TestRedrive::cleanupTestCase()
{
    m_owner.reset();
    m_db.reset();
}

idem::StoreOptions TestRedrive::storeOptions() const
{
    idem::StoreOptions o;
    o.lease = 3s;
    o.retry.maxAttempts = 50;
    o.retry.baseDelay = 10ms;
    o.retry.maxDelay = 50ms;
    o.storeRequestsOf = { "charge" };
    return o;
}

idem::RedriveOptions TestRedrive::redriveOptions() const
{
    idem::RedriveOptions o;
    o.version = "tst-1";
    o.listen = false;
    o.poll = 50ms;
    o.itemLease = 3s;
    return o;
}

idem::RedriveTask TestRedrive::effectTask(const std::string& who)
{
    return [who](pqxx::work& tx, const idem::TaskContext& ctx, const nlohmann::json&) {
        tx.exec_params("INSERT INTO public.redrive_effects VALUES ($1, $2)", ctx.key.str(), who);
        return std::string("{\"ok\":true}");
    };
}

void TestRedrive::plantFailed(int n)
{
    QCOMPARE(idem::registerRedrivable(*m_owner, idem::SchemaName(), { "t1", "charge", 65536, { "card" } }),
        idem::RegisterOutcome::Registered);
    nlohmann::json keys = nlohmann::json::array(), hashes = nlohmann::json::array(), requests = nlohmann::json::array();
    for (int i = 0; i < n; ++i) {
        keys.push_back("t1:charge:k-" + std::to_string(i));
        hashes.push_back(idem::requestDigest(requestOf(i)));
        requests.push_back(idem::canonicalRequest(requestOf(i)));
    }
    pqxx::work w(*m_owner);
    w.exec_params("SELECT count(*) FROM jsonb_array_elements_text($1::jsonb) WITH ORDINALITY k(key, n),"
                  " LATERAL idem.idem_claim_stored(k.key, $2::jsonb ->> (k.n - 1)::int, gen_random_uuid(), 60000, 3,"
                  " NULL, $3::jsonb ->> (k.n - 1)::int) c",
        keys.dump(), hashes.dump(), requests.dump());
    w.exec("UPDATE idem.task_idempotency SET status = 'failed', owner_token = NULL, lease_until = NULL,"
           " error_class = 'retryable', error_message = 'gateway down', attempts = 3, updated_at = now()");
    w.commit();
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.idem_stored_requests"), static_cast<long long>(n));
}

std::unique_ptr<QProcess> TestRedrive::startWorker(const std::string& dsn, const QStringList& args)
{
    auto p = std::make_unique<QProcess>();
    auto env = idem::test::cleanEnvironment();
    env.insert(QStringLiteral("IDEM_REDRIVE_DSN"), QString::fromStdString(dsn));
    p->setProcessEnvironment(env);
    p->start(idem::test::programFromEnvironment("IDEM_T_REDRIVER_PATH"), args);
    return p;
}

// 1000 failed keys requeued with re-execute by a job (idemctl job start --re-execute), while
// their original clients retry them too and re-driver processes are killed with SIGKILL in the
// middle of their batches (twice, two of four each time, replaced): every key has exactly one
// business effect, every re-drive item ends in a final state, the audit chain verifies.
void TestRedrive::killRun(const std::string& dsn, bool listen)
{
    const int n = 1000;
    plantFailed(n);
    const QString listenArg = listen ? QStringLiteral("1") : QStringLiteral("0");
    std::vector<std::unique_ptr<QProcess>> redrivers;
    int named = 0;
    int killed = 0;
    const auto startRedriver = [&] {
        redrivers.push_back(startWorker(dsn,
            { QStringLiteral("redrive"), QStringLiteral("t1"), QStringLiteral("charge"),
                QStringLiteral("rd-%1").arg(++named), listenArg, QStringLiteral("3000") }));
        QVERIFY2(redrivers.back()->waitForReadyRead(30000),
            qPrintable(QString::fromUtf8(redrivers.back()->readAllStandardError())));
    };
    for (int i = 0; i < 4; ++i)
        startRedriver();
    // The operator sees who will re-execute before anything changes.
    const auto status = idem::readRedriveStatus(*m_owner, idem::SchemaName(), "t1", "charge");
    QCOMPARE(idem::redriveAvailability(status.at(0)), std::string("4 workers of charge are online"));

    std::vector<std::unique_ptr<QProcess>> clients;
    for (int seed : { 1, 2 })
        clients.push_back(startWorker(dsn,
            { QStringLiteral("client"), QStringLiteral("t1"), QStringLiteral("charge"), QStringLiteral("0"),
                QString::number(n), QString::number(seed), QStringLiteral("80") }));

    // The job runs on a direct connection (its runner holds a session lock), as idemctl requires.
    QProcess job;
    job.setProcessEnvironment(idem::test::cleanEnvironment());
    job.start(idem::test::idemctlPath(),
        { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"), QStringLiteral("requeue"),
            QStringLiteral("--re-execute"), QStringLiteral("--tenant"), QStringLiteral("t1"),
            QStringLiteral("--operation"), QStringLiteral("charge"), QStringLiteral("--status"),
            QStringLiteral("failed"), QStringLiteral("--reason"), QStringLiteral("gateway back"),
            QStringLiteral("--attempts"), QStringLiteral("20"), QStringLiteral("--batch"), QStringLiteral("100"),
            QStringLiteral("--duty"), QStringLiteral("1"), QStringLiteral("--quiet"), QStringLiteral("--dsn"),
            QString::fromStdString(m_db->dsn()) });
    // Killed mid-batch: while items are running, twice, two re-drivers each time.
    for (const long long at : { 150LL, 500LL }) {
        QVERIFY2(waitFor(
                     [&] {
                         return count(*m_owner,
                                    "SELECT count(*) FROM idem.idem_redrive_items"
                                    " WHERE state = 'succeeded'")
                             >= at;
                     },
                     60s),
            "the re-drivers did not get that far");
        for (int k = 0; k < 2; ++k) {
            const std::size_t v = redrivers.size() - 4 + static_cast<std::size_t>(k);
            auto& victim = redrivers[v];
            // Mid-batch: while it holds running items (rd-N is the N-th started).
            const std::string name = "rd-" + std::to_string(v + 1);
            waitFor(
                [&] {
                    return count(*m_owner,
                               "SELECT count(*) FROM idem.idem_redrive_items WHERE state = 'running'"
                               " AND worker = '"
                                   + name + "'")
                        > 0;
                },
                10s);
            ::kill(static_cast<pid_t>(victim->processId()), SIGKILL);
            victim->waitForFinished(5000);
            ++killed;
        }
        startRedriver();
        startRedriver();
    }
    const auto jobRun = idem::test::finishProcess(job, 60000);
    QVERIFY2(jobRun.exitCode == 0, qPrintable(idem::test::describe(jobRun)));
    QVERIFY2(jobRun.out.contains(QStringLiteral("re-execute: 4 workers of charge are online")), qPrintable(jobRun.out));
    const auto jobId = count(*m_owner, "SELECT max(id) FROM idem.idem_jobs");

    QVERIFY2(waitFor(
                 [&] {
                     return count(*m_owner,
                                "SELECT count(*) FROM idem.idem_redrive_items"
                                " WHERE state IN ('queued', 'running')")
                         == 0
                         && count(*m_owner,
                                "SELECT count(*) FROM idem.task_idempotency"
                                " WHERE status = 'succeeded'")
                         == n;
                 },
                 75s),
        scalar(*m_owner,
            "SELECT string_agg(state || ' ' || n, ', ') FROM (SELECT state, count(*) n FROM"
            " idem.idem_redrive_items GROUP BY state) s")
            .c_str());
    for (auto& c : clients)
        c->waitForFinished(90000);
    for (auto& r : redrivers) {
        if (r->state() == QProcess::Running) {
            r->terminate();
            r->waitForFinished(10000);
        }
    }

    // Exactly one business effect per key, whoever ran it (a client, a re-driver, a killed one's successor).
    QCOMPARE(count(*m_owner, "SELECT count(DISTINCT idempotency_key) FROM public.redrive_effects"),
        static_cast<long long>(n));
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM public.redrive_effects"), static_cast<long long>(n));
    // Every item the job queued ended, and each as succeeded (run, or replayed after a client won).
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.idem_redrive_items WHERE job_id = " + std::to_string(jobId)),
        static_cast<long long>(n));
    QCOMPARE(scalar(*m_owner, "SELECT string_agg(DISTINCT state, ',') FROM idem.idem_redrive_items"),
        std::string("succeeded"));
    const auto outcomes = idem::readRedriveOutcomes(*m_owner, idem::SchemaName(), jobId);
    QCOMPARE(idem::redriveOutcomeSentence(n, outcomes), std::string("1000 requeued: 1000 succeeded"));
    // Re-drivers did run some, and the kills hit items they were running: taken again after their lease.
    QCOMPARE(killed, 4);
    QVERIFY(count(*m_owner, "SELECT count(*) FROM public.redrive_effects WHERE by_whom LIKE 'rd-%'") > 0);
    QVERIFY(count(*m_owner, "SELECT count(*) FROM idem.idem_redrive_items WHERE tries > 1") > 0);
    qInfo("%lld effects by re-drivers, %lld by clients; %lld items taken more than once",
        count(*m_owner, "SELECT count(*) FROM public.redrive_effects WHERE by_whom LIKE 'rd-%'"),
        count(*m_owner, "SELECT count(*) FROM public.redrive_effects WHERE by_whom = 'client'"),
        count(*m_owner, "SELECT count(*) FROM idem.idem_redrive_items WHERE tries > 1"));
    const auto verify = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("audit"), QStringLiteral("verify"), QStringLiteral("--dsn"),
            QString::fromStdString(m_db->dsn()) });
    QVERIFY2(verify.exitCode == 0, qPrintable(idem::test::describe(verify)));
}

void TestRedrive::exactlyOnceUnderKillsAndClientRetries() { killRun(m_db->dsn(), true); }

// The same through PgBouncer in transaction mode: re-drivers and clients poll (no LISTEN).
void TestRedrive::exactlyOnceThroughPgBouncer()
{
    QVERIFY2(idem::test::pgBouncerProblem().isEmpty(), qPrintable(idem::test::pgBouncerProblem()));
    idem::test::LocalPgBouncer::Options o;
    o.defaultPoolSize = 6;
    idem::test::LocalPgBouncer bouncer(idem::test::adminDsn(), o);
    QVERIFY2(bouncer.problem().isEmpty(), qPrintable(bouncer.problem()));
    killRun(bouncer.dsn(m_db->name()), false);
}

// A stored request is never readable by a reader, nor by a worker login of another operation; a
// holder of read_requests reads it with the operation's redacted fields replaced.
void TestRedrive::storedRequestReadOnlyWithItsRight()
{
    const auto as
        = [&](const std::string& login) { return idem::connect(idem::test::loginDsn(m_db->dsn(), login, password)); };
    auto wka = as("idem_t_rd_wka");
    auto wkb = as("idem_t_rd_wkb");
    QCOMPARE(idem::registerRedrivable(*wka, idem::SchemaName(), { "t1", "charge", 1024, { "card" } }),
        idem::RegisterOutcome::Registered);
    idem::TaskStore store(*wka, storeOptions());
    const idem::TaskKey key("t1", "charge", "secret-1");
    const auto c = store.claim(key, idem::requestDigest(requestOf(7)), idem::canonicalRequest(requestOf(7)));
    QVERIFY(c.mayExecute());
    store.fail(key, c.token, c.attempts, idem::FailureClass::Permanent, "declined");

    auto reader = as("idem_t_rd_reader");
    QCOMPARE(sqlstateOf(*reader, "SELECT * FROM idem.idem_stored_requests"), std::string("42501"));
    const auto seen = idem::readStoredRequest(*reader, idem::SchemaName(), key.str());
    QVERIFY(seen.stored);
    QCOMPARE(seen.bytes, static_cast<int>(idem::canonicalRequest(requestOf(7)).size()));
    QVERIFY(!seen.readable);
    QCOMPARE(sqlstateOf(*reader, "SELECT * FROM idem.idem_redrive_take('t1', 'charge', 'r', 10, 60000)"),
        std::string("42501"));
    auto op = as("idem_t_rd_op");
    QVERIFY(!idem::readStoredRequest(*op, idem::SchemaName(), key.str()).readable); // idem_operator does not hold it
    auto holder = as("idem_t_rd_requests");
    const auto full = idem::readStoredRequest(*holder, idem::SchemaName(), key.str());
    QVERIFY(full.readable);
    QCOMPARE(nlohmann::json::parse(full.request),
        nlohmann::json({ { "amount", 7 }, { "card", "[redacted]" }, { "currency", "EUR" } }));
    QCOMPARE(sqlstateOf(*holder, "SELECT * FROM idem.idem_stored_requests"), std::string("42501"));

    // Worker B, another login: may not join charge, take it, or re-register it for itself.
    const auto before = everything(*m_owner);
    QCOMPARE(sqlstateOf(*wkb, "SELECT * FROM idem.idem_redriver_seen('t1', 'charge', 'b-1', '1')"), std::string("42501"));
    // Not online under its login (it could not report): a refusal of state, ID004.
    QCOMPARE(sqlstateOf(*wkb, "SELECT * FROM idem.idem_redrive_take('t1', 'charge', 'b-1', 10, 60000)"), std::string("ID004"));
    QCOMPARE(sqlstateOf(*wkb, "SELECT * FROM idem.idem_redrive_register('t1', 'charge', 2048)"), std::string("42501"));
    QCOMPARE(sqlstateOf(*wkb, "SELECT * FROM idem.idem_redrive_register('*', 'charge')"), std::string("42501"));
    QCOMPARE(sqlstateOf(*wkb, "SELECT * FROM idem.idem_stored_request('t1:charge:secret-1')"), std::string("42501"));
    QCOMPARE(everything(*m_owner), before);
    // Its own operation is its own.
    QCOMPARE(idem::registerRedrivable(*wkb, idem::SchemaName(), { "t1", "ship" }), idem::RegisterOutcome::Registered);

    // Worker A's re-driver takes it, as its own login, and runs it once.
    QCOMPARE(scalar(*m_owner,
                 "SELECT outcome FROM idem.idem_requeue_reexecute('t1:charge:secret-1', 'failed', (SELECT "
                 "(extract(epoch FROM updated_at) * 1000000)::bigint FROM idem.task_idempotency), 1, 'retry', 'ann')"),
        std::string("applied"));
    idem::Redriver redriver(*wka, storeOptions(), "t1", "charge", "a-1", effectTask("a-1"), redriveOptions());
    QCOMPARE(redriver.runOnce(), 1);
    QCOMPARE(redriver.stats().succeeded, 1);
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM public.redrive_effects"), 1LL);
}

// A request over the operation's bound is refused before anything is claimed or stored.
void TestRedrive::requestOverTheBoundStoresNothing()
{
    QCOMPARE(idem::registerRedrivable(*m_owner, idem::SchemaName(), { "t1", "charge", 64, {} }),
        idem::RegisterOutcome::Registered);
    idem::TaskStore store(*m_owner, storeOptions());
    const nlohmann::json big = { { "amount", 1 }, { "note", std::string(100, 'x') } };
    const auto before = everything(*m_owner);
    try {
        store.claim(idem::TaskKey("t1", "charge", "big"), idem::requestDigest(big), idem::canonicalRequest(big));
        QFAIL("a request over the bound was claimed");
    } catch (const std::invalid_argument& e) {
        QVERIFY2(std::string(e.what()).find("over the bound of 64 bytes of t1:charge: nothing was claimed or stored")
                != std::string::npos,
            e.what());
    }
    QCOMPARE(everything(*m_owner), before);
    // Nor a request that is not the digest's, nor none at all.
    QVERIFY_EXCEPTION_THROWN(store.claim(idem::TaskKey("t1", "charge", "x"), idem::requestDigest(requestOf(1)),
                                 idem::canonicalRequest(requestOf(2))),
        std::invalid_argument);
    QVERIFY_EXCEPTION_THROWN(
        store.claim(idem::TaskKey("t1", "charge", "x"), idem::requestDigest(requestOf(1))), std::invalid_argument);
    QCOMPARE(everything(*m_owner), before);
    // Stored by this store, but not registered in the database: the arguments are fine, the state
    // refuses it (ID004), as Refused and not as a bad argument.
    auto options = storeOptions();
    options.storeRequestsOf = { "unregistered" };
    idem::TaskStore unregistered(*m_owner, options);
    try {
        unregistered.claim(idem::TaskKey("t1", "unregistered", "x"), idem::requestDigest(requestOf(1)),
            idem::canonicalRequest(requestOf(1)));
        QFAIL("a claim of an operation not registered as re-drivable was taken");
    } catch (const idem::Refused& e) {
        QVERIFY2(std::string(e.what()).find("t1:unregistered is not registered as re-drivable") != std::string::npos,
            e.what());
    }
    QCOMPARE(everything(*m_owner), before);
}

// Every path that deletes task rows deletes their stored requests in the same statement (no
// foreign key does it since v27): idem_purge, idemctl purge's runPurge, pg_cron's idem_purge_run
// (all three through idem_purge_batch, the one statement that deletes task rows). No stored
// request outlives its key, and the others stay.
void TestRedrive::purgeRemovesStoredRequests()
{
    QCOMPARE(
        idem::registerRedrivable(*m_owner, idem::SchemaName(), { "t1", "charge" }), idem::RegisterOutcome::Registered);
    idem::TaskStore store(*m_owner, storeOptions());
    for (int i = 0; i < 8; ++i) {
        idem::RunOptions run;
        run.request = idem::canonicalRequest(requestOf(i));
        const auto out = idem::runTask(
            store, idem::TaskKey("t1", "charge", "p-" + std::to_string(i)), idem::requestDigest(requestOf(i)),
            [](pqxx::work&, const idem::TaskContext&) { return std::string("{}"); }, run);
        QCOMPARE(out.kind, idem::RunOutcome::Kind::Succeeded);
    }
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.idem_stored_requests"), 8LL);
    {
        pqxx::work w(*m_owner);
        w.exec("SELECT idem.idem_set_retention('charge', 3600, 'a day is enough', 'ann')");
        w.commit();
    }
    const auto age = [&](const std::string& keys) {
        pqxx::work w(*m_owner);
        w.exec("UPDATE idem.task_idempotency SET updated_at = now() - interval '2 hours'"
               " WHERE idempotency_key = ANY ('{"
            + keys + "}'::text[])");
        w.commit();
    };
    const auto orphans = [&] {
        return count(*m_owner,
            "SELECT count(*) FROM idem.idem_stored_requests s WHERE NOT EXISTS"
            " (SELECT FROM idem.task_idempotency t WHERE t.idempotency_key = s.idempotency_key)");
    };
    const auto stored = [&] {
        return scalar(*m_owner,
            "SELECT string_agg(split_part(idempotency_key, ':', 3), ',' ORDER BY idempotency_key)"
            " FROM idem.idem_stored_requests");
    };

    age("t1:charge:p-0,t1:charge:p-1,t1:charge:p-2");
    QCOMPARE(
        scalar(*m_owner, "SELECT rows_removed FROM idem.idem_purge(1000, 1, 'test purge', 'ann')"), std::string("3"));
    QCOMPARE(orphans(), 0LL);
    QCOMPARE(stored(), std::string("p-3,p-4,p-5,p-6,p-7"));
    QVERIFY(!idem::readStoredRequest(*m_owner, idem::SchemaName(), "t1:charge:p-0").stored);

    age("t1:charge:p-3,t1:charge:p-4");
    idem::PurgeOptions o;
    o.duty = 1;
    o.reason = "test purge";
    o.actor = "ann";
    QCOMPARE(idem::runPurge(*m_owner, idem::SchemaName(), o).rowsRemoved, 2);
    QCOMPARE(orphans(), 0LL);
    QCOMPARE(stored(), std::string("p-5,p-6,p-7"));

    age("t1:charge:p-5,t1:charge:p-6");
    {
        pqxx::nontransaction n(*m_owner);
        n.exec("CALL idem.idem_purge_run(1000, 10, 'scheduled purge', 'cron', 1)");
    }
    QCOMPARE(orphans(), 0LL);
    QCOMPARE(stored(), std::string("p-7"));
    QVERIFY(idem::readStoredRequest(*m_owner, idem::SchemaName(), "t1:charge:p-7").stored);
    // The foreign key is gone (what made every claim of a key pay for it).
    QCOMPARE(count(*m_owner,
                 "SELECT count(*) FROM pg_constraint WHERE conrelid = 'idem.idem_stored_requests'::regclass"
                 " AND contype = 'f'"),
        0LL);
}

// A re-executing job that needs approval queues nothing until another login approves it and it runs.
void TestRedrive::jobUnderApprovalWaits()
{
    plantFailed(20);
    {
        pqxx::work w(*m_owner);
        w.exec("SELECT idem.idem_set_approval(5, 3600, 'over five needs a second person', 'admin')");
        w.commit();
    }
    auto op = idem::connect(idem::test::loginDsn(m_db->dsn(), "idem_t_rd_op", password));
    auto approver = idem::connect(idem::test::loginDsn(m_db->dsn(), "idem_t_rd_approver", password));
    const auto job = scalar(*op,
        "SELECT job_id FROM idem.idem_job_start('requeue', '{\"operation\": \"charge\"}', 100,"
        " 'gateway back', 'ann', 1, true)");
    QCOMPARE(scalar(*m_owner, "SELECT state || ' ' || redrive FROM idem.idem_jobs WHERE id = " + job),
        std::string("awaiting_approval true"));
    idem::Redriver redriver(*m_owner, storeOptions(), "t1", "charge", "w-approval", effectTask("w"), redriveOptions());
    QCOMPARE(redriver.runOnce(), 0);
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.idem_redrive_items"), 0LL);
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE status = 'failed'"), 20LL);
    // The spec an approval names says it re-executes.
    QCOMPARE(scalar(*m_owner, "SELECT idem.idem_job_spec(j) ->> 'redrive' FROM idem.idem_jobs j WHERE id = " + job),
        std::string("true"));
    const auto spec = scalar(*m_owner, "SELECT spec_sha256 FROM idem.idem_jobs WHERE id = " + job);
    pqxx::nontransaction(*approver).exec(
        "SELECT * FROM idem.idem_job_approve(" + job + ", '" + spec + "', 'ok', 'bob')");
    pqxx::nontransaction(*op).exec("CALL idem.idem_job_run(" + job + ", 100, 1, 10, 'ann', false)");
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_jobs WHERE id = " + job), std::string("finished"));
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.idem_redrive_items WHERE state = 'queued' AND job_id = " + job),
        20LL);
    QCOMPARE(count(*m_owner,
                 "SELECT count(*) FROM idem.task_idempotency_audit WHERE action = 'requeue'"
                 " AND after_image ->> 'redrive' = 'true' AND after_image ->> 'job_id' = '"
                     + job + "'"),
        20LL);
    while (redriver.runOnce() > 0) { }
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM public.redrive_effects"), 20LL);
    QCOMPARE(idem::redriveOutcomeSentence(20, idem::readRedriveOutcomes(*m_owner, idem::SchemaName(), std::stoll(job))),
        std::string("20 requeued: 20 succeeded"));
}

// A pause holds re-drives: nothing is taken while it covers the operation; all run after it.
void TestRedrive::pauseHoldsRedrives()
{
    plantFailed(10);
    pqxx::nontransaction(*m_owner).exec("SELECT * FROM idem.idem_pause('t1', 'charge', 'incident 42', 'ann')");
    pqxx::nontransaction(*m_owner).exec(
        "SELECT count(*) FROM idem.task_idempotency t, LATERAL idem.idem_requeue_reexecute(t.idempotency_key, t.status,"
        " (extract(epoch FROM t.updated_at) * 1000000)::bigint, 1, 'retry after the incident', 'ann') r");
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.idem_redrive_items WHERE state = 'queued'"), 10LL);
    idem::Redriver star(*m_owner, storeOptions(), "*", "charge", "w-star", effectTask("w"), redriveOptions());
    idem::Redriver redriver(*m_owner, storeOptions(), "t1", "charge", "w-pause", effectTask("w"), redriveOptions());
    QVERIFY_EXCEPTION_THROWN(star.runOnce(), idem::Refused); // '*' is not registered: t1 is (ID004)
    QCOMPARE(redriver.runOnce(), 0);
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.idem_redrive_items WHERE state = 'queued'"), 10LL);
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM public.redrive_effects"), 0LL);
    pqxx::nontransaction(*m_owner).exec("SELECT * FROM idem.idem_resume('t1', 'charge', 'over', 'ann')");
    QCOMPARE(redriver.runOnce(), 10);
    QCOMPARE(redriver.stats().succeeded, 10);
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM public.redrive_effects"), 10LL);
}

// A re-drive put back (later: its key held by the original client) comes back after a few
// seconds, not after the holder's whole lease (v27; the bound is the re-driver's laterWait); it is
// not given up after 20 tries while the holder's lease lives; once the holder has finished, it
// ends succeeded (a replay) and the key has one effect.
void TestRedrive::laterWaitsAFewSeconds()
{
    plantFailed(1);
    pqxx::nontransaction(*m_owner).exec(
        "SELECT * FROM idem.task_idempotency t, LATERAL idem.idem_requeue_reexecute(t.idempotency_key, t.status,"
        " (extract(epoch FROM t.updated_at) * 1000000)::bigint, 1, 'gateway back', 'ann') r");
    // The original client retries first and holds the key for ten minutes.
    std::string token;
    {
        pqxx::work w(*m_owner);
        const auto r = w.exec_params("SELECT decision, owner_token FROM idem.idem_claim_stored('t1:charge:k-0', $1,"
                                     " gen_random_uuid(), 600000, 5, NULL, $2)",
            idem::requestDigest(requestOf(0)), idem::canonicalRequest(requestOf(0)));
        QCOMPARE(r[0][0].as<std::string>(), std::string("reacquired"));
        token = r[0][1].as<std::string>();
        w.commit();
    }
    idem::Redriver redriver(*m_owner, storeOptions(), "t1", "charge", "w-later", effectTask("w"), redriveOptions());
    QCOMPARE(redriver.runOnce(), 1);
    QCOMPARE(redriver.stats().later, 1LL);
    // The item's state, and whether it is due `bound` seconds after it was taken (the finish
    // follows the take by far less than 5 s), and long before the holder's lease ends.
    const auto wait = [&](int bound) {
        return scalar(*m_owner,
            "SELECT i.state || ' ' || (i.not_before - i.taken_at BETWEEN interval '" + std::to_string(bound)
                + " seconds' AND interval '" + std::to_string(bound + 5)
                + " seconds') || ' ' || (t.lease_until - i.not_before > interval '590 seconds')"
                  "  FROM idem.idem_redrive_items i JOIN idem.task_idempotency t USING (idempotency_key)");
    };
    // Due 5 s after it was taken (the default bound), not when the holder's 600 s lease ends.
    QCOMPARE(wait(5), std::string("queued true true"));

    auto quick = redriveOptions();
    quick.laterWait = 3s;
    idem::Redriver three(*m_owner, storeOptions(), "t1", "charge", "w-three", effectTask("w"), quick);
    // Due now, and tried past the 20 tries after which an item is given up: the holder's lease
    // lives, so it is put back again, due within 3 s.
    pqxx::nontransaction(*m_owner).exec("UPDATE idem.idem_redrive_items SET not_before = now(), tries = 25");
    QCOMPARE(three.runOnce(), 1);
    QCOMPARE(wait(3), std::string("queued true true"));
    QVERIFY(
        scalar(*m_owner, "SELECT not_before - taken_at < interval '5 seconds' FROM idem.idem_redrive_items") == "t");
    QCOMPARE(scalar(*m_owner, "SELECT tries FROM idem.idem_redrive_items"), std::string("26"));

    // The holder finishes; the re-drive replays its result: one effect, the client's.
    {
        pqxx::work w(*m_owner);
        w.exec("INSERT INTO public.redrive_effects VALUES ('t1:charge:k-0', 'client')");
        w.exec_params("SELECT * FROM idem.complete('t1:charge:k-0', $1::uuid, '{\"ok\":true}'::jsonb)", token);
        w.commit();
    }
    // (Tried a few times, not past the 20 after which a key nobody holds any more is given up.)
    pqxx::nontransaction(*m_owner).exec("UPDATE idem.idem_redrive_items SET not_before = now(), tries = 3");
    QCOMPARE(three.runOnce(), 1);
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_redrive_items"), std::string("succeeded"));
    QCOMPARE(scalar(*m_owner, "SELECT string_agg(by_whom, ',') FROM public.redrive_effects"), std::string("client"));

    auto bad = redriveOptions();
    bad.laterWait = 1s;
    QVERIFY_EXCEPTION_THROWN(
        idem::Redriver(*m_owner, storeOptions(), "t1", "charge", "w-bad", effectTask("w"), bad), std::invalid_argument);
}

// Every re-driver of an operation is listed with when it was last seen, online or not (v27), so
// an operator reads who went away and when, not only that nobody is online (idemctl too).
void TestRedrive::statusSaysWhenOfflineRedriversWereSeen()
{
    QCOMPARE(
        idem::registerRedrivable(*m_owner, idem::SchemaName(), { "t1", "charge" }), idem::RegisterOutcome::Registered);
    idem::Redriver gone(*m_owner, storeOptions(), "t1", "charge", "w-gone", effectTask("w"), redriveOptions());
    idem::Redriver here(*m_owner, storeOptions(), "t1", "charge", "w-here", effectTask("w"), redriveOptions());
    QCOMPARE(gone.runOnce(), 0);
    QCOMPARE(here.runOnce(), 0);
    pqxx::nontransaction(*m_owner).exec(
        "UPDATE idem.idem_redrivers SET last_seen = now() - interval '200 seconds' WHERE worker = 'w-gone'");
    auto st = idem::readRedriveStatus(*m_owner, idem::SchemaName(), "t1", "charge");
    QCOMPARE(st.size(), std::size_t(1));
    QCOMPARE(st[0].onlineWorkers, 1);
    QCOMPARE(st[0].redrivers.size(), std::size_t(2));
    QCOMPARE(st[0].redrivers[0].worker, std::string("w-here"));
    QVERIFY(st[0].redrivers[0].online);
    QCOMPARE(st[0].redrivers[1].worker, std::string("w-gone"));
    QCOMPARE(st[0].redrivers[1].version, std::string("tst-1"));
    QVERIFY(!st[0].redrivers[1].online);
    QVERIFY2(st[0].redrivers[1].secondsAgo >= 200 && st[0].redrivers[1].secondsAgo < 260,
        std::to_string(st[0].redrivers[1].secondsAgo).c_str());
    QCOMPARE(st[0].redrivers[1].lastSeen.size(), std::size_t(27)); // 2026-12-07T21:50:00.123456Z

    // Nobody online: the status still says when each was last seen, and the sentence names the last.
    pqxx::nontransaction(*m_owner).exec(
        "UPDATE idem.idem_redrivers SET last_seen = now() - interval '100 seconds' WHERE worker = 'w-here'");
    st = idem::readRedriveStatus(*m_owner, idem::SchemaName());
    QCOMPARE(st.size(), std::size_t(1));
    QCOMPARE(st[0].onlineWorkers, 0);
    QVERIFY(st[0].workers.empty());
    QCOMPARE(st[0].lastSeen, st[0].redrivers[0].lastSeen);
    QCOMPARE(st[0].redrivers[0].worker, std::string("w-here"));
    const auto sentence = idem::redriveAvailability(st[0]);
    QVERIFY2(
        sentence.rfind("no re-driver for charge is online (w-here was last seen 1 min 4", 0) == 0, sentence.c_str());
    QVERIFY2(sentence.find(" ago, at " + st[0].lastSeen + "): the key waits for its client") != std::string::npos,
        sentence.c_str());
    const auto run = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("requeue"), QStringLiteral("t1:charge:nothing"), QStringLiteral("--re-execute"),
            QStringLiteral("--reason"), QStringLiteral("gateway back"), QStringLiteral("--dsn"),
            QString::fromStdString(m_db->dsn()) });
    QVERIFY2(run.out.contains(QStringLiteral(
                 "re-execute t1:charge: no re-driver for charge is online (w-here was last seen 1 min 4")),
        qPrintable(run.out));
}

// The Jobs page reads every job's re-execution outcomes in one call (idem_redrive_outcomes_of,
// v27): the figures one call per job gives, a job without items all zero, for readers only; a
// NULL array, a NULL or zero id, more than 1000 ids refused with ID003.
void TestRedrive::outcomesOfManyJobsInOneRead()
{
    plantFailed(6);
    const auto job = scalar(*m_owner,
        "SELECT job_id FROM idem.idem_job_start('requeue', '{\"operation\": \"charge\"}', 100,"
        " 'gateway back', 'ann', 1, true)");
    pqxx::nontransaction(*m_owner).exec("CALL idem.idem_job_run(" + job + ", 100, 1, 10, 'ann', false)");
    {
        pqxx::work w(*m_owner);
        w.exec("UPDATE idem.idem_redrive_items SET state = 'succeeded', finished_at = now()"
               " WHERE id IN (SELECT id FROM idem.idem_redrive_items ORDER BY id LIMIT 3)");
        w.exec("UPDATE idem.idem_redrive_items SET state = 'failed', finished_at = now()"
               " WHERE id = (SELECT max(id) FROM idem.idem_redrive_items)");
        w.commit();
    }
    auto reader = idem::connect(idem::test::loginDsn(m_db->dsn(), "idem_t_rd_reader", password));
    const std::int64_t id = std::stoll(job);
    const auto many = idem::readRedriveOutcomesOf(*reader, idem::SchemaName(), { id, 999999 });
    QCOMPARE(many.size(), std::size_t(2));
    QCOMPARE(idem::redriveOutcomeSentence(6, many.at(id)), std::string("6 requeued: 3 succeeded, 1 failed, 2 queued"));
    QCOMPARE(idem::redriveOutcomeSentence(6, many.at(id)),
        idem::redriveOutcomeSentence(6, idem::readRedriveOutcomes(*reader, idem::SchemaName(), id)));
    QCOMPARE(many.at(999999).total(), 0LL);
    QVERIFY(idem::readRedriveOutcomesOf(*reader, idem::SchemaName(), {}).empty());
    QCOMPARE(scalar(*reader,
                 "SELECT string_agg(job_id || ' ' || state || ' ' || n, ', ')"
                 " FROM idem.idem_redrive_outcomes_of(ARRAY["
                     + job + ", " + job + ", 999999])"),
        job + " queued 2, " + job + " succeeded 3, " + job + " failed 1");
    for (const char* sql : { "SELECT * FROM idem.idem_redrive_outcomes_of(NULL)",
             "SELECT * FROM idem.idem_redrive_outcomes_of(ARRAY[1, NULL]::bigint[])",
             "SELECT * FROM idem.idem_redrive_outcomes_of(ARRAY[0]::bigint[])",
             "SELECT * FROM idem.idem_redrive_outcomes_of(ARRAY(SELECT generate_series(1, 1001))::bigint[])" })
        QCOMPARE(sqlstateOf(*reader, sql), std::string("ID003"));
    auto worker = idem::connect(idem::test::loginDsn(m_db->dsn(), "idem_t_rd_wka", password));
    QCOMPARE(
        sqlstateOf(*worker, "SELECT * FROM idem.idem_redrive_outcomes_of(ARRAY[1]::bigint[])"), std::string("42501"));
    QVERIFY_EXCEPTION_THROWN(
        idem::readRedriveOutcomesOf(*reader, idem::SchemaName(), std::vector<std::int64_t>(1001, 1)),
        std::invalid_argument);
}

void TestRedrive::badArgumentsAreRefused_data()
{
    QTest::addColumn<QString>("sql");
    QTest::addColumn<QString>("sqlstate");
    // ID003 a bad argument; ID002 a thing named that does not exist; ID004 arguments that are fine
    // but a state refuses (an operation not registered as re-drivable).
    const auto row = [](const char* name, const char* sql, const char* state = "ID003") {
        QTest::newRow(name) << QString::fromLatin1(sql) << QString::fromLatin1(state);
    };
    row("register null tenant", "SELECT * FROM idem.idem_redrive_register(NULL, 'charge')");
    row("register colon", "SELECT * FROM idem.idem_redrive_register('t:1', 'charge')");
    row("register null operation", "SELECT * FROM idem.idem_redrive_register('t1', NULL)");
    row("register star operation", "SELECT * FROM idem.idem_redrive_register('t1', '*')");
    row("register zero bytes", "SELECT * FROM idem.idem_redrive_register('t1', 'charge', 0)");
    row("register huge bytes", "SELECT * FROM idem.idem_redrive_register('t1', 'charge', 1048577)");
    row("register null bytes", "SELECT * FROM idem.idem_redrive_register('t1', 'charge', NULL)");
    row("register null redact", "SELECT * FROM idem.idem_redrive_register('t1', 'charge', 10, NULL)");
    row("register null field", "SELECT * FROM idem.idem_redrive_register('t1', 'charge', 10, ARRAY[NULL]::text[])");
    row("register many fields",
        "SELECT * FROM idem.idem_redrive_register('t1', 'charge', 10, ARRAY(SELECT 'f' || g FROM generate_series(1, "
        "65) g))");
    row("seen null worker", "SELECT * FROM idem.idem_redriver_seen('t1', 'charge', NULL, '1')");
    row("seen long worker", "SELECT * FROM idem.idem_redriver_seen('t1', 'charge', repeat('w', 201), '1')");
    row("seen control worker", "SELECT * FROM idem.idem_redriver_seen('t1', 'charge', E'w\\n1', '1')");
    row("seen null version", "SELECT * FROM idem.idem_redriver_seen('t1', 'charge', 'w', NULL)");
    row("seen unregistered", "SELECT * FROM idem.idem_redriver_seen('t1', 'ship', 'w', '1')", "ID004");
    row("claim unregistered",
        "SELECT * FROM idem.idem_claim_stored('t1:ship:1', 'v1:aa', gen_random_uuid(), 1000, 5, NULL, '{}')", "ID004");
    row("claim null request", "SELECT * FROM idem.idem_claim_stored('t1:charge:1', 'v1:aa', gen_random_uuid(), 1000)");
    row("claim empty request",
        "SELECT * FROM idem.idem_claim_stored('t1:charge:1', 'v1:aa', gen_random_uuid(), 1000, 5, NULL, '')");
    row("claim wrong digest",
        "SELECT * FROM idem.idem_claim_stored('t1:charge:1', 'v1:aa', gen_random_uuid(), 1000, 5, NULL, '{}')");
    row("claim null key",
        "SELECT * FROM idem.idem_claim_stored(NULL, 'v1:aa', gen_random_uuid(), 1000, 5, NULL, '{}')");
    row("claim null token",
        "SELECT * FROM idem.idem_claim_stored('t1:charge:1', 'v1:' || encode(sha256('{}'), 'hex'), NULL, 1000, 5, "
        "NULL, '{}')");
    row("claim zero lease",
        "SELECT * FROM idem.idem_claim_stored('t1:charge:1', 'v1:' || encode(sha256('{}'), 'hex'), gen_random_uuid(), "
        "0, 5,"
        " NULL, '{}')");
    row("take zero limit", "SELECT * FROM idem.idem_redrive_take('t1', 'charge', 'w', 0, 60000)");
    row("take big limit", "SELECT * FROM idem.idem_redrive_take('t1', 'charge', 'w', 101, 60000)");
    row("take null limit", "SELECT * FROM idem.idem_redrive_take('t1', 'charge', 'w', NULL, 60000)");
    row("take short lease", "SELECT * FROM idem.idem_redrive_take('t1', 'charge', 'w', 10, 999)");
    row("take long lease", "SELECT * FROM idem.idem_redrive_take('t1', 'charge', 'w', 10, 3600001)");
    row("take null worker", "SELECT * FROM idem.idem_redrive_take('t1', 'charge', NULL, 10, 60000)");
    row("finish null item", "SELECT * FROM idem.idem_redrive_finish(NULL, 'w', 'succeeded')");
    row("finish zero item", "SELECT * FROM idem.idem_redrive_finish(0, 'w', 'succeeded')");
    row("finish no item", "SELECT * FROM idem.idem_redrive_finish(999999, 'w', 'succeeded')", "ID002");
    row("take not online", "SELECT * FROM idem.idem_redrive_take('t1', 'charge', 'never-seen', 10, 60000)", "ID004");
    row("finish bad outcome", "SELECT * FROM idem.idem_redrive_finish(1, 'w', 'queued')");
    row("finish null outcome", "SELECT * FROM idem.idem_redrive_finish(1, 'w', NULL)");
    row("finish long detail", "SELECT * FROM idem.idem_redrive_finish(1, 'w', 'failed', repeat('d', 4097))");
    row("finish short later wait", "SELECT * FROM idem.idem_redrive_finish(1, 'w', 'later', NULL, 1999)");
    row("finish long later wait", "SELECT * FROM idem.idem_redrive_finish(1, 'w', 'later', NULL, 3600001)");
    row("finish null later wait", "SELECT * FROM idem.idem_redrive_finish(1, 'w', 'later', NULL, NULL)");
    row("reexecute null key", "SELECT * FROM idem.idem_requeue_reexecute(NULL, 'failed', 1, 1, 'r')");
    row("reexecute null status", "SELECT * FROM idem.idem_requeue_reexecute('t1:charge:k-0', NULL, 1, 1, 'r')");
    row("reexecute null attempts",
        "SELECT * FROM idem.idem_requeue_reexecute('t1:charge:k-0', 'failed', 1, NULL, 'r')");
    row("reexecute zero attempts", "SELECT * FROM idem.idem_requeue_reexecute('t1:charge:k-0', 'failed', 1, 0, 'r')");
    row("reexecute blank reason", "SELECT * FROM idem.idem_requeue_reexecute('t1:charge:k-0', 'failed', 1, 1, ' ')");
    row("reexecute no stored, null status", "SELECT * FROM idem.idem_requeue_reexecute('t1:ship:1', NULL, 1, 1, 'r')");
    row("job null redrive",
        "SELECT * FROM idem.idem_job_start('requeue', '{\"operation\": \"charge\"}', 10, 'r', 'a', 1, NULL)");
    row("job fail redrive",
        "SELECT * FROM idem.idem_job_start('fail', '{\"operation\": \"charge\"}', 10, 'r', 'a', NULL, true)");
    row("status bad tenant", "SELECT * FROM idem.idem_redrive_status('t:1', 'charge')");
    row("status bad operation", "SELECT * FROM idem.idem_redrive_status('t1', '')");
    row("outcomes null job", "SELECT * FROM idem.idem_redrive_outcomes(NULL)");
    row("outcomes zero job", "SELECT * FROM idem.idem_redrive_outcomes(0)");
    row("items null key", "SELECT * FROM idem.idem_redrive_items_of(NULL)");
    row("items empty key", "SELECT * FROM idem.idem_redrive_items_of('')");
    row("items long key", "SELECT * FROM idem.idem_redrive_items_of(repeat('k', 1025))");
    row("stored null key", "SELECT * FROM idem.idem_stored_request(NULL)");
    row("stored long key", "SELECT * FROM idem.idem_stored_request(repeat('k', 1025))");
}

// NULL or out-of-range arguments to every new function: ID003, and nothing written; the same for
// a refusal of state (ID004) and a thing that does not exist (ID002).
void TestRedrive::badArgumentsAreRefused()
{
    QFETCH(QString, sql);
    QFETCH(QString, sqlstate);
    plantFailed(2);
    pqxx::nontransaction(*m_owner).exec("SELECT * FROM idem.idem_redriver_seen('t1', 'charge', 'w', '1')");
    const auto before = everything(*m_owner);
    QCOMPARE(QString::fromStdString(sqlstateOf(*m_owner, sql.toStdString())), sqlstate);
    QCOMPARE(everything(*m_owner), before);
}

// idemctl requeue --re-execute: says who will re-execute, queues it, and tasks show follows it.
void TestRedrive::idemctlRequeueReexecutes()
{
    plantFailed(2);
    QCOMPARE(
        idem::registerRedrivable(*m_owner, idem::SchemaName(), { "t1", "ship" }), idem::RegisterOutcome::Registered);
    const auto idemctl = [&](QStringList args) {
        args << QStringLiteral("--dsn") << QString::fromStdString(m_db->dsn());
        return idem::test::runProgram(idem::test::idemctlPath(), args);
    };
    idem::Redriver redriver(*m_owner, storeOptions(), "t1", "charge", "w-cli", effectTask("w"), redriveOptions());
    QCOMPARE(redriver.runOnce(), 0); // its presence: online
    auto run = idemctl({ QStringLiteral("requeue"), QStringLiteral("t1:charge:k-0"), QStringLiteral("t1:ship:nothing"),
        QStringLiteral("--re-execute"), QStringLiteral("--reason"), QStringLiteral("gateway back") });
    QVERIFY2(
        run.out.contains(QStringLiteral("re-execute t1:charge: 1 worker of charge is online")), qPrintable(run.out));
    QVERIFY2(run.out.contains(
                 QStringLiteral("re-execute t1:ship: no re-driver for ship is online: the key waits for its client")),
        qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("re-execution queued (item ")), qPrintable(run.out));
    QCOMPARE(run.exitCode, 3); // the ship key does not exist: refused
    QCOMPARE(redriver.runOnce(), 1);
    run = idemctl({ QStringLiteral("tasks"), QStringLiteral("show"), QStringLiteral("t1:charge:k-0") });
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(run.out.contains(QStringLiteral("t1:charge:k-0: succeeded")), qPrintable(run.out));
    QVERIFY2(run.out.contains(
                 QStringLiteral("request   stored, %1 bytes at ").arg(idem::canonicalRequest(requestOf(0)).size())),
        qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral(": succeeded, requested by ")), qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("; worker w-cli, tries 1")), qPrintable(run.out));
    // A key without a stored request: refused, nothing changed.
    {
        pqxx::work w(*m_owner);
        w.exec("DELETE FROM idem.idem_stored_requests WHERE idempotency_key = 't1:charge:k-1'");
        w.commit();
    }
    const auto before = everything(*m_owner);
    run = idemctl({ QStringLiteral("requeue"), QStringLiteral("t1:charge:k-1"), QStringLiteral("--re-execute"),
        QStringLiteral("--reason"), QStringLiteral("again") });
    QCOMPARE(run.exitCode, 3);
    QVERIFY2(run.out.contains(QStringLiteral("not_redrivable  t1:charge:k-1")), qPrintable(run.out));
    QCOMPARE(everything(*m_owner), before);
}

QTEST_GUILESS_MAIN(TestRedrive)
#include "tst_redrive.moc"
