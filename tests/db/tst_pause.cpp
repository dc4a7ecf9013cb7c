#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <thread>

#include <pqxx/pqxx>

#include "core/counters.h"
#include "core/runner.h"
#include "core/taskstore.h"
#include "operations/audit.h"
#include "operations/pauses.h"
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
constexpr const char* workerRole = "idem_t_pause_worker";
constexpr const char* operatorRole = "idem_t_pause_operator";
constexpr const char* readerRole = "idem_t_pause_reader";
constexpr const char* outsiderRole = "idem_t_pause_outsider";
constexpr const char* password = "pw-pause";

const idem::SchemaName schema;

std::int64_t number(pqxx::connection& c, const std::string& sql)
{
    return std::stoll(scalar(c, sql).toStdString());
}

QJsonObject json(const idem::test::CliRun& run) { return QJsonDocument::fromJson(run.out.toUtf8()).object(); }

} // namespace

// Issue #26: pauses of intake, enforced by claim() for every client, set and lifted only through
// audited functions, each checked against what landed in the database.
class TestPause : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void pausedKeysAreNeverAcquired();
    void expiredLeaseIsNotTakenOverUnderPause();
    void storedAnswersAreUnchanged();
    void scopesCoverWhatTheyName();
    void expiresByTheServersClock();
    void resumeRestoresAcquisitionAndIsAudited();
    void runnerAndCountersReportPaused();
    void badArgumentsChangeNothing_data();
    void badArgumentsChangeNothing();
    void tenThousandPausesAtMost();
    void summaryFollowsEveryChange();
    void pauseRacingAClaimRace();
    void claimOutsideReadCommittedIsRefused();
    void catalogSignalFollowsPauses();
    void otherOperationsReadNoPauseTable();
    void signalCannotBeForged();
    void upgradeFromV15KeepsPausesInForce();
    void rolesAndPrivileges();
    void idemctlPauseResumeAndPauses();

private:
    std::unique_ptr<pqxx::connection> login(const char* role);
    idem::test::CliRun idemctl(const char* role, QStringList args);
    idem::PauseChange pause(const std::string& tenant, const std::string& operation, const std::string& reason,
        std::optional<std::int64_t> lengthMs = std::nullopt);
    void resume(const std::string& tenant, const std::string& operation);
    // Whether the view claim() looks up exists (it exists exactly while nothing is paused).
    bool signalPresent() { return scalar(*m_owner, "SELECT to_regclass('idem.idem_pauses_none') IS NOT NULL") == "t"; }
    // Whether claim() trusts the per-operation views (v18), and which operations they name.
    bool byOperation() { return scalar(*m_owner, "SELECT to_regclass('idem.idem_pauses_by_operation') IS NOT NULL") == "t"; }
    QByteArray operationViews()
    {
        return scalar(*m_owner, "SELECT COALESCE(string_agg(substr(relname, 13), ',' ORDER BY relname), '') FROM pg_class"
                                " WHERE relnamespace = 'idem'::regnamespace AND relname LIKE 'idem\\_paused:%'");
    }
    // One claim through the SQL API and how many times it read the pause summary: the backend's
    // own scan count before and after it, in one transaction (pg_stat_xact_user_tables also holds
    // earlier transactions' counts not yet reported, which do not move within one).
    std::pair<std::string, std::int64_t> claimAndReads(pqxx::connection& c, const idem::TaskKey& k)
    {
        const std::string scans = "SELECT COALESCE(seq_scan, 0) + COALESCE(idx_scan, 0) FROM pg_stat_xact_user_tables"
                                  " WHERE relid = 'idem.idem_pause_tenants'::regclass";
        pqxx::work w(c);
        const auto before = w.exec1(scans)[0].as<std::int64_t>();
        const auto decision = w.exec_params1("SELECT decision FROM idem.claim($1, $2, gen_random_uuid(), 30000)",
                                  k.str(), digestOf('a'))[0].as<std::string>();
        const auto after = w.exec1(scans)[0].as<std::int64_t>();
        w.commit();
        return { decision, after - before };
    }
    // Deletes every pause as the owner writes idem_pauses by hand: summarised after, as they must.
    void deleteAllPauses()
    {
        pqxx::work w(*m_owner);
        w.exec("DELETE FROM idem.idem_pauses");
        w.exec("SELECT idem.idem_pause_summarise()");
        w.commit();
    }
    // Pauses rows and audit entries, to show that something changed nothing.
    QByteArray state() { return scalar(*m_owner, "SELECT (SELECT count(*) FROM idem.idem_pauses) || '/' ||"
                                                 " (SELECT count(*) FROM idem.task_idempotency_audit)"); }
    idem::TaskKey key(const std::string& tenant, const std::string& operation)
    {
        return idem::TaskKey(tenant, operation, std::string(QTest::currentTestFunction()) + "#" + std::to_string(++m_keys));
    }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
    std::unique_ptr<pqxx::connection> m_operator;
    int m_keys = 0;
};

void TestPause::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("pause", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    idem::test::createLoginRole(workerRole, password, "idem_worker");
    idem::test::createLoginRole(operatorRole, password, "idem_operator");
    idem::test::createLoginRole(readerRole, password, "idem_reader");
    idem::test::createLoginRole(outsiderRole, password, "");
    m_operator = login(operatorRole);
}

void TestPause::cleanupTestCase()
{
    m_operator.reset();
    m_owner.reset();
    m_db.reset();
}

// Every test starts with nothing paused (deleted by the owner: the audit trail keeps growing), so
// with the view idem_pauses_none in place and claims on the path that reads no table.
void TestPause::init()
{
    deleteAllPauses();
    QVERIFY(signalPresent());
}

std::unique_ptr<pqxx::connection> TestPause::login(const char* role)
{
    return std::make_unique<pqxx::connection>(idem::test::dsnWith(
        idem::test::loginDsn(m_db->dsn(), role, password), { { "application_name", "idem-t-pause" } }));
}

idem::test::CliRun TestPause::idemctl(const char* role, QStringList args)
{
    args << QStringLiteral("--dsn") << QString::fromStdString(idem::test::loginDsn(m_db->dsn(), role, password));
    return idem::test::runProgram(idem::test::idemctlPath(), args, 60000);
}

idem::PauseChange TestPause::pause(const std::string& tenant, const std::string& operation, const std::string& reason,
    std::optional<std::int64_t> lengthMs)
{
    idem::PauseRequest r;
    r.tenant = tenant;
    r.operation = operation;
    r.reason = reason;
    r.actor = "tester";
    r.lengthMs = lengthMs;
    return idem::setPause(*m_operator, schema, r);
}

void TestPause::resume(const std::string& tenant, const std::string& operation)
{
    idem::resumePause(*m_operator, schema, tenant, operation, "downstream is back", "tester");
}

// 32 clients claim one new key at once under a pause of its operation: every one is told
// 'paused', none acquires, no row is written; after the resume exactly one acquires.
void TestPause::pausedKeysAreNeverAcquired()
{
    pause("*", "refund", "gateway down");
    const auto k = key("acme", "refund");
    constexpr int clients = 32;
    std::vector<std::unique_ptr<pqxx::connection>> conns;
    for (int i = 0; i < clients; ++i)
        conns.push_back(m_db->connect());
    std::barrier start(clients);
    std::vector<idem::ClaimResult> results(clients);
    std::vector<std::thread> threads;
    for (int i = 0; i < clients; ++i)
        threads.emplace_back([&, i] {
            idem::TaskStore store(*conns[i], storeOptions(30s));
            start.arrive_and_wait();
            results[i] = store.claim(k, digestOf('a'));
        });
    for (auto& t : threads)
        t.join();
    for (const auto& r : results) {
        QCOMPARE(idem::decisionName(r.decision), "paused");
        QCOMPARE(r.detail, std::string("*:refund"));
        QCOMPARE(r.errorMessage, std::string("gateway down"));
        QVERIFY(r.token.empty());
        QCOMPARE(r.attempts, 0);
        QCOMPARE(r.retryAfter, 5000ms); // a pause until resumed: ask again in 5 s
        QCOMPARE(r.pausedFor, 0ms);
    }
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'acme:refund:%'"), 0);

    // Another operation of the same tenant is not paused.
    idem::TaskStore store(*conns[0], storeOptions(30s));
    QCOMPARE(idem::decisionName(store.claim(key("acme", "charge"), digestOf('a')).decision), "acquired");

    resume("*", "refund");
    std::atomic<int> acquired { 0 };
    threads.clear();
    std::barrier again(clients);
    for (int i = 0; i < clients; ++i)
        threads.emplace_back([&, i] {
            idem::TaskStore s(*conns[i], storeOptions(30s));
            again.arrive_and_wait();
            results[i] = s.claim(k, digestOf('a'));
            if (results[i].mayExecute())
                ++acquired;
        });
    for (auto& t : threads)
        t.join();
    QCOMPARE(acquired.load(), 1);
    for (const auto& r : results)
        QVERIFY2(r.mayExecute() || r.decision == idem::Decision::InProgress, idem::decisionName(r.decision));
    QCOMPARE(idem::test::field(*m_owner, k, "t.status || ' ' || t.attempts"), "processing 1"_b);
}

// A lease that expired (its executor died) is not taken over while the operation is paused, and
// a retryable failure whose backoff is due is not retried: the row stays exactly as it was.
void TestPause::expiredLeaseIsNotTakenOverUnderPause()
{
    auto conn = m_db->connect();
    idem::TaskStore store(*conn, storeOptions(200ms));
    const auto dead = key("acme", "payout");
    QVERIFY(store.claim(dead, digestOf('a')).mayExecute());
    const auto retry = key("acme", "payout");
    const auto first = store.claim(retry, digestOf('b'));
    QVERIFY(first.mayExecute());
    store.fail(retry, first.token, first.attempts, idem::FailureClass::Retryable, "timeout");
    pqxx::nontransaction(*m_owner).exec_params(
        "UPDATE idem.task_idempotency SET lease_until = now() - interval '1 second', next_attempt_at = now() - interval '1 second'"
        " WHERE idempotency_key = ANY($1::text[])",
        "{" + dead.str() + "," + retry.str() + "}");
    pause("acme", "payout", "partner API answers 500");
    const auto deadBefore = idem::test::rowJson(*m_owner, dead);
    const auto retryBefore = idem::test::rowJson(*m_owner, retry);

    const auto takeover = store.claim(dead, digestOf('a'));
    QCOMPARE(idem::decisionName(takeover.decision), "paused");
    QCOMPARE(takeover.attempts, 1); // the row's attempts, unchanged
    QVERIFY(takeover.token.empty());
    const auto retried = store.claim(retry, digestOf('b'));
    QCOMPARE(idem::decisionName(retried.decision), "paused");
    QCOMPARE(retried.detail, std::string("acme:payout"));
    QCOMPARE(idem::test::rowJson(*m_owner, dead), deadBefore);
    QCOMPARE(idem::test::rowJson(*m_owner, retry), retryBefore);

    resume("acme", "payout");
    const auto after = store.claim(dead, digestOf('a'));
    QCOMPARE(idem::decisionName(after.decision), "reacquired");
    QCOMPARE(after.detail, std::string("lease_expired"));
    QCOMPARE(after.attempts, 2);
}

// What the stored row answers is answered paused or not: a replay of a succeeded key, a conflict,
// a live lease, a pending backoff, a failed key.
void TestPause::storedAnswersAreUnchanged()
{
    auto conn = m_db->connect();
    idem::TaskStore store(*conn, storeOptions(30s, 1));
    const auto done = key("acme", "mail");
    const auto c = store.claim(done, digestOf('a'));
    {
        pqxx::work w(*conn);
        store.fence(w, done, c.token);
        store.complete(w, done, c.token, R"({"sent":true})");
        w.commit();
    }
    const auto live = key("acme", "mail");
    QVERIFY(store.claim(live, digestOf('a')).mayExecute());
    const auto failed = key("acme", "mail");
    const auto f = store.claim(failed, digestOf('a'));
    store.fail(failed, f.token, f.attempts, idem::FailureClass::Permanent, "bad address");
    pause("acme", "mail", "mail relay down");

    const auto replay = store.claim(done, digestOf('a'));
    QCOMPARE(idem::decisionName(replay.decision), "replay");
    QCOMPARE(replay.resultJson, std::string(R"({"sent": true})"));
    QCOMPARE(idem::decisionName(store.claim(done, digestOf('z')).decision), "conflict");
    QCOMPARE(idem::decisionName(store.claim(live, digestOf('a')).decision), "in_progress");
    QCOMPARE(idem::decisionName(store.claim(failed, digestOf('a')).decision), "failed");
}

// Tenant, operation, both, or '*': each covers exactly what it names; the longest-lasting of two
// covering pauses is reported.
void TestPause::scopesCoverWhatTheyName()
{
    auto conn = m_db->connect();
    idem::TaskStore store(*conn, storeOptions(30s));
    const auto decision = [&](const char* tenant, const char* operation) {
        return std::string(idem::decisionName(store.claim(key(tenant, operation), digestOf('a')).decision));
    };
    pause("t1", "*", "tenant t1 migrating");
    QCOMPARE(decision("t1", "charge"), "paused");
    QCOMPARE(decision("t1", "refund"), "paused");
    QCOMPARE(decision("t2", "charge"), "acquired");
    pause("t2", "charge", "t2 charges only", 60000);
    QCOMPARE(decision("t2", "charge"), "paused");
    QCOMPARE(decision("t2", "refund"), "acquired");
    pause("*", "*", "everything", 120000);
    QCOMPARE(decision("t3", "anything"), "paused");
    // t2:charge is under its own pause (60 s) and '*:*' (120 s): the longer one answers.
    QCOMPARE(store.claim(key("t2", "charge"), digestOf('a')).detail, std::string("*:*"));
    // t1 is paused until resumed, which outlasts '*:*'.
    QCOMPARE(store.claim(key("t1", "charge"), digestOf('a')).detail, std::string("t1:*"));
    resume("*", "*");
    QCOMPARE(decision("t3", "anything"), "acquired");
    QCOMPARE(decision("t1", "charge"), "paused");

    // A key whose tenant or operation only starts like a paused name is not covered, nor a key
    // stored by another client without the tenant:operation: shape.
    QCOMPARE(decision("t10", "charge"), "acquired");
    pqxx::nontransaction t(*conn);
    QCOMPARE(t.exec("SELECT decision FROM idem.claim('t1', 'v1:' || repeat('a', 64), gen_random_uuid(), 30000, 5,"
                    " NULL)")[0][0].as<std::string>(),
        std::string("paused"));
    QCOMPARE(t.exec("SELECT decision FROM idem.claim('t2', 'v1:' || repeat('a', 64), gen_random_uuid(), 30000, 5,"
                    " NULL)")[0][0].as<std::string>(),
        std::string("acquired"));
}

// A pause with an end lifts itself when the server's clock passes it, whatever the client's clock
// says; until then the answer's retry_after never goes past the end.
void TestPause::expiresByTheServersClock()
{
    auto conn = m_db->connect();
    idem::TaskStore store(*conn, storeOptions(30s));
    const auto set = pause("acme", "sms", "SMS provider rate-limits us", 4000);
    QVERIFY(set.pause.untilUs);
    QVERIFY(set.pause.remainingMs && *set.pause.remainingMs <= 4000 && *set.pause.remainingMs > 3000);
    const auto k = key("acme", "sms");
    const auto paused = store.claim(k, digestOf('a'));
    if (number(*m_owner, "SELECT (now() < until)::int FROM idem.idem_pauses") == 1) {
        QCOMPARE(idem::decisionName(paused.decision), "paused");
        QVERIFY2(paused.retryAfter <= paused.pausedFor + 1ms, qPrintable(QString::number(paused.retryAfter.count())));
        QVERIFY(paused.pausedFor > 0ms && paused.pausedFor <= 4000ms);
        QVERIFY(paused.retryAfter >= 1ms && paused.retryAfter <= 4000ms);
    }
    // The end as the server sees it, not this process's clock.
    QVERIFY(idem::test::waitUntil(
        [&] { return number(*m_owner, "SELECT (now() >= until)::int FROM idem.idem_pauses") == 1; }, 30s));
    const auto after = store.claim(k, digestOf('a'));
    QCOMPARE(idem::decisionName(after.decision), "acquired");
    // The expired pause stays listed, as expired, until lifted.
    const auto list = idem::listPauses(*m_operator, schema);
    QCOMPARE(list.pauses.size(), std::size_t(1));
    QVERIFY(!list.pauses[0].active);
    QCOMPARE(list.pauses[0].remainingMs.value_or(-1), 0);
    QVERIFY(!list.anyActive());
    // Setting it again starts a new pause (a new paused_at).
    const auto again = pause("acme", "sms", "again", 60000);
    QVERIFY(!again.wasPaused);
    QVERIFY(again.pause.pausedAtUs > set.pause.pausedAtUs);
    QCOMPARE(idem::decisionName(store.claim(key("acme", "sms"), digestOf('a')).decision), "paused");
}

// Every change is one audit entry on the chain, with the pause before and after; the chain
// still verifies.
void TestPause::resumeRestoresAcquisitionAndIsAudited()
{
    const auto head = number(*m_owner, "SELECT COALESCE(max(id), 0) FROM idem.task_idempotency_audit");
    const auto first = pause("acme", "export", "warehouse full");
    QVERIFY(!first.wasPaused);
    const auto changed = pause("acme", "export", "warehouse full, until the night run", 3600000);
    QVERIFY(changed.wasPaused);
    QCOMPARE(changed.pause.pausedAtUs, first.pause.pausedAtUs); // still the same pause
    QVERIFY(!changed.previousUntilUs);
    pause("*", "export", "all exports", 60000);
    const auto resumed = idem::resumePause(*m_operator, schema, "acme", "export", "night run done", "tester");
    QVERIFY(resumed.wasActive);
    QCOMPARE(resumed.stillPausedBy.size(), std::size_t(1));
    QCOMPARE(resumed.stillPausedBy[0], std::make_pair(std::string("*"), std::string("export")));
    QVERIFY_THROWS_EXCEPTION(idem::PauseNotFound,
        idem::resumePause(*m_operator, schema, "acme", "export", "twice", "tester"));

    // One entry each: the action, its reason, the pause's reason before and after ('-': none).
    QCOMPARE(scalar(*m_owner, "SELECT string_agg(action || '[' || idempotency_key || ']|' || reason || '|'"
                              " || COALESCE(before_image -> 'pause' ->> 'reason', '-') || '|'"
                              " || COALESCE(after_image -> 'pause' ->> 'reason', '-') || '|' || os_user, E'\\n'"
                              " ORDER BY id) FROM idem.task_idempotency_audit WHERE id > $1",
                 head),
        QByteArray("pause[]|warehouse full|-|warehouse full|tester\n"
                   "pause[]|warehouse full, until the night run|warehouse full|warehouse full, until the night run|tester\n"
                   "pause[]|all exports|-|all exports|tester\n"
                   "resume[]|night run done|warehouse full, until the night run|-|tester"));
    QCOMPARE(scalar(*m_owner, "SELECT ((after_image -> 'pause' ->> 'until')::timestamptz"
                              " = (SELECT until FROM idem.idem_pauses WHERE operation = 'export'))::text"
                              " FROM idem.task_idempotency_audit WHERE id = $1",
                 head + 3),
        "true"_b);
    QCOMPARE(scalar(*m_owner, "SELECT db_role FROM idem.task_idempotency_audit WHERE id = $1", head + 4),
        QByteArray(operatorRole));
    QCOMPARE(scalar(*m_owner, "SELECT (audit_id = $1)::text FROM idem.idem_pauses WHERE tenant = '*' AND operation = 'export'",
                 head + 3),
        "true"_b);
    const auto report = idem::verifyChain(*m_owner, schema);
    QVERIFY2(report.ok(), report.detail.c_str());
}

// runTask reports Paused without running the body; the library counts each turned-away claim
// once, and idem_pause_list shows the count for the scope that turned it away.
void TestPause::runnerAndCountersReportPaused()
{
    pqxx::nontransaction(*m_owner).exec("DELETE FROM idem.idem_counters WHERE outcome = 'paused'");
    pause("acme", "invoice", "ERP maintenance");
    auto conn = m_db->connect();
    idem::OutcomeCounters counters;
    idem::TaskStore store(*conn, storeOptions(30s), &counters);
    int ran = 0;
    for (int i = 0; i < 7; ++i) {
        const auto out = idem::runTask(store, key("acme", "invoice"), digestOf('a'), [&](pqxx::work&, const idem::TaskContext&) {
            ++ran;
            return std::string("{}");
        });
        QCOMPARE(idem::runOutcomeName(out.kind), "paused");
        QCOMPARE(out.error, std::string("paused (acme:invoice): ERP maintenance"));
    }
    QCOMPARE(ran, 0);
    counters.flush(*conn, schema);
    QCOMPARE(number(*m_owner, "SELECT sum(n) FROM idem.idem_counters WHERE outcome = 'paused'"
                              " AND tenant = 'acme' AND operation = 'invoice'"),
        7);
    const auto list = idem::listPauses(*m_operator, schema, 5);
    QCOMPARE(list.pauses.size(), std::size_t(1));
    QCOMPARE(list.pauses[0].turnedAway, 7);
    QVERIFY(list.pauses[0].seen);
    // A pause of names no traffic has used: allowed, and listed as matching nothing yet.
    pause("no-such-tenant", "*", "ahead of onboarding");
    const auto two = idem::listPauses(*m_operator, schema, 5);
    QCOMPARE(two.pauses.size(), std::size_t(2));
    const auto& ahead = two.pauses[0].tenant == "no-such-tenant" ? two.pauses[0] : two.pauses[1];
    QVERIFY(!ahead.seen);
    QCOMPARE(ahead.turnedAway, 0);
    // Traffic of the scope that was not turned away: seen, nothing turned away; outside the
    // window: not seen.
    pqxx::nontransaction(*m_owner).exec(
        "INSERT INTO idem.idem_counters (bucket, tenant, operation, outcome, n) VALUES"
        " (date_trunc('minute', now()), 'quiet', 'x', 'acquired', 3),"
        " (date_trunc('minute', now()) - interval '10 minutes', 'old', 'x', 'paused', 4)");
    pause("quiet", "*", "quiet tenant");
    pause("old", "x", "old traffic only");
    for (const auto& p : idem::listPauses(*m_operator, schema, 5).pauses) {
        if (p.tenant == "quiet") {
            QVERIFY(p.seen);
            QCOMPARE(p.turnedAway, 0);
        }
        if (p.tenant == "old") {
            QVERIFY(!p.seen);
            QCOMPARE(p.turnedAway, 0);
        }
    }
    const auto wide = idem::listPauses(*m_operator, schema, 15);
    const auto old = std::find_if(wide.pauses.begin(), wide.pauses.end(), [](const auto& p) { return p.tenant == "old"; });
    QVERIFY(old != wide.pauses.end() && old->seen);
    QCOMPARE(old->turnedAway, 4);
}

void TestPause::badArgumentsChangeNothing_data()
{
    QTest::addColumn<QString>("sql");
    QTest::addColumn<QString>("sqlstate");
    const auto p = [](const char* args) { return QStringLiteral("SELECT * FROM idem.idem_pause(%1)").arg(QLatin1String(args)); };
    QTest::newRow("NULL tenant") << p("NULL, 'x', 'r'") << "ID003";
    QTest::newRow("NULL operation") << p("'x', NULL, 'r'") << "ID003";
    QTest::newRow("NULL reason") << p("'x', 'y', NULL") << "ID003";
    QTest::newRow("blank reason") << p("'x', 'y', E' \\u200B\\t'") << "ID003";
    QTest::newRow("tenant with colon") << p("'a:b', 'y', 'r'") << "ID003";
    QTest::newRow("empty tenant") << p("'', 'y', 'r'") << "ID003";
    QTest::newRow("65-byte operation") << p("'x', repeat('o', 65), 'r'") << "ID003";
    QTest::newRow("space in operation") << p("'x', 'a b', 'r'") << "ID003";
    QTest::newRow("end in the past") << p("'x', 'y', 'r', 'me', NULL, now() - interval '1 second'") << "ID003";
    QTest::newRow("end now") << p("'x', 'y', 'r', 'me', NULL, now()") << "ID003";
    QTest::newRow("end in 400 days") << p("'x', 'y', 'r', 'me', NULL, now() + interval '400 days'") << "ID003";
    QTest::newRow("length 0") << p("'x', 'y', 'r', 'me', 0") << "ID003";
    QTest::newRow("negative length") << p("'x', 'y', 'r', 'me', -5000") << "ID003";
    QTest::newRow("length of 999 ms") << p("'x', 'y', 'r', 'me', 999") << "ID003";
    QTest::newRow("huge length") << p("'x', 'y', 'r', 'me', 9223372036854775807") << "ID003";
    QTest::newRow("length and end") << p("'x', 'y', 'r', 'me', 60000, now() + interval '1 hour'") << "ID003";
    QTest::newRow("reason of 16385 characters") << p("'x', 'y', repeat('r', 16385)") << "ID003";
    QTest::newRow("resume none") << QStringLiteral("SELECT * FROM idem.idem_resume('x', 'y', 'r')") << "ID002";
    QTest::newRow("resume NULL tenant") << QStringLiteral("SELECT * FROM idem.idem_resume(NULL, 'y', 'r')") << "ID003";
    QTest::newRow("resume NULL reason") << QStringLiteral("SELECT * FROM idem.idem_resume('x', 'y', NULL)") << "ID003";
    QTest::newRow("list NULL minutes") << QStringLiteral("SELECT * FROM idem.idem_pause_list(NULL)") << "ID003";
    QTest::newRow("list 0 minutes") << QStringLiteral("SELECT * FROM idem.idem_pause_list(0)") << "ID003";
    QTest::newRow("list 1441 minutes") << QStringLiteral("SELECT * FROM idem.idem_pause_list(1441)") << "ID003";
}

// Each refused whole with a clear SQLSTATE; no pause and no audit entry is written.
void TestPause::badArgumentsChangeNothing()
{
    QFETCH(QString, sql);
    QFETCH(QString, sqlstate);
    const auto before = state();
    QCOMPARE(QString::fromStdString(sqlstateOf(*m_operator, sql.toStdString())), sqlstate);
    QCOMPARE(state(), before);
    // The same through the library: refused before any I/O where the client can tell.
    idem::PauseRequest r;
    r.tenant = "x";
    r.operation = "y";
    r.reason = " ";
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, idem::validatePauseRequest(r));
}

// At most 10,000 pauses: the 10,001st is refused with a clear error, changing an existing one
// still works, and claim() answers correctly (and quickly) with the table full.
void TestPause::tenThousandPausesAtMost()
{
    pqxx::nontransaction(*m_owner).exec(
        "INSERT INTO idem.idem_pauses (tenant, operation, reason, paused_by, paused_at, changed_at, until, audit_id)"
        " SELECT 'bulk-' || i, 'op', 'bulk', 'test', now(), now(), NULL, 0 FROM generate_series(1, 9999) i");
    pause("bulk-x", "op", "the 10,000th");
    const auto before = state();
    try {
        pause("bulk-y", "op", "one too many");
        QFAIL("the 10,001st pause was accepted");
    } catch (const pqxx::sql_error& e) {
        QCOMPARE(e.sqlstate(), std::string("ID004")); // the arguments are fine: the table is full
        QVERIFY2(std::string(e.what()).find("10000 pauses already") != std::string::npos, e.what());
    }
    QCOMPARE(state(), before);
    QVERIFY(pause("bulk-7", "op", "changed, not added").wasPaused);
    auto conn = m_db->connect();
    idem::TaskStore store(*conn, storeOptions(30s));
    QCOMPARE(idem::decisionName(store.claim(key("bulk-42", "op"), digestOf('a')).decision), "paused");
    QCOMPARE(idem::decisionName(store.claim(key("bulk-42", "other"), digestOf('a')).decision), "acquired");
    QCOMPARE(idem::listPauses(*m_operator, schema).pauses.size(), std::size_t(10000));
}

// claim() reads idem_pause_tenants first: pauses set at the same moment from two sessions, and
// each resume, leave it naming exactly the scopes idem_pauses holds, and claims follow.
void TestPause::summaryFollowsEveryChange()
{
    const auto summary = [&] {
        return scalar(*m_owner, "SELECT COALESCE(string_agg(tenant || '=' || array_to_string(operations, ','), ';'"
                                " ORDER BY tenant), '') FROM idem.idem_pause_tenants WHERE tenant LIKE 'sum%'");
    };
    std::vector<std::thread> threads;
    std::barrier start(8);
    std::atomic<int> failures { 0 };
    for (int i = 0; i < 8; ++i)
        threads.emplace_back([&, i] {
            auto c = login(operatorRole);
            idem::PauseRequest r;
            r.tenant = "sum";
            r.operation = "op" + std::to_string(i);
            r.reason = "concurrent";
            start.arrive_and_wait();
            try {
                idem::setPause(*c, schema, r);
            } catch (const std::exception&) {
                ++failures;
            }
        });
    for (auto& t : threads)
        t.join();
    QCOMPARE(failures.load(), 0);
    QCOMPARE(summary(), "sum=op0,op1,op2,op3,op4,op5,op6,op7"_b);
    auto conn = m_db->connect();
    idem::TaskStore store(*conn, storeOptions(30s));
    for (int i = 0; i < 8; ++i)
        QCOMPARE(idem::decisionName(store.claim(key("sum", "op" + std::to_string(i)), digestOf('a')).decision), "paused");
    resume("sum", "op3");
    QCOMPARE(summary(), "sum=op0,op1,op2,op4,op5,op6,op7"_b);
    QCOMPARE(idem::decisionName(store.claim(key("sum", "op3"), digestOf('a')).decision), "acquired");
    QCOMPARE(idem::decisionName(store.claim(key("sum", "op4"), digestOf('a')).decision), "paused");
    for (int i : { 0, 1, 2, 4, 5, 6, 7 })
        resume("sum", "op" + std::to_string(i));
    QCOMPARE(summary(), ""_b);
    QCOMPARE(idem::decisionName(store.claim(key("sum", "op4"), digestOf('a')).decision), "acquired");
}

// A pause committed while claims of its scope are in flight, held at two known points by an
// owner's open transaction and seen waiting on it (pg_blocking_pids) before and after the pause
// commits, then let go (issue 44 item 8: the race made visible, not left to timing).
// - Held before the pause check (the owner holds task_idempotency's ACCESS EXCLUSIVE lock, so each
//   claim waits at its first read): every one of them is told 'paused' and writes nothing.
// - Held past the check (the owner inserted the key and has not committed, so each claim waits in
//   its INSERT): as the operator's guide says, a claim already past the check when the pause
//   committed may still acquire: exactly one does (the others find its row in progress).
// A claim that starts after the pause committed is turned away.
void TestPause::pauseRacingAClaimRace()
{
    constexpr int clients = 8;
    std::vector<std::unique_ptr<pqxx::connection>> conns;
    for (int i = 0; i < clients; ++i)
        conns.push_back(m_db->connect());
    auto holder = m_db->connect();
    const auto holderPid = std::to_string(number(*holder, "SELECT pg_backend_pid()"));
    const auto waitingOnHolder = [&] {
        return number(*m_owner, "SELECT count(*) FROM pg_stat_activity WHERE " + holderPid + " = ANY(pg_blocking_pids(pid))");
    };
    // Every client claims k once, at the same moment; their decisions, in no order.
    const auto claimAll = [&](const idem::TaskKey& k, std::vector<std::thread>& threads,
                              std::vector<idem::Decision>& decisions) {
        decisions.assign(clients, idem::Decision::Conflict);
        for (int i = 0; i < clients; ++i)
            threads.emplace_back([&, i] {
                try {
                    idem::TaskStore store(*conns[i], storeOptions(30s));
                    decisions[i] = store.claim(k, digestOf('a')).decision;
                } catch (const std::exception&) {
                    // left as Conflict, which no count below expects
                }
            });
    };
    const auto count = [](const std::vector<idem::Decision>& decisions, idem::Decision d) {
        return static_cast<int>(std::count(decisions.begin(), decisions.end(), d));
    };
    // Waits (bounded) until every client waits on the holder, commits the pause, and says how many
    // still wait then (-1: they never all waited); lets them go in any case.
    const auto pauseWhileHeld = [&](pqxx::work& hold, std::vector<std::thread>& threads, const std::string& tenant) {
        std::int64_t stillWaiting = -1;
        if (QTest::qWaitFor([&] { return waitingOnHolder() == clients; }, 20000)) {
            pause(tenant, "*", "racing");
            stillWaiting = waitingOnHolder();
        }
        hold.abort();
        for (auto& t : threads)
            t.join();
        return stillWaiting;
    };
    const auto rowsOf = [&](const idem::TaskKey& k) {
        return number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key = '" + k.str() + "'");
    };

    // Held before the check.
    {
        const auto k = key("race-early", "charge");
        pqxx::work hold(*holder);
        hold.exec("LOCK TABLE idem.task_idempotency IN ACCESS EXCLUSIVE MODE");
        std::vector<std::thread> threads;
        std::vector<idem::Decision> decisions;
        claimAll(k, threads, decisions);
        // Every claim waited on the holder before the pause committed, and still did after it.
        QCOMPARE(pauseWhileHeld(hold, threads, "race-early"), std::int64_t(clients));
        QCOMPARE(count(decisions, idem::Decision::Paused), clients);
        QCOMPARE(rowsOf(k), std::int64_t(0));
    }

    // Held past the check: nothing of this tenant is paused when they pass it.
    {
        deleteAllPauses();
        const auto k = key("race-late", "charge");
        pqxx::work hold(*holder);
        hold.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status)"
                         " VALUES ($1, 'v1:held', 'processing')",
            k.str());
        std::vector<std::thread> threads;
        std::vector<idem::Decision> decisions;
        claimAll(k, threads, decisions);
        // Every claim waited on the holder before the pause committed, and still did after it.
        QCOMPARE(pauseWhileHeld(hold, threads, "race-late"), std::int64_t(clients));
        QCOMPARE(count(decisions, idem::Decision::Acquired), 1);
        QCOMPARE(count(decisions, idem::Decision::InProgress), clients - 1);
        QCOMPARE(rowsOf(k), std::int64_t(1));
        QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.idem_pauses"), 1);

        // After the pause, a new key of the tenant is turned away, from every connection.
        const auto next = key("race-late", "charge");
        for (auto& c : conns) {
            idem::TaskStore store(*c, storeOptions(30s));
            QCOMPARE(idem::decisionName(store.claim(next, digestOf('a')).decision), "paused");
        }
        QCOMPARE(rowsOf(next), std::int64_t(0));
    }
}

// Issue 40 item 7: a claim in a REPEATABLE READ (or SERIALIZABLE) transaction whose snapshot was
// taken before a pause read the pause with that old snapshot and acquired the key. Every claim
// outside READ COMMITTED is refused (ID003, saying why) and writes nothing; a READ COMMITTED
// transaction begun before the pause is told 'paused'.
void TestPause::claimOutsideReadCommittedIsRefused()
{
    auto worker = login(workerRole);
    for (const char* level : { "REPEATABLE READ", "SERIALIZABLE" }) {
        const auto k = key("rr", "charge");
        pqxx::nontransaction tx(*worker);
        tx.exec(std::string("BEGIN ISOLATION LEVEL ") + level);
        tx.exec("SELECT count(*) FROM pg_class"); // the transaction's snapshot, before the pause
        pause("rr", "*", "snapshot test");
        std::string state, message;
        try {
            tx.exec_params("SELECT decision FROM idem.claim($1, $2, gen_random_uuid(), 30000)", k.str(), digestOf('a'));
        } catch (const pqxx::sql_error& e) {
            state = e.sqlstate();
            message = e.what();
        }
        tx.exec("ROLLBACK");
        QCOMPARE(state, std::string("ID003"));
        QVERIFY2(message.find("claim runs at READ COMMITTED, not " + std::string(level)) != std::string::npos,
            message.c_str());
        QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key = '" + k.str() + "'"),
            0);
        // Even as the transaction's first statement (its snapshot is as new as the claim): the rule
        // is the level, which a client can check before it claims.
        tx.exec(std::string("BEGIN ISOLATION LEVEL ") + level);
        state.clear();
        try {
            tx.exec("SELECT decision FROM idem.claim('rr:refund:x', 'v1:a', gen_random_uuid(), 30000)");
        } catch (const pqxx::sql_error& e) {
            state = e.sqlstate();
        }
        tx.exec("ROLLBACK");
        QCOMPARE(state, std::string("ID003"));
        resume("rr", "*");
    }
    // READ COMMITTED, begun before the pause: each statement sees what committed before it.
    const auto k = key("rr", "charge");
    {
        pqxx::work tx(*worker);
        tx.exec("SELECT count(*) FROM pg_class");
        pause("rr", "*", "snapshot test");
        QCOMPARE(tx.exec_params1("SELECT decision FROM idem.claim($1, $2, gen_random_uuid(), 30000)", k.str(),
                       digestOf('a'))[0]
                     .as<std::string>(),
            std::string("paused"));
        tx.commit();
    }
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key = '" + k.str() + "'"), 0);
    // The library claims on its own (the default level): told 'paused' as before.
    idem::TaskStore store(*worker, storeOptions(30s));
    QCOMPARE(idem::decisionName(store.claim(k, digestOf('a')).decision), "paused");
}

// The view idem_pauses_none exists exactly while idem_pauses has no row, and claim() skips the
// pause tables only while it does: a connection that has claimed with the view in its catalog
// cache is turned away by a pause set from another, a pause past its end keeps the view away (it
// is still a row) yet pauses nothing, and the last resume brings the view back.
void TestPause::catalogSignalFollowsPauses()
{
    auto worker = login(workerRole);
    idem::TaskStore store(*worker, storeOptions(30s));
    QCOMPARE(idem::decisionName(store.claim(key("sig", "charge"), digestOf('a')).decision), "acquired");
    pause("sig", "charge", "signal");
    QVERIFY(!signalPresent());
    QCOMPARE(idem::decisionName(store.claim(key("sig", "charge"), digestOf('a')).decision), "paused");
    QCOMPARE(idem::decisionName(store.claim(key("sig", "refund"), digestOf('a')).decision), "acquired");
    pause("sig", "refund", "signal", 1000);
    resume("sig", "charge");
    QVERIFY(!signalPresent());
    pqxx::nontransaction(*m_owner).exec("SELECT pg_sleep(1.2)");
    QCOMPARE(idem::decisionName(store.claim(key("sig", "refund"), digestOf('a')).decision), "acquired");
    QVERIFY(!signalPresent());
    resume("sig", "refund");
    QVERIFY(signalPresent());
    QCOMPARE(idem::decisionName(store.claim(key("sig", "charge"), digestOf('a')).decision), "acquired");

    // Written by hand and summarised, as the owner must: the view goes with the first row.
    {
        pqxx::work w(*m_owner);
        w.exec("INSERT INTO idem.idem_pauses (tenant, operation, reason, paused_by, paused_at, changed_at, until,"
               " audit_id) VALUES ('sig', '*', 'by hand', 'owner', now(), now(), NULL, 0)");
        w.exec("SELECT idem.idem_pause_summarise()");
        w.commit();
    }
    QVERIFY(!signalPresent());
    QCOMPARE(idem::decisionName(store.claim(key("sig", "any"), digestOf('a')).decision), "paused");
    // Summarising again changes nothing: no catalog write when the state did not change.
    const auto views = [&] { return scalar(*m_owner, "SELECT count(*) FROM pg_class WHERE relname = 'idem_pauses_none'"); };
    pqxx::nontransaction(*m_owner).exec("SELECT idem.idem_pause_summarise()");
    QCOMPARE(views(), "0"_b);
    deleteAllPauses();
    const auto oid = scalar(*m_owner, "SELECT 'idem.idem_pauses_none'::regclass::oid");
    pqxx::nontransaction(*m_owner).exec("SELECT idem.idem_pause_summarise()");
    QCOMPARE(scalar(*m_owner, "SELECT 'idem.idem_pauses_none'::regclass::oid"), oid);
    QCOMPARE(views(), "1"_b);
}

// With pauses on some operations only, a claim of another operation asks the catalog alone
// (v18): one view per paused operation, trusted while idem_pauses_by_operation exists. The
// oracle is the server's own count of reads of the pause summary in the claim's transaction.
// A pause on every operation ('*'), more than 256 paused operations, or a name too long for a
// view, and every claim reads the summary again, and still answers right.
void TestPause::otherOperationsReadNoPauseTable()
{
    using Claimed = std::pair<std::string, std::int64_t>;
    auto worker = login(workerRole);
    pause("ops", "charge", "gateway down");
    pause("*", "refund", "partner down");
    QVERIFY(byOperation());
    QCOMPARE(operationViews(), "charge,refund"_b);
    QCOMPARE(claimAndReads(*worker, key("ops", "ship")), Claimed("acquired", 0));
    QCOMPARE(claimAndReads(*worker, key("ops", "charge")).first, "paused");
    QVERIFY(claimAndReads(*worker, key("ops", "charge")).second > 0);
    QCOMPARE(claimAndReads(*worker, key("other", "refund")).first, "paused");
    // The operation's view sends the claim to the tables, which answer for the tenant.
    const auto otherTenant = claimAndReads(*worker, key("other", "charge"));
    QCOMPARE(otherTenant.first, "acquired");
    QVERIFY(otherTenant.second > 0);
    // A takeover asks the same question.
    const auto expired = key("ops", "ship");
    {
        pqxx::work w(*m_owner);
        w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until,"
                      " attempts, max_attempts, created_at, updated_at) VALUES ($1, $2, 'processing', gen_random_uuid(),"
                      " now() - interval '1 minute', 1, 5, now(), now())",
            expired.str(), digestOf('a'));
        w.commit();
    }
    QCOMPARE(claimAndReads(*worker, expired), Claimed("reacquired", 0));

    // A pause of every operation of a tenant: no operation can be ruled out by name.
    pause("ops", "*", "everything for ops");
    QVERIFY(!byOperation());
    QCOMPARE(operationViews(), ""_b);
    const auto all = claimAndReads(*worker, key("ops", "ship"));
    QCOMPARE(all.first, "paused");
    QVERIFY(all.second > 0);
    const auto elsewhere = claimAndReads(*worker, key("other", "ship"));
    QCOMPARE(elsewhere.first, "acquired");
    QVERIFY(elsewhere.second > 0);
    resume("ops", "*");
    QVERIFY(byOperation());
    QCOMPARE(operationViews(), "charge,refund"_b);
    QCOMPARE(claimAndReads(*worker, key("ops", "ship")), Claimed("acquired", 0));

    // An operation whose view name would not fit 63 bytes.
    const std::string longOperation(52, 'l');
    pause("ops", longOperation, "long name");
    QVERIFY(!byOperation());
    QCOMPARE(claimAndReads(*worker, key("ops", longOperation)).first, "paused");
    QCOMPARE(claimAndReads(*worker, key("ops", "ship")).first, "acquired");
    resume("ops", longOperation);
    QVERIFY(byOperation());

    // 256 paused operations have their views; the 257th turns them all off.
    const auto viewCount = [&] {
        return number(*m_owner, "SELECT count(*) FROM pg_class WHERE relnamespace = 'idem'::regnamespace"
                                " AND relname LIKE 'idem\\_paused:%'");
    };
    {
        pqxx::work w(*m_owner);
        w.exec("INSERT INTO idem.idem_pauses (tenant, operation, reason, paused_by, paused_at, changed_at, until, audit_id)"
               " SELECT 'ops', 'bulk-' || i, 'bulk', 'test', now(), now(), NULL, 0 FROM generate_series(1, 254) i");
        w.exec("SELECT idem.idem_pause_summarise()");
        w.commit();
    }
    QVERIFY(byOperation());
    QCOMPARE(viewCount(), 256);
    QCOMPARE(claimAndReads(*worker, key("ops", "ship")), Claimed("acquired", 0));
    QCOMPARE(claimAndReads(*worker, key("ops", "bulk-200")).first, "paused");
    const auto oids = scalar(*m_owner, "SELECT string_agg(oid::text, ',' ORDER BY oid) FROM pg_class"
                                       " WHERE relname LIKE 'idem\\_paused:%' OR relname = 'idem_pauses_by_operation'");
    pqxx::nontransaction(*m_owner).exec("SELECT idem.idem_pause_summarise()");
    QCOMPARE(scalar(*m_owner, "SELECT string_agg(oid::text, ',' ORDER BY oid) FROM pg_class"
                              " WHERE relname LIKE 'idem\\_paused:%' OR relname = 'idem_pauses_by_operation'"),
        oids);
    pause("ops", "bulk-255", "the 257th operation");
    QVERIFY(!byOperation());
    QCOMPARE(viewCount(), 0);
    QCOMPARE(claimAndReads(*worker, key("ops", "bulk-255")).first, "paused");
    const auto many = claimAndReads(*worker, key("ops", "ship"));
    QCOMPARE(many.first, "acquired");
    QVERIFY(many.second > 0);

    deleteAllPauses();
    QVERIFY(signalPresent());
    QVERIFY(!byOperation());
    QCOMPARE(viewCount(), 0);
    QCOMPARE(claimAndReads(*worker, key("ops", "charge")), Claimed("acquired", 0));
}

// No role but the owner can make claim() skip a pause: a worker can neither create the view in
// the schema nor stand in for it with a temporary one (claim() names it with its schema), nor
// drop it to slow others down; a view missing while nothing is paused only costs the read.
void TestPause::signalCannotBeForged()
{
    pause("forge", "*", "forgery");
    auto worker = login(workerRole);
    QCOMPARE(sqlstateOf(*worker, "CREATE VIEW idem.idem_pauses_none AS SELECT"), std::string("42501"));
    pqxx::nontransaction(*worker).exec("CREATE TEMP VIEW idem_pauses_none AS SELECT");
    pqxx::nontransaction(*worker).exec("SET search_path = pg_temp, idem");
    idem::TaskStore store(*worker, storeOptions(30s));
    QCOMPARE(idem::decisionName(store.claim(key("forge", "charge"), digestOf('a')).decision), "paused");
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE 'forge:%'"), 0);
    resume("forge", "*");
    QVERIFY(signalPresent());
    QCOMPARE(sqlstateOf(*worker, "DROP VIEW idem.idem_pauses_none"), std::string("42501"));
    QVERIFY(signalPresent());

    // Nor the per-operation views (v18): creating one, or the view that makes them trusted, or
    // dropping one to make claims read the tables.
    pause("forge", "charge", "per operation");
    QVERIFY(byOperation());
    QCOMPARE(sqlstateOf(*worker, "CREATE VIEW idem.idem_pauses_by_operation_x AS SELECT"), std::string("42501"));
    QCOMPARE(sqlstateOf(*worker, "CREATE VIEW idem.\"idem_paused:refund\" AS SELECT"), std::string("42501"));
    QCOMPARE(sqlstateOf(*worker, "DROP VIEW idem.\"idem_paused:charge\""), std::string("42501"));
    QCOMPARE(sqlstateOf(*worker, "DROP VIEW idem.idem_pauses_by_operation"), std::string("42501"));
    pqxx::nontransaction(*worker).exec("CREATE TEMP VIEW idem_pauses_by_operation AS SELECT");
    QCOMPARE(idem::decisionName(store.claim(key("forge", "charge"), digestOf('a')).decision), "paused");
    // The trusting view missing (a database upgraded from v17 with pauses in force has none until
    // the next change): claims read the tables.
    pqxx::nontransaction(*m_owner).exec("DROP VIEW idem.idem_pauses_by_operation");
    QCOMPARE(idem::decisionName(store.claim(key("forge", "charge"), digestOf('a')).decision), "paused");
    QCOMPARE(idem::decisionName(store.claim(key("forge", "refund"), digestOf('a')).decision), "acquired");
    resume("forge", "charge");
    QVERIFY(signalPresent());

    // Missing with nothing paused (dropped by the owner): claims read the pause tables and acquire.
    pqxx::nontransaction(*m_owner).exec("DROP VIEW idem.idem_pauses_none");
    QCOMPARE(idem::decisionName(store.claim(key("forge", "charge"), digestOf('a')).decision), "acquired");
    pause("forge", "refund", "after the drop");
    QCOMPARE(idem::decisionName(store.claim(key("forge", "refund"), digestOf('a')).decision), "paused");
}

// A database at v15 had no view. Migrated to v16 with a pause in force it gets none, so claims
// keep reading the pause tables; with nothing paused it gets the view. (The state of v15 is made
// by taking v16's record and view away: the function files are the current ones either way.)
void TestPause::upgradeFromV15KeepsPausesInForce()
{
    const auto backToV15 = [&] {
        pqxx::work w(*m_owner);
        w.exec("DELETE FROM idem.idem_schema_version WHERE version = 16");
        w.exec("DROP VIEW IF EXISTS idem.idem_pauses_none");
        w.commit();
    };
    const auto toV16 = [&] { return idem::migrate(*m_owner, { idem::SchemaName(), false }).applied; };
    const std::vector<std::string> v16 { "0016_pause_signal.sql" };
    pause("upgrade", "*", "in force across the upgrade");
    backToV15();
    QCOMPARE(toV16(), v16);
    QVERIFY(!signalPresent());
    auto conn = m_db->connect();
    idem::TaskStore claims(*conn, storeOptions(30s));
    QCOMPARE(idem::decisionName(claims.claim(key("upgrade", "charge"), digestOf('a')).decision), "paused");
    resume("upgrade", "*");
    QVERIFY(signalPresent());
    QCOMPARE(idem::decisionName(claims.claim(key("upgrade", "charge"), digestOf('a')).decision), "acquired");

    backToV15();
    QVERIFY(!signalPresent());
    QCOMPARE(toV16(), v16);
    QVERIFY(signalPresent());
}

// Workers claim under pauses but cannot see, set or lift them; readers see them; operators set
// and lift them; a role outside Idem does nothing.
void TestPause::rolesAndPrivileges()
{
    pause("acme", "role", "for the roles test");
    const auto before = state();
    auto worker = login(workerRole);
    auto reader = login(readerRole);
    auto outsider = login(outsiderRole);
    const std::string setSql = "SELECT * FROM idem.idem_pause('acme', 'x', 'r', 'me')";
    const std::string liftSql = "SELECT * FROM idem.idem_resume('acme', 'role', 'r', 'me')";
    const std::string write = "UPDATE idem.idem_pauses SET until = now() + interval '1 second'";
    const std::string del = "DELETE FROM idem.idem_pauses";
    for (auto* c : { worker.get(), reader.get(), outsider.get() }) {
        QCOMPARE(sqlstateOf(*c, setSql), std::string("42501"));
        QCOMPARE(sqlstateOf(*c, liftSql), std::string("42501"));
        QCOMPARE(sqlstateOf(*c, write), std::string("42501"));
        QCOMPARE(sqlstateOf(*c, del), std::string("42501"));
        QCOMPARE(sqlstateOf(*c, "INSERT INTO idem.idem_pauses VALUES ('z', 'z', 'r', 'me', now(), now(), NULL, 0)"),
            std::string("42501"));
    }
    QCOMPARE(sqlstateOf(*m_operator, write), std::string("42501"));
    QCOMPARE(sqlstateOf(*m_operator, del), std::string("42501"));
    QCOMPARE(sqlstateOf(*worker, "SELECT * FROM idem.idem_pauses"), std::string("42501"));
    QCOMPARE(sqlstateOf(*worker, "SELECT * FROM idem.idem_pause_list(15)"), std::string("42501"));
    QCOMPARE(sqlstateOf(*outsider, "SELECT * FROM idem.idem_pause_list(15)"), std::string("42501"));
    QCOMPARE(sqlstateOf(*reader, "SELECT * FROM idem.idem_pause_list(15)"), std::string("ok"));
    QCOMPARE(sqlstateOf(*reader, "SELECT * FROM idem.idem_pauses"), std::string("ok"));
    QCOMPARE(state(), before);

    // The worker role's claim honours the pause it cannot read.
    idem::TaskStore store(*worker, storeOptions(30s));
    const auto r = store.claim(key("acme", "role"), digestOf('a'));
    QCOMPARE(idem::decisionName(r.decision), "paused");
    QCOMPARE(r.errorMessage, std::string("for the roles test"));
    // A reader's claim is refused as before (the worker role's function).
    QCOMPARE(sqlstateOf(*outsider, "SELECT * FROM idem.claim('acme:role:1', 'v1:' || repeat('a', 64),"
                                   " gen_random_uuid(), 30000, 5, NULL)"),
        std::string("42501"));
}

// The command line: pause, list (text and JSON), resume, each exit code, and a refusal that
// changes nothing.
void TestPause::idemctlPauseResumeAndPauses()
{
    const auto set = idemctl(operatorRole,
        { QStringLiteral("pause"), QStringLiteral("--operation"), QStringLiteral("charge"), QStringLiteral("--reason"),
            QStringLiteral("payment gateway down (INC-42)"), QStringLiteral("--for"), QStringLiteral("15m"),
            QStringLiteral("--json") });
    QVERIFY2(set.exitCode == 0, qPrintable(idem::test::describe(set)));
    const auto setJson = json(set);
    QCOMPARE(setJson[QStringLiteral("pause")][QStringLiteral("tenant")].toString(), QStringLiteral("*"));
    QCOMPARE(setJson[QStringLiteral("pause")][QStringLiteral("reason")].toString(),
        QStringLiteral("payment gateway down (INC-42)"));
    const auto remaining = setJson[QStringLiteral("pause")][QStringLiteral("remaining_ms")].toInteger();
    QVERIFY2(remaining > 14 * 60000 && remaining <= 15 * 60000, qPrintable(QString::number(remaining)));
    QCOMPARE(scalar(*m_owner, "SELECT tenant || ':' || operation || ' ' || (until - changed_at)::text"
                              " FROM idem.idem_pauses"),
        "*:charge 00:15:00"_b);

    const auto list = idemctl(readerRole, { QStringLiteral("pauses"), QStringLiteral("--json") });
    QVERIFY2(list.exitCode == 0, qPrintable(idem::test::describe(list)));
    const auto pauses = json(list)[QStringLiteral("pauses")].toArray();
    QCOMPARE(pauses.size(), 1);
    QCOMPARE(pauses[0][QStringLiteral("operation")].toString(), QStringLiteral("charge"));
    QVERIFY(pauses[0][QStringLiteral("active")].toBool());
    const auto text = idemctl(readerRole, { QStringLiteral("pauses") });
    QVERIFY2(text.exitCode == 0 && text.out.contains(QStringLiteral("*:charge"))
            && text.out.contains(QStringLiteral("payment gateway down (INC-42)")),
        qPrintable(idem::test::describe(text)));

    // A reader may not pause (exit 3, nothing changed); neither scope option is a usage error;
    // an end in the past by the server's clock is refused by the server.
    const auto before = state();
    const auto denied = idemctl(readerRole, { QStringLiteral("pause"), QStringLiteral("--tenant"),
                                                QStringLiteral("acme"), QStringLiteral("--reason"), QStringLiteral("x") });
    QCOMPARE(denied.exitCode, 3);
    const auto noScope = idemctl(operatorRole, { QStringLiteral("pause"), QStringLiteral("--reason"), QStringLiteral("x") });
    QCOMPARE(noScope.exitCode, 2);
    const auto past = idemctl(operatorRole,
        { QStringLiteral("pause"), QStringLiteral("--tenant"), QStringLiteral("acme"), QStringLiteral("--reason"),
            QStringLiteral("x"), QStringLiteral("--until"), QStringLiteral("2001-01-01 00:00+00") });
    QCOMPARE(past.exitCode, 3);
    QVERIFY2(past.err.contains(QStringLiteral("in the past")), qPrintable(idem::test::describe(past)));
    const auto badLength = idemctl(operatorRole, { QStringLiteral("pause"), QStringLiteral("--tenant"),
                                                   QStringLiteral("acme"), QStringLiteral("--reason"),
                                                   QStringLiteral("x"), QStringLiteral("--for"), QStringLiteral("400d") });
    QCOMPARE(badLength.exitCode, 2);
    QCOMPARE(state(), before);

    const auto lifted = idemctl(operatorRole, { QStringLiteral("resume"), QStringLiteral("--operation"),
                                                  QStringLiteral("charge"), QStringLiteral("--reason"),
                                                  QStringLiteral("gateway back"), QStringLiteral("--json") });
    QVERIFY2(lifted.exitCode == 0, qPrintable(idem::test::describe(lifted)));
    QVERIFY(json(lifted)[QStringLiteral("was_active")].toBool());
    QCOMPARE(number(*m_owner, "SELECT count(*) FROM idem.idem_pauses"), 0);
    const auto again = idemctl(operatorRole, { QStringLiteral("resume"), QStringLiteral("--operation"),
                                                 QStringLiteral("charge"), QStringLiteral("--reason"), QStringLiteral("x") });
    QCOMPARE(again.exitCode, 3);
    QVERIFY2(again.err.contains(QStringLiteral("no pause")), qPrintable(idem::test::describe(again)));
    const auto audit = idemctl(readerRole, { QStringLiteral("audit"), QStringLiteral("list"), QStringLiteral("--action"),
                                               QStringLiteral("resume"), QStringLiteral("--limit"), QStringLiteral("1") });
    QVERIFY2(audit.exitCode == 0 && audit.out.contains(QStringLiteral("*:charge")),
        qPrintable(idem::test::describe(audit)));

    // The lifted pause is history (issue 41 item 11): not in the plain list, in --history with
    // who paused it and why, who resumed it and why, text and JSON.
    const auto plain = idemctl(readerRole, { QStringLiteral("pauses") });
    QVERIFY2(plain.exitCode == 0 && !plain.out.contains(QStringLiteral("gateway back")), qPrintable(plain.out));
    const auto history = idemctl(readerRole,
        { QStringLiteral("pauses"), QStringLiteral("--history"), QStringLiteral("24"), QStringLiteral("--json") });
    QVERIFY2(history.exitCode == 0, qPrintable(idem::test::describe(history)));
    const auto ended = json(history)[QStringLiteral("ended")].toArray();
    QCOMPARE(qint64(ended.size()),
        qint64(number(*m_owner,
            "SELECT count(*) FROM idem.task_idempotency_audit WHERE action = 'resume'"
            " AND at >= now() - interval '24 hours'")));
    const auto newest = ended.at(0).toObject();
    QCOMPARE(newest[QStringLiteral("tenant")].toString(), QStringLiteral("*"));
    QCOMPARE(newest[QStringLiteral("operation")].toString(), QStringLiteral("charge"));
    QCOMPARE(newest[QStringLiteral("reason")].toString(), QStringLiteral("payment gateway down (INC-42)"));
    QCOMPARE(newest[QStringLiteral("resume_reason")].toString(), QStringLiteral("gateway back"));
    QVERIFY2(newest[QStringLiteral("resumed_by")].toString().startsWith(QLatin1String(operatorRole)),
        qPrintable(newest[QStringLiteral("resumed_by")].toString()));
    QVERIFY(newest[QStringLiteral("paused_by")].toString().contains(QLatin1String(operatorRole)));
    QCOMPARE(newest[QStringLiteral("resume_audit_id")].toInteger(),
        qint64(number(*m_owner, "SELECT max(id) FROM idem.task_idempotency_audit WHERE action = 'resume'")));
    QVERIFY(!newest[QStringLiteral("until")].isNull()); // it had an end: 15 min
    const auto historyText
        = idemctl(readerRole, { QStringLiteral("pauses"), QStringLiteral("--history"), QStringLiteral("24") });
    QVERIFY2(historyText.exitCode == 0 && historyText.out.contains(QStringLiteral("lifted in the last 24 h"))
            && historyText.out.contains(QStringLiteral("*:charge"))
            && historyText.out.contains(QStringLiteral("payment gateway down (INC-42)"))
            && historyText.out.contains(QStringLiteral("gateway back")),
        qPrintable(historyText.out));
    const auto badHours
        = idemctl(readerRole, { QStringLiteral("pauses"), QStringLiteral("--history"), QStringLiteral("0") });
    QCOMPARE(badHours.exitCode, 2);
}

QTEST_GUILESS_MAIN(TestPause)
#include "tst_pause.moc"
