// Issue #29 item 4, for the pages' reads: the Tasks page, its detail, the Audit page and the
// Storage page read under a statement timeout, which the server enforces only while it runs. With
// the console's backend stopped (SIGSTOP: the server takes the statement and never answers, as a
// hung host or a cut network would), each read is cancelled, then its connection cut, by the
// console itself: the page says so, the session reconnects on a new backend while the old one is
// still stopped, and the same read then loads what the database holds.

#include <QtTest>

#include <QSignalSpy>

#include <csignal>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "models/auditmodel.h"
#include "models/consolesession.h"
#include "models/storagemodel.h"
#include "models/taskbrowserdetail.h"
#include "models/taskbrowsermodel.h"
#include "operations/actions.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "tests/support/stoppedbackend.h"
#include "views/consolewidget.h"
#include "views/statuspanel.h"

using namespace idem::console;

namespace {
constexpr int statementTimeoutMs = 1000;
const QString closedByConsole = QStringLiteral("the console closed it");
} // namespace

class TestReadBounds : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void tasksPage();
    void taskDetail();
    void auditPage();
    void storagePage();
    void startWhileASchemaTableIsLocked();

private:
    int consoleBackend(int except = 0) { return idem::test::consoleBackendPid(*m_admin, m_db->name(), except); }
    // Stops the console's backend (resumed after a minute whatever becomes of the test).
    int stopBackend();
    // After a read failed as cut: the old backend is still stopped (the console bounded the read,
    // not the server), and the session is connected again on a new backend.
    void expectReconnectedPast(int stopped);

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
    std::unique_ptr<pqxx::connection> m_admin;
    std::unique_ptr<ConsoleSession> m_session;
    std::vector<int> m_stopped;
};

void TestReadBounds::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("readbounds", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), false });
    idem::test::execSql(*m_owner,
        "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, error_class)"
        " SELECT 'rb:charge:' || i, 'v1:' || repeat('a', 64), 'failed', 1, 'permanent' FROM generate_series(1, 7) i");
    // One audited action: the Audit page and the detail have an entry to show.
    const auto versions = idem::readRowVersions(*m_owner, idem::SchemaName(), { "rb:charge:1" });
    QVERIFY(versions.size() == 1 && versions.front());
    idem::ActionOptions options;
    options.reason = "read bounds";
    const auto done
        = idem::applyAction(*m_owner, idem::SchemaName(), idem::RecoveryAction::Requeue, *versions.front(), options);
    QVERIFY2(done.outcome == idem::ActionOutcome::Applied, done.message.c_str());
    m_admin = idem::connect(idem::test::adminDsn());
}

void TestReadBounds::init()
{
    m_session = std::make_unique<ConsoleSession>();
    QVERIFY(idem::test::connectSession(*m_session, m_db->dsn()));
}

void TestReadBounds::cleanup()
{
    m_session.reset();
    for (const int pid : m_stopped)
        ::kill(pid, SIGCONT);
    m_stopped.clear();
}

int TestReadBounds::stopBackend()
{
    const int pid = consoleBackend();
    if (pid <= 0)
        return 0;
    if (!idem::test::stopBackend(pid, 60))
        return 0;
    m_stopped.push_back(pid);
    return pid;
}

void TestReadBounds::expectReconnectedPast(int stopped)
{
    QCOMPARE(idem::test::processState(stopped), QLatin1Char('T'));
    QTRY_VERIFY_WITH_TIMEOUT(
        m_session->state() == ConsoleSession::State::Connected && consoleBackend(stopped) > 0, 30000);
}

void TestReadBounds::tasksPage()
{
    TaskBrowserModel model(m_session.get());
    model.setStatementTimeoutMs(statementTimeoutMs);
    QSignalSpy failed(&model, &TaskBrowserModel::failed);
    const int pid = stopBackend();
    QVERIFY(pid > 0);
    model.setQuery({}, {});
    QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), 40000);
    QVERIFY2(failed.first().first().toString().contains(closedByConsole), qPrintable(failed.first().first().toString()));
    QCOMPARE(model.rowCount(), 0);
    expectReconnectedPast(pid);
    model.setQuery({}, {});
    QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 7, 20000);
    QVERIFY(!model.busy());
}

void TestReadBounds::taskDetail()
{
    TaskDetailLoader loader(m_session.get());
    loader.setStatementTimeoutMs(statementTimeoutMs);
    QSignalSpy failed(&loader, &TaskDetailLoader::failed);
    QSignalSpy loaded(&loader, &TaskDetailLoader::loaded);
    const int pid = stopBackend();
    QVERIFY(pid > 0);
    loader.load(QStringLiteral("rb:charge:1"));
    QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), 40000);
    QVERIFY2(failed.first().first().toString().contains(closedByConsole), qPrintable(failed.first().first().toString()));
    QVERIFY(loaded.isEmpty());
    expectReconnectedPast(pid);
    loader.load(QStringLiteral("rb:charge:1"));
    QTRY_VERIFY_WITH_TIMEOUT(!loaded.isEmpty(), 20000);
    const auto answer = loaded.first().first().value<TaskDetailAnswer>();
    QVERIFY(answer.detail.has_value());
    QCOMPARE(QString::fromStdString(answer.detail->row.status), QStringLiteral("retryable_failed"));
    QCOMPARE(answer.audit.size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(answer.audit.front().action), QStringLiteral("requeue"));
}

void TestReadBounds::auditPage()
{
    AuditModel model(m_session.get());
    model.setStatementTimeoutMs(statementTimeoutMs);
    QSignalSpy failed(&model, &AuditModel::failed);
    const int pid = stopBackend();
    QVERIFY(pid > 0);
    model.setFilter({});
    QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), 40000);
    QVERIFY2(failed.first().first().toString().contains(closedByConsole), qPrintable(failed.first().first().toString()));
    expectReconnectedPast(pid);
    model.setFilter({});
    QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, 20000);
    QCOMPARE(QString::fromStdString(model.entry(0).key), QStringLiteral("rb:charge:1"));
}

void TestReadBounds::storagePage()
{
    StorageModel model(m_session.get());
    idem::StorageOptions options;
    options.statementTimeoutMs = statementTimeoutMs;
    model.setOptions(options);
    QSignalSpy failed(&model, &StorageModel::failed);
    QSignalSpy updated(&model, &StorageModel::updated);
    const int pid = stopBackend();
    QVERIFY(pid > 0);
    model.reload();
    QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), 40000);
    QVERIFY2(failed.first().first().toString().contains(closedByConsole), qPrintable(failed.first().first().toString()));
    QVERIFY(updated.isEmpty());
    expectReconnectedPast(pid);
    model.reload();
    QTRY_VERIFY_WITH_TIMEOUT(!updated.isEmpty(), 20000);
}

// Issue 40 item F: a console started while another session holds a lock on a schema table (here
// ACCESS EXCLUSIVE on idem_schema_version and task_idempotency, as a migration's ALTER or a LOCK
// TABLE does) waited for the lock, until its release, before it showed anything. Its start is
// bounded now: it connects within its bound while the lock is still held, says the schema cannot
// be read for now in the server's words, and reads it as it is once the lock is gone.
void TestReadBounds::startWhileASchemaTableIsLocked()
{
    m_session.reset();
    auto holder = m_db->connect();
    pqxx::work hold(*holder);
    hold.exec("LOCK TABLE idem.idem_schema_version, idem.task_idempotency IN ACCESS EXCLUSIVE MODE");
    ConsoleSession session;
    ConsoleWidget console(&session);
    QElapsedTimer clock;
    clock.start();
    session.connectTo(idem::test::settingsFor(m_db->dsn()));
    QTRY_VERIFY_WITH_TIMEOUT(session.state() == ConsoleSession::State::Connected, 15000);
    const qint64 connectedAfter = clock.elapsed();
    // Connected while the lock is held (bounded at 5 s a read, not the lock holder's pace).
    QVERIFY2(connectedAfter < 14000, qPrintable(QString::number(connectedAfter)));
    QCOMPARE(pqxx::nontransaction(*m_owner)
                 .exec_params("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                              " WHERE c.relname = 'idem_schema_version' AND l.mode = 'AccessExclusiveLock'"
                              "   AND l.granted AND l.pid = $1",
                     holder->backendpid())[0][0]
                 .as<int>(),
        1);
    const QString schema = console.statusPanel()->schemaText();
    QVERIFY2(schema.startsWith(QStringLiteral("idem: cannot be read (")) && schema.contains(QStringLiteral("lock")),
        qPrintable(schema));
    hold.abort();
    // The lock gone, the next read of the server reads the schema.
    session.refreshServerInfo();
    QTRY_VERIFY_WITH_TIMEOUT(
        session.serverInfo().schemaVersion > 0 && session.serverInfo().schemaError.isEmpty(), 15000);
    QVERIFY2(console.statusPanel()->schemaText().contains(QStringLiteral("(current)")),
        qPrintable(console.statusPanel()->schemaText()));
}

QTEST_MAIN(TestReadBounds)
#include "tst_readbounds.moc"
