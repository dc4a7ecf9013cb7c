#include <QtTest>

#include <QDeadlineTimer>

#include <functional>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "schema/migrate.h"
#include "operations/stats.h"
#include "tests/support/testdb.h"

// Migration 0004 (the covering unfinished index) on each path an operator can meet: the plain
// rebuild, an index pre-built CONCURRENTLY and taken over by rename, an index already replaced
// by hand, and a pre-built index that is invalid or defined differently (refused, nothing
// changed). And what it is for: the snapshot reads no heap page once the table is vacuumed.
class TestStatsIndex : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void rebuildsWhenNothingPrebuilt();
    void takesOverPrebuiltIndex();
    void alreadyReplacedByHand();
    void refusesUnusablePrebuiltIndex_data();
    void refusesUnusablePrebuiltIndex();
    void snapshotReadsNoHeapPage();

private:
    std::string value(const std::string& sql, const char* param = nullptr);
    // An index's definition from USING on, "<none>" when there is no such index in schema idem.
    std::string definition(const char* index);
    // Back to schema v3's index with version 4 unrecorded, as a database before this migration.
    void rewindToV3(bool coveringUnderOldName = false);
    void prebuild(const std::string& includes);
    std::string unfinishedDefinition() { return definition("task_idempotency_unfinished_idx"); }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
};

namespace {
const std::string v1Tail = "USING btree (updated_at) WHERE (status <> 'succeeded'::text)";
const std::string allColumns = "status, error_class, lease_until, created_at, attempts, idempotency_key";
const std::string coveringTail
    = "USING btree (updated_at) INCLUDE (" + allColumns + ") WHERE (status <> 'succeeded'::text)";
} // namespace

std::string TestStatsIndex::value(const std::string& sql, const char* param)
{
    pqxx::read_transaction t(*m_conn);
    const auto f = param ? t.exec_params(sql, param).at(0).at(0) : t.exec(sql).at(0).at(0);
    return f.is_null() ? "<null>" : f.as<std::string>();
}

std::string TestStatsIndex::definition(const char* index)
{
    return value(
        "SELECT coalesce(substring(pg_get_indexdef(to_regclass('idem.' || $1)) FROM ' (USING .*)$'), '<none>')", index);
}

void TestStatsIndex::initTestCase() { IDEM_REQUIRE_DATABASE(); }

void TestStatsIndex::init()
{
    m_db = std::make_unique<idem::test::ScratchDatabase>("statsindex", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
    pqxx::work w(*m_conn);
    // 2000 succeeded rows and 40 unfinished ones of every kind the snapshot tells apart.
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until, attempts,
                                           error_class, created_at, updated_at)
        SELECT 'tenant-' || i % 2 || ':charge:' || i, 'v1:' || md5(i::text),
               CASE WHEN i > 40 THEN 'succeeded' WHEN i % 4 = 0 THEN 'processing'
                    WHEN i % 4 = 1 THEN 'retryable_failed' ELSE 'failed' END,
               CASE WHEN i <= 40 AND i % 4 = 0 THEN gen_random_uuid() END,
               CASE WHEN i <= 40 AND i % 4 = 0 THEN now() + (i % 3 - 1) * interval '1 hour' END,
               1 + i % 3,
               CASE WHEN i > 40 OR i % 4 = 0 THEN NULL WHEN i % 3 = 0 THEN 'unknown' WHEN i % 3 = 1 THEN 'permanent'
                    ELSE 'retryable' END,
               now() - i * interval '5 minutes', now() - i * interval '1 minute'
          FROM generate_series(1, 2040) AS i
    )");
    w.commit();
}

void TestStatsIndex::cleanup()
{
    m_conn.reset();
    m_db.reset();
}

void TestStatsIndex::rewindToV3(bool coveringUnderOldName)
{
    pqxx::work w(*m_conn);
    w.exec("DROP INDEX idem.task_idempotency_unfinished_idx");
    w.exec(std::string("CREATE INDEX task_idempotency_unfinished_idx ON idem.task_idempotency (updated_at)")
        + (coveringUnderOldName ? " INCLUDE (" + allColumns + ")" : "") + " WHERE status <> 'succeeded'");
    w.exec("DELETE FROM idem.idem_schema_version WHERE version = 4");
    w.commit();
}

void TestStatsIndex::prebuild(const std::string& includes)
{
    // As the migration's comment tells the operator: outside any transaction.
    pqxx::nontransaction(*m_conn).exec(
        "CREATE INDEX CONCURRENTLY task_idempotency_unfinished_covering_idx ON idem.task_idempotency (updated_at)"
        " INCLUDE ("
        + includes + ") WHERE status <> 'succeeded'");
}

void TestStatsIndex::rebuildsWhenNothingPrebuilt()
{
    rewindToV3();
    QCOMPARE(unfinishedDefinition(), v1Tail);
    const auto before = idem::readStats(*m_conn, idem::SchemaName(), {});

    const auto report = idem::migrate(*m_conn, { idem::SchemaName(), false });
    QCOMPARE(report.applied, std::vector<std::string> { "0004_stats_index.sql" });
    QCOMPARE(unfinishedDefinition(), coveringTail);
    QCOMPARE(definition("task_idempotency_unfinished_covering_idx"), std::string("<none>"));
    QCOMPARE(value("SELECT count(*) FROM idem.idem_schema_version WHERE version = 4"), std::string("1"));
    const auto after = idem::readStats(*m_conn, idem::SchemaName(), {});
    QCOMPARE(after.processing, before.processing);
    QCOMPARE(after.expiredLeases, before.expiredLeases);
    QCOMPARE(after.failedPermanent, before.failedPermanent);
    QCOMPARE(after.longUnfinished, before.longUnfinished);
    QCOMPARE(
        after.processing + after.expiredLeases + after.retryableFailed + after.failedPermanent + after.failedExhausted,
        std::int64_t { 40 });
}

void TestStatsIndex::takesOverPrebuiltIndex()
{
    rewindToV3();
    prebuild(allColumns);
    const std::string prebuiltOid = value("SELECT 'idem.task_idempotency_unfinished_covering_idx'::regclass::oid");

    const auto report = idem::migrate(*m_conn, { idem::SchemaName(), false });
    QCOMPARE(report.applied, std::vector<std::string> { "0004_stats_index.sql" });
    // The operator's index itself, renamed: not built a second time.
    QCOMPARE(value("SELECT 'idem.task_idempotency_unfinished_idx'::regclass::oid"), prebuiltOid);
    QCOMPARE(unfinishedDefinition(), coveringTail);
    QCOMPARE(definition("task_idempotency_unfinished_covering_idx"), std::string("<none>"));
    QCOMPARE(value("SELECT count(*) FROM pg_indexes WHERE schemaname = 'idem' AND tablename = 'task_idempotency'"
                   " AND indexdef LIKE '%(updated_at)%WHERE (status <> %'"),
        std::string("1"));
}

void TestStatsIndex::alreadyReplacedByHand()
{
    rewindToV3(true);
    const std::string oid = value("SELECT 'idem.task_idempotency_unfinished_idx'::regclass::oid");
    const auto report = idem::migrate(*m_conn, { idem::SchemaName(), false });
    QCOMPARE(report.applied, std::vector<std::string> { "0004_stats_index.sql" });
    QCOMPARE(value("SELECT 'idem.task_idempotency_unfinished_idx'::regclass::oid"), oid);
    QCOMPARE(unfinishedDefinition(), coveringTail);
}

void TestStatsIndex::refusesUnusablePrebuiltIndex_data()
{
    QTest::addColumn<QString>("includes");
    QTest::addColumn<bool>("invalid");
    QTest::addColumn<QString>("message");
    QTest::addRow("other columns") << QStringLiteral("status, error_class, lease_until, created_at, attempts") << false
                                   << QStringLiteral("is defined as");
    QTest::addRow("failed concurrent build")
        << QString::fromStdString(allColumns) << true << QStringLiteral("is not a valid index");
}

void TestStatsIndex::refusesUnusablePrebuiltIndex()
{
    QFETCH(QString, includes);
    QFETCH(bool, invalid);
    QFETCH(QString, message);
    rewindToV3();
    prebuild(includes.toStdString());
    if (invalid) // what a CREATE INDEX CONCURRENTLY that failed half-way leaves behind
        pqxx::nontransaction(*m_conn).exec("UPDATE pg_index SET indisvalid = false WHERE indexrelid = "
                                           "'idem.task_idempotency_unfinished_covering_idx'::regclass");
    const std::string prebuiltTail = definition("task_idempotency_unfinished_covering_idx");

    try {
        idem::migrate(*m_conn, { idem::SchemaName(), false });
        QFAIL("migrate took an unusable pre-built index");
    } catch (const std::runtime_error& e) {
        const QString what = QString::fromUtf8(e.what());
        QVERIFY2(what.contains(QStringLiteral("0004_stats_index.sql")) && what.contains(QStringLiteral("55000"))
                && what.contains(QStringLiteral("task_idempotency_unfinished_covering_idx")) && what.contains(message),
            e.what());
    }
    // Nothing changed: version 4 unrecorded, both indexes as they were.
    QCOMPARE(value("SELECT count(*) FROM idem.idem_schema_version WHERE version = 4"), std::string("0"));
    QCOMPARE(unfinishedDefinition(), v1Tail);
    QCOMPARE(definition("task_idempotency_unfinished_covering_idx"), prebuiltTail);
}

void TestStatsIndex::snapshotReadsNoHeapPage()
{
    // Heap fetches are 0 only once VACUUM could mark every page all-visible, which it cannot
    // while a transaction elsewhere (another test running in parallel) is older than the rows:
    // vacuum until the visibility map covers the table, as autovacuum would in time.
    QDeadlineTimer deadline(30000);
    for (;;) {
        pqxx::nontransaction(*m_conn).exec("VACUUM (ANALYZE) idem.task_idempotency");
        if (value("SELECT relallvisible = relpages FROM pg_class WHERE oid = 'idem.task_idempotency'::regclass")
            == "t")
            break;
        QVERIFY2(!deadline.hasExpired(), "VACUUM could not make task_idempotency all-visible within 30 s");
        QTest::qWait(250);
    }
    for (const char* tenant : { static_cast<const char*>(nullptr), "tenant-1" }) {
        pqxx::read_transaction t(*m_conn);
        // The planner's choice on a small table is not the point here: only how the chosen index
        // answers. Sequential and bitmap scans are priced out so it takes the index.
        t.exec("SET LOCAL enable_seqscan = off");
        t.exec("SET LOCAL enable_bitmapscan = off");
        const auto plan = nlohmann::json::parse(
            t.exec_params("EXPLAIN (ANALYZE, FORMAT JSON) " + idem::statsSql(idem::SchemaName(), true), tenant,
                 static_cast<const char*>(nullptr), 15, 60)
                .at(0)
                .at(0)
                .as<std::string>());
        int scans = 0;
        std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& n) {
            if (n.is_object() && n.contains("Relation Name") && n["Relation Name"] == "task_idempotency") {
                ++scans;
                QCOMPARE(n["Node Type"].get<std::string>(), std::string("Index Only Scan"));
                QCOMPARE(n["Index Name"].get<std::string>(), std::string("task_idempotency_unfinished_idx"));
                QCOMPARE(n["Heap Fetches"].get<long long>(), 0LL);
                QCOMPARE(n["Actual Rows"].get<long long>(), tenant ? 20LL : 40LL);
            }
            if (n.is_object() || n.is_array())
                for (const auto& [k, v] : n.items())
                    walk(v);
        };
        walk(plan);
        QCOMPARE(scans, 1);
    }
}

QTEST_GUILESS_MAIN(TestStatsIndex)
#include "tst_statsindex.moc"
