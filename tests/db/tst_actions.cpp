#include <QtTest>

#include <pqxx/pqxx>
#include <string>

#include "operations/actions.h"
#include "operations/audit.h"
#include "core/runner.h"
#include "tests/db/tst_actions_fixture.h"
#include "tests/support/reasons.h"

using namespace std::chrono_literals;
using idem::test::operator""_b;
using idem::test::bytes;
using idem::test::scalar;

// Each recovery action end to end: what the caller is told, the row afterwards, the one audit
// entry it appended (actor, reason, both images), and what the protocol then does with the row.
class TestActions : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void requeue_data();
    void requeue();
    void releaseRevokesTheToken();
    void releaseWaitsForACompletingExecutor();
    void fail_data();
    void fail();
    void refusals_data();
    void refusals();
    void staleAfterAClaim();
    void invalidInput_data();
    void invalidInput();
    void sqlRefusesInvalidArguments_data();
    void sqlRefusesInvalidArguments();
    void invisibleReasons_data();
    void invisibleReasons();
    void sqlAndLibraryAgreeOnEveryCodePoint();
    void bulkReportsPerKey();

private:
    idem::test::ActionsFixture m_fx;
};

void TestActions::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_fx.open("actions");
}

void TestActions::cleanupTestCase() { m_fx.close(); }

void TestActions::requeue_data()
{
    QTest::addColumn<QString>("status");
    QTest::addColumn<QString>("errorClass");
    QTest::addColumn<int>("attempts");
    QTest::addColumn<int>("extra");
    QTest::addColumn<QString>("classAfter");
    QTest::addRow("failed, exhausted") << "failed"
                                       << "unknown" << 5 << 3 << "unknown";
    QTest::addRow("failed, permanent") << "failed"
                                       << "permanent" << 1 << 1 << "retryable";
    QTest::addRow("retryable_failed") << "retryable_failed"
                                      << "retryable" << 2 << 2 << "retryable";
}

void TestActions::requeue()
{
    QFETCH(QString, status);
    QFETCH(QString, errorClass);
    QFETCH(int, attempts);
    QFETCH(int, extra);
    QFETCH(QString, classAfter);
    const std::string key = m_fx.nextKey("requeue");
    const auto seen = m_fx.plant(key, status.toStdString(), attempts, 5, errorClass.toStdString());
    const QByteArray imageBefore = m_fx.image(key);
    const auto auditBefore = m_fx.auditCount();

    idem::ActionOptions o = m_fx.options("the downstream gateway is fixed");
    o.extraAttempts = extra;
    const auto res = idem::applyAction(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, seen, o);

    QCOMPARE(idem::outcomeName(res.outcome), "applied");
    QCOMPARE(res.status, std::string("retryable_failed"));
    QVERIFY(res.auditId);
    QVERIFY(*res.updatedAtUs > seen.updatedAtUs);
    QCOMPARE(m_fx.version(key)->updatedAtUs, *res.updatedAtUs);
    // The row: due now, attempts unchanged, exactly `extra` more allowed, nothing else touched.
    QCOMPARE(m_fx.f(key, "status || ' ' || attempts || '/' || max_attempts || ' ' || error_class"),
        bytes("retryable_failed " + std::to_string(attempts) + "/" + std::to_string(attempts + extra) + " "
            + classAfter.toStdString()));
    QCOMPARE(m_fx.f(key, "next_attempt_at <= now() AND owner_token IS NULL AND lease_until IS NULL"), "true"_b);
    QCOMPARE(m_fx.f(key, "request_hash || ' ' || error_message || ' ' || errors::text"),
        "v1:planted boom [{\"at\": \"2024-01-01T00:00:00+00:00\", \"class\": \"retryable\", \"attempt\": 1, "
        "\"message\": \"boom\"}]"_b);
    QCOMPARE(bytes(res.rowImage), m_fx.image(key));

    // One audit entry, naming who, why, and the row on both sides.
    QCOMPARE(m_fx.auditCount(), auditBefore + 1);
    m_fx.checkEntry(*res.auditId, key, "requeue", o.reason, o.actor, imageBefore, m_fx.image(key));

    // The protocol takes it from there: the next claim runs it, with the attempts granted.
    idem::TaskStore store(*m_fx.conn, idem::test::storeOptions(30s, 5));
    const auto claim = store.claim(idem::TaskKey::parse(key), "v1:planted");
    QCOMPARE(idem::decisionName(claim.decision), "reacquired");
    QCOMPARE(claim.detail, std::string("retry_due"));
    QCOMPARE(claim.attempts, attempts + 1);
    QCOMPARE(claim.maxAttempts, attempts + extra);
}

// The executor still runs after its lease was released: whatever it does with its old token is
// refused, its business write never commits, and the next claimer takes over and commits once.
void TestActions::releaseRevokesTheToken()
{
    const std::string keyText = m_fx.nextKey("release");
    const auto key = idem::TaskKey::parse(keyText);
    idem::TaskStore oldExecutor(*m_fx.conn, idem::test::storeOptions(60s, 5));
    const auto claim = oldExecutor.claim(key, "v1:release");
    QVERIFY(claim.mayExecute());
    const auto seen = m_fx.version(keyText);
    const QByteArray imageBefore = m_fx.image(keyText);

    const auto o = m_fx.options("executor host is wedged; lease held for an hour");
    const auto res = idem::applyAction(*m_fx.other, idem::SchemaName(), idem::RecoveryAction::Release, *seen, o);
    QCOMPARE(idem::outcomeName(res.outcome), "applied");
    QCOMPARE(res.status, std::string("processing"));
    QCOMPARE(
        m_fx.f(keyText, "status || ' ' || attempts || ' ' || (owner_token IS NULL) || ' ' || (lease_until <= now())"),
        "processing 1 true true"_b);
    m_fx.checkEntry(*res.auditId, keyText, "release", o.reason, o.actor, imageBefore, m_fx.image(keyText));

    // Every step of the old executor is fenced off, and its business write rolls back with it.
    QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, oldExecutor.heartbeat(key, claim.token));
    {
        pqxx::work tx(*m_fx.conn);
        QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, oldExecutor.fence(tx, key, claim.token));
    }
    {
        pqxx::work tx(*m_fx.conn);
        tx.exec_params("INSERT INTO payments (idempotency_key, amount) VALUES ($1, 100)", keyText);
        QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, oldExecutor.complete(tx, key, claim.token, "{\"late\":true}"));
    }
    QCOMPARE(m_fx.businessRows(keyText), 0);
    QVERIFY_THROWS_EXCEPTION(
        idem::LostOwnership, oldExecutor.fail(key, claim.token, 1, idem::FailureClass::Retryable, "late"));

    // The next claimer takes over at once (new token, attempts + 1) and commits exactly once.
    idem::TaskStore next(*m_fx.other, idem::test::storeOptions(60s, 5));
    int runs = 0;
    const auto out = idem::runTask(next, key, "v1:release", [&](pqxx::work& tx, const idem::TaskContext& ctx) {
        ++runs;
        tx.exec_params(
            "INSERT INTO payments (idempotency_key, amount, by_token) VALUES ($1, 100, $2::uuid)", keyText, ctx.token);
        return std::string("{\"receipt\":\"r-2\"}");
    });
    QCOMPARE(idem::runOutcomeName(out.kind), idem::runOutcomeName(idem::RunOutcome::Kind::Succeeded));
    QCOMPARE(out.claim.detail, std::string("lease_expired"));
    QCOMPARE(out.claim.attempts, 2);
    QCOMPARE(runs, 1);
    QCOMPARE(m_fx.businessRows(keyText), 1);
    QCOMPARE(m_fx.f(keyText, "status || ' ' || result_json::text"), "succeeded {\"receipt\": \"r-2\"}"_b);
    const auto again = idem::runTask(next, key, "v1:release", [&](pqxx::work&, const idem::TaskContext&) {
        ++runs;
        return std::string("{}");
    });
    QCOMPARE(idem::runOutcomeName(again.kind), idem::runOutcomeName(idem::RunOutcome::Kind::Replayed));
    QCOMPARE(runs, 1);
}

// An executor inside its fenced transaction holds the row: a release waits for it (bounded by
// the lock timeout) and then sees that it finished, instead of revoking a committed success.
void TestActions::releaseWaitsForACompletingExecutor()
{
    const std::string keyText = m_fx.nextKey("release-busy");
    const auto key = idem::TaskKey::parse(keyText);
    idem::TaskStore store(*m_fx.conn, idem::test::storeOptions(60s, 5));
    const auto claim = store.claim(key, "v1:busy");
    const auto seen = m_fx.version(keyText);
    const auto auditBefore = m_fx.auditCount();

    // The executor holds the row between fence and complete. A release with a short lock
    // timeout is an error that changes nothing; one that waits sees the executor's success.
    std::optional<idem::ActionResult> timedOut, waited;
    bool sawWait = false;
    {
        pqxx::work tx(*m_fx.conn);
        store.fence(tx, key, claim.token);
        auto o = m_fx.options("racing a completing executor");
        o.lockTimeoutMs = 200;
        timedOut = idem::applyAction(*m_fx.other, idem::SchemaName(), idem::RecoveryAction::Release, *seen, o);
        QCOMPARE(idem::outcomeName(timedOut->outcome), "error");
        QCOMPARE(timedOut->sqlstate, std::string("55P03"));

        o.lockTimeoutMs = 10000;
        std::thread releaser([&] {
            auto c = m_fx.db->connect();
            waited = idem::applyAction(*c, idem::SchemaName(), idem::RecoveryAction::Release, *seen, o);
        });
        // Checked after the join: a failed check here would leave the thread running.
        sawWait = idem::test::waitUntil([&] {
            return scalar(*m_fx.admin,
                       "SELECT count(*)::text FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                       " AND query LIKE '%idem_release%'")
                == "1"_b;
        });
        tx.exec_params("INSERT INTO payments (idempotency_key, amount) VALUES ($1, 7)", keyText);
        store.complete(tx, key, claim.token, "{\"done\":1}");
        tx.commit();
        releaser.join();
    }
    QVERIFY2(sawWait, "the release never waited for the executor's row lock");
    QCOMPARE(idem::outcomeName(waited->outcome), "stale");
    QCOMPARE(waited->status, std::string("succeeded"));
    QCOMPARE(m_fx.f(keyText, "status || ' ' || result_json::text"), "succeeded {\"done\": 1}"_b);
    QCOMPARE(scalar(*m_fx.admin, "SELECT sum(amount)::text FROM payments WHERE idempotency_key = $1", keyText), "7"_b);
    QCOMPARE(m_fx.auditCount(), auditBefore);
}

void TestActions::fail_data()
{
    QTest::addColumn<QString>("status");
    QTest::addRow("processing") << "processing";
    QTest::addRow("retryable_failed") << "retryable_failed";
}

void TestActions::fail()
{
    QFETCH(QString, status);
    const std::string keyText = m_fx.nextKey("fail");
    const auto seen = m_fx.plant(keyText, status.toStdString(), 2, 5, "unknown");
    const QByteArray imageBefore = m_fx.image(keyText);
    const std::string token = m_fx.f(keyText, "coalesce(owner_token::text, '')").toStdString();

    const auto o = m_fx.options("poison message: the order was cancelled upstream");
    const auto res = idem::applyAction(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Fail, seen, o);
    QCOMPARE(idem::outcomeName(res.outcome), "applied");
    QCOMPARE(m_fx.f(keyText,
                 "status || ' ' || attempts || '/' || max_attempts || ' ' || error_class || ' ' || error_message"
                 " || ' ' || (owner_token IS NULL AND lease_until IS NULL AND next_attempt_at IS NULL)"),
        "failed 2/5 permanent marked failed by an operator: poison message: the order was cancelled upstream true"_b);
    // The operator's decision joins the error history (planted processing rows have none yet).
    QCOMPARE(m_fx.f(keyText, "jsonb_array_length(errors) || ' ' || (errors->-1->>'class')"),
        status == QLatin1String("processing") ? "1 permanent"_b : "2 permanent"_b);
    m_fx.checkEntry(*res.auditId, keyText, "fail", o.reason, o.actor, imageBefore, m_fx.image(keyText));

    // No more retries: a claim reports it failed; an executor that held it cannot complete.
    idem::TaskStore store(*m_fx.other, idem::test::storeOptions(30s, 5));
    const auto key = idem::TaskKey::parse(keyText);
    QCOMPARE(idem::decisionName(store.claim(key, "v1:planted").decision), "failed");
    if (!token.empty()) {
        pqxx::work tx(*m_fx.other);
        QVERIFY_THROWS_EXCEPTION(idem::LostOwnership, store.complete(tx, key, token, "{}"));
    }
}

void TestActions::refusals_data()
{
    QTest::addColumn<QString>("action");
    QTest::addColumn<QString>("status");
    QTest::addColumn<bool>("changeFirst"); // the row changes between read and action
    QTest::addColumn<QString>("outcome");
    // No action touches a succeeded task; each applies only to its own statuses.
    for (const char* a : { "requeue", "release", "fail" })
        QTest::addRow("%s succeeded", a) << a << "succeeded" << false << "wrong_state";
    QTest::addRow("requeue processing") << "requeue"
                                        << "processing" << false << "wrong_state";
    QTest::addRow("release failed") << "release"
                                    << "failed" << false << "wrong_state";
    QTest::addRow("release retryable_failed") << "release"
                                              << "retryable_failed" << false << "wrong_state";
    QTest::addRow("fail failed") << "fail"
                                 << "failed" << false << "wrong_state";
    // A stale view is refused whatever changed: status or only updated_at.
    QTest::addRow("requeue stale") << "requeue"
                                   << "failed" << true << "stale";
    QTest::addRow("release stale") << "release"
                                   << "processing" << true << "stale";
    QTest::addRow("fail stale") << "fail"
                                << "retryable_failed" << true << "stale";
    QTest::addRow("requeue missing") << "requeue"
                                     << "" << false << "not_found";
}

void TestActions::refusals()
{
    QFETCH(QString, action);
    QFETCH(QString, status);
    QFETCH(bool, changeFirst);
    QFETCH(QString, outcome);
    const std::string key = m_fx.nextKey("refuse");
    idem::RowVersion seen { key, "failed", 1'700'000'000'000'000 };
    if (!status.isEmpty())
        seen = m_fx.plant(key, status.toStdString(), 3, 5, "retryable");
    if (changeFirst) {
        // Someone else moved it on in the meantime (a heartbeat-like touch: same status).
        pqxx::work w(*m_fx.admin);
        w.exec_params("UPDATE idem.task_idempotency SET updated_at = updated_at + interval '1 millisecond'"
                      " WHERE idempotency_key = $1",
            key);
        w.commit();
    }
    const QByteArray rowBefore = m_fx.f(key, "row_to_json(t)");
    const auto auditBefore = m_fx.auditCount();

    const auto res = idem::applyAction(
        *m_fx.conn, idem::SchemaName(), *idem::parseAction(action.toStdString()), seen, m_fx.options("try it"));
    QCOMPARE(QString::fromLatin1(idem::outcomeName(res.outcome)), outcome);
    QVERIFY(idem::isRefusal(res.outcome));
    QVERIFY(!res.auditId);
    QCOMPARE(m_fx.f(key, "row_to_json(t)"), rowBefore);
    QCOMPARE(m_fx.auditCount(), auditBefore);
    if (status.isEmpty()) {
        QVERIFY(!res.updatedAtUs);
        return;
    }
    // What the row is now, so the operator sees what changed.
    const auto now = m_fx.version(key);
    QCOMPARE(res.status, now->status);
    QCOMPARE(*res.updatedAtUs, now->updatedAtUs);
    QCOMPARE(bytes(res.rowImage), m_fx.image(key));
    QVERIFY2(res.message.find(now->status) != std::string::npos, res.message.c_str());
    if (changeFirst)
        QVERIFY2(res.message.find(idem::formatMicros(now->updatedAtUs)) != std::string::npos, res.message.c_str());
}

// The realistic stale view: the operator read a retryable row, a worker claimed it meanwhile.
void TestActions::staleAfterAClaim()
{
    const std::string keyText = m_fx.nextKey("stale-claim");
    const auto seen = m_fx.plant(keyText, "retryable_failed", 1, 5, "retryable");
    idem::TaskStore store(*m_fx.other, idem::test::storeOptions(30s, 5));
    QCOMPARE(idem::decisionName(store.claim(idem::TaskKey::parse(keyText), "v1:planted").decision), "reacquired");
    const QByteArray rowBefore = m_fx.f(keyText, "row_to_json(t)");
    const auto res = idem::applyAction(
        *m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, seen, m_fx.options("stuck, I think"));
    QCOMPARE(idem::outcomeName(res.outcome), "stale");
    QCOMPARE(res.status, std::string("processing"));
    QVERIFY2(res.message.find("it is now processing") != std::string::npos, res.message.c_str());
    QCOMPARE(m_fx.f(keyText, "row_to_json(t)"), rowBefore);
}

void TestActions::invalidInput_data()
{
    QTest::addColumn<QByteArray>("reason");
    QTest::addColumn<int>("extra");
    QTest::addColumn<QByteArray>("key");
    QTest::addRow("empty reason") << ""_b << 1 << ""_b;
    QTest::addRow("blank reason") << " \t\r\n "_b << 1 << ""_b;
    QTest::addRow("reason over 16384 characters") << QByteArray(16385, 'r') << 1 << ""_b;
    QTest::addRow("reason over 16384 characters, multibyte") << QByteArray("\xc3\xa9").repeated(16385) << 1 << ""_b;
    QTest::addRow("NUL in reason") << "a\0b"_b << 1 << ""_b;
    QTest::addRow("invalid UTF-8 reason") << "caf\xe9"_b << 1 << ""_b;
    QTest::addRow("no extra attempts") << "ok"_b << 0 << ""_b;
    QTest::addRow("too many extra attempts") << "ok"_b << 1001 << ""_b;
    QTest::addRow("NUL in key") << "ok"_b << 1 << "t:op:a\0b"_b;
    QTest::addRow("empty key") << "ok"_b << 1 << "<empty>"_b;
}

// Bad input is a clear error before anything is sent; the row and the audit stay as they were.
void TestActions::invalidInput()
{
    QFETCH(QByteArray, reason);
    QFETCH(int, extra);
    QFETCH(QByteArray, key);
    const std::string planted = m_fx.nextKey("invalid");
    auto seen = m_fx.plant(planted, "failed", 5, 5, "retryable");
    if (key == "<empty>"_b)
        seen.key.clear();
    else if (!key.isEmpty())
        seen.key = key.toStdString();
    const QByteArray rowBefore = m_fx.f(planted, "row_to_json(t)");
    const auto auditBefore = m_fx.auditCount();
    idem::ActionOptions o = m_fx.options("");
    o.reason = reason.toStdString();
    o.extraAttempts = extra;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
        idem::applyAction(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, seen, o));
    if (key.isEmpty()) {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
            idem::applyBulk(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, { seen }, o));
    } else {
        // In a bulk run a bad key is that key's error; the other keys still go ahead.
        const auto results
            = idem::applyBulk(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, { seen }, o);
        QCOMPARE(idem::outcomeName(results.at(0).outcome), "error");
    }
    QCOMPARE(m_fx.f(planted, "row_to_json(t)"), rowBefore);
    QCOMPARE(m_fx.auditCount(), auditBefore);
}

void TestActions::sqlRefusesInvalidArguments_data()
{
    QTest::addColumn<QString>("call");
    QTest::addColumn<bool>("repeatableRead");
    QTest::addRow("blank reason") << "idem.idem_requeue($1, 'failed', $2, 1, E' \\t\\n')" << false;
    QTest::addRow("NULL reason") << "idem.idem_fail($1, 'failed', $2, NULL)" << false;
    QTest::addRow("reason too long") << "idem.idem_release($1, 'failed', $2, repeat('x', 16385))" << false;
    QTest::addRow("extra attempts 0") << "idem.idem_requeue($1, 'failed', $2, 0, 'r')" << false;
    QTest::addRow("no expected version") << "idem.idem_requeue($1, 'failed', NULLIF($2::bigint, $2::bigint), 1, 'r')"
                                         << false;
    QTest::addRow("repeatable read") << "idem.idem_requeue($1, 'failed', $2, 1, 'r')" << true;
}

// Callers in other languages get the same checks from the functions themselves (ID003).
void TestActions::sqlRefusesInvalidArguments()
{
    QFETCH(QString, call);
    QFETCH(bool, repeatableRead);
    const std::string key = m_fx.nextKey("sql-invalid");
    const auto seen = m_fx.plant(key, "failed", 5, 5, "retryable");
    const QByteArray rowBefore = m_fx.f(key, "row_to_json(t)");
    const auto auditBefore = m_fx.auditCount();
    std::string state;
    try {
        pqxx::work w(*m_fx.conn);
        if (repeatableRead)
            w.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        w.exec_params("SELECT * FROM " + call.toStdString(), key, static_cast<long long>(seen.updatedAtUs));
        w.commit();
    } catch (const pqxx::sql_error& e) {
        state = e.sqlstate();
    }
    QCOMPARE(state, std::string("ID003"));
    QCOMPARE(m_fx.f(key, "row_to_json(t)"), rowBefore);
    QCOMPARE(m_fx.auditCount(), auditBefore);
}

void TestActions::invisibleReasons_data()
{
    QTest::addColumn<QByteArray>("reason");
    QTest::addColumn<bool>("refused");
    for (const auto& c : idem::test::reasonCases())
        QTest::addRow("%s", c.tag) << bytes(c.utf8) << c.refused;
}

// Issue #12 item 6: a reason must have a visible character. White space, controls and
// invisible format characters alone are refused by the C++ check (before any I/O) and by the
// SQL function (ID003) alike; a reason with something visible is kept verbatim.
void TestActions::invisibleReasons()
{
    QFETCH(QByteArray, reason);
    QFETCH(bool, refused);
    const std::string viaLibrary = m_fx.nextKey("reason");
    const std::string viaSql = m_fx.nextKey("reason");
    const auto libSeen = m_fx.plant(viaLibrary, "failed", 5, 5, "retryable");
    const auto sqlSeen = m_fx.plant(viaSql, "failed", 5, 5, "retryable");
    const auto auditBefore = m_fx.auditCount();
    auto o = m_fx.options(reason.toStdString());

    bool cppRefused = false;
    try {
        idem::validateActionOptions(idem::RecoveryAction::Requeue, o);
    } catch (const std::invalid_argument& e) {
        cppRefused = true;
        QVERIFY2(std::string(e.what()).find("reason") != std::string::npos, e.what());
    }
    QCOMPARE(cppRefused, refused);
    if (refused) {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
            idem::applyAction(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, libSeen, o));
    } else {
        const auto res = idem::applyAction(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, libSeen, o);
        QVERIFY2(res.outcome == idem::ActionOutcome::Applied, res.message.c_str());
        QCOMPARE(scalar(*m_fx.admin, "SELECT reason FROM idem.task_idempotency_audit WHERE id = $1",
                     static_cast<long long>(*res.auditId)),
            reason);
    }

    std::string state = "none";
    try {
        pqxx::work w(*m_fx.conn);
        w.exec_params("SELECT * FROM idem.idem_requeue($1, 'failed', $2, 1, $3)", viaSql,
            static_cast<long long>(sqlSeen.updatedAtUs), reason.toStdString());
        w.commit();
    } catch (const pqxx::sql_error& e) {
        state = e.sqlstate();
    }
    QCOMPARE(state, std::string(refused ? "ID003" : "none"));
    QCOMPARE(m_fx.f(viaSql, "status"), refused ? "failed"_b : "retryable_failed"_b);
    QCOMPARE(m_fx.auditCount(), auditBefore + (refused ? 0 : 2));
    if (!refused)
        QCOMPARE(scalar(*m_fx.admin,
                     "SELECT reason FROM idem.task_idempotency_audit WHERE idempotency_key = $1", viaSql),
            reason);
}

// audit_reason_blank's pattern and the library's table are two spellings of one list: compared
// over every code point as maximal runs of blank ones (surrogates aside, and NUL, which
// PostgreSQL text cannot hold).
void TestActions::sqlAndLibraryAgreeOnEveryCodePoint()
{
    const QByteArray sql = scalar(*m_fx.conn,
        "SELECT string_agg(to_hex(lo) || '-' || to_hex(hi), ',' ORDER BY lo) FROM ("
        " SELECT min(g) AS lo, max(g) AS hi FROM ("
        "  SELECT g, g - row_number() OVER (ORDER BY g) AS run FROM generate_series(1, 1114111) g"
        "   WHERE (g < 55296 OR g > 57343) AND idem.audit_reason_blank(chr(g))) blank GROUP BY run) runs");
    const auto utf8 = [](char32_t cp) {
        std::string s;
        if (cp < 0x80) {
            s += static_cast<char>(cp);
        } else if (cp < 0x800) {
            s += static_cast<char>(0xC0 | (cp >> 6));
            s += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            s += static_cast<char>(0xE0 | (cp >> 12));
            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            s += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            s += static_cast<char>(0xF0 | (cp >> 18));
            s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            s += static_cast<char>(0x80 | (cp & 0x3F));
        }
        return s;
    };
    QByteArray cpp;
    std::optional<char32_t> runStart;
    for (char32_t cp = 1; cp <= 0x110000; ++cp) {
        const bool blank = cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF) && idem::reasonIsBlank(utf8(cp));
        if (blank && !runStart) {
            runStart = cp;
        } else if (!blank && runStart) {
            cpp += (cpp.isEmpty() ? "" : ",") + QByteArray::number(*runStart, 16) + "-" + QByteArray::number(cp - 1, 16);
            runStart.reset();
        }
    }
    QCOMPARE(sql, cpp);
    QVERIFY(idem::reasonIsBlank(std::string(1, '\0')));
    QVERIFY(cpp.startsWith("1-20,7f-a0,ad-ad,")); // not vacuous
}

void TestActions::bulkReportsPerKey()
{
    const std::string a = m_fx.nextKey("bulk"), b = m_fx.nextKey("bulk"), c = m_fx.nextKey("bulk"),
                      d = m_fx.nextKey("bulk"), e = m_fx.nextKey("bulk");
    const auto va = m_fx.plant(a, "failed", 5, 5, "retryable");
    auto vb = m_fx.plant(b, "retryable_failed", 1, 5, "retryable");
    const auto vc = m_fx.plant(c, "processing", 1, 5, "");
    const auto ve = m_fx.plant(e, "failed", 5, 5, "retryable");
    vb.updatedAtUs -= 1; // a view one microsecond older than the row
    const std::vector<idem::RowVersion> targets { va, vb, vc, { d, "failed", va.updatedAtUs }, ve };
    const auto auditBefore = m_fx.auditCount();

    std::vector<std::string> seenByProgress;
    const auto results = idem::applyBulk(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, targets,
        m_fx.options("bulk requeue after the outage"),
        [&](std::size_t done, std::size_t total, const idem::ActionResult& last) {
            seenByProgress.push_back(std::to_string(done) + "/" + std::to_string(total) + " " + last.key);
            return true;
        });
    QCOMPARE(results.size(), std::size_t(5));
    const char* expected[] = { "applied", "stale", "wrong_state", "not_found", "applied" };
    for (std::size_t i = 0; i < results.size(); ++i) {
        QCOMPARE(results[i].key, targets[i].key);
        QCOMPARE(idem::outcomeName(results[i].outcome), expected[i]);
    }
    QCOMPARE(seenByProgress.size(), std::size_t(5));
    QCOMPARE(seenByProgress.back(), "5/5 " + e);
    QCOMPARE(m_fx.auditCount(), auditBefore + 2);
    QCOMPARE(m_fx.f(a, "status"), "retryable_failed"_b);
    QCOMPARE(m_fx.f(b, "status"), "retryable_failed"_b);
    QCOMPARE(m_fx.f(c, "status"), "processing"_b);

    // Stopped by the caller after the first key: the rest are reported skipped and untouched.
    const std::string f1 = m_fx.nextKey("bulk"), f2 = m_fx.nextKey("bulk");
    const auto v1 = m_fx.plant(f1, "failed", 5, 5, "retryable"), v2 = m_fx.plant(f2, "failed", 5, 5, "retryable");
    const auto stopped = idem::applyBulk(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Fail, { vc, v1, v2 },
        m_fx.options("stop after one"), [](std::size_t, std::size_t, const idem::ActionResult&) { return false; });
    QCOMPARE(idem::outcomeName(stopped[0].outcome), "applied");
    QCOMPARE(idem::outcomeName(stopped[1].outcome), "skipped");
    QCOMPARE(idem::outcomeName(stopped[2].outcome), "skipped");
    QCOMPARE(m_fx.f(c, "status"), "failed"_b);
    QCOMPARE(m_fx.f(f1, "status || attempts"), "failed5"_b);
    QCOMPARE(m_fx.auditCount(), auditBefore + 3);
}

QTEST_GUILESS_MAIN(TestActions)
#include "tst_actions.moc"
