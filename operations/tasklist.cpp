#include "operations/tasklist.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <stdexcept>

#include "operations/actions.h"
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

    // A LIKE pattern matching exactly the strings that start with `prefix`.
    std::string likePrefix(const std::string& prefix)
    {
        std::string out;
        for (char c : prefix) {
            if (c == '\\' || c == '%' || c == '_')
                out += '\\';
            out += c;
        }
        return out + '%';
    }

    // An ILIKE pattern matching the strings that contain `text` (literally, any case).
    std::string likeContains(const std::string& text) { return '%' + likePrefix(text); }

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

    const char* nullOr(const std::optional<std::string>& v) { return v ? v->c_str() : nullptr; }

    std::string statusArray(const TaskFilter& f)
    {
        std::string out = "{";
        for (const auto& s : f.statuses)
            out += (out.size() > 1 ? "," : "") + s; // validated names: no quoting needed
        return out + "}";
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

    // The WHERE clause over alias t. Every filter value is a parameter ($1..$15, and the error
    // text's pattern as $containsParam), always bound (NULL when unset) so the arity never
    // changes; the planner folds "$n IS NULL OR ..." away for an unnamed statement, leaving
    // index-usable predicates (LIKE 'prefix%' on the key).
    std::string whereClause(const SchemaName& schema, const TaskFilter& f, int containsParam)
    {
        std::string w = R"(
        ($1::text[] IS NULL OR t.status = ANY ($1::text[]))
    AND ($2::text IS NULL OR split_part(t.idempotency_key, ':', 1) = $2::text)
    AND ($3::text IS NULL OR t.idempotency_key LIKE $3::text)
    AND ($4::text IS NULL OR t.idempotency_key LIKE $4::text)
    AND ($5::text IS NULL OR split_part(t.idempotency_key, ':', 2) = $5::text)
    AND ($6::int IS NULL OR t.attempts >= $6::int)
    AND (NOT $7::bool OR (t.status = 'processing' AND (t.lease_until IS NULL OR t.lease_until <= now())))
    AND (NOT $8::bool OR (t.status = 'processing' AND t.lease_until > now()))
    AND (NOT $9::bool OR (t.status = 'retryable_failed' AND t.error_class = 'unknown'))
    AND ($10::text IS NULL OR t.error_class = $10::text)
    AND (NOT $11::bool OR (t.status = 'failed' AND t.error_class IS DISTINCT FROM 'permanent'))
    AND ($12::bigint IS NULL OR (t.status = 'failed' AND t.updated_at >= to_timestamp(0) + $12::bigint * interval '1 microsecond'))
    AND ($13::int IS NULL OR (t.status <> 'succeeded' AND t.created_at < now() - $13::int * interval '1 minute'))
    AND ($14::int IS NULL OR t.updated_at >= date_trunc('minute', now()) - ($14::int - 1) * interval '1 minute'))";
        // The window as the counters have it: the last $15 minute buckets, the current one included.
        w += "\n    AND ($15::int IS NULL OR t.idempotency_key IN (SELECT c.idempotency_key FROM "
            + schema.qualify("task_idempotency_conflicts")
            + " c WHERE c.last_at >= date_trunc('minute', now()) - ($15::int - 1) * interval '1 minute'))";
        // Lets the planner use the retried-rows partial index (attempts > 1) for a retry filter.
        if ((f.minAttempts && *f.minAttempts >= 2) || f.failedRetryInWindow)
            w += "\n    AND t.attempts > 1";
        // A failure of a retry in the window ($14): its row was updated then, so the index on
        // (updated_at) WHERE attempts > 1 bounds the rows whose history is read. CASE, not AND:
        // an entry is cast only once its shape is known (the history is a column anyone with
        // UPDATE could have written).
        if (f.failedRetryInWindow)
            w += "\n    AND EXISTS (SELECT 1 FROM jsonb_array_elements(t.errors) e WHERE CASE"
                 " WHEN jsonb_typeof(e -> 'attempt') = 'number' AND jsonb_typeof(e -> 'at') = 'string'"
                 " AND (e ->> 'at') ~ '^\\d{4}-\\d\\d-\\d\\d[T ]\\d\\d:\\d\\d'"
                 " THEN (e ->> 'attempt')::numeric >= 2 AND (e ->> 'at')::timestamptz >= date_trunc('minute', now())"
                 " - ($14::int - 1) * interval '1 minute' ELSE false END)";
        if (f.digestConflicts)
            w += "\n    AND t.idempotency_key IN (SELECT c.idempotency_key FROM "
                + schema.qualify("task_idempotency_conflicts") + " c)";
        // The error text: unfinished rows only (onlyUnfinished below), so the read walks the
        // unfinished-rows index, bounded by the page's limit and the statement timeout.
        const std::string c = "$" + std::to_string(containsParam) + "::text";
        w += "\n    AND (" + c + " IS NULL OR t.error_message ILIKE " + c + ")";
        // The unfinished partial index serves an updated_at sort only when the planner can
        // prove the predicate; say it literally when the filter implies it.
        if (onlyUnfinished(f))
            w += "\n    AND t.status <> 'succeeded'";
        return w;
    }

    struct FilterParams {
        std::optional<std::string> statuses, tenant, tenantLike, prefixLike, operation, errorClass, errorLike;
        std::optional<int> minAttempts, unfinished, updatedWithin, conflictWithin;
        std::optional<std::int64_t> failedSinceUs;
    };

    FilterParams paramsOf(const TaskFilter& f)
    {
        FilterParams p;
        if (!f.statuses.empty())
            p.statuses = statusArray(f);
        p.tenant = f.tenant;
        if (f.tenant)
            p.tenantLike = likePrefix(*f.tenant + ":" + (f.operation ? *f.operation + ":" : std::string()));
        if (f.keyPrefix)
            p.prefixLike = likePrefix(*f.keyPrefix);
        p.operation = f.operation;
        p.errorClass = f.errorClass;
        p.minAttempts = f.minAttempts;
        p.unfinished = f.unfinishedForMinutes;
        p.updatedWithin = f.updatedWithinMinutes;
        p.conflictWithin = f.conflictWithinMinutes;
        if (f.failedSince)
            p.failedSinceUs = parseIsoMicros(*f.failedSince);
        if (f.errorContains)
            p.errorLike = likeContains(*f.errorContains);
        return p;
    }

    const char* intOrNull(const std::optional<int>& v, std::string& holder)
    {
        if (!v)
            return nullptr;
        holder = std::to_string(*v);
        return holder.c_str();
    }

    const char* bigOrNull(const std::optional<std::int64_t>& v, std::string& holder)
    {
        if (!v)
            return nullptr;
        holder = std::to_string(*v);
        return holder.c_str();
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
    const auto p = paramsOf(f);

    // Keyset: strictly after `after`, up to and including `through`, in (sort value, key) order.
    const bool byTime = sort.column != TaskSortColumn::Key;
    const std::string col = sort.column == TaskSortColumn::CreatedAt ? "t.created_at" : "t.updated_at";
    const char* gt = sort.descending ? "<" : ">";
    const char* le = sort.descending ? ">=" : "<=";
    const std::string tsAfter = "(to_timestamp(0) + $17::bigint * interval '1 microsecond')";
    const std::string tsThrough = "(to_timestamp(0) + $19::bigint * interval '1 microsecond')";
    std::string keyset;
    if (byTime) {
        keyset = "\n    AND ($16::text IS NULL OR (" + col + " " + std::string(sort.descending ? "<=" : ">=") + " " + tsAfter
            + " AND (" + col + " " + gt + " " + tsAfter + " OR t.idempotency_key " + gt + " $16::text)))"
            + "\n    AND ($18::text IS NULL OR (" + col + " " + le + " " + tsThrough + " AND (" + col + " <> " + tsThrough
            + " OR t.idempotency_key " + le + " $18::text)))";
    } else {
        keyset = "\n    AND ($16::text IS NULL OR t.idempotency_key " + std::string(gt)
            + " $16::text)"
              "\n    AND ($17::bigint IS NULL OR true)"
              "\n    AND ($18::text IS NULL OR t.idempotency_key "
            + le + " $18::text)\n    AND ($19::bigint IS NULL OR true)";
    }
    const char* dir = sort.descending ? " DESC" : "";
    const std::string order = byTime ? " ORDER BY " + col + dir + ", t.idempotency_key" + dir
                                     : std::string(" ORDER BY t.idempotency_key") + dir;
    const std::string sql = "SELECT " + rowColumns() + "left(t.error_message, 300), t.request_hash, "
        + updatedAtMicrosSql("now()") + " FROM " + schema.qualify("task_idempotency") + " t WHERE "
        + whereClause(schema, f, 21) + keyset + order + " LIMIT $20::int";

    std::string h6, h12, h13, h14, h15, h17, h19;
    const std::optional<std::int64_t> afterUs = after ? std::optional<std::int64_t>(after->updatedAtUs) : std::nullopt;
    const std::optional<std::int64_t> throughUs
        = through ? std::optional<std::int64_t>(through->updatedAtUs) : std::nullopt;

    TaskPage page;
    pqxx::read_transaction t(conn);
    boundTimeout(t, options);
    const auto r = t.exec_params(sql, nullOr(p.statuses), nullOr(p.tenant), nullOr(p.tenantLike), nullOr(p.prefixLike),
        nullOr(p.operation), intOrNull(p.minAttempts, h6), f.expiredLease, f.liveLease, f.uncertain,
        nullOr(p.errorClass), f.exhausted, bigOrNull(p.failedSinceUs, h12), intOrNull(p.unfinished, h13),
        intOrNull(p.updatedWithin, h14), intOrNull(p.conflictWithin, h15), after ? after->key.c_str() : nullptr,
        bigOrNull(afterUs, h17), through ? through->key.c_str() : nullptr, bigOrNull(throughUs, h19), limit + 1,
        nullOr(p.errorLike));
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
    const auto p = paramsOf(f);
    const std::string from = " FROM " + schema.qualify("task_idempotency") + " t WHERE " + whereClause(schema, f, 16);
    std::string h6, h12, h13, h14, h15;
    const auto run = [&](const std::string& sql, auto&&... extra) {
        pqxx::read_transaction t(conn);
        boundTimeout(t, options);
        auto r = t.exec_params(sql, nullOr(p.statuses), nullOr(p.tenant), nullOr(p.tenantLike), nullOr(p.prefixLike),
            nullOr(p.operation), intOrNull(p.minAttempts, h6), f.expiredLease, f.liveLease, f.uncertain,
            nullOr(p.errorClass), f.exhausted, bigOrNull(p.failedSinceUs, h12), intOrNull(p.unfinished, h13),
            intOrNull(p.updatedWithin, h14), intOrNull(p.conflictWithin, h15), nullOr(p.errorLike), extra...);
        t.commit();
        return r;
    };
    try {
        const auto r = run("SELECT count(*) FROM (SELECT 1" + from + " LIMIT $17::bigint) s", exactUpTo + 1);
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
    const auto plan = nlohmann::json::parse(run("EXPLAIN (FORMAT JSON) SELECT 1" + from)[0][0].as<std::string>());
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
