#include <QtTest>

#include <pqxx/pqxx>

#include "core/migrate.h"
#include "tests/support/testdb.h"

class TestMigrate : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { IDEM_REQUIRE_DATABASE(); }
    void emptyDatabase();
};

void TestMigrate::emptyDatabase()
{
    idem::test::ScratchDatabase db("migrate_empty");
    auto c = db.connect();
    const auto report = idem::migrate(*c, { idem::SchemaName() });
    QCOMPARE(report.toVersion, idem::latestSchemaVersion());
}

QTEST_GUILESS_MAIN(TestMigrate)
#include "tst_migrate.moc"
