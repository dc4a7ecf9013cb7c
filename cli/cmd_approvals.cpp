// idemctl approvals: the one approval mechanism (schema v28, operations/approvals.h): requests of
// every gated kind, approved or declined by id, and the policy.
#include <cstdio>
#include <iostream>
#include <limits>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/approvals.h"
#include "operations/jobs.h"

namespace idem::cli {

namespace {

    constexpr const char* approvalsHelp = R"(Usage: idemctl approvals list [--all] [--limit N] [--json]
       idemctl approvals show ID [--json]
       idemctl approvals approve ID --spec SHA256 --reason TEXT [--actor A] [--json]
       idemctl approvals decline ID --reason TEXT [--actor A] [--json]
       idemctl approvals policy [--json]
       idemctl approvals policy KIND (--on [--over-rows N] | --off) [--ttl SECONDS] --reason TEXT [--actor A]
       idemctl approvals policy --budget N|off [--window SECONDS] --reason TEXT [--actor A]

A second person's approval, one mechanism for every gated kind of action (schema v28): a recovery
job over more rows than the policy allows ('job'), a retention change ('retention'), a manual purge
('purge'). With a kind gated (the schema owner's: approvals policy KIND --on), such an action is
not made directly: it becomes a request, with its exact spec and the spec's sha256, that waits for
another login holding the approve right (role idem_may_approve).

list     the requests waiting for approval, and those approved and not used or ended yet (--all:
         every request, newest first): id, kind, what, who asked, until when, the spec sha256.
show     one request in full, its spec included.
approve  approves request ID, naming its spec sha256 as list or show prints it: nothing else runs
         under that approval. Never the login that asked: not the same login, and neither login
         may be a member of the other (SET ROLE); a superuser is a member of every role. A job
         then runs (the console or idemctl job start that asked runs it; else idemctl job resume
         JOB); a change is used once by whoever has its right (idemctl retention apply --request
         ID --spec SHA256, idemctl purge --request ID --spec SHA256).
decline  turns down request ID while it waits for approval (the approve right, or the login that
         asked, withdrawing it); a job's request declined cancels the job, which never ran. An
         approved job that is running is not declined: its action's right cancels it (idemctl job
         cancel JOB).
policy   the gated kinds and the budget; with KIND, sets that kind's policy: --on (a job: only
         over --over-rows N rows; 0 or none: every job) or --off, and --ttl, how long a request
         stays approvable and its approval usable (60 to 604800 s, default 3600). With --budget,
         one login changes at most N task rows without an approval within any --window seconds,
         single actions (idemctl requeue, release, fail, --keys-from, the console's) and jobs
         together: past it a single action is refused (exit 3, SQLSTATE ID004) and a job waits
         for approval. A login is not a person: two logins of one person have a budget each.

Options:
  --all                  list: every request, not only the open ones
  --limit N              list: requests listed (1..1000, default 100)
  --spec SHA256          approve: the request's spec sha256 (64 lower-case hex digits)
  --reason TEXT          approve, decline, policy: why (mandatory; audited)
  --actor NAME           who is acting, for the audit (default: login@hostname)
  --on, --off            policy KIND: gate it, or not
  --over-rows N          policy job --on: only jobs acting on more than N rows wait (0..1000000)
  --ttl SECONDS          policy KIND: a request is approvable, its approval usable, this long
  --budget N|off         policy: one login changes at most N task rows without an approval
  --window SECONDS       policy --budget: the budget's window, 60 to 604800 (default 3600)
  --json                 one JSON document on standard output
  --dsn DSN              libpq conninfo, URI or service=NAME (default: $IDEM_DSN, then PG*)
  --schema S             schema holding the Idem tables (default: idem)

The database refuses with nothing changed (exit 3): SQLSTATE ID002 no such request or kind, ID004
a request not waiting (approved, used, declined), past its time, another spec, or an approver who
asked; 42501 without the right. `idemctl job pending`, `job approve` and `job policy`, where this
lived before, print where it moved.

Exit codes: 0 done, 1 failure, 2 usage error, 3 refused by the database (nothing changed).
)";

    std::string safe(const std::string& s, std::size_t n = 200) { return displaySafe(s, n); }
    nlohmann::json opt(const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
    nlohmann::json optTime(const std::optional<std::int64_t>& us)
    {
        return us ? nlohmann::json(formatMicros(*us)) : nlohmann::json(nullptr);
    }
    nlohmann::json optText(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }
    std::string dump(const nlohmann::json& j) { return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace); }

    int refused(const JobRefused& e, const char* what)
    {
        std::cerr << "idemctl approvals " << what << ": refused (SQLSTATE " << e.sqlstate
                  << "): " << displaySafe(e.what(), messageDisplay) << "\nnothing changed\n";
        return ExitRefused;
    }

    nlohmann::json requestJson(const ApprovalRequest& c)
    {
        auto spec = nlohmann::json::parse(c.specJson, nullptr, false);
        return { { "id", c.id }, { "kind", c.kind }, { "job_id", opt(c.jobId) }, { "state", c.state },
            { "job_state", optText(c.jobState) }, { "expired", c.expired() }, { "what", c.what() },
            { "spec", spec.is_discarded() ? nlohmann::json(c.specJson) : spec }, { "spec_sha256", c.specSha256 },
            { "requested_login", c.requestedLogin }, { "requested_role", c.requestedRole },
            { "requested_actor", c.requestedActor }, { "reason", c.requestedReason },
            { "requested_at", formatMicros(c.requestedAtUs) }, { "approvable_until", formatMicros(c.approvableUntilUs) },
            { "approved_login", optText(c.approvedLogin) }, { "approved_role", optText(c.approvedRole) },
            { "approved_at", optTime(c.approvedAtUs) }, { "approval_expires_at", optTime(c.approvalExpiresAtUs) },
            { "declined_login", optText(c.declinedLogin) }, { "declined_at", optTime(c.declinedAtUs) },
            { "declined_reason", optText(c.declinedReason) }, { "used_login", optText(c.usedLogin) },
            { "used_at", optTime(c.usedAtUs) } };
    }

    std::string stateWords(const ApprovalRequest& c)
    {
        if (c.state == "awaiting_approval")
            return c.expired() ? "its time for approval ended" : "waiting for approval";
        if (c.state == "approved") {
            if (c.jobId)
                return "approved; the job is " + c.jobState;
            return c.expired() ? "approved; the approval expired" : "approved, not used yet";
        }
        return c.state;
    }

    void printRequest(const ApprovalRequest& c, bool full)
    {
        std::printf("request %lld: %s (%s)\n", static_cast<long long>(c.id), safe(c.what(), 400).c_str(),
            stateWords(c).c_str());
        std::printf("  requested by %s (%s) at %s: %s\n", safe(c.requestedLogin, 64).c_str(),
            safe(c.requestedActor, 80).c_str(), formatMicros(c.requestedAtUs).c_str(), safe(c.requestedReason, 400).c_str());
        if (c.approvedAtUs)
            std::printf("  approved by %s (%s) at %s; usable until %s; spec sha256 %s\n", safe(c.approvedLogin, 64).c_str(),
                safe(c.approvedActor, 80).c_str(), formatMicros(*c.approvedAtUs).c_str(),
                c.approvalExpiresAtUs ? formatMicros(*c.approvalExpiresAtUs).c_str() : "?", c.specSha256.c_str());
        else if (c.declinedAtUs)
            std::printf("  declined by %s at %s: %s\n", safe(c.declinedLogin, 64).c_str(),
                formatMicros(*c.declinedAtUs).c_str(), safe(c.declinedReason, 400).c_str());
        else
            std::printf("  approvable until %s; spec sha256 %s\n", formatMicros(c.approvableUntilUs).c_str(),
                c.specSha256.c_str());
        if (full || c.kind != "job")
            std::printf("  spec %s\n", safe(c.specJson, full ? 4000 : 400).c_str());
    }

    std::int64_t requestId(const Args& args, const char* sub)
    {
        if (args.positional().size() != 1)
            throw UsageError(std::string("approvals ") + sub + " takes one request id (idemctl approvals list)");
        try {
            std::size_t used = 0;
            const auto id = std::stoll(args.positional()[0], &used);
            if (used == args.positional()[0].size() && id > 0)
                return id;
        } catch (const std::exception&) {
        }
        throw UsageError("a request id is a positive number, not '" + args.positional()[0] + "'");
    }

    std::string requiredReason(const Args& args, std::string& actor)
    {
        if (!args.value("reason"))
            throw UsageError("--reason is required (it goes into the audit trail)");
        const std::string reason = *args.value("reason");
        actor = args.valueOr("actor", localActor());
        validateReasonAndActor(reason, actor);
        return reason;
    }

    int list(const std::vector<std::string>& argv)
    {
        Args args(argv, { "dsn", "schema", "limit" }, { "help", "json", "all" });
        if (args.flag("help")) {
            std::cout << approvalsHelp;
            return ExitOk;
        }
        if (!args.positional().empty())
            throw UsageError("approvals list takes no id (approvals show ID shows one)");
        const int limit = static_cast<int>(args.intValue("limit", 100, 1, 1000));
        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl approvals" });
        const auto requests = listApprovalRequests(*conn, schema, args.flag("all"), limit);
        if (args.flag("json")) {
            nlohmann::json j = { { "schema", schema.name() }, { "requests", nlohmann::json::array() } };
            for (const auto& c : requests)
                j["requests"].push_back(requestJson(c));
            std::cout << dump(j) << '\n';
            return ExitOk;
        }
        if (requests.empty())
            std::printf("nothing is waiting for approval\n");
        for (const auto& c : requests)
            printRequest(c, false);
        return ExitOk;
    }

    int show(const std::vector<std::string>& argv)
    {
        Args args(argv, { "dsn", "schema" }, { "help", "json" });
        if (args.flag("help")) {
            std::cout << approvalsHelp;
            return ExitOk;
        }
        const auto id = requestId(args, "show");
        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl approvals" });
        const auto c = readApprovalRequest(*conn, schema, id);
        if (!c) {
            std::cerr << "idemctl approvals show: there is no request " << id << "\n";
            return ExitRefused;
        }
        if (args.flag("json"))
            std::cout << dump(requestJson(*c)) << '\n';
        else
            printRequest(*c, true);
        return ExitOk;
    }

    int approve(const std::vector<std::string>& argv)
    {
        Args args(argv, { "dsn", "schema", "spec", "reason", "actor" }, { "help", "json" });
        if (args.flag("help")) {
            std::cout << approvalsHelp;
            return ExitOk;
        }
        const auto id = requestId(args, "approve");
        if (!args.value("spec"))
            throw UsageError("--spec is required: the request's spec sha256 as `idemctl approvals show ID` prints it (an "
                             "approval names the exact action it approves)");
        const std::string spec = *args.value("spec");
        if (!isSpecSha256(spec))
            throw UsageError("--spec is the request's spec sha256: 64 lower-case hex digits");
        std::string actor;
        const std::string reason = requiredReason(args, actor);
        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl approvals" });
        ApprovalDecision a;
        try {
            a = approveRequest(*conn, schema, id, spec, reason, actor);
        } catch (const JobRefused& e) {
            return refused(e, "approve");
        }
        const auto c = readApprovalRequest(*conn, schema, id);
        if (args.flag("json")) {
            std::cout << dump({ { "audit_id", a.auditId }, { "approved_at", formatMicros(a.atUs) },
                                  { "expires_at", optTime(a.expiresAtUs) },
                                  { "request", c ? requestJson(*c) : nlohmann::json(nullptr) } })
                      << '\n';
            return ExitOk;
        }
        const std::string until = a.expiresAtUs ? formatMicros(*a.expiresAtUs) : std::string("?");
        if (a.jobId)
            std::printf("request %lld approved: job %lld may start or resume until %s (the console or idemctl that "
                        "started it runs it now; else `idemctl job resume %lld`); audit entry %lld\n",
                static_cast<long long>(id), static_cast<long long>(*a.jobId), until.c_str(),
                static_cast<long long>(*a.jobId), static_cast<long long>(a.auditId));
        else if (a.kind == "retention" || a.kind == "purge")
            std::printf("request %lld approved: %s; it may be used once until %s (`idemctl %s --request %lld --spec "
                        "%s`); audit entry %lld\n",
                static_cast<long long>(id), c ? safe(c->what(), 200).c_str() : "?", until.c_str(),
                a.kind == "purge" ? "purge" : "retention apply", static_cast<long long>(id), spec.c_str(),
                static_cast<long long>(a.auditId));
        else
            std::printf("request %lld approved: %s; it may be used once until %s; audit entry %lld\n",
                static_cast<long long>(id), c ? safe(c->what(), 200).c_str() : "?", until.c_str(),
                static_cast<long long>(a.auditId));
        return ExitOk;
    }

    int decline(const std::vector<std::string>& argv)
    {
        Args args(argv, { "dsn", "schema", "reason", "actor" }, { "help", "json" });
        if (args.flag("help")) {
            std::cout << approvalsHelp;
            return ExitOk;
        }
        const auto id = requestId(args, "decline");
        std::string actor;
        const std::string reason = requiredReason(args, actor);
        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl approvals" });
        ApprovalDecision d;
        try {
            d = declineRequest(*conn, schema, id, reason, actor);
        } catch (const JobRefused& e) {
            return refused(e, "decline");
        }
        if (args.flag("json")) {
            const auto c = readApprovalRequest(*conn, schema, id);
            std::cout << dump({ { "audit_id", d.auditId }, { "declined_at", formatMicros(d.atUs) },
                                  { "request", c ? requestJson(*c) : nlohmann::json(nullptr) } })
                      << '\n';
            return ExitOk;
        }
        if (d.jobId)
            std::printf("request %lld declined: job %lld is cancelled, nothing of it ran; audit entry %lld\n",
                static_cast<long long>(id), static_cast<long long>(*d.jobId), static_cast<long long>(d.auditId));
        else
            std::printf("request %lld declined: it can no longer be approved or used; audit entry %lld\n",
                static_cast<long long>(id), static_cast<long long>(d.auditId));
        return ExitOk;
    }

    void printPolicy(const std::vector<ApprovalKind>& kinds, const ApprovalBudget& b)
    {
        for (const auto& k : kinds) {
            if (!k.gated)
                std::printf("%s: off (%s is made directly)\n", k.kind.c_str(), safe(k.what, 200).c_str());
            else if (k.kind == "job")
                std::printf("job: a recovery job acting on more than %lld row(s) waits for another login's approval; "
                            "requests and approvals last %d s\n",
                    static_cast<long long>(k.overRows.value_or(0)), k.ttlSeconds);
            else
                std::printf("%s: needs approval (%s); requests and approvals last %d s\n", k.kind.c_str(),
                    safe(k.what, 200).c_str(), k.ttlSeconds);
        }
        if (b.budgetRows)
            std::printf("budget: one login changes at most %lld task row(s) without another login's approval in any "
                        "%d s, single actions (requeue, release, fail, --keys-from, the console's) and jobs together; "
                        "past it a single action is refused and a job waits for approval\n",
                static_cast<long long>(*b.budgetRows), b.budgetWindowSeconds);
        else
            std::printf("budget: none (approvals policy --budget N --window SECONDS bounds what one login changes "
                        "without an approval)\n");
    }

    nlohmann::json policyJson(const SchemaName& schema, const std::vector<ApprovalKind>& kinds, const ApprovalBudget& b,
        std::optional<std::int64_t> auditId)
    {
        nlohmann::json j = { { "schema", schema.name() }, { "kinds", nlohmann::json::array() },
            { "budget_rows", opt(b.budgetRows) }, { "budget_window_seconds", b.budgetWindowSeconds },
            { "audit_id", opt(auditId) } };
        for (const auto& k : kinds)
            j["kinds"].push_back({ { "kind", k.kind }, { "gated", k.gated }, { "over_rows", opt(k.overRows) },
                { "ttl_seconds", k.ttlSeconds }, { "what", k.what }, { "updated_by", optText(k.updatedBy) },
                { "updated_at", optTime(k.updatedAtUs) } });
        return j;
    }

    int policy(const std::vector<std::string>& argv)
    {
        Args args(argv, { "dsn", "schema", "over-rows", "ttl", "reason", "actor", "budget", "window" },
            { "help", "json", "on", "off" });
        if (args.flag("help")) {
            std::cout << approvalsHelp;
            return ExitOk;
        }
        const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
        const bool budget = args.value("budget") || args.value("window");
        const bool kindChange = !args.positional().empty();
        if (args.positional().size() > 1)
            throw UsageError("approvals policy takes one kind at a time");
        if (budget && kindChange)
            throw UsageError("--budget and --window go without a kind (set a kind's policy in a command of its own)");
        if (!budget && !kindChange
            && (args.flag("on") || args.flag("off") || args.value("over-rows") || args.value("ttl") || args.value("reason")))
            throw UsageError("--on, --off, --over-rows, --ttl and --reason go with a kind: approvals policy KIND ...");
        std::optional<std::int64_t> auditId;
        std::string actor;
        if (budget) {
            if (args.flag("on") || args.flag("off") || args.value("over-rows") || args.value("ttl"))
                throw UsageError("--budget and --window go without --on, --off, --over-rows and --ttl");
            if (!args.value("budget"))
                throw UsageError("--window goes with --budget N (or --budget off)");
            const std::string reason = requiredReason(args, actor);
            std::optional<std::int64_t> rows;
            if (*args.value("budget") != "off")
                rows = args.intValue("budget", 0, 0, ApprovalLimits::maxJobRows);
            const int window = static_cast<int>(
                args.intValue("window", 3600, ApprovalLimits::minTtlSeconds, ApprovalLimits::maxTtlSeconds));
            auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl approvals" });
            try {
                auditId = setApprovalBudget(*conn, schema, rows, window, reason, actor);
            } catch (const JobRefused& e) {
                return refused(e, "policy");
            }
            const auto kinds = readApprovalKinds(*conn, schema);
            const auto b = readApprovalBudget(*conn, schema);
            if (args.flag("json"))
                std::cout << dump(policyJson(schema, kinds, b, auditId)) << '\n';
            else {
                printPolicy(kinds, b);
                std::printf("audit entry %lld\n", static_cast<long long>(*auditId));
            }
            return ExitOk;
        }
        auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl approvals" });
        if (kindChange) {
            const std::string kind = args.positional()[0];
            if (args.flag("on") == args.flag("off"))
                throw UsageError("approvals policy " + kind + " needs --on or --off");
            if (args.value("over-rows") && args.flag("off"))
                throw UsageError("--over-rows goes with --on");
            const std::string reason = requiredReason(args, actor);
            std::optional<std::int64_t> overRows;
            if (args.value("over-rows"))
                overRows = args.intValue("over-rows", 0, 0, ApprovalLimits::maxJobRows);
            // Unless --ttl says otherwise, the kind keeps its time to live.
            int ttl = 3600;
            for (const auto& k : readApprovalKinds(*conn, schema))
                if (k.kind == kind)
                    ttl = k.ttlSeconds;
            ttl = static_cast<int>(args.intValue("ttl", ttl, ApprovalLimits::minTtlSeconds, ApprovalLimits::maxTtlSeconds));
            try {
                auditId = setApprovalKindPolicy(*conn, schema, kind, args.flag("on"), overRows, ttl, reason, actor);
            } catch (const JobRefused& e) {
                return refused(e, "policy");
            }
        }
        const auto kinds = readApprovalKinds(*conn, schema);
        const auto b = readApprovalBudget(*conn, schema);
        if (args.flag("json")) {
            std::cout << dump(policyJson(schema, kinds, b, auditId)) << '\n';
            return ExitOk;
        }
        printPolicy(kinds, b);
        if (auditId)
            std::printf("audit entry %lld\n", static_cast<long long>(*auditId));
        return ExitOk;
    }

} // namespace

int runApprovals(const std::vector<std::string>& argv)
{
    if (argv.empty())
        throw UsageError("name a subcommand: list, show, approve, decline or policy");
    const std::vector<std::string> rest(argv.begin() + 1, argv.end());
    if (argv[0] == "list")
        return list(rest);
    if (argv[0] == "show")
        return show(rest);
    if (argv[0] == "approve")
        return approve(rest);
    if (argv[0] == "decline")
        return decline(rest);
    if (argv[0] == "policy")
        return policy(rest);
    if (argv[0] == "--help" || argv[0] == "-h") {
        std::cout << approvalsHelp;
        return ExitOk;
    }
    throw UsageError("unknown approvals subcommand '" + argv[0] + "' (list, show, approve, decline or policy)");
}

} // namespace idem::cli
