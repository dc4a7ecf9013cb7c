#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "operations/dashboardquery.h"

namespace idem {

// The ONE list of what idem_counters' outcomes are and how they are charted. The live console's
// charts, the snapshot viewer (the same charts, fed from snapshot.json) and the snapshot report
// all read it, so an outcome added to the schema is either drawn by all three or by none
// (tst_outcomeseries checks every outcome the database accepts against this list).

// An outcome name (idem_counters.outcome, snapshot.json history[].outcome) and the bucket field
// it is summed into.
struct OutcomeField {
    const char* name;
    std::int64_t CounterBucket::*field;
};
const std::vector<OutcomeField>& outcomeFields();
// nullptr for a name no schema wrote (a newer Idem's outcome: left out, not miscounted).
std::int64_t CounterBucket::*outcomeField(const std::string& name);

enum class OutcomeChart { Claims, Failures, Completions };
// Where a series is drawn: the console has room for two per-minute charts; the report draws all.
enum SeriesPlace : unsigned { InConsole = 1, InReport = 2, Everywhere = 3 };

struct OutcomeSeries {
    const char* id; // the console's series object name, the report's CSS-safe name
    // English label; the console translates it in the context "idem::console::ChartPanel"
    // (operations/outcomeseries.cpp is scanned by scripts/update-translations.sh).
    const char* label;
    OutcomeChart chart;
    unsigned places;
    std::uint32_t rgb; // a mid tone, readable on white and on the dark theme's base alike
    std::vector<const char*> outcomes; // summed
};
const std::vector<OutcomeSeries>& outcomeSeries();
// The series of one chart drawn in `place`, in legend order.
std::vector<const OutcomeSeries*> outcomeSeries(OutcomeChart chart, SeriesPlace place);
const OutcomeSeries* findOutcomeSeries(const std::string& id);
// A chart's English title (the console translates it like the labels).
const char* outcomeChartTitle(OutcomeChart chart);

// The series' figure for one minute: the sum of its outcomes' fields.
std::int64_t seriesValue(const OutcomeSeries& series, const CounterBucket& bucket);

} // namespace idem
