// idem-bench-dashboard: what the console's dashboard costs the machine it runs on, without a
// database. (1) Memory: 86,400 synthetic ticks (24 h at one a second) fed through the same
// ingest path as real ticks; VmRSS before and after. (2) Chart updates for a 24 h window at 1 s
// resolution: series downsampled to the plot's pixel width (min/max per pixel, what the console
// does) against every sample fed as is, each update followed by a render of the charts.
// Run: QT_QPA_PLATFORM=offscreen build/<dir>/bench/idem-bench-dashboard

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QXYSeries>

#include <cstdio>
#include <vector>

#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "views/chartpanel.h"

using namespace idem::console;

namespace {

long rssKb()
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').first().toLong();
    return -1;
}

DashboardTick syntheticTick(qint64 ms, int i)
{
    DashboardTick t;
    auto& r = t.reading;
    r.serverNowMs = ms;
    r.stats.processing = 200 + (i * 7919) % 150;
    r.stats.expiredLeases = (i % 600 == 0) ? 40 : (i * 31) % 5;
    r.stats.claims = 1000;
    r.stats.duplicateRatio = 0.1;
    idem::CounterBucket b;
    b.minuteEpoch = ms / 60000 * 60;
    b.acquired = 500 + i % 60;
    b.replayed = 50;
    b.inProgress = 5;
    b.conflict = i % 3;
    b.reacquiredLease = i % 7;
    b.failedRetryable = i % 4;
    r.buckets = { b };
    if (i % 30 == 0)
        r.attempts = std::vector<idem::AttemptsBin> { { 1, 180 }, { 2, 30 }, { 3, 8 }, { 10, 1 } };
    t.elapsedMs = 2;
    t.historyMinutes = 2;
    return t;
}

double timeUpdates(ChartPanel& charts, const DashboardModel& model, bool downsample, int rounds)
{
    charts.setDownsampling(downsample);
    charts.update(model); // warm up (axes, first allocation)
    charts.grab();
    QElapsedTimer clock;
    clock.start();
    for (int i = 0; i < rounds; ++i) {
        charts.update(model);
        charts.grab(); // the render is where every point is paid for
    }
    return double(clock.nsecsElapsed()) / 1e6 / rounds;
}

} // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    constexpr int ticks = 24 * 60 * 60;
    const long rssStart = rssKb();

    ConsoleSession session; // never connected: the model is fed directly
    DashboardModel model(&session);
    auto settings = model.settings();
    settings.windowMinutes = 1440;
    settings.paused = true;
    model.setSettings(settings);
    const long rssModel = rssKb();

    const qint64 t0 = 1'700'000'000'000;
    QElapsedTimer clock;
    clock.start();
    for (int i = 0; i < ticks; ++i)
        model.ingest(syntheticTick(t0 + qint64(i) * 1000, i));
    const double ingestUs = double(clock.nsecsElapsed()) / 1e3 / ticks;
    const long rssAfter = rssKb();
    // Another day on top: memory must not move (the rings are full).
    for (int i = ticks; i < 2 * ticks; ++i)
        model.ingest(syntheticTick(t0 + qint64(i) * 1000, i));
    const long rssTwoDays = rssKb();

    ChartPanel charts;
    charts.resize(1280, 420);
    charts.show();
    QApplication::processEvents();
    const double reducedMs = timeUpdates(charts, model, true, 20);
    const int reducedPoints = charts.series(QStringLiteral("processing"))->count();
    const double fullMs = timeUpdates(charts, model, false, 3);
    const int fullPoints = charts.series(QStringLiteral("processing"))->count();

    std::printf("dashboard benchmark (offscreen, %d synthetic ticks = 24 h at 1 s)\n", ticks);
    std::printf("  memory: VmRSS %ld kB at start, %ld kB with an empty model, %ld kB after 24 h of ticks "
                "(+%ld kB), %ld kB after 48 h (+%ld kB over 24 h); history holds %lld kB\n",
        rssStart, rssModel, rssAfter, rssAfter - rssModel, rssTwoDays, rssTwoDays - rssAfter,
        static_cast<long long>(model.history().bytes() / 1024));
    std::printf("  ingest: %.2f us per tick (UI thread)\n", ingestUs);
    std::printf("  chart update + render, 24 h window: downsampled %.1f ms (%d points per live series), "
                "every sample %.1f ms (%d points per live series): %.1fx\n",
        reducedMs, reducedPoints, fullMs, fullPoints, fullMs / reducedMs);
    return 0;
}
