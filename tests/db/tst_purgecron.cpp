#include <QtTest>

#include <chrono>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "schema/migrate.h"
#include "operations/audit.h"
#include "tests/support/pgservers.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"

using namespace std::chrono_literals;
using idem::test::scalar;

// Issue 16: a scheduler in the database runs the purge. A cluster of its own with pg_cron
// preloaded (postgresql-15-cron); an operator login schedules CALL idem.idem_purge_run(...)
// every minute, pg_cron runs it in a session of its own (a libpq connection as that login, to
// 127.0.0.1: the cluster has no Unix socket), and the due rows go, with a finished run record
// and its audit entry, as the operator. With manual purges under approval (schema v22): the
// scheduled one is not manual and runs, known by pg_cron's own record of the run (v23); the same
// CALL by hand is refused, and so is one from a session that names itself pg_cron.
class TestPurgeCron : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void scheduledPurgeRuns();
};

void TestPurgeCron::scheduledPurgeRuns()
{
    auto cluster = idem::test::LocalCluster::primary({ QStringLiteral("shared_preload_libraries = 'pg_cron'"),
        QStringLiteral("cron.database_name = 'postgres'"), QStringLiteral("cron.host = '127.0.0.1'"),
        QStringLiteral("cron.log_run = on") });
    QVERIFY2(cluster->problem().isEmpty(),
        qPrintable(cluster->problem() + QStringLiteral("\n(pg_cron: apt-get install postgresql-15-cron)")));
    auto admin = idem::connect(cluster->dsn());
    idem::migrate(*admin, { idem::SchemaName() });
    {
        pqxx::work w(*admin);
        w.exec("CREATE EXTENSION pg_cron");
        // Schema v22: manual purges wait for a second person; a scheduled one is not manual.
        w.exec("SELECT idem.idem_set_change_approval(false, true, 3600, 'four eyes on manual purges', 'admin')");
        w.exec("CREATE ROLE cron_operator LOGIN");
        w.exec("GRANT idem_operator TO cron_operator");
        w.exec("GRANT USAGE ON SCHEMA cron TO cron_operator");
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, created_at, updated_at)"
               " SELECT 't:charge:' || i, 'h', 'succeeded', 1, now() - interval '41 days',"
               "        now() - CASE WHEN i <= 250 THEN interval '40 days' ELSE interval '1 day' END"
               "   FROM generate_series(1, 300) i");
        w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, attempts, error_class,"
               " created_at, updated_at) VALUES ('t:charge:failed', 'h', 'failed', 1, 'permanent',"
               " now() - interval '400 days', now() - interval '400 days')");
        w.commit();
    }
    QCOMPARE(scalar(*admin, "SELECT extversion FROM pg_extension WHERE extname = 'pg_cron'").isEmpty(), false);
    auto op = idem::connect(cluster->dsn() + " user=cron_operator");
    // The same purge by hand is a manual one: refused, nothing removed.
    try {
        pqxx::nontransaction(*op).exec("CALL idem.idem_purge_run(100, 30, 'by hand')");
        QFAIL("a purge by hand ran with manual purges needing approval");
    } catch (const pqxx::sql_error& e) {
        QVERIFY2(std::string(e.what()).find("manual purges need a second person's approval") != std::string::npos, e.what());
    }
    QCOMPARE(scalar(*admin, "SELECT count(*) FROM idem.idem_purge_runs"), "0");
    {
        pqxx::work w(*op);
        // pg_cron 1.4 schedules by the minute (the seconds syntax came with 1.5).
        w.exec("SELECT cron.schedule('idem-purge', '* * * * *', 'CALL idem.idem_purge_run(100, 30, ''pg_cron purge'')')");
        w.commit();
    }
    // Issue #40 item 5: a name any client sets is no proof. The login whose job calls the purge,
    // calling it by hand as "pg_cron", is refused (it once ran, at any size, with no approval).
    {
        auto spoof = idem::connect(cluster->dsn() + " user=cron_operator application_name=pg_cron");
        try {
            pqxx::nontransaction(*spoof).exec("CALL idem.idem_purge_run(100000, 30, 'spoofed')");
            QFAIL("a purge by hand named pg_cron ran with manual purges needing approval");
        } catch (const pqxx::sql_error& e) {
            QVERIFY2(std::string(e.what()).find("manual purges need a second person's approval") != std::string::npos,
                e.what());
        }
        QCOMPARE(scalar(*admin, "SELECT count(*) FROM idem.idem_purge_runs WHERE reason = 'spoofed'"), "0");
    }
    // The procedure commits its run record before the CALL returns (it commits between batches),
    // so pg_cron's own record of the run can still say "running" for a moment after "finished"
    // lands: wait for both.
    const bool ran = idem::test::waitUntil(
        [&] {
            return scalar(*admin, "SELECT count(*) FROM idem.idem_purge_runs WHERE state = 'finished'") != "0"
                && scalar(*admin, "SELECT count(*) FROM cron.job_run_details WHERE status IN ('succeeded', 'failed')") != "0";
        },
        150s);
    const auto details = scalar(*admin,
        "SELECT coalesce(string_agg(status || ': ' || coalesce(return_message, ''), '; ' ORDER BY runid), 'no run yet') FROM cron.job_run_details");
    QVERIFY2(ran, details.constData());
    QVERIFY2(details.startsWith("succeeded"), details.constData());
    QCOMPARE(scalar(*admin, "SELECT db_role || ' ' || application || ' ' || rows_removed || ' ' || batches || ' '"
                            " || (audit_id IS NOT NULL) FROM idem.idem_purge_runs WHERE state = 'finished' ORDER BY id LIMIT 1"),
        "cron_operator pg_cron 250 3 true");
    QCOMPARE(scalar(*admin, "SELECT count(*) FROM idem.task_idempotency"), "51");
    QCOMPARE(scalar(*admin, "SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key = 't:charge:failed'"), "1");
    QCOMPARE(scalar(*admin, "SELECT a.action || ' ' || a.reason || ' ' || a.db_role || ' ' || (a.after_image ->> 'rows_removed')"
                            " FROM idem.task_idempotency_audit a WHERE a.action = 'purge' ORDER BY a.id LIMIT 1"),
        "purge pg_cron purge cron_operator 250");
    const auto chain = idem::verifyChain(*admin, idem::SchemaName());
    QVERIFY2(chain.ok(), chain.detail.c_str());
    pqxx::work w(*op);
    w.exec("SELECT cron.unschedule('idem-purge')");
    w.commit();
}

QTEST_GUILESS_MAIN(TestPurgeCron)
#include "tst_purgecron.moc"
