#include "operations/tasklist.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <stdexcept>

#include "operations/actions.h"
#include "operations/jobs.h"
#include "operations/stats.h"
#include "core/utf8.h"

namespace idem {

namespace {

    const char* const knownStatuses[] = { "processing", "succeeded", "retryable_failed", "failed" };
    const char* const knownClasses[] = { "retryable", "permanent", "unknown" };

    bool known(const std::string& v, const char* const* begin, const char* const* end)
    {
        return std::any_of(begin, end, [&](const char* s) { return v == s; });
    }

    void checkText(const char* what, const std::optional<std::string>& v, bool noColon)
    {
        if (!v)
            return;
        if (v->empty())
            throw std::invalid_argument(std::string(what) + " is empty");
        if (v->find('\0') != std::string::npos)
            throw std::invalid_argument(std::string(what) + " contains a NUL byte");
        if (auto problem = utf8Problem(*v))
            throw std::invalid_argument(std::string(what) + " is not valid UTF-8: " + *problem);
        if (noColon && v->find(':') != std::string::npos)
            throw std::invalid_argument(std::string(what) + " " + quoteForMessage(*v) + " contains ':'");
    }

    bool onlyUnfinished(const TaskFilter& f)
    {
        if (!f.statuses.empty())
            return std::none_of(f.statuses.begin(), f.statuses.end(), [](const auto& s) { return s == "succeeded"; });
        // These flags each imply a status other than succeeded.
        return f.expiredLease || f.liveLease || f.uncertain || f.exhausted || f.failedSince || f.unfinishedForMinutes
            || f.errorContains;
    }

    const char* bigOrNull(const std::optional<std::int64_t>& v, std::string& holder)
    {
        if (!v)
            return nullptr;
        holder = std::to_string(*v);
        return holder.c_str();
    }

    std::string rowColumns()
    {
        return "t.idempotency_key, t.status, t.attempts, t.max_attempts, " + updatedAtMicrosSql("t.created_at") + ", "
            + updatedAtMicrosSql("t.updated_at") + ", " + updatedAtMicrosSql("t.lease_until") + ", "
            + updatedAtMicrosSql("t.next_attempt_at") + ", coalesce(t.error_class, ''), ";
    }

    std::optional<std::int64_t> optInt(const pqxx::field& f)
    {
        return f.is_null() ? std::nullopt : std::optional<std::int64_t>(f.as<std::int64_t>());
    }

    // Columns 0..10 as rowColumns() + error message + request_hash lays them out.
    TaskRow rowFrom(const pqxx::row& r)
    {
        TaskRow row;
        row.key = r[0].as<std::string>();
        row.status = r[1].as<std::string>();
        row.attempts = r[2].as<int>();
        row.maxAttempts = r[3].as<int>();
        row.createdAtUs = r[4].as<std::int64_t>();
        row.updatedAtUs = r[5].as<std::int64_t>();
        row.leaseUntilUs = optInt(r[6]);
        row.nextAttemptAtUs = optInt(r[7]);
        row.errorClass = r[8].as<std::string>();
        row.errorMessage = r[9].is_null() ? std::string() : r[9].as<std::string>();
        row.requestHash = r[10].as<std::string>();
        return row;
    }

    // Bounds the read's transaction and returns the filter's predicate over alias t, in one round
    // trip: idem_task_filter_where, the one definition a recovery job matches with too. It is SQL
    // text that names no value, only $1 (the filter as its job JSON) and $2 (the moment: NULL, so
    // now()); with their values known when the statement is planned, its guards fold away and
    // the indexes are chosen as for a predicate written out. In UTC, as a job matches: a time in
    // an error history written without a zone, and the minute windows, read the same whatever
    // the reader's TimeZone (the row columns are epoch microseconds, which no zone changes).
    std::string boundTimeoutAndWhere(
        pqxx::read_transaction& t, const TaskReadOptions& o, const SchemaName& schema, const std::string& filterJson)
    {
        const auto r = t.exec_params("SELECT set_config('statement_timeout', $1, true), "
                + schema.qualify("idem_task_filter_where") + "($2::jsonb), set_config('TimeZone', 'UTC', true)",
            std::to_string(o.statementTimeoutMs), filterJson);
        return r[0][1].as<std::string>();
    }

    template <typename Tx> void boundTimeout(Tx& t, const TaskReadOptions& o)
    {
        t.exec_params("SELECT set_config('statement_timeout', $1, true)", std::to_string(o.statementTimeoutMs));
    }

    std::int64_t elapsedSince(std::chrono::steady_clock::time_point start)
    {
        return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    }

    int digits(const std::string& s, std::size_t at, std::size_t n)
    {
        if (at + n > s.size())
            return -1;
        int v = 0;
        for (std::size_t i = at; i < at + n; ++i) {
            if (s[i] < '0' || s[i] > '9')
                return -1;
            v = v * 10 + (s[i] - '0');
        }
        return v;
    }

} // namespace

std::int64_t sortTimeOf(const TaskRow& row, TaskSortColumn column)
{
    return column == TaskSortColumn::CreatedAt ? row.createdAtUs : row.updatedAtUs;
}

TaskCursor cursorOf(const TaskRow& row, TaskSortColumn column) { return TaskCursor { sortTimeOf(row, column), row.key }; }

std::optional<std::int64_t> parseIsoMicros(const std::string& s)
{
    // YYYY-MM-DD[(T| )HH:MM[:SS[.f{1,6}]]][Z|(+|-)HH[:MM]]
    const int y = digits(s, 0, 4), mo = digits(s, 5, 2), d = digits(s, 8, 2);
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || s[4] != '-' || s[7] != '-')
        return std::nullopt;
    std::tm tm {};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    std::size_t i = 10;
    std::int64_t frac = 0;
    std::int64_t offsetSeconds = 0;
    if (i < s.size() && (s[i] == 'T' || s[i] == ' ')) {
        const int h = digits(s, i + 1, 2), mi = digits(s, i + 4, 2);
        if (h < 0 || h > 23 || mi < 0 || mi > 59 || s[i + 3] != ':')
            return std::nullopt;
        tm.tm_hour = h;
        tm.tm_min = mi;
        i += 6;
        if (i < s.size() && s[i] == ':') {
            const int sec = digits(s, i + 1, 2);
            if (sec < 0 || sec > 60)
                return std::nullopt;
            tm.tm_sec = sec;
            i += 3;
            if (i < s.size() && s[i] == '.') {
                std::size_t n = 0;
                ++i;
                while (i < s.size() && s[i] >= '0' && s[i] <= '9' && n < 6) {
                    frac = frac * 10 + (s[i] - '0');
                    ++i;
                    ++n;
                }
                if (n == 0)
                    return std::nullopt;
                for (; n < 6; ++n)
                    frac *= 10;
            }
        }
        if (i < s.size() && s[i] == 'Z') {
            ++i;
        } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
            const int oh = digits(s, i + 1, 2);
            int om = 0;
            std::size_t len = 3;
            if (i + 3 < s.size() && s[i + 3] == ':') {
                om = digits(s, i + 4, 2);
                len = 6;
            }
            if (oh < 0 || oh > 14 || om < 0 || om > 59)
                return std::nullopt;
            offsetSeconds = (s[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
            i += len;
        }
    }
    if (i != s.size())
        return std::nullopt;
    const std::time_t t = timegm(&tm);
    return (static_cast<std::int64_t>(t) - offsetSeconds) * 1'000'000 + frac;
}

void validateTaskQuery(const TaskFilter& f, const TaskSort& sort)
{
    for (const auto& s : f.statuses)
        if (!known(s, std::begin(knownStatuses), std::end(knownStatuses)))
            throw std::invalid_argument(
                "unknown status " + quoteForMessage(s) + " (processing, succeeded, retryable_failed or failed)");
    checkText("the tenant", f.tenant, true);
    checkText("the operation", f.operation, true);
    checkText("the key prefix", f.keyPrefix, false);
    checkText("the error text", f.errorContains, false);
    if (f.errorContains && f.errorContains->size() > maxErrorContainsBytes)
        throw std::invalid_argument(
            "the error text is longer than " + std::to_string(maxErrorContainsBytes) + " bytes");
    if (f.errorClass && !known(*f.errorClass, std::begin(knownClasses), std::end(knownClasses)))
        throw std::invalid_argument(
            "unknown error class " + quoteForMessage(*f.errorClass) + " (retryable, permanent or unknown)");
    if (f.minAttempts && *f.minAttempts < 0)
        throw std::invalid_argument("attempts at least must not be negative");
    if (f.unfinishedForMinutes && *f.unfinishedForMinutes < 0)
        throw std::invalid_argument("unfinished for minutes must not be negative");
    if ((f.updatedWithinMinutes && *f.updatedWithinMinutes < 1) || (f.conflictWithinMinutes && *f.conflictWithinMinutes < 1))
        throw std::invalid_argument("a window must be at least 1 minute");
    if (f.failedRetryInWindow && !f.updatedWithinMinutes)
        throw std::invalid_argument("failed retries in a window need the window (updated within minutes)");
    if (f.failedSince && !parseIsoMicros(*f.failedSince))
        throw std::invalid_argument("failed since " + quoteForMessage(*f.failedSince)
            + " is not an ISO 8601 time such as 2024-05-01 or 2024-05-01T10:00:00Z");
    if (sort.column == TaskSortColumn::CreatedAt && !onlyUnfinished(f))
        throw std::invalid_argument(
            "sorting by first seen needs a filter without succeeded tasks (over every status it would read and sort "
            "the whole table): pick statuses, or sort by key");
    if (sort.column == TaskSortColumn::UpdatedAt && !onlyUnfinished(f))
        throw std::invalid_argument(
            "sorting by last update needs a filter without succeeded tasks (it is served by the unfinished-tasks "
            "index; over every status it would read the whole table): pick statuses, or sort by key");
}

TaskPage listTasks(pqxx::connection& conn, const SchemaName& schema, const TaskFilter& f, const TaskSort& sort,
    const std::optional<TaskCursor>& after, int limit, const std::optional<TaskCursor>& through,
    const TaskReadOptions& options)
{
    validateTaskQuery(f, sort);
    if (limit < 1 || limit > TaskReadOptions::maxLimit)
        throw std::invalid_argument("page size must be 1 to " + std::to_string(TaskReadOptions::maxLimit));
    const auto start = std::chrono::steady_clock::now();
    const std::string filterJson = jobFilterJson(f);

    // Keyset: strictly after `after`, up to and including `through`, in (sort value, key) order.
    const bool byTime = sort.column != TaskSortColumn::Key;
    const std::string col = sort.column == TaskSortColumn::CreatedAt ? "t.created_at" : "t.updated_at";
    const char* gt = sort.descending ? "<" : ">";
    const char* le = sort.descending ? ">=" : "<=";
    const std::string tsAfter = "(to_timestamp(0) + $4::bigint * interval '1 microsecond')";
    const std::string tsThrough = "(to_timestamp(0) + $6::bigint * interval '1 microsecond')";
    std::string keyset;
    if (byTime) {
        keyset = "\n    AND ($3::text IS NULL OR (" + col + " " + std::string(sort.descending ? "<=" : ">=") + " " + tsAfter
            + " AND (" + col + " " + gt + " " + tsAfter + " OR t.idempotency_key " + gt + " $3::text)))"
            + "\n    AND ($5::text IS NULL OR (" + col + " " + le + " " + tsThrough + " AND (" + col + " <> " + tsThrough
            + " OR t.idempotency_key " + le + " $5::text)))";
    } else {
        keyset = "\n    AND ($3::text IS NULL OR t.idempotency_key " + std::string(gt)
            + " $3::text)"
              "\n    AND ($4::bigint IS NULL OR true)"
              "\n    AND ($5::text IS NULL OR t.idempotency_key "
            + le + " $5::text)\n    AND ($6::bigint IS NULL OR true)";
    }
    const char* dir = sort.descending ? " DESC" : "";
    const std::string order = byTime ? " ORDER BY " + col + dir + ", t.idempotency_key" + dir
                                     : std::string(" ORDER BY t.idempotency_key") + dir;

    std::string h4, h6;
    const std::optional<std::int64_t> afterUs = after ? std::optional<std::int64_t>(after->updatedAtUs) : std::nullopt;
    const std::optional<std::int64_t> throughUs
        = through ? std::optional<std::int64_t>(through->updatedAtUs) : std::nullopt;

    TaskPage page;
    pqxx::read_transaction t(conn);
    const std::string sql = "SELECT " + rowColumns() + "left(t.error_message, 300), t.request_hash, "
        + updatedAtMicrosSql("now()") + " FROM " + schema.qualify("task_idempotency") + " t WHERE "
        + boundTimeoutAndWhere(t, options, schema, filterJson) + keyset + order + " LIMIT $7::int";
    const auto r = t.exec_params(sql, filterJson, static_cast<const char*>(nullptr), after ? after->key.c_str() : nullptr,
        bigOrNull(afterUs, h4), through ? through->key.c_str() : nullptr, bigOrNull(throughUs, h6), limit + 1);
    // The server clock comes with the rows (one round trip); an empty page asks separately.
    page.serverNowUs = r.empty() ? t.exec("SELECT " + updatedAtMicrosSql("now()"))[0][0].as<std::int64_t>()
                                 : r[0][11].as<std::int64_t>();
    t.commit();
    const auto n = std::min<std::size_t>(r.size(), static_cast<std::size_t>(limit));
    page.rows.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
        page.rows.push_back(rowFrom(r[static_cast<pqxx::result::size_type>(i)]));
    if (r.size() > static_cast<std::size_t>(limit) && !page.rows.empty())
        page.next = cursorOf(page.rows.back(), sort.column);
    page.elapsedMs = elapsedSince(start);
    return page;
}

TaskCount countTasks(pqxx::connection& conn, const SchemaName& schema, const TaskFilter& f, std::int64_t exactUpTo,
    const TaskReadOptions& options)
{
    validateTaskQuery(f, {});
    const std::string filterJson = jobFilterJson(f);
    const std::string from = " FROM " + schema.qualify("task_idempotency") + " t WHERE ";
    const auto run = [&](const std::string& select, const std::string& rest, auto&&... extra) {
        pqxx::read_transaction t(conn);
        const auto where = boundTimeoutAndWhere(t, options, schema, filterJson);
        auto r = t.exec_params(
            select + from + where + rest, filterJson, static_cast<const char*>(nullptr), extra...);
        t.commit();
        return r;
    };
    try {
        const auto r = run("SELECT count(*) FROM (SELECT 1", " LIMIT $3::bigint) s", exactUpTo + 1);
        const auto n = r[0][0].as<std::int64_t>();
        if (n <= exactUpTo)
            return { n, true };
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() != "57014") // statement timeout: fall back to the estimate
            throw;
    }
    if (f == TaskFilter {}) {
        // Every row: the stats reading's figure (the Total rows tile), not the plan's own
        // extrapolation of it, so the tile and the page it opens say the same number.
        pqxx::read_transaction t(conn);
        boundTimeout(t, options);
        const auto r = t.exec_params("SELECT " + totalRowsEstimateColumns()
                + " FROM (SELECT pc.oid, pc.reltuples FROM pg_class pc WHERE pc.oid = to_regclass($1)) rel",
            schema.qualify("task_idempotency"));
        t.commit();
        if (!r.empty() && !r[0][0].is_null())
            return { r[0][0].as<std::int64_t>(), false,
                r[0][1].as<bool>() ? liveRowCounterSource : plannerStatisticsSource };
    }
    const auto plan = nlohmann::json::parse(run("EXPLAIN (FORMAT JSON) SELECT 1", "")[0][0].as<std::string>());
    return { plan.at(0).at("Plan").at("Plan Rows").get<std::int64_t>(), false };
}

std::optional<TaskDetail> readTask(pqxx::connection& conn, const SchemaName& schema, const std::string& key,
    int previewChars, const TaskReadOptions& options)
{
    if (previewChars < 0)
        throw std::invalid_argument("the preview size must not be negative");
    pqxx::read_transaction t(conn);
    boundTimeout(t, options);
    // jsonb_pretty and the length run on the server: only the preview crosses the wire.
    const auto r = t.exec_params("SELECT " + rowColumns()
            + "t.error_message, t.request_hash, coalesce(t.owner_token::text, ''), t.errors::text,"
              " t.result_json IS NOT NULL, left(x.pretty, $2::int), coalesce(octet_length(t.result_json::text), 0),"
              " coalesce(char_length(x.pretty) > $2::int, false), "
            + updatedAtMicrosSql("now()") + " FROM " + schema.qualify("task_idempotency")
            + " t, LATERAL (SELECT jsonb_pretty(t.result_json) AS pretty) x WHERE t.idempotency_key = $1",
        key, previewChars);
    if (r.empty())
        return std::nullopt;
    TaskDetail d;
    const auto& row = r[0];
    d.row = rowFrom(row);
    d.ownerToken = row[11].as<std::string>();
    d.errorsJson = row[12].as<std::string>();
    d.hasResult = row[13].as<bool>();
    d.resultPreview = row[14].is_null() ? std::string() : row[14].as<std::string>();
    d.resultBytes = row[15].as<std::int64_t>();
    d.resultTruncated = row[16].as<bool>();
    d.serverNowUs = row[17].as<std::int64_t>();
    const auto conflicts = schema.qualify("task_idempotency_conflicts");
    if (t.exec_params("SELECT to_regclass($1) IS NOT NULL", conflicts)[0][0].as<bool>()) {
        const auto c = t.exec_params("SELECT n, " + updatedAtMicrosSql("first_at") + ", "
                + updatedAtMicrosSql("last_at") + ", last_digest FROM " + conflicts + " WHERE idempotency_key = $1",
            key);
        if (!c.empty())
            d.conflicts = TaskConflictInfo { c[0][0].as<std::int64_t>(), c[0][1].as<std::int64_t>(),
                c[0][2].as<std::int64_t>(), c[0][3].as<std::string>() };
    }
    d.fields = readFieldComparison(t, schema, key);
    t.commit();
    return d;
}

bool streamResult(pqxx::connection& conn, const SchemaName& schema, const std::string& key, std::ostream& out,
    const std::function<bool(std::int64_t, std::int64_t)>& progress, int chunkChars)
{
    if (chunkChars < 1)
        throw std::invalid_argument("the chunk size must be positive");
    // One snapshot for every chunk, so the pieces belong to one version of the result.
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> t(conn);
    const auto table = schema.qualify("task_idempotency");
    const auto len = t.exec_params("SELECT char_length(result_json::text), octet_length(result_json::text) FROM "
            + table + " WHERE idempotency_key = $1",
        key);
    if (len.empty())
        throw std::runtime_error("no task with the key " + quoteForMessage(key));
    if (len[0][0].is_null())
        throw std::runtime_error("the task " + quoteForMessage(key) + " has no result");
    const auto chars = len[0][0].as<std::int64_t>();
    const auto bytes = len[0][1].as<std::int64_t>();
    std::int64_t done = 0;
    for (std::int64_t from = 1; from <= chars; from += chunkChars) {
        const auto piece = t.exec_params("SELECT substring(result_json::text FROM $2::int FOR $3::int) FROM " + table
                + " WHERE idempotency_key = $1",
            key, static_cast<int>(from), chunkChars);
        const auto text = piece[0][0].as<std::string>();
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        if (!out)
            throw std::runtime_error("writing the result failed");
        done += static_cast<std::int64_t>(text.size());
        if (progress && !progress(done, bytes))
            return false;
    }
    t.commit();
    return true;
}

} // namespace idem
