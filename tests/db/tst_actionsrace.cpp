#include <QtTest>

#include <atomic>
#include <pqxx/pqxx>
#include <thread>

#include "operations/actions.h"
#include "operations/audit.h"
#include "tests/db/tst_actions_fixture.h"

using namespace std::chrono_literals;
using idem::test::operator""_b;
using idem::test::bytes;
using idem::test::scalar;

// A requeue racing a claim on the same due retryable row: they never both act on the same
// version. Either the claim took the row over first (the requeue is stale and changes nothing)
// or the requeue applied first (the claim then sees the requeued row, or finds it locked).
// Each interleaving is made to happen by the database's own locks and observed in its lock
// table (pg_blocking_pids), never by a head start and the scheduler's luck; then rounds
// released together check that whatever order they came in, the result is one of those.
class TestActionsRace : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void claimCommittedFirst();
    void requeueWaitsForTheClaimsTransaction();
    void claimMeetsTheRequeuesTransaction();
    void requeueCommittedFirst();
    void releasedTogether();

private:
    idem::ActionOptions options(const std::string& reason) const;
    QByteArray row(const std::string& key) { return m_fx.f(key, "status || ' ' || attempts || '/' || max_attempts"); }
    // The requeue applied on the version it read, untouched by any claim.
    void checkRequeueEntry(const std::string& key);

    idem::test::ActionsFixture m_fx;
};

void TestActionsRace::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_fx.open("actions_race");
}

void TestActionsRace::cleanupTestCase()
{
    if (m_fx.admin) {
        const auto chain = idem::verifyChain(*m_fx.admin, idem::SchemaName());
        QVERIFY2(chain.ok(), chain.detail.c_str());
    }
    m_fx.close();
}

idem::ActionOptions TestActionsRace::options(const std::string& reason) const
{
    auto o = m_fx.options(reason);
    o.extraAttempts = 10;
    // A requeue made to wait here waits as long as the test needs, however loaded the machine.
    o.lockTimeoutMs = 120000;
    return o;
}

void TestActionsRace::checkRequeueEntry(const std::string& key)
{
    const auto entries = idem::listAudit(*m_fx.admin, idem::SchemaName(), { .key = key });
    QCOMPARE(entries.size(), std::size_t(1));
    QVERIFY2(entries[0].beforeImage.find("\"attempts\": 2") != std::string::npos, entries[0].beforeImage.c_str());
    QVERIFY2(entries[0].beforeImage.find("\"status\": \"retryable_failed\"") != std::string::npos,
        entries[0].beforeImage.c_str());
    QVERIFY2(entries[0].afterImage.find("\"max_attempts\": 12") != std::string::npos, entries[0].afterImage.c_str());
}

// The claim took the row over and committed; then the requeue, with the version read before.
void TestActionsRace::claimCommittedFirst()
{
    const std::string key = m_fx.nextKey("race");
    const auto seen = m_fx.plant(key, "retryable_failed", 2, 5, "retryable"); // due since a second ago
    const auto auditBefore = m_fx.auditCount();
    idem::TaskStore store(*m_fx.other, idem::test::storeOptions(30s, 5));
    const auto claim = store.claim(idem::TaskKey::parse(key), "v1:planted");
    QVERIFY2(claim.mayExecute(), idem::decisionName(claim.decision));
    QCOMPARE(row(key), "processing 3/5"_b);
    const auto requeue = idem::applyAction(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, seen, options("late"));
    QCOMPARE(idem::outcomeName(requeue.outcome), "stale");
    QCOMPARE(requeue.status, std::string("processing"));
    QCOMPARE(row(key), "processing 3/5"_b);
    QCOMPARE(m_fx.auditCount(), auditBefore);
}

// The claim's transaction holds the row it took over; the requeue arrives and waits for it (seen
// waiting in the lock table), then finds the new version: stale, nothing changed, no entry.
void TestActionsRace::requeueWaitsForTheClaimsTransaction()
{
    const std::string key = m_fx.nextKey("race");
    const auto seen = m_fx.plant(key, "retryable_failed", 2, 5, "retryable");
    const auto auditBefore = m_fx.auditCount();
    const int claimPid = m_fx.other->backendpid();
    const int requeuePid = m_fx.conn->backendpid();

    pqxx::work claim(*m_fx.other);
    const auto c = claim.exec_params(
        "SELECT decision, attempts, max_attempts FROM idem.claim($1, 'v1:planted', gen_random_uuid(), 30000, 5)", key);
    QCOMPARE(c[0][0].as<std::string>() + " " + c[0][1].as<std::string>() + "/" + c[0][2].as<std::string>(),
        std::string("reacquired 3/5"));

    idem::ActionResult requeue;
    std::string thrown;
    std::thread requeuer([&] {
        try {
            requeue = idem::applyAction(
                *m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, seen, options("while claimed"));
        } catch (const std::exception& e) {
            thrown = e.what();
        }
    });
    const bool waited = idem::test::waitUntil(
        [&] {
            return scalar(*m_fx.admin, "SELECT ($2::int = ANY(pg_blocking_pids($1::int)))::text", requeuePid, claimPid)
                == "true"_b;
        },
        120s);
    claim.commit();
    requeuer.join();
    QVERIFY2(waited, "the requeue never waited for the claim's transaction");
    QVERIFY2(thrown.empty(), thrown.c_str());
    QCOMPARE(idem::outcomeName(requeue.outcome), "stale");
    QCOMPARE(requeue.status, std::string("processing"));
    QCOMPARE(row(key), "processing 3/5"_b);
    QCOMPARE(m_fx.auditCount(), auditBefore);
}

// The requeue's transaction (the function idemctl and the console call) has changed the row and
// not yet committed: a claim meanwhile does not wait and does not take it (the row is locked,
// so in progress); after the commit a claim takes the requeued row with its new budget.
void TestActionsRace::claimMeetsTheRequeuesTransaction()
{
    const std::string key = m_fx.nextKey("race");
    const auto seen = m_fx.plant(key, "retryable_failed", 2, 5, "retryable");
    const auto auditBefore = m_fx.auditCount();
    idem::TaskStore store(*m_fx.other, idem::test::storeOptions(30s, 5));

    pqxx::work requeue(*m_fx.conn);
    const auto r = requeue.exec_params("SELECT outcome FROM idem.idem_requeue($1, $2, $3, $4, $5, $6)", key, seen.status,
        static_cast<long long>(seen.updatedAtUs), 10, std::string("before the claim"), std::string("tester@ci-host"));
    QCOMPARE(r[0][0].as<std::string>(), std::string("applied"));

    const auto during = store.claim(idem::TaskKey::parse(key), "v1:planted");
    QCOMPARE(idem::decisionName(during.decision), "in_progress");
    QCOMPARE(during.detail, std::string("locked"));
    QVERIFY(!during.mayExecute());
    QCOMPARE(row(key), "retryable_failed 2/5"_b); // the requeue not committed yet
    requeue.commit();
    QCOMPARE(row(key), "retryable_failed 2/12"_b);
    QCOMPARE(m_fx.auditCount(), auditBefore + 1);
    checkRequeueEntry(key);

    const auto after = store.claim(idem::TaskKey::parse(key), "v1:planted");
    QVERIFY2(after.mayExecute(), idem::decisionName(after.decision));
    QCOMPARE(after.attempts, 3);
    QCOMPARE(after.maxAttempts, 12);
    QCOMPARE(row(key), "processing 3/12"_b);
}

// The requeue applied and committed; then the claim takes the requeued row over.
void TestActionsRace::requeueCommittedFirst()
{
    const std::string key = m_fx.nextKey("race");
    const auto seen = m_fx.plant(key, "retryable_failed", 2, 5, "retryable");
    const auto auditBefore = m_fx.auditCount();
    const auto requeue = idem::applyAction(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, seen, options("first"));
    QCOMPARE(idem::outcomeName(requeue.outcome), "applied");
    QCOMPARE(m_fx.auditCount(), auditBefore + 1);
    checkRequeueEntry(key);
    idem::TaskStore store(*m_fx.other, idem::test::storeOptions(30s, 5));
    const auto claim = store.claim(idem::TaskKey::parse(key), "v1:planted");
    QVERIFY2(claim.mayExecute(), idem::decisionName(claim.decision));
    QCOMPARE(claim.attempts, 3);
    QCOMPARE(claim.maxAttempts, 12);
    QCOMPARE(row(key), "processing 3/12"_b);
}

// Released together, in whatever order the machine runs them: the outcome is always one of the
// orders above, never both acting on the same version. Which order came is not asserted (the
// tests above make each happen).
void TestActionsRace::releasedTogether()
{
    constexpr int rounds = 20;
    int claimFirst = 0, requeueFirst = 0;
    idem::TaskStore store(*m_fx.other, idem::test::storeOptions(30s, 5));
    for (int round = 0; round < rounds; ++round) {
        const std::string keyText = m_fx.nextKey("race");
        const auto seen = m_fx.plant(keyText, "retryable_failed", 2, 5, "retryable");
        const auto auditBefore = m_fx.auditCount();

        std::atomic<int> ready { 0 };
        idem::ClaimResult claim;
        std::string thrown;
        std::thread claimer([&] {
            ++ready;
            while (ready.load() < 2)
                std::this_thread::yield();
            try {
                claim = store.claim(idem::TaskKey::parse(keyText), "v1:planted");
            } catch (const std::exception& e) {
                thrown = e.what();
            }
        });
        const auto o = options("race round " + std::to_string(round));
        ++ready;
        while (ready.load() < 2)
            std::this_thread::yield();
        const auto requeue = idem::applyAction(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, seen, o);
        claimer.join();
        QVERIFY2(thrown.empty(), thrown.c_str());

        const std::string decision = idem::decisionName(claim.decision);
        const bool claimed = claim.mayExecute();
        const QByteArray now = row(keyText);
        if (requeue.outcome != idem::ActionOutcome::Applied) {
            // The claim won: the requeue saw the new version, changed nothing, wrote no audit.
            QCOMPARE(idem::outcomeName(requeue.outcome), "stale");
            QVERIFY2(claimed, decision.c_str());
            QCOMPARE(requeue.status, std::string("processing"));
            QCOMPARE(now, "processing 3/5"_b);
            QCOMPARE(m_fx.auditCount(), auditBefore);
            ++claimFirst;
            continue;
        }
        // The requeue won: its audit entry holds the version it checked, untouched by the claim.
        ++requeueFirst;
        QCOMPARE(m_fx.auditCount(), auditBefore + 1);
        checkRequeueEntry(keyText);
        if (claimed) {
            // Then the claim took the requeued row over: one attempt more, the new budget.
            QCOMPARE(claim.attempts, 3);
            QCOMPARE(claim.maxAttempts, 12);
            QCOMPARE(now, "processing 3/12"_b);
        } else {
            // Or it found the row locked by the requeue, or not yet due by its own clock.
            QVERIFY2(decision == "in_progress" || decision == "retry_later", decision.c_str());
            QCOMPARE(now, "retryable_failed 2/12"_b);
        }
    }
    qInfo("claim first %d, requeue first %d of %d rounds", claimFirst, requeueFirst, rounds);
    QCOMPARE(claimFirst + requeueFirst, rounds);
}

QTEST_GUILESS_MAIN(TestActionsRace)
#include "tst_actionsrace.moc"
