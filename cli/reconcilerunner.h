#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/connection>
#include <prometheus/metric_family.h>

#include "cli/metrics.h"
#include "core/identifier.h"

namespace idem {
struct ReconcileReading;
}

namespace idem::cli {

// The reconcile probes' last runs (schema v30, operations/reconcile.h), per operation:
// idem_reconcile_sampled, idem_reconcile_ok, idem_reconcile_missing (keys with no effect),
// idem_reconcile_duplicated (keys with two or more), idem_reconcile_errors (keys whose query failed)
// and idem_reconcile_last_run_timestamp_seconds; idem_reconcile_probes, how many are registered.
// A probe not run yet has no sample but the probe count.
std::vector<prometheus::MetricFamily> reconcileFamilies(const ReconcileReading& r, const MetricLabels& labels);

// The exporter's scheduler of reconcile probes: on a thread and a connection of its own, every
// `every` it runs each probe that is due (idem_reconcile_begin decides, so several exporters run a
// probe once a period between them), one after another. Its login needs idem_reconcile; without it
// it says so once and tries again at the next check. Stopped by stop() or its destructor.
class ReconcileRunner {
public:
    ReconcileRunner(std::string conninfo, SchemaName schema, std::chrono::milliseconds every, std::string runner);
    ~ReconcileRunner();
    ReconcileRunner(const ReconcileRunner&) = delete;
    ReconcileRunner& operator=(const ReconcileRunner&) = delete;

    void start();
    void stop();
    // idem_exporter_reconcile_runs_total, idem_exporter_reconcile_errors_total.
    std::vector<prometheus::MetricFamily> families(const MetricLabels& labels) const;

private:
    void loop();
    void runDue();
    void problem(const std::string& why);

    std::string m_conninfo;
    SchemaName m_schema;
    std::chrono::milliseconds m_every;
    std::string m_runner;
    std::unique_ptr<pqxx::connection> m_conn;
    std::string m_lastProblem;

    mutable std::mutex m_mutex; // guards the counts and m_stop
    std::int64_t m_runs = 0;
    std::int64_t m_errors = 0;
    std::condition_variable m_wake;
    bool m_stop = false;
    std::thread m_thread;
};

} // namespace idem::cli
