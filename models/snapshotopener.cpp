#include "models/snapshotopener.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QThread>

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/connection.h"
#include "operations/latency.h"
#include "operations/outcomeseries.h"
#include "operations/snapshotjson.h"
#include "operations/tasklist.h"
#include "models/trustedkeystore.h"
#include "models/visibletext.h"

namespace idem::console {

namespace {
    std::optional<qint64> isoMs(const std::string& text)
    {
        const auto us = idem::parseIsoMicros(text);
        if (!us)
            return std::nullopt;
        return *us / 1000;
    }
} // namespace

const char* snapshotMetricName(Tile tile) { return tileSpec(tile).metric; }

QDateTime snapshotTakenAt(const idem::SnapshotData& data)
{
    const auto ms = isoMs(data.takenAt);
    return ms ? QDateTime::fromMSecsSinceEpoch(*ms, Qt::UTC) : QDateTime();
}

QString snapshotTimeText(const QDateTime& at)
{
    if (!at.isValid())
        return SnapshotOpener::tr("at an unknown time");
    const QString format = QStringLiteral("yyyy-MM-dd HH:mm:ss");
    return SnapshotOpener::tr("%1 UTC (%2 local)").arg(at.toUTC().toString(format), at.toLocalTime().toString(format));
}

QString snapshotSource(const idem::SnapshotData& data)
{
    QString host;
    try {
        const auto options = idem::parseConninfo(data.conninfo);
        for (const char* key : { "host", "hostaddr" }) {
            const auto it = options.find(key);
            if (it != options.end() && !it->second.empty()) {
                host = QString::fromStdString(it->second);
                break;
            }
        }
    } catch (const std::exception&) {
        // A conninfo this libpq cannot parse: the host stays unknown, the rest still shows.
    }
    if (host.isEmpty() || host.startsWith(QLatin1Char('/')))
        host = host.isEmpty() ? SnapshotOpener::tr("default host") : SnapshotOpener::tr("local socket");
    return QStringLiteral("%1@%2").arg(QString::fromStdString(data.database), host);
}

idem::DashboardReading snapshotReading(const idem::SnapshotData& data)
{
    idem::DashboardReading r;
    r.stats = data.figures;
    const QDateTime at = snapshotTakenAt(data);
    r.serverNowMs = at.isValid() ? at.toMSecsSinceEpoch() : 0;
    // Rows per (minute, tenant, operation, outcome): summed per minute, as the live tick does.
    std::map<std::int64_t, idem::CounterBucket> minutes;
    for (const auto& c : data.history.rows) {
        const auto ms = isoMs(c.bucket);
        const auto field = idem::outcomeField(c.outcome);
        if (!ms || !field)
            continue;
        const std::int64_t minute = *ms / 60000 * 60;
        auto& b = minutes[minute];
        b.minuteEpoch = minute;
        b.*field += c.n;
    }
    for (const auto& [minute, bucket] : minutes)
        r.buckets.push_back(bucket);
    if (data.reconcile)
        r.reconcile = idem::reconcileTotals(*data.reconcile);
    return r;
}

std::optional<LatencyReading> snapshotLatency(const idem::SnapshotData& data)
{
    if (!data.latency)
        return std::nullopt;
    using Slots = std::vector<std::pair<int, std::int64_t>>;
    LatencyReading r;
    r.serverNowMs = snapshotTakenAt(data).isValid() ? snapshotTakenAt(data).toMSecsSinceEpoch() : 0;
    r.foldedToMs = isoMs(data.latency->foldedTo).value_or(0);
    // Merged as the live read merges them: per minute and kind over the scope's tenants and
    // operations, and per operation over the whole history for the tile.
    std::map<std::pair<std::int64_t, idem::LatencyKind>, Slots> perMinute;
    std::map<std::string, std::pair<Slots, std::int64_t>> runPerOperation;
    for (const auto& row : data.latency->rows) {
        const auto ms = isoMs(row.bucket);
        const auto kind = idem::latencyKindFromName(row.kind);
        if (!ms || !kind || *kind == idem::LatencyKind::Attempts)
            continue;
        idem::mergeSlotCounts(perMinute[{ *ms, *kind }], row.slotCounts);
        if (*kind == idem::LatencyKind::Run) {
            auto& op = runPerOperation[row.operation];
            idem::mergeSlotCounts(op.first, row.slotCounts);
            op.second += row.n;
        }
    }
    for (const auto& minute : perMinute) {
        const auto kind = minute.first.second;
        const auto q = [&](double p) { return idem::latencyQuantile(kind, minute.second, p).value_or(0.0); };
        (kind == idem::LatencyKind::Run ? r.run : r.timeToSuccess)
            .push_back({ minute.first.first, q(0.50), q(0.95), q(0.99) });
    }
    for (const auto& [operation, run] : runPerOperation)
        if (run.second > 0)
            r.runByOperation.push_back({ visibleText(operation), run.second,
                idem::latencyQuantile(idem::LatencyKind::Run, run.first, 0.95).value_or(0.0) });
    sortLatencyByP95(r.runByOperation);
    return r;
}

std::vector<LiveSample> snapshotProcessingSamples(const idem::SnapshotData& data)
{
    std::vector<LiveSample> out;
    if (!data.processingHistory)
        return out;
    for (const auto& p : data.processingHistory->points)
        if (const auto ms = isoMs(p.at))
            out.push_back({ *ms, p.processing, p.expired, 0 });
    return out;
}

bool snapshotHasThresholds(const idem::SnapshotData& data) { return !data.thresholds.empty(); }

DashboardSettings snapshotDashboardSettings(const idem::SnapshotData& data)
{
    DashboardSettings s;
    s.paused = true;
    s.windowMinutes = std::max(1, data.historyMinutes > 0 ? data.historyMinutes : data.windowMinutes);
    s.longUnfinishedMinutes = data.longUnfinishedAfterMinutes;
    s.tenant = QString::fromStdString(data.tenant.value_or(std::string()));
    s.operation = QString::fromStdString(data.operation.value_or(std::string()));
    if (data.poll)
        s.intervalMs
            = std::clamp(data.poll->intervalMs, DashboardSettings::minIntervalMs, DashboardSettings::maxIntervalMs);
    // Its processing history has a point a minute: the chart must not read a minute's step as an
    // outage and break the line there.
    if (data.processingHistory)
        s.intervalMs = DashboardSettings::maxIntervalMs;
    for (const auto& t : data.thresholds) {
        for (int i = 0; i < tileCount; ++i) {
            const auto tile = static_cast<Tile>(i);
            if (t.metric != snapshotMetricName(tile) && t.metric != tileSpec(tile).key)
                continue;
            // snapshot.json holds thresholds in the figure's unit (a ratio as a fraction).
            const double scale = tileUnitsPerFigureUnit(tile);
            const auto toTile = [scale](std::optional<double> v) { return v ? std::optional(*v * scale) : v; };
            s.thresholds[static_cast<std::size_t>(i)] = { toTile(t.warning), toTile(t.critical) };
        }
    }
    return s;
}

SnapshotOpener::SnapshotOpener(QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<SharedSnapshot>();
}

SnapshotOpener::~SnapshotOpener() = default;

SharedSnapshot SnapshotOpener::openNow(const QString& dir, QString* error, const idem::TrustedKeys& trusted)
{
    const std::filesystem::path path(QFile::encodeName(dir).toStdString());
    try {
        return std::make_shared<const idem::LoadedSnapshot>(idem::openSnapshotBundle(path, trusted));
    } catch (const idem::SnapshotFormatError& e) {
        // The version decides what to say: a newer format is not damage, it needs a newer console.
        QFile file(QStringLiteral("%1/snapshot.json").arg(dir));
        const auto doc = file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll()) : QJsonDocument();
        const auto version = doc.object().value(QStringLiteral("format_version"));
        const bool ours
            = doc.object().value(QStringLiteral("format")).toString() == QLatin1String(idem::snapshotFormatName);
        if (ours && version.isDouble() && version.toInt() > idem::snapshotFormatVersion)
            *error = SnapshotOpener::tr(
                "This snapshot was made by a newer Idem (format %1); this console reads up to format %2. "
                "Open it with a newer Idem console.")
                         .arg(version.toInt())
                         .arg(idem::snapshotFormatVersion);
        else if (ours && version.isDouble() && version.toInt() < 1)
            *error = SnapshotOpener::tr(
                "This snapshot says it has format %1, which no Idem release wrote; this console reads "
                "formats 1 to %2.")
                         .arg(version.toInt())
                         .arg(idem::snapshotFormatVersion);
        else
            *error
                = SnapshotOpener::tr("The snapshot in %1 cannot be read: its snapshot.json is damaged or not an Idem "
                                     "snapshot.\n\n%2")
                      .arg(dir, QString::fromUtf8(e.what()));
    } catch (const idem::BundleError& e) {
        *error = SnapshotOpener::tr("%1 is not a snapshot bundle.\n\n%2").arg(dir, QString::fromUtf8(e.what()));
    } catch (const std::exception& e) {
        *error = SnapshotOpener::tr("The snapshot in %1 could not be opened: %2").arg(dir, QString::fromUtf8(e.what()));
    }
    return {};
}

void SnapshotOpener::open(const QString& dir)
{
    ++m_pending;
    struct Result {
        SharedSnapshot snapshot;
        QString error;
    };
    auto result = std::make_shared<Result>();
    // Read here, on the caller's thread: the settings are the UI's.
    const auto trusted = loadTrustedKeys();
    // Parsing and hashing every file happens here; the thread ends itself and its answer is
    // queued to this object (dropped if it is gone by then).
    QThread* thread = QThread::create([dir, result, trusted] { result->snapshot = openNow(dir, &result->error, trusted); });
    connect(thread, &QThread::finished, this, [this, dir, result] {
        --m_pending;
        if (result->snapshot)
            Q_EMIT opened(dir, result->snapshot);
        else
            Q_EMIT failed(dir, result->error);
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}

} // namespace idem::console
