#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/transaction_base>

#include "core/identifier.h"

namespace idem {

// Schema v32 (docs/operators-guide.md, "Reading a digest conflict"): which top-level fields of a
// key's request and of the last request that conflicted with it differ, compared by their keyed
// fingerprints (idem_request_fields, task_idempotency_conflicts.last_fields). Names only, never a
// value; a name is text from a client and is shown escaped.
struct FieldComparison {
    bool storedKept = false; // the request the key was acquired with has fingerprints
    int storedFields = 0; // its top-level fields (those not fingerprinted included)
    bool conflictKept = false; // the last conflicting request has fingerprints
    int conflictFields = 0;
    std::vector<std::string> differ; // in both, fingerprints differ (names in byte order)
    std::vector<std::string> same; // in both, the same fingerprint
    std::vector<std::string> onlyStored; // in the stored request only (the conflicting one lacks it)
    std::vector<std::string> onlyConflicting; // in the conflicting request only
    int notCompared = 0; // fields one side did not fingerprint (over 64, a name over 256 bytes)
    bool comparable() const { return storedKept && conflictKept; }
};

// The comparison from the two fingerprint objects (JSON text; empty: none kept).
FieldComparison compareFields(const std::string& storedJson, int storedFields, const std::string& conflictJson,
    int conflictFields);

// The key's comparison, read in t: nullopt when neither side kept fingerprints (or the schema is
// older than v32).
std::optional<FieldComparison> readFieldComparison(pqxx::transaction_base& t, const SchemaName& schema,
    const std::string& key);

// One line for a terminal or a report: "amount_cents differs; currency, order_id same", names
// escaped (displaySafe) and each cut to maxNameBytes, at most maxNames names a list ("and 3 more").
std::string fieldComparisonText(const FieldComparison& c, std::size_t maxNames = 16, std::size_t maxNameBytes = 80);

// For --json and snapshot.json: the exact names.
nlohmann::json fieldComparisonJson(const FieldComparison& c);
FieldComparison fieldComparisonFromJson(const nlohmann::json& j);

} // namespace idem
