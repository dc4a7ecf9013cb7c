#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/key.h"
#include "core/taskstore.h"
#include "operations/audit.h"
#include "operations/csv.h"
#include "operations/jobs.h"
#include "operations/tasklist.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"

using namespace std::chrono_literals;
using idem::test::operator""_b;
using idem::test::digestOf;
using idem::test::scalar;
using idem::test::sqlstateOf;
using idem::test::storeOptions;

namespace {
// Cluster-wide login roles, named for this test alone.
constexpr const char* operatorRole = "idem_t_jobs_operator";
constexpr const char* secondOperatorRole = "idem_t_jobs_operator2";
constexpr const char* readerRole = "idem_t_jobs_reader";
constexpr const char* workerRole = "idem_t_jobs_worker";
constexpr const char* outsiderRole = "idem_t_jobs_outsider";
constexpr const char* password = "pw-jobs";

// Every planted row was last updated at this instant: a row still at it has not moved, and an
// audit entry's before image at it shows the row was changed as the job's moment saw it.
constexpr const char* plantedAt = "2024-05-01 10:00:00.123456+00";

const idem::SchemaName schema;

std::int64_t number(pqxx::connection& c, const std::string& sql)
{
    return std::stoll(scalar(c, sql).toStdString());
}

template <typename... P> std::int64_t number(pqxx::connection& c, const std::string& sql, P&&... params)
{
    return std::stoll(scalar(c, sql, std::forward<P>(params)...).toStdString());
}

QJsonObject json(const idem::test::CliRun& run) { return QJsonDocument::fromJson(run.out.toUtf8()).object(); }

std::string key(const std::string& tenant, int i)
{
    char b[16];
    std::snprintf(b, sizeof b, "k%06d", i);
    return tenant + ":charge:" + b;
}

} // namespace

// Issue #28, first part: recovery jobs run by the database. Every assertion reads what landed in
// the tables and the audit trail, against rows planted with a known version.
class TestJobs : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void fiftyThousandRequeuedBesideWorkers();
    void killedRunnerResumesWithoutChangingARowTwice();
    void killedIdemctlResumes();
    void runnerCutByTheServerSaysHowToResume();
    void cancelStopsAtTheNextBatch();
    void lockedRowsAreRetriedThenRefusedBusy();
    void claimNeverWaitsForABatch();
    void goneRowsAreRefused();
    void badInputChangesNothing_data();
    void badInputChangesNothing();
    void badInputThroughIdemctl();
    void overlappingJobsAreRefused();
    void filterMatchesWhatTheTaskListCounts();
    void rolesAndPrivileges();
    void idemctlStartStatusRefused();
    void schedulerRunsTheOldestJobNobodyRuns();

private:
    std::unique_ptr<pqxx::connection> login(const char* role);
    idem::test::CliRun idemctl(const char* role, QStringList args, int timeoutMs = 120000);
    std::string dsnOf(const char* role) { return idem::test::loginDsn(m_db->dsn(), role, password); }
    // n rows tenant:charge:k000001.. in `status`, attempts 1 of 5, due for a retry (a claim takes
    // a retryable one over), last updated at plantedAt.
    void plant(const std::string& tenant, int n, const std::string& status);
    idem::JobStart start(const std::string& tenant, idem::RecoveryAction action = idem::RecoveryAction::Requeue,
        std::int64_t cap = 100000);
    std::int64_t field(std::int64_t job, const std::string& column)
    {
        return number(*m_owner, "SELECT " + column + " FROM idem.idem_jobs WHERE id = $1", job);
    }
    // What a bad call must not change: jobs, items, audit entries and every task row.
    QByteArray state()
    {
        return scalar(*m_owner, "SELECT (SELECT count(*) FROM idem.idem_jobs) || '/' || (SELECT count(*) FROM idem.idem_job_items)"
                                " || '/' || (SELECT count(*) FROM idem.task_idempotency_audit) || '/' ||"
                                " (SELECT count(*) || '/' || sum(hashtext(row_to_json(t)::text)::bigint)"
                                "  FROM idem.task_idempotency t)");
    }
    // The job's counters against its items, and the audit entries of the rows it changed against
    // the items it marks changed: one each, same key, same entry.
    void checkCountsAddUp(std::int64_t job);
    // The C++ verification of the chain: all of it, or (quicker, for the later tests) every
    // entry after the head verified when the test began, itself still in place.
    void checkChain(bool whole = false)
    {
        const auto report = whole || !m_head ? idem::verifyChain(*m_owner, schema) : idem::verifyChainFrom(*m_owner, schema, *m_head);
        QVERIFY2(report.ok(), report.detail.c_str());
        QVERIFY(report.checked > 0);
    }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
    std::unique_ptr<pqxx::connection> m_operator;
    std::optional<idem::ChainHead> m_head;
};

void TestJobs::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("jobs", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    idem::test::createLoginRole(operatorRole, password, "idem_operator");
    idem::test::createLoginRole(secondOperatorRole, password, "idem_operator");
    idem::test::createLoginRole(readerRole, password, "idem_reader");
    idem::test::createLoginRole(workerRole, password, "idem_worker");
    idem::test::createLoginRole(outsiderRole, password, "");
    m_operator = login(operatorRole);
}

void TestJobs::init() { m_head = idem::readAuditHead(*m_owner, schema); }

void TestJobs::cleanupTestCase()
{
    m_operator.reset();
    m_owner.reset();
    m_db.reset();
}

std::unique_ptr<pqxx::connection> TestJobs::login(const char* role)
{
    return std::make_unique<pqxx::connection>(
        idem::test::dsnWith(dsnOf(role), { { "application_name", std::string("idem-t-jobs ") + role } }));
}

idem::test::CliRun TestJobs::idemctl(const char* role, QStringList args, int timeoutMs)
{
    args << QStringLiteral("--dsn") << QString::fromStdString(dsnOf(role));
    return idem::test::runProgram(idem::test::idemctlPath(), args, timeoutMs);
}

void TestJobs::plant(const std::string& tenant, int n, const std::string& status)
{
    pqxx::work w(*m_owner);
    w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until,"
                  " attempts, max_attempts, error_class, error_message, next_attempt_at, created_at, updated_at, errors)"
                  " SELECT $1 || ':charge:k' || lpad(i::text, 6, '0'), $2, $3,"
                  "        CASE WHEN $3 = 'processing' THEN gen_random_uuid() END,"
                  "        CASE WHEN $3 = 'processing' THEN now() - interval '1 minute' END,"
                  "        1, 5, CASE WHEN $3 IN ('failed', 'retryable_failed') THEN 'retryable' END,"
                  "        CASE WHEN $3 IN ('failed', 'retryable_failed') THEN 'timeout' END,"
                  "        CASE WHEN $3 = 'retryable_failed' THEN now() - interval '1 minute' END,"
                  "        $4::timestamptz - interval '1 hour', $4::timestamptz, '[]'"
                  "   FROM generate_series(1, $5) i",
        tenant, digestOf('a'), status, std::string(plantedAt), n);
    w.commit();
}

idem::JobStart TestJobs::start(const std::string& tenant, idem::RecoveryAction action, std::int64_t cap)
{
    idem::JobRequest r;
    r.action = action;
    r.filter.tenant = tenant;
    r.cap = cap;
    r.reason = "gateway fixed (INC-28)";
    r.actor = "tester";
    return idem::startJob(*m_operator, schema, r);
}

void TestJobs::checkCountsAddUp(std::int64_t job)
{
    const std::string j = std::to_string(job);
    // The counters are the items' states, and they add up to what the job matched.
    QCOMPARE(scalar(*m_owner,
                 "SELECT (matched = (SELECT count(*) FROM idem.idem_job_items i WHERE i.job_id = j.id))"
                 " AND changed = (SELECT count(*) FROM idem.idem_job_items i WHERE i.job_id = j.id AND i.state = 'changed')"
                 " AND refused_moved_on = (SELECT count(*) FROM idem.idem_job_items i WHERE i.job_id = j.id AND i.why = 'moved_on')"
                 " AND refused_busy = (SELECT count(*) FROM idem.idem_job_items i WHERE i.job_id = j.id AND i.why = 'busy')"
                 " AND refused_gone = (SELECT count(*) FROM idem.idem_job_items i WHERE i.job_id = j.id AND i.why = 'gone')"
                 " AND skipped_not_applicable = (SELECT count(*) FROM idem.idem_job_items i WHERE i.job_id = j.id"
                 "                               AND i.why = 'not_applicable')"
                 " AND skipped_cancelled = (SELECT count(*) FROM idem.idem_job_items i WHERE i.job_id = j.id AND i.why = 'cancelled')"
                 " FROM idem.idem_jobs j WHERE j.id = " + j),
        "t"_b);
    // One entry per changed row, none for any other: same key, the item names it.
    const auto changed = field(job, "changed");
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency_audit a WHERE a.after_image -> 'job_id' = to_jsonb($1::bigint)"
                              " AND a.action <> 'job'",
                 job),
        changed);
    QCOMPARE(number(*m_owner, "SELECT count(DISTINCT a.idempotency_key) FROM idem.task_idempotency_audit a"
                              " WHERE a.after_image -> 'job_id' = to_jsonb($1::bigint) AND a.action <> 'job'",
                 job),
        changed);
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.idem_job_items i JOIN idem.task_idempotency_audit a ON a.id = i.audit_id"
                              " WHERE i.job_id = $1 AND i.state = 'changed' AND a.idempotency_key = i.idempotency_key"
                              " AND a.after_image -> 'job_id' = to_jsonb($1::bigint)",
                 job),
        changed);
    // Each changed row was changed as the moment saw it: its entry's before image has the
    // status and updated_at the job recorded (the guard), and that is the planted version.
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.idem_job_items i JOIN idem.task_idempotency_audit a ON a.id = i.audit_id"
                              " WHERE i.job_id = $1 AND (a.before_image ->> 'status' <> i.seen_status"
                              "  OR (a.before_image ->> 'updated_at')::timestamptz <> i.seen_updated_at"
                              "  OR i.seen_updated_at <> $2::timestamptz)",
                 job, std::string(plantedAt)),
        0);
}

// 50,000 retryable_failed rows, requeued by one job while three workers claim and complete a
// sixteenth of the same keys (each worker a third of those, in random order): no row changed that a worker had moved on, each such row refused as
// moved_on and listed, one audit entry per changed row, the chain verifies.
void TestJobs::fiftyThousandRequeuedBesideWorkers()
{
    constexpr int rows = 50000;
    plant("jw", rows, "retryable_failed");
    plant("jwother", 100, "retryable_failed");
    const auto started = start("jw");
    QCOMPARE(started.matched, rows);
    QCOMPARE(started.pending, rows);
    QCOMPARE(started.skipped, 0);
    QCOMPARE(started.specSha256.size(), std::size_t(64));

    std::atomic<bool> stop { false };
    std::mutex m;
    std::set<std::string> acquired; // keys a worker claimed (and so moved on)
    std::atomic<int> claims { 0 };
    std::vector<std::thread> workers;
    for (int t = 0; t < 3; ++t)
        workers.emplace_back([&, t] {
            auto conn = m_db->connect();
            idem::TaskStore store(*conn, storeOptions(30s));
            std::vector<int> mine;
            for (int i = 16 * (t + 1); i <= rows; i += 48)
                mine.push_back(i);
            std::shuffle(mine.begin(), mine.end(), std::mt19937(static_cast<unsigned>(t + 1)));
            for (int i : mine) {
                if (stop)
                    break;
                const auto k = idem::TaskKey::parse(key("jw", i));
                const auto c = store.claim(k, digestOf('a'));
                ++claims;
                if (!c.mayExecute())
                    continue;
                {
                    std::lock_guard<std::mutex> g(m);
                    acquired.insert(k.str());
                }
                pqxx::work w(*conn);
                store.fence(w, k, c.token);
                store.complete(w, k, c.token, R"({"ok":true})");
                w.commit();
            }
        });
    idem::JobRunOptions o;
    o.batch = 1000;
    o.duty = 1;
    o.actor = "runner";
    const auto end = idem::runRecoveryJob(*m_operator, schema, started.jobId, o);
    stop = true;
    for (auto& w : workers)
        w.join();
    qInfo("claims %d, acquired %zu; changed %lld, moved on %lld, busy %lld", claims.load(), acquired.size(),
        static_cast<long long>(end.changed), static_cast<long long>(end.refusedMovedOn),
        static_cast<long long>(end.refusedBusy));

    QCOMPARE(end.state, std::string("finished"));
    QCOMPARE(end.matched, rows);
    QCOMPARE(end.changed + end.refused(), rows);
    QCOMPARE(end.refusedGone, 0);
    QCOMPARE(end.pending(), 0);
    QVERIFY(end.changed > 0);
    QVERIFY(end.refusedMovedOn > 0); // the workers got to some rows first
    checkCountsAddUp(started.jobId);

    // Every row refused as moved on was claimed by a worker (the only other writer), and the job
    // recorded the version it found, not the planted one.
    const auto refused = idem::listJobItems(*m_operator, schema, started.jobId, "refused", 0, 10000);
    QCOMPARE(static_cast<std::int64_t>(refused.size()), end.refused());
    for (const auto& it : refused) {
        if (it.why != "moved_on")
            continue;
        QVERIFY2(acquired.count(it.key), it.key.c_str());
        QVERIFY(it.nowUpdatedAtUs && *it.nowUpdatedAtUs != it.seenUpdatedAtUs);
    }

    // No row was left as planted unless it was refused busy: every other one was changed by the
    // job or moved on by a worker.
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency t WHERE t.idempotency_key LIKE 'jw:%'"
                              " AND t.updated_at = $1::timestamptz AND NOT EXISTS (SELECT FROM idem.idem_job_items i"
                              " WHERE i.job_id = $2 AND i.idempotency_key = t.idempotency_key AND i.why = 'busy')",
                 std::string(plantedAt), started.jobId),
        0);
    // Rows no worker touched were requeued exactly once: one more attempt, due, retryable.
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'jw:%'"
                              " AND right(idempotency_key, 6)::int % 16 <> 0"
                              " AND NOT (status = 'retryable_failed' AND max_attempts = 2 AND attempts = 1)"),
        0);
    // The other tenant's rows are as planted.
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'jwother:%'"
                              " AND updated_at = $1::timestamptz",
                 std::string(plantedAt)),
        100);
    // The job's own entries: its start and its finish, the counts in the last.
    QCOMPARE(scalar(*m_owner, "SELECT string_agg(after_image ->> 'event' || ' ' || (after_image ->> 'changed') || ' '"
                              " || db_role, ',' ORDER BY id) FROM idem.task_idempotency_audit"
                              " WHERE action = 'job' AND after_image -> 'job_id' = to_jsonb($1::bigint)",
                 started.jobId),
        QByteArray("start 0 ") + operatorRole + ",finish " + QByteArray::number(qint64(end.changed)) + " " + operatorRole);
    QCOMPARE(scalar(*m_owner, "SELECT os_user FROM idem.task_idempotency_audit WHERE id = $1",
                 number(*m_owner, "SELECT max(audit_id) FROM idem.idem_job_items WHERE job_id = $1", started.jobId)),
        "runner"_b);
    checkChain(true);
    // The later tests need not read these rows again (the audit trail keeps their entries).
    pqxx::nontransaction(*m_owner).exec("DELETE FROM idem.task_idempotency WHERE idempotency_key LIKE 'jw:%'");
}

// pg_terminate_backend of the session running the job mid-run: the batch in flight is lost
// whole, every committed one is recorded; another operator resumes it and no row is changed
// twice.
void TestJobs::killedRunnerResumesWithoutChangingARowTwice()
{
    plant("jk", 2000, "failed");
    const auto started = start("jk");
    auto runner = login(operatorRole);
    const int pid = runner->backendpid();
    std::atomic<bool> ended { false };
    std::string error;
    std::thread t([&] {
        try {
            pqxx::nontransaction n(*runner);
            n.exec_params("CALL idem.idem_job_run($1, 100, 1.0)", started.jobId);
        } catch (const std::exception& e) {
            error = e.what();
        }
        ended = true;
    });
    QVERIFY(idem::test::waitUntil([&] { return field(started.jobId, "changed") >= 300 || ended; }, 60s));
    QVERIFY2(!ended, error.c_str());
    QCOMPARE(scalar(*m_owner, "SELECT runner_pid FROM idem.idem_jobs WHERE id = $1", started.jobId), QByteArray::number(pid));
    // One runner per job: another session is refused while this one runs it, and told which.
    {
        auto other = login(secondOperatorRole);
        try {
            idem::runRecoveryJob(*other, schema, started.jobId);
            QFAIL("a second runner attached");
        } catch (const idem::JobRefused& e) {
            QCOMPARE(e.sqlstate, std::string("ID004"));
            QVERIFY2(std::string(e.what()).find("is being run by another session: pid " + std::to_string(pid))
                    != std::string::npos,
                e.what());
        }
        QCOMPARE(field(started.jobId, "attaches"), 1);
    }
    QVERIFY(idem::test::terminateBackend(*m_owner, pid));
    t.join();
    QVERIFY(!error.empty());

    // Between the kill and the resume: active, nobody running it, every count consistent.
    auto mid = idem::readJob(*m_operator, schema, started.jobId);
    QVERIFY(mid);
    QCOMPARE(mid->state, std::string("active"));
    QVERIFY(!mid->runnerAlive);
    QVERIFY(mid->changed >= 300 && mid->changed < 2000);
    checkCountsAddUp(started.jobId);
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'jk:%'"
                              " AND status = 'retryable_failed'"),
        mid->changed);
    const auto statusRun = idemctl(readerRole, { QStringLiteral("job"), QStringLiteral("status"),
                                                   QString::number(started.jobId) });
    QVERIFY2(statusRun.exitCode == 0, qPrintable(idem::test::describe(statusRun)));
    QVERIFY2(statusRun.out.contains(QStringLiteral("not running: `idemctl job resume %1`").arg(started.jobId)),
        qPrintable(statusRun.out));

    // Anyone with the right resumes it.
    auto second = login(secondOperatorRole);
    idem::JobRunOptions o;
    o.batch = 500;
    o.duty = 1;
    const auto end = idem::runRecoveryJob(*second, schema, started.jobId, o);
    QCOMPARE(end.state, std::string("finished"));
    QCOMPARE(end.changed, 2000);
    QCOMPARE(end.refused(), 0);
    QCOMPARE(end.attaches, 2);
    checkCountsAddUp(started.jobId);
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM (SELECT idempotency_key FROM idem.task_idempotency_audit"
                              " WHERE after_image -> 'job_id' = to_jsonb($1::bigint) AND action = 'requeue'"
                              " GROUP BY 1 HAVING count(*) > 1) x",
                 started.jobId),
        0);
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'jk:%'"
                              " AND status = 'retryable_failed' AND max_attempts = 2"),
        2000);
    // The rows after the kill were changed by the second operator, the finish is theirs.
    QCOMPARE(scalar(*m_owner, "SELECT db_role FROM idem.task_idempotency_audit WHERE id = $1",
                 number(*m_owner, "SELECT end_audit_id FROM idem.idem_jobs WHERE id = $1", started.jobId)),
        QByteArray(secondOperatorRole));
    checkChain();
}

// kill -9 of `idemctl job resume`: the server ends its session within a second or so (its client
// check), the job keeps what committed, and `idemctl job resume` finishes it.
void TestJobs::killedIdemctlResumes()
{
    plant("jc", 2000, "failed");
    const auto detached = idemctl(operatorRole, { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"),
                                                   QStringLiteral("requeue"), QStringLiteral("--tenant"), QStringLiteral("jc"),
                                                   QStringLiteral("--reason"), QStringLiteral("INC-28 requeue"),
                                                   QStringLiteral("--detach"), QStringLiteral("--json") });
    QVERIFY2(detached.exitCode == 0, qPrintable(idem::test::describe(detached)));
    const auto id = json(detached).value(QStringLiteral("id")).toInteger();
    QVERIFY(id > 0);
    QCOMPARE(json(detached).value(QStringLiteral("state")).toString(), QStringLiteral("active"));
    QCOMPARE(field(id, "changed"), 0);

    QProcess p;
    p.setProcessEnvironment(idem::test::cleanEnvironment());
    p.start(idem::test::idemctlPath(),
        { QStringLiteral("job"), QStringLiteral("resume"), QString::number(id), QStringLiteral("--batch"),
            QStringLiteral("50"), QStringLiteral("--duty"), QStringLiteral("0.5"), QStringLiteral("--quiet"),
            QStringLiteral("--dsn"), QString::fromStdString(dsnOf(operatorRole)) });
    QVERIFY(p.waitForStarted());
    QVERIFY(idem::test::waitUntil([&] { return field(id, "changed") >= 200 || p.state() == QProcess::NotRunning; }, 60s));
    QCOMPARE(p.state(), QProcess::Running);
    p.kill(); // SIGKILL
    QVERIFY(p.waitForFinished());
    QVERIFY(idem::test::waitUntil(
        [&] { return scalar(*m_owner, "SELECT idem.idem_job_runner_alive(j)::text FROM idem.idem_jobs j WHERE id = $1", id) == "false"_b; },
        15s));
    const auto mid = field(id, "changed");
    QVERIFY(mid >= 200 && mid < 2000);
    checkCountsAddUp(id);

    const auto resumed = idemctl(secondOperatorRole, { QStringLiteral("job"), QStringLiteral("resume"), QString::number(id),
                                                        QStringLiteral("--batch"), QStringLiteral("1000"),
                                                        QStringLiteral("--duty"), QStringLiteral("1"), QStringLiteral("--json") });
    QVERIFY2(resumed.exitCode == 0, qPrintable(idem::test::describe(resumed)));
    const auto j = json(resumed);
    QCOMPARE(j.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
    QCOMPARE(j.value(QStringLiteral("changed")).toInteger(), 2000);
    QCOMPARE(j.value(QStringLiteral("pending")).toInteger(), 0);
    checkCountsAddUp(id);
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'jc:%'"
                              " AND status = 'retryable_failed' AND max_attempts = 2"),
        2000);
    checkChain();
}

// Issue #40 item E: a job whose runner's session the server ends (a failover, a switchover, an
// administrator) says its id and how to go on, not only "lost the connection".
void TestJobs::runnerCutByTheServerSaysHowToResume()
{
    plant("jt", 2000, "failed");
    QProcess p;
    p.setProcessEnvironment(idem::test::cleanEnvironment());
    p.start(idem::test::idemctlPath(),
        { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"), QStringLiteral("requeue"),
            QStringLiteral("--tenant"), QStringLiteral("jt"), QStringLiteral("--reason"), QStringLiteral("INC-40"),
            QStringLiteral("--batch"), QStringLiteral("50"), QStringLiteral("--duty"), QStringLiteral("0.5"),
            QStringLiteral("--quiet"), QStringLiteral("--dsn"), QString::fromStdString(dsnOf(operatorRole)) });
    QVERIFY(p.waitForStarted());
    std::int64_t id = 0;
    QVERIFY(idem::test::waitUntil(
        [&] {
            id = number(*m_owner, "SELECT coalesce(max(id), 0) FROM idem.idem_jobs WHERE filter ->> 'tenant' = 'jt'");
            return (id > 0 && field(id, "changed") >= 100) || p.state() == QProcess::NotRunning;
        },
        60s));
    QCOMPARE(p.state(), QProcess::Running);
    const int pid = static_cast<int>(number(*m_owner, "SELECT runner_pid FROM idem.idem_jobs WHERE id = " + std::to_string(id)));
    QVERIFY(idem::test::terminateBackend(*m_owner, pid));
    const auto run = idem::test::finishProcess(p, 30000);
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(QStringLiteral("running job %1 stopped").arg(id))
            && run.err.contains(QStringLiteral("`idemctl job resume %1` continues it").arg(id)),
        qPrintable(idem::test::describe(run)));
    const auto resumed = idemctl(operatorRole, { QStringLiteral("job"), QStringLiteral("resume"), QString::number(id),
                                                    QStringLiteral("--batch"), QStringLiteral("1000"),
                                                    QStringLiteral("--duty"), QStringLiteral("1"), QStringLiteral("--json") });
    QVERIFY2(resumed.exitCode == 0, qPrintable(idem::test::describe(resumed)));
    QCOMPARE(json(resumed).value(QStringLiteral("changed")).toInteger(), 2000);
    checkCountsAddUp(id);
}

// A cancel while the job runs: the runner stops at its next batch, the rows not done are
// skipped (cancelled) and unchanged, the cancel is the job's closing entry with its reason.
void TestJobs::cancelStopsAtTheNextBatch()
{
    plant("jx", 2000, "failed");
    const auto started = start("jx");
    auto runner = login(operatorRole);
    std::atomic<bool> ended { false };
    std::string error;
    std::thread t([&] {
        try {
            pqxx::nontransaction n(*runner);
            n.exec_params("CALL idem.idem_job_run($1, 50, 0.05)", started.jobId);
        } catch (const std::exception& e) {
            error = e.what();
        }
        ended = true;
    });
    QVERIFY(idem::test::waitUntil([&] { return field(started.jobId, "changed") >= 50 || ended; }, 60s));
    const auto cancel = idemctl(secondOperatorRole, { QStringLiteral("job"), QStringLiteral("cancel"),
                                                       QString::number(started.jobId), QStringLiteral("--reason"),
                                                       QStringLiteral("wrong filter"), QStringLiteral("--json") });
    QVERIFY2(cancel.exitCode == 0, qPrintable(idem::test::describe(cancel)));
    t.join(); // the runner's CALL returns once its next batch finds the job ended
    QVERIFY2(error.empty(), error.c_str());

    const auto end = idem::readJob(*m_operator, schema, started.jobId);
    QCOMPARE(end->state, std::string("cancelled"));
    QVERIFY(!end->runnerAlive);
    QVERIFY(end->changed >= 50 && end->changed < 2000);
    QCOMPARE(end->changed + end->skippedCancelled, 2000);
    QCOMPARE(json(cancel).value(QStringLiteral("skipped_cancelled")).toInteger(), end->skippedCancelled);
    checkCountsAddUp(started.jobId);
    // Nothing changed after the cancel: every skipped row is as planted.
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency t JOIN idem.idem_job_items i"
                              " ON i.idempotency_key = t.idempotency_key AND i.job_id = $1"
                              " WHERE i.why = 'cancelled' AND t.updated_at = $2::timestamptz AND t.status = 'failed'",
                 started.jobId, std::string(plantedAt)),
        end->skippedCancelled);
    QCOMPARE(scalar(*m_owner, "SELECT string_agg(after_image ->> 'event' || '|' || reason || '|' || db_role || '|'"
                              " || (after_image ->> 'state'), ',' ORDER BY id) FROM idem.task_idempotency_audit"
                              " WHERE action = 'job' AND after_image -> 'job_id' = to_jsonb($1::bigint)",
                 started.jobId),
        QByteArray("start|gateway fixed (INC-28)|") + operatorRole + "|active,cancel|wrong filter|" + secondOperatorRole
            + "|cancelled");
    // An ended job can be neither resumed nor cancelled again.
    QVERIFY_THROWS_EXCEPTION(idem::JobRefused, idem::runRecoveryJob(*m_operator, schema, started.jobId));
    QVERIFY_THROWS_EXCEPTION(idem::JobRefused, idem::cancelJob(*m_operator, schema, started.jobId, "again"));
    const auto resume = idemctl(operatorRole, { QStringLiteral("job"), QStringLiteral("resume"), QString::number(started.jobId) });
    QCOMPARE(resume.exitCode, 3);
    QVERIFY2(resume.err.contains(QStringLiteral("has ended")), qPrintable(resume.err));
    QVERIFY2(resume.err.contains(QStringLiteral("refused (SQLSTATE ID004)")), qPrintable(resume.err));
    checkChain();
}

// A row a worker holds is never waited for: tried again later; one held through five tries is
// refused as busy and left as it is, one let go in time is changed.
void TestJobs::lockedRowsAreRetriedThenRefusedBusy()
{
    plant("jl", 20, "failed");
    const auto started = start("jl");
    auto holder = m_db->connect();
    pqxx::work hold(*holder);
    hold.exec_params("SELECT 1 FROM idem.task_idempotency WHERE idempotency_key = $1 FOR UPDATE", key("jl", 5));
    auto briefHolder = m_db->connect();
    auto brief = std::make_unique<pqxx::work>(*briefHolder);
    brief->exec_params("SELECT 1 FROM idem.task_idempotency WHERE idempotency_key = $1 FOR UPDATE", key("jl", 10));
    std::thread letGo([&] {
        // Let key 10 go once the job has found it locked.
        idem::test::waitUntil([&] {
            return number(*m_owner, "SELECT tries FROM idem.idem_job_items WHERE job_id = $1 AND seq = 10", started.jobId) >= 1;
        });
        brief->commit();
    });
    idem::JobRunOptions o;
    o.duty = 1;
    const auto end = idem::runRecoveryJob(*m_operator, schema, started.jobId, o);
    letGo.join();
    hold.commit();
    QCOMPARE(end.state, std::string("finished"));
    QCOMPARE(end.changed, 19);
    QCOMPARE(end.refusedBusy, 1);
    QCOMPARE(scalar(*m_owner, "SELECT idempotency_key || ' ' || why || ' ' || tries FROM idem.idem_job_items"
                              " WHERE job_id = $1 AND state = 'refused'",
                 started.jobId),
        QByteArray::fromStdString(key("jl", 5) + " busy 5"));
    QCOMPARE(scalar(*m_owner, "SELECT status || ' ' || (updated_at = $2::timestamptz) FROM idem.task_idempotency"
                              " WHERE idempotency_key = $1",
                 key("jl", 5), std::string(plantedAt)),
        "failed true"_b);
    QVERIFY(number(*m_owner, "SELECT tries FROM idem.idem_job_items WHERE job_id = $1 AND seq = 10", started.jobId) >= 1);
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_job_items WHERE job_id = $1 AND seq = 10", started.jobId),
        "changed"_b);
    checkCountsAddUp(started.jobId);
}

// A claim never waits for a batch that holds rows: while a batch's transaction is open, a claim
// of one of its rows answers at once (in_progress, locked); a wait would hit the claimer's
// statement timeout instead.
void TestJobs::claimNeverWaitsForABatch()
{
    plant("jn", 10, "retryable_failed");
    const auto started = start("jn");
    auto runner = login(operatorRole);
    {
        pqxx::work w(*runner);
        w.exec_params("SELECT idem.idem_job_attach($1, 'tester')", started.jobId);
        w.commit();
    }
    pqxx::work batch(*runner);
    QCOMPARE(batch.exec_params("SELECT done FROM idem.idem_job_batch($1, 5)", started.jobId)[0][0].as<int>(), 5);
    auto claimer = m_db->connect();
    pqxx::nontransaction(*claimer).exec("SET statement_timeout = 3000");
    idem::TaskStore store(*claimer, storeOptions(30s));
    const auto c = store.claim(idem::TaskKey::parse(key("jn", 2)), digestOf('a'));
    QCOMPARE(idem::decisionName(c.decision), "in_progress");
    QCOMPARE(c.detail, std::string("locked"));
    // A row the batch did not take is claimed as usual.
    QVERIFY(store.claim(idem::TaskKey::parse(key("jn", 9)), digestOf('a')).mayExecute());
    batch.commit();
    idem::JobRunOptions o;
    o.duty = 1;
    const auto end = idem::runRecoveryJob(*runner, schema, started.jobId, o);
    QCOMPARE(end.changed, 9);
    QCOMPARE(end.refusedMovedOn, 1); // key 9: claimed after the moment
    checkCountsAddUp(started.jobId);
}

// A row deleted after the moment is refused as gone.
void TestJobs::goneRowsAreRefused()
{
    plant("jg", 10, "failed");
    const auto started = start("jg");
    pqxx::nontransaction(*m_owner).exec_params(
        "DELETE FROM idem.task_idempotency WHERE idempotency_key IN ($1, $2)", key("jg", 3), key("jg", 7));
    const auto end = idem::runRecoveryJob(*m_operator, schema, started.jobId);
    QCOMPARE(end.changed, 8);
    QCOMPARE(end.refusedGone, 2);
    checkCountsAddUp(started.jobId);
}

void TestJobs::badInputChangesNothing_data()
{
    QTest::addColumn<QString>("sql");
    QTest::addColumn<QString>("sqlstate");
    const auto s = [](const QString& action, const QString& filter, const QString& cap, const QString& reason,
                       const QString& extra = QStringLiteral("NULL")) {
        return QStringLiteral("SELECT * FROM idem.idem_job_start(%1, %2, %3, %4, 'tester', %5)")
            .arg(action, filter, cap, reason, extra);
    };
    const QString rq = QStringLiteral("'requeue'");
    const QString jb = QStringLiteral("'{\"tenant\": \"jb\"}'");
    const QString r = QStringLiteral("'why'");
    QTest::newRow("cap 0") << s(rq, jb, QStringLiteral("0"), r) << "ID003";
    QTest::newRow("cap 10^9") << s(rq, jb, QStringLiteral("1000000000"), r) << "ID003";
    QTest::newRow("cap 1000001") << s(rq, jb, QStringLiteral("1000001"), r) << "ID003";
    QTest::newRow("cap negative") << s(rq, jb, QStringLiteral("-1"), r) << "ID003";
    QTest::newRow("cap NULL") << s(rq, jb, QStringLiteral("NULL"), r) << "ID003";
    QTest::newRow("cap under the match") << s(rq, jb, QStringLiteral("9"), r) << "ID004";
    QTest::newRow("reason NULL") << s(rq, jb, QStringLiteral("100"), QStringLiteral("NULL")) << "ID003";
    QTest::newRow("reason blank") << s(rq, jb, QStringLiteral("100"), QStringLiteral("E' \\u200B\\t'")) << "ID003";
    QTest::newRow("reason 16385 characters") << s(rq, jb, QStringLiteral("100"), QStringLiteral("repeat('r', 16385)")) << "ID003";
    QTest::newRow("action NULL") << s(QStringLiteral("NULL"), jb, QStringLiteral("100"), r) << "ID003";
    QTest::newRow("action delete") << s(QStringLiteral("'delete'"), jb, QStringLiteral("100"), r) << "ID003";
    QTest::newRow("extra attempts 0") << s(rq, jb, QStringLiteral("100"), r, QStringLiteral("0")) << "ID003";
    QTest::newRow("extra attempts 1001") << s(rq, jb, QStringLiteral("100"), r, QStringLiteral("1001")) << "ID003";
    QTest::newRow("extra attempts for fail") << s(QStringLiteral("'fail'"), jb, QStringLiteral("100"), r, QStringLiteral("2")) << "ID003";
    const auto f = [&](const char* filter) { return s(rq, QString::fromUtf8(filter), QStringLiteral("100"), r); };
    QTest::newRow("filter NULL") << f("NULL") << "ID003";
    QTest::newRow("filter array") << f("'[]'") << "ID003";
    QTest::newRow("filter string") << f("'\"jb\"'") << "ID003";
    QTest::newRow("filter unknown key") << f("'{\"tenant\": \"jb\", \"where\": \"true\"}'") << "ID003";
    QTest::newRow("filter bad status") << f("'{\"statuses\": [\"failed\", \"deleted\"]}'") << "ID003";
    QTest::newRow("filter status not text") << f("'{\"statuses\": [1]}'") << "ID003";
    QTest::newRow("filter statuses not an array") << f("'{\"statuses\": \"failed\"}'") << "ID003";
    QTest::newRow("filter tenant with colon") << f("'{\"tenant\": \"jb:charge\"}'") << "ID003";
    QTest::newRow("filter empty tenant") << f("'{\"tenant\": \"\"}'") << "ID003";
    QTest::newRow("filter tenant number") << f("'{\"tenant\": 7}'") << "ID003";
    QTest::newRow("filter 2000-byte prefix") << f("jsonb_build_object('key_prefix', repeat('p', 2000))") << "ID003";
    QTest::newRow("filter negative attempts") << f("'{\"min_attempts\": -1}'") << "ID003";
    QTest::newRow("filter fractional attempts") << f("'{\"min_attempts\": 1.5}'") << "ID003";
    QTest::newRow("filter attempts as text") << f("'{\"min_attempts\": \"1\"}'") << "ID003";
    QTest::newRow("filter huge attempts") << f("'{\"min_attempts\": 1e30}'") << "ID003";
    QTest::newRow("filter window 0") << f("'{\"updated_within_minutes\": 0}'") << "ID003";
    QTest::newRow("filter retry window without window") << f("'{\"failed_retry_in_window\": true}'") << "ID003";
    QTest::newRow("filter flag as text") << f("'{\"expired_lease\": \"yes\"}'") << "ID003";
    QTest::newRow("filter bad error class") << f("'{\"error_class\": \"fatal\"}'") << "ID003";
    // Valid filters that match nothing: a clear ID002, nothing written. Hostile strings are
    // values: they match only keys that literally hold them.
    QTest::newRow("matches nothing") << f("'{\"tenant\": \"nobody\"}'") << "ID002";
    QTest::newRow("hostile tenant") << f("jsonb_build_object('tenant', $$jb'); DELETE FROM idem.task_idempotency; --$$)")
                                    << "ID002";
    QTest::newRow("percent prefix") << f("'{\"key_prefix\": \"%\"}'") << "ID002";
    QTest::newRow("underscore prefix") << f("'{\"key_prefix\": \"jb_charge\"}'") << "ID002";
    QTest::newRow("backslash prefix") << f("'{\"key_prefix\": \"jb\\\\\"}'") << "ID002";
    QTest::newRow("operation like pattern") << f("'{\"tenant\": \"jb\", \"operation\": \"%\"}'") << "ID002";
    QTest::newRow("action applies to none")
        << s(QStringLiteral("'release'"), jb, QStringLiteral("100"), r) << "ID002";
    // Runs and cancels of nothing.
    QTest::newRow("attach no job") << QStringLiteral("SELECT idem.idem_job_attach(999999, 'x')") << "ID002";
    QTest::newRow("batch no job") << QStringLiteral("SELECT * FROM idem.idem_job_batch(999999, 10)") << "ID002";
    QTest::newRow("batch 0 rows") << QStringLiteral("SELECT * FROM idem.idem_job_batch(999999, 0)") << "ID003";
    QTest::newRow("cancel no job") << QStringLiteral("SELECT * FROM idem.idem_job_cancel(999999, 'r')") << "ID002"; // not found (schema v28)
    QTest::newRow("cancel NULL reason") << QStringLiteral("SELECT * FROM idem.idem_job_cancel(999999, NULL)") << "ID003";
    QTest::newRow("preview 0") << QStringLiteral("SELECT * FROM idem.idem_job_preview('requeue', '{}', 0)") << "ID003";
    QTest::newRow("preview bad filter") << QStringLiteral("SELECT * FROM idem.idem_job_preview('requeue', '{\"x\": 1}')") << "ID003";
}

// Each refused whole with a clear SQLSTATE: no job, no item, no audit entry, no task row changes.
void TestJobs::badInputChangesNothing()
{
    QFETCH(QString, sql);
    QFETCH(QString, sqlstate);
    if (number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'jb:%'") == 0)
        plant("jb", 10, "failed");
    const auto before = state();
    QCOMPARE(QString::fromStdString(sqlstateOf(*m_operator, sql.toStdString())), sqlstate);
    QCOMPARE(state(), before);
}

// The same refusals through idemctl: out-of-range options are usage errors (exit 2) before
// anything is sent; a filter matching nothing is the database's refusal (exit 3).
void TestJobs::badInputThroughIdemctl()
{
    plant("jd", 5, "failed");
    const auto before = state();
    const QStringList base { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"),
        QStringLiteral("requeue"), QStringLiteral("--tenant"), QStringLiteral("jd") };
    const auto with = [&](QStringList extra) { return idemctl(operatorRole, base + extra); };
    const auto r = QStringList { QStringLiteral("--reason"), QStringLiteral("why") };
    QCOMPARE(with(r + QStringList { QStringLiteral("--cap"), QStringLiteral("0") }).exitCode, 2);
    QCOMPARE(with(r + QStringList { QStringLiteral("--cap"), QStringLiteral("1000000000") }).exitCode, 2);
    QCOMPARE(with({}).exitCode, 2); // no reason
    QCOMPARE(with({ QStringLiteral("--reason"), QStringLiteral(" \u200b") }).exitCode, 2);
    QCOMPARE(with(r + QStringList { QStringLiteral("--status"), QStringLiteral("gone") }).exitCode, 2);
    QCOMPARE(with(r + QStringList { QStringLiteral("--attempts"), QStringLiteral("0") }).exitCode, 2);
    QCOMPARE(with(r + QStringList { QStringLiteral("--unknown") }).exitCode, 2);
    const auto capped = with(r + QStringList { QStringLiteral("--cap"), QStringLiteral("4") });
    QCOMPARE(capped.exitCode, 3);
    QVERIFY2(capped.err.contains(QStringLiteral("more than the cap of 4")), qPrintable(capped.err));
    QVERIFY2(capped.err.contains(QStringLiteral("refused (SQLSTATE ID004)")), qPrintable(capped.err));
    const auto none = idemctl(operatorRole, { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"),
                                               QStringLiteral("requeue"), QStringLiteral("--tenant"),
                                               QStringLiteral("nobody"), QStringLiteral("--reason"), QStringLiteral("why") });
    QCOMPARE(none.exitCode, 3);
    QVERIFY2(none.err.contains(QStringLiteral("matches no task: nothing was started")), qPrintable(none.err));
    QVERIFY2(none.err.contains(QStringLiteral("refused (SQLSTATE ID002)")), qPrintable(none.err));
    // Issue #41 item 4: a second --error-class kept only the last, without a word. A value option
    // given twice is a usage error unless it repeats by design (--status).
    const auto twice = with(r + QStringList { QStringLiteral("--error-class"), QStringLiteral("retryable"),
                                    QStringLiteral("--error-class"), QStringLiteral("unknown") });
    QCOMPARE(twice.exitCode, 2);
    QVERIFY2(twice.err.contains(QStringLiteral("option --error-class is given twice")), qPrintable(twice.err));
    QCOMPARE(with(r + QStringList { QStringLiteral("--reason"), QStringLiteral("again") }).exitCode, 2);
    const auto statuses = with({ QStringLiteral("--status"), QStringLiteral("failed"), QStringLiteral("--status"),
        QStringLiteral("retryable_failed"), QStringLiteral("--dry-run") });
    QVERIFY2(statuses.exitCode == 0 && statuses.out.contains(QStringLiteral("5 task(s) match status failed or retryable_failed, tenant jd")),
        qPrintable(idem::test::describe(statuses)));
    QCOMPARE(state(), before);
    // Issue #40 item 8: a start refused at the cap writes nothing first (it wrote up to cap + 1
    // items and rolled them back: dead rows any login with one action right could pile up).
    pqxx::work w(*m_operator);
    const auto written = [&] {
        return w.exec("SELECT pg_stat_get_xact_tuples_inserted('idem.idem_job_items'::regclass)"
                      " + pg_stat_get_xact_tuples_inserted('idem.idem_jobs'::regclass)")[0][0]
            .as<std::int64_t>();
    };
    const auto inserted = written();
    std::string refusal;
    try {
        pqxx::subtransaction sub(w, "refused"); // rolled back to its savepoint as it goes
        sub.exec("SELECT * FROM idem.idem_job_start('requeue', '{\"tenant\": \"jd\"}', 4, 'why')");
    } catch (const pqxx::sql_error& e) {
        refusal = e.what();
    }
    QVERIFY2(refusal.find("more than the cap of 4") != std::string::npos, refusal.c_str());
    QCOMPARE(written(), inserted);
    w.abort();
}

// Two open jobs never hold the same row: the second is refused naming the first (nothing
// written), a job over other rows starts; two starts at once over the same rows: one wins.
void TestJobs::overlappingJobsAreRefused()
{
    plant("jo", 100, "failed");
    idem::JobRequest a;
    a.filter.keyPrefix = "jo:charge:k0000"; // k000001..k000099
    a.reason = "first";
    a.actor = "tester";
    const auto first = idem::startJob(*m_operator, schema, a);
    QCOMPARE(first.matched, 99);
    const auto before = state();
    try {
        start("jo");
        QFAIL("a job over rows job A has still to do started");
    } catch (const idem::JobRefused& e) {
        QCOMPARE(e.sqlstate, std::string("ID004"));
        QVERIFY2(std::string(e.what()).find("job " + std::to_string(first.jobId) + " has still to do 99 of the tasks")
                != std::string::npos,
            e.what());
    }
    QCOMPARE(state(), before);
    idem::JobRequest c = a;
    c.filter.keyPrefix = "jo:charge:k000100";
    QCOMPARE(idem::startJob(*m_operator, schema, c).matched, 1);

    // Two at once over the same new rows.
    plant("jp", 50, "failed");
    auto other = login(secondOperatorRole);
    std::barrier go(2);
    std::atomic<int> won { 0 }, refused { 0 };
    const auto attempt = [&](pqxx::connection& conn) {
        idem::JobRequest r;
        r.filter.tenant = "jp";
        r.reason = "race";
        go.arrive_and_wait();
        try {
            idem::startJob(conn, schema, r);
            ++won;
        } catch (const idem::JobRefused& e) {
            if (e.sqlstate == "ID004")
                ++refused;
        }
    };
    std::thread t1([&] { attempt(*m_operator); });
    std::thread t2([&] { attempt(*other); });
    t1.join();
    t2.join();
    QCOMPARE(won.load(), 1);
    QCOMPARE(refused.load(), 1);
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.idem_job_items WHERE idempotency_key LIKE 'jp:%'"), 50);

    // Once the first has ended, its rows may be another job's.
    idem::cancelJob(*m_operator, schema, first.jobId, "make way");
    const auto after = idem::startJob(*m_operator, schema, a);
    QCOMPARE(after.matched, 99);
    checkChain();
}

// A job matches what the Tasks page counts for the same filter (countTasks), for each filter
// the page has, over rows in every state; previewJob changes nothing.
void TestJobs::filterMatchesWhatTheTaskListCounts()
{
    pqxx::work w(*m_owner);
    w.exec(idem::test::plantTasksSql(R"(
        ('fp:charge:a1', 'processing', interval '-5 minutes', 1, NULL, NULL, NULL, interval '2 hours'),
        ('fp:charge:a2', 'processing', interval '5 minutes', 2, NULL, NULL, NULL, interval '1 minute'),
        ('fp:refund:a3', 'retryable_failed', NULL, 3, 'unknown', 'timeout', NULL, interval '3 hours'),
        ('fp:refund:a4', 'retryable_failed', NULL, 1, 'retryable', '503', NULL, interval '10 minutes'),
        ('fp:charge:a5', 'failed', NULL, 5, 'retryable', 'exhausted', NULL, interval '1 day'),
        ('fp:charge:a6', 'failed', NULL, 1, 'permanent', 'card declined', NULL, interval '5 minutes'),
        ('fp:charge:a7', 'succeeded', NULL, 1, NULL, NULL, '{"ok": 1}', interval '1 hour'),
        ('fq:charge:a_8', 'failed', NULL, 2, 'unknown', 'lost', NULL, interval '30 minutes'),
        ('fq:charge:a%9', 'failed', NULL, 2, 'unknown', 'lost', NULL, interval '30 minutes'),
        ('fpx:charge:b1', 'failed', NULL, 2, 'unknown', 'lost', NULL, interval '30 minutes'))"));
    w.exec("INSERT INTO idem.task_idempotency_conflicts VALUES ('fp:charge:a6', now(), now(), 1, 'v1:x')");
    // Failures of retries in their error history (issue 44 item 4): r1 in the window, its time
    // written without a zone (read as UTC whatever the reader's TimeZone); r2's retry failed 50
    // minutes ago, inside a 60-minute window only; r3 succeeded since; r4's entries are not of
    // the shape the filter reads (an attempt as a string, a time that is no time).
    w.exec(idem::test::plantTasksSql(R"(
        ('fr:charge:r1', 'failed', NULL::interval, 2, 'retryable', 'timeout', NULL, interval '1 hour'),
        ('fr:charge:r2', 'retryable_failed', NULL, 3, 'retryable', '503', NULL, interval '1 hour'),
        ('fr:charge:r3', 'succeeded', NULL, 2, NULL, NULL, '{"ok": 2}', interval '1 hour'),
        ('fr:charge:r4', 'failed', NULL, 2, 'retryable', 'timeout', NULL, interval '1 hour'))"));
    w.exec(R"(UPDATE idem.task_idempotency SET updated_at = now() - interval '1 minute', errors = CASE idempotency_key
        WHEN 'fr:charge:r1' THEN jsonb_build_array(jsonb_build_object('attempt', 1, 'at', now() - interval '1 hour'),
            jsonb_build_object('attempt', 2, 'at', to_char(now() AT TIME ZONE 'UTC' - interval '3 minutes',
                                                           'YYYY-MM-DD"T"HH24:MI:SS')))
        WHEN 'fr:charge:r2' THEN jsonb_build_array(jsonb_build_object('attempt', 1, 'at', now() - interval '2 minutes'),
            jsonb_build_object('attempt', 3, 'at', now() - interval '50 minutes'))
        WHEN 'fr:charge:r3' THEN jsonb_build_array(jsonb_build_object('attempt', 2, 'at', now() - interval '5 minutes'))
        ELSE jsonb_build_array(jsonb_build_object('attempt', '2', 'at', now()), jsonb_build_object('attempt', 2, 'at', 'soon'),
            42, jsonb_build_object('attempt', 2)) END
        WHERE idempotency_key LIKE 'fr:%')");
    w.commit();
    // The Tasks page's reader in another time zone than the job's (UTC): the rows are the same.
    pqxx::nontransaction(*m_operator).exec("SET TimeZone = 'Asia/Shanghai'");
    std::vector<std::pair<const char*, idem::TaskFilter>> filters;
    const auto add = [&](const char* name, auto&& set) {
        idem::TaskFilter f;
        set(f);
        filters.emplace_back(name, f);
    };
    add("tenant", [](auto& f) { f.tenant = "fp"; });
    add("tenant and operation", [](auto& f) { f.tenant = "fp"; f.operation = "refund"; });
    add("operation", [](auto& f) { f.operation = "charge"; });
    add("statuses", [](auto& f) { f.statuses = { "failed", "retryable_failed" }; });
    add("prefix with _", [](auto& f) { f.keyPrefix = "fq:charge:a_"; });
    add("prefix with %", [](auto& f) { f.keyPrefix = "fq:charge:a%"; });
    add("min attempts", [](auto& f) { f.minAttempts = 2; });
    add("expired lease", [](auto& f) { f.expiredLease = true; });
    add("live lease", [](auto& f) { f.liveLease = true; });
    add("uncertain", [](auto& f) { f.uncertain = true; });
    add("error class", [](auto& f) { f.errorClass = "unknown"; });
    add("exhausted", [](auto& f) { f.exhausted = true; });
    add("failed since", [](auto& f) { f.failedSince = "2000-01-01T00:00:00.000000Z"; });
    add("unfinished for", [](auto& f) { f.unfinishedForMinutes = 60; });
    add("digest conflicts", [](auto& f) { f.digestConflicts = true; });
    add("updated within", [](auto& f) { f.updatedWithinMinutes = 20; });
    add("conflict within", [](auto& f) { f.conflictWithinMinutes = 5; });
    // The error message's text (issue 41 item 2): literal, any case, unfinished rows only.
    add("error contains", [](auto& f) { f.errorContains = "503"; });
    add("error contains, other case", [](auto& f) { f.errorContains = "LOST"; });
    add("error contains and exhausted", [](auto& f) {
        f.errorContains = "hausted";
        f.exhausted = true;
    });
    // What the Failed retries tile opens, at two windows, and beside other fields.
    add("failed retry in window", [](auto& f) {
        f.updatedWithinMinutes = 20;
        f.failedRetryInWindow = true;
    });
    add("failed retry in a longer window", [](auto& f) {
        f.updatedWithinMinutes = 60;
        f.failedRetryInWindow = true;
    });
    add("failed retry in window, unfinished, tenant", [](auto& f) {
        f.updatedWithinMinutes = 60;
        f.failedRetryInWindow = true;
        f.statuses = { "failed", "retryable_failed" };
        f.tenant = "fr";
    });
    add("min attempts, class, operation, prefix", [](auto& f) {
        f.minAttempts = 2;
        f.errorClass = "unknown";
        f.operation = "charge";
        f.keyPrefix = "fq:";
    });
    const auto before = state();
    std::set<std::string> fieldsCovered;
    for (const auto& [name, f] : filters) {
        const auto counted = idem::countTasks(*m_operator, schema, f, 1000000);
        QVERIFY(counted.exact);
        const auto preview = idem::previewJob(*m_operator, schema, idem::RecoveryAction::Fail, f);
        QVERIFY2(preview.matched == counted.n,
            qPrintable(QStringLiteral("%1: job %2, task list %3").arg(QLatin1String(name)).arg(preview.matched).arg(counted.n)));
        QVERIFY(counted.n > 0);
        // The rows themselves: the Tasks page's, and the ones a job started now would take.
        QStringList page, job;
        std::optional<idem::TaskCursor> after;
        do { // every page, as the Tasks page scrolls (the earlier tests left thousands of rows)
            const auto read = idem::listTasks(*m_operator, schema, f, {}, after, idem::TaskReadOptions::maxLimit);
            for (const auto& row : read.rows)
                page << QString::fromStdString(row.key);
            after = read.next;
        } while (after);
        {
            pqxx::read_transaction t(*m_owner);
            for (const auto& r : t.exec_params("SELECT idempotency_key FROM idem.idem_job_match($1::jsonb, now(), 1000000)",
                     idem::jobFilterJson(f)))
                job << QString::fromStdString(r[0].as<std::string>());
        }
        page.sort();
        job.sort();
        QVERIFY2(page == job,
            qPrintable(QStringLiteral("%1: Tasks page %2, job %3").arg(QLatin1String(name), page.join(u','), job.join(u','))));
        // The round trip through the job's JSON keeps the filter.
        QCOMPARE(idem::taskFilterFromJobJson(idem::jobFilterJson(f)), f);
        const auto fields = nlohmann::json::parse(idem::jobFilterJson(f));
        for (auto it = fields.begin(); it != fields.end(); ++it)
            fieldsCovered.insert(it.key());
    }
    pqxx::nontransaction(*m_operator).exec("RESET TimeZone");
    // Every field of TaskFilter, as its job JSON names them.
    QCOMPARE(fieldsCovered,
        (std::set<std::string> { "statuses", "tenant", "operation", "key_prefix", "min_attempts", "expired_lease",
            "live_lease", "uncertain", "error_class", "exhausted", "failed_since_us", "unfinished_for_minutes",
            "digest_conflicts", "updated_within_minutes", "conflict_within_minutes", "failed_retry_in_window",
            "error_contains" }));
    // The failed retries by hand: r1 (zone-less, 3 minutes ago) and r3 in 20 minutes, r2 too in 60.
    idem::TaskFilter retries;
    retries.updatedWithinMinutes = 20;
    retries.failedRetryInWindow = true;
    QCOMPARE(idem::countTasks(*m_operator, schema, retries).n, std::int64_t(2));
    retries.updatedWithinMinutes = 60;
    QCOMPARE(idem::countTasks(*m_operator, schema, retries).n, std::int64_t(3));
    QCOMPARE(state(), before);
    // The counts by hand: one 503, three lost, a % or _ in the text is no wildcard.
    idem::TaskFilter lost;
    lost.errorContains = "LOST";
    QCOMPARE(idem::countTasks(*m_operator, schema, lost).n, std::int64_t(3));
    lost.errorContains = "l_st";
    QCOMPARE(idem::countTasks(*m_operator, schema, lost).n, std::int64_t(0));
    // idemctl job start takes it as the console does.
    const auto dry = idemctl(operatorRole,
        { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"), QStringLiteral("fail"),
            QStringLiteral("--dry-run"), QStringLiteral("--json"), QStringLiteral("--status"), QStringLiteral("failed"),
            QStringLiteral("--error-contains"), QStringLiteral("lost") });
    QVERIFY2(dry.exitCode == 0, qPrintable(idem::test::describe(dry)));
    QCOMPARE(json(dry).value(QStringLiteral("matched")).toInteger(), 3);
    pqxx::nontransaction(*m_owner).exec("DELETE FROM idem.task_idempotency_conflicts");
    pqxx::nontransaction(*m_owner).exec("DELETE FROM idem.task_idempotency WHERE idempotency_key LIKE 'fr:%'");
}

// Workers, readers and roles without an Idem role start, run and cancel nothing (42501);
// readers see the jobs and their rows; operators change the job tables only through the
// functions.
void TestJobs::rolesAndPrivileges()
{
    plant("jr", 10, "failed");
    const auto started = start("jr");
    const std::string id = std::to_string(started.jobId);
    const auto before = state();
    const std::vector<std::string> operatorOnly {
        "SELECT * FROM idem.idem_job_start('requeue', '{\"tenant\": \"jr\"}', 100, 'r')",
        "SELECT idem.idem_job_attach(" + id + ", 'x')",
        "SELECT * FROM idem.idem_job_batch(" + id + ", 10)",
        "SELECT idem.idem_job_detach(" + id + ")",
        "SELECT * FROM idem.idem_job_cancel(" + id + ", 'r')",
        "CALL idem.idem_job_run(" + id + ")",
    };
    for (const char* role : { readerRole, workerRole, outsiderRole }) {
        auto c = login(role);
        for (const auto& sql : operatorOnly)
            QVERIFY2(sqlstateOf(*c, sql) == "42501", (std::string(role) + ": " + sql).c_str());
        const bool reader = std::string(role) == readerRole;
        for (const std::string sql : { "SELECT count(*) FROM idem.idem_jobs", "SELECT count(*) FROM idem.idem_job_items",
                 "SELECT * FROM idem.idem_job_preview('requeue', '{}')",
                 "SELECT idem.idem_job_runner_alive(j) FROM idem.idem_jobs j" })
            QVERIFY2(sqlstateOf(*c, sql) == (reader ? "ok" : "42501"), (std::string(role) + ": " + sql).c_str());
    }
    for (const std::string sql :
        { "INSERT INTO idem.idem_jobs (state, action, extra_attempts, filter, moment, cap, reason, db_role, actor,"
          " application) VALUES ('active', 'requeue', 1, '{}', now(), 1, 'r', 'x', 'x', 'x')",
            "UPDATE idem.idem_jobs SET changed = changed + 1",
            "UPDATE idem.idem_job_items SET state = 'changed'",
            "DELETE FROM idem.idem_job_items",
            "SELECT FROM idem.idem_job_start_lock FOR UPDATE",
            "SELECT * FROM idem.idem_job_match('{}', now(), 10)",
            "SELECT idem.idem_job_close(j, 'finished') FROM idem.idem_jobs j",
            "SELECT * FROM idem.recovery_action_apply('requeue', 'jr:charge:k000001', 'failed', 0, 1, 'r', 'x', 1)" })
        QVERIFY2(sqlstateOf(*m_operator, sql) == "42501", sql.c_str());
    QCOMPARE(state(), before);

    // Readers read status and the refused list through idemctl; starting is refused (exit 3).
    const auto status = idemctl(readerRole, { QStringLiteral("job"), QStringLiteral("status"), QStringLiteral("--json") });
    QVERIFY2(status.exitCode == 0, qPrintable(idem::test::describe(status)));
    QVERIFY(!json(status).value(QStringLiteral("jobs")).toArray().isEmpty());
    const auto list = idemctl(readerRole, { QStringLiteral("job"), QStringLiteral("refused"), QString::fromStdString(id),
                                             QStringLiteral("--csv") });
    QVERIFY2(list.exitCode == 0, qPrintable(idem::test::describe(list)));
    const auto startRun = idemctl(readerRole, { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"),
                                                 QStringLiteral("fail"), QStringLiteral("--tenant"), QStringLiteral("jr"),
                                                 QStringLiteral("--reason"), QStringLiteral("r") });
    QCOMPARE(startRun.exitCode, 3);
    QVERIFY2(startRun.err.contains(QStringLiteral("42501")), qPrintable(startRun.err));
    QCOMPARE(state(), before);
    idem::cancelJob(*m_operator, schema, started.jobId, "roles test done");
}

// The whole path through idemctl: start in the foreground, rows moved on meanwhile refused and
// listed (JSON exact, CSV as a spreadsheet may show it), status, audit list.
void TestJobs::idemctlStartStatusRefused()
{
    plant("ji", 300, "retryable_failed");
    {
        pqxx::work w(*m_owner);
        w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts,"
                      " error_class, next_attempt_at, created_at, updated_at)"
                      " VALUES ($1, $2, 'retryable_failed', 1, 5, 'retryable', now(), now(), $3::timestamptz)",
            std::string("ji:charge:=HYPERLINK(\"x\")"), digestOf('a'), std::string(plantedAt));
        w.commit();
    }
    const auto detached = idemctl(operatorRole, { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"),
                                                   QStringLiteral("fail"), QStringLiteral("--tenant"), QStringLiteral("ji"),
                                                   QStringLiteral("--reason"), QStringLiteral("INC-28 give up"),
                                                   QStringLiteral("--detach") });
    QVERIFY2(detached.exitCode == 0, qPrintable(idem::test::describe(detached)));
    QVERIFY2(detached.out.contains(QStringLiteral("fail of 301 task(s) matched")), qPrintable(detached.out));
    const auto id = number(*m_owner, "SELECT max(id) FROM idem.idem_jobs");
    // Five rows move on after the moment (a worker's claim would), among them the hostile key.
    pqxx::nontransaction(*m_owner).exec_params(
        "UPDATE idem.task_idempotency SET updated_at = now(), attempts = 2"
        " WHERE idempotency_key IN ($1, $2, $3, $4, 'ji:charge:=HYPERLINK(\"x\")')",
        key("ji", 1), key("ji", 50), key("ji", 100), key("ji", 299));
    const auto run = idemctl(secondOperatorRole, { QStringLiteral("job"), QStringLiteral("resume"), QString::number(id),
                                                    QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    auto j = json(run);
    QCOMPARE(j.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
    QCOMPARE(j.value(QStringLiteral("changed")).toInteger(), 296);
    QCOMPARE(j.value(QStringLiteral("refused")).toObject().value(QStringLiteral("moved_on")).toInteger(), 5);
    QCOMPARE(j.value(QStringLiteral("filter")).toObject().value(QStringLiteral("tenant")).toString(), QStringLiteral("ji"));

    const auto refusedJson = idemctl(readerRole, { QStringLiteral("job"), QStringLiteral("refused"), QString::number(id),
                                                    QStringLiteral("--json") });
    QVERIFY2(refusedJson.exitCode == 0, qPrintable(idem::test::describe(refusedJson)));
    const auto rows = json(refusedJson).value(QStringLiteral("refused")).toArray();
    QCOMPARE(rows.size(), 5);
    QStringList keys;
    for (const auto& r : rows) {
        const auto o = r.toObject();
        keys << o.value(QStringLiteral("key")).toString();
        QCOMPARE(o.value(QStringLiteral("why")).toString(), QStringLiteral("moved_on"));
        QCOMPARE(o.value(QStringLiteral("seen_status")).toString(), QStringLiteral("retryable_failed"));
        QCOMPARE(o.value(QStringLiteral("now_status")).toString(), QStringLiteral("retryable_failed"));
        QVERIFY(o.value(QStringLiteral("now_updated_at_us")).toInteger() != o.value(QStringLiteral("seen_updated_at_us")).toInteger());
    }
    keys.sort();
    QStringList expected { QString::fromStdString(key("ji", 1)), QString::fromStdString(key("ji", 50)),
        QString::fromStdString(key("ji", 100)), QString::fromStdString(key("ji", 299)),
        QStringLiteral("ji:charge:=HYPERLINK(\"x\")") };
    expected.sort();
    QCOMPARE(keys, expected);
    const auto csv = idemctl(readerRole, { QStringLiteral("job"), QStringLiteral("refused"), QString::number(id),
                                            QStringLiteral("--csv") });
    QVERIFY2(csv.exitCode == 0, qPrintable(idem::test::describe(csv)));
    const auto table = idem::parseCsv(csv.out.toStdString());
    QCOMPARE(table.size(), std::size_t(6));
    QCOMPARE(table[0][1].value_or(""), std::string("idempotency_key"));
    std::set<std::string> csvKeys;
    for (std::size_t i = 1; i < table.size(); ++i) {
        QCOMPARE(table[i][3].value_or(""), std::string("moved_on"));
        csvKeys.insert(table[i][1].value_or(""));
    }
    QVERIFY(csvKeys.count(key("ji", 1)) && csvKeys.count(key("ji", 299)));
    QVERIFY(csvKeys.count("ji:charge:=HYPERLINK(\"x\")"));
    // A key a spreadsheet would evaluate as a formula is defused in the CSV (the JSON is exact).
    idem::JobItem formula;
    formula.key = "=HYPERLINK(\"http://x\"):charge:1";
    const auto line = idem::parseCsv(idem::jobItemCsvLine(formula));
    QCOMPARE(line.at(0).at(1).value_or(""), "'" + formula.key);

    const auto status = idemctl(readerRole, { QStringLiteral("job"), QStringLiteral("status"), QString::number(id) });
    QVERIFY2(status.exitCode == 0, qPrintable(idem::test::describe(status)));
    QVERIFY2(status.out.contains(QStringLiteral("refused   5 (moved on 5, busy 0, gone 0)")), qPrintable(status.out));
    QVERIFY2(status.out.contains(QStringLiteral("changed   296")), qPrintable(status.out));
    const auto audit = idemctl(readerRole, { QStringLiteral("audit"), QStringLiteral("list"), QStringLiteral("--action"),
                                              QStringLiteral("job"), QStringLiteral("--limit"), QStringLiteral("1") });
    QVERIFY2(audit.exitCode == 0, qPrintable(idem::test::describe(audit)));
    QVERIFY2(audit.out.contains(QStringLiteral("job %1 finish: fail, 301 matched, 296 changed, 5 refused").arg(id)),
        qPrintable(audit.out));
    // Foreground start of a job with nothing in the way: finished, exit 0.
    plant("jf", 40, "retryable_failed");
    const auto fg = idemctl(operatorRole, { QStringLiteral("job"), QStringLiteral("start"), QStringLiteral("--action"),
                                             QStringLiteral("fail"), QStringLiteral("--tenant"), QStringLiteral("jf"),
                                             QStringLiteral("--reason"), QStringLiteral("stop retrying"),
                                             QStringLiteral("--batch"), QStringLiteral("7"), QStringLiteral("--duty"),
                                             QStringLiteral("1"), QStringLiteral("--json") });
    QVERIFY2(fg.exitCode == 0, qPrintable(idem::test::describe(fg)));
    QCOMPARE(json(fg).value(QStringLiteral("changed")).toInteger(), 40);
    QCOMPARE(json(fg).value(QStringLiteral("batches")).toInteger(), 6);
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'jf:%'"
                              " AND status = 'failed' AND error_class = 'permanent'"),
        40);
    checkChain();
}

// CALL idem_job_run(NULL), as pg_cron would every minute: the oldest active job nobody runs, to
// its end; the next call the next one; then nothing, quietly.
void TestJobs::schedulerRunsTheOldestJobNobodyRuns()
{
    for (const auto& j : idem::listJobs(*m_operator, schema, 1000))
        if (!j.ended())
            idem::cancelJob(*m_operator, schema, j.id, "clearing the way for the scheduler test");
    plant("js1", 30, "failed");
    plant("js2", 20, "failed");
    const auto first = start("js1");
    const auto second = start("js2");
    auto cron = login(operatorRole);
    const auto call = [&] { pqxx::nontransaction(*cron).exec("CALL idem.idem_job_run(NULL, 500, 1.0)"); };
    call();
    QCOMPARE(scalar(*m_owner, "SELECT state || ' ' || changed FROM idem.idem_jobs WHERE id = $1", first.jobId),
        "finished 30"_b);
    QCOMPARE(scalar(*m_owner, "SELECT state || ' ' || changed || ' ' || attaches FROM idem.idem_jobs WHERE id = $1",
                 second.jobId),
        "active 0 0"_b);
    call();
    QCOMPARE(scalar(*m_owner, "SELECT state || ' ' || changed FROM idem.idem_jobs WHERE id = $1", second.jobId),
        "finished 20"_b);
    const auto before = state();
    call();
    QCOMPARE(state(), before);
    checkCountsAddUp(first.jobId);
    checkCountsAddUp(second.jobId);
    checkChain();
}

QTEST_GUILESS_MAIN(TestJobs)
#include "tst_jobs.moc"
