#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem {

// Before a resume, and a resume in steps (schema v33, resources/sql/migrations/0033_ramp.sql).
// No Qt: idemctl, the console's models and the exporter call these.

// What a resume of the pause of exactly (tenant, operation) sends at the recovering downstream
// (idem_pause_forecast): the scope's retryable keys falling due per minute from now, the claims
// turned away since the pause began, and their sum. The due figures are read from the retry index
// up to a cap: when it is reached they are lower bounds (dueBounded: "at least").
struct PauseForecast {
    std::string tenant;
    std::string operation;
    std::int64_t pausedAtUs = 0;
    std::int64_t serverNowUs = 0;
    int minutes = 30; // the window of dueByMinute, from the current minute
    std::vector<std::pair<std::int64_t, std::int64_t>> dueByMinute; // minute's start (us), keys due; minutes with any
    std::int64_t dueNow = 0; // due already (held back by the pause), in the first minute's figure
    std::int64_t dueTotal = 0; // within the window
    bool dueBounded = false; // the scan reached its cap: dueNow, dueTotal, dueByMinute and total are "at least"
    std::int64_t scanned = 0; // retry index entries read (every scope's)
    std::int64_t turnedAway = 0; // claims counted 'paused' since turnedAwaySinceUs (a key asked again counts again)
    std::int64_t turnedAwaySinceUs = 0; // the pause's first minute, or 1440 minutes ago if later
    std::int64_t total = 0; // dueTotal + turnedAway

    // "at least 1,204" or "1,204": how a figure of this forecast reads.
    std::string label(std::int64_t n) const;
};

// Read-only (idem_reader). Throws std::invalid_argument before any I/O for a bad scope, window (1 to
// 1440 minutes) or cap (1 to 1,000,000); pqxx::sql_error with SQLSTATE ID002 when the scope has no pause.
PauseForecast forecastResume(pqxx::connection& conn, const SchemaName& schema, const std::string& tenant,
    const std::string& operation, int minutes = 30, int cap = 100000);

struct RampRequest {
    std::string tenant = "*";
    std::string operation = "*";
    std::vector<int> steps { 10, 25, 50, 100 }; // rising percentages, the last 100
    std::int64_t stepMs = 5 * 60 * 1000;
    double abortAbove = 0.2; // failed / claimed of a step
    int minClaims = 20; // claims a step admits before it may abort
    std::string reason;
    std::string actor; // empty: localActor()
    int lockTimeoutMs = 5000;
};

struct RampChange {
    std::int64_t auditId = 0;
    std::int64_t startedAtUs = 0;
    std::int64_t endsAtUs = 0; // when the last step (100 %) begins
};

// A pause's scope: each name '*' or as keys carry them (validPauseName); std::invalid_argument
// otherwise, before any I/O. Shared by every pause function here and in operations/pauses.cpp.
void validatePauseScope(const std::string& tenant, const std::string& operation);
// "10,25,50,100" -> {10, 25, 50, 100}; throws std::invalid_argument for anything else.
std::vector<int> parseRampSteps(const std::string& text);
// Throws std::invalid_argument before any I/O for what idem_resume_ramp refuses with ID003.
void validateRampRequest(const RampRequest& request);
// Resumes the pause of exactly (tenant, operation) in steps, with its audit entry ('ramp'). Needs
// the pause right (idem_may_pause), as a resume does. Throws PauseNotFound (operations/pauses.h)
// when the scope has no pause, pqxx::sql_error ID004 when its pause has ended already.
RampChange startRamp(pqxx::connection& conn, const SchemaName& schema, const RampRequest& request);

} // namespace idem
