#include <QtTest>

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <functional>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "schema/migrate.h"
#include "operations/stats.h"
#include "tests/support/cliprocess.h"
#include "tests/support/testdb.h"

// The dashboard's figures on a table in a known state: each one equals the number the test
// planted and an independent plain SQL count, through idem_operations and through `idemctl stats`, and
// the snapshot's plan never scans the table (so never the succeeded rows).
namespace {
void collectScans(const nlohmann::json& plan, std::vector<std::string>& out);
}

class TestStats : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void figuresMatchKnownState();
    void preparedReadingIsTheSame();
    void totalRowsBeforeTheFirstAnalyze();
    void tenantFilter();
    void operationFilter();
    void auditHeadByPrimaryKey();
    void cliJson();
    void cliPrometheusAndTable();
    void planNeverScansSucceededRows();

private:
    // A plain count, written independently of statsSql().
    std::int64_t count(const std::string& sql, const char* tenant = nullptr);
    void checkFigures(const idem::StatsReading& s, const char* tenant);

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    idem::SchemaName m_schema;
};

std::int64_t TestStats::count(const std::string& sql, const char* tenant)
{
    pqxx::read_transaction t(*m_conn);
    return t.exec_params(sql, tenant).at(0).at(0).as<std::int64_t>();
}

void TestStats::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("stats", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });

    pqxx::work w(*m_conn);
    // Rows: (key, status, lease offset, attempts, error_class, created offset). Tenants ta and tb.
    // Beside one row of each plain state, the rows that tell a figure's definition from a near
    // miss (the operator's guide and the tiles' tooltips say what each figure is):
    // - n1: processing with no lease at all (lease_until NULL, as an adopted row of the article's
    //   table may be): not live, the next claim takes it over, so an expired lease;
    // - x2, u2: retryable_failed with attempts >= max_attempts (5): still waiting to retry (u2
    //   uncertain too) until a claim marks them failed, not failed-exhausted yet;
    // - f3, x3: failed rows first seen hours ago: failed, never long-unfinished (not in flight);
    // - x4: failed with no error class: failed and not permanent, so exhausted.
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, owner_token, lease_until,
                                           attempts, error_class, next_attempt_at, created_at, updated_at)
        SELECT k, 'v1:' || repeat('a', 64), st,
               CASE WHEN st = 'processing' THEN gen_random_uuid() END,
               CASE WHEN st = 'processing' THEN now() + lease END,
               att, ec,
               CASE WHEN st = 'retryable_failed' THEN now() + interval '1 minute' END,
               now() - age, now() - age
        FROM (VALUES
            ('ta:charge:p1', 'processing', interval '10 minutes', 1, NULL, interval '0'),
            ('ta:charge:p2', 'processing', interval '10 minutes', 1, NULL, interval '5 minutes'),
            ('ta:charge:p3', 'processing', interval '10 minutes', 2, NULL, interval '2 hours'),
            ('ta:charge:e1', 'processing', interval '-1 minute', 1, NULL, interval '1 minute'),
            ('tb:refund:e2', 'processing', interval '-1 minute', 3, NULL, interval '2 hours'),
            ('tb:refund:n1', 'processing', NULL, 2, NULL, interval '3 hours'),
            ('ta:charge:r1', 'retryable_failed', NULL, 1, 'retryable', interval '2 hours'),
            ('ta:charge:r2', 'retryable_failed', NULL, 2, 'retryable', interval '0'),
            ('ta:charge:r3', 'retryable_failed', NULL, 1, 'retryable', interval '0'),
            ('tb:refund:r4', 'retryable_failed', NULL, 1, 'unknown', interval '0'),
            ('ta:charge:x2', 'retryable_failed', NULL, 5, 'retryable', interval '0'),
            ('tb:refund:u2', 'retryable_failed', NULL, 7, 'unknown', interval '0'),
            ('ta:charge:f1', 'failed', NULL, 1, 'permanent', interval '0'),
            ('tb:refund:f2', 'failed', NULL, 1, 'permanent', interval '0'),
            ('tb:charge:x1', 'failed', NULL, 5, 'unknown', interval '0'),
            ('ta:charge:f3', 'failed', NULL, 1, 'permanent', interval '4 hours'),
            ('tb:refund:x3', 'failed', NULL, 5, 'retryable', interval '3 hours'),
            ('ta:charge:x4', 'failed', NULL, 5, NULL, interval '0')
        ) AS v(k, st, lease, att, ec, age)
    )");
    // 50 succeeded, ten of them first seen two hours ago: old, but finished, so not long-unfinished.
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts,
                                           created_at, updated_at)
        SELECT 'ta:charge:s' || i, 'v1:' || repeat('b', 64), 'succeeded', '{}', 1,
               now() - CASE WHEN i <= 10 THEN interval '2 hours' ELSE interval '0' END, now()
        FROM generate_series(1, 50) i
    )");
    w.exec(R"(
        -- through add_counters(), the workers' flush: it writes the totals the tick reads too
        SELECT idem.add_counters(jsonb_agg(jsonb_build_object('m', extract(epoch FROM date_trunc('minute', now()) - back)::bigint,
               't', t, 'o', o, 'w', oc, 'n', n)))
        FROM (VALUES
            (interval '0', 'ta', 'charge', 'acquired', 10), (interval '0', 'ta', 'charge', 'replayed', 3),
            (interval '0', 'ta', 'charge', 'in_progress', 2), (interval '0', 'ta', 'charge', 'conflict', 1),
            (interval '0', 'ta', 'charge', 'reacquired_lease', 2), (interval '0', 'ta', 'charge', 'reacquired_retry', 1),
            (interval '0', 'ta', 'charge', 'failed_retryable', 2), (interval '0', 'ta', 'charge', 'failed_unknown', 1),
            (interval '0', 'ta', 'charge', 'exhausted', 1), (interval '0', 'ta', 'charge', 'failed_permanent', 4),
            (interval '0', 'ta', 'charge', 'stale_token', 2), (interval '0', 'ta', 'charge', 'succeeded', 7),
            -- two of the failures above were of a retry (attempt 2 or later), one of tb's too
            (interval '0', 'ta', 'charge', 'retry_failed', 2), (interval '0', 'tb', 'refund', 'retry_failed', 1),
            (interval '0', 'tb', 'refund', 'acquired', 5), (interval '0', 'tb', 'refund', 'replayed', 5),
            (interval '0', 'tb', 'refund', 'conflict', 2), (interval '0', 'tb', 'refund', 'stale_token', 1),
            -- an earlier minute of the window
            (interval '4 minutes', 'tb', 'refund', 'acquired', 6), (interval '4 minutes', 'ta', 'charge', 'conflict', 4),
            -- outside a 15-minute window
            (interval '2 hours', 'ta', 'charge', 'acquired', 100), (interval '2 hours', 'ta', 'charge', 'replayed', 100),
            (interval '2 hours', 'ta', 'charge', 'conflict', 50), (interval '2 hours', 'ta', 'charge', 'stale_token', 9),
            (interval '2 hours', 'ta', 'charge', 'reacquired_lease', 9), (interval '2 hours', 'ta', 'charge', 'retry_failed', 9)
        ) AS v(back, t, o, oc, n)
    )");
    w.commit();
    pqxx::nontransaction(*m_conn).exec("ANALYZE idem.task_idempotency");
}

void TestStats::cleanupTestCase()
{
    m_conn.reset();
    m_db.reset();
}

namespace {
// What initTestCase planted, counted by hand: per filter (all, tenant ta, tenant tb) each row
// figure and each window sum. Row keys in the comments.
struct Planted {
    std::int64_t processing, expiredLeases, retryableFailed, uncertain, failedPermanent, failedExhausted,
        longUnfinished;
    int oldestHours; // the oldest processing row's age when planted
    std::int64_t acquired, duplicates, retries, failedRetries, digestConflicts, staleTokens;
};

Planted planted(const char* tenant)
{
    const std::string t = tenant ? tenant : "";
    if (t.empty())
        return {
            3, // p1 p2 p3
            3, // e1 e2 n1 (no lease at all)
            6, // r1 r2 r3 r4 x2 u2 (x2, u2 out of attempts, still waiting)
            2, // r4 u2
            3, // f1 f2 f3
            3, // x1 x3 x4 (no class)
            4, // p3 e2 n1 r1; not the old failed f3, x3 nor the old succeeded rows
            3, // n1
            21, // 10 + 5 + 6 (four minutes back)
            17, // replayed 3 + 5, in progress 2, conflict 1 + 2 + 4
            3, // reacquired 2 + 1
            3, // retry_failed 2 + 1; not every failure (failed_* 7, exhausted 1)
            7, // 1 + 2 + 4
            3, // 2 + 1
        };
    if (t == "ta")
        return { 3, 1, 4, 0, 2 /* f1 f3 */, 1 /* x4 */, 2 /* p3 r1 */, 2 /* p3 */, 10, 10, 3, 2, 5, 2 };
    if (t == "tb")
        return { 0, 2 /* e2 n1 */, 2, 2, 1, 2 /* x1 x3 */, 2 /* e2 n1 */, 3, 11, 7, 0, 1, 2, 1 };
    return {};
}

constexpr std::int64_t plantedRows = 18 + 50;
} // namespace

void TestStats::checkFigures(const idem::StatsReading& s, const char* tenant)
{
    const auto e = planted(tenant);
    // The figures against the numbers planted.
    QCOMPARE(s.processing, e.processing);
    QCOMPARE(s.expiredLeases, e.expiredLeases);
    QCOMPARE(s.retryableFailed, e.retryableFailed);
    QCOMPARE(s.uncertain, e.uncertain);
    QCOMPARE(s.failedPermanent, e.failedPermanent);
    QCOMPARE(s.failedExhausted, e.failedExhausted);
    QCOMPARE(s.longUnfinished, e.longUnfinished);
    QCOMPARE(s.claims, e.acquired + e.duplicates);
    QVERIFY(s.duplicateRatio);
    QCOMPARE(*s.duplicateRatio, double(e.duplicates) / double(e.acquired + e.duplicates));
    QCOMPARE(s.retries, e.retries);
    QCOMPARE(s.failedRetries, e.failedRetries);
    QCOMPARE(s.digestConflicts, e.digestConflicts);
    QCOMPARE(s.staleTokenRejections, e.staleTokens);
    // Aged since it was planted, by less than this test takes.
    QVERIFY(s.oldestProcessingAgeSeconds);
    QVERIFY2(*s.oldestProcessingAgeSeconds >= e.oldestHours * 3600.0
            && *s.oldestProcessingAgeSeconds < e.oldestHours * 3600.0 + 600,
        qPrintable(QString::number(*s.oldestProcessingAgeSeconds)));
    // Table-wide whatever the filter: after ANALYZE of a small table the estimate is exact.
    QVERIFY(s.totalRowsEstimate);
    QCOMPARE(*s.totalRowsEstimate, plantedRows);
    QVERIFY(!s.inRecovery);
    QVERIFY(!s.replicationLagSeconds);
    QVERIFY(s.asOf.size() >= 20 && s.asOf.back() == 'Z');

    // The same numbers from plain SQL on the whole table (the test may scan), each WHERE clause
    // what the operator's guide and the tile says the figure is, written apart from statsSql()
    // and idem_*_stats(): a count that disagrees with the planted number is a wrong definition here.
    const std::string rows = "SELECT count(*) FROM idem.task_idempotency WHERE ($1::text IS NULL OR "
                             "idempotency_key LIKE $1::text || ':%') AND ";
    const std::string sums = "SELECT coalesce(sum(n), 0) FROM idem.idem_counters WHERE ($1::text IS NULL OR "
                             "tenant = $1::text) AND bucket > now() - interval '15 minutes' AND ";
    // live: the lease runs on; expired: it ran out, or there is none (a claim takes both over)
    QCOMPARE(count(rows + "status = 'processing' AND lease_until > now()", tenant), e.processing);
    QCOMPARE(count(rows + "status = 'processing' AND (lease_until <= now() OR lease_until IS NULL)", tenant),
        e.expiredLeases);
    // waiting to retry: every retryable_failed row, out of attempts or not
    QCOMPARE(count(rows + "status = 'retryable_failed'", tenant), e.retryableFailed);
    QCOMPARE(count(rows + "status = 'retryable_failed' AND error_class = 'unknown'", tenant), e.uncertain);
    // failed: permanent, or anything else (exhausted)
    QCOMPARE(count(rows + "status = 'failed' AND error_class = 'permanent'", tenant), e.failedPermanent);
    QCOMPARE(count(rows + "status = 'failed' AND error_class IS DISTINCT FROM 'permanent'", tenant), e.failedExhausted);
    // long-unfinished: in flight (processing or waiting to retry), first seen over 60 min ago
    QCOMPARE(count(rows
                     + "status IN ('processing', 'retryable_failed') AND "
                       "created_at < now() - interval '60 minutes'",
                 tenant),
        e.longUnfinished);
    QCOMPARE(count(sums + "outcome = 'acquired'", tenant), e.acquired);
    QCOMPARE(count(sums + "outcome IN ('replayed', 'in_progress', 'conflict')", tenant), e.duplicates);
    QCOMPARE(count(sums + "outcome IN ('reacquired_lease', 'reacquired_retry')", tenant), e.retries);
    QCOMPARE(count(sums + "outcome = 'retry_failed'", tenant), e.failedRetries);
    QCOMPARE(count(sums + "outcome = 'conflict'", tenant), e.digestConflicts);
    QCOMPARE(count(sums + "outcome = 'stale_token'", tenant), e.staleTokens);
    QCOMPARE(count("SELECT count(*) FROM idem.task_idempotency WHERE $1::text IS NULL OR true"), plantedRows);
}

void TestStats::figuresMatchKnownState()
{
    const auto s = idem::readStats(*m_conn, m_schema, {});
    // The planted numbers written out (checkFigures() holds them all, with the plain counts).
    QCOMPARE(s.processing, 3);
    QCOMPARE(s.expiredLeases, 3); // one of them has no lease at all
    QCOMPARE(s.retryableFailed, 6); // two of them out of attempts
    QCOMPARE(s.uncertain, 2);
    QCOMPARE(s.failedPermanent, 3);
    QCOMPARE(s.failedExhausted, 3); // one of them with no error class
    QCOMPARE(s.longUnfinished, 4); // p3, e2, n1, r1; the old failed and succeeded rows are not in flight
    QCOMPARE(s.claims, 38);
    QCOMPARE(*s.duplicateRatio, 17.0 / 38.0);
    QCOMPARE(s.retries, 3);
    QCOMPARE(s.failedRetries, 3); // failures of a retry, not every failure (8 retryable / unknown / exhausted)
    QCOMPARE(s.digestConflicts, 7);
    QCOMPARE(s.staleTokenRejections, 3);
    QCOMPARE(*s.totalRowsEstimate, 68);
    checkFigures(s, nullptr);
}

// The exporter's path (ReadStatsOptions::prepared): the same planted figures, the statement
// prepared once on the connection and reused; a filtered reading is not prepared and still
// answers for its tenant only.
void TestStats::preparedReadingIsTheSame()
{
    idem::ReadStatsOptions how;
    how.prepared = true;
    const auto prepared = [&] {
        pqxx::nontransaction n(*m_conn);
        return n.exec("SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'idem\\_stats\\_%'")
            .at(0)
            .at(0)
            .as<int>();
    };
    const int before = prepared();
    for (int i = 0; i < 3; ++i) {
        const auto s = idem::readStats(*m_conn, m_schema, {}, how);
        QCOMPARE(s.processing, 3);
        QCOMPARE(s.expiredLeases, 3);
        QCOMPARE(s.retryableFailed, 6);
        QCOMPARE(s.failedRetries, 3);
        QCOMPARE(s.claims, 38);
        QCOMPARE(*s.totalRowsEstimate, 68);
        checkFigures(s, nullptr);
    }
    QCOMPARE(prepared(), before + 1);
    idem::StatsOptions o;
    o.tenant = "ta";
    const auto ta = idem::readStats(*m_conn, m_schema, o, how);
    QCOMPARE(ta.expiredLeases, 1);
    QCOMPARE(ta.claims, 20);
    checkFigures(ta, "ta");
    QCOMPARE(prepared(), before + 1);
}

// A table nobody has analysed yet (a fresh install, autovacuum not round yet): the total is the
// statistics collector's live rows, labelled as such, not "unknown"; after ANALYZE the planner's.
void TestStats::totalRowsBeforeTheFirstAnalyze()
{
    const idem::SchemaName fresh("stats_unanalysed");
    idem::migrate(*m_conn, { fresh, false });
    {
        pqxx::work w(*m_conn);
        w.exec("ALTER TABLE stats_unanalysed.task_idempotency SET (autovacuum_enabled = false)");
        w.exec("INSERT INTO stats_unanalysed.task_idempotency (idempotency_key, request_hash, status, result_json)"
               " SELECT 'tn:charge:' || i, 'v1:x', 'succeeded', '{}' FROM generate_series(1, 137) i");
        w.commit();
    }
    const auto reltuples = [&] {
        pqxx::read_transaction t(*m_conn);
        return t.exec("SELECT reltuples FROM pg_class WHERE oid = 'stats_unanalysed.task_idempotency'::regclass")
            .at(0)
            .at(0)
            .as<double>();
    };
    QCOMPARE(reltuples(), -1.0); // never analysed
    // The collector takes the inserting session's counts within a second or so.
    idem::StatsReading s;
    QTRY_VERIFY_WITH_TIMEOUT((s = idem::readStats(*m_conn, fresh, {}), s.totalRowsEstimate.value_or(0) == 137), 10000);
    QCOMPARE(s.label(idem::Figure::TotalRows).source, std::string(idem::liveRowCounterSource));
    QCOMPARE(s.label(idem::Figure::TotalRows).quality, idem::FigureQuality::Estimate);
    pqxx::nontransaction(*m_conn).exec("ANALYZE stats_unanalysed.task_idempotency");
    s = idem::readStats(*m_conn, fresh, {});
    QCOMPARE(*s.totalRowsEstimate, 137);
    QCOMPARE(s.label(idem::Figure::TotalRows).source, std::string("planner statistics"));
    pqxx::nontransaction(*m_conn).exec("DROP SCHEMA stats_unanalysed CASCADE");
}

void TestStats::tenantFilter()
{
    idem::StatsOptions o;
    o.tenant = "ta";
    const auto s = idem::readStats(*m_conn, m_schema, o);
    QCOMPARE(s.processing, 3);
    QCOMPARE(s.expiredLeases, 1);
    QCOMPARE(s.retryableFailed, 4);
    QCOMPARE(s.uncertain, 0);
    QCOMPARE(s.failedPermanent, 2);
    QCOMPARE(s.failedExhausted, 1);
    QCOMPARE(s.longUnfinished, 2);
    QCOMPARE(s.claims, 20);
    QCOMPARE(*s.duplicateRatio, 10.0 / 20.0);
    QCOMPARE(s.retries, 3);
    QCOMPARE(s.failedRetries, 2);
    QCOMPARE(s.digestConflicts, 5);
    QCOMPARE(s.staleTokenRejections, 2);
    checkFigures(s, "ta");

    o.tenant = "tb";
    checkFigures(idem::readStats(*m_conn, m_schema, o), "tb");

    o.tenant = "nobody";
    const auto none = idem::readStats(*m_conn, m_schema, o);
    QCOMPARE(none.processing + none.expiredLeases + none.retryableFailed + none.claims, 0);
    QVERIFY(!none.duplicateRatio);
    QVERIFY(!none.oldestProcessingAgeSeconds);
}

void TestStats::operationFilter()
{
    idem::StatsOptions o;
    o.operation = "charge";
    auto s = idem::readStats(*m_conn, m_schema, o);
    QCOMPARE(s.processing, 3);
    QCOMPARE(s.expiredLeases, 1); // e2 and n1 are refunds
    QCOMPARE(s.retryableFailed, 4); // r1 r2 r3 x2
    QCOMPARE(s.uncertain, 0);
    QCOMPARE(s.failedExhausted, 2); // tb:charge:x1, ta:charge:x4
    QCOMPARE(s.failedPermanent, 2);
    QCOMPARE(s.longUnfinished, 2); // p3 r1
    QCOMPARE(s.claims, 20);
    o.tenant = "tb";
    s = idem::readStats(*m_conn, m_schema, o);
    QCOMPARE(s.processing + s.expiredLeases + s.retryableFailed + s.failedPermanent + s.longUnfinished, 0);
    QCOMPARE(s.failedExhausted, 1); // tb:charge:x1
    QCOMPARE(s.claims, 0);
}

// The audit head is the newest entry, whatever the filter, read by one probe of the primary key.
// Entries are planted by the owner here (the figure does not care whether the chain verifies).
void TestStats::auditHeadByPrimaryKey()
{
    auto s = idem::readStats(*m_conn, m_schema, {});
    QCOMPARE(s.auditHeadId, std::int64_t(0));
    QVERIFY(s.auditHeadHash.empty());
    {
        pqxx::work w(*m_conn);
        w.exec("INSERT INTO idem.task_idempotency_audit (idempotency_key, action, reason, db_role, os_user,"
               " client_host, before_image, after_image, prev_hash, entry_hash)"
               " SELECT 'ta:charge:f1', 'requeue', 'planted ' || g, 'owner', 'tester', '[local]', '{}', '{}',"
               "        repeat('0', 64), encode(sha256(('entry ' || g)::bytea), 'hex')"
               " FROM generate_series(1, 7) g");
        // A gap below the head (deleted entries) does not change it.
        w.exec("DELETE FROM idem.task_idempotency_audit WHERE id IN (2, 3)");
        w.commit();
    }
    const auto head = [&](const char* column) {
        pqxx::read_transaction t(*m_conn);
        return t.exec(std::string("SELECT ") + column + " FROM idem.task_idempotency_audit ORDER BY id DESC LIMIT 1")
            .at(0)
            .at(0)
            .as<std::string>();
    };
    s = idem::readStats(*m_conn, m_schema, {});
    QCOMPARE(s.auditHeadId, std::int64_t(7));
    QCOMPARE(s.auditHeadHash, head("entry_hash"));
    QCOMPARE(QByteArray::fromStdString(s.auditHeadHash),
        QCryptographicHash::hash("entry 7", QCryptographicHash::Sha256).toHex());
    idem::StatsOptions o;
    o.tenant = "tb"; // no audit entry of tb: the head is the trail's, not the tenant's
    QCOMPARE(idem::readStats(*m_conn, m_schema, o).auditHeadId, std::int64_t(7));

    pqxx::read_transaction t(*m_conn);
    const auto r = t.exec_params("EXPLAIN (FORMAT JSON) " + idem::statsSql(m_schema), static_cast<const char*>(nullptr),
        static_cast<const char*>(nullptr), 15, 60);
    std::vector<std::string> nodes;
    collectScans(nlohmann::json::parse(r.at(0).at(0).as<std::string>()), nodes);
    std::string all;
    for (const auto& n : nodes)
        all += n + "; ";
    QVERIFY2(all.find("Seq Scan on task_idempotency_audit") == std::string::npos, all.c_str());
    QVERIFY2(all.find("using task_idempotency_audit_pkey") != std::string::npos, all.c_str());
}

void TestStats::cliJson()
{
    const auto run = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("stats"), QStringLiteral("--dsn"), QString::fromStdString(m_db->dsn()),
            QStringLiteral("--json") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    QJsonParseError error;
    const auto doc = QJsonDocument::fromJson(run.out.toUtf8(), &error);
    QVERIFY2(doc.isObject(), qPrintable(error.errorString() + run.out));
    const auto j = doc.object();
    // The planted numbers (checkFigures() holds them beside plain counts).
    const auto e = planted(nullptr);
    QCOMPARE(j.value(QLatin1String("processing")).toInteger(), e.processing);
    QCOMPARE(j.value(QLatin1String("expired_leases")).toInteger(), e.expiredLeases);
    QCOMPARE(j.value(QLatin1String("retryable_failed")).toInteger(), e.retryableFailed);
    QCOMPARE(j.value(QLatin1String("uncertain")).toInteger(), e.uncertain);
    QCOMPARE(j.value(QLatin1String("failed_permanent")).toInteger(), e.failedPermanent);
    QCOMPARE(j.value(QLatin1String("failed_exhausted")).toInteger(), e.failedExhausted);
    QCOMPARE(j.value(QLatin1String("long_unfinished")).toInteger(), e.longUnfinished);
    QCOMPARE(j.value(QLatin1String("claims")).toInteger(), e.acquired + e.duplicates);
    QCOMPARE(
        j.value(QLatin1String("duplicate_ratio")).toDouble(), double(e.duplicates) / double(e.acquired + e.duplicates));
    QCOMPARE(j.value(QLatin1String("retries")).toInteger(), e.retries);
    QCOMPARE(j.value(QLatin1String("failed_retries")).toInteger(), e.failedRetries);
    QCOMPARE(j.value(QLatin1String("digest_conflicts")).toInteger(), e.digestConflicts);
    QCOMPARE(j.value(QLatin1String("stale_token_rejections")).toInteger(), e.staleTokens);
    QCOMPARE(j.value(QLatin1String("total_rows_estimate")).toInteger(), plantedRows);
    QCOMPARE(j.value(QLatin1String("in_recovery")).toBool(), false);
    QVERIFY(j.value(QLatin1String("replication_lag_seconds")).isNull());
    const double oldest = j.value(QLatin1String("oldest_processing_age_seconds")).toDouble();
    QVERIFY2(
        oldest >= e.oldestHours * 3600.0 && oldest < e.oldestHours * 3600.0 + 600, qPrintable(QString::number(oldest)));
    QVERIFY(j.value(QLatin1String("as_of")).toString().endsWith(QLatin1Char('Z')));
    // The head auditHeadByPrimaryKey planted: entry 7 (ids 2 and 3 deleted), its hash sha256("entry 7").
    QVERIFY2(j.contains(QLatin1String("audit_head_id")), qPrintable(run.out));
    QCOMPARE(j.value(QLatin1String("audit_head_id")).toInteger(), 7);
    QCOMPARE(j.value(QLatin1String("audit_head_hash")).toString(),
        QString::fromLatin1(QCryptographicHash::hash("entry 7", QCryptographicHash::Sha256).toHex()));

    const auto filtered = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("stats"), QStringLiteral("--dsn"), QString::fromStdString(m_db->dsn()),
            QStringLiteral("--json"), QStringLiteral("--tenant"), QStringLiteral("tb") });
    QVERIFY2(filtered.exitCode == 0, qPrintable(idem::test::describe(filtered)));
    const auto f = QJsonDocument::fromJson(filtered.out.toUtf8()).object();
    QCOMPARE(f.value(QLatin1String("uncertain")).toInteger(), 2);
    QCOMPARE(f.value(QLatin1String("expired_leases")).toInteger(), 2);
    QCOMPARE(f.value(QLatin1String("processing")).toInteger(), 0);
    QCOMPARE(f.value(QLatin1String("tenant")).toString(), QStringLiteral("tb"));
}

void TestStats::cliPrometheusAndTable()
{
    const auto dsn = QString::fromStdString(m_db->dsn());
    const auto run = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("stats"), QStringLiteral("--dsn"), dsn, QStringLiteral("--prometheus") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    const auto lines = run.out.split(QLatin1Char('\n'));
    for (const char* expected : { "# HELP idem_processing ", "# TYPE idem_processing gauge",
             "idem_processing{schema=\"idem\"} 3", "idem_expired_leases{schema=\"idem\"} 3",
             "idem_retryable_failed{schema=\"idem\"} 6", "idem_uncertain{schema=\"idem\"} 2",
             "idem_failed_permanent{schema=\"idem\"} 3", "idem_failed_exhausted{schema=\"idem\"} 3",
             "idem_long_unfinished{schema=\"idem\"} 4", "idem_claims{schema=\"idem\"} 38",
             "idem_retries{schema=\"idem\"} 3", "idem_failed_retries{schema=\"idem\"} 3",
             "idem_digest_conflicts{schema=\"idem\"} 7", "idem_stale_token_rejections{schema=\"idem\"} 3",
             "idem_total_rows_estimate{schema=\"idem\"} 68", "# HELP idem_audit_head_id ",
             "# TYPE idem_audit_head_id gauge", "idem_audit_head_id{schema=\"idem\"} 7" }) {
        const auto e = QString::fromLatin1(expected);
        const bool found = std::any_of(lines.begin(), lines.end(),
            [&](const QString& l) { return e.startsWith(QLatin1Char('#')) ? l.startsWith(e) : l == e; });
        QVERIFY2(found, qPrintable(e + QStringLiteral(" not in:\n") + run.out));
    }
    // No value for what does not exist (a standby's lag), rather than a misleading 0.
    QVERIFY(!run.out.contains(QLatin1String("idem_replication_lag_seconds{")));

    const auto table = idem::test::runProgram(
        idem::test::idemctlPath(), { QStringLiteral("stats"), QStringLiteral("--dsn"), dsn });
    QVERIFY2(table.exitCode == 0, qPrintable(idem::test::describe(table)));
    QVERIFY2(table.out.contains(QLatin1String("total rows (estimate)")), qPrintable(table.out));
    QVERIFY2(table.out.contains(QLatin1String("audit head")), qPrintable(table.out));

    const auto both = idem::test::runProgram(idem::test::idemctlPath(),
        { QStringLiteral("stats"), QStringLiteral("--dsn"), dsn, QStringLiteral("--json"),
            QStringLiteral("--prometheus") });
    QCOMPARE(both.exitCode, 2);
}

namespace {
void collectScans(const nlohmann::json& plan, std::vector<std::string>& out)
{
    if (plan.is_object()) {
        if (plan.contains("Node Type")) {
            std::string s = plan["Node Type"].get<std::string>();
            if (plan.contains("Relation Name"))
                s += " on " + plan["Relation Name"].get<std::string>();
            if (plan.contains("Index Name"))
                s += " using " + plan["Index Name"].get<std::string>();
            out.push_back(s);
        }
        for (const auto& [k, v] : plan.items())
            collectScans(v, out);
    } else if (plan.is_array()) {
        for (const auto& v : plan)
            collectScans(v, out);
    }
}
} // namespace

void TestStats::planNeverScansSucceededRows()
{
    {
        pqxx::work w(*m_conn);
        w.exec(R"(
            INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts)
            SELECT 'tc:bulk:' || i, 'v1:' || repeat('c', 64), 'succeeded', '{}', 1 FROM generate_series(1, 20000) i
        )");
        w.commit();
    }
    pqxx::nontransaction(*m_conn).exec("ANALYZE idem.task_idempotency");

    for (const char* tenant : { static_cast<const char*>(nullptr), "ta" }) {
        pqxx::read_transaction t(*m_conn);
        const auto r = t.exec_params(
            "EXPLAIN (FORMAT JSON) " + idem::statsSql(m_schema), tenant, static_cast<const char*>(nullptr), 15, 60);
        std::vector<std::string> nodes;
        collectScans(nlohmann::json::parse(r.at(0).at(0).as<std::string>()), nodes);
        std::string all;
        for (const auto& n : nodes)
            all += n + "; ";
        for (const auto& n : nodes)
            QVERIFY2(n.find("Seq Scan on task_idempotency") == std::string::npos, all.c_str());
        // The row figures are the bounded function's (its index paths: tst_boundedstats).
        QVERIFY2(all.find("Function Scan") != std::string::npos, all.c_str());
        QVERIFY2(all.find("on task_idempotency ") == std::string::npos, all.c_str());
    }
    // The exact pass (idemctl stats --exact, snapshots) reads the unfinished index only.
    for (const char* tenant : { static_cast<const char*>(nullptr), "ta" }) {
        pqxx::read_transaction t(*m_conn);
        const auto r = t.exec_params("EXPLAIN (FORMAT JSON) " + idem::statsSql(m_schema, true), tenant,
            static_cast<const char*>(nullptr), 15, 60);
        std::vector<std::string> nodes;
        collectScans(nlohmann::json::parse(r.at(0).at(0).as<std::string>()), nodes);
        std::string all;
        for (const auto& n : nodes)
            all += n + "; ";
        QVERIFY2(all.find("Seq Scan on task_idempotency") == std::string::npos, all.c_str());
        QVERIFY2(all.find("using task_idempotency_unfinished_idx") != std::string::npos, all.c_str());
    }

    // The figures did not move: 20k more succeeded rows are invisible to every figure but the estimate.
    const auto s = idem::readStats(*m_conn, m_schema, {});
    QCOMPARE(s.processing, 3);
    QCOMPARE(s.longUnfinished, 4);
    QVERIFY(*s.totalRowsEstimate > 19000);
}

QTEST_GUILESS_MAIN(TestStats)
#include "tst_stats.moc"
