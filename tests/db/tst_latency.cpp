#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/taskstore.h"
#include "operations/events.h"
#include "operations/latency.h"
#include "operations/pauses.h"
#include "operations/snapshot.h"
#include "operations/snapshotjson.h"
#include "operations/snapshotreport.h"
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
constexpr const char* workerRole = "idem_t_latency_worker";
constexpr const char* readerRole = "idem_t_latency_reader";
constexpr const char* operatorRole = "idem_t_latency_operator";
constexpr const char* outsiderRole = "idem_t_latency_outsider";
constexpr const char* password = "pw-latency";

const idem::SchemaName schema;

// The test's own oracle: the nearest-rank quantile of the planted values (the ceil(q n)-th
// smallest), computed here from the values, not by the product.
double nearestRank(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v.at(std::max<std::size_t>(rank, 1) - 1);
}

// Whether a reported figure is within `tolerance` (relative) of the exact one.
bool near(double reported, double exact, double tolerance)
{
    return std::fabs(reported - exact) <= tolerance * std::fabs(exact);
}


// One planted success: durations in microseconds, the minute it completed in (minutes ago).
struct Planted {
    std::string tenant, operation;
    std::int64_t runUs = 0, ttsUs = 0;
    int attempts = 1;
    int minutesAgo = 5;
};
} // namespace

// Issue #27: latency figures from planted durations (an independent oracle), the protocol's
// retries and takeovers, the roll-up's once-only folding, bad arguments and roles.
class TestLatency : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void slotGeometryAgreesWithTheSql();
    void plantedDurationsGiveTheirPercentiles();
    void idemctlShowsTheSameFigures();
    void retriesAndTakeoversCountIntoTimeToSuccessOnly();
    void eachMinuteIsFoldedOnce();
    void badArgumentsChangeNothing();
    void rolesAndPrivileges();
    void quantileOfflineAgreesWithTheSql();
    void snapshotCarriesTheFoldedMinutes();
    void annotationsAndEventsMarkTheWindow();

private:
    void plant(const std::vector<Planted>& rows);
    // Sets the roll-up back so that every minute from `minutesAgo` on is due again.
    void foldFrom(int minutesAgo);
    std::unique_ptr<pqxx::connection> login(const char* role)
    {
        return std::make_unique<pqxx::connection>(idem::test::loginDsn(m_db->dsn(), role, password));
    }
    QByteArray latencyState()
    {
        return scalar(*m_owner, "SELECT (SELECT count(*) FROM idem.idem_latency) || '/' || (SELECT folded_to FROM "
                                "idem.idem_latency_state)");
    }

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
    int m_keys = 0;
};

void TestLatency::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("latency", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { idem::SchemaName(), true });
    idem::test::createLoginRole(workerRole, password, "idem_worker");
    idem::test::createLoginRole(readerRole, password, "idem_reader");
    idem::test::createLoginRole(operatorRole, password, "idem_operator");
    idem::test::createLoginRole(outsiderRole, password, "");
}

void TestLatency::cleanupTestCase()
{
    m_owner.reset();
    m_db.reset();
}

void TestLatency::init()
{
    pqxx::work w(*m_owner);
    w.exec("DELETE FROM idem.task_idempotency");
    w.exec("DELETE FROM idem.idem_latency");
    w.commit();
}

void TestLatency::plant(const std::vector<Planted>& rows)
{
    pqxx::work w(*m_owner);
    for (const auto& p : rows) {
        // Completed somewhere in the minute `minutesAgo` ago (its 20th second), started run_us
        // before, first claimed tts_us before.
        w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, result_json,"
                      " created_at, attempt_started_at, updated_at)"
                      " SELECT $1, 'v1:' || repeat('a', 64), 'succeeded', $2, '{}'::jsonb,"
                      "        done - $4::bigint * interval '1 microsecond', done - $3::bigint * interval '1 microsecond', done"
                      "   FROM (SELECT date_trunc('minute', now()) - $5::int * interval '1 minute' + interval '20 seconds'"
                      "         AS done) d",
            p.tenant + ":" + p.operation + ":p" + std::to_string(++m_keys), p.attempts, p.runUs, p.ttsUs, p.minutesAgo);
    }
    w.commit();
}

void TestLatency::foldFrom(int minutesAgo)
{
    pqxx::work w(*m_owner);
    w.exec_params("UPDATE idem.idem_latency_state SET folded_to = date_trunc('minute', now()) - $1::int * interval '1 minute'",
        minutesAgo);
    w.commit();
}

// The C++ geometry (what the exporter's buckets rest on) is the SQL's: each value lands in the
// slot whose bounds hold it, on both sides, at decade edges too.
void TestLatency::slotGeometryAgreesWithTheSql()
{
    for (const double us : { 1.0, 1.07, 9.99, 10.0, 999.0, 1000.0, 1000.5, 31622.7, 1e6, 2.5e9, 3.1e13 }) {
        const int slot = scalar(*m_owner, "SELECT idem.idem_latency_slot($1)", us).toInt();
        QVERIFY2(us > (slot == 0 ? 0.0 : idem::latencySlotUpperUs(slot - 1) * (1 + 1e-12)),
            qPrintable(QStringLiteral("%1 us below slot %2").arg(us).arg(slot)));
        QVERIFY2(us <= idem::latencySlotUpperUs(slot) * (1 + 1e-12),
            qPrintable(QStringLiteral("%1 us above slot %2").arg(us).arg(slot)));
        const double mid = scalar(*m_owner, "SELECT idem.idem_latency_value('run', $1)", slot).toDouble();
        QVERIFY(near(mid, us, 0.0375));
    }
    QCOMPARE(scalar(*m_owner, "SELECT idem.idem_latency_slot(0.2)"), "0"_b);
    // A bound belongs to the slot below it, as a value equal to a Prometheus le is in that bucket.
    QCOMPARE(scalar(*m_owner, "SELECT idem.idem_latency_slot(1000)"), "95"_b);
    QCOMPARE(scalar(*m_owner, "SELECT idem.idem_latency_slot(1000.001)"), "96"_b);
    QCOMPARE(scalar(*m_owner, "SELECT idem.idem_latency_slot(NULL)"), "0"_b);
    QCOMPARE(scalar(*m_owner, "SELECT idem.idem_latency_value('attempts', 7)"), "7"_b);
}

// 2,000 successes with spread-out durations in two operations, two tenants and two minutes:
// every count, mean and percentile, per operation, per minute and per tenant, against the
// values computed here from what was planted.
void TestLatency::plantedDurationsGiveTheirPercentiles()
{
    std::mt19937_64 rng(27);
    std::lognormal_distribution<double> charge(std::log(300'000.0), 1.0); // ~300 ms, heavy tail
    std::lognormal_distribution<double> refund(std::log(40'000.0), 0.5);
    std::uniform_int_distribution<int> tries(1, 4);
    std::vector<Planted> rows;
    for (int i = 0; i < 2000; ++i) {
        Planted p;
        p.tenant = i % 3 == 0 ? "beta" : "acme";
        p.operation = i % 2 == 0 ? "charge" : "refund";
        p.runUs = static_cast<std::int64_t>(p.operation == "charge" ? charge(rng) : refund(rng)) + 1;
        p.attempts = tries(rng);
        p.ttsUs = p.runUs + (p.attempts - 1) * 5'000'000 + static_cast<std::int64_t>(refund(rng));
        p.minutesAgo = i % 4 == 0 ? 6 : 5;
        rows.push_back(p);
    }
    plant(rows);
    foldFrom(8);

    idem::LatencyQuery q;
    q.minutes = 30;
    const auto report = idem::readLatency(*m_owner, schema, q);
    QVERIFY(report.minutesFolded >= 6);
    QCOMPARE(static_cast<int>(report.histograms.size()), 6); // 2 operations x 3 kinds
    const auto exactOf = [&](const std::string& op, idem::LatencyKind kind, auto&& pick) {
        std::vector<double> v;
        for (const auto& p : rows)
            if ((op == "*" || p.operation == op) && pick(p))
                v.push_back(kind == idem::LatencyKind::Run ? p.runUs / 1000.0
                        : kind == idem::LatencyKind::TimeToSuccess ? p.ttsUs / 1000.0
                                                                    : double(p.attempts));
        return v;
    };
    const auto check = [&](const idem::LatencyHistogram& h, const std::vector<double>& exact) {
        const QString where = QStringLiteral("%1 %2").arg(QString::fromStdString(h.operation), QLatin1String(idem::latencyKindName(h.kind)));
        QCOMPARE(h.count, static_cast<std::int64_t>(exact.size()));
        const double tol = h.kind == idem::LatencyKind::Attempts ? 1e-9 : 0.037;
        double sum = 0;
        for (double x : exact)
            sum += x;
        QVERIFY2(near(h.mean, sum / exact.size(), 1e-6), qPrintable(where + QLatin1String(" mean")));
        QVERIFY2(near(h.p50, nearestRank(exact, 0.50), tol),
            qPrintable(where + QStringLiteral(" p50 %1, exact %2").arg(h.p50).arg(nearestRank(exact, 0.50))));
        QVERIFY2(near(h.p95, nearestRank(exact, 0.95), tol),
            qPrintable(where + QStringLiteral(" p95 %1, exact %2").arg(h.p95).arg(nearestRank(exact, 0.95))));
        QVERIFY2(near(h.p99, nearestRank(exact, 0.99), tol),
            qPrintable(where + QStringLiteral(" p99 %1, exact %2").arg(h.p99).arg(nearestRank(exact, 0.99))));
    };
    for (const auto& h : report.histograms) {
        QVERIFY(!h.minuteUs);
        check(h, exactOf(h.operation, h.kind, [](const Planted&) { return true; }));
    }

    // One tenant, everything together, per minute.
    q.tenant = "beta";
    q.byOperation = false;
    q.perMinute = true;
    const auto perMinute = idem::readLatency(*m_owner, schema, q);
    QCOMPARE(static_cast<int>(perMinute.histograms.size()), 6); // 2 minutes x 3 kinds
    const auto nowMinuteUs = std::stoll(
        scalar(*m_owner, "SELECT (extract(epoch FROM date_trunc('minute', now())) * 1000000)::bigint").toStdString());
    for (const auto& h : perMinute.histograms) {
        QVERIFY(h.minuteUs);
        QCOMPARE(h.operation, std::string("*"));
        const int ago = static_cast<int>((nowMinuteUs - *h.minuteUs) / 60'000'000);
        QVERIFY2(ago == 5 || ago == 6, qPrintable(QStringLiteral("a minute %1 minutes ago").arg(ago)));
        check(h, exactOf("*", h.kind, [&](const Planted& p) { return p.tenant == "beta" && p.minutesAgo == ago; }));
    }

    // A window that ends before the planted minutes holds none of them.
    q = {};
    q.minutes = 1;
    QVERIFY(idem::readLatency(*m_owner, schema, q).histograms.empty());
}

// `idemctl latency --json` reports the same figures as the library, and its text names them.
void TestLatency::idemctlShowsTheSameFigures()
{
    const auto args = [](std::initializer_list<const char*> list) {
        QStringList out;
        for (const char* a : list)
            out << QString::fromUtf8(a);
        return out;
    };
    std::vector<Planted> rows;
    for (int i = 1; i <= 200; ++i)
        rows.push_back({ "acme", "ship", i * 1000LL, i * 10'000LL, 1 + i % 2, 4 });
    plant(rows);
    foldFrom(6);
    const auto dsn = QString::fromStdString(idem::test::loginDsn(m_db->dsn(), readerRole, password));
    const auto run = idem::test::runProgram(idem::test::idemctlPath(),
        args({ "latency", "--minutes", "30", "--operation", "ship", "--json", "--dsn" }) << dsn, 60000);
    QCOMPARE(run.exitCode, 0);
    const auto figures = QJsonDocument::fromJson(run.out.toUtf8()).object().value(QLatin1String("figures")).toArray();
    QCOMPARE(figures.size(), 3);
    std::vector<double> runMs, attempts;
    for (const auto& p : rows) {
        runMs.push_back(p.runUs / 1000.0);
        attempts.push_back(p.attempts);
    }
    for (const auto& f : figures) {
        const auto o = f.toObject();
        QCOMPARE(o.value(QLatin1String("count")).toInt(), 200);
        if (o.value(QLatin1String("kind")).toString() == QLatin1String("run")) {
            QCOMPARE(o.value(QLatin1String("unit")).toString(), QStringLiteral("ms"));
            QVERIFY(near(o.value(QLatin1String("p95")).toDouble(), nearestRank(runMs, 0.95), 0.037));
            QVERIFY(near(o.value(QLatin1String("mean")).toDouble(), 100.5, 1e-9));
        }
        if (o.value(QLatin1String("kind")).toString() == QLatin1String("attempts"))
            QCOMPARE(o.value(QLatin1String("p99")).toDouble(), nearestRank(attempts, 0.99));
    }
    const auto text = idem::test::runProgram(
        idem::test::idemctlPath(), args({ "latency", "--minutes", "30", "--dsn" }) << dsn, 60000);
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(text.out.contains(QLatin1String("ship")) && text.out.contains(QLatin1String("to success")) && text.out.contains(QLatin1String("p95")), qPrintable(text.out));
    const auto bad = idem::test::runProgram(
        idem::test::idemctlPath(), args({ "latency", "--tenant", "a:b", "--dsn" }) << dsn, 60000);
    QCOMPARE(bad.exitCode, 2);
    QVERIFY(bad.err.contains(QLatin1String("--tenant")));
}

// Through the protocol: a retried key has two run times (the failed attempt's, from fail()'s
// entry, and the successful one's), one time to success from its first claim, and 2 attempts;
// a key whose first lease ran out has one run time (the attempt that completed) and its time to
// success spans both. Every figure is checked against the timestamps the server stored.
void TestLatency::retriesAndTakeoversCountIntoTimeToSuccessOnly()
{
    auto conn = m_db->connect();
    idem::TaskStore store(*conn, storeOptions(30s, 5));
    const idem::TaskKey retried("acme", "charge", "r1");
    auto c1 = store.claim(retried, digestOf('a'));
    QVERIFY(c1.mayExecute());
    std::this_thread::sleep_for(30ms);
    store.fail(retried, c1.token, c1.attempts, idem::FailureClass::Retryable, "gateway 503");
    auto c2 = store.claim(retried, digestOf('a'));
    QCOMPARE(idem::decisionName(c2.decision), "reacquired");
    std::this_thread::sleep_for(20ms);
    {
        pqxx::work tx(*conn);
        store.complete(tx, retried, c2.token, "{}");
        tx.commit();
    }

    idem::TaskStore shortLease(*conn, storeOptions(50ms, 5));
    const idem::TaskKey taken("acme", "charge", "t1");
    auto t1 = shortLease.claim(taken, digestOf('b'));
    QVERIFY(t1.mayExecute());
    std::this_thread::sleep_for(120ms);
    auto t2 = store.claim(taken, digestOf('b'));
    QCOMPARE(idem::decisionName(t2.decision), "reacquired");
    QCOMPARE(t2.detail, std::string("lease_expired"));
    {
        pqxx::work tx(*conn);
        store.complete(tx, taken, t2.token, "{}");
        tx.commit();
    }

    // The oracle: what the server stored, in microseconds.
    const auto us = [&](const idem::TaskKey& k, const std::string& expr) {
        return std::stoll(idem::test::field(*m_owner, k, "round(extract(epoch FROM " + expr + ") * 1000000)::bigint").toStdString());
    };
    const std::int64_t retriedRun2 = us(retried, "t.updated_at - t.attempt_started_at");
    const std::int64_t retriedTts = us(retried, "t.updated_at - t.created_at");
    const std::int64_t retriedRun1 = std::stoll(
        idem::test::field(*m_owner, retried, "(t.errors->0->>'run_us')").toStdString());
    const std::int64_t takenRun = us(taken, "t.updated_at - t.attempt_started_at");
    const std::int64_t takenTts = us(taken, "t.updated_at - t.created_at");
    QVERIFY(retriedRun1 >= 30'000 && retriedRun2 >= 20'000);
    QVERIFY(retriedTts >= retriedRun1 + retriedRun2);
    QVERIFY(takenTts >= 120'000 && takenRun < takenTts - 100'000); // the lost attempt is not in its run time

    // Shift the two keys 10 minutes into the past (durations kept) so their minute is due.
    {
        pqxx::work w(*m_owner);
        w.exec("UPDATE idem.task_idempotency SET created_at = created_at - interval '10 minutes',"
               " updated_at = updated_at - interval '10 minutes',"
               " attempt_started_at = attempt_started_at - interval '10 minutes',"
               " errors = (SELECT COALESCE(jsonb_agg(jsonb_set(e, '{at}', to_jsonb((e->>'at')::timestamptz"
               "            - interval '10 minutes'))), '[]'::jsonb) FROM jsonb_array_elements(errors) e)");
        w.commit();
    }
    foldFrom(12);
    idem::LatencyQuery q;
    q.minutes = 30;
    const auto report = idem::readLatency(*m_owner, schema, q);
    std::map<idem::LatencyKind, const idem::LatencyHistogram*> by;
    for (const auto& h : report.histograms)
        by[h.kind] = &h;
    QCOMPARE(static_cast<int>(by.size()), 3);
    const auto slotOf = [&](double v) { return scalar(*m_owner, "SELECT idem.idem_latency_slot($1)", v).toInt(); };
    const auto slotsOf = [](const idem::LatencyHistogram& h) {
        std::vector<int> out;
        for (const auto& [s, n] : h.slotCounts)
            for (std::int64_t i = 0; i < n; ++i)
                out.push_back(s);
        return out;
    };
    // Run: three attempts that ended (the retried key's two, the taken-over key's last one).
    QCOMPARE(by[idem::LatencyKind::Run]->count, 3);
    std::vector<int> runSlots { slotOf(retriedRun1), slotOf(retriedRun2), slotOf(takenRun) };
    std::sort(runSlots.begin(), runSlots.end());
    QCOMPARE(slotsOf(*by[idem::LatencyKind::Run]), runSlots);
    QVERIFY(near(by[idem::LatencyKind::Run]->total, double(retriedRun1 + retriedRun2 + takenRun), 1e-6));
    // Time to success: two keys, each from its first claim.
    QCOMPARE(by[idem::LatencyKind::TimeToSuccess]->count, 2);
    std::vector<int> ttsSlots { slotOf(retriedTts), slotOf(takenTts) };
    std::sort(ttsSlots.begin(), ttsSlots.end());
    QCOMPARE(slotsOf(*by[idem::LatencyKind::TimeToSuccess]), ttsSlots);
    // Attempts: 2 each.
    QCOMPARE(slotsOf(*by[idem::LatencyKind::Attempts]), (std::vector<int> { 2, 2 }));
}

// A minute is folded once: a second roll-up finds nothing due, one that finds the state locked
// by another returns 0 at once instead of waiting, and the figures do not change. Minutes older
// than 8 days are dropped.
void TestLatency::eachMinuteIsFoldedOnce()
{
    plant({ { "acme", "charge", 1000, 2000, 1, 3 }, { "acme", "charge", 3000, 4000, 2, 3 } });
    foldFrom(5);
    QVERIFY(idem::rollupLatency(*m_owner, schema) >= 3);
    const auto after = latencyState();
    QCOMPARE(scalar(*m_owner, "SELECT sum(n) FROM idem.idem_latency WHERE kind = 'run'"), "2"_b);
    QCOMPARE(idem::rollupLatency(*m_owner, schema), 0);
    QCOMPARE(latencyState(), after);

    // Another session holds the state: this one does not wait and folds nothing.
    foldFrom(5);
    pqxx::work holder(*m_owner);
    holder.exec("SELECT * FROM idem.idem_latency_state FOR UPDATE");
    auto other = m_db->connect();
    QCOMPARE(idem::rollupLatency(*other, schema), 0);
    holder.abort();

    // An old minute goes on the next roll-up.
    {
        pqxx::work w(*m_owner);
        w.exec("INSERT INTO idem.idem_latency VALUES (date_trunc('minute', now() - interval '9 days'), 'old', 'op', 'run',"
               " 1, 5, '{5}', '{1}')");
        w.exec("DELETE FROM idem.idem_latency WHERE bucket > now() - interval '1 day'");
        w.commit();
    }
    foldFrom(3);
    QVERIFY(idem::rollupLatency(*m_owner, schema) >= 1);
    QCOMPARE(scalar(*m_owner, "SELECT count(*) FROM idem.idem_latency WHERE tenant = 'old'"), "0"_b);
}

// NULLs and out-of-range values: a clear error (ID003) and nothing changed; the library refuses
// a bad query before any I/O.
void TestLatency::badArgumentsChangeNothing()
{
    foldFrom(5);
    const auto before = latencyState();
    for (const char* sql : { "SELECT idem.idem_latency_rollup(NULL)", "SELECT idem.idem_latency_rollup(0)",
             "SELECT idem.idem_latency_rollup(1441)",
             "SELECT * FROM idem.idem_latency_histogram(NULL, now())",
             "SELECT * FROM idem.idem_latency_histogram(now(), NULL)",
             "SELECT * FROM idem.idem_latency_histogram(now(), now() - interval '1 minute')",
             "SELECT * FROM idem.idem_latency_histogram(now() - interval '32 days', now())",
             "SELECT * FROM idem.idem_latency_histogram(now() - interval '1 hour', now(), NULL, NULL, NULL, false)",
             "SELECT * FROM idem.idem_latency_percentiles(now() - interval '1 hour', now(), NULL, NULL, true, NULL)" })
        QCOMPARE(sqlstateOf(*m_owner, sql), std::string("ID003"));
    QCOMPARE(latencyState(), before);
    QCOMPARE(scalar(*m_owner, "SELECT idem.idem_latency_quantile('run', '{}', '{}', 0.5)"), "<null>"_b);
    QCOMPARE(scalar(*m_owner, "SELECT idem.idem_latency_quantile('run', '{1}', '{3}', 0)"), "<null>"_b);
    QCOMPARE(scalar(*m_owner, "SELECT idem.idem_latency_quantile('attempts', '{1,3}', '{1,1}', 1)"), "3"_b);

    idem::LatencyQuery q;
    q.minutes = 0;
    QVERIFY_EXCEPTION_THROWN(idem::readLatency(*m_owner, schema, q), std::invalid_argument);
    q.minutes = 44641;
    QVERIFY_EXCEPTION_THROWN(idem::readLatency(*m_owner, schema, q), std::invalid_argument);
    q.minutes = 10;
    q.operation = std::string("charge\x01", 7);
    QVERIFY_EXCEPTION_THROWN(idem::readLatency(*m_owner, schema, q), std::invalid_argument);
    QCOMPARE(latencyState(), before);
}

// Readers read and fold; workers record through the protocol but read nothing; a role outside
// Idem does nothing; nobody but the owner writes the figures.
void TestLatency::rolesAndPrivileges()
{
    auto worker = login(workerRole);
    auto reader = login(readerRole);
    auto outsider = login(outsiderRole);
    for (auto* c : { worker.get(), outsider.get() }) {
        QCOMPARE(sqlstateOf(*c, "SELECT idem.idem_latency_rollup()"), std::string("42501"));
        QCOMPARE(sqlstateOf(*c, "SELECT * FROM idem.idem_latency"), std::string("42501"));
        QCOMPARE(sqlstateOf(*c, "SELECT * FROM idem.idem_latency_percentiles(now() - interval '1 hour', now())"),
            std::string("42501"));
    }
    QCOMPARE(sqlstateOf(*reader, "SELECT idem.idem_latency_rollup()"), std::string("ok"));
    QCOMPARE(sqlstateOf(*reader, "SELECT * FROM idem.idem_latency_percentiles(now() - interval '1 hour', now())"),
        std::string("ok"));
    for (const char* write : { "DELETE FROM idem.idem_latency", "UPDATE idem.idem_latency_state SET folded_to = now()",
             "SELECT * FROM idem.idem_latency_fold(now() - interval '1 hour', now())" })
        QCOMPARE(sqlstateOf(*reader, write), std::string("42501"));
    // The worker's claim records the attempt's start it cannot read.
    idem::TaskStore store(*worker, storeOptions(30s));
    const idem::TaskKey k("acme", "roles", "w1");
    QVERIFY(store.claim(k, digestOf('c')).mayExecute());
    QCOMPARE(idem::test::field(*m_owner, k, "t.attempt_started_at = t.created_at"), "true"_b);
}

// The offline quantile (snapshots, the report) is the SQL's: random histograms, every quantile.
void TestLatency::quantileOfflineAgreesWithTheSql()
{
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int> slot(0, 600), count(1, 50), size(1, 40);
    for (int round = 0; round < 60; ++round) {
        std::map<int, std::int64_t> h;
        for (int i = size(rng); i > 0; --i)
            h[slot(rng)] += count(rng);
        std::vector<std::pair<int, std::int64_t>> histogram(h.begin(), h.end());
        std::string s, c;
        for (const auto& [k, n] : histogram) {
            s += (s.empty() ? "" : ",") + std::to_string(k);
            c += (c.empty() ? "" : ",") + std::to_string(n);
        }
        for (const double q : { 0.01, 0.5, 0.95, 0.99, 1.0 })
            for (const auto kind : { idem::LatencyKind::Run, idem::LatencyKind::Attempts }) {
                const double sql = scalar(*m_owner,
                    "SELECT idem.idem_latency_quantile($1, ('{' || $2 || '}')::smallint[], ('{' || $3 || '}')::bigint[], $4)"
                    " / CASE WHEN $1 = 'attempts' THEN 1 ELSE 1000 END",
                    std::string(idem::latencyKindName(kind)), s, c, q)
                                       .toDouble();
                const auto offline = idem::latencyQuantile(kind, histogram, q);
                QVERIFY(offline);
                QVERIFY2(near(*offline, sql, 1e-12), qPrintable(QStringLiteral("q %1: %2 vs %3").arg(q).arg(*offline).arg(sql)));
            }
    }
    QVERIFY(!idem::latencyQuantile(idem::LatencyKind::Run, {}, 0.5));
    QVERIFY(!idem::latencyQuantile(idem::LatencyKind::Run, { { 3, 1 } }, 0));
    std::vector<std::pair<int, std::int64_t>> merged { { 1, 2 }, { 5, 1 } };
    idem::mergeSlotCounts(merged, { { 0, 1 }, { 5, 3 }, { 9, 1 } });
    QCOMPARE(merged, (std::vector<std::pair<int, std::int64_t>> { { 0, 1 }, { 1, 2 }, { 5, 4 }, { 9, 1 } }));
}

// An incident snapshot holds the folded minutes of its history window as stored, survives its
// JSON, and its report shows the percentiles; a histogram that does not add up is refused.
void TestLatency::snapshotCarriesTheFoldedMinutes()
{
    std::vector<Planted> rows;
    for (int i = 1; i <= 100; ++i)
        rows.push_back({ "acme", "charge", i * 2000LL, i * 3000LL, 1, 4 });
    plant(rows);
    foldFrom(6);
    QVERIFY(idem::rollupLatency(*m_owner, schema) >= 4);
    idem::SnapshotOptions o;
    o.historyMinutes = 30;
    const auto d = idem::readSnapshot(*m_owner, o, {}, {});
    QVERIFY(d.latency);
    QCOMPARE(d.latency->total, 3); // run, tts, attempts of one minute
    QCOMPARE(static_cast<int>(d.latency->rows.size()), 3);
    std::int64_t runs = 0;
    for (const auto& l : d.latency->rows) {
        QCOMPARE(l.operation, std::string("charge"));
        QCOMPARE(l.n, 100);
        if (l.kind == "run") {
            runs = l.n;
            QVERIFY(near(l.total, 5050.0 * 2000, 1e-9));
        }
    }
    QCOMPARE(runs, 100);

    const auto json = idem::snapshotToJson(d);
    const auto back = idem::snapshotFromJson(json);
    QVERIFY(back.latency);
    QCOMPARE(back.latency->rows.size(), d.latency->rows.size());
    for (std::size_t i = 0; i < d.latency->rows.size(); ++i) {
        QCOMPARE(back.latency->rows[i].slotCounts, d.latency->rows[i].slotCounts);
        QCOMPARE(back.latency->rows[i].bucket, d.latency->rows[i].bucket);
    }
    const auto html = idem::snapshotReportHtml(back, {});
    std::vector<double> runMs;
    for (const auto& p : rows)
        runMs.push_back(p.runUs / 1000.0);
    std::vector<std::pair<int, std::int64_t>> runSlots;
    for (const auto& l : back.latency->rows)
        if (l.kind == "run")
            runSlots = l.slotCounts;
    char p95[32];
    std::snprintf(p95, sizeof p95, "%.3g ms", *idem::latencyQuantile(idem::LatencyKind::Run, runSlots, 0.95));
    QVERIFY(near(std::atof(p95), nearestRank(runMs, 0.95), 0.037));
    QVERIFY2(html.find("<h2>Latency, 30 min</h2>") != std::string::npos, "no latency section");
    QVERIFY2(html.find(p95) != std::string::npos, p95);

    // Tampered: a count that no longer adds up to n, a descending slot list.
    auto bad = json;
    const auto at = bad.find("\"n\": 100");
    QVERIFY(at != std::string::npos);
    bad.replace(at, 8, "\"n\": 101");
    QVERIFY_EXCEPTION_THROWN(idem::snapshotFromJson(bad), idem::SnapshotFormatError);
    auto j = nlohmann::json::parse(json);
    j["latency_history"]["rows"][0]["slots"] = nlohmann::json::array({ 5, 4 });
    j["latency_history"]["rows"][0]["counts"] = nlohmann::json::array({ 50, 50 });
    QVERIFY_EXCEPTION_THROWN(idem::snapshotFromJson(j.dump()), idem::SnapshotFormatError);
    // A snapshot written before latency was added reads as having none.
    j.erase("latency_history");
    QVERIFY(!idem::snapshotFromJson(j.dump()).latency);
}

// An operator's annotation is one audit entry on the chain; the events of a window list it with
// the pauses and recovery actions, each with its scope, filtered by tenant and operation ('*'
// concerns everyone). Readers cannot annotate, workers cannot list; bad text writes nothing.
void TestLatency::annotationsAndEventsMarkTheWindow()
{
    auto op = login(operatorRole);
    auto reader = login(readerRole);
    auto worker = login(workerRole);
    const auto entries = [&] { return scalar(*m_owner, "SELECT count(*) FROM idem.task_idempotency_audit"); };
    const auto before = entries().toLongLong();
    const auto nowUs = [&] {
        return std::stoll(scalar(*m_owner, "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint").toStdString());
    };
    const auto from = nowUs();
    idem::Annotation a;
    a.text = "deploy v2.3.1";
    a.operation = "charge";
    a.actor = "tester";
    const auto mark = idem::annotate(*op, schema, a);
    idem::PauseRequest p;
    p.tenant = "beta";
    p.reason = "vendor incident";
    p.actor = "tester";
    idem::setPause(*op, schema, p);
    idem::resumePause(*op, schema, "beta", "*", "vendor back", "tester");
    QCOMPARE(entries().toLongLong(), before + 3);
    QCOMPARE(scalar(*m_owner, "SELECT action || '/' || reason || '/' || (after_image->>'operation') FROM"
                              " idem.task_idempotency_audit WHERE id = $1", mark.auditId),
        "annotate/deploy v2.3.1/charge"_b);

    const auto all = idem::listEvents(*reader, schema, from, nowUs() + 1);
    QCOMPARE(static_cast<int>(all.size()), 3);
    QCOMPARE(all[0].action, std::string("annotate"));
    QCOMPARE(all[0].operation, std::string("charge"));
    QCOMPARE(all[0].tenant, std::string("*"));
    QCOMPARE(all[0].atUs, mark.atUs);
    QCOMPARE(all[1].action, std::string("pause"));
    QCOMPARE(all[1].tenant, std::string("beta"));
    QCOMPARE(all[2].action, std::string("resume"));
    QVERIFY(all[0].actor.find("tester") != std::string::npos);
    // acme:refund is concerned by none of them; acme:charge by the annotation; beta:x by the pause.
    QCOMPARE(idem::listEvents(*reader, schema, from, nowUs() + 1, "acme", "refund").size(), std::size_t(0));
    QCOMPARE(idem::listEvents(*reader, schema, from, nowUs() + 1, "acme", "charge").size(), std::size_t(1));
    QCOMPARE(idem::listEvents(*reader, schema, from, nowUs() + 1, "beta", "x").size(), std::size_t(2));
    QCOMPARE(idem::listEvents(*reader, schema, from, nowUs() + 1, {}, {}, 1).size(), std::size_t(1));

    QCOMPARE(sqlstateOf(*reader, "SELECT * FROM idem.idem_annotate('x', 'me')"), std::string("42501"));
    QCOMPARE(sqlstateOf(*worker, "SELECT * FROM idem.idem_events(now() - interval '1 hour', now())"), std::string("42501"));
    for (const char* sql : { "SELECT * FROM idem.idem_annotate(NULL, 'me')", "SELECT * FROM idem.idem_annotate('   ', 'me')",
             "SELECT * FROM idem.idem_annotate('ok', 'me', NULL)", "SELECT * FROM idem.idem_annotate('ok', 'me', 'a:b')",
             "SELECT * FROM idem.idem_events(now(), now() - interval '1 second')",
             "SELECT * FROM idem.idem_events(now() - interval '1 hour', now(), NULL, NULL, 0)",
             "SELECT * FROM idem.idem_events(NULL, now())" })
        QCOMPARE(sqlstateOf(*op, sql), std::string("ID003"));
    QCOMPARE(entries().toLongLong(), before + 3);
    a.text = std::string("\x01\x02", 2);
    QVERIFY_EXCEPTION_THROWN(idem::annotate(*op, schema, a), std::invalid_argument);
    QCOMPARE(entries().toLongLong(), before + 3);

    // idemctl annotate by an operator lands on the chain, which still verifies.
    const auto dsn = QString::fromStdString(idem::test::loginDsn(m_db->dsn(), operatorRole, password));
    const auto run = idem::test::runProgram(idem::test::idemctlPath(),
        QStringList { QStringLiteral("annotate"), QStringLiteral("--text"), QStringLiteral("config change"),
            QStringLiteral("--json"), QStringLiteral("--dsn"), dsn },
        60000);
    QCOMPARE(run.exitCode, 0);
    QCOMPARE(QJsonDocument::fromJson(run.out.toUtf8()).object().value(QLatin1String("text")).toString(),
        QStringLiteral("config change"));
    const auto verify = idem::test::runProgram(idem::test::idemctlPath(),
        QStringList { QStringLiteral("audit"), QStringLiteral("verify"), QStringLiteral("--dsn"), dsn }, 60000);
    QCOMPARE(verify.exitCode, 0);
}

QTEST_GUILESS_MAIN(TestLatency)
#include "tst_latency.moc"
