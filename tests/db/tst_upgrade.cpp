#include <QtTest>

#include <QFile>
#include <QProcess>

#include <pqxx/pqxx>

#include "core/sha256.h"
#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/testdb.h"

// Issue 44 item 7: databases built from the files of older versions (tests/fixtures/schema-vN,
// each file as git holds it at that version), with rows, upgraded by today's idemctl migrate in
// one transaction; and a migrate that fails or is killed half-way leaves the old version whole.

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

using idem::test::CliRun;
using idem::test::describe;

CliRun idemctl(const QStringList& args) { return idem::test::runProgram(idem::test::idemctlPath(), args, 180000); }

struct FixtureFile {
    QString kind; // migration, function, roles
    QString name; // file name
    std::string text;
    std::string checksum;
};

// The files of schema vN in the order migrate applied them then, each checked against the
// checksum MANIFEST records (a file identical to today's is read from resources/sql).
std::vector<FixtureFile> fixtureFiles(int version)
{
    const QString source = qEnvironmentVariable("IDEM_SOURCE_DIR");
    if (source.isEmpty())
        throw std::runtime_error("IDEM_SOURCE_DIR is not set (run the test through ctest)");
    const QString dir = source + QStringLiteral("/tests/fixtures/schema-v%1/").arg(version);
    QFile manifest(dir + QStringLiteral("MANIFEST"));
    if (!manifest.open(QIODevice::ReadOnly))
        throw std::runtime_error("cannot read " + manifest.fileName().toStdString());
    std::vector<FixtureFile> out;
    for (const auto& raw : QString::fromUtf8(manifest.readAll()).split(QLatin1Char('\n'))) {
        const QString line = raw.trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
            continue;
        const auto f = line.split(QLatin1Char(' '));
        if (f.size() != 4)
            throw std::runtime_error("bad MANIFEST line: " + line.toStdString());
        const QString path
            = (f[2] == QLatin1String("current") ? source + QStringLiteral("/resources/sql/") : dir) + f[3];
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            throw std::runtime_error("cannot read " + path.toStdString());
        const QByteArray bytes = file.readAll();
        FixtureFile ff { f[1], f[3].section(QLatin1Char('/'), -1), bytes.toStdString(), {} };
        ff.checksum = idem::sha256Hex(ff.text);
        if (ff.checksum != f[0].toStdString())
            throw std::runtime_error(path.toStdString() + " is not the file schema v" + std::to_string(version)
                + " had: its SHA-256 is " + ff.checksum + ", MANIFEST says " + f[0].toStdString());
        out.push_back(std::move(ff));
    }
    return out;
}

// Schema idem as the idemctl of that version left it: each migration in its own transaction with
// its version recorded, then the function files (v14 on) recorded by checksum, then the roles.
int buildOldSchema(pqxx::connection& c, int version)
{
    pqxx::work w0(c);
    w0.exec("CREATE SCHEMA idem");
    w0.exec("CREATE TABLE idem.idem_schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
            " checksum TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
            " applied_by TEXT NOT NULL DEFAULT current_user)");
    w0.commit();
    int at = 0;
    for (const auto& f : fixtureFiles(version)) {
        pqxx::work w(c);
        // As migrate has always set it (a function's SET search_path FROM CURRENT keeps this text).
        w.exec("SELECT set_config('search_path', '\"idem\", pg_temp', true)");
        if (f.kind == QLatin1String("migration")) {
            at = f.name.left(4).toInt();
            w.exec(f.text);
            w.exec_params("INSERT INTO idem.idem_schema_version (version, name, checksum) VALUES ($1, $2, $3)", at,
                f.name.toStdString(), f.checksum);
        } else if (f.kind == QLatin1String("function")) {
            w.exec("SET LOCAL check_function_bodies = off");
            w.exec(QString::fromStdString(f.text)
                       .replace(QStringLiteral("@extschema@"), QStringLiteral("\"idem\""))
                       .toStdString());
            w.exec_params("INSERT INTO idem.idem_schema_functions (name, checksum) VALUES ($1, $2)",
                f.name.chopped(4).toStdString(), f.checksum);
        } else {
            w.exec(f.text);
        }
        w.commit();
    }
    return at;
}

// Tasks in every status, with the columns every version has had since v1; from v3 on, two
// recovery actions through that version's own functions, so its audit chain has entries.
void plantRows(pqxx::connection& c, int version)
{
    pqxx::work w(c);
    w.exec("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, error_message,"
           "   owner_token, lease_until, attempts, updated_at, created_at, next_attempt_at, max_attempts,"
           "   error_class, errors) VALUES"
           " ('t:op:processing', 'v1:aa', 'processing', NULL, NULL, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',"
           "   now() + interval '1 hour', 1, now() - interval '5 min', now() - interval '5 min', NULL, 5, NULL, '[]'),"
           " ('t:op:succeeded', 'v1:bb', 'succeeded', '{\"paid\": 12.5, \"id\": \"\u00e9\"}', NULL, NULL, NULL, 1,"
           "   now() - interval '4 min', now() - interval '6 min', NULL, 5, NULL, '[]'),"
           " ('t:op:retryable', 'v1:cc', 'retryable_failed', NULL, 'timeout', NULL, NULL, 2, now() - interval '3 min',"
           "   now() - interval '7 min', now() + interval '1 min', 5, 'retryable',"
           "   '[{\"attempt\": 2, \"class\": \"retryable\", \"message\": \"timeout\"}]'),"
           " ('t:op:failed', 'v1:dd', 'failed', NULL, 'card declined', NULL, NULL, 1, now() - interval '2 min',"
           "   now() - interval '8 min', NULL, 5, 'permanent',"
           "   '[{\"attempt\": 1, \"class\": \"permanent\", \"message\": \"card declined\"}]'),"
           " ('u:other:failed', 'v1:ee', 'failed', NULL, 'gone', NULL, NULL, 5, now() - interval '1 min',"
           "   now() - interval '9 min', NULL, 5, 'retryable', '[]')");
    w.exec("INSERT INTO idem.idem_counters (bucket, tenant, operation, outcome, n) VALUES"
           " (date_trunc('minute', now() - interval '2 min'), 't', 'op', 'acquired', 4),"
           " (date_trunc('minute', now() - interval '2 min'), 't', 'op', 'succeeded', 1)");
    if (version >= 3) {
        // The action functions of that version (idem_requeue and idem_fail have kept their
        // signatures since v3), each appending an audit entry hashed by that version's code.
        for (const char* key : { "t:op:failed", "t:op:retryable" }) {
            const auto r = w.exec_params("SELECT status, (extract(epoch FROM updated_at) * 1000000)::bigint"
                                         "  FROM idem.task_idempotency WHERE idempotency_key = $1",
                key);
            const std::string status = r[0][0].as<std::string>();
            const auto out = w.exec_params(status == "failed"
                    ? "SELECT * FROM idem.idem_requeue($1, $2, $3, 2, 'upgrade fixture: requeue', 'alice@desk')"
                    : "SELECT * FROM idem.idem_fail($1, $2, $3, 'upgrade fixture: give up', 'bob@desk')",
                key, status, r[0][1].as<long long>());
            if (out[0][0].as<std::string>() != "applied")
                throw std::runtime_error("the v" + std::to_string(version) + " action on " + key + " answered "
                    + out[0][0].as<std::string>());
        }
    }
    w.commit();
}

QString one(pqxx::connection& c, const std::string& sql)
{
    pqxx::read_transaction t(c);
    const auto r = t.exec(sql);
    return r[0][0].is_null() ? QStringLiteral("<null>") : qs(r[0][0].as<std::string>());
}

QStringList lines(pqxx::connection& c, const std::string& sql)
{
    pqxx::read_transaction t(c);
    QStringList out;
    for (const auto& row : t.exec(sql))
        out << qs(row[0].as<std::string>());
    return out;
}

// What the rows held before the upgrade: the columns every version has had.
QString taskRows(pqxx::connection& c)
{
    return one(c,
        "SELECT string_agg(row(idempotency_key, request_hash, status, result_json, error_message, owner_token,"
        "  lease_until, attempts, updated_at, created_at, next_attempt_at, max_attempts, error_class, errors)::text,"
        "  E'\\n' ORDER BY idempotency_key) FROM idem.task_idempotency");
}

QString auditRows(pqxx::connection& c)
{
    return one(c,
        "SELECT count(*) || E'\\n' || coalesce(string_agg(row(id, at, idempotency_key, action, reason, db_role,"
        "  os_user, client_host, before_image, after_image, prev_hash, entry_hash)::text, E'\\n' ORDER BY id), '')"
        "  FROM idem.task_idempotency_audit");
}

// The schema as a reader and a grantee see it, one object per line, independent of the order
// in which history added columns: two databases with equal lines have the same tables, columns,
// constraints, indexes, routines (bodies included) and grants.
QStringList schemaShape(pqxx::connection& c)
{
    QStringList out;
    out << lines(c, "SELECT 'schema acl ' || coalesce(nspacl::text, '-') FROM pg_namespace WHERE nspname = 'idem'");
    out << lines(c,
        "SELECT 'relation ' || c.relname || ' ' || c.relkind::text || ' acl '"
        "       || coalesce((SELECT string_agg(a::text, ',' ORDER BY a::text) FROM unnest(c.relacl) a), '-')"
        "  FROM pg_class c WHERE c.relnamespace = 'idem'::regnamespace ORDER BY 1");
    out << lines(c,
        "SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)"
        "       || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END"
        "       || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')"
        "       || CASE WHEN a.attidentity <> '' THEN ' identity ' || a.attidentity::text ELSE '' END"
        "       || coalesce(' acl ' || a.attacl::text, '')"
        "  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
        "  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum"
        " WHERE c.relnamespace = 'idem'::regnamespace AND c.relkind IN ('r', 'v', 'p') AND a.attnum > 0"
        "   AND NOT a.attisdropped ORDER BY 1");
    out << lines(c,
        "SELECT 'constraint ' || conrelid::regclass || ' ' || pg_get_constraintdef(c.oid)"
        "  FROM pg_constraint c WHERE c.connamespace = 'idem'::regnamespace ORDER BY 1");
    out << lines(c,
        "SELECT 'index ' || pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
        " WHERE c.relnamespace = 'idem'::regnamespace ORDER BY 1");
    out << lines(c,
        "SELECT 'routine ' || p.oid::regprocedure || ' ' || p.prokind::text || ' definer ' || p.prosecdef"
        "       || ' config ' || coalesce(p.proconfig::text, '-') || ' body ' || md5(p.prosrc)"
        "       || ' acl ' || coalesce((SELECT string_agg(a::text, ',' ORDER BY a::text) FROM unnest(p.proacl) a), '-')"
        "  FROM pg_proc p WHERE p.pronamespace = 'idem'::regnamespace ORDER BY 1");
    out << lines(c,
        "SELECT 'trigger ' || tgrelid::regclass || ' ' || pg_get_triggerdef(t.oid) FROM pg_trigger t"
        "  JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = 'idem'::regnamespace AND NOT t.tgisinternal"
        " ORDER BY 1");
    return out;
}

// Everything a failed migrate must leave as it found: the shape above and the recorded versions
// and function checksums.
QStringList everything(pqxx::connection& c)
{
    QStringList out = schemaShape(c);
    out << lines(c,
        "SELECT 'version ' || version || ' ' || name || ' ' || checksum FROM idem.idem_schema_version"
        " ORDER BY version");
    if (one(c, "SELECT to_regclass('idem.idem_schema_functions') IS NOT NULL") == QLatin1String("t"))
        out << lines(
            c, "SELECT 'function file ' || name || ' ' || checksum FROM idem.idem_schema_functions ORDER BY 1");
    out << taskRows(c) << auditRows(c);
    return out;
}

QString firstDifference(const QStringList& a, const QStringList& b)
{
    const QSet<QString> sa(a.begin(), a.end()), sb(b.begin(), b.end());
    QStringList only;
    for (const auto& l : a)
        if (!sb.contains(l))
            only << QStringLiteral("only before/upgraded: ") + l;
    for (const auto& l : b)
        if (!sa.contains(l))
            only << QStringLiteral("only after/fresh: ") + l;
    return only.mid(0, 12).join(QLatin1Char('\n'));
}

QStringList bundledFunctionNames()
{
    QStringList out;
    for (const auto& f : idem::bundledFunctions())
        out << qs(f.name);
    out.sort();
    return out;
}

} // namespace

class TestUpgrade : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { IDEM_REQUIRE_DATABASE(); }
    void upgradesOldDatabase_data();
    void upgradesOldDatabase();
    void toVersion();
    void failingStatementLeavesOldVersion();
    void killedMigrateLeavesOldVersion();
};

void TestUpgrade::upgradesOldDatabase_data()
{
    QTest::addColumn<int>("version");
    QTest::addRow("v1") << 1;
    QTest::addRow("v12") << 12;
    QTest::addRow("v18") << 18;
}

void TestUpgrade::upgradesOldDatabase()
{
    QFETCH(int, version);
    idem::test::ScratchDatabase db("upgrade_v" + std::to_string(version));
    auto c = db.connect();
    QCOMPARE(buildOldSchema(*c, version), version);
    plantRows(*c, version);
    {
        // A signature claim() no longer has, left beside it as CREATE OR REPLACE would leave one
        // when a file changes its arguments.
        pqxx::work w(*c);
        w.exec("CREATE FUNCTION idem.claim(p_stale_signature integer) RETURNS integer LANGUAGE sql AS 'SELECT 1'");
        w.commit();
    }
    const QString tasks = taskRows(*c);
    const QString audit = auditRows(*c);
    QVERIFY(audit.startsWith(version >= 3 ? QStringLiteral("2\n") : QStringLiteral("0\n")));

    const auto run = idemctl({ QStringLiteral("migrate"), QStringLiteral("--dsn"), qs(db.dsn()) });
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QVERIFY2(run.out.contains(
                 QStringLiteral("migrated from version %1 to %2").arg(version).arg(idem::latestSchemaVersion())),
        qPrintable(describe(run)));
    QVERIFY(idem::inspectSchema(*c, idem::SchemaName()).upToDate());

    // Every row and every audit entry as it was.
    QCOMPARE(taskRows(*c), tasks);
    QCOMPARE(auditRows(*c), audit);
    QCOMPARE(one(*c, "SELECT string_agg(outcome || '=' || n, ',' ORDER BY outcome) FROM idem.idem_counters"),
        QStringLiteral("acquired=4,succeeded=1"));

    // Each function file's routine, once, and nothing else: no signature an older file had survives.
    QCOMPARE(lines(*c, "SELECT p.proname FROM pg_proc p WHERE p.pronamespace = 'idem'::regnamespace ORDER BY 1"),
        bundledFunctionNames());

    // The same tables, columns, constraints, indexes, bodies and grants as a database migrated from
    // nothing (whose grants tst_privileges checks one by one).
    idem::test::ScratchDatabase fresh("upgrade_fresh", idem::test::migrated);
    auto f = fresh.connect();
    idem::migrate(*f, { idem::SchemaName() });
    const QStringList upgraded = schemaShape(*c), made = schemaShape(*f);
    QVERIFY2(upgraded == made, qPrintable(firstDifference(upgraded, made)));

    // The chain the old code hashed verifies with today's.
    const auto verify
        = idemctl({ QStringLiteral("audit"), QStringLiteral("verify"), QStringLiteral("--dsn"), qs(db.dsn()) });
    QVERIFY2(verify.exitCode == 0, qPrintable(describe(verify)));
    // Today's actions append to it, and it still verifies.
    const auto requeue = idemctl({ QStringLiteral("requeue"), QStringLiteral("u:other:failed"),
        QStringLiteral("--reason"), QStringLiteral("after the upgrade"), QStringLiteral("--dsn"), qs(db.dsn()) });
    QVERIFY2(requeue.exitCode == 0, qPrintable(describe(requeue)));
    QCOMPARE(one(*c, "SELECT status FROM idem.task_idempotency WHERE idempotency_key = 'u:other:failed'"),
        QStringLiteral("retryable_failed"));
    const auto again
        = idemctl({ QStringLiteral("audit"), QStringLiteral("verify"), QStringLiteral("--dsn"), qs(db.dsn()) });
    QVERIFY2(again.exitCode == 0, qPrintable(describe(again)));
}

void TestUpgrade::toVersion()
{
    idem::test::ScratchDatabase db("upgrade_to");
    auto c = db.connect();
    buildOldSchema(*c, 12);
    const QString dsn = qs(db.dsn());
    const int latest = idem::latestSchemaVersion();

    // Above the newest known: a usage error, before any connection.
    auto run = idemctl({ QStringLiteral("migrate"), QStringLiteral("--to-version"), QString::number(latest + 1),
        QStringLiteral("--dsn"), dsn });
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(QStringLiteral("this idemctl ships schema versions 1 to %1").arg(latest)),
        qPrintable(describe(run)));

    run = idemctl({ QStringLiteral("migrate"), QStringLiteral("--to-version"), QStringLiteral("15"),
        QStringLiteral("--dsn"), dsn });
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("migrated from version 12 to 15")), qPrintable(describe(run)));
    QCOMPARE(one(*c, "SELECT max(version) FROM idem.idem_schema_version"), QStringLiteral("15"));
    QCOMPARE(one(*c, "SELECT count(*) FROM idem.idem_schema_functions"), QStringLiteral("0"));

    // Below the current version: refused, nothing changed.
    const QStringList before = everything(*c);
    run = idemctl({ QStringLiteral("migrate"), QStringLiteral("--to-version"), QStringLiteral("14"),
        QStringLiteral("--dsn"), dsn });
    QCOMPARE(run.exitCode, 3);
    QVERIFY2(run.err.contains(QStringLiteral("is at version 15, past version 14: migrate never takes a schema back")),
        qPrintable(describe(run)));
    QCOMPARE(everything(*c), before);

    // To the current version: nothing to do.
    run = idemctl({ QStringLiteral("migrate"), QStringLiteral("--to-version"), QStringLiteral("15"),
        QStringLiteral("--dsn"), dsn });
    QVERIFY2(run.exitCode == 0 && run.out.contains(QStringLiteral("is at version 15")), qPrintable(describe(run)));

    run = idemctl({ QStringLiteral("migrate"), QStringLiteral("--dsn"), dsn });
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QVERIFY(idem::inspectSchema(*c, idem::SchemaName()).upToDate());
}

// A statement that fails in the last function file: the migrations applied before it in the same
// run are gone with it, the version and every body are v18's.
void TestUpgrade::failingStatementLeavesOldVersion()
{
    idem::test::ScratchDatabase db("upgrade_fail");
    auto c = db.connect();
    buildOldSchema(*c, 18);
    plantRows(*c, 18);
    const std::string last = idem::bundledFunctions().back().name;
    {
        pqxx::work w(*c);
        w.exec("CREATE FUNCTION public.upgrade_inject() RETURNS event_trigger LANGUAGE plpgsql AS $$"
               " BEGIN IF EXISTS (SELECT FROM pg_event_trigger_ddl_commands()"
               "   WHERE object_identity LIKE 'idem."
            + last
            + "(%') THEN"
              "   RAISE EXCEPTION 'injected failure in the last function file'; END IF; END $$");
        w.exec(
            "CREATE EVENT TRIGGER upgrade_inject ON ddl_command_end WHEN TAG IN ('CREATE FUNCTION', 'CREATE PROCEDURE')"
            " EXECUTE FUNCTION public.upgrade_inject()");
        w.commit();
    }
    const QStringList before = everything(*c);
    const auto run = idemctl({ QStringLiteral("migrate"), QStringLiteral("--dsn"), qs(db.dsn()) });
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(QStringLiteral("injected failure")) && run.err.contains(qs(last + ".sql"))
            && run.err.contains(QStringLiteral("nothing was applied, the schema is still at version 18")),
        qPrintable(describe(run)));
    const QStringList after = everything(*c);
    QVERIFY2(after == before, qPrintable(firstDifference(before, after)));
    QCOMPARE(one(*c, "SELECT max(version) FROM idem.idem_schema_version"), QStringLiteral("18"));
    QCOMPARE(one(*c, "SELECT to_regclass('idem.idem_jobs') IS NULL"), QStringLiteral("t"));

    {
        pqxx::work w(*c);
        w.exec("DROP EVENT TRIGGER upgrade_inject");
        w.commit();
    }
    const auto retry = idemctl({ QStringLiteral("migrate"), QStringLiteral("--dsn"), qs(db.dsn()) });
    QVERIFY2(retry.exitCode == 0, qPrintable(describe(retry)));
    QVERIFY(idem::inspectSchema(*c, idem::SchemaName()).upToDate());
}

// idemctl killed while its one transaction waits half-way (its migrations applied, the function
// files' table locked by another session): the database is v18 with v18's bodies, a second migrate
// meanwhile gives up naming the first, and a later one completes.
void TestUpgrade::killedMigrateLeavesOldVersion()
{
    idem::test::ScratchDatabase db("upgrade_kill");
    auto c = db.connect();
    buildOldSchema(*c, 18);
    plantRows(*c, 18);
    const QStringList before = everything(*c);

    auto blocker = db.connect();
    pqxx::work hold(*blocker);
    hold.exec("LOCK TABLE idem.idem_schema_functions IN ACCESS EXCLUSIVE MODE");

    QProcess p;
    p.setProcessEnvironment(idem::test::cleanEnvironment());
    p.start(idem::test::idemctlPath(), { QStringLiteral("migrate"), QStringLiteral("--dsn"), qs(db.dsn()) });
    QVERIFY(p.waitForStarted());
    // Its backend waits for the lock, having applied the migrations: it holds the advisory lock and
    // the new tables' locks.
    auto watch = db.connect();
    QString pid;
    QDeadlineTimer deadline(90000);
    while (!deadline.hasExpired()) {
        pid = one(*watch,
            "SELECT coalesce(max(a.pid)::text, '') FROM pg_stat_activity a WHERE a.application_name = 'idemctl migrate'"
            "   AND a.wait_event_type = 'Lock' AND a.wait_event = 'relation'"
            "   AND EXISTS (SELECT FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted)");
        if (!pid.isEmpty())
            break;
        QTest::qWait(100);
    }
    QVERIFY2(!pid.isEmpty(), "idemctl migrate never waited for the function files' table");
    QVERIFY(one(*watch,
                "SELECT count(*) FROM pg_locks WHERE pid = " + pid.toStdString()
                    + " AND locktype = 'relation' AND mode = 'AccessExclusiveLock' AND granted")
                .toInt()
        > 0);

    // A second migrate meanwhile: it waits for the first, then gives up, naming it.
    const auto second = idemctl({ QStringLiteral("migrate"), QStringLiteral("--lock-timeout"), QStringLiteral("1s"),
        QStringLiteral("--dsn"), qs(db.dsn()) });
    QCOMPARE(second.exitCode, 1);
    QVERIFY2(
        second.err.contains(QStringLiteral("pid ") + pid) && second.err.contains(QStringLiteral("Nothing was changed")),
        qPrintable(describe(second)));

    p.kill();
    QVERIFY(p.waitForFinished(10000));
    // The server learns of a dead client only when it next talks to it: end its backend, as a
    // crash of the database host or a restart would.
    QCOMPARE(one(*watch, "SELECT pg_terminate_backend(" + pid.toStdString() + ")"), QStringLiteral("t"));
    hold.commit();
    deadline.setRemainingTime(30000);
    while (!deadline.hasExpired()
        && one(*watch, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid.toStdString()) != QLatin1String("0"))
        QTest::qWait(50);

    const QStringList after = everything(*c);
    QVERIFY2(after == before, qPrintable(firstDifference(before, after)));

    const auto retry = idemctl({ QStringLiteral("migrate"), QStringLiteral("--dsn"), qs(db.dsn()) });
    QVERIFY2(retry.exitCode == 0, qPrintable(describe(retry)));
    QVERIFY(idem::inspectSchema(*c, idem::SchemaName()).upToDate());
    QCOMPARE(taskRows(*c), before.at(before.size() - 2));
}

QTEST_GUILESS_MAIN(TestUpgrade)
#include "tst_upgrade.moc"
