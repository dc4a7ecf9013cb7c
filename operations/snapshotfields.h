#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/transaction_base>

#include "core/identifier.h"
#include "operations/fieldcompare.h"

namespace idem {

// Schema v32: the incident snapshot's keys whose last digest conflict, in the figures' window,
// came from a request with field fingerprints, newest first, each with which fields differed.
struct SnapshotFieldConflict {
    std::string key;
    std::string lastAt; // UTC text as the server rendered it
    std::int64_t n = 0; // conflicts of the key
    FieldComparison fields;
};

struct SnapshotFieldConflictSet {
    int limit = 0;
    std::int64_t total = 0;
    std::vector<SnapshotFieldConflict> rows;
};

// Read in the snapshot's transaction; nullopt before schema v32.
std::optional<SnapshotFieldConflictSet> readSnapshotFieldConflicts(pqxx::transaction_base& tx,
    const SchemaName& schema, int windowMinutes, int limit);
nlohmann::json snapshotFieldConflictsJson(const SnapshotFieldConflictSet& s);
SnapshotFieldConflictSet snapshotFieldConflictsFrom(const nlohmann::json& j);
// The report's section: a heading, a note and a table (names escaped for HTML).
std::string snapshotFieldConflictsHtml(const SnapshotFieldConflictSet& s);

} // namespace idem
