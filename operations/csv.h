#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "operations/snapshot.h"

namespace idem {

// CSV as PostgreSQL's COPY ... (FORMAT csv, HEADER) reads it: comma separated, LF line ends,
// a field quoted with " when it holds a comma, quote, CR, LF or is empty, quotes doubled. An
// unquoted empty field is NULL and "" an empty string, so NULL survives the round trip.
std::string csvField(const std::optional<std::string>& value);
std::string csvLine(const std::vector<std::optional<std::string>>& fields);

// Parses what csvLine() writes (one record may span lines inside quotes). Throws
// std::invalid_argument on an unterminated quote.
std::vector<std::vector<std::optional<std::string>>> parseCsv(std::string_view text);

// The bundle's CSV files, path relative to the bundle and content: figures.csv,
// counters_history.csv, recent_conflicts.csv, audit_tail.csv and rows/<set>.csv.
std::vector<std::pair<std::string, std::string>> snapshotCsvFiles(const SnapshotData& data);

} // namespace idem
