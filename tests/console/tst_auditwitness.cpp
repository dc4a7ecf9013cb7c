// The console as a witness of the audit trail (issue 12, item 7): it remembers, per database, the
// newest entry it verified, so the owner removing the newest entries (which leaves a valid, shorter
// chain that `audit verify` calls intact) or rewriting them is reported, after a restart too. The
// trail is made by real recovery actions; the owner tampers with plain SQL; the witness follows a
// real dashboard's ticks on a real session, with its own settings file.

#include <QtTest>

#include <QFile>
#include <QSettings>
#include <QTemporaryDir>

#include <memory>

#include "models/auditwitness.h"
#include "tests/console/tst_auditwitness_support.h"

using idem::console::AuditWitness;
using idem::console::ConsoleSession;
using namespace idem::test;
using Verdict = AuditWitness::Verdict;

class TestAuditWitness : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void truncationIsReportedAndRemembered();
    void rewrittenEntryIsReported();
    void newEntriesAdvanceTheMark();

private:
    // A witness as a restarted console makes it: the same settings file, a new object.
    std::unique_ptr<AuditWitness> start(Trail& t);
    // Waits for the verification after `before` to be done.
    static bool settled(AuditWitness& w, int before);

    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_settingsFile;
};

void TestAuditWitness::initTestCase() { IDEM_REQUIRE_DATABASE(); }

std::unique_ptr<AuditWitness> TestAuditWitness::start(Trail& t)
{
    auto w
        = std::make_unique<AuditWitness>(&t.session, std::make_unique<QSettings>(m_settingsFile, QSettings::IniFormat));
    w->follow(&t.dashboard);
    return w;
}

bool TestAuditWitness::settled(AuditWitness& w, int before)
{
    return QTest::qWaitFor([&] { return w.verifications() > before && !w.verifying(); }, browserTimeoutMs);
}

void TestAuditWitness::truncationIsReportedAndRemembered()
{
    m_dir = std::make_unique<QTemporaryDir>();
    m_settingsFile = m_dir->filePath(QStringLiteral("witness.conf"));
    Trail t("witness_trunc");
    t.act(6);
    QVERIFY(t.connect());
    auto w = start(t);
    QSignalSpy changed(w.get(), &AuditWitness::changed);
    QVERIFY(settled(*w, 0));
    QCOMPARE(w->verdict(), Verdict::Intact);
    QVERIFY(w->lastWasFull());
    QVERIFY(w->mark());
    QCOMPARE(w->mark()->id, std::int64_t(6));
    QCOMPARE(w->mark()->hash.toStdString(), t.hashOf(6));
    QVERIFY(!changed.isEmpty());
    // The database is named by the server's system identifier (this role may read it), the
    // database and the schema; the settings file holds that and the mark, nothing of the DSN.
    const auto sysid
        = querySql(*t.conn, "SELECT system_identifier::text FROM pg_control_system()")[0][0].as<std::string>();
    QCOMPARE(w->identity(),
        QStringLiteral("system %1 database %2 schema idem")
            .arg(QString::fromStdString(sysid), QString::fromStdString(t.db.name())));
    {
        QFile f(m_settingsFile);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray ini = f.readAll();
        QVERIFY2(ini.contains(QByteArray::fromStdString(t.hashOf(6))), ini.constData());
        for (const char* secret : { "passfile", "password", "sslrootcert", "user=" })
            QVERIFY2(!ini.contains(secret), ini.constData());
    }

    // Ticks that show the same head verify nothing again.
    const int verified = w->verifications();
    const int ticks = t.dashboard.ticks();
    QTRY_VERIFY_WITH_TIMEOUT(t.dashboard.ticks() >= ticks + 2, browserTimeoutMs);
    QCOMPARE(w->verifications(), verified);

    // The owner removes the three newest entries: a valid, shorter chain.
    execSql(*t.conn, "DELETE FROM idem.task_idempotency_audit WHERE id > 3");
    QVERIFY(idem::verifyChain(*t.conn, idem::SchemaName()).ok()); // what a plain verify says
    QTRY_COMPARE_WITH_TIMEOUT(w->verdict(), Verdict::Truncated, browserTimeoutMs);
    QVERIFY(!w->lastWasFull()); // the tick's head moved: only the remembered entry and what follows
    QVERIFY(w->alarm());
    QCOMPARE(w->mark()->id, std::int64_t(6)); // not lowered
    QCOMPARE(*w->lastReport()->firstBrokenId, std::int64_t(6));
    QVERIFY2(w->text().contains(QStringLiteral("entry 6 (verified ")), qPrintable(w->text()));
    QVERIFY2(w->text().contains(QStringLiteral("the trail now ends at entry 3")), qPrintable(w->text()));
    QVERIFY2(w->text().contains(QStringLiteral("removed entries")), qPrintable(w->text()));
    QVERIFY(!w->acknowledged());
    w->acknowledge();
    QVERIFY(w->acknowledged());

    // A restart: the same settings file still remembers entry 6, and says so again.
    w.reset();
    w = start(t);
    QVERIFY(settled(*w, 0));
    QVERIFY(w->lastWasFull());
    QCOMPARE(w->verdict(), Verdict::Truncated);
    QCOMPARE(w->mark()->id, std::int64_t(6));
    QVERIFY(!w->acknowledged()); // acknowledging is for one run
    // A console that never saw the trail before has nothing to compare with.
    {
        QTemporaryDir other;
        AuditWitness fresh(&t.session,
            std::make_unique<QSettings>(other.filePath(QStringLiteral("fresh.conf")), QSettings::IniFormat));
        QVERIFY(settled(fresh, 0));
        QCOMPARE(fresh.verdict(), Verdict::Intact);
        QCOMPARE(fresh.mark()->id, std::int64_t(3));
    }

    // New legitimate actions, appended after the newest entry left (ids 4, 5: the actions take
    // the newest id + 1, schema 7 included): the trail stays short of entry 6, then has an entry
    // 6 that is not the one verified. Each way the alarm stays.
    const auto maxId
        = [&] { return querySql(*t.conn, "SELECT max(id) FROM idem.task_idempotency_audit")[0][0].as<std::int64_t>(); };
    t.act(2);
    QTRY_VERIFY_WITH_TIMEOUT(w->seenHead() && w->seenHead()->id == maxId() && !w->verifying(), browserTimeoutMs);
    QVERIFY(w->alarm());
    QCOMPARE(maxId(), std::int64_t(5));
    QCOMPARE(w->verdict(), Verdict::Truncated);
    QVERIFY2(w->text().contains(QStringLiteral("ends at entry 5")), qPrintable(w->text()));
    t.act(2);
    QTRY_VERIFY_WITH_TIMEOUT(w->seenHead() && w->seenHead()->id == maxId() && !w->verifying(), browserTimeoutMs);
    QVERIFY(w->alarm());
    QCOMPARE(maxId(), std::int64_t(7));
    QCOMPARE(w->verdict(), Verdict::Rewritten);
    QVERIFY2(w->text().contains(QStringLiteral("entry 6 is not the entry this console verified")),
        qPrintable(w->text()));

    // Accepting the current trail (local only) verifies it whole and remembers its head.
    const int before = w->verifications();
    w->acceptCurrentTrail();
    QVERIFY(settled(*w, before));
    QCOMPARE(w->verdict(), Verdict::Intact);
    QVERIFY(w->lastWasFull());
    QCOMPARE(w->mark()->id, std::int64_t(7));
    QCOMPARE(w->mark()->hash.toStdString(), t.hashOf(7));
    w.reset();
    w = start(t);
    QVERIFY(settled(*w, 0));
    QCOMPARE(w->verdict(), Verdict::Intact);
    QCOMPARE(w->mark()->id, std::int64_t(7));
}

void TestAuditWitness::rewrittenEntryIsReported()
{
    m_dir = std::make_unique<QTemporaryDir>();
    m_settingsFile = m_dir->filePath(QStringLiteral("witness.conf"));
    Trail t("witness_rewrite");
    t.act(5);
    QVERIFY(t.connect());
    auto w = start(t);
    QVERIFY(settled(*w, 0));
    QCOMPARE(w->mark()->id, std::int64_t(5));

    // The owner edits the remembered entry and re-hashes it with the schema's own function: the
    // chain verifies, the head id stays 5, only its hash differs.
    execSql(*t.conn,
        "UPDATE idem.task_idempotency_audit SET reason = 'innocent',"
        " entry_hash = idem.audit_entry_hash(id, (extract(epoch FROM at) * 1000000)::bigint, idempotency_key,"
        "  action, 'innocent', db_role, os_user, client_host, application, before_image, after_image, prev_hash)"
        " WHERE id = 5");
    QVERIFY(idem::verifyChain(*t.conn, idem::SchemaName()).ok());
    QTRY_COMPARE_WITH_TIMEOUT(w->verdict(), Verdict::Rewritten, browserTimeoutMs);
    QVERIFY(!w->lastWasFull());
    QCOMPARE(*w->lastReport()->firstBrokenId, std::int64_t(5));
    QVERIFY2(w->text().startsWith(QStringLiteral("The audit trail was rewritten: entry 5 is not the entry")),
        qPrintable(w->text()));
    QVERIFY(w->mark()->hash.toStdString() != t.hashOf(5));

    // Only the hash edited, fields left alone: the entry no longer hashes to it.
    execSql(*t.conn, "UPDATE idem.task_idempotency_audit SET entry_hash = repeat('f', 64) WHERE id = 5");
    QTRY_COMPARE_WITH_TIMEOUT(w->verdict(), Verdict::Broken, browserTimeoutMs);
    QVERIFY2(w->text().contains(QStringLiteral("broken at entry 5")), qPrintable(w->text()));
    QVERIFY(w->alarm());
}

void TestAuditWitness::newEntriesAdvanceTheMark()
{
    m_dir = std::make_unique<QTemporaryDir>();
    m_settingsFile = m_dir->filePath(QStringLiteral("witness.conf"));
    Trail t("witness_grow");
    t.act(3);
    QVERIFY(t.connect());
    auto w = start(t);
    QVERIFY(settled(*w, 0));
    QCOMPARE(w->mark()->id, std::int64_t(3));
    const int verified = w->verifications();

    t.act(2);
    QTRY_VERIFY_WITH_TIMEOUT(w->mark()->id == 5, browserTimeoutMs);
    QCOMPARE(w->verdict(), Verdict::Intact);
    QVERIFY(!w->lastWasFull());
    QCOMPARE(w->lastReport()->checked, std::int64_t(2)); // entries 4 and 5, not the whole trail
    QVERIFY(w->verifications() > verified);
    QVERIFY(w->mark()->verifiedAt.isValid());
    QVERIFY(!w->alarm());
    QVERIFY2(w->text().contains(QStringLiteral("up to entry 5")), qPrintable(w->text()));

    // The next run starts with the whole chain: an edit below the mark, invisible to the
    // incremental check, shows there.
    execSql(*t.conn, "UPDATE idem.task_idempotency_audit SET reason = 'nothing to see' WHERE id = 2");
    w.reset();
    w = start(t);
    QVERIFY(settled(*w, 0));
    QVERIFY(w->lastWasFull());
    QCOMPARE(w->verdict(), Verdict::Broken);
    QCOMPARE(*w->lastReport()->firstBrokenId, std::int64_t(2));
    QCOMPARE(w->mark()->id, std::int64_t(5));
    QVERIFY2(w->text().contains(QStringLiteral("changed after it was written")), qPrintable(w->text()));
}

QTEST_MAIN(TestAuditWitness)
#include "tst_auditwitness.moc"
