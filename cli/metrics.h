#pragma once

#include <string>
#include <vector>

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>

namespace idem {
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

// One family with one sample, for the exporter's own figures.
prometheus::MetricFamily singleFamily(
    const char* name, const char* help, prometheus::MetricType type, const MetricLabels& labels, double value);

// The text exposition format (version 0.0.4), as the exporter serves it.
std::string exposition(const std::vector<prometheus::MetricFamily>& families);

} // namespace idem::cli
