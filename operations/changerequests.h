#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"
#include "operations/approvals.h"

namespace idem {

// Schema v22 (resources/sql/migrations/0022_change_approvals.sql): with gated kinds 'retention'
// and 'purge' on (the schema owner's, operations/approvals.h), a retention change or a manual
// purge is not made directly: it is requested (its exact spec as JSON and the spec's SHA-256),
// approved by another login with the approve right naming that SHA-256 (approveRequest,
// operations/approvals.h), then used exactly once naming it again (the retention change applied,
// or the purge run begun; runPurge with PurgeOptions::requestId runs it). Scheduled purges (CALL
// idem_purge_run from pg_cron) keep running. The database refuses with ID002/ID003/ID004, thrown
// as JobRefused (operations/jobs.h), and changes nothing; bad input throws std::invalid_argument
// before any I/O.

struct ChangePolicy {
    bool retentionChanges = false; // retention changes need approval
    bool manualPurges = false; // manual purges need approval
    int ttlSeconds = 3600; // a request is approvable, then its approval usable, this long
};

struct ChangeRequested {
    std::int64_t id = 0;
    std::string specJson;
    std::string specSha256;
    std::int64_t approvableUntilUs = 0;
    std::int64_t auditId = 0;
};

struct ChangeUse {
    std::int64_t id = 0;
    std::string kind;
    std::string specJson;
    std::int64_t auditId = 0; // the use's entry (action change_use)
    std::optional<std::int64_t> appliedAuditId; // retention: the change's entry (none: nothing to clear)
    std::optional<std::int64_t> purgeRunId; // purge: the run begun
};

ChangePolicy readChangePolicy(pqxx::connection& conn, const SchemaName& schema);

// Requests (the purge right): refused (JobRefused, ID004) when the kind is not gated.
// horizonSeconds unset: clear the operation's own row (back to '*').
ChangeRequested requestRetentionChange(pqxx::connection& conn, const SchemaName& schema, const std::string& operation,
    std::optional<std::int64_t> horizonSeconds, const std::string& reason, const std::string& actor = {});
ChangeRequested requestPurge(pqxx::connection& conn, const SchemaName& schema, int batch, int maxSeconds, double duty,
    const std::string& reason, const std::string& actor = {});

// Uses an approved retention request once (the purge right): the change is applied.
ChangeUse useRetentionRequest(pqxx::connection& conn, const SchemaName& schema, std::int64_t id,
    const std::string& specSha256, const std::string& actor = {});

} // namespace idem
