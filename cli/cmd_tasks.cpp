#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/fieldcompare.h"
#include "operations/redrive.h"
#include "operations/tasklist.h"

namespace idem::cli {

namespace {

    constexpr const char* tasksHelp
        = R"(Usage: idemctl tasks [--status S]... [--tenant T] [--operation O] [--key-prefix P]
                     [--min-attempts N] [--limit N] [--after KEY] [--json]
       idemctl tasks show KEY [--json]

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

tasks show KEY: the one task, whether a request is stored for it (schema v25: its size, and its
content, redacted fields shown as "[redacted]", only for a role holding the read_requests right,
idem_may_read_requests) and its re-executions, newest first: each re-drive item's state
(queued, running, succeeded, failed, conflict, gone), worker, tries, who asked for it and when,
and why it ended (docs/redrive.md). Schema v32: on a digest conflict of a key whose operation
fingerprints its fields, which fields of the last conflicting request differed and which matched
("amount_cents differs; currency, order_id same"; names only, never values; --json: "fields").
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

    int runTasksShow(const std::vector<std::string>& argv)
    {
        Args args(argv, { "dsn", "schema", "timeout-ms" }, { "json", "help" });
        if (args.flag("help")) {
            std::cout << tasksHelp;
            return ExitOk;
        }
        if (args.positional().size() != 2)
            throw UsageError("tasks show takes one key");
        const std::string key = args.positional()[1];
        if (key.empty())
            throw UsageError("a key is required");
        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
        TaskReadOptions options;
        options.statementTimeoutMs = static_cast<int>(args.intValue("timeout-ms", 10000, 1, 3'600'000));
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl tasks" });
        TaskFilter filter;
        filter.keyPrefix = key;
        const TaskPage page = listTasks(*conn, schema, filter, TaskSort {}, std::nullopt, 1, std::nullopt, options);
        const TaskRow* row = nullptr;
        for (const auto& r : page.rows)
            if (r.key == key)
                row = &r;
        const StoredRequest stored = readStoredRequest(*conn, schema, key);
        const auto items = readRedriveItems(*conn, schema, key);
        std::optional<FieldComparison> fields;
        {
            pqxx::read_transaction t(*conn);
            fields = readFieldComparison(t, schema, key);
            t.commit();
        }
        if (args.flag("json")) {
            nlohmann::json j = { { "schema", schema.name() }, { "key", key },
                { "task", row ? rowJson(*row) : nlohmann::json(nullptr) },
                { "stored_request",
                    { { "stored", stored.stored }, { "bytes", stored.stored ? nlohmann::json(stored.bytes) : nlohmann::json(nullptr) },
                        { "stored_at", stored.storedAt.empty() ? nlohmann::json(nullptr) : nlohmann::json(stored.storedAt) },
                        { "request", stored.readable ? nlohmann::json::parse(stored.request) : nlohmann::json(nullptr) } } },
                { "re_executions", nlohmann::json::array() },
                { "fields", fields ? fieldComparisonJson(*fields) : nlohmann::json(nullptr) } };
            for (const auto& i : items) {
                const auto text = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
                j["re_executions"].push_back({ { "item_id", i.id }, { "state", i.state },
                    { "job_id", i.jobId ? nlohmann::json(*i.jobId) : nlohmann::json(nullptr) }, { "worker", text(i.worker) },
                    { "tries", i.tries }, { "requested_at", i.requestedAt }, { "requested_by", i.requestedBy },
                    { "taken_at", text(i.takenAt) }, { "lease_until", text(i.leaseUntil) },
                    { "not_before", text(i.notBefore) }, { "finished_at", text(i.finishedAt) },
                    { "detail", text(i.detail) },
                    { "audit_id", i.auditId ? nlohmann::json(*i.auditId) : nlohmann::json(nullptr) } });
            }
            std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
            return row ? ExitOk : ExitFailure;
        }
        if (!row) {
            std::printf("no task with key %s\n", displaySafe(key, 200).c_str());
        } else {
            std::printf("%s: %s, attempts %d/%d, updated %s (%lld)\n", displaySafe(key, 200).c_str(), row->status.c_str(),
                row->attempts, row->maxAttempts, formatMicros(row->updatedAtUs).c_str(),
                static_cast<long long>(row->updatedAtUs));
            if (!row->errorMessage.empty())
                std::printf("  error (%s): %s\n", row->errorClass.empty() ? "-" : row->errorClass.c_str(),
                    displaySafe(row->errorMessage, 400).c_str());
        }
        if (!stored.stored)
            std::printf("  request   none stored (its operation was not re-drivable when it was claimed)\n");
        else if (stored.readable)
            std::printf("  request   stored, %d bytes at %s: %s\n", stored.bytes, stored.storedAt.c_str(),
                displaySafe(stored.request, 2000).c_str());
        else
            std::printf("  request   stored, %d bytes at %s (its content needs the read_requests right: "
                        "GRANT idem_may_read_requests)\n",
                stored.bytes, stored.storedAt.c_str());
        if (fields)
            std::printf("  fields    %s\n", fieldComparisonText(*fields).c_str());
        if (items.empty())
            std::printf("  re-executions: none\n");
        for (const auto& i : items) {
            std::printf("  re-execution %lld: %s%s, requested by %s at %s", static_cast<long long>(i.id), i.state.c_str(),
                i.jobId ? (" (job " + std::to_string(*i.jobId) + ")").c_str() : "",
                displaySafe(i.requestedBy, 120).c_str(), i.requestedAt.c_str());
            if (!i.worker.empty())
                std::printf("; worker %s, tries %d", displaySafe(i.worker, 120).c_str(), i.tries);
            if (!i.finishedAt.empty())
                std::printf("; ended %s", i.finishedAt.c_str());
            else if (i.state == "running")
                std::printf("; lease until %s", i.leaseUntil.c_str());
            else if (!i.notBefore.empty())
                std::printf("; not before %s", i.notBefore.c_str());
            std::printf("\n");
            if (!i.detail.empty())
                std::printf("    %s\n", displaySafe(i.detail, 400).c_str());
        }
        return row ? ExitOk : ExitFailure;
    }

} // namespace

int runTasks(const std::vector<std::string>& argv)
{
    if (!argv.empty() && argv[0] == "show")
        return runTasksShow(argv);
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
