// The tile presenter on planted data: no database, no widgets, no timers. Every expected text
// and number below is written by hand from the planted figures, not computed by the product.
#include <QLocale>
#include <QSet>
#include <QTest>

#include "models/dashboardhistory.h"
#include "models/dashboardpolling.h"
#include "models/latencywatch.h"
#include "models/tilecatalogue.h"
#include "models/tilepresenter.h"

using namespace idem::console;
using idem::Figure;
using idem::FigureQuality;

namespace {
QString u(const char* text) { return QString::fromUtf8(text); }
} // namespace

class TestTilePresenter : public QObject {
    Q_OBJECT

    DashboardSettings settings;
    DashboardHistory history;
    idem::DashboardReading reading;

    TilePresenter presenter(bool withReading = true, std::int64_t historyFromMinute = 0) const
    {
        TileInputs in;
        in.settings = &settings;
        in.figuresWindowMinutes = settings.windowMinutes;
        in.latest = withReading ? &reading : nullptr;
        in.history = &history;
        in.historyFromMinute = historyFromMinute;
        return TilePresenter(in);
    }

private Q_SLOTS:
    void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

    void init()
    {
        settings = DashboardSettings();
        history.clear();
        reading = {};
        reading.serverNowMs = 1'700'000'000'000; // 2023-11-14 22:13:20 UTC, minute 1699999980
        auto& s = reading.stats;
        s.processing = 3;
        s.expiredLeases = 12; // red from 10
        s.retryableFailed = 150; // amber from 100
        s.uncertain = 0;
        s.failedPermanent = 4;
        s.failedExhausted = 2;
        s.longUnfinished = 1;
        s.oldestProcessingAgeSeconds = 372.5;
        s.claims = 2000;
        s.duplicateRatio = 0.25;
        s.retries = 100; // 5 %: normal below 15
        s.failedRetries = 60; // 3 %: amber from 2
        s.digestConflicts = 0;
        s.staleTokenRejections = 40; // 2 %: amber from 1
        s.totalRowsEstimate = 123456;
        s.label(Figure::TotalRows).source = idem::plannerStatisticsSource;
        // Two probes' last runs: charge found 2 keys without a payment and 1 paid twice of its
        // 300 sampled, refund none of its 200; the older run finished 3 min 5 s ago.
        auto& r = reading.reconcile;
        r.probes = 2;
        r.run = 2;
        r.sampled = 500;
        r.missing = 2;
        r.duplicated = 1;
        r.oldestFinishedMs = reading.serverNowMs - 185'000;
        r.worst = "charge";
        r.operationsNotOk = 1;
    }

    // The catalogue is the Tile enum's order, one row each, keys unique.
    void catalogueHasOneRowPerTile()
    {
        QCOMPARE(int(tileCatalogue().size()), tileCount);
        QSet<QString> keys;
        for (int i = 0; i < tileCount; ++i) {
            QCOMPARE(int(tileCatalogue()[std::size_t(i)].tile), i);
            keys.insert(QLatin1String(tileCatalogue()[std::size_t(i)].key));
            // A tile opens rows or says why it cannot.
            const auto& spec = tileCatalogue()[std::size_t(i)];
            QVERIFY2(spec.opensRows() != (spec.opensNothing != nullptr), spec.key);
            QVERIFY2(spec.opensRows() == (spec.opens != nullptr), spec.key);
        }
        QCOMPARE(keys.size(), tileCount);
    }

    void noReadingShowsADash()
    {
        const auto v = presenter(false).tile(Tile::Processing);
        QCOMPARE(v.text, QStringLiteral("–"));
        QVERIFY(v.detail.isEmpty());
        QCOMPARE(v.level, Level::NoData);
        QVERIFY(v.opens.isEmpty());
    }

    void texts_data()
    {
        QTest::addColumn<Tile>("tile");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("detail");
        QTest::addColumn<Level>("level");
        QTest::addRow("processing") << Tile::Processing << u("3") << u("live leases") << Level::Normal;
        QTest::addRow("expired") << Tile::ExpiredLeases << u("12") << u("processing, lease ran out") << Level::Critical;
        QTest::addRow("waiting") << Tile::WaitingRetry << u("150") << u("retryable_failed now") << Level::Warning;
        QTest::addRow("uncertain") << Tile::Uncertain << u("0") << u("retryable, effect unknown") << Level::Normal;
        QTest::addRow("long") << Tile::LongUnfinished << u("1") << u("in flight after 60 min") << Level::Warning;
        QTest::addRow("oldest") << Tile::OldestProcessing << u("6 min 12 s") << u("since first seen") << Level::Warning;
        QTest::addRow("failed") << Tile::Failed << u("6") << u("4 permanent · 2 exhausted") << Level::Warning;
        QTest::addRow("ratio") << Tile::DuplicateRatio << u("25.0 %") << u("of 2,000 requests (retries not counted), last 15 min") << Level::Warning;
        QTest::addRow("retries") << Tile::Retries << u("100") << u("5.0 % of claims, last 15 min") << Level::Normal;
        QTest::addRow("failed retries") << Tile::FailedRetries << u("60") << u("3.0 % of claims, last 15 min")
                                        << Level::Warning;
        QTest::addRow("conflicts") << Tile::DigestConflicts << u("0") << u("0.0 % of claims, last 15 min") << Level::Normal;
        QTest::addRow("stale") << Tile::StaleTokens << u("40") << u("2.0 % of claims, last 15 min") << Level::Warning;
        QTest::addRow("total") << Tile::TotalRows << u("≈ 123,456") << u("estimate (planner statistics)") << Level::Normal;
        QTest::addRow("reconcile") << Tile::Reconcile << u("3")
                                   << u("charge: 2 with no effect, 1 with two or more, in the last 500 sampled")
                                   << Level::Critical;
    }

    // The worst p95 tile is a catalogue row like the others, its figure the latency read's (not
    // the tick's): greyed until that read answers, held against its thresholds (5 s, 30 s), the
    // slowest operations in its tooltip, and a click that says why it opens nothing.
    void worstP95FromTheLatencyRead()
    {
        const auto& spec = tileSpec(Tile::WorstP95RunTime);
        QCOMPARE(QLatin1String(spec.key), QLatin1String("worstP95RunTime"));
        QCOMPARE(thresholdSettingsKey(Tile::WorstP95RunTime), u("thresholds/worstP95RunTime"));
        QCOMPARE(settings.thresholds[std::size_t(Tile::WorstP95RunTime)], (Threshold { 5.0, 30.0 }));
        auto v = presenter().tile(Tile::WorstP95RunTime);
        QCOMPARE(v.text, u("–"));
        QVERIFY(v.pending);
        QCOMPARE(v.level, Level::NoData);

        LatencyReading latency;
        latency.foldedToMs = reading.serverNowMs - 120'000;
        latency.runByOperation = { { u("charge"), 70, 12'000.0 }, { u("refund"), 30, 40.0 } };
        const LatencyState state { &latency, 15, QString() };
        TileInputs in;
        in.settings = &settings;
        in.latest = nullptr; // no tick yet: the tile has its own read
        in.latency = &state;
        v = TilePresenter(in).tile(Tile::WorstP95RunTime);
        QVERIFY(!v.pending);
        QCOMPARE(v.value, std::optional<double>(12.0));
        QCOMPARE(v.level, Level::Warning);
        QVERIFY2(v.detail.startsWith(u("charge, last 15 min to ")), qPrintable(v.detail));
        QVERIFY2(v.more.contains(u("\ncharge: ")) && v.more.contains(u("\nrefund: ")), qPrintable(v.more));
        QVERIFY(!v.opensNothing.isEmpty());
        QCOMPARE(TilePresenter(in).thresholdText(Tile::WorstP95RunTime), u("Amber from 5 s, red from 30 s."));
        settings.thresholds[std::size_t(Tile::WorstP95RunTime)].critical = 10.0;
        QCOMPARE(TilePresenter(in).tile(Tile::WorstP95RunTime).level, Level::Critical);
    }

    // The Reconcile tile says how old its runs are and which keys went unchecked; before any
    // run it has no value; several operations with keys not ok are counted, not named.
    void reconcileAgesAndScopes()
    {
        auto v = presenter().tile(Tile::Reconcile);
        QCOMPARE(v.quality, u("last runs up to 3 min ago"));
        QVERIFY(v.opens.isEmpty());
        QVERIFY(v.opensNothing.contains(u("idemctl reconcile list")));
        reading.reconcile.errors = 4;
        QCOMPARE(presenter().tile(Tile::Reconcile).quality, u("last runs up to 3 min ago · 4 keys not checked (query failed)"));
        reading.reconcile.operationsNotOk = 2;
        QCOMPARE(presenter().tile(Tile::Reconcile).detail,
            u("2 operations: 2 with no effect, 1 with two or more, in the last 500 sampled"));
        reading.reconcile.missing = 0;
        reading.reconcile.duplicated = 0;
        reading.reconcile.operationsNotOk = 0;
        v = presenter().tile(Tile::Reconcile);
        QCOMPARE(v.text, u("0"));
        QCOMPARE(v.detail, u("2 probes: 0 with no effect, 0 with two or more, in the last 500 sampled"));
        QCOMPARE(v.level, Level::Normal);
        reading.reconcile = {};
        v = presenter().tile(Tile::Reconcile);
        QCOMPARE(v.text, u("–"));
        QCOMPARE(v.detail, u("no probe has run (idemctl reconcile add)"));
    }
    void texts()
    {
        QFETCH(Tile, tile);
        QFETCH(QString, text);
        QFETCH(QString, detail);
        QFETCH(Level, level);
        const auto v = presenter().tile(tile);
        QCOMPARE(v.text, text);
        QCOMPARE(v.detail, detail);
        QCOMPARE(v.level, level);
        // Every figure here is exact now, but the Reconcile tile's is as of its runs (its age:
        // reconcileAgesAndScopes).
        if (tile != Tile::Reconcile)
            QVERIFY(v.quality.isEmpty());
    }

    void noValueLines()
    {
        reading.stats.duplicateRatio.reset();
        reading.stats.oldestProcessingAgeSeconds.reset();
        reading.stats.totalRowsEstimate.reset();
        settings.windowMinutes = 60;
        const auto p = presenter();
        QCOMPARE(p.tile(Tile::DuplicateRatio).text, QStringLiteral("–"));
        QCOMPARE(p.tile(Tile::DuplicateRatio).detail, QStringLiteral("no claims, last 1 h"));
        QCOMPARE(p.tile(Tile::DuplicateRatio).level, Level::Normal);
        QCOMPARE(p.tile(Tile::OldestProcessing).detail, QStringLiteral("nothing processing"));
        QCOMPARE(p.tile(Tile::TotalRows).detail, QStringLiteral("estimate: not analysed yet"));
    }

    // A capped count reads "≥", with the exact figure of the last refresh and its age below.
    void lowerBounds()
    {
        auto& s = reading.stats;
        s.failedPermanent = 10000;
        auto& l = s.label(Figure::FailedPermanent);
        l.quality = FigureQuality::LowerBound;
        l.exact = 12500;
        l.exactAgeSeconds = 125;
        const auto v = presenter().tile(Tile::Failed);
        QCOMPARE(v.text, QStringLiteral("≥ 10,002"));
        QCOMPARE(v.detail, QStringLiteral("≥\u00a010,000 permanent · 2 exhausted"));
        // 12,500 permanent from the refresh plus the 2 exhausted counted now.
        QCOMPARE(v.quality, QStringLiteral("exact 12,502 · 2 min ago"));
        l.exact.reset();
        QCOMPARE(presenter().tile(Tile::Failed).quality, QStringLiteral("counted up to 10,000; exact count pending"));
    }

    void opens()
    {
        settings.tenant = QStringLiteral("acme");
        settings.longUnfinishedMinutes = 30;
        const auto p = presenter();
        auto f = p.filterFor(Tile::LongUnfinished);
        QCOMPARE(f.tenant.value_or(""), std::string("acme"));
        QCOMPARE(f.statuses, (std::vector<std::string> { "processing", "retryable_failed" }));
        QCOMPARE(f.unfinishedForMinutes.value_or(0), 30);
        QCOMPARE(p.opensText(Tile::LongUnfinished),
            QStringLiteral("rows processing or waiting to retry, first seen over 30 min ago"));
        f = p.filterFor(Tile::FailedRetries);
        QCOMPARE(f.minAttempts.value_or(0), 2);
        QCOMPARE(f.updatedWithinMinutes.value_or(0), 15);
        QVERIFY(f.failedRetryInWindow);
        QVERIFY(f.statuses.empty());
        QCOMPARE(p.opensText(Tile::DigestConflicts),
            QStringLiteral("keys with a digest conflict in the last 15 min (the tile counts conflicting claims)"));
        QVERIFY(p.opensText(Tile::StaleTokens).isEmpty());
        QVERIFY(TilePresenter::opensNothingText(Tile::StaleTokens).contains(QStringLiteral("leaves no mark")));
        QVERIFY(TilePresenter::opensNothingText(Tile::Failed).isEmpty());
        QCOMPARE(TilePresenter::sortFor(Tile::OldestProcessing)->column, idem::TaskSortColumn::CreatedAt);
        QVERIFY(!TilePresenter::sortFor(Tile::Failed));
    }

    void alertsAndTooltips()
    {
        const auto p = presenter();
        QCOMPARE(p.alertText(Tile::ExpiredLeases), QStringLiteral("Expired leases 12 (red from 10)"));
        QCOMPARE(p.alertText(Tile::StaleTokens), QStringLiteral("Stale-token rejections 40 (2.0 % of claims; red from 5 %)"));
        QCOMPARE(p.alertText(Tile::OldestProcessing), QStringLiteral("Oldest processing 6 min 12 s (red from 1,800 s)"));
        QCOMPARE(p.thresholdText(Tile::DuplicateRatio), QStringLiteral("Amber from 20 %, red from 50 %."));
        QCOMPARE(p.thresholdText(Tile::Retries), QStringLiteral("Amber from 15 % of claims, red from 40 % of claims."));
        QCOMPARE(p.thresholdText(Tile::Processing), QStringLiteral("No thresholds set."));
        const QString tip = TilePresenter::toolTip(Tile::Failed, true, QStringLiteral("T"), QStringLiteral("rows in failed"), {});
        QCOMPARE(tip, tileDefinition(Tile::Failed) + QStringLiteral("\nT\nClick: opens rows in failed."));
        QCOMPARE(TilePresenter::toolTip(Tile::StaleTokens, false, {}, {}, QStringLiteral("Why.")),
            tileDefinition(Tile::StaleTokens) + QStringLiteral("\nClick: opens nothing. Why."));
    }

    // A counter tile is red since the first minute whose window was red, in a run reaching the
    // newest minute: planted per-minute counters, 15-minute windows.
    void redSinceFromCounters()
    {
        const std::int64_t newest = reading.serverNowMs / 60000 * 60;
        std::vector<idem::CounterBucket> buckets;
        // 30 minutes of 100 claims each; 10 stale tokens in each of the newest three minutes: the
        // windows ending in those minutes hold 30, 20 and 10 of 1500 claims, the one before none.
        for (int i = 29; i >= 0; --i) {
            idem::CounterBucket b;
            b.minuteEpoch = newest - i * 60;
            b.acquired = 100;
            b.staleToken = i < 3 ? 10 : 0;
            buckets.push_back(b);
        }
        history.mergeBuckets(buckets);
        settings.thresholds[std::size_t(Tile::StaleTokens)].critical = 0.5; // 10 of 1500 is 0.67 %
        reading.stats.staleTokenRejections = 30;
        reading.stats.claims = 1500;
        const auto a = presenter(true, newest - 29 * 60).redSince(Tile::StaleTokens, std::nullopt);
        QCOMPARE(a.since.toSecsSinceEpoch(), newest - 2 * 60);
        QVERIFY(!a.orEarlier);
        QVERIFY(a.minutes);
        // Without the history's start nothing is known but the first sighting.
        const auto b = presenter(true, 0).redSince(Tile::StaleTokens, std::nullopt);
        QCOMPARE(b.since.toMSecsSinceEpoch(), reading.serverNowMs);
        QVERIFY(b.orEarlier);
    }

    void redSinceFromAge()
    {
        // 372.5 s old, red from 300 s: red since 72.5 s ago.
        settings.thresholds[std::size_t(Tile::OldestProcessing)].critical = 300;
        const auto a = presenter().redSince(Tile::OldestProcessing, std::nullopt);
        QCOMPARE(a.since.toMSecsSinceEpoch(), reading.serverNowMs - 72500);
        QVERIFY(!a.orEarlier);
    }

    void redSinceFromSamples()
    {
        // Samples every 2 s; expired leases 0, then 11, 12, 12 (red from 10).
        const qint64 t0 = reading.serverNowMs - 6000;
        const qint64 expired[] = { 0, 11, 12, 12 };
        for (int i = 0; i < 4; ++i)
            history.addLive({ t0 + i * 2000, 1, expired[i], 5 });
        const auto a = presenter().redSince(Tile::ExpiredLeases, std::nullopt);
        QCOMPARE(a.since.toMSecsSinceEpoch(), t0 + 2000);
        QVERIFY(!a.orEarlier);
    }

    // The polling state machine: budget, hung ticks, backoff, overdue, history asked for.
    void polling()
    {
        DashboardPolling p;
        QCOMPARE(p.answered(50, 2000, 5000).count(), 2000); // 10 x 50 ms is under the interval
        QVERIFY(!p.stretched(2000));
        QCOMPARE(p.answered(700, 2000, 5000).count(), 7000); // stretched to 10 x the tick
        QVERIFY(p.stretched(2000));
        QCOMPARE(p.answered(9000, 2000, 5000).count(), 2000); // hung past its timeout: no stretch
        QCOMPARE(p.failed(2000).count(), 4000);
        QCOMPARE(p.failed(2000).count(), 8000);
        QCOMPARE(p.failed(2000).count(), 16000);
        QCOMPARE(p.failed(2000).count(), 32000);
        QCOMPARE(p.failed(2000).count(), 60000); // 64 s capped at a minute
        QCOMPARE(p.failures(), 5);
        QCOMPARE(p.answered(10, 2000, 5000).count(), 2000);
        QCOMPARE(p.failures(), 0);
        QCOMPARE(p.failed(2000).count(), 4000); // the backoff starts over
        QVERIFY(!DashboardPolling::overdue(1999));
        QVERIFY(DashboardPolling::overdue(2000));
        QCOMPARE(DashboardPolling::historyMinutes(0, 15, 0, 0), 30);
        QCOMPARE(DashboardPolling::historyMinutes(30, 15, 1000, 1000 + 30000), 2);
        QCOMPARE(DashboardPolling::historyMinutes(30, 15, 1000, 1000 + 5 * 60000), 7);
        QCOMPARE(DashboardPolling::historyMinutes(30, 15, 1000, 1000 + 60 * 60000), 15);
        QVERIFY(p.setFreshness(DashboardPolling::Freshness::Live, {}));
        QVERIFY(!p.setFreshness(DashboardPolling::Freshness::Live, {}));
        QVERIFY(p.setFreshness(DashboardPolling::Freshness::Failed, QStringLiteral("timeout")));
        QCOMPARE(p.reason(), QStringLiteral("timeout"));
    }
};

QTEST_GUILESS_MAIN(TestTilePresenter)
#include "tst_tilepresenter.moc"
