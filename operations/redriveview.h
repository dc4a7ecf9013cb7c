#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem {

// What operators see of re-execution (schema v25, docs/redrive.md): which operations are
// re-drivable and who can re-execute them now, the outcomes of a job's re-executions, a key's
// re-drive items and whether its request is stored. Read-only, one round trip each, through the
// schema's functions (the tables are reached by nothing else). No Qt.

// The first schema version with re-execution (migrations/0025_redrive.sql).
constexpr int firstRedriveSchemaVersion = 25;

// One operation as idem_redrive_status tells it.
struct RedriveStatus {
    std::string tenant;
    std::string operation;
    bool registered = false; // re-drivable: its claims store the request
    int onlineWorkers = 0; // re-drivers seen within the last 30 s
    std::vector<std::string> workers; // their names
    std::optional<std::int64_t> lastSeenUs; // the last any re-driver of it was seen
    std::int64_t queued = 0;
    std::int64_t running = 0;

    bool canReexecute() const { return registered && onlineWorkers > 0; }
};

// Every operation registered or with a re-driver (tenant and operation unset), or the one named.
std::vector<RedriveStatus> readRedriveStatus(pqxx::connection& conn, const SchemaName& schema,
    const std::optional<std::string>& tenant = std::nullopt,
    const std::optional<std::string>& operation = std::nullopt);

// A job's (or any set of items') re-drive items by state.
struct RedriveOutcomes {
    std::int64_t queued = 0;
    std::int64_t running = 0;
    std::int64_t succeeded = 0;
    std::int64_t failed = 0;
    std::int64_t conflict = 0;
    std::int64_t gone = 0;
    std::map<std::string, std::int64_t> other; // a later schema's states, by name

    std::int64_t open() const { return queued + running; }
    std::int64_t total() const;
    bool empty() const { return total() == 0; }
    void add(const std::string& state, std::int64_t n);
};

// The outcomes of each job in `jobIds` (idem_redrive_outcomes), one statement for them all. A job
// with no re-drive item has none (empty outcomes).
std::map<std::int64_t, RedriveOutcomes> readRedriveOutcomes(
    pqxx::connection& conn, const SchemaName& schema, const std::vector<std::int64_t>& jobIds);

// One re-execution of a key.
struct RedriveItem {
    std::int64_t id = 0;
    std::optional<std::int64_t> jobId;
    std::string state; // queued, running, succeeded, failed, conflict, gone
    std::string worker; // the re-driver that took it; empty while queued
    int tries = 0;
    std::int64_t requestedAtUs = 0;
    std::string requestedBy; // "role (actor)"
    std::optional<std::int64_t> takenAtUs;
    std::optional<std::int64_t> finishedAtUs;
    std::string detail;

    bool open() const { return state == "queued" || state == "running"; }
};

// A key's request as stored for re-execution (idem_stored_request). Every reader of tasks sees
// whether one is stored and its size; the content only a holder of read_requests, with the
// operation's redacted fields as "[redacted]" (the database decides).
struct StoredRequest {
    bool stored = false;
    std::int64_t bytes = 0;
    std::optional<std::int64_t> storedAtUs;
    std::optional<std::string> content; // JSON text; unset without the right
};

struct KeyRedrive {
    std::vector<RedriveItem> items; // newest first
    StoredRequest request;
};

// The key's re-drive items (idem_redrive_items_of, newest first) and its stored request, in one
// read-only transaction.
KeyRedrive readKeyRedrive(pqxx::connection& conn, const SchemaName& schema, const std::string& key);

} // namespace idem
