#include <QtTest>

#include <QAbstractItemModelTester>
#include <pqxx/pqxx>

#include "core/migrate.h"
#include "models/consolesession.h"
#include "models/statuscountmodel.h"
#include "tests/support/testdb.h"

using idem::console::StatusCount;
using idem::console::StatusCountModel;
using idem::console::StatusCounts;

// The rows-per-status summary: a well-behaved model that merges each poll in place, fed by
// the session from a real table.
class TestStatusCountModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { IDEM_REQUIRE_DATABASE(); }
    void mergesInPlace();
    void countsComeFromTheTable();
};

namespace {
StatusCounts snapshot(std::initializer_list<StatusCount> rows)
{
    StatusCounts c;
    for (const auto& r : rows) {
        c.counts.append(r);
        c.total += r.rows;
    }
    return c;
}
}

void TestStatusCountModel::mergesInPlace()
{
    StatusCountModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);

    model.setCounts(snapshot({ { QStringLiteral("processing"), 3 }, { QStringLiteral("succeeded"), 1 } }));
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(inserted.count(), 2);
    QCOMPARE(model.index(0, StatusCountModel::RowsColumn).data(StatusCountModel::RowsRole).toLongLong(), 3);
    QCOMPARE(model.index(0, StatusCountModel::ShareColumn).data().toString(),
        QLocale().toString(75.0, 'f', 1) + QStringLiteral(" %"));

    changed.clear();
    model.setCounts(snapshot(
        { { QStringLiteral("processing"), 2 }, { QStringLiteral("succeeded"), 1 }, { QStringLiteral("failed"), 1 } }));
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(inserted.count(), 3);
    QVERIFY(!changed.isEmpty());
    QCOMPARE(model.index(2, StatusCountModel::StatusColumn).data().toString(), QStringLiteral("failed"));

    model.setCounts(snapshot({ { QStringLiteral("succeeded"), 4 } }));
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(removed.count(), 2);
    QCOMPARE(resets.count(), 0);
    QCOMPARE(model.index(0, StatusCountModel::ShareColumn).data().toString(),
        QLocale().toString(100.0, 'f', 1) + QStringLiteral(" %"));

    model.clear();
    QCOMPARE(model.rowCount(), 0);
}

void TestStatusCountModel::countsComeFromTheTable()
{
    idem::test::ScratchDatabase db("console_counts");
    {
        auto c = db.connect();
        idem::migrate(*c, { idem::SchemaName() });
        pqxx::work w(*c);
        w.exec(
            "INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status)"
            " SELECT 'k' || g, 'h', CASE WHEN g <= 3 THEN 'processing' WHEN g <= 5 THEN 'failed' ELSE 'succeeded' END"
            " FROM generate_series(1, 10) g");
        w.commit();
    }
    StatusCountModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    idem::console::ConsoleSession session;
    session.setPollInterval(std::chrono::milliseconds(100));
    connect(&session, &idem::console::ConsoleSession::countsChanged, &model, &StatusCountModel::setCounts);
    QSignalSpy counts(&session, &idem::console::ConsoleSession::countsChanged);
    idem::console::ConnectionSettings settings;
    settings.conninfo = QString::fromStdString(db.dsn());
    session.connectTo(settings);
    QVERIFY(counts.wait(20000));

    const auto rowsOf = [&model](const QString& status) -> qint64 {
        for (int r = 0; r < model.rowCount(); ++r) {
            const auto i = model.index(r, StatusCountModel::StatusColumn);
            if (i.data(StatusCountModel::StatusRole).toString() == status)
                return i.data(StatusCountModel::RowsRole).toLongLong();
        }
        return -1;
    };
    QCOMPARE(model.rowCount(), 4); // every protocol status, zeros included
    QCOMPARE(rowsOf(QStringLiteral("processing")), 3);
    QCOMPARE(rowsOf(QStringLiteral("failed")), 2);
    QCOMPARE(rowsOf(QStringLiteral("succeeded")), 5);
    QCOMPARE(rowsOf(QStringLiteral("retryable_failed")), 0);
    QCOMPARE(model.total(), 10);

    // The next poll picks up a change without resetting the model.
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    {
        auto c = db.connect();
        pqxx::work w(*c);
        w.exec("UPDATE idem.task_idempotency SET status = 'succeeded' WHERE status = 'processing'");
        w.commit();
    }
    QTRY_COMPARE_WITH_TIMEOUT(rowsOf(QStringLiteral("processing")), 0, 20000);
    QCOMPARE(rowsOf(QStringLiteral("succeeded")), 8);
    QCOMPARE(resets.count(), 0);
}

QTEST_MAIN(TestStatusCountModel)
#include "tst_statuscountmodel.moc"
