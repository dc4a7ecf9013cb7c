#include <QtTest>

#include <QDirIterator>

#include <functional>
#include <QProcess>
#include <QTemporaryDir>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/connection.h"
#include "schema/migrate.h"
#include "operations/csv.h"
#include "operations/events.h"
#include "operations/pauses.h"
#include "operations/signing.h"
#include "operations/snapshotreport.h"
#include "operations/snapshot.h"
#include "operations/snapshotbundle.h"
#include "operations/snapshotjson.h"
#include "operations/stats.h"
#include "tests/support/bundleforge.h"
#include "tests/support/cliprocess.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"

// An incident snapshot of a database in a known state: exactly the planted figures and rows
// (each row set equal to an independent query, succeeded rows nowhere), the audit head, the
// bounds stated; through idemctl with a password DSN that no file of the bundle contains;
// verify naming what was edited; redaction leaving no secret behind.
class TestSnapshot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void figuresAndRowsAreExactlyTheKnownState();
    void boundsAreStatedAndHit();
    void tenantFilterAppliesToEverySet();
    void cliExportWithPasswordLeavesItNowhere();
    void cliVerifyNamesEditedFiles();
    void redactionLeavesNoSecret();
    void cliRefusesBadInputWritingNothing();
    void cliVerifyCatchesForgedEventsResigned();
    void eventsOfTheWindowSurviveTheJson();
    void incidentWorkIsInTheSnapshot();

private:
    std::vector<std::string> keys(const std::string& sql, const char* tenant = nullptr);
    idem::SnapshotData snapshot(int limit, const char* tenant = nullptr, bool redact = false);
    idem::test::CliRun idemctl(const QStringList& args);

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    QTemporaryDir m_tmp;
    const std::string m_password = "pw-Snap-7Kq2-unique";
    const std::string m_role = "idem_snapshot_reader_t";
};

namespace {
QStringList bundleFiles(const QString& dir)
{
    QStringList out;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext())
        out << it.next();
    return out;
}

// Every file of the bundle that contains needle, by relative path.
QStringList filesContaining(const QString& dir, const QByteArray& needle)
{
    QStringList out;
    for (const auto& path : bundleFiles(dir)) {
        QFile f(path);
        if (f.open(QIODevice::ReadOnly) && f.readAll().contains(needle))
            out << QDir(dir).relativeFilePath(path);
    }
    return out;
}

std::vector<std::string> keysOf(const idem::SnapshotRowSet* set)
{
    std::vector<std::string> out;
    if (set)
        for (const auto& r : set->rows)
            out.push_back(r.key);
    return out;
}
} // namespace

std::vector<std::string> TestSnapshot::keys(const std::string& where, const char* tenant)
{
    // Independent of operations/snapshot.cpp: a plain query over the whole table (the test may scan).
    pqxx::read_transaction t(*m_conn);
    std::vector<std::string> out;
    for (const auto& r : t.exec_params("SELECT idempotency_key FROM idem.task_idempotency WHERE ($1::text IS NULL OR "
                                       "idempotency_key LIKE $1::text || ':%') AND "
                 + where,
             tenant))
        out.push_back(r[0].as<std::string>());
    return out;
}

idem::SnapshotData TestSnapshot::snapshot(int limit, const char* tenant, bool redact)
{
    idem::SnapshotOptions o;
    o.rowLimit = limit;
    o.redact = redact;
    if (tenant)
        o.stats.tenant = tenant;
    idem::SnapshotContext c;
    c.producer = "tst_snapshot";
    c.conninfo = m_db->dsn();
    return idem::readSnapshot(*m_conn, o, c);
}

idem::test::CliRun TestSnapshot::idemctl(const QStringList& args)
{
    return idem::test::runProgram(idem::test::idemctlPath(), args, 60000);
}

void TestSnapshot::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    QVERIFY(m_tmp.isValid());
    m_db = std::make_unique<idem::test::ScratchDatabase>("snapshot", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName() }); // with roles: the CLI test logs in as an idem_reader
    idem::test::createLoginRole(m_role, m_password, "idem_reader");

    pqxx::work w(*m_conn);
    w.exec(idem::test::plantTasksSql(R"(
            ('ta:charge:p1', 'processing', interval '10 minutes', 1, NULL, NULL, NULL, interval '1 minute'),
            ('ta:charge:p2', 'processing', interval '10 minutes', 1, NULL, NULL, NULL, interval '3 hours'),
            ('tb:refund:p3', 'processing', interval '10 minutes', 2, NULL, NULL, NULL, interval '5 minutes'),
            ('ta:charge:e1', 'processing', interval '-1 minute', 1, NULL, NULL, NULL, interval '2 minutes'),
            ('tb:refund:e2', 'processing', interval '-5 minutes', 3, NULL, NULL, NULL, interval '2 hours'),
            ('ta:ship:e3',   'processing', NULL, 1, NULL, NULL, NULL, interval '4 minutes'),
            ('ta:charge:r1', 'retryable_failed', NULL, 1, 'retryable', 'timeout', NULL, interval '1 minute'),
            ('tb:charge:u1', 'retryable_failed', NULL, 2, 'unknown', 'ERRMSG-SECRET answer lost', NULL,
                interval '6 minutes'),
            ('ta:charge:u2', 'retryable_failed', NULL, 1, 'unknown', 'lost, "quoted"', NULL, interval '7 minutes'),
            ('ta:charge:f1', 'failed', NULL, 1, 'permanent', 'card declined', '{"partial": "RESULT-SECRET"}',
                interval '8 minutes'),
            ('tb:refund:f2', 'failed', NULL, 5, 'retryable', 'gave up', NULL, interval '9 minutes'),
            ('ta:ship:f3',   'failed', NULL, 5, 'unknown', 'gave up, unknown', NULL, interval '10 minutes')
    )"));
    w.exec(R"(
        INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts, created_at,
                                           updated_at)
        SELECT 'ta:charge:s' || i, 'v1:' || repeat('b', 64), 'succeeded', '{"receipt": "SUCCEEDED-ONLY"}', 1,
               now() - interval '3 hours', now()
        FROM generate_series(1, 200) i
    )");
    w.exec(R"(
        -- through add_counters(), the workers' flush: it writes the totals the tick reads too
        SELECT idem.add_counters(jsonb_agg(jsonb_build_object('m', extract(epoch FROM date_trunc('minute', now()) - back)::bigint,
               't', t, 'o', o, 'w', oc, 'n', n)))
        FROM (VALUES
            (interval '0', 'ta', 'charge', 'acquired', 10), (interval '0', 'ta', 'charge', 'conflict', 2),
            (interval '2 minutes', 'tb', 'refund', 'conflict', 3), (interval '2 minutes', 'tb', 'refund', 'replayed', 4),
            (interval '30 minutes', 'ta', 'charge', 'conflict', 50), (interval '30 minutes', 'ta', 'charge', 'succeeded', 9),
            (interval '3 hours', 'ta', 'charge', 'acquired', 100)
        ) AS v(back, t, o, oc, n)
    )");
    // Audit entries as the owner would append them; the images carry what redaction must hide.
    w.exec(R"(
        INSERT INTO idem.task_idempotency_audit (at, idempotency_key, action, reason, db_role, os_user, client_host,
                                                 before_image, after_image, prev_hash, entry_hash)
        VALUES (now() - interval '3 minutes', 'ta:charge:f1', 'fail', 'stop it', 'op', 'alice', 'h1',
                '{"status": "retryable_failed", "error_message": "ERRMSG-SECRET in image"}', '{"status": "failed"}',
                repeat('0', 64), repeat('1', 64)),
               (now() - interval '2 minutes', 'tb:refund:f2', 'requeue', 'retry after fix', 'op', 'bob', 'h2',
                '{"status": "failed", "errors": [{"message": "ERRMSG-SECRET listed"}]}', '{"status": "retryable_failed"}',
                repeat('1', 64), repeat('2', 64)),
               (now() - interval '1 minute', 'ta:charge:e1', 'release', 'stuck worker', 'op', 'carol', 'h3',
                '{"status": "processing"}', '{"status": "processing"}', repeat('2', 64), repeat('3', 64))
    )");
    w.commit();
}

void TestSnapshot::cleanupTestCase()
{
    m_conn.reset();
    m_db.reset();
}

void TestSnapshot::figuresAndRowsAreExactlyTheKnownState()
{
    const auto d = snapshot(1000);
    // The figures are statsSql()'s: the same as a stats read of the unchanged database.
    const auto s = idem::readStats(*m_conn, idem::SchemaName(), {});
    QCOMPARE(d.figures.processing, 3);
    QCOMPARE(d.figures.expiredLeases, 3);
    QCOMPARE(d.figures.uncertain, 2);
    QCOMPARE(d.figures.failedPermanent, 1);
    QCOMPARE(d.figures.failedExhausted, 2);
    QCOMPARE(d.figures.digestConflicts, 5);
    QCOMPARE(d.figures.expiredLeases, s.expiredLeases);
    QCOMPARE(d.figures.retryableFailed, s.retryableFailed);
    QCOMPARE(d.figures.longUnfinished, s.longUnfinished);
    QCOMPARE(d.figures.claims, s.claims);
    // The audit head twice, from statsSql() and from the tail, in the same transaction.
    QCOMPARE(d.figures.auditHeadId, d.audit.headId.value_or(0));
    QCOMPARE(d.figures.auditHeadHash, d.audit.headHash.value_or(std::string()));

    // Each set equals an independent query, in its stated order, and holds no succeeded row.
    QCOMPARE(keysOf(d.rowSet("expired_leases")),
        keys("status = 'processing' AND (lease_until IS NULL OR lease_until <= now())"
             " ORDER BY lease_until NULLS FIRST, idempotency_key"));
    QCOMPARE(keysOf(d.rowSet("expired_leases")),
        (std::vector<std::string> { "ta:ship:e3", "tb:refund:e2", "ta:charge:e1" }));
    QCOMPARE(keysOf(d.rowSet("longest_running")), keys("status = 'processing' ORDER BY created_at, idempotency_key"));
    QCOMPARE(keysOf(d.rowSet("failed")), keys("status = 'failed' ORDER BY updated_at DESC, idempotency_key"));
    QCOMPARE(keysOf(d.rowSet("uncertain")),
        keys("status = 'retryable_failed' AND error_class = 'unknown' ORDER BY updated_at DESC, idempotency_key"));
    QCOMPARE(keysOf(d.rowSet("waiting_to_retry")),
        keys("status = 'retryable_failed' ORDER BY next_attempt_at NULLS FIRST, idempotency_key"));
    QCOMPARE(d.rowSets.size(), std::size_t(5));
    for (const auto& set : d.rowSets) {
        QCOMPARE(set.total, static_cast<std::int64_t>(set.rows.size()));
        QVERIFY(!set.truncated);
        QCOMPARE(set.limit, 1000);
        for (const auto& r : set.rows)
            QVERIFY2(r.status != "succeeded" && r.key.rfind("ta:charge:s", 0) == std::string::npos, r.key.c_str());
    }
    // A row's fields as stored.
    const auto& u1 = d.rowSet("uncertain")->rows.front(); // newest first
    QCOMPARE(u1.key, std::string("tb:charge:u1"));
    QCOMPARE(u1.errorMessage.value_or(""), std::string("ERRMSG-SECRET answer lost"));
    QCOMPARE(u1.attempts, 2);
    QVERIFY(!u1.ownerToken && !u1.leaseUntil && u1.nextAttemptAt);
    QCOMPARE(nlohmann::json::parse(u1.errorsJson)[0]["message"], "ERRMSG-SECRET answer lost");

    // Conflicts: only the window's (15 min), summing to the figure; the history: 60 min.
    std::int64_t conflicts = 0;
    for (const auto& c : d.conflicts.rows)
        conflicts += c.n;
    QCOMPARE(conflicts, d.figures.digestConflicts);
    QCOMPARE(d.conflicts.rows.size(), std::size_t(2));
    QCOMPARE(d.history.rows.size(), std::size_t(6)); // all but the 3-hour-old bucket
    QCOMPARE(d.history.total, 6);

    // The audit: newest first, the head is the last appended entry.
    QCOMPARE(d.audit.total, 3);
    QCOMPARE(d.audit.tail.size(), std::size_t(3));
    QCOMPARE(d.audit.headHash.value_or(""), std::string(64, '3'));
    QCOMPARE(d.audit.tail.front().action, std::string("release"));
    QCOMPARE(d.audit.tail.back().prevHash, std::string(64, '0'));

    // Server facts from the same connection.
    pqxx::read_transaction t(*m_conn);
    QCOMPARE(d.serverVersion, t.exec("SHOW server_version")[0][0].as<std::string>());
    QCOMPARE(d.schemaVersion, t.exec("SELECT max(version) FROM idem.idem_schema_version")[0][0].as<int>());
    QCOMPARE(d.schemaLatestKnown, idem::latestSchemaVersion());
    QCOMPARE(d.currentRole, t.exec("SELECT current_user")[0][0].as<std::string>());
    QVERIFY(d.superuser && d.memberReader && d.memberOperator);
    QCOMPARE(d.takenAt, d.figures.asOf);
}

void TestSnapshot::boundsAreStatedAndHit()
{
    const auto d = snapshot(2);
    const auto* expired = d.rowSet("expired_leases");
    QCOMPARE(expired->limit, 2);
    QCOMPARE(expired->total, 3);
    QVERIFY(expired->truncated);
    QCOMPARE(keysOf(expired), (std::vector<std::string> { "ta:ship:e3", "tb:refund:e2" })); // the first two, in order
    QVERIFY(!d.rowSet("uncertain")->truncated);
    // The bound is written down where a reader of the bundle looks.
    const auto j = nlohmann::json::parse(idem::snapshotToJson(d));
    QCOMPARE(j["row_sets"][0]["name"], "expired_leases");
    QCOMPARE(j["row_sets"][0]["limit"], 2);
    QCOMPARE(j["row_sets"][0]["total"], 3);
    QCOMPARE(j["row_sets"][0]["truncated"], true);
    QCOMPARE(j["row_sets"][0]["rows"].size(), std::size_t(2));
}

void TestSnapshot::tenantFilterAppliesToEverySet()
{
    const auto d = snapshot(1000, "tb");
    QCOMPARE(keysOf(d.rowSet("expired_leases")), std::vector<std::string> { "tb:refund:e2" });
    QCOMPARE(keysOf(d.rowSet("longest_running")), keys("status = 'processing' ORDER BY created_at", "tb"));
    QCOMPARE(keysOf(d.rowSet("failed")), std::vector<std::string> { "tb:refund:f2" });
    QCOMPARE(d.figures.expiredLeases, 1);
    for (const auto& c : d.history.rows)
        QCOMPARE(c.tenant, std::string("tb"));
    QCOMPARE(d.figures.digestConflicts, 3);
    QCOMPARE(d.tenant.value_or(""), std::string("tb"));
}

void TestSnapshot::cliExportWithPasswordLeavesItNowhere()
{
    const auto keyFile = m_tmp.filePath(QStringLiteral("sign.key"));
    auto run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("keygen"), QStringLiteral("--key"), keyFile });
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QVERIFY(run.out.contains(QStringLiteral("-----BEGIN PUBLIC KEY-----")));

    // The password travels in the DSN itself, as a key=value pair and inside a URI.
    const auto kv
        = idem::test::dsnWith(m_db->dsn(), { { "user", m_role }, { "password", m_password }, { "passfile", "" } });
    const QString dir = m_tmp.filePath(QStringLiteral("pw-bundle"));
    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("export"), QStringLiteral("--dsn"),
        QString::fromStdString(kv), QStringLiteral("--out"), dir, QStringLiteral("--key"), keyFile });
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QVERIFY(run.out.contains(QStringLiteral("signed with Ed25519 key")));
    const QByteArray pw = QByteArray::fromStdString(m_password);
    QVERIFY(!run.out.toUtf8().contains(pw) && !run.err.toUtf8().contains(pw));
    QVERIFY(bundleFiles(dir).size() >= 14);
    QCOMPARE(filesContaining(dir, pw), QStringList());
    QCOMPARE(filesContaining(dir, "password"), QStringList());
    // It did connect as that role, and says so.
    const auto loaded
        = idem::openSnapshotBundle(dir.toStdString(), idem::SigningKey::load(keyFile.toStdString()).publicPem());
    QVERIFY(loaded.verification.ok());
    QCOMPARE(loaded.data.currentRole, m_role);
    QVERIFY(loaded.data.memberReader && !loaded.data.memberOperator && !loaded.data.superuser);
    QVERIFY(QString::fromStdString(loaded.data.conninfo).contains(QString::fromStdString("user='" + m_role + "'")));
    QCOMPARE(loaded.data.figures.expiredLeases, 3);

    const auto options = idem::parseConninfo(m_db->dsn());
    const std::string uri = "postgresql://" + m_role + ":" + m_password + "@" + options.at("host") + ":"
        + options.at("port") + "/" + options.at("dbname") + "?sslmode=" + options.at("sslmode")
        + "&sslrootcert=" + options.at("sslrootcert");
    const QString uriDir = m_tmp.filePath(QStringLiteral("uri-bundle"));
    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("export"), QStringLiteral("--dsn"),
        QString::fromStdString(uri), QStringLiteral("--out"), uriDir, QStringLiteral("--quiet") });
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QCOMPARE(filesContaining(uriDir, pw), QStringList());
    QVERIFY(!run.out.toUtf8().contains(pw) && !run.err.toUtf8().contains(pw));
}

void TestSnapshot::cliVerifyNamesEditedFiles()
{
    const auto keyFile = m_tmp.filePath(QStringLiteral("v.key"));
    const auto pubFile = m_tmp.filePath(QStringLiteral("v.pub.pem"));
    QCOMPARE(
        idemctl({ QStringLiteral("snapshot"), QStringLiteral("keygen"), QStringLiteral("--key"), keyFile }).exitCode,
        0);
    auto run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("pubkey"), QStringLiteral("--key"), keyFile });
    QCOMPARE(run.exitCode, 0);
    QFile pub(pubFile);
    QVERIFY(pub.open(QIODevice::WriteOnly));
    pub.write(run.out.toUtf8());
    pub.close();

    const QString dir = m_tmp.filePath(QStringLiteral("v-bundle"));
    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("export"), QStringLiteral("--dsn"),
        QString::fromStdString(m_db->dsn()), QStringLiteral("--out"), dir, QStringLiteral("--sign"),
        QStringLiteral("--key"), keyFile, QStringLiteral("--quiet") });
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    const QStringList verifyArgs { QStringLiteral("snapshot"), QStringLiteral("verify"), dir,
        QStringLiteral("--pubkey"), pubFile };
    run = idemctl(verifyArgs);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QVERIFY(run.out.contains(QStringLiteral("valid, by the trusted key")));
    // Without a trusted key a valid signature is by an unknown key: exit 1 unless accepted. (No
    // default trusted-keys file of whoever runs the test may count.)
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_tmp.filePath(QStringLiteral("no-config"))));
    const QString fingerprint = run.out.section(QStringLiteral("(SHA-256 "), 1).section(QLatin1Char(')'), 0, 0);
    QCOMPARE(fingerprint.size(), 64);
    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("verify"), dir });
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.out.contains(QStringLiteral("SIGNATURE by an unknown key ") + fingerprint), qPrintable(run.out));
    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("verify"), dir, QStringLiteral("--allow-unknown-signer") });
    QCOMPARE(run.exitCode, 0);
    QVERIFY(run.out.contains(QStringLiteral("signed by an unknown key (accepted")));
    // A trusted-keys file, named or the default one ($XDG_CONFIG_HOME/idem/trusted-keys).
    const QString config = m_tmp.filePath(QStringLiteral("config"));
    QVERIFY(QDir().mkpath(config + QStringLiteral("/idem")));
    QFile keys(config + QStringLiteral("/idem/trusted-keys"));
    QVERIFY(keys.open(QIODevice::WriteOnly));
    keys.write((fingerprint + QStringLiteral(" on-call laptop\n")).toUtf8());
    keys.close();
    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("verify"), dir, QStringLiteral("--trusted-keys"),
        keys.fileName() });
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QVERIFY(run.out.contains(QStringLiteral("by the trusted key \"on-call laptop\"")));
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(config));
    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("verify"), dir });
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_tmp.filePath(QStringLiteral("no-config"))));
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    // A trusted key that is not the signer's fails, even with several given.
    const auto otherFile = m_tmp.filePath(QStringLiteral("other.pub.pem"));
    QFile other(otherFile);
    QVERIFY(other.open(QIODevice::WriteOnly));
    other.write(idem::SigningKey::generate().publicPem().c_str());
    other.close();
    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("verify"), dir, QStringLiteral("--pubkey"), otherFile });
    QCOMPARE(run.exitCode, 1);
    QVERIFY(run.out.contains(QStringLiteral("none of the trusted keys")));
    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("verify"), dir, QStringLiteral("--pubkey"), otherFile,
        QStringLiteral("--pubkey"), pubFile });
    QCOMPARE(run.exitCode, 0);

    // Edit a row, remove a chart, add a file: each named, exit 1.
    QFile csv(dir + QStringLiteral("/rows/failed.csv"));
    QVERIFY(csv.open(QIODevice::ReadWrite));
    QByteArray bytes = csv.readAll();
    bytes.replace("card declined", "card accepted");
    csv.seek(0);
    csv.write(bytes);
    csv.close();
    QVERIFY(QFile::remove(dir + QStringLiteral("/charts/claims.svg")));
    QFile extra(dir + QStringLiteral("/notes.txt"));
    QVERIFY(extra.open(QIODevice::WriteOnly));
    extra.close();
    run = idemctl(verifyArgs);
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.out.contains(QStringLiteral("MODIFIED  rows/failed.csv")), qPrintable(run.out));
    QVERIFY(run.out.contains(QStringLiteral("MISSING   charts/claims.svg")));
    QVERIFY(run.out.contains(QStringLiteral("ADDED     notes.txt")));
    QVERIFY(run.out.contains(QStringLiteral("FAILED")));
    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("show"), dir });
    QCOMPARE(run.exitCode, 1);
    QVERIFY(run.out.contains(QStringLiteral("NOT VERIFIED")));
    QVERIFY(run.out.contains(QStringLiteral("expired_leases: 3 of 3")));
    // The head as `idemctl audit verify --expect-head` takes it.
    QVERIFY2(run.out.contains(QStringLiteral("audit: 3 entries, head 3:") + QString(64, QLatin1Char('3'))),
        qPrintable(run.out));

    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("verify"), m_tmp.filePath(QStringLiteral("nothing")) });
    QCOMPARE(run.exitCode, 1);
    QVERIFY(run.err.contains(QStringLiteral("is not a directory")));
}

void TestSnapshot::redactionLeavesNoSecret()
{
    const QString plainDir = m_tmp.filePath(QStringLiteral("plain"));
    const QString redDir = m_tmp.filePath(QStringLiteral("redacted"));
    idem::writeSnapshotBundle(plainDir.toStdString(), snapshot(1000), false, nullptr);
    idem::writeSnapshotBundle(redDir.toStdString(), snapshot(1000, nullptr, true), false, nullptr);
    // Without redaction the secrets are there (so the search below can find them).
    QVERIFY(filesContaining(plainDir, "ERRMSG-SECRET").contains(QStringLiteral("audit_tail.csv")));
    QVERIFY(filesContaining(plainDir, "RESULT-SECRET").contains(QStringLiteral("rows/failed.csv")));
    QCOMPARE(filesContaining(redDir, "ERRMSG-SECRET"), QStringList());
    QCOMPARE(filesContaining(redDir, "RESULT-SECRET"), QStringList());
    QCOMPARE(filesContaining(plainDir, "SUCCEEDED-ONLY"), QStringList()); // never exported at all

    // In their place: the SHA-256 and length of the original text.
    const auto loaded = idem::openSnapshotBundle(redDir.toStdString(), std::nullopt);
    QVERIFY(loaded.data.redacted);
    const auto& f1 = loaded.data.rowSet("failed")->rows.front(); // newest first
    QCOMPARE(f1.key, std::string("ta:charge:f1"));
    QCOMPARE(f1.errorMessage.value_or(""), idem::redactedText("card declined"));
    pqxx::read_transaction t(*m_conn);
    const auto original
        = t.exec("SELECT result_json::text FROM idem.task_idempotency WHERE idempotency_key = 'ta:charge:f1'")[0][0]
              .as<std::string>();
    QCOMPARE(f1.resultJson.value_or(""), idem::redactedText(original));
    QVERIFY(
        QString::fromStdString(f1.errorsJson).contains(QString::fromStdString(idem::redactedText("card declined"))));
    // Keys, statuses and reasons stay readable.
    QCOMPARE(loaded.data.audit.tail.back().reason, std::string("stop it"));
}

void TestSnapshot::cliRefusesBadInputWritingNothing()
{
    const QString dir = m_tmp.filePath(QStringLiteral("refused"));
    const QString dsn = QString::fromStdString(m_db->dsn());
    auto run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("export"), QStringLiteral("--dsn"), dsn,
        QStringLiteral("--out"), dir, QStringLiteral("--limit"), QStringLiteral("0") });
    QCOMPARE(run.exitCode, 2);
    run = idemctl(
        { QStringLiteral("snapshot"), QStringLiteral("export"), QStringLiteral("--dsn"), dsn, QStringLiteral("--out"),
            dir, QStringLiteral("--schema"), QStringLiteral("nosuchschema"), QStringLiteral("--quiet") });
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(QStringLiteral("nosuchschema")), qPrintable(describe(run)));
    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("export"), QStringLiteral("--dsn"), dsn,
        QStringLiteral("--out"), dir, QStringLiteral("--key"), m_tmp.filePath(QStringLiteral("absent.key")) });
    QCOMPARE(run.exitCode, 1);
    QVERIFY(run.err.contains(QStringLiteral("keygen")));
    // Nothing at all under the target name or beside it.
    QCOMPARE(QDir(m_tmp.path())
                 .entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot)
                 .filter(QStringLiteral("refused")),
        QStringList());

    // An existing target is refused without --force and replaced with it.
    QVERIFY(QDir().mkpath(dir));
    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("export"), QStringLiteral("--dsn"), dsn,
        QStringLiteral("--out"), dir, QStringLiteral("--quiet") });
    QCOMPARE(run.exitCode, 1);
    QVERIFY(run.err.contains(QStringLiteral("exists")));
    QVERIFY(QDir(dir).isEmpty());
}

// Issue #27: the events of the history window (what the viewer marks on its charts) are read in
// the snapshot's transaction, as the audit table has them, filtered by the scope and bounded;
// they survive snapshot.json, the report lists them, and a damaged event is refused by name.
// Issue 40: a real bundle whose events are made to contradict its own audit tail (another actor and
// text for an audited entry; a fail event after taken_at, with an escape sequence and an RTL
// override), re-signed with the trusted key: verify fails, naming what contradicts what, the text
// escaped; before, it said OK.
void TestSnapshot::cliVerifyCatchesForgedEventsResigned()
{
    const auto keyFile = m_tmp.filePath(QStringLiteral("forge.key"));
    const auto pubFile = m_tmp.filePath(QStringLiteral("forge.pub.pem"));
    QCOMPARE(
        idemctl({ QStringLiteral("snapshot"), QStringLiteral("keygen"), QStringLiteral("--key"), keyFile }).exitCode,
        0);
    const auto key = idem::SigningKey::load(keyFile.toStdString());
    QVERIFY(idem::test::writeBundleFile(pubFile, QByteArray::fromStdString(key.publicPem())));
    const QString dir = m_tmp.filePath(QStringLiteral("forged-bundle"));
    auto run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("export"), QStringLiteral("--dsn"),
        QString::fromStdString(m_db->dsn()), QStringLiteral("--out"), dir, QStringLiteral("--key"), keyFile,
        QStringLiteral("--quiet") });
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    const QStringList verifyArgs { QStringLiteral("snapshot"), QStringLiteral("verify"), dir,
        QStringLiteral("--pubkey"), pubFile };
    run = idemctl(verifyArgs);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("content: 3 events match the audit entries they cite")), qPrintable(run.out));

    // The entry the first event cites, as the database holds it.
    std::int64_t cited = 0;
    QVERIFY(idem::test::editSnapshotJson(
        dir, [&](nlohmann::json& j) { cited = idem::test::forgeEvents(j, "op (mallory)", "nobody touched it"); }));
    QVERIFY(cited > 0);
    QVERIFY(idem::test::resignBundle(dir, key));
    pqxx::read_transaction t(*m_conn);
    const auto entry = t.exec_params("SELECT db_role || ' (' || os_user || ')', reason FROM idem.task_idempotency_audit"
                                     " WHERE id = $1",
        cited)[0];
    t.commit();

    run = idemctl(verifyArgs);
    QCOMPARE(run.exitCode, 1);
    // The files and the signature are fine: only the content gives it away, and says so.
    QVERIFY2(run.out.contains(QStringLiteral("signature: valid, by the trusted key")), qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("contradicts audit entry %1 of the hash-chained audit tail: actor \"op "
                                             "(mallory)\" where the entry has \"%2\"; text \"nobody touched it\" where "
                                             "the entry has \"%3\"")
                                  .arg(cited)
                                  .arg(QString::fromStdString(entry[0].as<std::string>()),
                                      QString::fromStdString(entry[1].as<std::string>()))),
        qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("text \"all clear \\x1b[2J\\u202eevil\", is dated after the snapshot was "
                                             "taken (taken_at ")),
        qPrintable(run.out));
    QVERIFY(run.out.contains(QStringLiteral("claims an operator's action by \"op (mallory)\"")));
    QVERIFY(!run.out.contains(QChar(0x1b)) && !run.out.contains(QChar(0x202e)));
    QVERIFY2(run.out.contains(QStringLiteral("FAILED: ")) && run.out.contains(QStringLiteral("contradicts itself")),
        qPrintable(run.out));
    run = idemctl({ QStringLiteral("snapshot"), QStringLiteral("show"), dir, QStringLiteral("--pubkey"), pubFile });
    QCOMPARE(run.exitCode, 1);
    QVERIFY(run.out.contains(QStringLiteral("NOT VERIFIED")));
    QVERIFY(!run.out.contains(QChar(0x1b)) && !run.out.contains(QChar(0x202e)));
}

void TestSnapshot::eventsOfTheWindowSurviveTheJson()
{
    idem::Annotation a;
    a.text = "deploy v2.4 of charge";
    a.actor = "alice@laptop";
    a.operation = "charge";
    const auto mark = idem::annotate(*m_conn, idem::SchemaName(), a);
    // One before the window: not the snapshot's.
    {
        pqxx::work w(*m_conn);
        w.exec("INSERT INTO idem.task_idempotency_audit (id, at, idempotency_key, action, reason, db_role, os_user,"
               " client_host, before_image, after_image, prev_hash, entry_hash) OVERRIDING SYSTEM VALUE"
               " SELECT max(id) + 1, now() - interval '2 hours', 'ta:charge:f1', 'fail', 'long ago', 'op', 'zed', 'h0',"
               " '{}', '{}', repeat('0', 64), repeat('9', 64) FROM idem.task_idempotency_audit");
        w.commit();
    }

    const auto d = snapshot(1000);
    QVERIFY(d.events);
    QVERIFY(!d.events->truncated);
    QCOMPARE(d.events->limit, 1000);
    // Independently: the audit table's entries of the last hour, oldest first.
    pqxx::read_transaction t(*m_conn);
    const auto expected = t.exec("SELECT id, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), action,"
                                 " reason, os_user FROM idem.task_idempotency_audit WHERE at >= now() - interval '60 minutes'"
                                 " ORDER BY at, id");
    t.commit();
    QCOMPARE(d.events->rows.size(), std::size_t(expected.size()));
    QCOMPARE(expected.size(), pqxx::result::size_type(4)); // fail, requeue, release, annotate
    for (std::size_t i = 0; i < d.events->rows.size(); ++i) {
        const auto& e = d.events->rows[i];
        const auto row = expected[pqxx::result::size_type(i)];
        QCOMPARE(e.auditId, row[0].as<std::int64_t>());
        QCOMPARE(e.at, row[1].as<std::string>());
        QCOMPARE(e.action, row[2].as<std::string>());
        QCOMPARE(e.text, row[3].as<std::string>());
        QVERIFY(e.actor.find(row[4].as<std::string>()) != std::string::npos);
    }
    QCOMPARE(d.events->rows.back().auditId, mark.auditId);
    QCOMPARE(d.events->rows.back().tenant, std::string("*"));
    QCOMPARE(d.events->rows.back().operation, std::string("charge"));
    QCOMPARE(d.events->rows.front().tenant, std::string("ta")); // a recovery action's: its key's

    // The scope filter: tb's own events and those for every tenant.
    const auto tb = snapshot(1000, "tb");
    QVERIFY(tb.events);
    std::vector<std::string> actions;
    for (const auto& e : tb.events->rows)
        actions.push_back(e.action);
    QCOMPARE(actions, (std::vector<std::string> { "requeue", "annotate" }));
    // The bound: the newest two (of the audit trail; each kind has its own), and it says so.
    idem::SnapshotOptions o;
    o.eventLimit = 2;
    const auto bound = idem::readSnapshot(*m_conn, o, {});
    QVERIFY(bound.events->truncated);
    QCOMPARE(bound.events->rows.size(), std::size_t(2));
    QCOMPARE(bound.events->rows[0].action, std::string("release"));
    QCOMPARE(bound.events->rows[1].action, std::string("annotate"));
    o.eventLimit = 0;
    QVERIFY_EXCEPTION_THROWN(idem::readSnapshot(*m_conn, o, {}), std::invalid_argument);

    // Through snapshot.json and back, field by field; the report lists them.
    const auto json = idem::snapshotToJson(d);
    const auto back = idem::snapshotFromJson(json);
    QVERIFY(back.events);
    QCOMPARE(back.events->description, d.events->description);
    QCOMPARE(back.events->rows.size(), d.events->rows.size());
    for (std::size_t i = 0; i < d.events->rows.size(); ++i) {
        const auto& x = d.events->rows[i];
        const auto& y = back.events->rows[i];
        QVERIFY(x.auditId == y.auditId && x.at == y.at && x.action == y.action && x.tenant == y.tenant
            && x.operation == y.operation && x.actor == y.actor && x.text == y.text);
    }
    const auto html = idem::snapshotReportHtml(back, {});
    QVERIFY2(html.find("<h2>Events, 60 min: 4</h2>") != std::string::npos, "no events section");
    QVERIFY(html.find("deploy v2.4 of charge") != std::string::npos);

    // Damaged: each refused, the field named; nothing half-read.
    const auto refused = [&](const std::function<void(nlohmann::json&)>& damage, const std::string& says) {
        auto j = nlohmann::json::parse(json);
        damage(j);
        try {
            idem::snapshotFromJson(j.dump());
        } catch (const idem::SnapshotFormatError& e) {
            return std::string(e.what()).find(says) != std::string::npos ? std::string() : std::string(e.what());
        }
        return std::string("accepted");
    };
    const std::pair<std::function<void(nlohmann::json&)>, std::string> damages[] = {
        { [](nlohmann::json& j) { j["events"]["rows"][0]["at"] = "yesterday"; }, "/events/rows/0/at: expected a time" },
        { [](nlohmann::json& j) { j["events"]["rows"][1]["action"] = "Requeue'; DROP"; }, "/events/rows/1/action" },
        { [](nlohmann::json& j) { std::swap(j["events"]["rows"][0], j["events"]["rows"][3]); },
            "/events/rows/1/at: earlier than the event before it" },
        { [](nlohmann::json& j) { j["events"]["rows"][2]["audit_id"] = -3; }, "/events/rows/2/audit_id" },
        { [](nlohmann::json& j) { j["events"]["rows"][0]["text"] = 7; }, "/events/rows/0/text: expected a string" },
        { [](nlohmann::json& j) { j["events"]["limit"] = 3; }, "/events/rows: holds more events than its limit" },
        { [](nlohmann::json& j) { j["events"]["rows"] = "none"; }, "/events/rows: expected an array" },
        { [](nlohmann::json& j) { j["events"] = 12; }, "/events: expected an object" },
    };
    for (const auto& [damage, says] : damages) {
        const auto problem = refused(damage, says);
        QVERIFY2(problem.empty(), (says + ": " + problem).c_str());
    }
    // Written before events were added (absent), or before schema v17 (null): none.
    auto j = nlohmann::json::parse(json);
    j["events"] = nullptr;
    QVERIFY(!idem::snapshotFromJson(j.dump()).events);
    j.erase("events");
    QVERIFY(!idem::snapshotFromJson(j.dump()).events);
    // Any kind is kept (a newer Idem's: the viewer draws it as a generic mark), and an event
    // without an audit entry of its own.
    j = nlohmann::json::parse(json);
    j["events"]["rows"][0]["action"] = "failover-drill";
    j["events"]["rows"][0]["audit_id"] = nullptr;
    const auto later = idem::snapshotFromJson(j.dump());
    QCOMPARE(later.events->rows[0].action, std::string("failover-drill"));
    QCOMPARE(later.events->rows[0].auditId, std::int64_t(0));
}

// Issue 41: the incident's work is in the snapshot: the rows waiting to retry (bounded, the count
// said), the pauses (in force and lifted, with who and why), the recovery jobs (state, counts, who
// started and approved), and processing over the history window; through snapshot.json, the CSV
// files and the report. Before, none of them was there.
void TestSnapshot::incidentWorkIsInTheSnapshot()
{
    idem::PauseRequest hold;
    hold.tenant = "ta";
    hold.operation = "charge";
    hold.reason = "gateway answers 503";
    hold.actor = "sre@desk";
    idem::setPause(*m_conn, idem::SchemaName(), hold);
    idem::PauseRequest storm;
    storm.tenant = "tb";
    storm.operation = "*";
    storm.reason = "refund storm";
    storm.actor = "sre@desk";
    idem::setPause(*m_conn, idem::SchemaName(), storm);
    idem::resumePause(*m_conn, idem::SchemaName(), "tb", "*", "storm over", "lead@desk");
    {
        pqxx::work w(*m_conn);
        // Jobs as the job functions leave them: one approved and running, one cancelled now, one that
        // ended long before the window (not the snapshot's).
        w.exec(R"(
            INSERT INTO idem.idem_jobs (state, action, extra_attempts, filter, moment, cap, matched, reason, db_role,
                actor, application, changed, refused_moved_on, refused_busy, skipped_not_applicable, batches,
                needs_approval, spec_sha256, finished_at, cancelled_by, cancel_reason)
            VALUES ('active', 'requeue', 1, '{"statuses": ["failed"]}', now() - interval '4 minutes', 1000, 159,
                    'requeue what the gateway broke', 'op', 'alice@desk', 'idem-console', 120, 3, 1, 2, 5,
                    true, repeat('c', 64), NULL, NULL, NULL),
                   ('cancelled', 'release', NULL, '{"statuses": ["processing"]}', now() - interval '9 minutes', 100, 7,
                    'stuck leases', 'op', 'carol@desk', 'idemctl', 2, 0, 0, 0, 1,
                    false, NULL, now() - interval '1 minute', 'op (carol@desk)', 'wrong filter'),
                   ('finished', 'fail', NULL, '{"statuses": ["retryable_failed"]}', now() - interval '5 hours', 10, 2,
                    'long ago', 'op', 'zed', 'idemctl', 2, 0, 0, 0, 1,
                    false, NULL, now() - interval '4 hours', NULL, NULL)
        )");
        // The approved one's request (schema v28: a job's approval is its request's).
        w.exec(R"(
            INSERT INTO idem.idem_approval_requests (kind, job_id, spec, spec_sha256, state, requested_login,
                requested_role, requested_actor, requested_reason, requested_at, approvable_until, request_audit_id,
                approved_login, approved_role, approved_actor, approved_reason, approved_at, approval_expires_at)
            SELECT 'job', j.id, '{}', repeat('c', 64), 'approved', 'op', 'op', 'alice@desk', j.reason,
                   now() - interval '4 minutes', now() + interval '1 hour', 0, 'bob', 'bob', 'bob@desk', 'fine',
                   now() - interval '3 minutes', now() + interval '1 hour'
              FROM idem.idem_jobs j WHERE j.reason = 'requeue what the gateway broke'
        )");
        w.commit();
    }

    const auto d = snapshot(2);
    // Waiting to retry: every retryable_failed row, due first, bounded with the count said.
    const auto* retry = d.rowSet("waiting_to_retry");
    QVERIFY(retry);
    QCOMPARE(retry->total, d.figures.retryableFailed);
    QCOMPARE(retry->total, std::int64_t(3));
    QVERIFY(retry->truncated);
    QCOMPARE(retry->limit, 2);
    const auto expected = keys("status = 'retryable_failed' ORDER BY next_attempt_at NULLS FIRST, idempotency_key");
    QCOMPARE(keysOf(retry), std::vector<std::string>(expected.begin(), expected.begin() + 2));

    // Pauses: the one in force first, then the lifted one, each with who and why.
    QVERIFY(d.pauses);
    QCOMPARE(d.pauses->rows.size(), std::size_t(2));
    const auto& held = d.pauses->rows[0];
    QVERIFY(held.active);
    QCOMPARE(held.tenant + ":" + held.operation, std::string("ta:charge"));
    QCOMPARE(held.reason, std::string("gateway answers 503"));
    QVERIFY2(held.pausedBy.find("sre@desk") != std::string::npos, held.pausedBy.c_str());
    QVERIFY(!held.until && !held.endedAt);
    const auto& lifted = d.pauses->rows[1];
    QVERIFY(!lifted.active);
    QCOMPARE(lifted.tenant + ":" + lifted.operation, std::string("tb:*"));
    QCOMPARE(lifted.reason, std::string("refund storm"));
    QVERIFY(lifted.pausedBy.find("sre@desk") != std::string::npos);
    QVERIFY(lifted.endedAt && lifted.endedBy && lifted.endedBy->find("lead@desk") != std::string::npos);
    QCOMPARE(lifted.endReason.value_or(""), std::string("storm over"));
    // A tenant scope keeps its own pauses and those for every tenant only.
    idem::SnapshotOptions scoped;
    scoped.stats.tenant = "tb";
    const auto tb = idem::readSnapshot(*m_conn, scoped, {});
    QCOMPARE(tb.pauses->rows.size(), std::size_t(1));
    QCOMPARE(tb.pauses->rows[0].tenant, std::string("tb"));

    // Jobs: the two of the window, newest first, with their counts and people.
    QVERIFY(d.jobs);
    QCOMPARE(d.jobs->total, std::int64_t(2));
    QCOMPARE(d.jobs->rows.size(), std::size_t(2));
    const auto& cancelled = d.jobs->rows[0];
    const auto& running = d.jobs->rows[1];
    QCOMPARE(cancelled.state, std::string("cancelled"));
    QCOMPARE(cancelled.cancelledBy.value_or(""), std::string("op (carol@desk)"));
    QCOMPARE(cancelled.cancelReason.value_or(""), std::string("wrong filter"));
    QVERIFY(cancelled.finishedAt);
    QCOMPARE(running.state, std::string("active"));
    QCOMPARE(running.action, std::string("requeue"));
    QCOMPARE(running.startedBy, std::string("op (alice@desk)"));
    QCOMPARE(running.approvedBy.value_or(""), std::string("bob (bob@desk)"));
    QVERIFY(running.needsApproval && running.approvedAt);
    QCOMPARE(running.matched, std::int64_t(159));
    QCOMPARE(running.changed, std::int64_t(120));
    QCOMPARE(running.refusedMovedOn + running.refusedBusy + running.refusedGone, std::int64_t(4));
    QCOMPARE(running.skipped, std::int64_t(2));
    QCOMPARE(nlohmann::json::parse(running.filter)["statuses"][0], "failed");

    // Processing over the window, from the planted processing rows: 60 minutes and the instant.
    QVERIFY(d.processingHistory);
    const auto& points = d.processingHistory->points;
    QCOMPARE(points.size(), std::size_t(61));
    QCOMPARE(points.back().at, d.takenAt);
    QCOMPARE(points.back().processing, d.figures.processing);
    QCOMPARE(points.back().expired, d.figures.expiredLeases);
    // An hour ago only the two rows first claimed hours ago were running, both with live leases.
    QCOMPARE(points.front().processing, std::int64_t(2));
    QCOMPARE(points.front().expired, std::int64_t(0));
    QCOMPARE(points[50].processing + points[50].expired, std::int64_t(2));
    for (std::size_t i = 1; i < points.size(); ++i)
        QVERIFY(points[i].expired >= points[i - 1].expired);

    // Through snapshot.json, the CSV files and the report.
    const auto json = idem::snapshotToJson(d);
    const auto back = idem::snapshotFromJson(json);
    QCOMPARE(idem::snapshotToJson(back), json);
    const auto j = nlohmann::json::parse(json);
    QCOMPARE(j["row_sets"][4]["name"], "waiting_to_retry");
    QCOMPARE(j["row_sets"][4]["total"], 3);
    QCOMPARE(j["pauses"]["rows"][1]["end_reason"], "storm over");
    QCOMPARE(j["jobs"]["rows"][1]["approved_by"], "bob (bob@desk)");
    QCOMPARE(j["processing_history"]["points"].size(), std::size_t(61));
    std::map<std::string, std::string> csv;
    for (const auto& [path, text] : idem::snapshotCsvFiles(d))
        csv[path] = text;
    QVERIFY(csv.count("rows/waiting_to_retry.csv") && csv.count("pauses.csv") && csv.count("jobs.csv")
        && csv.count("processing_history.csv"));
    QCOMPARE(idem::parseCsv(csv["pauses.csv"]).size(), std::size_t(3));
    QVERIFY(csv["jobs.csv"].find("bob (bob@desk)") != std::string::npos);
    const auto html = idem::snapshotReportHtml(d, {});
    QVERIFY(html.find("<h2>Waiting to retry: 3 rows</h2>") != std::string::npos);
    QVERIFY(html.find("<h2>Pauses: 1 in force, 2 listed</h2>") != std::string::npos);
    QVERIFY(html.find("<h2>Recovery jobs: 2</h2>") != std::string::npos);
    QVERIFY(html.find("gateway answers 503") != std::string::npos);
    // An older bundle (none of them) still reads.
    auto old = j;
    for (const char* field : { "pauses", "jobs", "processing_history" })
        old.erase(field);
    old["row_sets"].erase(4);
    const auto older = idem::snapshotFromJson(old.dump());
    QVERIFY(!older.pauses && !older.jobs && !older.processingHistory && !older.rowSet("waiting_to_retry"));
}

QTEST_GUILESS_MAIN(TestSnapshot)
#include "tst_snapshot.moc"
