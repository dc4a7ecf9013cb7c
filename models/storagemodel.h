#pragma once

#include <QDateTime>
#include <QMetaType>
#include <QObject>
#include <QPointer>
#include <QString>

#include <cstdint>
#include <optional>
#include <string>

#include "operations/storage.h"
#include "operations/storagehistory.h"

namespace idem::console {

class ConsoleSession;

// The Storage page's data: what the Idem tables hold, what a purge would remove and when one
// last ran (operations/storage.h readStorage: the catalogue, the statistics views and bounded
// index probes, no table scan), read on the session's worker thread. A reload while one is
// pending is not queued twice; the last answer is kept through a failure, with its time.
class StorageModel : public QObject {
    Q_OBJECT
public:
    explicit StorageModel(ConsoleSession* session, QObject* parent = nullptr);
    ~StorageModel() override;

    void reload();
    void setOptions(const idem::StorageOptions& options) { m_options = options; }
    const std::optional<idem::StorageReport>& report() const { return m_report; }
    // The task table's rows hour by hour, counted back from the counters (read with the report).
    const idem::RowsHistory& rowsHistory() const { return m_history; }
    // When the report was read (this machine's clock), invalid before the first answer.
    QDateTime readAt() const { return m_readAt; }
    bool busy() const { return m_pending != 0; }
    // The transaction horizon judged held (past heldAfterSeconds, 5 min by default) while the Idem
    // tables' dead rows grow: against the sample before the holder began, or what this model
    // first read while it held.
    const idem::HorizonVerdict& horizonVerdict() const { return m_verdict; }
    void setHeldAfterSeconds(double seconds) { m_heldAfter = seconds; }
    double heldAfterSeconds() const { return m_heldAfter; }
    QString lastError() const { return m_error; }

Q_SIGNALS:
    void updated();
    void failed(const QString& message);

private:
    QPointer<ConsoleSession> m_session;
    idem::StorageOptions m_options;
    std::optional<idem::StorageReport> m_report;
    idem::RowsHistory m_history;
    QDateTime m_readAt;
    idem::HorizonMemory m_memory;
    idem::HorizonVerdict m_verdict;
    double m_heldAfter = idem::defaultHeldAfterSeconds;
    QString m_error;
    quint64 m_pending = 0;
};

namespace storagetext {
    // A time the server gave as ISO 8601 (UTC, with or without fractions); invalid if it is not one.
    QDateTime parseTime(const std::string& iso);
    // "30 days", "36 hours", "90 minutes": a retention horizon for people, translated.
    QString horizon(std::int64_t seconds);
    // What purging means, said plainly: "A retry of a “charge” key older than 30 days executes
    // again." ("*": "any other key").
    QString meaning(const std::string& operation, std::int64_t horizonSeconds);
    // "1.4 GB", "96 KB".
    QString bytes(std::int64_t bytes);
    // "12,345", "≥ 10,000" for a lower bound, "≈ 9,870,000" for an estimate.
    QString figure(std::int64_t value, const idem::FigureLabel& label);
    // What the number is: "exact", "exact · 25 s ago", "at least (counted up to 10,000)",
    // "estimate (planner statistics)".
    QString quality(const idem::FigureLabel& label, std::int64_t cap = 0);
    // An ISO 8601 UTC time from the server in local time ("2026-12-01 14:03:07"); "never" when empty.
    QString when(const std::string& iso);
    // "Running since …", "12,345 rows in 3.2 s, 2026-12-01 03:00 by postgres (pg_cron)", "never".
    QString purgeRun(const idem::PurgeRun& run);
} // namespace storagetext

} // namespace idem::console

namespace idem::console {
// One answer of the worker thread: the report and the rows history beside it.
struct StorageAnswer {
    idem::StorageReport report;
    idem::RowsHistory history;
};
} // namespace idem::console

Q_DECLARE_METATYPE(idem::console::StorageAnswer)
