#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem {

// Schema v22 (resources/sql/migrations/0022_change_approvals.sql): with the approval policy's
// switches on (the schema owner's), a retention change or a manual purge is not made directly: it
// is requested (its exact spec as JSON and the spec's SHA-256), approved by another login with the
// approve right naming that SHA-256, then used exactly once naming it again (the retention change
// applied, or the purge run begun; runPurge with PurgeOptions::requestId runs it). Scheduled purges
// (CALL idem_purge_run from pg_cron) keep running. The database refuses with ID003, thrown as
// JobRefused (operations/jobs.h), and changes nothing; bad input throws std::invalid_argument
// before any I/O.

struct ChangePolicy {
    bool known = false; // false: the schema predates v22 (nothing needs approval)
    bool retentionChanges = false; // retention changes need approval
    bool manualPurges = false; // manual purges need approval
    int ttlSeconds = 3600; // a request is approvable, then its approval usable, this long
};

struct ChangeRequest {
    std::int64_t id = 0;
    std::string kind; // retention, purge
    std::string specJson; // as the database prints the jsonb (its SHA-256 is specSha256)
    std::string specSha256;
    std::string state; // awaiting_approval, approved, used
    std::string requestedLogin, requestedRole, requestedActor, requestedReason;
    std::int64_t requestedAtUs = 0;
    std::int64_t approvableUntilUs = 0;
    std::string approvedLogin, approvedRole, approvedActor;
    std::optional<std::int64_t> approvedAtUs, approvalExpiresAtUs, usedAtUs, purgeRunId;
    std::string usedLogin;
    std::int64_t nowUs = 0; // the server's clock when read
    // Waiting and past approvable_until, or approved and past its expiry: nothing more can happen.
    bool expired() const;
    // "retention: set charge to 30d", "purge: batches of 1000, until nothing is due, duty 0.1".
    std::string what() const;
};

struct ChangeRequested {
    std::int64_t id = 0;
    std::string specJson;
    std::string specSha256;
    std::int64_t approvableUntilUs = 0;
    std::int64_t auditId = 0;
};

struct ChangeApproval {
    std::int64_t id = 0;
    std::int64_t approvedAtUs = 0;
    std::int64_t expiresAtUs = 0; // usable until then
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

struct ChangeLimits {
    static constexpr int minTtlSeconds = 60;
    static constexpr int maxTtlSeconds = 604'800;
};

ChangePolicy readChangePolicy(pqxx::connection& conn, const SchemaName& schema);

// The schema owner's (others: pqxx::insufficient_privilege); audited (action approval_policy).
std::int64_t setChangePolicy(pqxx::connection& conn, const SchemaName& schema, bool retentionChanges, bool manualPurges,
    int ttlSeconds, const std::string& reason, const std::string& actor = {});

// Requests (the purge right): refused (JobRefused, ID003) when the kind's switch is off.
// horizonSeconds unset: clear the operation's own row (back to '*').
ChangeRequested requestRetentionChange(pqxx::connection& conn, const SchemaName& schema, const std::string& operation,
    std::optional<std::int64_t> horizonSeconds, const std::string& reason, const std::string& actor = {});
ChangeRequested requestPurge(pqxx::connection& conn, const SchemaName& schema, int batch, int maxSeconds, double duty,
    const std::string& reason, const std::string& actor = {});

// Another login with the approve right (idem_may_approve).
ChangeApproval approveChange(pqxx::connection& conn, const SchemaName& schema, std::int64_t id,
    const std::string& specSha256, const std::string& reason, const std::string& actor = {});

// Uses an approved retention request once (the purge right): the change is applied.
ChangeUse useRetentionRequest(pqxx::connection& conn, const SchemaName& schema, std::int64_t id,
    const std::string& specSha256, const std::string& actor = {});

// The requests not yet used (waiting or approved; expired ones for a day after, then no longer:
// they would crowd out the live ones), oldest first, at most `limit` (1..1000); empty before
// schema v22. Read-only (idem_reader).
std::vector<ChangeRequest> listOpenChangeRequests(pqxx::connection& conn, const SchemaName& schema, int limit = 100);
std::optional<ChangeRequest> readChangeRequest(pqxx::connection& conn, const SchemaName& schema, std::int64_t id);

// 64 lower-case hex digits.
bool isSpecSha256(const std::string& s);

} // namespace idem
