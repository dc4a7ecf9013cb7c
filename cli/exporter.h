#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <pqxx/connection>
#include <pqxx/dbtransaction>
#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "cli/metrics.h"
#include "core/identifier.h"
#include "operations/fencing.h"
#include "operations/horizon.h"
#include "operations/latency.h"
#include "operations/node.h"
#include "operations/pauses.h"
#include "operations/reconcile.h"
#include "operations/stats.h"

namespace idem::cli {

// The outcome counters of idem_counters as Prometheus counters: they only grow, from 0 when the
// exporter starts. idem_counters holds per-minute buckets that a worker's flusher adds to and that
// expire, so a plain sum would fall when old minutes go; the exporter instead reads the last
// `lookbackMinutes` buckets each time and adds what each bucket grew by since the last reading.
// The first reading only sets the baseline. A bucket's growth is missed when it happens after the
// bucket left the lookback (a flush more than that late, or an exporter outage that long).
class OutcomeTotals {
public:
    static constexpr int lookbackMinutes = 10;

    struct Row {
        std::int64_t bucket = 0; // epoch seconds
        std::string outcome, tenant, operation; // tenant / operation empty unless labelled
        std::int64_t n = 0;
    };
    using Series = std::tuple<std::string, std::string, std::string>; // outcome, tenant, operation

    // Series that exist before any count, so that rules see 0 rather than nothing.
    void declare(const Series& series) { m_totals.try_emplace(series, 0.0); }
    void apply(const std::vector<Row>& rows);
    const std::map<Series, double>& totals() const { return m_totals; }

private:
    bool m_primed = false;
    std::map<std::pair<std::int64_t, Series>, std::int64_t> m_seen;
    std::map<Series, double> m_totals;
};

struct ExporterOptions {
    std::string conninfo; // may be empty: libpq's PG* variables and service file decide
    SchemaName schema;
    StatsOptions stats;
    std::chrono::milliseconds interval { 5000 };
    bool tenantLabel = false;
    bool operationLabel = false;
};

// Reads the database on its own thread, at most once per interval, on one connection it keeps
// (and reopens after a failure); every scrape gets the families of the last reading, so scrapes
// never reach the database. A failed reading sets idem_up to 0, drops the database's figures
// (a stale figure would look current) and says why on stderr, once per change of reason. The
// pauses are read in a savepoint of the same transaction: when that part fails (a schema before
// v15, a timeout) the reading still succeeds without the pause series, and the failure is counted
// (idem_exporter_pause_read_errors_total) and said once per change of reason. The latency
// histograms (schema v17) count the minutes folded since the exporter started: each reading first
// folds the due minutes (idem_latency_rollup, its own short transaction), then reads, in a
// savepoint, the minutes folded since the last reading; a failure of either (a schema before v17,
// a timeout) is counted once in idem_exporter_latency_read_errors_total and said once per change
// of reason, and the minutes are read by a later reading instead: none is counted twice or missed.
class Exporter : public prometheus::Collectable {
public:
    explicit Exporter(ExporterOptions options);
    ~Exporter() override;
    Exporter(const Exporter&) = delete;
    Exporter& operator=(const Exporter&) = delete;

    void start();
    void stop();
    std::vector<prometheus::MetricFamily> Collect() const override;

private:
    void loop();
    void readOnce();
    void readAttempt(const std::function<double()>& seconds);
    std::vector<OutcomeTotals::Row> readCounters(pqxx::transaction_base& tx) const;
    std::optional<PauseList> readPauses(pqxx::dbtransaction& tx);
    struct LatencyRead {
        std::int64_t toUs = 0; // where the next reading starts
        std::vector<LatencyHistogram> histograms;
    };
    void rollUpLatency(std::string& problem);
    std::optional<LatencyRead> readLatencyPart(pqxx::dbtransaction& tx, std::string& problem);
    void latencyDone(const std::string& problem);
    void setTimeout(pqxx::transaction_base& tx) const;
    bool noteTimeline();
    void publish(const StatsReading* stats, const PauseList* pauses, double seconds);
    void failed(const std::string& why);

    ExporterOptions m_options;
    MetricLabels m_labels;
    std::string m_countersSql;
    std::unique_ptr<pqxx::connection> m_conn;
    bool m_direct = false; // m_conn is no pooler's: statements may be prepared on it
    OutcomeTotals m_totals;
    std::int64_t m_reads = 0;
    std::int64_t m_errors = 0;
    std::int64_t m_pauseErrors = 0;
    std::string m_lastPauseProblem;
    // Minutes from here on (server clock, microseconds) are not counted yet; none before the
    // first reading of idem_latency_state.
    std::optional<std::int64_t> m_latencyFrom;
    LatencyTotals m_latency;
    std::int64_t m_latencyErrors = 0;
    std::string m_lastLatencyProblem;
    bool m_standby = false; // the last reading was of a standby, where nothing can be folded
    bool m_readOnly = false; // the connection's transactions are read-only: nothing is written
    double m_lastSuccess = 0; // unix seconds, 0 before the first
    // The node the last reading reached (idem_node_info, idem_node_timeline), how often it
    // changed since the exporter started, and the last failure to record a timeline.
    std::optional<NodeIdentity> m_node;
    // The acknowledged successes each asynchronous standby lacks (issue 40 item A), read on a
    // primary in a savepoint of the same reading, with the memory that keeps a standby that went
    // away counted. Empty on a standby or when that part failed.
    AtRiskMemory m_atRiskMemory;
    std::optional<AtRiskReading> m_atRisk;
    // The transaction horizon and the Idem tables' dead rows (schema v26), read in a savepoint of
    // the same reading: unset when that part failed (or before v26, where it reads as unavailable).
    std::optional<HorizonReading> m_horizon;
    // The reconcile probes' last runs (schema v30), read in a savepoint: unset when that part
    // failed (a schema before v30). Whoever ran them: every exporter publishes them.
    std::optional<ReconcileReading> m_reconcile;
    // The fencing figures over the window (schema v31), read in the same savepoint.
    std::optional<FencingReading> m_fencing;
    std::string m_nodeKey;
    std::int64_t m_nodeChanges = 0;
    std::string m_lastTimelineProblem;
    std::string m_notedTimeline; // "system/timeline" recorded by this exporter; empty: none yet
    std::string m_lastProblem;

    mutable std::mutex m_mutex; // guards m_families and m_stop
    std::vector<prometheus::MetricFamily> m_families;
    std::condition_variable m_wake;
    bool m_stop = false;
    std::thread m_thread;
};

} // namespace idem::cli
