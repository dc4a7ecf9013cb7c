#include <QtTest>

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <atomic>
#include <chrono>
#include <optional>
#include <random>
#include <thread>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "schema/migrate.h"
#include "core/taskstore.h"
#include "operations/audit.h"
#include "operations/purge.h"
#include "operations/storage.h"
#include "tests/support/cliprocess.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"

using namespace std::chrono_literals;
using idem::test::bytes;
using idem::test::digestOf;
using idem::test::scalar;

namespace {
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::int64_t count(pqxx::connection& c, const std::string& sql)
{
    return std::stoll(scalar(c, sql).toStdString());
}

constexpr const char* dueCount = "SELECT count(*) FROM idem.task_idempotency WHERE status = 'succeeded'"
                                 " AND updated_at < now() - idem.idem_retention_horizon(split_part(idempotency_key, ':', 2))";

// n succeeded charge rows completed `daysAgo` days ago (charge keeps 30 days), keys prefix:i.
void plantSucceeded(pqxx::connection& c, const std::string& prefix, int n, int daysAgo)
{
    pqxx::work w(c);
    w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts,"
                  " created_at, updated_at)"
                  " SELECT $1 || i, $2, 'succeeded', '{\"r\": 1}', 1, now() - ($3 + 1) * interval '1 day',"
                  "        now() - $3 * interval '1 day' - i * interval '1 ms'"
                  "   FROM generate_series(1, $4) i",
        "t:charge:" + prefix, digestOf('a'), daysAgo, n);
    w.commit();
}
} // namespace

// Issue 16: the purge removes only succeeded rows past their horizon, whatever races it; it
// never makes a claim wait; one audit entry per run; a kill leaves nothing half-done.
class TestPurge : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void lockedRowIsSkipped();
    void claimNeverWaitsForABatch();
    void oneAuditEntryPerRun();
    void twoAtOnce();
    void raceWithClaimsCompletionsAndActions();
    void killedThenResumed();
    void lostConnectionReconnectsAndFinishes();
    void dryRunChangesNothing();
    void failedScheduledPurgeReleasesItsLock();

private:
    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
};

void TestPurge::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("purge", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), false });
}

void TestPurge::cleanupTestCase()
{
    m_owner.reset();
    m_db.reset();
}

void TestPurge::init()
{
    pqxx::work w(*m_owner);
    w.exec("TRUNCATE idem.task_idempotency, idem.idem_stored_requests");
    w.commit();
}

// A row someone holds (here FOR UPDATE, as a takeover claim or an action would) is skipped at
// once, never waited for; the next run takes it.
void TestPurge::lockedRowIsSkipped()
{
    plantSucceeded(*m_owner, "locked-", 300, 40);
    auto holder = m_db->connect();
    pqxx::work hold(*holder);
    hold.exec("SELECT 1 FROM idem.task_idempotency WHERE idempotency_key = 't:charge:locked-7' FOR UPDATE");

    // The row stays held until after the run: a batch that waited for it would wait until its
    // lock timeout and fail, and the run would not come back with the other 299 removed.
    auto c = m_db->connect();
    idem::PurgeOptions o;
    o.batch = 100;
    const auto t = Clock::now();
    const auto r = idem::runPurge(*c, idem::SchemaName(), o);
    const double ms = msSince(t);
    qInfo("purge past a held row: %.1f ms, %lld rows, longest batch %.1f ms", ms, static_cast<long long>(r.rowsRemoved),
        r.longestBatchMs);
    QCOMPARE(r.rowsRemoved, 299);
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.task_idempotency"), 1);
    hold.abort();
    QCOMPARE(idem::runPurge(*c, idem::SchemaName(), o).rowsRemoved, 1);
}

// A batch that has deleted a row and not committed: a claim of that key replays the stored
// result without waiting (it reads succeeded rows without a lock); after the commit the key is
// new and executes again.
void TestPurge::claimNeverWaitsForABatch()
{
    plantSucceeded(*m_owner, "open-", 10, 40);
    auto purger = m_db->connect();
    std::int64_t run = 0;
    {
        pqxx::work w(*purger);
        run = w.exec("SELECT idem.idem_purge_begin('open batch test')")[0][0].as<std::int64_t>();
        w.commit();
    }
    pqxx::work batch(*purger);
    QCOMPARE(batch.exec_params("SELECT removed FROM idem.idem_purge_batch($1, 100)", run)[0][0].as<int>(), 10);

    // The batch stays open until after the claim: a claim that waited for it would never come
    // back, so its session gives up on any lock wait and the claim fails with SQLSTATE 55P03.
    auto wc = m_db->connect();
    pqxx::nontransaction(*wc).exec("SET lock_timeout = '1s'");
    idem::TaskStore store(*wc, idem::test::storeOptions(30s));
    const idem::TaskKey key("t", "charge", "open-3");
    const auto t = Clock::now();
    std::optional<idem::ClaimResult> c1;
    try {
        c1 = store.claim(key, digestOf('a'));
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QStringLiteral("the claim waited for the batch: %1").arg(QString::fromUtf8(e.what()))));
    }
    qInfo("claim of a key an open batch deleted: %.2f ms", msSince(t));
    QCOMPARE(c1->decision, idem::Decision::Replay);
    batch.commit();
    const auto c2 = store.claim(key, digestOf('a'));
    QCOMPARE(c2.decision, idem::Decision::Acquired); // purged: the retry executes again
    pqxx::work f(*purger);
    f.exec_params("SELECT * FROM idem.idem_purge_finish($1)", run);
    f.commit();
    // A finished run takes no batch and no second finish: a refusal of state (ID004); a run that
    // never was is not found (ID002). Neither changes anything.
    const auto runs = scalar(*m_owner, "SELECT string_agg(id || state || batches, ',' ORDER BY id) FROM idem.idem_purge_runs");
    QCOMPARE(idem::test::sqlstateOf(*purger, "SELECT * FROM idem.idem_purge_batch($1, 100)", run), std::string("ID004"));
    QCOMPARE(idem::test::sqlstateOf(*purger, "SELECT * FROM idem.idem_purge_finish($1)", run), std::string("ID004"));
    QCOMPARE(idem::test::sqlstateOf(*purger, "SELECT * FROM idem.idem_purge_batch(0, 100)"), std::string("ID002"));
    QCOMPARE(idem::test::sqlstateOf(*purger, "SELECT * FROM idem.idem_purge_finish(0)"), std::string("ID002"));
    QCOMPARE(scalar(*m_owner, "SELECT string_agg(id || state || batches, ',' ORDER BY id) FROM idem.idem_purge_runs"), runs);
}

void TestPurge::oneAuditEntryPerRun()
{
    plantSucceeded(*m_owner, "old-", 2500, 40);
    plantSucceeded(*m_owner, "young-", 100, 29);
    const auto auditBefore = count(*m_owner, "SELECT count(*) FROM idem.task_idempotency_audit");
    auto c = m_db->connect();
    idem::PurgeOptions o;
    o.batch = 100;
    o.reason = "weekly purge";
    o.actor = "ops@box";
    int progressCalls = 0;
    o.progress = [&](std::int64_t, std::int64_t, std::int64_t, double) { ++progressCalls; };
    const auto r = idem::runPurge(*c, idem::SchemaName(), o);
    QCOMPARE(r.rowsRemoved, 2500);
    QCOMPARE(r.batches, 26); // 25 full, the last one finds nothing more
    QCOMPARE(progressCalls, 26);
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.task_idempotency_audit"), auditBefore + 1);
    QCOMPARE(scalar(*m_owner,
                 "SELECT action || '|' || idempotency_key || '|' || reason || '|' || os_user || '|'"
                 " || (after_image ->> 'rows_removed') || '|' || (after_image ->> 'state') || '|'"
                 " || (after_image -> 'operations' -> 'charge' ->> 'horizon_seconds') || '|'"
                 " || (after_image -> 'operations' -> 'charge' ? 'cutoff') || '|' || (before_image -> 'policy' ->> 'charge')"
                 " FROM idem.task_idempotency_audit WHERE id = $1",
                 r.auditId),
        "purge||weekly purge|ops@box|2500|finished|2592000|true|2592000");
    QCOMPARE(scalar(*m_owner, "SELECT state || ' ' || rows_removed || ' ' || batches || ' ' || audit_id"
                              " FROM idem.idem_purge_runs WHERE id = $1",
                 r.runId),
        bytes("finished 2500 26 " + std::to_string(r.auditId)));
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.task_idempotency"), 100);
    const auto chain = idem::verifyChain(*m_owner, idem::SchemaName());
    QVERIFY2(chain.ok(), chain.detail.c_str());
}

void TestPurge::twoAtOnce()
{
    plantSucceeded(*m_owner, "both-", 6000, 40);
    const auto runsBefore = count(*m_owner, "SELECT count(*) FROM idem.idem_purge_runs");
    idem::PurgeResult a, b;
    std::string error;
    const auto purge = [&](idem::PurgeResult& out) {
        try {
            auto c = m_db->connect();
            idem::PurgeOptions o;
            o.batch = 50;
            out = idem::runPurge(*c, idem::SchemaName(), o);
        } catch (const std::exception& e) {
            error = e.what();
        }
    };
    std::thread ta(purge, std::ref(a)), tb(purge, std::ref(b));
    ta.join();
    tb.join();
    QVERIFY2(error.empty(), error.c_str());
    qInfo("two at once: %lld + %lld rows", static_cast<long long>(a.rowsRemoved), static_cast<long long>(b.rowsRemoved));
    QCOMPARE(a.rowsRemoved + b.rowsRemoved, 6000);
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.task_idempotency"), 0);
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.idem_purge_runs WHERE state = 'finished' AND audit_id IS NOT NULL"),
        runsBefore + 2);
    const auto chain = idem::verifyChain(*m_owner, idem::SchemaName());
    QVERIFY2(chain.ok(), chain.detail.c_str());
}

// Claims take over old retryable and expired rows and complete them, an operator requeues old
// failed rows that claims then take, and replays hit the due rows, while purges run in small
// batches. No row that was not succeeded past its horizon ever goes; every claim returns at once.
void TestPurge::raceWithClaimsCompletionsAndActions()
{
    constexpr int perGroup = 300;
    {
        pqxx::work w(*m_owner);
        w.exec_params(
            "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, max_attempts, error_class,"
            " lease_until, next_attempt_at, created_at, updated_at)"
            " SELECT 't:charge:' || g || '-' || i, $1, g, 1, 5,"
            "        CASE g WHEN 'retryable_failed' THEN 'retryable' WHEN 'failed' THEN 'permanent' END,"
            "        CASE g WHEN 'processing' THEN now() - interval '39 days' END,"
            "        CASE g WHEN 'retryable_failed' THEN now() - interval '39 days' END,"
            "        now() - interval '41 days', now() - interval '40 days'"
            "   FROM unnest(ARRAY['processing', 'retryable_failed', 'failed']) g, generate_series(1, $2) i",
            digestOf('a'), perGroup);
        w.commit();
    }
    plantSucceeded(*m_owner, "succeeded-", 3 * perGroup, 40); // due
    plantSucceeded(*m_owner, "recent-", perGroup, 1); // not due
    const auto keepers = count(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key NOT LIKE 't:charge:succeeded-%'");

    std::atomic<bool> done { false };
    std::atomic<int> errors { 0 };
    std::atomic<long long> claims { 0 }, executed { 0 }, requeued { 0 };
    std::atomic<double> worstClaimMs { 0 };
    std::string firstError;
    std::mutex errorMutex;
    const auto fail = [&](const std::exception& e) {
        std::lock_guard lock(errorMutex);
        if (errors++ == 0)
            firstError = e.what();
    };
    // Backends of the claimers and of those they must never wait for, as the lock table shows them.
    std::atomic<int> claimerPids[2] = { 0, 0 };
    std::atomic<int> holderPids[2] = { 0, 0 }; // the purge, the operator
    const auto claimer = [&](unsigned seed) {
        try {
            auto c = m_db->connect();
            claimerPids[seed - 1] = c->backendpid();
            idem::TaskStore store(*c, idem::test::storeOptions(30s));
            std::mt19937 rng(seed);
            std::vector<std::string> ids;
            for (const char* g : { "processing", "retryable_failed", "failed", "succeeded" })
                for (int i = 1; i <= (std::string(g) == "succeeded" ? 3 * perGroup : perGroup); ++i)
                    ids.push_back(std::string(g) + "-" + std::to_string(i));
            for (int round = 0; round < 2; ++round) {
                std::shuffle(ids.begin(), ids.end(), rng);
                for (const auto& id : ids) {
                    const idem::TaskKey key("t", "charge", id);
                    const auto t = Clock::now();
                    const auto cl = store.claim(key, digestOf('a'));
                    const double ms = msSince(t);
                    for (double w = worstClaimMs.load(); ms > w && !worstClaimMs.compare_exchange_weak(w, ms);)
                        ;
                    ++claims;
                    if (cl.mayExecute()) {
                        pqxx::work w(*c);
                        store.complete(w, key, cl.token, "{\"again\": true}");
                        w.commit();
                        ++executed;
                    }
                }
            }
        } catch (const std::exception& e) {
            fail(e);
        }
    };
    const auto operatorThread = [&] {
        try {
            auto c = m_db->connect();
            holderPids[1] = c->backendpid();
            for (int i = 1; i <= perGroup; ++i) {
                pqxx::work w(*c);
                const auto r = w.exec_params("SELECT o.outcome FROM idem.task_idempotency t,"
                                             " idem.idem_requeue(t.idempotency_key, t.status,"
                                             "   (extract(epoch FROM t.updated_at) * 1000000)::bigint, 1, 'race', 'test') o"
                                             " WHERE t.idempotency_key = $1 AND t.status = 'failed'",
                    "t:charge:failed-" + std::to_string(i));
                w.commit();
                if (!r.empty() && r[0][0].as<std::string>() == "applied")
                    ++requeued;
            }
        } catch (const std::exception& e) {
            fail(e);
        }
    };
    std::vector<std::thread> threads;
    threads.emplace_back(claimer, 1u);
    threads.emplace_back(claimer, 2u);
    threads.emplace_back(operatorThread);
    std::thread purger([&] {
        try {
            auto c = m_db->connect();
            holderPids[0] = c->backendpid();
            idem::PurgeOptions o;
            o.batch = 25;
            o.duty = 0.5;
            while (!done.load())
                idem::runPurge(*c, idem::SchemaName(), o);
        } catch (const std::exception& e) {
            fail(e);
        }
    });
    // What the database says, read over and over while the race runs: a claimer waiting for a
    // lock the purge or the operator holds. How long a claim took says nothing here (a loaded
    // machine makes any call slow); a wait in the lock table is the defect itself.
    std::atomic<bool> claimersDone { false };
    std::atomic<long long> looks { 0 }, waits { 0 };
    std::thread watcher([&] {
        try {
            auto c = m_db->connect();
            while (!claimersDone.load()) {
                pqxx::nontransaction n(*c);
                const auto r = n.exec_params("SELECT count(*) FROM unnest(ARRAY[$1::int, $2::int]) p"
                                             " WHERE pg_blocking_pids(p) && ARRAY[$3::int, $4::int]",
                    claimerPids[0].load(), claimerPids[1].load(), holderPids[0].load(), holderPids[1].load());
                ++looks;
                waits += r[0][0].as<long long>();
                std::this_thread::sleep_for(1ms);
            }
        } catch (const std::exception& e) {
            fail(e);
        }
    });
    for (auto& t : threads)
        t.join();
    claimersDone = true;
    watcher.join();
    done = true;
    purger.join();
    QVERIFY2(errors == 0, firstError.c_str());
    qInfo("race: %lld claims (worst %.1f ms), %lld executed, %lld requeued; %lld looks at the lock table",
        claims.load(), worstClaimMs.load(), executed.load(), requeued.load(), looks.load());
    QVERIFY(requeued > 0);
    QVERIFY(looks.load() > 0);
    QCOMPARE(waits.load(), 0LL);
    // Every row that was not succeeded past its horizon is still there.
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key NOT LIKE 't:charge:succeeded-%'"),
        keepers);
    // A final run leaves nothing due; what is left of the due keys was created again by a claim.
    auto c = m_db->connect();
    idem::runPurge(*c, idem::SchemaName(), {});
    QCOMPARE(count(*m_owner, dueCount), 0);
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 't:charge:succeeded-%'"
                             " AND (result_json IS DISTINCT FROM '{\"again\": true}' OR updated_at < now() - interval '1 day')"),
        0);
    const auto chain = idem::verifyChain(*m_owner, idem::SchemaName());
    QVERIFY2(chain.ok(), chain.detail.c_str());
}

// kill -9 of idemctl purge mid-run: every committed batch is counted in its run, nothing is
// half-done; the next run closes the killed one as abandoned (with its audit entry) and
// removes the rest. The chain verifies.
void TestPurge::killedThenResumed()
{
    plantSucceeded(*m_owner, "kill-", 4000, 40);
    plantSucceeded(*m_owner, "stay-", 50, 2);
    const QString dsn = QString::fromStdString(m_db->dsn());
    QProcess p;
    p.start(idem::test::idemctlPath(), { QStringLiteral("purge"), QStringLiteral("--batch"), QStringLiteral("20"),
                                                QStringLiteral("--duty"), QStringLiteral("0.05"), QStringLiteral("--pause-ms"), QStringLiteral("20"),
                                                QStringLiteral("--dsn"), dsn });
    QVERIFY(p.waitForStarted());
    QVERIFY(idem::test::waitUntil(
        [&] { return count(*m_owner, "SELECT coalesce(max(rows_removed), 0) FROM idem.idem_purge_runs WHERE state = 'running'") >= 400; },
        30s));
    const auto live = idem::readStorage(*m_owner, idem::SchemaName());
    QVERIFY(live.running);
    QCOMPARE(live.running->alive, std::optional<bool>(true));
    p.kill(); // SIGKILL
    QVERIFY(p.waitForFinished());
    // Its server session ends once the server sees the socket closed; then its lock is free.
    QVERIFY(idem::test::waitUntil(
        [&] { return count(*m_owner, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'idemctl purge'") == 0; }, 10s));
    const auto killedRun = count(*m_owner, "SELECT max(id) FROM idem.idem_purge_runs");
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_purge_runs WHERE id = $1", killedRun), "running");
    // The row says running until the next purge; a reader is told its session is gone (issue #29).
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    idem::test::createLoginRole("idem_t_purge_reader", "pw-purge-reader", "idem_reader");
    const QStringList readerDsn { QStringLiteral("--dsn"),
        QString::fromStdString(idem::test::loginDsn(m_db->dsn(), "idem_t_purge_reader", "pw-purge-reader")) };
    const auto seen = idem::test::runProgram(idem::test::idemctlPath(), QStringList { QStringLiteral("storage") } + readerDsn);
    QVERIFY2(seen.exitCode == 0, qPrintable(idem::test::describe(seen)));
    QVERIFY2(seen.out.contains(QStringLiteral("stopped purge (its session is gone")), qPrintable(seen.out));
    QVERIFY2(!seen.out.contains(QStringLiteral("running purge")), qPrintable(seen.out));
    const auto seenJson = idem::test::runProgram(idem::test::idemctlPath(),
        QStringList { QStringLiteral("storage"), QStringLiteral("--json") } + readerDsn);
    const auto running = QJsonDocument::fromJson(seenJson.out.toUtf8()).object().value(QStringLiteral("running_purge")).toObject();
    QCOMPARE(running.value(QStringLiteral("id")).toInteger(), killedRun);
    QCOMPARE(running.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
    QCOMPARE(running.value(QStringLiteral("session_alive")), QJsonValue(false));
    const auto counted = count(*m_owner, "SELECT rows_removed FROM idem.idem_purge_runs WHERE id = " + std::to_string(killedRun));
    const auto gone = 4000 - count(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 't:charge:kill-%'");
    qInfo("killed after %lld rows", static_cast<long long>(gone));
    QCOMPARE(counted, gone); // nothing removed that the run does not count, nothing counted that is not removed

    auto resumed = idem::test::runProgram(idem::test::idemctlPath(), { QStringLiteral("purge"), QStringLiteral("--json"),
                                                                             QStringLiteral("--dsn"), dsn });
    QVERIFY2(resumed.exitCode == 0, qPrintable(idem::test::describe(resumed)));
    const auto j = QJsonDocument::fromJson(resumed.out.toUtf8()).object();
    QCOMPARE(j.value(QStringLiteral("rows_removed")).toInteger(), 4000 - gone);
    QCOMPARE(scalar(*m_owner, "SELECT state || ' ' || (audit_id IS NOT NULL) FROM idem.idem_purge_runs WHERE id = $1", killedRun),
        "abandoned true");
    QCOMPARE(scalar(*m_owner, "SELECT (after_image ->> 'state') || ' ' || (after_image ->> 'rows_removed')"
                              " FROM idem.task_idempotency_audit a JOIN idem.idem_purge_runs r ON r.audit_id = a.id"
                              " WHERE r.id = $1",
                 killedRun),
        bytes("abandoned " + std::to_string(gone)));
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.task_idempotency"), 50);
    QCOMPARE(count(*m_owner, "SELECT sum(rows_removed) FROM idem.idem_purge_runs WHERE id >= " + std::to_string(killedRun)),
        4000);
    const auto chain = idem::verifyChain(*m_owner, idem::SchemaName());
    QVERIFY2(chain.ok(), chain.detail.c_str());
}

// Issue 29: the purge's session ends mid-run (a failover, a terminated backend): it says so in
// words, not as libpqxx's "Could not obtain client encoding", reconnects and carries on as a new
// run, which closes the cut one as abandoned; every due row is removed, each counted once.
void TestPurge::lostConnectionReconnectsAndFinishes()
{
    plantSucceeded(*m_owner, "lost-", 3000, 40);
    plantSucceeded(*m_owner, "stay-", 50, 2);
    QProcess p;
    p.setProcessEnvironment(idem::test::cleanEnvironment());
    p.start(idem::test::idemctlPath(),
        { QStringLiteral("purge"), QStringLiteral("--batch"), QStringLiteral("20"), QStringLiteral("--duty"),
            QStringLiteral("0.05"), QStringLiteral("--pause-ms"), QStringLiteral("20"), QStringLiteral("--json"),
            QStringLiteral("--dsn"), QString::fromStdString(m_db->dsn()) });
    QVERIFY(p.waitForStarted());
    QVERIFY(idem::test::waitUntil(
        [&] {
            return count(*m_owner,
                       "SELECT coalesce(max(rows_removed), 0) FROM idem.idem_purge_runs WHERE state = 'running'")
                >= 200;
        },
        30s));
    const auto cutRun = count(*m_owner, "SELECT max(id) FROM idem.idem_purge_runs");
    QCOMPARE(count(*m_owner,
                 "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                 " WHERE application_name = 'idemctl purge' AND datname = current_database()"),
        1);
    const auto run = idem::test::finishProcess(p, 120000);
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QVERIFY2(run.err.contains(QLatin1String("idemctl purge: lost the connection to the database server: ")),
        qPrintable(idem::test::describe(run)));
    QVERIFY2(run.err.contains(QLatin1String("; reconnecting (the next run closes the cut one as abandoned)")),
        qPrintable(idem::test::describe(run)));
    QVERIFY2(!run.err.contains(QLatin1String("client encoding")), qPrintable(idem::test::describe(run)));
    const auto j = QJsonDocument::fromJson(run.out.toUtf8()).object();
    const auto cut
        = count(*m_owner, "SELECT rows_removed FROM idem.idem_purge_runs WHERE id = " + std::to_string(cutRun));
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_purge_runs WHERE id = $1", cutRun), "abandoned");
    QVERIFY(j.value(QStringLiteral("run_id")).toInteger() > cutRun);
    QCOMPARE(j.value(QStringLiteral("rows_removed")).toInteger() + cut, 3000);
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.task_idempotency"), 50);
}

// A scheduled purge cancelled by its statement timeout, in a session that lives on (a pooled
// backend, a psql): it keeps no advisory lock, and the run the procedure had committed as running
// is closed as abandoned by the next purge. Run as an operator login, as pg_cron's job would.
void TestPurge::failedScheduledPurgeReleasesItsLock()
{
    idem::migrate(*m_owner, { idem::SchemaName(), true }); // the roles' grants, as a deployment has them
    idem::test::createLoginRole("idem_t_purge_op", "pw-purge-op", "idem_operator");
    plantSucceeded(*m_owner, "cancel-", 3000, 40);
    pqxx::connection op(idem::test::loginDsn(m_db->dsn(), "idem_t_purge_op", "pw-purge-op"));
    const auto heldByOp = [&] {
        pqxx::nontransaction n(op);
        return n.exec("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")
            .at(0)
            .at(0)
            .as<int>();
    };
    const auto cancelled = [&](const std::string& sql) {
        pqxx::nontransaction n(op);
        n.exec("SET statement_timeout = 300");
        try {
            n.exec(sql);
        } catch (const pqxx::sql_error& e) {
            n.exec("RESET statement_timeout");
            return e.sqlstate();
        }
        n.exec("RESET statement_timeout");
        return std::string("finished");
    };
    // The procedure: batches of 10 rows, each followed by a pause of 99 times its time.
    const auto runsBefore = count(*m_owner, "SELECT coalesce(max(id), 0) FROM idem.idem_purge_runs");
    QCOMPARE(cancelled("CALL idem.idem_purge_run(10, 60, 'cancelled purge', 'tester', 0.01)"), std::string("57014"));
    QCOMPARE(heldByOp(), 0);
    const auto run = count(*m_owner, "SELECT max(id) FROM idem.idem_purge_runs");
    QVERIFY(run > runsBefore);
    QCOMPARE(scalar(*m_owner, "SELECT state FROM idem.idem_purge_runs WHERE id = $1", run), "running");
    // The next purge finds that run's lock free: abandoned, with its entry.
    pqxx::nontransaction(*m_owner).exec("SELECT * FROM idem.idem_purge(10, 1, 'next purge', 'tester')");
    QCOMPARE(scalar(*m_owner, "SELECT state || ' ' || (audit_id IS NOT NULL) FROM idem.idem_purge_runs WHERE id = $1", run),
        "abandoned true");
    // The function: one transaction, cancelled while its finish waits for the audit trail that
    // another audited change holds; rolled back whole, and its lock goes with it.
    {
        pqxx::work holder(*m_owner);
        holder.exec("SELECT FROM idem.task_idempotency_audit_head FOR UPDATE");
        QCOMPARE(cancelled("SELECT * FROM idem.idem_purge(10, 1, 'cancelled purge', 'tester')"), std::string("57014"));
        holder.abort();
    }
    QCOMPARE(heldByOp(), 0);
    QCOMPARE(count(*m_owner, "SELECT count(*) FROM idem.idem_purge_runs WHERE state = 'running'"), 0);
}

void TestPurge::dryRunChangesNothing()
{
    plantSucceeded(*m_owner, "dry-", 700, 40);
    plantSucceeded(*m_owner, "wet-", 70, 3);
    {
        pqxx::work w(*m_owner);
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, created_at, updated_at)"
               " SELECT 't:email:' || i, 'h', 'succeeded', 1, now() - interval '9 days', now() - interval '8 days'"
               "   FROM generate_series(1, 30) i");
        w.commit();
    }
    const std::string state = "SELECT md5(string_agg(t::text, ',' ORDER BY idempotency_key)) || ' '"
                              " || (SELECT count(*) FROM idem.idem_purge_runs) || ' '"
                              " || (SELECT count(*) FROM idem.task_idempotency_audit) FROM idem.task_idempotency t";
    const auto before = scalar(*m_owner, state);
    auto run = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("purge"), QStringLiteral("--dry-run"), QStringLiteral("--json"), QStringLiteral("--dsn"),
            QString::fromStdString(m_db->dsn()) });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto j = QJsonDocument::fromJson(run.out.toUtf8()).object();
    QCOMPARE(j.value(QStringLiteral("would_remove")).toInteger(), 730);
    QCOMPARE(j.value(QStringLiteral("would_remove_quality")).toString(), QStringLiteral("exact"));
    QCOMPARE(scalar(*m_owner, state), before);
    auto text = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("purge"), QStringLiteral("--dry-run"), QStringLiteral("--cap"), QStringLiteral("100"),
            QStringLiteral("--dsn"), QString::fromStdString(m_db->dsn()) });
    QVERIFY2(text.out.contains(QStringLiteral("at least 100")), qPrintable(text.out));
    QVERIFY2(text.out.contains(QStringLiteral("email")) && text.out.contains(QStringLiteral("7 days*")), qPrintable(text.out));
    QCOMPARE(scalar(*m_owner, state), before);
}

QTEST_GUILESS_MAIN(TestPurge)
#include "tst_purge.moc"
