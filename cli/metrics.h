#pragma once

#include <string>
#include <vector>

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>

namespace idem {
struct StatsReading;
}

namespace idem::cli {

using MetricLabels = std::vector<prometheus::ClientMetric::Label>;

// The Prometheus names of the `idemctl stats` figures, defined once for `stats --prometheus` and
// `idemctl exporter`. Every figure is a gauge labelled `schema` (and whatever the caller adds);
// a figure the reading does not have (a primary's replication lag) has no sample, never 0.
std::vector<prometheus::MetricFamily> statsFamilies(const StatsReading& s, const MetricLabels& labels);

// One family with one sample, for the exporter's own figures.
prometheus::MetricFamily singleFamily(
    const char* name, const char* help, prometheus::MetricType type, const MetricLabels& labels, double value);

// The text exposition format (version 0.0.4), as the exporter serves it.
std::string exposition(const std::vector<prometheus::MetricFamily>& families);

} // namespace idem::cli
