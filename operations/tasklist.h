#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"
#include "operations/fieldcompare.h"
#include "operations/taskfilter.h"

namespace idem {

// The task browser's reads (console Tasks page, idemctl tasks): pages of task records under a
// TaskFilter, fetched with keyset paging on (sort column, idempotency_key) so no read ever
// depends on how deep the reader is; one record's detail with a bounded result preview; the
// full result streamed in chunks. Every read is one read-only transaction with a statement
// timeout; every value is a bound parameter. No Qt.

enum class TaskSortColumn {
    Key, // idempotency_key: the primary key, any set
    UpdatedAt, // updated_at: only over unfinished rows (task_idempotency_unfinished_idx)
    CreatedAt, // created_at (first seen): only over unfinished rows, as the oldest-row figures age them
};

struct TaskSort {
    TaskSortColumn column = TaskSortColumn::Key;
    bool descending = false;

    bool operator==(const TaskSort&) const = default;
};

// Where the last page ended: the last row's sort value and key. Ties in the sort value are
// broken by the key, so a cursor is a strict position even when thousands of rows share an
// updated_at.
struct TaskCursor {
    std::int64_t updatedAtUs = 0; // the sort column's time: updated_at, or created_at for CreatedAt
    std::string key;

    bool operator==(const TaskCursor&) const = default;
};

struct TaskRow {
    std::string key;
    std::string status;
    int attempts = 0;
    int maxAttempts = 0;
    std::int64_t createdAtUs = 0;
    std::int64_t updatedAtUs = 0; // exact (microseconds): what a recovery action checks against
    std::optional<std::int64_t> leaseUntilUs;
    std::optional<std::int64_t> nextAttemptAtUs;
    std::string errorClass; // empty when NULL
    std::string errorMessage; // the first 300 characters in a list; whole in a detail
    std::string requestHash;

    bool operator==(const TaskRow&) const = default;
};

struct TaskPage {
    std::vector<TaskRow> rows;
    std::optional<TaskCursor> next; // set when there may be more rows after the last one
    std::int64_t serverNowUs = 0; // the server clock when read (for lease countdowns)
    std::int64_t elapsedMs = 0;
};

// Limits for one call.
struct TaskReadOptions {
    int statementTimeoutMs = 10000;
    static constexpr int maxLimit = 5000;
};

// Where `row` stands in `column`'s order.
TaskCursor cursorOf(const TaskRow& row, TaskSortColumn column = TaskSortColumn::UpdatedAt);
std::int64_t sortTimeOf(const TaskRow& row, TaskSortColumn column);

// Rows after `after` (exclusive) in sort order, at most `limit` (1..TaskReadOptions::maxLimit).
// With `through` set, only rows up to and including that position (a refresh of what a view
// already holds). Throws std::invalid_argument for an unsupported filter/sort combination or a
// malformed value (before any I/O), pqxx errors otherwise.
TaskPage listTasks(pqxx::connection& conn, const SchemaName& schema, const TaskFilter& filter, const TaskSort& sort,
    const std::optional<TaskCursor>& after, int limit, const std::optional<TaskCursor>& through = std::nullopt,
    const TaskReadOptions& options = {});

// The longest error text a filter searches for (TaskFilter::errorContains), in bytes.
constexpr std::size_t maxErrorContainsBytes = 1024;

// Throws std::invalid_argument (with the reason) for what listTasks would refuse.
void validateTaskQuery(const TaskFilter& filter, const TaskSort& sort);

// How many records match: exact up to `exactUpTo`, above that the planner's estimate (labelled).
struct TaskCount {
    std::int64_t n = 0;
    bool exact = true;
    // Where an estimate of every row comes from (the stats reading's source, e.g.
    // plannerStatisticsSource); empty for a count or a filtered query's planner estimate.
    std::string source;
};
TaskCount countTasks(pqxx::connection& conn, const SchemaName& schema, const TaskFilter& filter,
    std::int64_t exactUpTo = 10000, const TaskReadOptions& options = {});

struct TaskConflictInfo {
    std::int64_t count = 0;
    std::int64_t firstAtUs = 0;
    std::int64_t lastAtUs = 0;
    std::string lastDigest;
};

struct TaskDetail {
    TaskRow row; // errorMessage whole
    std::string ownerToken; // empty when NULL
    std::string errorsJson = "[]"; // the `errors` column, as the server prints it
    bool hasResult = false;
    std::string resultPreview; // pretty-printed, cut to the preview size (characters)
    std::int64_t resultBytes = 0; // the whole result's length as text, in bytes
    bool resultTruncated = false;
    std::optional<TaskConflictInfo> conflicts;
    // Schema v32: which fields the last conflicting request changed, when fingerprinted.
    std::optional<FieldComparison> fields;
    std::int64_t serverNowUs = 0;
};

// One record, or nullopt when the key does not exist. Only `previewChars` characters of the
// result are sent (cut on the server); its full length comes along.
std::optional<TaskDetail> readTask(pqxx::connection& conn, const SchemaName& schema, const std::string& key,
    int previewChars = 64 * 1024, const TaskReadOptions& options = {});

// Streams the whole result_json text of `key` to `out` in chunks of `chunkChars` characters, all
// from one snapshot. `progress(doneBytes, totalBytes)` after each chunk; returning false stops
// (and the function returns false). Throws std::runtime_error when the key or its result is gone.
bool streamResult(pqxx::connection& conn, const SchemaName& schema, const std::string& key, std::ostream& out,
    const std::function<bool(std::int64_t, std::int64_t)>& progress = {}, int chunkChars = 1024 * 1024);

// ISO 8601 UTC with microseconds, as operations/actions formats them; parses what failedSince holds.
std::optional<std::int64_t> parseIsoMicros(const std::string& text);

} // namespace idem
