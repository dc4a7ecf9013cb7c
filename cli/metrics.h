#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <prometheus/client_metric.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>

namespace idem {
struct FencingReading;
struct HorizonReading;
struct LatencyHistogram;
struct PauseList;
struct StatsReading;
}

namespace idem::cli {

using MetricLabels = std::vector<prometheus::ClientMetric::Label>;

// The Prometheus names of the `idemctl stats` figures, defined once for `stats --prometheus` and
// `idemctl exporter`. Every figure is a gauge labelled `schema` (and whatever the caller adds);
// a figure the reading does not have (a primary's replication lag) has no sample, never 0.
std::vector<prometheus::MetricFamily> statsFamilies(const StatsReading& s, const MetricLabels& labels);

// The pauses (schema v15), one series per listed pause labelled tenant and operation ('*' for
// all): idem_pause_active (1 in force, 0 past its end but still listed), idem_pause_age_seconds
// (since it was set, by the server's clock), idem_pause_planned_seconds (end minus set; no sample
// for a pause until resumed), and idem_pauses_active, the number in force. Families with no
// sample are left out.
std::vector<prometheus::MetricFamily> pauseFamilies(const PauseList& pauses, const MetricLabels& labels);

// The latency histograms (schema v17) as Prometheus histograms, counted from 0 when the exporter
// started: idem_task_run_seconds (each attempt, claim to complete or fail),
// idem_task_time_to_success_seconds (first claim to success) and idem_task_attempts_per_success,
// one series per operation (tenants summed). The database keeps each minute's values in
// log-spaced slots, 32 a decade; a duration bucket's bound is every 8th slot boundary, 10^(k/4)
// milliseconds from 1 ms to 100000 s, so every bucket's count is exact, not interpolated.
class LatencyTotals {
public:
    // Seconds, each the double its text in the exposition parses to, so what histogram_quantile
    // reads is the bound counted against (+Inf not included).
    static const std::vector<double>& durationBounds();
    static const std::vector<double>& attemptBounds(); // 1, 2, 3, 4, 5, 7, 10, 20, 50, 100
    // The bucket (index into the bounds; size() is +Inf) that holds a database slot's values.
    static std::size_t durationBucket(int slot);
    static std::size_t attemptBucket(int slot);

    // Adds folded minutes' histograms (readLatencyHistograms): each minute exactly once.
    void add(const std::vector<LatencyHistogram>& histograms);
    // No family before the first value.
    std::vector<prometheus::MetricFamily> families(const MetricLabels& labels) const;

private:
    struct Series {
        Series();
        prometheus::Histogram run, timeToSuccess, attempts;
    };
    std::map<std::string, Series> m_byOperation;
};

// The transaction horizon (schema v26): idem_horizon_age_seconds (the oldest timed holder's,
// a session or a prepared transaction; 0 when none), idem_horizon_age_xids (the oldest holder's
// age in transaction ids, slots and standbys included, a slot's catalog_xmin not; 0 when none),
// idem_horizon_holders (how many were read, at most 5) and idem_table_dead_rows per Idem table
// (n_dead_tup, labelled table). Nothing before v26.
std::vector<prometheus::MetricFamily> horizonFamilies(const HorizonReading& h, const MetricLabels& labels);

// The fencing figures over the exporter's window (schema v31), labelled operation:
// idem_fencing_takeovers and idem_fencing_refused (the libraries' counters), per worker
// idem_fencing_worker_refused (workers with a refused call only), and the lease advisor's
// idem_lease_seconds, idem_lease_run_p99_seconds, idem_lease_measured_attempts and
// idem_lease_overrun_ratio (of the measured attempts, those that outlived their lease).
std::vector<prometheus::MetricFamily> fencingFamilies(const FencingReading& r, const MetricLabels& labels);

// One family with one sample, for the exporter's own figures.
prometheus::MetricFamily singleFamily(
    const char* name, const char* help, prometheus::MetricType type, const MetricLabels& labels, double value);

// The text exposition format (version 0.0.4), as the exporter serves it.
std::string exposition(const std::vector<prometheus::MetricFamily>& families);

} // namespace idem::cli
