#pragma once

#include <cstdint>
#include <string>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem {

// Deploys (schema v18): a worker tells the database which version of its code it runs, once when
// it starts and again when it reconnects, never per task. The first report of a version the fleet
// has never reported is a deploy: a mark on the console's charts and in `idemctl events`
// (resources/sql/functions/idem_report_version.sql).

struct VersionReport {
    enum class Outcome {
        Unchanged, // this worker's recorded version is this one: nothing was written
        NewWorker, // a worker name not seen before: recorded
        Changed, // the worker ran previousVersion before: recorded
        // A worker name not seen before, but its login named 200 new workers within the hour
        // already (schema v24): nothing was written. Name workers stably (hostWorkerName).
        NotRecorded,
    };
    Outcome outcome = Outcome::Unchanged;
    std::string previousVersion; // Unchanged: the version; Changed: the one before; NewWorker: empty
    // > 0 when this report was a deploy (a version new to the fleet); 0 also for a new version past
    // the login's 20 deploys an hour (schema v24), coalesced into its newest deploy's mark.
    std::int64_t deployId = 0;
};

const char* versionReportOutcomeName(VersionReport::Outcome outcome);

// What a worker name and a version string may be (the SQL function's bounds): 1 to 200 characters
// of well-formed UTF-8, no control or format character (isDisplayControl), no leading or trailing
// space, not only white space. Throws std::invalid_argument naming `what` otherwise.
void validateVersionText(const std::string& text, const char* what);

// Records, in one round trip of its own (no transaction of the caller's open on `conn`), that
// worker `worker` runs `version`. Throws std::invalid_argument for a name or version outside the
// bounds before any I/O (and for one the server refuses, SQLSTATE ID003, such as text that is
// only invisible characters), DatabaseUnavailable when the connection breaks. Needs idem_worker.
VersionReport reportVersion(
    pqxx::connection& conn, const SchemaName& schema, const std::string& worker, const std::string& version);

// "<host name>/<service>": a worker name that stays the same across restarts of the same
// service on the same host, as a deploy's worker should (a name per process start adds a row
// per start). `service` is used as given; the host name is cut to fit the 200 characters.
std::string hostWorkerName(const std::string& service);

} // namespace idem
