#include <QtTest>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/testdb.h"

// The worker example of docs/workers-guide.md ("Embedding the protocol"), built against idem_core alone:
// logged in as a role that holds idem_worker and nothing else of Idem's, it runs a task once
// against a schema its owner migrated, replays on a retry, and its binary carries neither the
// operator's code nor the migrations.
class TestEmbedding : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { IDEM_REQUIRE_DATABASE(); }
    void runsOnceAndReplays();
    void carriesNoOperatorCode();
};

namespace {

idem::test::CliRun runWorker(const std::string& dsn, const QString& order, const QString& amount)
{
    return idem::test::runProgram(idem::test::programFromEnvironment("IDEM_EXAMPLE_WORKER_PATH"),
                                  { QString::fromStdString(dsn), QStringLiteral("shop_idem"), order, amount });
}

// The example prints "OUTCOME RESULT_JSON".
QString outcomeOf(const idem::test::CliRun& run) { return run.out.section(QLatin1Char(' '), 0, 0); }
QString receiptOf(const idem::test::CliRun& run)
{
    const auto doc = QJsonDocument::fromJson(run.out.section(QLatin1Char(' '), 1).toUtf8());
    return doc.object().value(QStringLiteral("receipt")).toString();
}

long long count(pqxx::connection& c, const std::string& sql)
{
    pqxx::nontransaction tx(c);
    return tx.exec1(sql)[0].as<long long>();
}

// The demangled symbols the binary defines (text, data, weak), one per line.
QStringList definedSymbols(const QString& binary)
{
    const auto run = idem::test::runProgram(QStringLiteral("nm"), { QStringLiteral("-C"), QStringLiteral("--defined-only"), binary });
    if (run.exitCode != 0)
        qFatal("nm failed: %s", qPrintable(idem::test::describe(run)));
    return run.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

} // namespace

void TestEmbedding::runsOnceAndReplays()
{
    idem::test::ScratchDatabase db("embed");
    // The owner migrates the schema and makes the service's own table; the worker's login holds
    // idem_worker and INSERT on that table, nothing more.
    {
        auto owner = db.connect();
        idem::migrate(*owner, { idem::SchemaName("shop_idem") });
        idem::test::createLoginRole("embed_worker", "embed-worker-pw", "idem_worker");
        pqxx::work w(*owner);
        w.exec("CREATE SCHEMA shop");
        w.exec("CREATE TABLE shop.payments (order_id text NOT NULL, amount_cents bigint NOT NULL)");
        w.exec("GRANT USAGE ON SCHEMA shop TO embed_worker");
        w.exec("GRANT INSERT ON shop.payments TO embed_worker");
        w.commit();
    }
    const std::string workerDsn = idem::test::loginDsn(db.dsn(), "embed_worker", "embed-worker-pw");
    {
        // As idem_worker it cannot touch the table itself, only call the protocol functions.
        auto worker = idem::connect(workerDsn);
        pqxx::nontransaction tx(*worker);
        QVERIFY_THROWS_EXCEPTION(pqxx::insufficient_privilege,
            tx.exec("SELECT count(*) FROM shop_idem.task_idempotency"));
    }
    const auto first = runWorker(workerDsn, QStringLiteral("order-123"), QStringLiteral("1250"));
    QVERIFY2(first.exitCode == 0, qPrintable(idem::test::describe(first)));
    QCOMPARE(outcomeOf(first), QStringLiteral("succeeded"));
    QCOMPARE(receiptOf(first), QStringLiteral("shop:charge:order-123"));

    // A retry of the same request (the client timed out, the queue redelivered) replays.
    const auto retry = runWorker(workerDsn, QStringLiteral("order-123"), QStringLiteral("1250"));
    QVERIFY2(retry.exitCode == 0, qPrintable(idem::test::describe(retry)));
    QCOMPARE(outcomeOf(retry), QStringLiteral("replayed"));
    QCOMPARE(receiptOf(retry), QStringLiteral("shop:charge:order-123"));

    // The same key with another amount is a different request: refused, nothing charged.
    const auto changed = runWorker(workerDsn, QStringLiteral("order-123"), QStringLiteral("9999"));
    QCOMPARE(changed.exitCode, 1);
    QCOMPARE(outcomeOf(changed), QStringLiteral("conflict"));

    auto c = db.connect();
    QCOMPARE(count(*c, "SELECT count(*) FROM shop.payments WHERE order_id = 'order-123'"), 1LL);
    QCOMPARE(count(*c, "SELECT sum(amount_cents) FROM shop.payments"), 1250LL);
    QCOMPARE(count(*c, "SELECT count(*) FROM shop_idem.task_idempotency WHERE idempotency_key = "
                       "'shop:charge:order-123' AND status = 'succeeded' AND attempts = 1"),
             1LL);
}

void TestEmbedding::carriesNoOperatorCode()
{
    const QStringList symbols = definedSymbols(idem::test::programFromEnvironment("IDEM_EXAMPLE_WORKER_PATH"));
    // The protocol is there (so an empty or stripped listing cannot pass)...
    const QStringList present { QStringLiteral("idem::runTask("), QStringLiteral("idem::TaskStore::claim("),
                                QStringLiteral("idem::requestDigest(") };
    for (const QString& name : present) {
        const bool found = std::any_of(symbols.begin(), symbols.end(), [&](const QString& s) { return s.contains(name); });
        QVERIFY2(found, qPrintable(QStringLiteral("the worker lacks %1").arg(name)));
    }
    // ...and nothing of what only operators' tools use, nor the migrations.
    static const QRegularExpression operatorCode(QStringLiteral(
        R"(idem::(\w+::)*(\w*[Ss]napshot\w*|\w*[Bb]undle(?!dMigrations)\w*|\w*[Ss]ign\w*|\w*[Cc]sv\w*|\w*[Ss]cenario\w*|)"
        R"(readStats|statsSql|readDashboard|\w*[Aa]udit\w*|applyAction|applyBulk|listTasks|\w*[Rr]eport\w*|)"
        R"(\w*Ed25519\w*|\w*[Mm]igrat\w*|bundledFunctions|rolesSql|inspectSchema)\b)"));
    QStringList leaked;
    for (const QString& s : symbols)
        if (operatorCode.match(s).hasMatch())
            leaked << s;
    QVERIFY2(leaked.isEmpty(), qPrintable(QStringLiteral("operator code linked into the worker:\n") + leaked.join(QLatin1Char('\n'))));
}

QTEST_GUILESS_MAIN(TestEmbedding)
#include "tst_embedding.moc"
