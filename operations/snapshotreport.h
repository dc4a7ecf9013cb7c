#pragma once

#include <string>
#include <vector>

#include "operations/snapshot.h"

namespace idem {

// A chart drawn from the snapshot's counters history, as SVG (no Qt: idemctl draws these; the
// console adds PNGs of its own Qt Charts beside them).
struct SnapshotChart {
    std::string name; // file stem, e.g. claims
    std::string title;
    std::string svg;
};

std::vector<SnapshotChart> snapshotCharts(const SnapshotData& data);

// An image the report shows, by its path relative to the bundle.
struct ReportImage {
    std::string title;
    std::string path;
};

// report.html: one self-contained page (inline style, no script, nothing fetched) that an
// incident ticket can carry, readable in a browser and by QTextDocument (console PDF export).
// Shows at most reportRowLimit rows per set; the CSV files hold every exported row.
std::string snapshotReportHtml(
    const SnapshotData& data, const std::vector<ReportImage>& images, int reportRowLimit = 50);

std::string htmlEscape(const std::string& text);

} // namespace idem
