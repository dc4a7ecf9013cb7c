#include <QtTest>

#include <QUuid>

#include <chrono>
#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/runner.h"
#include "operations/actions.h"
#include "operations/audit.h"
#include "tests/db/tst_actions_fixture.h"

using namespace std::chrono_literals;
using idem::test::operator""_b;
using idem::test::bytes;
using idem::test::scalar;

namespace {
// Cluster-wide login roles of this program (names distinct from other test programs').
constexpr const char* operatorLogin = "idem_t_alk_op";
constexpr const char* readerLogin = "idem_t_alk_rd";
constexpr const char* workerLogin = "idem_t_alk_wk";
constexpr const char* plainLogin = "idem_t_alk_plain"; // no Idem role at all

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
} // namespace

// Audit appends serialise on a lock only Idem's own functions can take (the head row of
// task_idempotency_audit_head), so no other role can hold up the recovery actions; and when an
// action does wait, it says for what: the task's row (its executor) or the audit trail (another
// action that has not committed).
class TestAuditLock : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void locksOthersCanHoldDoNotBlock();
    void othersCannotLockTheTrail_data();
    void othersCannotLockTheTrail();
    void nobodyHasAPrivilegeOnTheHead();
    void waitForTheTrailIsNamed();
    void waitForTheRowIsNamed();
    void trailFromBeforeTheUpgradeVerifies();

private:
    std::unique_ptr<pqxx::connection> as(const char* login) const;

    idem::test::ActionsFixture m_fx;
    std::string m_password;
};

void TestAuditLock::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_fx.open("auditlock");
    auto c = m_fx.db->connect();
    idem::migrate(*c, { idem::SchemaName() }); // again, now with roles and grants
    m_password = QUuid::createUuid().toString(QUuid::WithoutBraces).toStdString();
    idem::test::createLoginRole(operatorLogin, m_password, "idem_operator");
    idem::test::createLoginRole(readerLogin, m_password, "idem_reader");
    idem::test::createLoginRole(workerLogin, m_password, "idem_worker");
    idem::test::createLoginRole(plainLogin, m_password, "");
    // As if the Idem tables lived in a schema everyone may use (public, adopted): then only the
    // table's own privileges stand between this role and its locks.
    pqxx::work w(*c);
    w.exec(std::string("GRANT USAGE ON SCHEMA idem TO ") + plainLogin);
    w.commit();
}

void TestAuditLock::cleanupTestCase() { m_fx.close(); }

std::unique_ptr<pqxx::connection> TestAuditLock::as(const char* login) const
{
    return idem::connect(
        idem::test::loginDsn(m_fx.db->dsn(), login, m_password));
}

// Issue #12 item 5: appends used to serialise on an advisory lock any login role could take.
// Now neither that lock nor the strongest ones a reader can take on the tables hold it up.
void TestAuditLock::locksOthersCanHoldDoNotBlock()
{
    const std::string key = m_fx.nextKey("held");
    const auto seen = m_fx.plant(key, "failed", 5, 5, "retryable");
    const auto auditBefore = m_fx.auditCount();

    auto plain = as(plainLogin);
    // The lock the appends used to take, held for the session (outlives any transaction).
    scalar(*plain, "SELECT pg_advisory_lock(hashtext('idem.audit'), hashtext('idem'))::text");
    auto reader = as(readerLogin);
    pqxx::work readerTx(*reader);
    readerTx.exec("LOCK TABLE idem.task_idempotency_audit IN ACCESS SHARE MODE");
    readerTx.exec("LOCK TABLE idem.task_idempotency IN ACCESS SHARE MODE");
    readerTx.exec("SELECT * FROM idem.task_idempotency_audit");

    auto op = as(operatorLogin);
    auto o = m_fx.options("others hold what they can");
    o.lockTimeoutMs = 500;
    const auto res = idem::applyAction(*op, idem::SchemaName(), idem::RecoveryAction::Requeue, seen, o);
    QVERIFY2(res.outcome == idem::ActionOutcome::Applied, res.message.c_str());
    QCOMPARE(m_fx.auditCount(), auditBefore + 1);
    QCOMPARE(m_fx.f(key, "status"), "retryable_failed"_b);
    readerTx.abort();
    const auto chain = idem::verifyChain(*m_fx.admin, idem::SchemaName());
    QVERIFY2(chain.ok(), chain.detail.c_str());
}

void TestAuditLock::othersCannotLockTheTrail_data()
{
    QTest::addColumn<QString>("login");
    QTest::addColumn<QString>("sql");
    const char* statements[] = {
        "SELECT 1 FROM idem.task_idempotency_audit_head FOR UPDATE",
        "SELECT 1 FROM idem.task_idempotency_audit_head FOR KEY SHARE",
        "SELECT 1 FROM idem.task_idempotency_audit_head",
        "LOCK TABLE idem.task_idempotency_audit_head IN ACCESS SHARE MODE",
        "LOCK TABLE idem.task_idempotency_audit_head IN EXCLUSIVE MODE",
        "UPDATE idem.task_idempotency_audit_head SET one = one",
        "DELETE FROM idem.task_idempotency_audit_head",
        "TRUNCATE idem.task_idempotency_audit_head",
        // A SHARE lock or stronger on the trail itself would hold up every INSERT into it.
        "LOCK TABLE idem.task_idempotency_audit IN SHARE MODE",
        "LOCK TABLE idem.task_idempotency_audit IN ACCESS EXCLUSIVE MODE",
        "SELECT 1 FROM idem.task_idempotency_audit FOR KEY SHARE",
    };
    for (const char* login : { readerLogin, operatorLogin, workerLogin, plainLogin })
        for (const char* sql : statements)
            QTest::addRow("%s: %s", login, sql) << QString::fromLatin1(login) << QString::fromLatin1(sql);
}

// Only the owner (and so only Idem's SECURITY DEFINER functions) can lock the head row; the
// trail itself can be read, never locked against inserts, by anyone else.
void TestAuditLock::othersCannotLockTheTrail()
{
    QFETCH(QString, login);
    QFETCH(QString, sql);
    auto c = as(login.toLatin1().constData());
    std::string state = "no error";
    try {
        pqxx::work w(*c);
        w.exec(sql.toStdString());
        w.commit();
    } catch (const pqxx::insufficient_privilege&) {
        state = "42501"; // libpqxx 6.4 leaves sqlstate() empty on this class
    } catch (const pqxx::sql_error& e) {
        state = e.sqlstate() + ": " + e.what();
    }
    QVERIFY2(state == "42501", state.c_str());
}

// The catalogue agrees, PUBLIC included: the head table has no grant to anyone but its owner.
void TestAuditLock::nobodyHasAPrivilegeOnTheHead()
{
    QCOMPARE(scalar(*m_fx.admin,
                 "SELECT count(*)::text FROM pg_class c, aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a"
                 " WHERE c.oid = 'idem.task_idempotency_audit_head'::regclass AND a.grantee <> c.relowner"),
        "0"_b);
    for (const char* role : { "public", "idem_reader", "idem_operator", "idem_worker", plainLogin })
        QCOMPARE(scalar(*m_fx.admin,
                     "SELECT (has_table_privilege($1, 'idem.task_idempotency_audit_head',"
                     "        'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')"
                     "     OR has_table_privilege($1, 'idem.task_idempotency_audit', 'INSERT, UPDATE, DELETE, TRUNCATE'))"
                     "::text",
                     std::string(role)),
            "false"_b);
    QCOMPARE(scalar(*m_fx.admin, "SELECT count(*)::text FROM idem.task_idempotency_audit_head"), "1"_b);
}

// An action that has appended holds the trail until its transaction ends; the next one waits
// (up to its lock timeout), then says it waited for the audit trail, not for the task's row.
void TestAuditLock::waitForTheTrailIsNamed()
{
    const std::string first = m_fx.nextKey("trail");
    const std::string second = m_fx.nextKey("trail");
    const auto firstSeen = m_fx.plant(first, "failed", 5, 5, "retryable");
    const auto secondSeen = m_fx.plant(second, "failed", 5, 5, "retryable");
    auto op = as(operatorLogin);
    auto o = m_fx.options("waiting for the trail");
    o.lockTimeoutMs = 300;

    auto owner = m_fx.db->connect();
    pqxx::work open(*owner);
    const auto held = open.exec_params(
        "SELECT outcome, audit_id FROM idem.idem_requeue($1, 'failed', $2, 1, 'left open', 'owner@psql')", first,
        static_cast<long long>(firstSeen.updatedAtUs));
    QCOMPARE(held[0][0].as<std::string>(), std::string("applied"));
    const auto heldId = held[0][1].as<std::int64_t>();

    const auto started = std::chrono::steady_clock::now();
    const auto timedOut = idem::applyAction(*op, idem::SchemaName(), idem::RecoveryAction::Requeue, secondSeen, o);
    const auto waited = std::chrono::steady_clock::now() - started;
    QCOMPARE(idem::outcomeName(timedOut.outcome), "error");
    QCOMPARE(timedOut.sqlstate, std::string("55P03"));
    QVERIFY2(contains(timedOut.message, "audit trail"), timedOut.message.c_str());
    QVERIFY2(contains(timedOut.message, "300 ms"), timedOut.message.c_str());
    QVERIFY2(!contains(timedOut.message, "row"), timedOut.message.c_str());
    QVERIFY2(waited >= 250ms, "the action did not wait for the trail");
    QCOMPARE(m_fx.f(second, "status"), "failed"_b); // its row change rolled back with it

    // A caller in another language gets the same distinction from the function itself.
    std::string sqlMessage;
    try {
        pqxx::work w(*op);
        w.exec("SET LOCAL lock_timeout = '200ms'");
        w.exec_params("SELECT * FROM idem.idem_requeue($1, 'failed', $2, 1, 'by hand')", second,
            static_cast<long long>(secondSeen.updatedAtUs));
    } catch (const pqxx::sql_error& e) {
        sqlMessage = e.sqlstate() + " " + e.what();
    }
    QVERIFY2(contains(sqlMessage, "55P03") && contains(sqlMessage, "audit trail"), sqlMessage.c_str());

    open.commit();
    o.lockTimeoutMs = 5000;
    const auto after = idem::applyAction(*op, idem::SchemaName(), idem::RecoveryAction::Requeue, secondSeen, o);
    QVERIFY2(after.outcome == idem::ActionOutcome::Applied, after.message.c_str());
    QCOMPARE(*after.auditId, heldId + 1);
    const auto chain = idem::verifyChain(*m_fx.admin, idem::SchemaName());
    QVERIFY2(chain.ok(), chain.detail.c_str());
}

// An executor between fence and commit holds its row: that wait still names the row.
void TestAuditLock::waitForTheRowIsNamed()
{
    const std::string keyText = m_fx.nextKey("row");
    const auto key = idem::TaskKey::parse(keyText);
    idem::TaskStore store(*m_fx.conn, idem::test::storeOptions(60s, 5));
    const auto claim = store.claim(key, "v1:busy");
    const auto seen = m_fx.version(keyText);
    auto op = as(operatorLogin);
    auto o = m_fx.options("waiting for the executor");
    o.lockTimeoutMs = 200;
    pqxx::work tx(*m_fx.conn);
    store.fence(tx, key, claim.token);
    const auto res = idem::applyAction(*op, idem::SchemaName(), idem::RecoveryAction::Release, *seen, o);
    QCOMPARE(res.sqlstate, std::string("55P03"));
    QVERIFY2(contains(res.message, "task's row") && contains(res.message, "executor"), res.message.c_str());
    QVERIFY2(contains(res.message, "200 ms"), res.message.c_str());
    QVERIFY2(!contains(res.message, "audit trail"), res.message.c_str());

    std::string sqlMessage;
    try {
        pqxx::work w(*op);
        w.exec("SET LOCAL lock_timeout = '200ms'");
        w.exec_params("SELECT * FROM idem.idem_release($1, 'processing', $2, 'by hand')", keyText,
            static_cast<long long>(seen->updatedAtUs));
    } catch (const pqxx::sql_error& e) {
        sqlMessage = e.sqlstate() + " " + e.what();
    }
    QVERIFY2(contains(sqlMessage, "55P03") && contains(sqlMessage, "row") && !contains(sqlMessage, "audit trail"),
        sqlMessage.c_str());
    tx.abort();
}

// A trail begun before the head table existed continues after the migration: one chain, dense
// ids, verified entry by entry the same way before and after.
void TestAuditLock::trailFromBeforeTheUpgradeVerifies()
{
    constexpr int headVersion = 7; // 0007_audit_hardening.sql
    QVERIFY(idem::latestSchemaVersion() >= headVersion);
    int previous = 0;
    for (const auto& m : idem::bundledMigrations())
        if (m.version < headVersion)
            previous = m.version;
    idem::test::ScratchDatabase db("auditlock_upgrade");
    auto c = db.connect();
    {
        // The tables up to the previous release (the migrations before 0007), as migrate applies them.
        pqxx::work w(*c);
        w.exec("CREATE SCHEMA idem");
        w.exec("CREATE TABLE idem.idem_schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
               " checksum TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
               " applied_by TEXT NOT NULL DEFAULT current_user)");
        w.exec("SELECT set_config('search_path', 'idem, pg_temp', true)");
        for (const auto& m : idem::bundledMigrations()) {
            if (m.version >= headVersion)
                break;
            w.exec(m.sql);
            w.exec_params("INSERT INTO idem.idem_schema_version (version, name, checksum) VALUES ($1, $2, $3)",
                m.version, m.name, m.checksum);
        }
        w.commit();
    }
    QCOMPARE(scalar(*c, "SELECT to_regclass('idem.task_idempotency_audit_head') IS NULL")[0], 't');
    // Three entries as v3 to v6 appended them, before the head row existed: planted, each hash
    // computed in C++ (operations/audit.h), independently of the database's functions.
    std::string prev(64, '0');
    for (int i = 1; i <= 3; ++i) {
        idem::AuditEntry e;
        e.id = i;
        e.atUs = 1700000000000000 + i * 1000001LL;
        e.key = "old:op:" + std::to_string(i);
        e.action = "requeue";
        e.reason = "upgrade test";
        e.dbRole = "postgres";
        e.osUser = "tester";
        e.clientHost = "[local]";
        e.application = "tst_auditlock";
        e.beforeImage = R"({"status": "failed"})";
        e.afterImage = R"({"status": "retryable_failed"})";
        e.prevHash = prev;
        e.entryHash = idem::auditEntryHash(e);
        pqxx::work w(*c);
        w.exec_params("INSERT INTO idem.task_idempotency_audit (id, at, idempotency_key, action, reason, db_role,"
                      " os_user, client_host, application, before_image, after_image, prev_hash, entry_hash)"
                      " OVERRIDING SYSTEM VALUE VALUES ($1, 'epoch'::timestamptz + $2 * interval '1 microsecond', $3,"
                      " $4, $5, $6, $7, $8, $9, $10::jsonb, $11::jsonb, $12, $13)",
            e.id, e.atUs, e.key, e.action, e.reason, e.dbRole, e.osUser, e.clientHost, e.application, e.beforeImage,
            e.afterImage, e.prevHash, e.entryHash);
        w.commit();
        prev = e.entryHash;
    }
    const auto before = idem::verifyChain(*c, idem::SchemaName());
    QVERIFY2(before.ok(), before.detail.c_str());

    const auto report = idem::migrate(*c, { idem::SchemaName(), false });
    QCOMPARE(report.fromVersion, previous);
    const auto act = [&](const std::string& key) {
        pqxx::work w(*c);
        w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts)"
                      " VALUES ($1, 'h', 'failed', 5)",
            key);
        const auto r = w.exec_params(
            "SELECT outcome, audit_id FROM idem.idem_requeue($1, 'failed', (SELECT (extract(epoch FROM updated_at)"
            " * 1000000)::bigint FROM idem.task_idempotency WHERE idempotency_key = $1), 1, 'upgrade test')",
            key);
        w.commit();
        return r[0][0].as<std::string>() + " " + r[0][1].as<std::string>();
    };
    QCOMPARE(scalar(*c, "SELECT count(*)::text FROM idem.task_idempotency_audit_head"), "1"_b);
    for (int i = 4; i <= 6; ++i)
        QCOMPARE(act("new:op:" + std::to_string(i)), "applied " + std::to_string(i));
    const auto after = idem::verifyChain(*c, idem::SchemaName(), before.head);
    QVERIFY2(after.ok(), after.detail.c_str());
    QCOMPARE(after.checked, std::int64_t(6));
    QVERIFY(before.head);
    QCOMPARE(before.head->hash, prev);
    QCOMPARE(scalar(*c, "SELECT prev_hash = (SELECT entry_hash FROM idem.task_idempotency_audit WHERE id = 3)"
                        " FROM idem.task_idempotency_audit WHERE id = 4")[0],
        't');
}

QTEST_GUILESS_MAIN(TestAuditLock)
#include "tst_auditlock.moc"
