#pragma once

#include <QDateTime>
#include <QMetaType>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>

#include "operations/dashboardquery.h"
#include "operations/snapshotbundle.h"
#include "models/dashboardhistory.h"
#include "models/dashboardthresholds.h"
#include "models/latencywatch.h"

namespace idem::console {

// The snapshot viewer's data side: opening a bundle off the UI thread, and what the live
// dashboard's model needs, made from a snapshot instead of a session.

using SharedSnapshot = std::shared_ptr<const idem::LoadedSnapshot>;

// What a snapshot's figures and counters history give the dashboard: the reading of its
// instant (figures, the per-minute buckets summed over tenants and operations) and settings
// with its thresholds and windows. No attempts histogram: a snapshot does not carry one.
idem::DashboardReading snapshotReading(const idem::SnapshotData& data);
DashboardSettings snapshotDashboardSettings(const idem::SnapshotData& data);
// The latency figures a snapshot carries (latency_history, schema v17 on), as the live watch reads
// them: per minute, every tenant and operation of its scope as one, and per operation over its
// history window; none when it carries none.
std::optional<LatencyReading> snapshotLatency(const idem::SnapshotData& data);
// The processing and expired lines before the snapshot's instant, from its processing_history (one
// point a minute; none when it carries none), for the "Processing vs expired leases" chart.
std::vector<LiveSample> snapshotProcessingSamples(const idem::SnapshotData& data);
// Whether the snapshot carries thresholds for the tiles (else the console's defaults colour them).
bool snapshotHasThresholds(const idem::SnapshotData& data);

// The figure name (snapshot.json `figures`, `settings.thresholds[].metric`) for a tile; the tile
// key (`expiredLeases`) is accepted too when reading. Failed has no single figure: "failed".
const char* snapshotMetricName(Tile tile);

// The snapshot's instant; invalid when taken_at does not parse.
QDateTime snapshotTakenAt(const idem::SnapshotData& data);
// "<db>@<host>" from the snapshot's (password-free) conninfo and database name.
QString snapshotSource(const idem::SnapshotData& data);
// "2024-05-01 10:00:00 UTC (12:00:00 local)".
QString snapshotTimeText(const QDateTime& at);

// Opens bundles on a thread of its own (a 10 MB snapshot.json is parsed and every file hashed
// there, never on the UI thread); answers by queued signal. Several opens may run at once.
class SnapshotOpener : public QObject {
    Q_OBJECT
public:
    explicit SnapshotOpener(QObject* parent = nullptr);
    ~SnapshotOpener() override;

    void open(const QString& dir);
    int pending() const { return m_pending; }

    // What the thread does: the snapshot, or the words a person reads when it cannot be opened
    // (not a bundle, damaged snapshot.json, a format this console does not read). open() passes
    // the console's trusted signing keys (models/trustedkeystore.h).
    static SharedSnapshot openNow(const QString& dir, QString* error, const idem::TrustedKeys& trusted = {});

Q_SIGNALS:
    void opened(const QString& dir, const idem::console::SharedSnapshot& snapshot);
    void failed(const QString& dir, const QString& message);

private:
    int m_pending = 0;
};

} // namespace idem::console

Q_DECLARE_METATYPE(idem::console::SharedSnapshot)
