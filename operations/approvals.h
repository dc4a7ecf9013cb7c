#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem {

// One approval mechanism (schema v28, resources/sql/migrations/0028_one_approval.sql): every
// action a second person may have to approve is a gated kind, a row of idem_approval_kinds ('job':
// a recovery job over more rows than its threshold; 'retention': a retention change; 'purge': a
// manual purge; a new gated action adds a row). A request of any kind is a row of
// idem_approval_requests, approved (the approve right, never the login that asked, naming the
// request's spec sha256) or declined (the approve right, or the login that asked) by its id.
// The database refuses with SQLSTATE ID002 (no such request), ID003 (bad arguments) or ID004 (a
// refusal of state or policy), thrown as JobRefused (operations/jobs.h), and changes nothing; bad
// input throws std::invalid_argument before any I/O; a missing right is pqxx::insufficient_privilege.

struct ApprovalKind {
    std::string kind;
    bool gated = false; // its requests wait for another login's approval
    std::optional<std::int64_t> overRows; // job: only above this many rows (unset: every one)
    int ttlSeconds = 3600; // a request is approvable, then its approval usable, this long
    std::string what; // for people
    std::string updatedBy;
    std::optional<std::int64_t> updatedAtUs;
};

struct ApprovalRequest {
    std::int64_t id = 0;
    std::string kind; // a gated kind
    std::optional<std::int64_t> jobId; // kind job: its job
    std::string specJson; // as the database prints the jsonb (its SHA-256 is specSha256)
    std::string specSha256;
    std::string state; // awaiting_approval, approved, used, declined
    std::string requestedLogin, requestedRole, requestedActor, requestedReason;
    std::int64_t requestedAtUs = 0;
    std::int64_t approvableUntilUs = 0;
    std::string approvedLogin, approvedRole, approvedActor;
    std::optional<std::int64_t> approvedAtUs, approvalExpiresAtUs, usedAtUs, purgeRunId;
    std::string usedLogin;
    std::string declinedLogin, declinedReason;
    std::optional<std::int64_t> declinedAtUs;
    std::string jobState; // kind job: the job's state (an approved job runs, then ends)
    std::int64_t nowUs = 0; // the server's clock when read
    // Waiting and past approvable_until, or approved and past its expiry: nothing more can happen.
    bool expired() const;
    // "job 7: requeue of 12 row(s) ...", "retention: set charge to 30d", "purge: batches of 1000, ...".
    std::string what() const;
};

struct ApprovalDecision {
    std::int64_t id = 0; // the request
    std::string kind;
    std::optional<std::int64_t> jobId;
    std::int64_t atUs = 0; // approved or declined at
    std::optional<std::int64_t> expiresAtUs; // approved: usable (a job: may start or resume) until then
    std::int64_t auditId = 0;
};

struct ApprovalLimits {
    static constexpr std::int64_t maxJobRows = 1'000'000;
    static constexpr int minTtlSeconds = 60;
    static constexpr int maxTtlSeconds = 604'800;
};

// The registry of gated kinds, by kind. Read-only (idem_reader).
std::vector<ApprovalKind> readApprovalKinds(pqxx::connection& conn, const SchemaName& schema);

// Sets kind's policy (idem_set_approval_policy, the schema owner's; others get
// pqxx::insufficient_privilege), audited; returns the audit entry.
std::int64_t setApprovalKindPolicy(pqxx::connection& conn, const SchemaName& schema, const std::string& kind,
    bool gated, std::optional<std::int64_t> overRows, int ttlSeconds, const std::string& reason,
    const std::string& actor = {});

// The requests waiting or approved and still usable (expired ones for a day after, then no
// longer: they would crowd out the live ones), oldest first, at most `limit` (1..1000); with
// `all`, every request, newest first. Read-only (idem_reader).
std::vector<ApprovalRequest> listApprovalRequests(
    pqxx::connection& conn, const SchemaName& schema, bool all = false, int limit = 100);
std::optional<ApprovalRequest> readApprovalRequest(pqxx::connection& conn, const SchemaName& schema, std::int64_t id);

// idem_approval_approve: another login with the approve right, naming the spec it read.
ApprovalDecision approveRequest(pqxx::connection& conn, const SchemaName& schema, std::int64_t id,
    const std::string& specSha256, const std::string& reason, const std::string& actor = {});
// idem_approval_decline: a request waiting for approval (a job's: the job is cancelled).
ApprovalDecision declineRequest(pqxx::connection& conn, const SchemaName& schema, std::int64_t id,
    const std::string& reason, const std::string& actor = {});

// The per-login budget (schema v23), which is no kind's: one login changes at most budgetRows
// task rows without an approval within any budgetWindowSeconds, single actions and jobs together.
struct ApprovalBudget {
    std::optional<std::int64_t> budgetRows; // unset: no bound
    int budgetWindowSeconds = 3600;
    std::string updatedBy;
    std::optional<std::int64_t> updatedAtUs;
};
ApprovalBudget readApprovalBudget(pqxx::connection& conn, const SchemaName& schema);
// idem_set_approval_budget (the owner's), audited; budgetRows unset turns it off. Bounds as
// ApprovalLimits; std::invalid_argument before any I/O; returns the audit entry.
std::int64_t setApprovalBudget(pqxx::connection& conn, const SchemaName& schema, std::optional<std::int64_t> budgetRows,
    int windowSeconds, const std::string& reason, const std::string& actor = {});

// 64 lower-case hex digits.
bool isSpecSha256(const std::string& s);

} // namespace idem
