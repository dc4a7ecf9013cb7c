#include <QtTest>

#include <pqxx/pqxx>

#include "schema/migrate.h"
#include "tests/console/consolefixture.h"
#include "tests/support/testdb.h"

using idem::test::ConsoleFixture;
using idem::test::consoleTimeoutMs;
using State = idem::console::ConsoleSession::State;

// What the console offers when the schema is not what it expects: create a missing one (on
// the worker thread), and look but do not touch a newer one.
class TestSchemaOffer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { IDEM_REQUIRE_DATABASE(); }
    void missingSchemaIsOfferedAndMigrated();
    void migrationRefusalIsShown();
    void newerSchemaIsReadOnly();
    void readerWithoutGrantIsTold();

private:
    void connectThroughDialog(ConsoleFixture& f, const std::string& dsn, const QString& password = {});
};

void TestSchemaOffer::connectThroughDialog(ConsoleFixture& f, const std::string& dsn, const QString& password)
{
    idem::test::typeInto(f.child("conninfoEdit"), dsn);
    if (!password.isEmpty())
        idem::test::typeInto(f.child("passwordEdit"), password);
    idem::test::click(f.child<QPushButton>("connectButton"));
    QTRY_COMPARE_WITH_TIMEOUT(f.session.state(), State::Connected, consoleTimeoutMs);
}

void TestSchemaOffer::missingSchemaIsOfferedAndMigrated()
{
    idem::test::ScratchDatabase db("console_missing");
    ConsoleFixture f;
    connectThroughDialog(f, db.dsn());

    auto* banner = f.window.banner();
    QTRY_VERIFY(banner->isVisible());
    QVERIFY2(banner->text().contains(QStringLiteral("no Idem schema idem")), qPrintable(banner->text()));
    QVERIFY2(f.window.statusPanel()->schemaText().contains(QStringLiteral("not created yet")),
        qPrintable(f.window.statusPanel()->schemaText()));
    QCOMPARE(banner->actionButton()->text(), QStringLiteral("Create schema"));

    QSignalSpy finished(&f.session, &idem::console::ConsoleSession::migrationFinished);
    idem::test::click(banner->actionButton());
    QVERIFY(f.session.migrating());
    QVERIFY(finished.wait(consoleTimeoutMs));

    // The database has it, and the console has looked again.
    auto c = db.connect();
    pqxx::read_transaction t(*c);
    QCOMPARE(t.exec("SELECT max(version) FROM idem.idem_schema_version")[0][0].as<int>(), idem::latestSchemaVersion());
    QVERIFY2(f.window.statusPanel()->schemaText().contains(QStringLiteral("(current)")),
        qPrintable(f.window.statusPanel()->schemaText()));
    QTRY_VERIFY(banner->isHidden());
    // The dashboard reads the new, empty table.
    QTRY_VERIFY_WITH_TIMEOUT(f.dashboard->model()->ticks() > 0, consoleTimeoutMs);
    QCOMPARE(f.dashboard->tile(idem::console::Tile::Processing)->valueText(), QStringLiteral("0"));
}

void TestSchemaOffer::migrationRefusalIsShown()
{
    // A reader may connect and see that the schema is missing, but may not create it.
    idem::test::ScratchDatabase db("console_refused");
    const std::string role = "idem_t_console_offer_reader";
    idem::test::createLoginRole(role, "pw-offer", "idem_reader");
    {
        auto c = db.connect();
        pqxx::work w(*c);
        w.exec("REVOKE CREATE ON DATABASE \"" + db.name() + "\" FROM PUBLIC");
        w.commit();
    }
    ConsoleFixture f;
    connectThroughDialog(f, idem::test::dsnWith(db.dsn(), { { "user", role } }), QStringLiteral("pw-offer"));
    auto* banner = f.window.banner();
    QTRY_VERIFY(banner->isVisible());
    QSignalSpy failed(&f.session, &idem::console::ConsoleSession::failed);
    idem::test::click(banner->actionButton());
    QVERIFY(failed.wait(consoleTimeoutMs));
    QVERIFY2(banner->text().contains(QStringLiteral("42501")), qPrintable(banner->text())); // insufficient_privilege
    QVERIFY2(banner->text().contains(QStringLiteral("idemctl migrate")), qPrintable(banner->text()));
    QCOMPARE(f.session.state(), State::Connected);
}

void TestSchemaOffer::newerSchemaIsReadOnly()
{
    idem::test::ScratchDatabase db("console_newer");
    {
        auto c = db.connect();
        idem::migrate(*c, { idem::SchemaName() });
        pqxx::work w(*c);
        w.exec_params("INSERT INTO idem.idem_schema_version (version, name, checksum) VALUES ($1, $2, $3)",
            idem::latestSchemaVersion() + 1, "9999_from_the_future.sql", "0");
        w.commit();
    }
    ConsoleFixture f;
    connectThroughDialog(f, db.dsn());
    auto* banner = f.window.banner();
    QTRY_VERIFY(banner->isVisible());
    QVERIFY2(banner->text().contains(QStringLiteral("read-only")), qPrintable(banner->text()));
    QVERIFY(banner->actionButton()->isHidden()); // no migrate offer for a newer schema
    QVERIFY(f.session.readOnly());
    QVERIFY2(f.window.statusPanel()->schemaText().contains(QStringLiteral("newer than this console")),
        qPrintable(f.window.statusPanel()->schemaText()));
}

void TestSchemaOffer::readerWithoutGrantIsTold()
{
    idem::test::ScratchDatabase db("console_nogrant");
    {
        auto c = db.connect();
        idem::migrate(*c, { idem::SchemaName() });
    }
    const std::string role = "idem_t_console_offer_nobody";
    idem::test::createLoginRole(role, "pw-nobody", "");
    ConsoleFixture f;
    connectThroughDialog(f, idem::test::dsnWith(db.dsn(), { { "user", role } }), QStringLiteral("pw-nobody"));
    auto* banner = f.window.banner();
    QTRY_VERIFY(banner->isVisible());
    QVERIFY2(banner->text().contains(QStringLiteral("idem_reader")), qPrintable(banner->text()));
    QVERIFY2(f.window.statusPanel()->privilegeText().startsWith(QStringLiteral("none")),
        qPrintable(f.window.statusPanel()->privilegeText()));
    QCOMPARE(f.dashboard->model()->ticks(), 0);
    QVERIFY2(f.dashboard->freshnessText().contains(QStringLiteral("may not read")), qPrintable(f.dashboard->freshnessText()));
}

QTEST_MAIN(TestSchemaOffer)
#include "tst_schemaoffer.moc"
