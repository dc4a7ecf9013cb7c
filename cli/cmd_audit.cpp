#include <iostream>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/auditstate.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/audit.h"

namespace idem::cli {

namespace {

    constexpr const char* auditHelp = R"(Usage: idemctl audit list [--key K] [--actor A] [--action ACTION]
                          [--since TIME] [--until TIME] [--limit N] [--before ID | --after ID]
                          [--oldest-first] [--images] [--json]
       idemctl audit verify [--expect-head ID:HASH | --state FILE] [--json]

The audit trail of recovery actions (task_idempotency_audit): one entry per applied requeue,
release or fail, with actor, reason and the row before and after; one per retention policy
change (action retention), one per purge run (action purge), one per pause set, changed or
lifted (actions pause and resume), one per annotation (annotate) and two per recovery job (action
job: its start, and its finish or cancel), with an empty key; the entries of the rows a job
changed carry its id ("job_id") in their after image. ACTION is requeue, release, fail,
retention, purge, pause, resume, annotate or job.

list     newest first, one page (--limit, default 50); --before ID continues with older entries
         (the smallest id shown), --oldest-first with --after ID pages forward. TIME is anything
         PostgreSQL reads as timestamptz ('2024-05-01 10:00+02', 'yesterday').
         --actor matches the database role or the OS user exactly. --images prints the before
         and after images in the text output (--json always has them).
verify   recomputes every entry's SHA-256 and its link to the previous entry here, with OpenSSL,
         from the raw column values, independently of the database's own functions; names the
         first broken entry (edited, deleted, reordered). The newest entries' removal cannot be
         seen from inside a hash chain: record the head it prints and pass it back later with
         --expect-head ID:HASH, or let --state FILE do that: it keeps the head each successful
         verify saw (written atomically, mode 0600) and fails (exit 1) when the trail no longer
         holds that entry with that hash, a truncation whose new entries brought the id back
         included. A failed verify leaves the file as it was; a damaged one is refused.

  --dsn DSN      libpq conninfo, URI or service=NAME (default: $IDEM_DSN, then PG*); idem_reader suffices
  --schema S     schema holding the Idem tables (default: idem)

Exit codes: 0 ok, 1 failure or (verify) a broken chain, 2 usage error.
)";

    std::optional<std::int64_t> timeArg(pqxx::connection& conn, const Args& args, const std::string& name)
    {
        const auto v = args.value(name);
        if (!v)
            return std::nullopt;
        pqxx::read_transaction t(conn);
        try {
            const auto r = t.exec_params("SELECT " + updatedAtMicrosSql("$1::timestamptz"), *v);
            return r[0][0].as<std::int64_t>();
        } catch (const pqxx::data_exception&) {
            throw UsageError("--" + name + " '" + *v + "' is not a time PostgreSQL understands");
        }
    }

    nlohmann::json entryJson(const AuditEntry& e)
    {
        return { { "id", e.id }, { "at", formatMicros(e.atUs) }, { "at_us", e.atUs }, { "key", e.key },
            { "action", e.action }, { "reason", e.reason }, { "db_role", e.dbRole }, { "os_user", e.osUser },
            { "client_host", e.clientHost }, { "application", e.application },
            { "before", nlohmann::json::parse(e.beforeImage) }, { "after", nlohmann::json::parse(e.afterImage) },
            { "prev_hash", e.prevHash }, { "entry_hash", e.entryHash } };
    }

    std::string imageStatus(const std::string& image)
    {
        const auto j = nlohmann::json::parse(image);
        return j.contains("status") && j["status"].is_string() ? displaySafe(j["status"].get<std::string>(), 40) : "?";
    }

    // A retention change, purge run, pause or annotation has no task row: say what it changed instead.
    std::string changeSummary(const AuditEntry& e)
    {
        const auto before = nlohmann::json::parse(e.beforeImage);
        const auto after = nlohmann::json::parse(e.afterImage);
        const auto horizon = [](const nlohmann::json& j) {
            return j.contains("policy") && j["policy"].is_object()
                ? std::to_string(j["policy"].value("horizon_seconds", std::int64_t(0))) + " s"
                : std::string("(none)");
        };
        if (e.action == "pause" || e.action == "resume") {
            const auto scope = displaySafe(after.value("tenant", std::string("?")), 70) + ":"
                + displaySafe(after.value("operation", std::string("?")), 70);
            const auto until = [](const nlohmann::json& j) -> std::string {
                if (!j.contains("pause") || !j["pause"].is_object())
                    return "not paused";
                const auto& u = j["pause"]["until"];
                return u.is_string() ? "paused until " + displaySafe(u.get<std::string>(), 40) : "paused until resumed";
            };
            return "scope " + scope + ": " + until(before) + " -> " + until(after);
        }
        if (e.action == "annotate")
            return "annotation for " + displaySafe(after.value("tenant", std::string("?")), 70) + ":"
                + displaySafe(after.value("operation", std::string("?")), 70);
        if (e.action == "job") {
            const auto refused = after.contains("refused") && after["refused"].is_object()
                ? after["refused"].value("moved_on", std::int64_t(0)) + after["refused"].value("busy", std::int64_t(0))
                    + after["refused"].value("gone", std::int64_t(0))
                : std::int64_t(0);
            return "job " + std::to_string(after.value("job_id", std::int64_t(0))) + " "
                + displaySafe(after.value("event", std::string("?")), 20) + ": "
                + displaySafe(after.value("action", std::string("?")), 20) + ", "
                + std::to_string(after.value("matched", std::int64_t(0))) + " matched, "
                + std::to_string(after.value("changed", std::int64_t(0))) + " changed, " + std::to_string(refused)
                + " refused";
        }
        if (e.action == "approve")
            return "job " + std::to_string(after.value("job_id", std::int64_t(0))) + " approved: "
                + displaySafe(after.value("action", std::string("?")), 20) + " of "
                + std::to_string(after.value("matched", std::int64_t(0))) + " matched, spec "
                + displaySafe(after.value("spec_sha256", std::string("?")), 64);
        if (e.action == "approval_policy") {
            const auto rows = [](const nlohmann::json& j) {
                std::string out = j.contains("job_rows") && j["job_rows"].is_number_integer()
                    ? "jobs over " + std::to_string(j["job_rows"].get<std::int64_t>()) + " rows need approval"
                    : std::string("no approval");
                // Schema v22: the switches for retention changes and manual purges.
                if (j.value("retention_changes_need_approval", false))
                    out += ", retention changes need approval";
                if (j.value("manual_purges_need_approval", false))
                    out += ", manual purges need approval";
                return out;
            };
            return rows(before) + " -> " + rows(after);
        }
        if (e.action == "change_request" || e.action == "change_approve" || e.action == "change_use")
            return "change request " + std::to_string(after.value("request_id", std::int64_t(0))) + " "
                + displaySafe(after.value("event", std::string("?")), 20) + ": "
                + displaySafe(after.contains("spec") ? after["spec"].dump() : std::string("?"), 200) + ", spec "
                + displaySafe(after.value("spec_sha256", std::string("?")), 64);
        if (e.action == "retention")
            return "operation " + displaySafe(after.value("operation", std::string("?")), 120) + ": " + horizon(before)
                + " -> " + horizon(after);
        return "run " + std::to_string(after.value("run", std::int64_t(0))) + " "
            + displaySafe(after.value("state", std::string("?")), 40) + ": "
            + std::to_string(after.value("rows_removed", std::int64_t(0))) + " rows removed in "
            + std::to_string(after.value("batches", std::int64_t(0))) + " batches";
    }

    int runAuditList(const std::vector<std::string>& argv)
    {
        Args args(argv, { "dsn", "schema", "key", "actor", "action", "since", "until", "limit", "before", "after" },
            { "oldest-first", "images", "json", "help" });
        if (args.flag("help")) {
            std::cout << auditHelp;
            return ExitOk;
        }
        if (!args.positional().empty())
            throw UsageError("unexpected argument '" + args.positional().front() + "'");
        if (args.value("before") && args.value("after"))
            throw UsageError("--before and --after exclude each other");
        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
        AuditFilter f;
        f.key = args.value("key");
        f.actor = args.value("actor");
        f.action = args.value("action");
        f.limit = static_cast<int>(args.intValue("limit", 50, 1, 10000));
        f.oldestFirst = args.flag("oldest-first");
        if (args.value("before"))
            f.beforeId = args.intValue("before", 0, 1, std::numeric_limits<long long>::max());
        if (args.value("after"))
            f.afterId = args.intValue("after", 0, 0, std::numeric_limits<long long>::max());
        if (f.action && !isAuditAction(*f.action))
            throw UsageError("--action must be one of " + auditActionList());

        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl audit" });
        f.sinceUs = timeArg(*conn, args, "since");
        f.untilUs = timeArg(*conn, args, "until");
        const auto entries = listAudit(*conn, schema, f);

        if (args.flag("json")) {
            nlohmann::json j = { { "schema", schema.name() }, { "entries", nlohmann::json::array() } };
            for (const auto& e : entries)
                j["entries"].push_back(entryJson(e));
            std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
            return ExitOk;
        }
        for (const auto& e : entries) {
            std::cout << '#' << e.id << "  " << formatMicros(e.atUs) << "  " << displaySafe(e.action, 40) << "  "
                      << (e.key.empty() ? changeSummary(e)
                                        : displaySafe(e.key, 120) + "  " + imageStatus(e.beforeImage) + " -> "
                                     + imageStatus(e.afterImage))
                      << "\n    by " << displaySafe(e.dbRole, 200) << " (" << displaySafe(e.osUser, 200) << ", "
                      << displaySafe(e.application, 200) << ", from " << displaySafe(e.clientHost, 200)
                      << ")\n    reason: " << displaySafe(e.reason, 400) << '\n';
            if (args.flag("images"))
                std::cout << "    before: " << displaySafe(e.beforeImage, 100000)
                          << "\n    after:  " << displaySafe(e.afterImage, 100000) << '\n';
        }
        if (entries.empty())
            std::cout << "no audit entries match\n";
        else if (static_cast<int>(entries.size()) == f.limit)
            std::cout << "(more: --" << (f.oldestFirst ? "after " : "before ") << entries.back().id << ")\n";
        return ExitOk;
    }

    int runAuditVerify(const std::vector<std::string>& argv)
    {
        Args args(argv, { "dsn", "schema", "expect-head", "state" }, { "json", "help" });
        if (args.flag("help")) {
            std::cout << auditHelp;
            return ExitOk;
        }
        if (!args.positional().empty())
            throw UsageError("unexpected argument '" + args.positional().front() + "'");
        std::optional<ChainHead> head;
        if (auto v = args.value("expect-head")) {
            const auto colon = v->find(':');
            std::size_t used = 0;
            long long id = 0;
            try {
                id = colon == std::string::npos ? 0 : std::stoll(v->substr(0, colon), &used);
            } catch (const std::exception&) {
                used = 0;
            }
            const std::string hash = colon == std::string::npos ? std::string() : v->substr(colon + 1);
            if (used == 0 || used != colon || id < 1 || hash.size() != 64)
                throw UsageError("--expect-head takes ID:HASH as verify printed it, not '" + *v + "'");
            head = ChainHead { id, hash };
        }
        const auto statePath = args.value("state");
        if (statePath && head)
            throw UsageError("--state and --expect-head exclude each other (the state file holds the head)");
        if (statePath && statePath->empty())
            throw UsageError("--state takes a file name");
        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
        // Read before connecting: a damaged state file is refused without touching anything.
        std::optional<AuditState> saved;
        if (statePath)
            saved = loadAuditState(*statePath);
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl audit" });
        std::string database;
        {
            pqxx::read_transaction t(*conn);
            database = displaySafe(t.exec("SELECT current_database()")[0][0].as<std::string>());
        }
        if (saved && (saved->database != database || saved->schema != schema.name()))
            throw AuditStateError("the state file " + displaySafe(*statePath, 400) + " is for schema " + saved->schema
                + " of database " + saved->database + ", not schema " + schema.name() + " of database " + database
                + "; give each trail its own file");
        if (saved)
            head = saved->head;
        const auto rep = verifyChain(*conn, schema, head);
        std::string stateLine;
        if (statePath && rep.ok()) {
            pqxx::read_transaction t(*conn);
            const auto now = t.exec("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')")[0][0]
                                 .as<std::string>();
            t.commit();
            saveAuditState(*statePath, { database, schema.name(), rep.head, now });
            stateLine = "state: " + displaySafe(*statePath, 400) + (saved ? " updated" : " created") + ", head "
                + (rep.head ? std::to_string(rep.head->id) : std::string("none (empty trail)"));
        } else if (statePath) {
            stateLine = "state: " + displaySafe(*statePath, 400) + " kept as it was"
                + (saved && saved->head ? " (entry " + std::to_string(saved->head->id) + ":" + saved->head->hash
                            + ", verified " + saved->verifiedAt + ")"
                                        : std::string());
        }

        if (args.flag("json")) {
            nlohmann::json j = { { "schema", schema.name() }, { "ok", rep.ok() }, { "checked", rep.checked },
                { "broken_by", chainBreakName(rep.brokenBy) },
                { "first_broken_id", rep.firstBrokenId ? nlohmann::json(*rep.firstBrokenId) : nlohmann::json(nullptr) },
                { "detail", rep.detail },
                { "head",
                    rep.head ? nlohmann::json { { "id", rep.head->id }, { "hash", rep.head->hash } }
                             : nlohmann::json(nullptr) } };
            if (statePath)
                j["state"] = { { "file", *statePath }, { "updated", rep.ok() } };
            std::cout << j.dump(2) << '\n';
        } else if (rep.ok()) {
            std::cout << "ok: " << rep.detail << '\n';
            if (rep.head)
                std::cout << "head: " << rep.head->id << ':' << rep.head->hash << '\n';
        } else {
            std::cout << "BROKEN at entry " << *rep.firstBrokenId << " (" << chainBreakName(rep.brokenBy)
                      << "): " << rep.detail << "\n(" << rep.checked << " entries before it verified)\n";
        }
        if (!stateLine.empty() && !args.flag("json"))
            std::cout << stateLine << '\n';
        return rep.ok() ? ExitOk : ExitFailure;
    }

} // namespace

int runAudit(const std::vector<std::string>& argv)
{
    if (argv.empty())
        throw UsageError("name a subcommand: list or verify");
    const std::vector<std::string> rest(argv.begin() + 1, argv.end());
    if (argv[0] == "list")
        return runAuditList(rest);
    if (argv[0] == "verify")
        return runAuditVerify(rest);
    if (argv[0] == "--help" || argv[0] == "-h") {
        std::cout << auditHelp;
        return ExitOk;
    }
    throw UsageError("unknown audit subcommand '" + argv[0] + "' (list or verify)");
}

} // namespace idem::cli
