#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"
#include "operations/storage.h"

namespace idem {

// The purge of succeeded keys past their horizon (resources/sql/migrations/0009_key_lifecycle.sql), driven
// from the client: idem_purge_begin, then idem_purge_batch until nothing more is due (or the time
// is up), then idem_purge_finish, each its own short transaction. A batch skips any row another
// transaction holds (SKIP LOCKED) and takes no lock for longer than 100 ms (lock_timeout), so a
// claim never waits for it. A kill leaves every committed batch counted in the run's row; the
// next run closes the killed one as abandoned (with its audit entry) and goes on from there.
struct PurgeOptions {
    int batch = 1000; // rows per batch, 1..100000
    double maxSeconds = 0; // stop starting batches after this long; 0: until nothing is due
    // Pacing, holding no lock between batches: after a batch of t ms the purge sleeps
    // t * (1 - duty) / duty ms (at least pauseMs), so batches take at most this share of the
    // time, and back off by themselves when the database is busy (a batch then takes longer).
    // On a small machine a purge at full speed (duty 1) takes CPU from the workers
    // (bench/README.md, "Session 6").
    double duty = 0.1; // 0.01 .. 1
    int pauseMs = 0;
    std::string reason = "idemctl purge";
    std::string actor; // empty: localActor()
    // Called after each batch, on the calling thread.
    std::function<void(std::int64_t runId, std::int64_t batches, std::int64_t rowsRemoved, double batchMs)> progress;
    const std::atomic<bool>* stop = nullptr; // set: finish after the current batch
    // Schema v22: run an approved purge request (operations/changerequests.h) instead: the run is
    // begun by its use (idem_change_use, once, naming its spec's SHA-256), with the request's
    // reason; batch, maxSeconds and duty are the spec's, whatever is set above.
    std::int64_t requestId = 0;
    std::string requestSha256;
};

struct PurgeResult {
    std::int64_t runId = 0;
    std::int64_t rowsRemoved = 0;
    std::int64_t batches = 0;
    double durationMs = 0; // as the run's row records it (begin to finish)
    double longestBatchMs = 0; // client-side, one batch's round trip and commit
    std::int64_t auditId = 0;
    bool stoppedByTime = false; // maxSeconds (or stop) ended it with rows still due
    std::vector<std::pair<std::string, std::int64_t>> removedByOperation;
    std::int64_t requestUseAuditId = 0; // a request's run: the use's audit entry (action change_use)
};

// Runs one purge. Throws pqxx::insufficient_privilege for a role that is not idem_operator,
// std::invalid_argument for options out of range before any I/O. If a batch fails (e.g. its
// lock_timeout), the run is finished with what it removed and the error rethrown.
PurgeResult runPurge(pqxx::connection& conn, const SchemaName& schema, const PurgeOptions& options);

// What a purge would remove now, per operation, changing nothing: idem_retention_due with cap
// (a figure that reached it is a lower bound, labelled as such).
struct PurgePreview {
    std::string asOf;
    std::vector<OperationRetention> operations;
    std::int64_t total = 0;
    bool totalLowerBound = false;
    std::int64_t cap = 0;
};
PurgePreview previewPurge(pqxx::connection& conn, const SchemaName& schema, std::int64_t cap);

} // namespace idem
