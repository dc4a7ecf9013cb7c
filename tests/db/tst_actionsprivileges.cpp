#include <QtTest>

#include <QUuid>

#include <pqxx/pqxx>

#include "operations/actions.h"
#include "operations/audit.h"
#include "core/connection.h"
#include "tests/db/tst_actions_fixture.h"

using idem::test::operator""_b;
using idem::test::bytes;
using idem::test::scalar;

namespace {
// Cluster-wide login roles of this program (names distinct from other test programs').
constexpr const char* operatorLogin = "idem_t_act_op";
constexpr const char* readerLogin = "idem_t_act_rd";
constexpr const char* workerLogin = "idem_t_act_wk";
} // namespace

// The database, not the client, decides who may act: idem_operator runs the actions (and only
// through them), idem_reader and idem_worker are refused with 42501 and nothing changes.
class TestActionsPrivileges : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void operatorActs();
    void othersAreRefused_data();
    void othersAreRefused();
    void operatorCannotWriteDirectly_data();
    void operatorCannotWriteDirectly();
    void definerFunctionsArePinned();

private:
    std::unique_ptr<pqxx::connection> as(const char* login) const;

    idem::test::ActionsFixture m_fx;
    std::string m_password;
};

void TestActionsPrivileges::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_fx.open("actions_priv");
    auto c = m_fx.db->connect();
    idem::migrate(*c, { idem::SchemaName() }); // again, now with roles and grants
    m_password = QUuid::createUuid().toString(QUuid::WithoutBraces).toStdString();
    idem::test::createLoginRole(operatorLogin, m_password, "idem_operator");
    idem::test::createLoginRole(readerLogin, m_password, "idem_reader");
    idem::test::createLoginRole(workerLogin, m_password, "idem_worker");
}

void TestActionsPrivileges::cleanupTestCase() { m_fx.close(); }

std::unique_ptr<pqxx::connection> TestActionsPrivileges::as(const char* login) const
{
    return idem::connect(
        idem::test::loginDsn(m_fx.db->dsn(), login, m_password));
}

void TestActionsPrivileges::operatorActs()
{
    const std::string key = m_fx.nextKey("priv");
    const auto seen = m_fx.plant(key, "failed", 5, 5, "retryable");
    auto op = as(operatorLogin);
    const auto res
        = idem::applyAction(*op, idem::SchemaName(), idem::RecoveryAction::Requeue, seen, m_fx.options("operator"));
    QCOMPARE(idem::outcomeName(res.outcome), "applied");
    QCOMPARE(m_fx.f(key, "status"), "retryable_failed"_b);
    // The actor is the login that called, not the function's owner it ran as.
    QCOMPARE(scalar(*m_fx.admin, "SELECT db_role FROM idem.task_idempotency_audit WHERE id = $1",
                 static_cast<long long>(*res.auditId)),
        QByteArray(operatorLogin));
    // An operator reads the trail and verifies it.
    const auto chain = idem::verifyChain(*op, idem::SchemaName());
    QVERIFY2(chain.ok(), chain.detail.c_str());
}

void TestActionsPrivileges::othersAreRefused_data()
{
    QTest::addColumn<QString>("login");
    QTest::addColumn<QString>("action");
    for (const char* login : { readerLogin, workerLogin })
        for (const char* action : { "requeue", "release", "fail" })
            QTest::addRow("%s %s", login, action) << login << action;
}

void TestActionsPrivileges::othersAreRefused()
{
    QFETCH(QString, login);
    QFETCH(QString, action);
    const auto a = *idem::parseAction(action.toStdString());
    const std::string key = m_fx.nextKey("priv");
    const auto seen = m_fx.plant(key, a == idem::RecoveryAction::Requeue ? "failed" : "processing", 1, 5,
        a == idem::RecoveryAction::Requeue ? "retryable" : "");
    const QByteArray rowBefore = m_fx.f(key, "row_to_json(t)");
    const auto auditBefore = m_fx.auditCount();
    auto c = as(login.toUtf8().constData());

    // Through the library: a Denied result, per key.
    const auto res = idem::applyAction(*c, idem::SchemaName(), a, seen, m_fx.options("not mine to do"));
    QCOMPARE(idem::outcomeName(res.outcome), "denied");
    QCOMPARE(res.sqlstate, std::string("42501"));
    // Straight SQL: the function, and the shared body behind it.
    const std::string calls[] = {
        "SELECT * FROM idem.idem_" + action.toStdString() + "($1, $2, $3, "
            + (a == idem::RecoveryAction::Requeue ? "1, " : "") + "'r')",
        "SELECT * FROM idem.recovery_action_apply('" + action.toStdString() + "', $1, $2, $3, 1, 'r', 'x')",
    };
    for (const auto& sql : calls) {
        bool denied = false;
        try {
            pqxx::work w(*c);
            w.exec_params(sql, seen.key, seen.status, static_cast<long long>(seen.updatedAtUs));
            w.commit();
        } catch (const pqxx::insufficient_privilege&) {
            denied = true; // SQLSTATE 42501 (libpqxx 6.4 leaves sqlstate() empty for this class)
        }
        QVERIFY2(denied, sql.c_str());
    }
    QCOMPARE(m_fx.f(key, "row_to_json(t)"), rowBefore);
    QCOMPARE(m_fx.auditCount(), auditBefore);
}

void TestActionsPrivileges::operatorCannotWriteDirectly_data()
{
    QTest::addColumn<QString>("sql");
    QTest::addRow("UPDATE tasks")
        << "UPDATE idem.task_idempotency SET status = 'retryable_failed' WHERE idempotency_key = $1";
    QTest::addRow("DELETE tasks") << "DELETE FROM idem.task_idempotency WHERE idempotency_key = $1";
    QTest::addRow("UPDATE audit") << "UPDATE idem.task_idempotency_audit SET reason = 'x' WHERE idempotency_key = $1";
    QTest::addRow("DELETE audit") << "DELETE FROM idem.task_idempotency_audit WHERE idempotency_key = $1";
    QTest::addRow("INSERT audit")
        << "INSERT INTO idem.task_idempotency_audit (idempotency_key, action, reason, db_role, os_user, client_host,"
           " before_image, after_image, prev_hash, entry_hash) VALUES ($1, 'fail', 'forged', 'a', 'b', 'c', '{}',"
           " '{}', 'p', 'e')";
    QTest::addRow("TRUNCATE audit") << "TRUNCATE idem.task_idempotency_audit /* $1 */";
}

void TestActionsPrivileges::operatorCannotWriteDirectly()
{
    QFETCH(QString, sql);
    const std::string key = m_fx.nextKey("priv");
    const auto seen = m_fx.plant(key, "failed", 5, 5, "retryable");
    auto op = as(operatorLogin);
    QCOMPARE(
        idem::outcomeName(
            idem::applyAction(*op, idem::SchemaName(), idem::RecoveryAction::Requeue, seen, m_fx.options("x")).outcome),
        "applied");
    const QByteArray rowBefore = m_fx.f(key, "row_to_json(t)");
    const QByteArray auditBefore = scalar(
        *m_fx.admin, "SELECT string_agg(id || reason || entry_hash, ',' ORDER BY id) FROM idem.task_idempotency_audit");
    bool denied = false;
    try {
        pqxx::work w(*op);
        if (sql.contains(QLatin1String("$1")) && !sql.startsWith(QLatin1String("TRUNCATE")))
            w.exec_params(sql.toStdString(), key);
        else
            w.exec(sql.toStdString());
        w.commit();
    } catch (const pqxx::insufficient_privilege&) {
        denied = true;
    }
    QVERIFY(denied);
    QCOMPARE(m_fx.f(key, "row_to_json(t)"), rowBefore);
    QCOMPARE(scalar(*m_fx.admin,
                 "SELECT string_agg(id || reason || entry_hash, ',' ORDER BY id) FROM idem.task_idempotency_audit"),
        auditBefore);
}

// SECURITY DEFINER with a pinned search_path ending in pg_temp: a caller's temporary table of
// the same name cannot stand in for the real one.
void TestActionsPrivileges::definerFunctionsArePinned()
{
    QCOMPARE(scalar(*m_fx.admin,
                 "SELECT string_agg(proname || ' ' || prosecdef || ' ' || array_to_string(proconfig, ';'), ','"
                 " ORDER BY proname) FROM pg_proc WHERE pronamespace = 'idem'::regnamespace"
                 " AND proname IN ('idem_requeue', 'idem_release', 'idem_fail')"),
        "idem_fail true search_path=\"idem\", pg_temp,idem_release true search_path=\"idem\", pg_temp,"
        "idem_requeue true search_path=\"idem\", pg_temp"_b);
    const std::string key = m_fx.nextKey("priv");
    const auto seen = m_fx.plant(key, "failed", 5, 5, "retryable");
    auto op = as(operatorLogin);
    {
        pqxx::work w(*op);
        w.exec("CREATE TEMP TABLE task_idempotency (LIKE idem.task_idempotency)");
        w.exec("CREATE TEMP TABLE task_idempotency_audit (LIKE idem.task_idempotency_audit)");
        w.commit();
    }
    const auto res
        = idem::applyAction(*op, idem::SchemaName(), idem::RecoveryAction::Requeue, seen, m_fx.options("shadowed?"));
    QCOMPARE(idem::outcomeName(res.outcome), "applied");
    QCOMPARE(m_fx.f(key, "status"), "retryable_failed"_b);
    QCOMPARE(scalar(*op, "SELECT count(*)::text FROM pg_temp.task_idempotency_audit"), "0"_b);
}

QTEST_GUILESS_MAIN(TestActionsPrivileges)
#include "tst_actionsprivileges.moc"
