#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/connection>
#include <pqxx/transaction_base>

#include "core/identifier.h"

namespace idem {

// Pauses of intake (schema v15, resources/sql/migrations/0015_pauses.sql): while a pause covers a
// key's tenant and operation, claim() neither acquires nor takes it over and answers 'paused'.
// Set, changed and lifted only through the audited SQL functions idem_pause and idem_resume
// (idem_operator); listed by idem_pause_list (idem_reader). No Qt: idemctl, the console's worker
// thread and the exporter call these.
// A resume in steps (schema v33, idem_resume_ramp): the pause row of a scope admits a rising share
// of its keys step by step, chosen by the key's hash (idem_ramp_bucket), and is paused again by the
// database when the admitted keys of a step fail past abortAbove (idem_ramp_failed).
struct Ramp {
    std::vector<int> steps; // percent of keys admitted per step, rising, the last 100
    std::int64_t stepMs = 0;
    std::int64_t startedAtUs = 0;
    double abortAbove = 0; // failed / claimed of a step, 0 to 1
    int minClaims = 0; // a step aborts only once it admitted this many claims
    int step = 0; // 0-based, by the server's clock when the list was read
    int percent = 0; // of keys admitted at that step
    std::int64_t claimed = 0; // admitted claims of that step (the tally)
    std::int64_t failed = 0; // their failures recorded by fail()

    int stepCount() const { return static_cast<int>(steps.size()); }
    bool done() const { return percent >= 100; }
    // failed / claimed of the current step; none before any claim was admitted.
    std::optional<double> failureRate() const;
    // When the current step began and when the ramp reaches 100 %, by the server's clock.
    std::int64_t stepBeganAtUs() const { return startedAtUs + std::int64_t(step) * stepMs * 1000; }
    std::int64_t endsAtUs() const { return startedAtUs + std::int64_t(stepCount() - 1) * stepMs * 1000; }
};

struct Pause {
    std::string tenant; // '*' for every tenant
    std::string operation; // '*' for every operation
    std::string reason;
    std::string pausedBy; // "session_user (actor)"
    std::int64_t pausedAtUs = 0; // microseconds since the Unix epoch, the server's clock
    std::int64_t changedAtUs = 0;
    std::optional<std::int64_t> untilUs; // none: until resumed
    bool active = false; // in force now (an expired pause stays listed until lifted)
    std::optional<std::int64_t> remainingMs; // until its end, by the server's clock; none: no end
    std::int64_t turnedAway = 0; // claims counted 'paused' in its scope over the listing's minutes
    bool seen = false; // any outcome of its scope counted over the listing's minutes (false: matches nothing yet)
    std::int64_t auditId = 0; // the entry that set it last
    std::optional<Ramp> ramp; // a resume in steps under way (v33); none: a plain pause
    std::optional<std::int64_t> rampAbortedAtUs; // a ramp's automatic re-pause set this pause (v33)

    // "tenant:operation", as claim() reports the scope in ClaimResult::detail.
    std::string scope() const { return tenant + ':' + operation; }
};

struct PauseList {
    std::int64_t serverNowUs = 0; // the server's clock when the list was read (clock_timestamp: a reading
                                  // transaction may have begun before a pause it sees was set)
    int minutes = 15; // the window of turnedAway
    std::vector<Pause> pauses; // in force first, then by tenant and operation

    bool anyActive() const;
    // The pauses in force that cover tenant:operation (either may be '*' to mean "any").
    std::vector<const Pause*> covering(const std::string& tenant, const std::string& operation) const;
};

// Every pause, in force or expired, with the claims each turned away over the last `minutes`
// (1 to 1440). One statement, read-only. Throws pqxx::undefined_function on a schema older than
// v15 (the console checks the version first).
PauseList listPauses(pqxx::connection& conn, const SchemaName& schema, int minutes = 15);
// The same two statements in a transaction the caller holds (the exporter's savepoint, with its
// statement timeout).
PauseList listPauses(pqxx::transaction_base& tx, const SchemaName& schema, int minutes = 15);

// A pause lifted by a resume (idem_resume), as the audit trail keeps it: the pause's own image
// (reason, who, since, planned end) and the resume's entry (when, who, why).
struct EndedPause {
    Pause pause; // tenant, operation, reason, pausedBy, pausedAtUs, untilUs (active false)
    std::int64_t resumedAtUs = 0;
    std::string resumedBy; // "db_role (os_user@host)"
    std::string resumeReason;
    std::int64_t resumeAuditId = 0;
};

// The pauses lifted within the last `hours` (1 to 8760), newest first, at most `limit` (1 to
// 1000): the resume entries of the audit trail (key '', so its key index bounds the read).
// Read-only; needs idem_reader.
std::vector<EndedPause> listEndedPauses(pqxx::connection& conn, const SchemaName& schema, int hours, int limit = 200);

struct PauseRequest {
    static constexpr std::int64_t minLengthMs = 1000;
    static constexpr std::int64_t maxLengthMs = 365LL * 24 * 3600 * 1000;

    std::string tenant = "*";
    std::string operation = "*";
    std::string reason; // required: the recovery actions' rules (validateActionOptions)
    std::string actor; // empty: localActor()
    std::optional<std::int64_t> lengthMs; // from the server's now; none and no endUs: until resumed
    std::optional<std::int64_t> endUs; // an end by the server's clock (microseconds since the epoch)
    int lockTimeoutMs = 5000;
};

struct PauseChange {
    std::int64_t auditId = 0;
    Pause pause; // as it is now (turnedAway and seen are not filled in)
    std::optional<std::int64_t> previousUntilUs;
    bool wasPaused = false; // the scope was paused (in force) already: this changed it
};

// Whether a tenant or operation name may name a pause's scope: '*', or 1 to 64 visible ASCII
// characters without ':' (as keys carry them, core/key.h). The SQL applies the same rule.
bool validPauseName(const std::string& name);

// Throws std::invalid_argument before any I/O for what idem_pause would refuse with ID003
// (names, reason, actor, a length and an end together, a length out of range). An end in the past
// is checked by the server, by its clock.
void validatePauseRequest(const PauseRequest& request);

// Sets (or changes) one pause, with its audit entry, in one transaction. Throws
// pqxx::insufficient_privilege for a role that is not idem_operator, pqxx::sql_error with SQLSTATE
// ID003 for an end in the past by the server's clock, ID004 for a 10,001st pause.
PauseChange setPause(pqxx::connection& conn, const SchemaName& schema, const PauseRequest& request);

struct ResumeChange {
    std::int64_t auditId = 0;
    std::string tenant;
    std::string operation;
    std::int64_t pausedAtUs = 0;
    std::optional<std::int64_t> untilUs;
    bool wasActive = false; // false: it had expired already
    // Pauses still in force that cover some of the lifted scope's keys (e.g. '*' for its tenant).
    std::vector<std::pair<std::string, std::string>> stillPausedBy;
};

// Lifts the pause of exactly (tenant, operation), as it was set ('*' included), with its audit
// entry. Throws PauseNotFound when there is none (nothing changed).
struct PauseNotFound : std::runtime_error {
    using std::runtime_error::runtime_error;
};
ResumeChange resumePause(pqxx::connection& conn, const SchemaName& schema, const std::string& tenant,
    const std::string& operation, const std::string& reason, const std::string& actor = {}, int lockTimeoutMs = 5000);

// "12m 30s", "2h 5m", "3d 4h": a pause's remaining time or length, for people.
std::string formatPauseLength(std::int64_t ms);

} // namespace idem
