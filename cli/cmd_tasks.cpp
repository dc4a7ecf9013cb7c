#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/tasklist.h"

namespace idem::cli {

namespace {

    constexpr const char* tasksHelp
        = R"(Usage: idemctl tasks [--status S]... [--tenant T] [--operation O] [--key-prefix P]
                     [--min-attempts N] [--limit N] [--after KEY] [--json]

Lists task records in key order, one page at a time (never the whole table): the rows a
recovery action would act on, with the exact updated_at (microseconds since the Unix epoch)
that `idemctl requeue|release|fail --expect-updated-at` checks against.

  --status S        processing, succeeded, retryable_failed or failed (repeat for several)
  --tenant T        keys of this tenant (first field of tenant:operation:business_id)
  --operation O     keys of this operation (second field)
  --key-prefix P    keys starting with P, literally
  --min-attempts N  attempts >= N
  --limit N         rows per page (1..5000, default 50)
  --after KEY       continue after this key (the last key of the previous page)
  --timeout-ms MS   statement timeout (default: 10000)
  --dsn DSN         libpq conninfo, URI or service=NAME (default: $IDEM_DSN, then PG*); idem_reader suffices
  --schema S        schema holding the Idem tables (default: idem)
  --json            one JSON object: rows, and next_after when there may be more
)";

    nlohmann::json rowJson(const TaskRow& r)
    {
        const auto ts = [](const std::optional<std::int64_t>& us) {
            return us ? nlohmann::json(formatMicros(*us)) : nlohmann::json(nullptr);
        };
        return { { "key", r.key }, { "status", r.status }, { "attempts", r.attempts },
            { "max_attempts", r.maxAttempts }, { "created_at", formatMicros(r.createdAtUs) },
            { "updated_at", formatMicros(r.updatedAtUs) }, { "updated_at_us", r.updatedAtUs },
            { "lease_until", ts(r.leaseUntilUs) }, { "next_attempt_at", ts(r.nextAttemptAtUs) },
            { "error_class", r.errorClass.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.errorClass) },
            { "error_message", r.errorMessage.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.errorMessage) } };
    }

} // namespace

int runTasks(const std::vector<std::string>& argv)
{
    Args args(argv,
        { "dsn", "schema", "status", "tenant", "operation", "key-prefix", "min-attempts", "limit", "after",
            "timeout-ms" },
        { "json", "help" }, { "status" });
    if (args.flag("help")) {
        std::cout << tasksHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("unexpected argument '" + args.positional().front() + "'");
    TaskFilter filter;
    for (const auto& s : args.values("status")) {
        if (s != "processing" && s != "succeeded" && s != "retryable_failed" && s != "failed")
            throw UsageError("--status must be processing, succeeded, retryable_failed or failed, not '" + s + "'");
        filter.statuses.push_back(s);
    }
    filter.tenant = args.value("tenant");
    filter.operation = args.value("operation");
    filter.keyPrefix = args.value("key-prefix");
    if (args.value("min-attempts"))
        filter.minAttempts = static_cast<int>(args.intValue("min-attempts", 0, 0, 1'000'000));
    const int limit = static_cast<int>(args.intValue("limit", 50, 1, TaskReadOptions::maxLimit));
    TaskReadOptions options;
    options.statementTimeoutMs = static_cast<int>(args.intValue("timeout-ms", 10000, 1, 3'600'000));
    std::optional<TaskCursor> after;
    if (auto a = args.value("after"))
        after = TaskCursor { 0, *a };
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    validateTaskQuery(filter, TaskSort {});

    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl tasks" });
    const TaskPage page = listTasks(*conn, schema, filter, TaskSort {}, after, limit, std::nullopt, options);

    if (args.flag("json")) {
        nlohmann::json j = { { "schema", schema.name() }, { "rows", nlohmann::json::array() },
            { "next_after", page.next ? nlohmann::json(page.next->key) : nlohmann::json(nullptr) },
            { "server_now", formatMicros(page.serverNowUs) } };
        for (const auto& r : page.rows)
            j["rows"].push_back(rowJson(r));
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        return ExitOk;
    }
    std::printf("%-16s %9s  %-27s %-16s  %s\n", "STATUS", "ATTEMPTS", "UPDATED_AT", "UPDATED_AT_US", "KEY");
    for (const auto& r : page.rows) {
        const std::string attempts = std::to_string(r.attempts) + "/" + std::to_string(r.maxAttempts);
        std::printf("%-16s %9s  %-27s %-16lld  %s\n", r.status.c_str(), attempts.c_str(),
            formatMicros(r.updatedAtUs).c_str(), static_cast<long long>(r.updatedAtUs),
            displaySafe(r.key, 200).c_str());
        if (!r.errorMessage.empty())
            std::printf("%16s error (%s): %s\n", "", r.errorClass.empty() ? "-" : r.errorClass.c_str(),
                displaySafe(r.errorMessage, 160).c_str());
    }
    if (page.rows.empty())
        std::printf("no tasks match\n");
    if (page.next)
        std::printf("(more: --after '%s')\n", displaySafe(page.next->key, 200).c_str());
    return ExitOk;
}

} // namespace idem::cli
