#include <QtTest>

#include <atomic>
#include <chrono>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "operations/actions.h"
#include "operations/audit.h"
#include "tests/db/tst_actions_fixture.h"

using idem::test::operator""_b;
using idem::test::bytes;
using idem::test::scalar;

// The audit trail: the C++ chain hash against the SQL one, tamper evidence (every single edit,
// deletion or reordering is caught at that entry), a long chain, concurrent appends, listing,
// and hostile values that must come back byte for byte.
class TestAudit : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void cleanup();

    void canonicalEncoding();
    void hashMatchesSql_data();
    void hashMatchesSql();
    void tamper_data();
    void tamper();
    void removedTailNeedsARecordedHead();
    void incrementalFromAVerifiedHead();
    void concurrentActionsFormOneChain();
    void listFiltersAndPages();
    void hostileValuesRoundTrip_data();
    void hostileValuesRoundTrip();
    void tenThousandEntries();

private:
    // Appends n applied requeues (one per new failed row) through the library.
    std::vector<idem::ActionResult> appendActions(int n, const std::string& reason = "batch");
    void snapshotTrail();
    void restoreTrail();

    idem::test::ActionsFixture m_fx;
};

void TestAudit::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_fx.open("audit");
}

void TestAudit::cleanupTestCase() { m_fx.close(); }

// A test that tampered leaves the trail broken; the next one starts from an empty, valid trail.
void TestAudit::cleanup()
{
    if (!m_fx.admin || idem::verifyChain(*m_fx.admin, idem::SchemaName()).ok())
        return;
    pqxx::work w(*m_fx.admin);
    w.exec("TRUNCATE idem.task_idempotency_audit");
    w.commit();
}

std::vector<idem::ActionResult> TestAudit::appendActions(int n, const std::string& reason)
{
    std::vector<idem::ActionResult> out;
    for (int i = 0; i < n; ++i) {
        const std::string key = m_fx.nextKey("chain");
        const auto seen = m_fx.plant(key, "failed", 5, 5, "retryable");
        out.push_back(idem::applyAction(
            *m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, seen, m_fx.options(reason)));
    }
    return out;
}

void TestAudit::snapshotTrail()
{
    pqxx::work w(*m_fx.admin);
    w.exec("DROP TABLE IF EXISTS audit_copy");
    w.exec("CREATE TABLE audit_copy AS SELECT * FROM idem.task_idempotency_audit");
    w.commit();
}

void TestAudit::restoreTrail()
{
    pqxx::work w(*m_fx.admin);
    w.exec("TRUNCATE idem.task_idempotency_audit");
    w.exec("INSERT INTO idem.task_idempotency_audit OVERRIDING SYSTEM VALUE SELECT * FROM audit_copy");
    w.commit();
}

// The encoding is a contract with other verifiers: netstrings of the fields, in this order.
void TestAudit::canonicalEncoding()
{
    idem::AuditEntry e;
    e.id = 7;
    e.atUs = 1714557600123456;
    e.key = "t:charge:\xc3\xa9";
    e.action = "requeue";
    e.reason = "a,b";
    e.dbRole = "alice";
    e.osUser = "alice@ws";
    e.clientHost = "[local]";
    e.application = "";
    e.beforeImage = "{}";
    e.afterImage = "{\"a\": 1}";
    e.prevHash = idem::auditGenesisHash;
    QCOMPARE(bytes(idem::auditCanonicalBytes(e)),
        "13:idem-audit-v1,1:7,16:1714557600123456,11:t:charge:\xc3\xa9,7:requeue,3:a,b,5:alice,8:alice@ws,7:[local],"
        "0:,2:{},8:{\"a\": 1},64:0000000000000000000000000000000000000000000000000000000000000000,"_b);
}

void TestAudit::hashMatchesSql_data()
{
    QTest::addColumn<QByteArray>("text"); // goes into every text field
    QTest::addColumn<QByteArray>("json");
    QTest::addRow("plain") << "alice"_b
                           << "{\"status\": \"failed\"}"_b;
    QTest::addRow("multibyte") << "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"_b
                               << "{\"k\": \"\xe2\x82\xac\"}"_b;
    QTest::addRow("separators") << "12:x,3:,,:"_b
                                << "{\"a\": [1, 2.50, null, true]}"_b;
    QTest::addRow("control characters") << "\x01\t\n\x1b[31m'\";%"_b
                                        << "{\"m\": \"\\u0001\\n\"}"_b;
    QTest::addRow("empty") << ""_b
                           << "{}"_b;
}

// C++ (OpenSSL) and the SQL function (built-in sha256) agree byte for byte.
void TestAudit::hashMatchesSql()
{
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, json);
    const std::string t = text.toStdString();
    idem::AuditEntry e { 42, 1714557600123456, t, t, t, t, t, t, t, {}, {}, t, {} };
    // The images as PostgreSQL prints the jsonb value (that is what the chain covers).
    e.beforeImage = scalar(*m_fx.admin, "SELECT $1::jsonb::text", json.toStdString()).toStdString();
    e.afterImage = e.beforeImage;
    const QByteArray sql = scalar(*m_fx.admin,
        "SELECT idem.audit_entry_hash($1, $2, $3, $3, $3, $3, $3, $3, $3, $4::jsonb, $4::jsonb, $3)", 42LL,
        1714557600123456LL, t, json.toStdString());
    QCOMPARE(bytes(idem::auditEntryHash(e)), sql);
    QCOMPARE(sql.size(), 64);
}

void TestAudit::tamper_data()
{
    QTest::addColumn<QString>("sql"); // run as the owner; $1 is the entry id
    QTest::addColumn<int>("entry");
    QTest::addColumn<int>("brokenAt");
    QTest::addColumn<QString>("kind");
#define AUDIT "idem.task_idempotency_audit"
    QTest::addRow("reason edited") << "UPDATE " AUDIT " SET reason = reason || '!' WHERE id = $1" << 3 << 3
                                   << "hash_mismatch";
    QTest::addRow("actor edited") << "UPDATE " AUDIT " SET db_role = 'someone_else' WHERE id = $1" << 1 << 1
                                  << "hash_mismatch";
    QTest::addRow("after image edited") << "UPDATE " AUDIT
                                           " SET after_image = after_image || '{\"max_attempts\": 99}' WHERE id = $1"
                                        << 5 << 5 << "hash_mismatch";
    QTest::addRow("time edited") << "UPDATE " AUDIT " SET at = at - interval '1 day' WHERE id = $1" << 4 << 4
                                 << "hash_mismatch";
    QTest::addRow("last entry edited") << "UPDATE " AUDIT " SET reason = 'x' WHERE id = $1" << 6 << 6
                                       << "hash_mismatch";
    QTest::addRow("middle entry deleted") << "DELETE FROM " AUDIT " WHERE id = $1" << 3 << 3 << "missing_entry";
    QTest::addRow("first entry deleted") << "DELETE FROM " AUDIT " WHERE id = $1" << 1 << 1 << "missing_entry";
    // Swap every field but the id (which is generated and part of the hash) of two neighbours.
    QTest::addRow("two entries reordered")
        << "UPDATE " AUDIT " a SET at = b.at, idempotency_key = b.idempotency_key, reason = b.reason,"
           " before_image = b.before_image, after_image = b.after_image, prev_hash = b.prev_hash,"
           " entry_hash = 'swap-' || b.entry_hash FROM " AUDIT " b"
           " WHERE (a.id, b.id) IN (($1::bigint, $1::bigint + 1), ($1::bigint + 1, $1::bigint));"
           " UPDATE " AUDIT " SET entry_hash = substr(entry_hash, 6) WHERE entry_hash LIKE 'swap-%' AND $1::int > 0"
        << 2 << 2 << "prev_link_broken";
    // An owner who knows the algorithm can re-hash an edited entry; the next link still breaks.
    QTest::addRow("edited and re-hashed")
        << "UPDATE " AUDIT " SET reason = 'innocent',"
           " entry_hash = idem.audit_entry_hash(id, (extract(epoch FROM at) * 1000000)::bigint,"
           " idempotency_key, action, 'innocent', db_role, os_user, client_host, application,"
           " before_image, after_image, prev_hash) WHERE id = $1"
        << 2 << 3 << "prev_link_broken";
#undef AUDIT
}

// Any single edit, deletion or reordering by the owner is caught, at that entry.
void TestAudit::tamper()
{
    QFETCH(QString, sql);
    QFETCH(int, entry);
    QFETCH(int, brokenAt);
    QFETCH(QString, kind);
    {
        pqxx::work w(*m_fx.admin);
        w.exec("TRUNCATE idem.task_idempotency_audit");
        w.commit();
    }
    const auto results = appendActions(6);
    QCOMPARE(*results.back().auditId, std::int64_t(6));
    const auto clean = idem::verifyChain(*m_fx.conn, idem::SchemaName());
    QVERIFY2(clean.ok(), clean.detail.c_str());
    QCOMPARE(clean.checked, std::int64_t(6));

    {
        pqxx::work w(*m_fx.admin);
        for (const auto& statement : sql.split(QLatin1Char(';'), Qt::SkipEmptyParts))
            w.exec_params(statement.toStdString(), entry);
        w.commit();
    }
    const auto rep = idem::verifyChain(*m_fx.conn, idem::SchemaName());
    QVERIFY(!rep.ok());
    QCOMPARE(QString::fromLatin1(idem::chainBreakName(rep.brokenBy)), kind);
    QCOMPARE(*rep.firstBrokenId, std::int64_t(brokenAt));
    QCOMPARE(rep.checked, std::int64_t(brokenAt - 1));
    QVERIFY2(rep.detail.find("entry " + std::to_string(brokenAt)) != std::string::npos, rep.detail.c_str());
}

// Removing the newest entries leaves a valid shorter chain: only a head recorded earlier shows it.
void TestAudit::removedTailNeedsARecordedHead()
{
    appendActions(3);
    const auto before = idem::verifyChain(*m_fx.conn, idem::SchemaName());
    QVERIFY(before.ok());
    const idem::ChainHead head = *before.head;
    QVERIFY(idem::verifyChain(*m_fx.conn, idem::SchemaName(), head).ok());
    snapshotTrail();

    {
        pqxx::work w(*m_fx.admin);
        w.exec_params("DELETE FROM idem.task_idempotency_audit WHERE id = $1", static_cast<long long>(head.id));
        w.commit();
    }
    QVERIFY(idem::verifyChain(*m_fx.conn, idem::SchemaName()).ok());
    auto rep = idem::verifyChain(*m_fx.conn, idem::SchemaName(), head);
    QCOMPARE(idem::chainBreakName(rep.brokenBy), "truncated");
    QCOMPARE(*rep.firstBrokenId, head.id);

    // A new action then reuses the id: the chain is valid again, but not the one recorded.
    appendActions(1);
    rep = idem::verifyChain(*m_fx.conn, idem::SchemaName(), head);
    QCOMPARE(idem::chainBreakName(rep.brokenBy), "truncated");
    QCOMPARE(*rep.firstBrokenId, head.id);
    restoreTrail();
    QVERIFY(idem::verifyChain(*m_fx.conn, idem::SchemaName(), head).ok());
}

// verifyChainFrom: only what follows a head verified earlier, with verifyChain's checks, and the
// head itself still there and unchanged.
void TestAudit::incrementalFromAVerifiedHead()
{
    {
        pqxx::work w(*m_fx.admin);
        w.exec("TRUNCATE idem.task_idempotency_audit");
        w.commit();
    }
    appendActions(4);
    const auto full = idem::verifyChain(*m_fx.conn, idem::SchemaName());
    QVERIFY(full.ok());
    const idem::ChainHead mark = *full.head;
    QCOMPARE(mark.id, std::int64_t(4));
    QCOMPARE(idem::readAuditHead(*m_fx.conn, idem::SchemaName())->hash, mark.hash);

    auto rep = idem::verifyChainFrom(*m_fx.conn, idem::SchemaName(), mark);
    QVERIFY2(rep.ok(), rep.detail.c_str());
    QCOMPARE(rep.checked, std::int64_t(0));
    QCOMPARE(rep.head->id, std::int64_t(4));

    appendActions(3);
    rep = idem::verifyChainFrom(*m_fx.conn, idem::SchemaName(), mark);
    QVERIFY2(rep.ok(), rep.detail.c_str());
    QCOMPARE(rep.checked, std::int64_t(3)); // 5, 6, 7: not the whole trail
    QCOMPARE(rep.head->id, std::int64_t(7));
    QCOMPARE(rep.head->hash, idem::readAuditHead(*m_fx.conn, idem::SchemaName())->hash);
    snapshotTrail();

    const auto owner = [&](const std::string& sql) {
        restoreTrail();
        pqxx::work w(*m_fx.admin);
        w.exec(sql);
        w.commit();
        return idem::verifyChainFrom(*m_fx.conn, idem::SchemaName(), mark);
    };
    // A later entry edited: broken there, as verifyChain would say.
    rep = owner("UPDATE idem.task_idempotency_audit SET reason = 'x' WHERE id = 6");
    QCOMPARE(idem::chainBreakName(rep.brokenBy), "hash_mismatch");
    QCOMPARE(*rep.firstBrokenId, std::int64_t(6));
    QCOMPARE(rep.checked, std::int64_t(1));
    // Everything from the mark on removed: shorter, and the head says where it ends now.
    rep = owner("DELETE FROM idem.task_idempotency_audit WHERE id >= 4");
    QCOMPARE(idem::chainBreakName(rep.brokenBy), "truncated");
    QCOMPARE(*rep.firstBrokenId, std::int64_t(4));
    QCOMPARE(rep.head->id, std::int64_t(3));
    QVERIFY2(rep.detail.find("ends at entry 3") != std::string::npos, rep.detail.c_str());
    rep = owner("DELETE FROM idem.task_idempotency_audit");
    QCOMPARE(idem::chainBreakName(rep.brokenBy), "truncated");
    QVERIFY(!rep.head);
    // The marked entry alone removed: missing, later entries still there.
    rep = owner("DELETE FROM idem.task_idempotency_audit WHERE id = 4");
    QCOMPARE(idem::chainBreakName(rep.brokenBy), "missing_entry");
    QCOMPARE(*rep.firstBrokenId, std::int64_t(4));
    // The marked entry edited and re-hashed: a valid chain, but not the entry verified.
    rep = owner("UPDATE idem.task_idempotency_audit SET reason = 'innocent',"
                " entry_hash = idem.audit_entry_hash(id, (extract(epoch FROM at) * 1000000)::bigint,"
                " idempotency_key, action, 'innocent', db_role, os_user, client_host, application,"
                " before_image, after_image, prev_hash) WHERE id = 4");
    QCOMPARE(idem::chainBreakName(rep.brokenBy), "truncated");
    QCOMPARE(*rep.firstBrokenId, std::int64_t(4));
    QCOMPARE(rep.head->id, std::int64_t(4));
    // The marked entry edited, hash left: it no longer hashes to it.
    rep = owner("UPDATE idem.task_idempotency_audit SET reason = 'innocent' WHERE id = 4");
    QCOMPARE(idem::chainBreakName(rep.brokenBy), "hash_mismatch");
    QCOMPARE(*rep.firstBrokenId, std::int64_t(4));
    restoreTrail();
    QVERIFY(idem::verifyChainFrom(*m_fx.conn, idem::SchemaName(), mark).ok());
}

// Operators acting at the same moment still produce one linear chain with dense ids.
void TestAudit::concurrentActionsFormOneChain()
{
    constexpr int threads = 4, perThread = 20;
    std::vector<std::vector<idem::RowVersion>> work(threads);
    for (int t = 0; t < threads; ++t)
        for (int i = 0; i < perThread; ++i) {
            const std::string key = m_fx.nextKey("concurrent");
            work[t].push_back(m_fx.plant(key, "failed", 5, 5, "retryable"));
        }
    const long long before = m_fx.auditCount();
    std::atomic<int> ready { 0 }, applied { 0 };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            auto c = m_fx.db->connect();
            ++ready;
            while (ready.load() < threads)
                std::this_thread::yield();
            for (const auto& r : idem::applyBulk(
                     *c, idem::SchemaName(), idem::RecoveryAction::Requeue, work[t], m_fx.options("parallel")))
                if (r.outcome == idem::ActionOutcome::Applied)
                    ++applied;
        });
    for (auto& p : pool)
        p.join();
    QCOMPARE(applied.load(), threads * perThread);
    QCOMPARE(m_fx.auditCount(), before + threads * perThread);
    const auto rep = idem::verifyChain(*m_fx.conn, idem::SchemaName());
    QVERIFY2(rep.ok(), rep.detail.c_str());
    QCOMPARE(static_cast<long long>(rep.checked), before + threads * perThread);
    QCOMPARE(scalar(*m_fx.admin, "SELECT (max(id) = count(*))::text FROM idem.task_idempotency_audit"), "true"_b);
}

void TestAudit::listFiltersAndPages()
{
    const std::string key = m_fx.nextKey("list");
    const auto seen = m_fx.plant(key, "retryable_failed", 1, 5, "retryable");
    auto o = m_fx.options("first, fail it");
    o.actor = "bob@desk";
    const auto failed = idem::applyAction(*m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Fail, seen, o);
    QCOMPARE(idem::outcomeName(failed.outcome), "applied");
    o.reason = "then requeue it";
    const auto requeued = idem::applyAction(
        *m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, { key, failed.status, *failed.updatedAtUs }, o);
    QCOMPARE(idem::outcomeName(requeued.outcome), "applied");

    idem::AuditFilter byKey;
    byKey.key = key;
    auto page = idem::listAudit(*m_fx.admin, idem::SchemaName(), byKey);
    QCOMPARE(page.size(), std::size_t(2));
    QCOMPARE(page[0].id, *requeued.auditId); // newest first
    QCOMPARE(page[1].action, std::string("fail"));

    idem::AuditFilter byActor;
    byActor.actor = "bob@desk";
    QCOMPARE(idem::listAudit(*m_fx.admin, idem::SchemaName(), byActor).size(), std::size_t(2));
    byActor.action = "fail";
    page = idem::listAudit(*m_fx.admin, idem::SchemaName(), byActor);
    QCOMPARE(page.size(), std::size_t(1));
    QCOMPARE(page[0].reason, std::string("first, fail it"));
    byActor.action.reset();
    byActor.actor = page[0].dbRole; // the database role matches too
    QVERIFY(idem::listAudit(*m_fx.admin, idem::SchemaName(), byActor).size() >= 2);

    idem::AuditFilter window;
    window.key = key;
    window.sinceUs = page[0].atUs + 1;
    page = idem::listAudit(*m_fx.admin, idem::SchemaName(), window);
    QCOMPARE(page.size(), std::size_t(1));
    QCOMPARE(page[0].action, std::string("requeue"));
    window.sinceUs.reset();
    window.untilUs = page[0].atUs;
    QCOMPARE(idem::listAudit(*m_fx.admin, idem::SchemaName(), window)[0].action, std::string("fail"));

    // Keyset pages of 2 over the whole trail, both directions, see every id once.
    const long long total = m_fx.auditCount();
    for (bool oldestFirst : { false, true }) {
        idem::AuditFilter p;
        p.limit = 2;
        p.oldestFirst = oldestFirst;
        std::vector<std::int64_t> ids;
        for (;;) {
            const auto chunk = idem::listAudit(*m_fx.admin, idem::SchemaName(), p);
            for (const auto& e : chunk)
                ids.push_back(e.id);
            if (chunk.size() < 2)
                break;
            (oldestFirst ? p.afterId : p.beforeId) = chunk.back().id;
        }
        QCOMPARE(static_cast<long long>(ids.size()), total);
        QVERIFY(std::is_sorted(ids.begin(), ids.end(), [&](auto a, auto b) { return oldestFirst ? a < b : a > b; }));
    }
    idem::AuditFilter bad;
    bad.action = "delete";
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, idem::listAudit(*m_fx.admin, idem::SchemaName(), bad));
}

void TestAudit::hostileValuesRoundTrip_data()
{
    QTest::addColumn<QByteArray>("keyTail");
    QTest::addColumn<QByteArray>("reason");
    QTest::addRow("quotes") << "o'brien\"; DROP TABLE x; --"_b
                            << "it's \"stuck\"; '); DELETE FROM audit; --"_b;
    QTest::addRow("percent and format") << "100%_%s%n%%"_b
                                        << "%s %d %n %% \\x00 $1 :name"_b;
    QTest::addRow("control characters") << "a\x01\x02\x1b[2J\t\r\nb"_b
                                        << "line1\nline2\r\n\ttab\x07\x1b[31mred\x7f"_b;
    QTest::addRow("backslashes and unicode") << "C:\\tmp\\\xe2\x80\xae\xf0\x9f\x92\xa5"_b
                                             << "\xe2\x80\x8b zero-width, \xe2\x80\xae RTL, \\N \\\\"_b;
    QTest::addRow("10 kB") << QByteArray("k'%;\x01").repeated(2048) << QByteArray("r\"%;\x02\xc3\xa9").repeated(1463);
}

void TestAudit::hostileValuesRoundTrip()
{
    QFETCH(QByteArray, keyTail);
    QFETCH(QByteArray, reason);
    const std::string key = "hostile:op:" + keyTail.toStdString();
    const auto planted = m_fx.plant(key, "failed", 5, 5, "retryable");
    const auto seen = idem::readRowVersions(*m_fx.conn, idem::SchemaName(), { key, key + "x" });
    QVERIFY(seen[0]);
    QVERIFY(!seen[1]);
    QCOMPARE(seen[0]->key, key);
    QCOMPARE(seen[0]->updatedAtUs, planted.updatedAtUs);
    const auto res = idem::applyAction(
        *m_fx.conn, idem::SchemaName(), idem::RecoveryAction::Requeue, *seen[0], m_fx.options(reason.toStdString()));
    QCOMPARE(idem::outcomeName(res.outcome), "applied");
    QCOMPARE(res.key, key);
    QCOMPARE(m_fx.f(key, "status"), "retryable_failed"_b);
    QCOMPARE(scalar(*m_fx.admin, "SELECT reason FROM idem.task_idempotency_audit WHERE id = $1",
                 static_cast<long long>(*res.auditId)),
        reason);
    idem::AuditFilter f;
    f.key = key;
    const auto entries = idem::listAudit(*m_fx.admin, idem::SchemaName(), f);
    QCOMPARE(entries.size(), std::size_t(1));
    QCOMPARE(bytes(entries[0].key), bytes(key));
    QCOMPARE(bytes(entries[0].reason), reason);
    QCOMPARE(entries[0].entryHash, idem::auditEntryHash(entries[0]));
    const auto rep = idem::verifyChain(*m_fx.conn, idem::SchemaName());
    QVERIFY2(rep.ok(), rep.detail.c_str());
}

// A long trail verifies (across many pages), and an edit deep inside it is found. The 10,000
// entries are chained here by the schema's own hash function in one statement (one action per
// entry would spend the test's budget on commits); real actions then continue the same chain.
void TestAudit::tenThousandEntries()
{
    constexpr int n = 10000;
    {
        pqxx::work w(*m_fx.admin);
        w.exec("TRUNCATE idem.task_idempotency_audit");
        // Each entry's fields are a function of its id; the chain is hashed in id order by the
        // schema's own function into arrays, then written in one INSERT.
        const std::string fields
            = "'2024-05-01 00:00:00+00'::timestamptz + g * interval '1 second', 'bulk:op:' || g, 'requeue',"
              " 'reopen batch ' || (g / 100), 'loader', 'ops@batch', '[local]', 'tst_audit',"
              " jsonb_build_object('idempotency_key', 'bulk:op:' || g, 'status', 'failed', 'attempts', 5,"
              "                    'max_attempts', 5, 'error_message', repeat('timeout; ', 40)),"
              " jsonb_build_object('idempotency_key', 'bulk:op:' || g, 'status', 'retryable_failed', 'attempts', 5,"
              "                    'max_attempts', 6, 'error_message', repeat('timeout; ', 40))";
        w.exec("CREATE TEMP TABLE chain (g bigint, prev text, hash text) ON COMMIT DROP");
        w.exec("DO $$ DECLARE prev text := repeat('0', 64); h text; e record; BEGIN"
               " FOR g IN 1.."
            + std::to_string(n)
            + " LOOP"
              "   SELECT * INTO e FROM (SELECT "
            + fields
            + ") AS f(at, k, action, reason, role, os_user, host, app, b, a);"
              "   h := idem.audit_entry_hash(g, (extract(epoch FROM e.at) * 1000000)::bigint, e.k, e.action, e.reason,"
              "        e.role, e.os_user, e.host, e.app, e.b, e.a, prev);"
              "   INSERT INTO chain VALUES (g, prev, h);"
              "   prev := h;"
              " END LOOP; END $$");
        w.exec("INSERT INTO idem.task_idempotency_audit (id, at, idempotency_key, action, reason, db_role, os_user,"
               " client_host, application, before_image, after_image, prev_hash, entry_hash) OVERRIDING SYSTEM VALUE"
               " SELECT g, "
            + fields + ", prev, hash FROM chain ORDER BY g");
        w.commit();
    }
    appendActions(3, "after the batch");
    QCOMPARE(m_fx.auditCount(), static_cast<long long>(n + 3));
    QElapsedTimer timer;
    timer.start();
    const auto rep = idem::verifyChain(*m_fx.conn, idem::SchemaName());
    qInfo("verified %lld entries in %lld ms", static_cast<long long>(rep.checked),
        static_cast<long long>(timer.elapsed()));
    QVERIFY2(rep.ok(), rep.detail.c_str());
    QCOMPARE(rep.checked, std::int64_t(n + 3));
    QCOMPARE(rep.head->id, std::int64_t(n + 3));

    {
        pqxx::work w(*m_fx.admin);
        w.exec("UPDATE idem.task_idempotency_audit SET os_user = 'mallory' WHERE id = 7777");
        w.commit();
    }
    const auto broken = idem::verifyChain(*m_fx.conn, idem::SchemaName());
    QCOMPARE(idem::chainBreakName(broken.brokenBy), "hash_mismatch");
    QCOMPARE(*broken.firstBrokenId, std::int64_t(7777));
    QCOMPARE(broken.checked, std::int64_t(7776));
}

QTEST_GUILESS_MAIN(TestAudit)
#include "tst_audit.moc"
