// On a standby the per-minute charts end at its replay point (issue 15, item 4): the minutes
// after what it has replayed are unknown, not quiet, so the lines must not fall to zero there as
// if claims had stopped. A primary's lines run to the last complete minute. No database needed:
// a static dashboard model fed one reading, as the snapshot viewer does.

#include <QtTest>

#include <QXYSeries>

#include "models/dashboardmodel.h"
#include "views/chartpanel.h"

using namespace idem::console;

class TestStandbyCharts : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void linesEndAtTheReplayPoint_data();
    void linesEndAtTheReplayPoint();
};

void TestStandbyCharts::linesEndAtTheReplayPoint_data()
{
    QTest::addColumn<bool>("standby");
    QTest::addColumn<double>("lagSeconds");
    QTest::addColumn<int>("lastMinuteBack"); // the newest point, in whole minutes before now's minute
    QTest::newRow("primary") << false << 0.0 << 1;
    QTest::newRow("standby caught up") << true << 0.0 << 1;
    QTest::newRow("standby 10 min behind") << true << 600.0 << 11;
}

void TestStandbyCharts::linesEndAtTheReplayPoint()
{
    QFETCH(bool, standby);
    QFETCH(double, lagSeconds);
    QFETCH(int, lastMinuteBack);
    const qint64 now = 1'800'000'030'000; // 30 s into a minute
    idem::DashboardReading r;
    r.serverNowMs = now;
    r.stats.inRecovery = standby;
    if (standby)
        r.stats.replicationLagSeconds = lagSeconds;
    // Claims in every minute up to 12 minutes before the replay point.
    for (int back = 30; back >= 12; --back) {
        idem::CounterBucket b;
        b.minuteEpoch = (now / 60000 - back) * 60;
        b.acquired = 5;
        r.buckets.push_back(b);
    }
    DashboardSettings settings;
    settings.windowMinutes = 30;
    DashboardModel model;
    model.showStatic(settings, r, 30);
    ChartPanel charts;
    charts.update(model);
    auto* fresh = charts.series(QStringLiteral("new"));
    QVERIFY(fresh && fresh->count() > 0);
    const qint64 lastX = qint64(fresh->at(fresh->count() - 1).x());
    QCOMPARE(lastX, (now / 60000 - lastMinuteBack) * 60000);
}

QTEST_MAIN(TestStandbyCharts)
#include "tst_standbycharts.moc"
