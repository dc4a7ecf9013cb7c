#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>
#include <pqxx/transaction_base>

#include "core/identifier.h"

namespace idem {

// Proof that fencing works, and the lease advisor (issue 46 item 2; schema v31,
// resources/sql/migrations/0031_lease_recorded.sql). A worker whose lease ran out while it still
// worked loses the key to another claim (a takeover, outcome 'reacquired_lease'); its late
// complete, fail, heartbeat or fence is then refused (ID001, outcome 'stale_token'): the fence
// held. The advisor compares each operation's run times with the lease its claims asked for. No
// Qt: idemctl fencing, the exporter and the console's worker thread call these.

struct FencingOperation {
    std::string operation;
    std::int64_t takeovers = 0; // leases taken over in the window (the libraries' counters)
    std::int64_t refused = 0; // late calls refused in the window (stale tokens)
    std::int64_t runs = 0; // attempts with a run time in the folded minutes
    std::optional<double> runP50Ms, runP95Ms, runP99Ms; // within 3.7 % (latency histograms)
    std::optional<std::int64_t> leaseMs; // the lease its claims asked for most often; none recorded before v31
    std::int64_t leases = 0; // different leases asked for
    std::int64_t measured = 0; // succeeded attempts measured against their lease
    std::int64_t overruns = 0; // of them, those that ran longer than their lease

    // Of the measured attempts, the percentage that outlived their lease; none when none measured.
    std::optional<double> overrunPercent() const;
    // The p99 run time exceeds the lease, or some measured attempt outlived its lease.
    bool leaseTooShort() const;
};

struct FencingWorker {
    std::string worker; // the application_name its counters were flushed under (else its login)
    std::string operation;
    std::int64_t takeovers = 0; // it took over an expired lease
    std::int64_t refused = 0; // its late calls refused
};

struct FencingMinute {
    std::int64_t minute = 0; // Unix seconds
    std::int64_t takeovers = 0;
    std::int64_t refused = 0;
};

struct FencingReading {
    bool available = false; // the schema has idem_fencing (v31); nothing else is set without it
    int minutes = 0; // the window: the last minutes before asOf
    std::int64_t asOfUs = 0; // the server's now()
    std::vector<FencingOperation> operations; // the first limit, most refused first, then most overruns
    std::int64_t operationsOmitted = 0;
    std::vector<FencingWorker> workers; // the first limit, most refused first
    std::int64_t workersOmitted = 0;
    std::vector<FencingMinute> perMinute; // oldest first; minutes without either are absent
    std::int64_t takeovers = 0, refused = 0, measured = 0, overruns = 0; // every operation's

    // The operation whose advice matters most: the first whose lease is too short, else none.
    const FencingOperation* worst() const;
};

constexpr int defaultFencingMinutes = 60;
constexpr int maxFencingMinutes = 1440;
constexpr int defaultFencingLimit = 50;

// Reads idem_fencing over the last `minutes` (1 to 1440), at most `limit` (1 to 1000) operations
// and workers. The latency minutes must have been folded (rollupLatency) for the run times and
// leases of the last minutes.
FencingReading readFencing(pqxx::transaction_base& tx, const SchemaName& schema, int minutes, int limit);
// Folds the latency minutes that are due, then reads, each bounded by the statement timeout.
FencingReading readFencing(
    pqxx::connection& conn, const SchemaName& schema, int minutes, int limit, int statementTimeoutMs);
// The reading from idem_fencing's JSON document (the snapshot keeps it as read).
FencingReading fencingFromJson(const std::string& json, int minutes);

// The reading as idemctl fencing --json writes it and the incident snapshot keeps it (its
// "fencing" object): as_of, minutes, the totals, operations (each with its overrun_percent,
// lease_too_short and advice), operations_omitted, workers, workers_omitted, per_minute.
std::string fencingJson(const FencingReading& r);
// Back from that document (a snapshot's); throws std::runtime_error when it is not one.
FencingReading fencingFromReportJson(const std::string& json);

// The incident report's section (report.html): the totals, per operation the counts and the
// advice, the workers; names escaped.
std::string fencingReportHtml(const FencingReading& r);

// The advisor's sentence, English (idemctl, the exporter's help, the docs); the console writes
// its own, translated, from the same figures:
//   "charge: p99 run time 41 s exceeds the 30 s lease: 3.1 % of attempts outlive their lease"
//   "charge: p99 run time 850 ms is within the 30 s lease: 0.0 % of attempts outlive it"
//   "charge: p99 run time 850 ms; no lease recorded (claims before schema v31)"
// Names as they are: the caller escapes them for a terminal.
std::string leaseAdvice(const FencingOperation& op);
// "41 s", "850 ms": a run time or a lease as the advice writes it.
std::string fencingDuration(double ms);

} // namespace idem
