#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem {

// Re-execution, as operators see it (schema v25, docs/redrive.md): who can re-execute what
// (idem_redrive_status), what became of a job's re-executions (idem_redrive_outcomes), a key's
// re-drive items (idem_redrive_items_of) and whether it has a stored request (idem_stored_request).
// Each read is one round trip in a read-only transaction. No Qt: idemctl and the console share it.

// One re-driver of a registration, online or not (schema v27).
struct RedriverSeen {
    std::string worker;
    std::string version;
    std::string lastSeen; // ISO 8601 UTC
    std::int64_t secondsAgo = 0; // as the database's clock had it
    bool online = false; // seen within 30 s
};

struct RedriveStatus {
    std::string tenant; // '*': registered for every tenant
    std::string operation;
    bool registered = false;
    int onlineWorkers = 0; // seen within 30 s
    std::vector<std::string> workers;
    std::string lastSeen; // ISO 8601 UTC: the latest of every re-driver's (v27), empty when none ever reported
    std::int64_t queued = 0;
    std::int64_t running = 0;
    // Every re-driver that reported itself, online first, then the most recently seen (at most 50).
    std::vector<RedriverSeen> redrivers;
    // The most recently seen re-driver that is not online; nullptr when there is none.
    const RedriverSeen* lastOffline() const;
};

// idem_redrive_status(tenant, operation); an empty tenant or operation matches any. With both
// given (tenant not '*'): exactly one row.
std::vector<RedriveStatus> readRedriveStatus(pqxx::connection& conn, const SchemaName& schema,
    const std::string& tenant = {}, const std::string& operation = {});

// What an operator is told before a requeue that re-executes, in one sentence:
// "3 workers of charge are online", "1 worker of charge is online",
// "no re-driver for ship is online: the key waits for its client",
// "ship is not re-drivable: the key waits for its client".
std::string redriveAvailability(const RedriveStatus& status);

// One count per item state of a job's re-executions, in the order queued, running, succeeded,
// failed, conflict, gone (zero when there are none).
struct RedriveOutcomes {
    std::int64_t queued = 0;
    std::int64_t running = 0;
    std::int64_t succeeded = 0;
    std::int64_t failed = 0;
    std::int64_t conflict = 0;
    std::int64_t gone = 0;
    std::int64_t total() const { return queued + running + succeeded + failed + conflict + gone; }
};

RedriveOutcomes readRedriveOutcomes(pqxx::connection& conn, const SchemaName& schema, std::int64_t jobId);
// The outcomes of many jobs in one round trip (idem_redrive_outcomes_of, schema v27): every id
// asked for is in the answer (all zero when it has no items). At most 1000 ids
// (std::invalid_argument before any I/O otherwise); none below 1.
std::map<std::int64_t, RedriveOutcomes> readRedriveOutcomesOf(
    pqxx::connection& conn, const SchemaName& schema, const std::vector<std::int64_t>& jobIds);

// "191 requeued: 185 succeeded, 4 failed, 2 running": the rows a job requeued, then each state
// that has items, finished ones first (succeeded, failed, conflict, gone, running, queued).
std::string redriveOutcomeSentence(std::int64_t requeued, const RedriveOutcomes& outcomes);

struct RedriveItemRow {
    std::int64_t id = 0;
    std::string state; // queued, running, succeeded, failed, conflict, gone
    std::optional<std::int64_t> jobId;
    std::string worker;
    int tries = 0;
    std::string requestedAt; // ISO 8601 UTC, as every time below (empty: none)
    std::string requestedBy; // "role (actor)"
    std::string takenAt;
    std::string leaseUntil;
    std::string notBefore;
    std::string finishedAt;
    std::string detail;
    std::optional<std::int64_t> auditId;
};

// The key's re-drive items, newest first (at most 100).
std::vector<RedriveItemRow> readRedriveItems(pqxx::connection& conn, const SchemaName& schema, const std::string& key);

struct StoredRequest {
    bool stored = false;
    int bytes = 0;
    std::string storedAt; // ISO 8601 UTC
    // The request as JSON text (its redacted fields "[redacted]"): only for a role holding the
    // read_requests right; empty otherwise.
    std::string request;
    bool readable = false; // request was returned (the caller holds read_requests)
};

StoredRequest readStoredRequest(pqxx::connection& conn, const SchemaName& schema, const std::string& key);

} // namespace idem
