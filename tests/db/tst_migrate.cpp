#include <QtTest>

#include <QProcess>
#include <QUuid>

#include <exception>
#include <latch>
#include <optional>
#include <pqxx/pqxx>
#include <thread>

#include "schema/migrate.h"
#include "tests/support/cliprocess.h"
#include "tests/support/testdb.h"

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// First field of the first row as text ("<null>" for NULL), with bound parameters.
template <typename... Params> QString value(pqxx::connection& c, const std::string& sql, Params&&... params)
{
    pqxx::read_transaction t(c);
    const pqxx::result r = t.exec_params(sql, std::forward<Params>(params)...);
    return r[0][0].is_null() ? QStringLiteral("<null>") : QString::fromStdString(r[0][0].as<std::string>());
}

template <typename... Params> QStringList lines(pqxx::transaction_base& t, const std::string& sql, Params&&... params)
{
    QStringList out;
    const pqxx::result r = t.exec_params(sql, std::forward<Params>(params)...);
    for (const auto& row : r)
        out << qs(row[0].as<std::string>());
    return out;
}

QStringList bundledNames()
{
    QStringList out;
    for (const auto& m : idem::bundledMigrations())
        out << qs(m.name);
    return out;
}

QStringList toQt(const std::vector<std::string>& v)
{
    QStringList out;
    for (const auto& s : v)
        out << qs(s);
    return out;
}

// Everything migrate could touch in a schema, one catalog object per line, so that a refused
// run can be shown to have changed nothing (grants included) and a diff names the object.
QStringList catalogFingerprint(pqxx::connection& c, const std::string& schema)
{
    pqxx::read_transaction t(c);
    QStringList out;
    out << lines(t,
        "SELECT 'schema ' || nspname || ' owner ' || pg_get_userbyid(nspowner) || ' acl '"
        "       || coalesce(nspacl::text, '-') FROM pg_namespace WHERE nspname = $1",
        schema);
    out << lines(t,
        "SELECT 'relations ' || count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = $1",
        schema);
    out << lines(t,
        "SELECT 'relation ' || c.relname || ' ' || c.relkind::text || ' owner ' || pg_get_userbyid(c.relowner)"
        "       || ' acl ' || coalesce(c.relacl::text, '-')"
        "  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1"
        " ORDER BY c.relname",
        schema);
    out << lines(t,
        "SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable"
        "       || ' ' || coalesce(column_default, '-')"
        "  FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position",
        schema);
    out << lines(t,
        "SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(c.oid)"
        "  FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1"
        " ORDER BY 1",
        schema);
    out << lines(t,
        "SELECT 'function ' || p.oid::regprocedure || ' acl ' || coalesce(p.proacl::text, '-')"
        "  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1",
        schema);
    const auto exists = t.exec_params("SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL",
        '"' + schema + "\".idem_schema_version", '"' + schema + "\".task_idempotency");
    if (exists[0][0].as<bool>())
        out << lines(t, "SELECT 'version ' || v::text FROM \"" + schema + "\".idem_schema_version v ORDER BY version");
    if (exists[0][1].as<bool>())
        out << lines(t,
            "SELECT 'rows ' || count(*) || ' ' || coalesce(md5(string_agg(t::text, ',' ORDER BY"
            " idempotency_key)), '-') FROM \""
                + schema + "\".task_idempotency t");
    return out;
}

using idem::test::CliRun;
using idem::test::describe;

CliRun idemctl(const QStringList& args)
{
    return idem::test::runProgram(idem::test::idemctlPath(), args, 120000);
}

// The article's table, verbatim (idempotent-task-execution, "用持久化状态处理重复请求").
constexpr const char* articleDdl = R"(CREATE TABLE task_idempotency (
    idempotency_key TEXT PRIMARY KEY,
    request_hash    TEXT NOT NULL,
    status          TEXT NOT NULL
                    CHECK (status IN ('processing', 'succeeded', 'retryable_failed', 'failed')),
    result_json     JSONB,
    error_message   TEXT,
    owner_token     UUID,
    lease_until     TIMESTAMPTZ,
    attempts        INTEGER NOT NULL DEFAULT 0,
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);)";

} // namespace

class TestMigrate : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { IDEM_REQUIRE_DATABASE(); }

    void emptyDatabase();
    void rerunIsNoOp();
    void adoptsArticleTable_data();
    void adoptsArticleTable();
    void refuses_data();
    void refuses();
    void refusesThroughIdemctl_data() { refuses_data(); }
    void refusesThroughIdemctl();
    void noRolesAsDatabaseOwner();
    void schemaNameValidation_data();
    void schemaNameValidation();
    void idemctlBadInput_data();
    void idemctlBadInput();
    void concurrentMigrate_data();
    void concurrentMigrate();
    void everyFunctionIsOneFile();
    void changedFunctionFileIsReapplied();
    void checksumsFromBeforeTheSplitAreAccepted();
};

void TestMigrate::emptyDatabase()
{
    idem::test::ScratchDatabase db("migrate_empty");
    auto c = db.connect();
    const auto report = idem::migrate(*c, { idem::SchemaName() });
    QCOMPARE(report.fromVersion, 0);
    QCOMPARE(report.toVersion, idem::latestSchemaVersion());
    QCOMPARE(toQt(report.applied), bundledNames());
    QVERIFY(report.rolesApplied);
    QVERIFY(!report.adoptedExistingTable);

    pqxx::read_transaction t(*c);
    // Later migrations may append columns; these come first, in this order.
    const auto columnsOf = [&t](const char* table) {
        return lines(t,
            "SELECT column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '-')"
            "  FROM information_schema.columns WHERE table_schema = 'idem' AND table_name = $1"
            " ORDER BY ordinal_position",
            std::string(table));
    };
    const QStringList taskColumns {
        QStringLiteral("idempotency_key text NO -"),
        QStringLiteral("request_hash text NO -"),
        QStringLiteral("status text NO -"),
        QStringLiteral("result_json jsonb YES -"),
        QStringLiteral("error_message text YES -"),
        QStringLiteral("owner_token uuid YES -"),
        QStringLiteral("lease_until timestamp with time zone YES -"),
        QStringLiteral("attempts integer NO 0"),
        QStringLiteral("updated_at timestamp with time zone NO now()"),
        QStringLiteral("created_at timestamp with time zone NO now()"),
        QStringLiteral("next_attempt_at timestamp with time zone YES -"),
        QStringLiteral("max_attempts integer NO 5"),
        QStringLiteral("error_class text YES -"),
        QStringLiteral("errors jsonb NO '[]'::jsonb"),
    };
    QCOMPARE(columnsOf("task_idempotency").mid(0, taskColumns.size()), taskColumns);
    const QStringList counterColumns {
        QStringLiteral("bucket timestamp with time zone NO -"),
        QStringLiteral("tenant text NO -"),
        QStringLiteral("operation text NO -"),
        QStringLiteral("outcome text NO -"),
        QStringLiteral("n bigint NO -"),
    };
    QCOMPARE(columnsOf("idem_counters").mid(0, counterColumns.size()), counterColumns);
    QStringList auditNames;
    for (const auto& line : columnsOf("task_idempotency_audit"))
        auditNames << line.section(QLatin1Char(' '), 0, 0);
    const QStringList auditColumns { QStringLiteral("id"), QStringLiteral("at"), QStringLiteral("idempotency_key"),
        QStringLiteral("action"), QStringLiteral("reason"), QStringLiteral("db_role"), QStringLiteral("os_user"),
        QStringLiteral("client_host"), QStringLiteral("before_image"), QStringLiteral("after_image"),
        QStringLiteral("prev_hash"), QStringLiteral("entry_hash") };
    QCOMPARE(auditNames.mid(0, auditColumns.size()), auditColumns);
    QCOMPARE(
        lines(t, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'",
            std::string("idem.task_idempotency")),
        QStringList { QStringLiteral("PRIMARY KEY (idempotency_key)") });
    QCOMPARE(
        lines(t, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'",
            std::string("idem.idem_counters")),
        QStringList { QStringLiteral("PRIMARY KEY (bucket, tenant, operation, outcome)") });

    // The console's polls: each partial index, with its column and predicate.
    const std::pair<const char*, const char*> partial[] = {
        { "task_idempotency_processing_idx",
            "USING btree (lease_until) INCLUDE (created_at, idempotency_key) WHERE (status = 'processing'::text)" },
        { "task_idempotency_unfinished_idx",
            "USING btree (updated_at) INCLUDE (status, error_class, lease_until, created_at, attempts, "
            "idempotency_key) WHERE (status <> 'succeeded'::text)" },
        { "task_idempotency_retry_due_idx",
            "USING btree (next_attempt_at) INCLUDE (created_at, idempotency_key) WHERE (status = 'retryable_failed'::text)" },
        // The bounded tick's own paths (schema v8)
        { "task_idempotency_uncertain_idx",
            "USING btree (next_attempt_at) INCLUDE (idempotency_key) WHERE ((status = 'retryable_failed'::text) AND "
            "(error_class = 'unknown'::text))" },
        { "task_idempotency_failed_permanent_idx",
            "USING btree (updated_at) INCLUDE (idempotency_key) WHERE ((status = 'failed'::text) AND "
            "(error_class = 'permanent'::text))" },
        { "task_idempotency_failed_exhausted_idx",
            "USING btree (updated_at) INCLUDE (idempotency_key) WHERE ((status = 'failed'::text) AND "
            "(error_class IS DISTINCT FROM 'permanent'::text))" },
        { "task_idempotency_retried_idx", "USING btree (updated_at) WHERE (attempts > 1)" },
        // The purge's path (schema v9): succeeded rows by operation and completion time
        { "task_idempotency_succeeded_idx",
            "USING btree (split_part(idempotency_key, ':'::text, 2), updated_at) WHERE (status = 'succeeded'::text)" },
    };
    for (const auto& [name, tail] : partial) {
        const QStringList defs = lines(t,
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'idem'"
            " AND tablename = 'task_idempotency' AND indexname = $1",
            std::string(name));
        QVERIFY2(defs.size() == 1, name);
        QVERIFY2(defs[0].endsWith(QString::fromLatin1(tail)), qPrintable(defs[0]));
    }

    QCOMPARE(lines(t, "SELECT to_regclass('idem.task_idempotency_audit')::text"),
        QStringList { QStringLiteral("idem.task_idempotency_audit") });
    QCOMPARE(lines(t, "SELECT to_regclass('idem.idem_counters')::text"),
        QStringList { QStringLiteral("idem.idem_counters") });

    // Version 1, recorded with the SHA-256 of exactly the SQL this binary ran, which is the file.
    const auto& first = idem::bundledMigrations()[0];
    QCOMPARE(first.version, 1);
    // ctest names the source tree: ccache builds with relative paths, so __FILE__ (and with it
    // QFINDTESTDATA) cannot locate it.
    const QString sourceDir = qEnvironmentVariable("IDEM_SOURCE_DIR");
    QVERIFY2(!sourceDir.isEmpty(), "IDEM_SOURCE_DIR is not set (run the test through ctest)");
    QFile file(sourceDir + QStringLiteral("/resources/sql/migrations/0001_initial.sql"));
    QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
    QCOMPARE(file.readAll().toStdString(), first.sql);
    QCOMPARE(lines(t, "SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex')", first.sql),
        QStringList { qs(first.checksum) });
    QCOMPARE(lines(t,
                 "SELECT version || ' ' || name || ' ' || checksum || ' ' || applied_by"
                 "       || ' ' || (applied_at <= now()) FROM idem.idem_schema_version WHERE version = 1"),
        QStringList { QStringLiteral("1 0001_initial.sql ") + qs(first.checksum) + QStringLiteral(" postgres true") });
    QCOMPARE(lines(t, "SELECT count(*)::text FROM idem.idem_schema_version"),
        QStringList { QString::number(idem::bundledMigrations().size()) });
    t.commit();

    // The CHECK constraints reject what the state machine does not know; a plain row gets the defaults.
    {
        pqxx::work w(*c);
        QVERIFY_THROWS_EXCEPTION(pqxx::check_violation,
            w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status)"
                          " VALUES ($1, $2, $3)",
                "k-bogus", "h", "bogus"));
    }
    {
        pqxx::work w(*c);
        QVERIFY_THROWS_EXCEPTION(pqxx::check_violation,
            w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status,"
                          " error_class) VALUES ($1, $2, $3, $4)",
                "k-class", "h", "failed", "bogus"));
    }
    {
        pqxx::work w(*c);
        w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status) VALUES ($1, $2, $3)",
            "k-plain", "h", "processing");
        w.commit();
    }
    QCOMPARE(value(*c,
                 "SELECT attempts || ' ' || max_attempts || ' ' || errors::text || ' ' || (created_at = updated_at)"
                 "  FROM idem.task_idempotency WHERE idempotency_key = $1",
                 "k-plain"),
        QStringLiteral("0 5 [] true"));
    QCOMPARE(value(*c, "SELECT count(*) FROM idem.task_idempotency"), QStringLiteral("1"));
}

void TestMigrate::rerunIsNoOp()
{
    idem::test::ScratchDatabase db("migrate_rerun");
    auto c = db.connect();
    idem::migrate(*c, { idem::SchemaName() });
    {
        pqxx::work w(*c);
        w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, error_message,"
                      " attempts, updated_at, created_at) VALUES ($1, $2, 'retryable_failed', $3, 2,"
                      " timestamptz '2024-01-02 03:04:05+00', timestamptz '2024-01-01 00:00:00+00')",
            "between-runs", "hash-1", "timeout");
        w.commit();
    }
    const auto rowBefore
        = value(*c, "SELECT t::text FROM idem.task_idempotency t WHERE idempotency_key = $1", "between-runs");
    const QStringList before = catalogFingerprint(*c, "idem");
    QVERIFY(!before.contains(QStringLiteral("relations 0")));

    const auto report = idem::migrate(*c, { idem::SchemaName() });
    QCOMPARE(report.applied.size(), std::size_t(0));
    QCOMPARE(report.fromVersion, idem::latestSchemaVersion());
    QCOMPARE(report.toVersion, idem::latestSchemaVersion());
    QVERIFY(!report.adoptedExistingTable);
    // applied_at included: version rows are compared whole.
    QCOMPARE(catalogFingerprint(*c, "idem"), before);
    QCOMPARE(
        value(*c, "SELECT t::text FROM idem.task_idempotency t WHERE idempotency_key = $1", "between-runs"), rowBefore);

    const auto state = idem::inspectSchema(*c, idem::SchemaName());
    QVERIFY(state.upToDate());
}

void TestMigrate::adoptsArticleTable_data()
{
    QTest::addColumn<QString>("schema");
    QTest::addRow("public") << QStringLiteral("public");
    QTest::addRow("named schema") << QStringLiteral("legacy_tasks");
}

void TestMigrate::adoptsArticleTable()
{
    QFETCH(QString, schema);
    const idem::SchemaName name(schema.toStdString());
    const int rows = 10000;
    idem::test::ScratchDatabase db("migrate_adopt");
    auto c = db.connect();
    {
        pqxx::work w(*c);
        if (name.name() != "public")
            w.exec("CREATE SCHEMA " + name.quoted());
        w.exec_params("SELECT set_config('search_path', $1, true)", name.quoted());
        w.exec(articleDdl);
        w.exec_params(
            "INSERT INTO task_idempotency (idempotency_key, request_hash, status, result_json, error_message,"
            "                              owner_token, lease_until, attempts, updated_at)"
            " SELECT format('tenant-%s:charge:order-%s', i % 7, i), md5('request-' || i),"
            "        (ARRAY['processing', 'succeeded', 'retryable_failed', 'failed'])[1 + i % 4],"
            "        CASE WHEN i % 4 = 1 THEN jsonb_build_object('charged', i) END,"
            "        CASE WHEN i % 4 >= 2 THEN 'gateway refused order ' || i END,"
            "        CASE WHEN i % 4 = 0 THEN md5(i::text)::uuid END,"
            "        CASE WHEN i % 4 = 0 THEN timestamptz '2024-05-01 12:00+00' + i * interval '1 second' END,"
            "        1 + i % 3,"
            "        timestamptz '2024-05-01 00:00+00' + i * interval '1 second'"
            "   FROM generate_series(1, $1::int) AS i",
            rows);
        w.commit();
    }
    const std::string table = name.qualify("task_idempotency");
    const std::string summarySql
        = "SELECT count(*) || ' p=' || count(*) FILTER (WHERE status = 'processing')"
          " || ' s=' || count(*) FILTER (WHERE status = 'succeeded')"
          " || ' r=' || count(*) FILTER (WHERE status = 'retryable_failed')"
          " || ' f=' || count(*) FILTER (WHERE status = 'failed')"
          " || ' ' || md5(string_agg(idempotency_key || request_hash, ',' ORDER BY idempotency_key))"
          " || ' ' || md5(string_agg(ROW(idempotency_key, request_hash, status, result_json, error_message,"
          "     owner_token, lease_until, attempts, updated_at)::text, ',' ORDER BY idempotency_key)) FROM "
        + table;
    const QString before = value(*c, summarySql);
    QVERIFY2(before.startsWith(QStringLiteral("10000 p=2500 s=2500 r=2500 f=2500 ")), qPrintable(before));

    const auto report = idem::migrate(*c, { name });
    QVERIFY(report.adoptedExistingTable);
    QCOMPARE(report.fromVersion, 0);
    QCOMPARE(toQt(report.applied), bundledNames());
    QCOMPARE(value(*c, summarySql), before);

    // What the adoption filled in, per row; each name counts the rows that break it.
    const QString violations = value(*c,
        "SELECT concat_ws(' ',"
        " 'created_at', count(*) FILTER (WHERE created_at IS DISTINCT FROM updated_at),"
        " 'failed_class', count(*) FILTER (WHERE status = 'failed'"
        "     AND error_class IS DISTINCT FROM 'permanent'),"
        " 'retryable_class', count(*) FILTER (WHERE status = 'retryable_failed'"
        "     AND error_class IS DISTINCT FROM 'retryable'),"
        " 'other_class', count(*) FILTER (WHERE status IN ('processing', 'succeeded')"
        "     AND error_class IS NOT NULL),"
        " 'errors_kept', count(*) FILTER (WHERE error_message IS NOT NULL"
        "     AND (jsonb_array_length(errors) <> 1"
        "          OR errors->0->>'message' IS DISTINCT FROM error_message)),"
        " 'errors_empty', count(*) FILTER (WHERE error_message IS NULL"
        "     AND errors <> '[]'::jsonb),"
        " 'retry_due', count(*) FILTER (WHERE status = 'retryable_failed'"
        "     AND next_attempt_at IS NULL),"
        " 'no_retry', count(*) FILTER (WHERE status <> 'retryable_failed'"
        "     AND next_attempt_at IS NOT NULL),"
        " 'max_attempts', count(*) FILTER (WHERE max_attempts IS NULL"
        "     OR max_attempts < attempts),"
        " 'with_errors', count(*) FILTER (WHERE jsonb_array_length(errors) = 1))"
        " FROM "
            + table);
    QCOMPARE(violations,
        QStringLiteral("created_at 0 failed_class 0 retryable_class 0 other_class 0 errors_kept 0 errors_empty 0"
                       " retry_due 0 no_retry 0 max_attempts 0 with_errors 5000"));

    // Everything landed in the target schema and nothing in the default one.
    QCOMPARE(
        value(*c, "SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AND to_regclass($3) IS NOT NULL",
            name.qualify("idem_counters"), name.qualify("task_idempotency_audit"), name.qualify("idem_schema_version")),
        QStringLiteral("t"));
    QCOMPARE(value(*c, "SELECT count(*) FROM pg_namespace WHERE nspname = 'idem'"), QStringLiteral("0"));
    QCOMPARE(value(*c, "SELECT checksum FROM " + name.qualify("idem_schema_version") + " WHERE version = 1"),
        qs(idem::bundledMigrations()[0].checksum));

    // A second run finds nothing left to adopt.
    const auto again = idem::migrate(*c, { name });
    QVERIFY(again.applied.empty());
    QVERIFY(!again.adoptedExistingTable);
    QCOMPARE(value(*c, summarySql), before);
}

void TestMigrate::refuses_data()
{
    QTest::addColumn<QString>("tamperSql");
    QTest::addColumn<QString>("tamperValue");
    QTest::addColumn<QStringList>("mustMention");
    QTest::addRow("newer schema version")
        << QStringLiteral(
               "INSERT INTO idem.idem_schema_version (version, name, checksum) VALUES (999, '0999_future.sql', $1)")
        << QString(64, QLatin1Char('f')) << QStringList { QStringLiteral("newer"), QStringLiteral("999") };
    QTest::addRow("checksum mismatch") << QStringLiteral(
        "UPDATE idem.idem_schema_version SET checksum = $1 WHERE version = 1")
                                       << QString(64, QLatin1Char('0'))
                                       << QStringList { QStringLiteral("0001_initial.sql"),
                                              QStringLiteral("checksum") };
}

// Migrated without roles first: a run that did not refuse would at least add the grants,
// which the fingerprint would show.
void TestMigrate::refuses()
{
    QFETCH(QString, tamperSql);
    QFETCH(QString, tamperValue);
    QFETCH(QStringList, mustMention);
    idem::test::ScratchDatabase db("migrate_refuse");
    auto c = db.connect();
    idem::migrate(*c, { idem::SchemaName(), false });
    {
        pqxx::work w(*c);
        w.exec_params(tamperSql.toStdString(), tamperValue.toStdString());
        w.commit();
    }
    const QStringList before = catalogFingerprint(*c, "idem");

    QString message;
    try {
        idem::migrate(*c, { idem::SchemaName(), true });
        QFAIL("migrate did not refuse");
    } catch (const idem::MigrationRefused& e) {
        message = QString::fromUtf8(e.what());
    }
    for (const auto& word : mustMention)
        QVERIFY2(message.contains(word), qPrintable(message));
    QCOMPARE(catalogFingerprint(*c, "idem"), before);
    QCOMPARE(
        value(*c, "SELECT has_table_privilege('idem_reader', 'idem.task_idempotency', 'SELECT')"), QStringLiteral("f"));

    const auto state = idem::inspectSchema(*c, idem::SchemaName());
    QVERIFY(!state.upToDate());
    QVERIFY(!state.problems.empty());
}

void TestMigrate::refusesThroughIdemctl()
{
    QFETCH(QString, tamperSql);
    QFETCH(QString, tamperValue);
    QFETCH(QStringList, mustMention);
    idem::test::ScratchDatabase db("migrate_refuse_cli");
    auto c = db.connect();
    const auto first
        = idemctl({ QStringLiteral("migrate"), QStringLiteral("--no-roles"), QStringLiteral("--dsn"), qs(db.dsn()) });
    QVERIFY2(first.exitCode == 0, qPrintable(describe(first)));
    QCOMPARE(value(*c, "SELECT string_agg(name, ',' ORDER BY version) FROM idem.idem_schema_version"),
        bundledNames().join(QLatin1Char(',')));
    {
        pqxx::work w(*c);
        w.exec_params(tamperSql.toStdString(), tamperValue.toStdString());
        w.commit();
    }
    const QStringList before = catalogFingerprint(*c, "idem");

    const auto run = idemctl({ QStringLiteral("migrate"), QStringLiteral("--dsn"), qs(db.dsn()) });
    QVERIFY2(run.exitCode == 3, qPrintable(describe(run)));
    QVERIFY2(run.err.contains(QStringLiteral("refused, nothing changed")), qPrintable(describe(run)));
    for (const auto& word : mustMention)
        QVERIFY2(run.err.contains(word), qPrintable(describe(run)));
    QCOMPARE(catalogFingerprint(*c, "idem"), before);

    const auto status
        = idemctl({ QStringLiteral("migrate"), QStringLiteral("--status"), QStringLiteral("--dsn"), qs(db.dsn()) });
    QVERIFY2(status.exitCode == 3 && status.out.contains(QStringLiteral("problem: ")), qPrintable(describe(status)));
    QCOMPARE(catalogFingerprint(*c, "idem"), before);
}

// A database owner without CREATEROLE: --no-roles migrates and says what to run by hand;
// without it the role script either works (the roles exist, so there is nothing to create)
// or fails saying to use --no-roles. The roles are cluster-wide, so which depends on the cluster.
void TestMigrate::noRolesAsDatabaseOwner()
{
    const std::string owner = "idem_t_owner";
    const std::string password = QUuid::createUuid().toString(QUuid::WithoutBraces).toStdString();
    idem::test::createLoginRole(owner, password, "");
    idem::test::ScratchDatabase db("migrate_owner");
    {
        auto admin = db.connect();
        pqxx::work w(*admin);
        w.exec("ALTER ROLE " + owner + " NOSUPERUSER NOCREATEROLE NOCREATEDB");
        w.exec("ALTER DATABASE \"" + db.name() + "\" OWNER TO " + owner);
        w.exec("GRANT CREATE ON DATABASE \"" + db.name() + "\" TO " + owner);
        w.commit();
    }
    auto c = db.connect();
    QCOMPARE(
        value(*c, "SELECT rolcreaterole OR rolsuper FROM pg_roles WHERE rolname = $1", owner), QStringLiteral("f"));
    const std::string ownerDsn
        = idem::test::loginDsn(db.dsn(), owner, password);

    const auto noRoles
        = idemctl({ QStringLiteral("migrate"), QStringLiteral("--no-roles"), QStringLiteral("--dsn"), qs(ownerDsn) });
    QVERIFY2(noRoles.exitCode == 0, qPrintable(describe(noRoles)));
    for (const auto& word : { "Roles and grants were not applied", "CREATEROLE", "roles.sql", "--print-roles" })
        QVERIFY2(noRoles.out.contains(QString::fromLatin1(word)), qPrintable(describe(noRoles)));
    QCOMPARE(value(*c, "SELECT string_agg(name, ',' ORDER BY version) FROM idem.idem_schema_version"),
        bundledNames().join(QLatin1Char(',')));
    QCOMPARE(
        value(*c, "SELECT string_agg(DISTINCT tableowner, ',') FROM pg_tables WHERE schemaname = 'idem'"), qs(owner));
    QCOMPARE(
        value(*c, "SELECT has_table_privilege('idem_reader', 'idem.task_idempotency', 'SELECT')"), QStringLiteral("f"));

    const bool rolesReady = value(*c,
                                "SELECT count(*) = 3 AND pg_has_role('idem_operator', 'idem_reader', 'MEMBER')"
                                "  FROM pg_roles WHERE rolname IN ('idem_reader', 'idem_operator', 'idem_worker')")
        == QLatin1String("t");
    const auto withRoles = idemctl({ QStringLiteral("migrate"), QStringLiteral("--dsn"), qs(ownerDsn) });
    if (rolesReady) {
        // Nothing to create: the owner grants on its own objects.
        QVERIFY2(withRoles.exitCode == 0, qPrintable(describe(withRoles)));
        QVERIFY2(withRoles.out.contains(QStringLiteral("grants are in place")), qPrintable(describe(withRoles)));
        QCOMPARE(value(*c,
                     "SELECT has_table_privilege('idem_reader', 'idem.task_idempotency', 'SELECT')"
                     "   AND has_function_privilege('idem_worker', 'idem.claim(text, text, uuid, bigint, integer, bigint)',"
                     "                              'EXECUTE')"
                     "   AND NOT has_table_privilege('idem_worker', 'idem.task_idempotency', 'INSERT')"
                     "   AND NOT has_table_privilege('idem_operator', 'idem.task_idempotency', 'UPDATE')"),
            QStringLiteral("t"));
    } else {
        QVERIFY2(withRoles.exitCode == 1, qPrintable(describe(withRoles)));
        QVERIFY2(withRoles.err.contains(QStringLiteral("--no-roles"))
                && withRoles.err.contains(QStringLiteral("CREATEROLE")),
            qPrintable(describe(withRoles)));
        QCOMPARE(value(*c, "SELECT has_table_privilege('idem_reader', 'idem.task_idempotency', 'SELECT')"),
            QStringLiteral("f"));
    }
}

void TestMigrate::schemaNameValidation_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("valid");
    QTest::addRow("injection") << QStringLiteral("x\"; drop") << false;
    QTest::addRow("empty") << QString() << false;
    QTest::addRow("uppercase") << QStringLiteral("Idem") << false;
    QTest::addRow("leading digit") << QStringLiteral("1idem") << false;
    QTest::addRow("dash") << QStringLiteral("idem-x") << false;
    QTest::addRow("space") << QStringLiteral("idem x") << false;
    QTest::addRow("reserved pg_") << QStringLiteral("pg_catalog") << false;
    QTest::addRow("64 bytes") << QString(64, QLatin1Char('a')) << false;
    QTest::addRow("non-ascii") << QStringLiteral("id\u00e9m") << false;
    QTest::addRow("default") << QStringLiteral("idem") << true;
    QTest::addRow("public") << QStringLiteral("public") << true;
    QTest::addRow("underscore digits") << QStringLiteral("_idem_2") << true;
    QTest::addRow("63 bytes") << QString(63, QLatin1Char('a')) << true;
}

// Pure validation: the constructor has no connection to talk to, so a bad name never gets
// as far as any I/O (idemctlBadInput shows the same from the command line).
void TestMigrate::schemaNameValidation()
{
    QFETCH(QString, name);
    QFETCH(bool, valid);
    if (valid) {
        const idem::SchemaName s(name.toStdString());
        QCOMPARE(qs(s.quoted()), QLatin1Char('"') + name + QLatin1Char('"'));
    } else {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, idem::SchemaName(name.toStdString()));
    }
}

void TestMigrate::idemctlBadInput_data()
{
    QTest::addColumn<QString>("dsnKind");
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QStringList>("mustMention");
    QTest::addRow("nothing listening") << QStringLiteral("port1") << QStringList() << 1
                                       << QStringList { QStringLiteral("cannot connect") };
    QTest::addRow("wrong password") << QStringLiteral("wrongPassword") << QStringList() << 1
                                    << QStringList { QStringLiteral("cannot connect"),
                                           QStringLiteral("authentication failed") };
    QTest::addRow("unknown user") << QStringLiteral("unknownUser") << QStringList() << 1
                                  << QStringList { QStringLiteral("cannot connect"),
                                         QStringLiteral("authentication failed") };
    QTest::addRow("malformed dsn") << QStringLiteral("malformed") << QStringList() << 1
                                   << QStringList { QStringLiteral("cannot connect"),
                                          QStringLiteral("invalid connection string") };
    // Rejected before connecting: the unreachable server is never asked.
    QTest::addRow("bad schema, unreachable server")
        << QStringLiteral("port1") << QStringList { QStringLiteral("--schema"), QStringLiteral("x\"; drop") } << 2
        << QStringList { QStringLiteral("schema name") };
    QTest::addRow("bad schema, reachable server")
        << QStringLiteral("valid") << QStringList { QStringLiteral("--schema"), QStringLiteral("x\"; drop") } << 2
        << QStringList { QStringLiteral("schema name") };
}

void TestMigrate::idemctlBadInput()
{
    QFETCH(QString, dsnKind);
    QFETCH(QStringList, extra);
    QFETCH(int, exitCode);
    QFETCH(QStringList, mustMention);
    idem::test::ScratchDatabase db("migrate_badinput");
    std::string dsn = db.dsn();
    if (dsnKind == QLatin1String("port1"))
        dsn = "host=127.0.0.1 port=1";
    else if (dsnKind == QLatin1String("wrongPassword"))
        dsn = idem::test::dsnWith(db.dsn(), { { "password", "certainly-not-the-password" }, { "passfile", "" } });
    else if (dsnKind == QLatin1String("unknownUser"))
        dsn = idem::test::dsnWith(db.dsn(), { { "user", "idem_t_nobody" }, { "password", "x" }, { "passfile", "" } });
    else if (dsnKind == QLatin1String("malformed"))
        dsn = "host=127.0.0.1 port";

    const auto run = idemctl(QStringList { QStringLiteral("migrate"), QStringLiteral("--dsn"), qs(dsn) } + extra);
    QVERIFY2(run.exitCode == exitCode, qPrintable(describe(run)));
    for (const auto& word : mustMention)
        QVERIFY2(run.err.contains(word), qPrintable(describe(run)));
    QVERIFY2(!run.err.contains(QStringLiteral("certainly-not-the-password")), qPrintable(describe(run)));

    auto c = db.connect();
    QCOMPARE(value(*c,
                 "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                 " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')"),
        QStringLiteral("0"));
    QCOMPARE(value(*c,
                 "SELECT count(*) FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname NOT IN"
                 " ('public', 'information_schema')"),
        QStringLiteral("0"));
}

void TestMigrate::concurrentMigrate_data()
{
    QTest::addColumn<QString>("schema");
    QTest::addRow("default schema") << QString::fromLatin1(idem::SchemaName::defaultName);
    QTest::addRow("public") << QStringLiteral("public");
}

void TestMigrate::concurrentMigrate()
{
    QFETCH(QString, schema);
    const idem::SchemaName name(schema.toStdString());
    // A few rounds: one round may happen not to overlap.
    for (int round = 0; round < 3; ++round) {
        idem::test::ScratchDatabase db("migrate_race");
        struct Outcome {
            std::optional<idem::MigrateReport> report;
            std::string error;
        };
        Outcome outcomes[2];
        {
            std::unique_ptr<pqxx::connection> conns[2] = { db.connect(), db.connect() };
            std::latch start(2);
            std::thread threads[2];
            for (int i = 0; i < 2; ++i) {
                threads[i] = std::thread([&, i] {
                    start.arrive_and_wait();
                    try {
                        outcomes[i].report = idem::migrate(*conns[i], { name });
                    } catch (const std::exception& e) {
                        outcomes[i].error = e.what();
                    }
                });
            }
            for (auto& t : threads)
                t.join();
        }
        for (const auto& o : outcomes)
            QVERIFY2(o.report.has_value(), o.error.c_str());
        // Every migration applied by one of them, in its one transaction; the other waited for the
        // lock and found them all applied.
        const QStringList first = toQt(outcomes[0].report->applied), second = toQt(outcomes[1].report->applied);
        QVERIFY2((first == bundledNames() && second.isEmpty()) || (second == bundledNames() && first.isEmpty()),
            qPrintable(first.join(QLatin1Char(',')) + QStringLiteral(" / ") + second.join(QLatin1Char(','))));
        QVERIFY(outcomes[0].report->rolesApplied && outcomes[1].report->rolesApplied);
        QCOMPARE(outcomes[0].report->toVersion, idem::latestSchemaVersion());
        QCOMPARE(outcomes[1].report->toVersion, idem::latestSchemaVersion());

        auto c = db.connect();
        std::string versions;
        for (const auto& m : idem::bundledMigrations())
            versions += (versions.empty() ? "" : ",") + std::to_string(m.version);
        QCOMPARE(value(*c,
                     "SELECT count(*) || ' ' || string_agg(version::text, ',' ORDER BY version) FROM "
                         + name.qualify("idem_schema_version")),
            qs(std::to_string(idem::bundledMigrations().size()) + " " + versions));
        QCOMPARE(value(*c, "SELECT count(*) FROM " + name.qualify("idem_schema_version") + " WHERE version = 1"),
            QStringLiteral("1"));
        QVERIFY(idem::inspectSchema(*c, name).upToDate());
    }
}

// Issue 25: the migrations hold tables, indexes and data; each function and procedure is one file,
// its one live definition, and the database holds exactly the functions the files define.
void TestMigrate::everyFunctionIsOneFile()
{
    static const QRegularExpression definesFunction(
        QStringLiteral(R"(\bCREATE\s+(OR\s+REPLACE\s+)?(FUNCTION|PROCEDURE)\b)"),
        QRegularExpression::CaseInsensitiveOption);
    for (const auto& m : idem::bundledMigrations())
        QVERIFY2(!definesFunction.match(qs(m.sql)).hasMatch(), qPrintable(qs(m.name) + QStringLiteral(" defines a function")));
    QStringList files;
    for (const auto& f : idem::bundledFunctions()) {
        files << qs(f.name);
        // One definition per file, of the function the file is named after.
        const auto all = definesFunction.globalMatch(qs(f.sql));
        int n = 0;
        for (auto it = all; it.hasNext(); it.next())
            ++n;
        QVERIFY2(n == 1, qPrintable(qs(f.name) + QStringLiteral(".sql defines %1 functions").arg(n)));
        static const QRegularExpression named(QStringLiteral(R"(\b(FUNCTION|PROCEDURE)\s+(\w+)\s*\()"));
        QCOMPARE(named.match(qs(f.sql)).captured(2), qs(f.name));
    }
    files.sort();

    idem::test::ScratchDatabase db("migrate_functions");
    auto c = db.connect();
    const auto report = idem::migrate(*c, { idem::SchemaName() });
    QCOMPARE(toQt(report.functionsApplied), files);
    pqxx::read_transaction t(*c);
    // What the catalogue holds in the schema: one routine per file, no overloads, nothing else.
    QCOMPARE(lines(t, "SELECT p.proname FROM pg_proc p WHERE p.pronamespace = 'idem'::regnamespace ORDER BY 1"), files);
    QCOMPARE(lines(t, "SELECT name FROM idem.idem_schema_functions ORDER BY 1"), files);
    for (const auto& f : idem::bundledFunctions())
        QCOMPARE(lines(t, "SELECT checksum FROM idem.idem_schema_functions WHERE name = $1", f.name),
            QStringList { qs(f.checksum) });
    // The schema's name is written into the two bodies that cannot pin their path.
    QCOMPARE(lines(t, "SELECT count(*)::text FROM pg_proc WHERE pronamespace = 'idem'::regnamespace"
                      " AND prosrc LIKE '%@extschema@%'"),
        QStringList { QStringLiteral("0") });
}

// A function file that changed (here: the database holds another body and checksum) is applied
// again by migrate, alone, and the schema reads as current only after that.
void TestMigrate::changedFunctionFileIsReapplied()
{
    idem::test::ScratchDatabase db("migrate_reapply");
    auto c = db.connect();
    idem::migrate(*c, { idem::SchemaName() });
    {
        pqxx::work w(*c);
        w.exec("SET LOCAL search_path = idem, pg_temp");
        w.exec("CREATE OR REPLACE FUNCTION idem_key_matches(p_key text, p_tenant text, p_operation text)"
               " RETURNS boolean LANGUAGE sql IMMUTABLE AS $$ SELECT false $$");
        w.exec("UPDATE idem.idem_schema_functions SET checksum = 'an older file' WHERE name = 'idem_key_matches'");
        w.commit();
    }
    QCOMPARE(value(*c, "SELECT idem.idem_key_matches('t:op:1', 't', NULL)::text"), QStringLiteral("false"));
    auto state = idem::inspectSchema(*c, idem::SchemaName());
    QVERIFY(!state.upToDate());
    QVERIFY(state.problems.empty());
    QCOMPARE(toQt(state.functionsPending), QStringList { QStringLiteral("idem_key_matches") });
    const auto status = idemctl({ QStringLiteral("migrate"), QStringLiteral("--status"),
        QStringLiteral("--dsn"), qs(db.dsn()) });
    QVERIFY2(status.out.contains(QStringLiteral("1 function file(s) to apply, the first idem_key_matches.sql")),
        qPrintable(describe(status)));

    const auto report = idem::migrate(*c, { idem::SchemaName() });
    QVERIFY(report.applied.empty());
    QCOMPARE(toQt(report.functionsApplied), QStringList { QStringLiteral("idem_key_matches") });
    QCOMPARE(value(*c, "SELECT idem.idem_key_matches('t:op:1', 't', NULL)::text"), QStringLiteral("true"));
    QCOMPARE(value(*c, "SELECT idem.idem_key_matches('t:op:1', 'u', NULL)::text"), QStringLiteral("false"));
    QVERIFY(idem::inspectSchema(*c, idem::SchemaName()).upToDate());
    QVERIFY(idem::migrate(*c, { idem::SchemaName() }).functionsApplied.empty());
}

// A database migrated up to v13 recorded the checksums the migrations had while they also defined
// the functions: each is taken as its version; any other checksum is still refused.
void TestMigrate::checksumsFromBeforeTheSplitAreAccepted()
{
    idem::test::ScratchDatabase db("migrate_superseded");
    auto c = db.connect();
    idem::migrate(*c, { idem::SchemaName() });
    int superseded = 0;
    {
        pqxx::work w(*c);
        for (const auto& m : idem::bundledMigrations())
            if (!m.supersededChecksum.empty()) {
                w.exec_params("UPDATE idem.idem_schema_version SET checksum = $1 WHERE version = $2",
                    m.supersededChecksum, m.version);
                ++superseded;
            }
        w.commit();
    }
    // Every migration that defined a function up to v13 changed: 0002, 0003 and 0005 to 0013.
    QCOMPARE(superseded, 11);
    QVERIFY(idem::inspectSchema(*c, idem::SchemaName()).upToDate());
    QVERIFY(idem::migrate(*c, { idem::SchemaName() }).applied.empty());
    {
        pqxx::work w(*c);
        w.exec("UPDATE idem.idem_schema_version SET checksum = left(checksum, 63) || 'x' WHERE version = 2");
        w.commit();
    }
    const auto state = idem::inspectSchema(*c, idem::SchemaName());
    QCOMPARE(state.problems.size(), std::size_t(1));
    QVERIFY2(qs(state.problems[0]).contains(QStringLiteral("0002_protocol.sql")), state.problems[0].c_str());
    QVERIFY_THROWS_EXCEPTION(idem::MigrationRefused, idem::migrate(*c, { idem::SchemaName() }));
}

QTEST_GUILESS_MAIN(TestMigrate)
#include "tst_migrate.moc"
