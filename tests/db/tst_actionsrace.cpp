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

// A requeue racing a claim on the same due retryable row, released together: they never both
// act on the same version. Either the claim took the row over first (the requeue is stale and
// changes nothing) or the requeue applied first (the claim then sees the requeued row).
class TestActionsRace : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void requeueRacesClaim();

private:
    idem::test::ActionsFixture m_fx;
};

void TestActionsRace::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_fx.open("actions_race");
}

void TestActionsRace::cleanupTestCase() { m_fx.close(); }

void TestActionsRace::requeueRacesClaim()
{
    // At least 40 rounds, and on until both orderings happened (a race that always went one way
    // would test one branch only): every third round is an even start, the others give one side
    // a head start of 30 ms in turn, so both orders come even on a loaded machine.
    constexpr int rounds = 40;
    constexpr int maxRounds = 400;
    int claimFirst = 0, requeueFirst = 0;
    int round = 0;
    idem::TaskStore store(*m_fx.other, idem::test::storeOptions(30s, 5));
    for (; round < maxRounds && (round < rounds || claimFirst == 0 || requeueFirst == 0); ++round) {
        const int headStart = round % 3; // 0 even, 1 the claim first, 2 the requeue first
        const std::string keyText = m_fx.nextKey("race");
        const auto seen = m_fx.plant(keyText, "retryable_failed", 2, 5, "retryable"); // due since a second ago
        const auto auditBefore = m_fx.auditCount();

        std::atomic<int> ready { 0 };
        idem::ClaimResult claim;
        idem::ActionResult requeue;
        std::thread claimer([&] {
            ++ready;
            while (ready.load() < 2)
                std::this_thread::yield();
            if (headStart == 2)
                std::this_thread::sleep_for(30ms);
            claim = store.claim(idem::TaskKey::parse(keyText), "v1:planted");
        });
        auto o = m_fx.options("race round " + std::to_string(round));
        o.extraAttempts = 10;
        ++ready;
        while (ready.load() < 2)
            std::this_thread::yield();
        if (headStart == 1)
            std::this_thread::sleep_for(30ms);
        requeue = idem::applyAction(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, seen, o);
        claimer.join();

        const std::string decision = idem::decisionName(claim.decision);
        const bool claimed = claim.mayExecute();
        const bool applied = requeue.outcome == idem::ActionOutcome::Applied;
        const QByteArray row = m_fx.f(keyText, "status || ' ' || attempts || '/' || max_attempts");
        if (!applied) {
            // The claim won: the requeue saw the new version, changed nothing, wrote no audit.
            QCOMPARE(idem::outcomeName(requeue.outcome), "stale");
            QVERIFY2(claimed, decision.c_str());
            QCOMPARE(requeue.status, std::string("processing"));
            QCOMPARE(row, "processing 3/5"_b);
            QCOMPARE(m_fx.auditCount(), auditBefore);
            ++claimFirst;
            continue;
        }
        // The requeue won: its audit entry holds the version it checked, untouched by the claim.
        ++requeueFirst;
        QCOMPARE(m_fx.auditCount(), auditBefore + 1);
        const auto entries = idem::listAudit(*m_fx.admin, idem::SchemaName(), { .key = keyText });
        QCOMPARE(entries.size(), std::size_t(1));
        QVERIFY(entries[0].beforeImage.find("\"attempts\": 2") != std::string::npos);
        QVERIFY(entries[0].afterImage.find("\"max_attempts\": 12") != std::string::npos);
        if (claimed) {
            // Then the claim took the requeued row over: one attempt more, the new budget.
            QCOMPARE(claim.attempts, 3);
            QCOMPARE(claim.maxAttempts, 12);
            QCOMPARE(row, "processing 3/12"_b);
        } else {
            // Or it found the row locked by the requeue, or not yet due by its own clock.
            QVERIFY2(decision == "in_progress" || decision == "retry_later", decision.c_str());
            QCOMPARE(row, "retryable_failed 2/12"_b);
        }
    }
    qInfo("claim first %d, requeue first %d of %d rounds", claimFirst, requeueFirst, round);
    QCOMPARE(claimFirst + requeueFirst, round);
    QVERIFY2(claimFirst > 0 && requeueFirst > 0,
        qPrintable(QStringLiteral("one ordering never happened in %1 rounds: claim first %2, requeue first %3")
                       .arg(round)
                       .arg(claimFirst)
                       .arg(requeueFirst)));
    const auto chain = idem::verifyChain(*m_fx.admin, idem::SchemaName());
    QVERIFY2(chain.ok(), chain.detail.c_str());
}

QTEST_GUILESS_MAIN(TestActionsRace)
#include "tst_actionsrace.moc"
