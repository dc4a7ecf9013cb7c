// idemctl pause | resume | pauses: the intake lever (schema v15, operations/pauses.h).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/pauses.h"
#include "operations/pauseramp.h"

namespace idem::cli {

// A ramp as idemctl pauses writes it (cmd_ramp.cpp).
nlohmann::json rampJson(const Ramp& r);
std::string rampText(const Ramp& r);

namespace {

    constexpr const char* pauseHelp = R"(Usage: idemctl pause [--tenant T] [--operation O] --reason TEXT [--for LENGTH | --until TIME]
                     [--actor NAME] [--json] [--dsn DSN] [--schema S]

       idemctl pause forecast [--tenant T] [--operation O] [--minutes N] [--cap N] [--json]  (see its --help)

Stops intake for a tenant, an operation or both ('*' for all; at least one of --tenant and
--operation is required, the other is then '*'): from the moment this commits, claim() neither
acquires nor takes over a key of that scope and answers 'paused', so no attempt is spent while a
downstream is broken. Replays of succeeded keys and conflict answers go on as before. Executors
that already hold a lease are not stopped: they finish (or fail) their attempt normally.

Pausing a scope that is paused already changes its reason and end. Names no traffic has used
yet are allowed (a pause may precede traffic); `idemctl pauses` shows such a pause as matching
nothing yet. One audit entry (action pause). Needs idem_operator.

  --for LENGTH   ends the pause after LENGTH by the server's clock: Ns, Nm, Nh or Nd (1s to 365d)
  --until TIME   ends it at TIME (anything PostgreSQL reads as timestamptz, e.g. '2024-05-01
                 10:00+02'), which must be in the future by the server's clock
                 without either, the pause lasts until `idemctl resume`
)";

    constexpr const char* resumeHelp = R"(Usage: idemctl resume [--tenant T] [--operation O] --reason TEXT [--actor NAME] [--json]
                      [--dsn DSN] [--schema S]
       idemctl resume ... --ramp P1,...,100 [--step-minutes M | --step-seconds S] [--abort-above RATE]
                      [--abort-min N]  (see idemctl resume --ramp --help)

Lifts the pause of exactly this scope, as it was set ('*' included; at least one of --tenant
and --operation, the other is then '*'), in force or expired. Claims of the scope acquire again
from the moment this commits, unless another pause still covers them: the output names those.
One audit entry (action resume). Exit code 3 when there is no such pause (nothing changed).
Needs idem_operator. With --ramp, resumes in steps instead: idemctl resume --ramp --help.
)";

    constexpr const char* pausesHelp
        = R"(Usage: idemctl pauses [--minutes N] [--history HOURS] [--json] [--dsn DSN] [--schema S]

Every pause, in force first, then expired ones (an expired pause stays listed until it is lifted
or set again): scope, reason, who, since, until when and how long is left by the server's clock,
how many claims it turned away over the last N minutes (default 15, 1 to 1440; from the outcome
counters workers flush every second), and whether any traffic of its scope was counted in those
minutes at all ("matches nothing yet" otherwise: a pause that precedes traffic, or a typo).
With --history HOURS (1 to 8760), also the pauses lifted in the last HOURS hours, newest first
(at most 200), from the audit trail: scope, the pause's reason, who and since when, and when,
by whom and why it was lifted (--json: an array "ended").
Exit code 0; with --json, an object with server_now and pauses. Needs idem_reader.
)";

    // Ns, Nm, Nh or Nd.
    std::int64_t parseLength(const std::string& s)
    {
        std::size_t used = 0;
        long long n = 0;
        try {
            n = std::stoll(s, &used);
        } catch (const std::exception&) {
            throw UsageError("--for must be Ns, Nm, Nh or Nd, not '" + s + "'");
        }
        const std::string unit = s.substr(used);
        const long long scale = unit == "s" ? 1000LL : unit == "m" ? 60000LL : unit == "h" ? 3600000LL
            : unit == "d"                                                                  ? 86400000LL
                                                                                           : 0;
        if (n <= 0 || scale == 0)
            throw UsageError("--for must be a positive Ns, Nm, Nh or Nd, not '" + s + "'");
        if (n > PauseRequest::maxLengthMs / scale)
            throw UsageError("--for is more than 365 days: '" + s + "'");
        return n * scale;
    }

    std::pair<std::string, std::string> scopeFrom(const Args& args, const char* verb)
    {
        const auto tenant = args.value("tenant");
        const auto operation = args.value("operation");
        if (!tenant && !operation)
            throw UsageError(std::string(verb) + " needs --tenant, --operation or both ('*' for all: "
                + verb + " --tenant '*' --operation '*' covers everything)");
        return { tenant.value_or("*"), operation.value_or("*") };
    }

    nlohmann::json optionalMicros(const std::optional<std::int64_t>& us)
    {
        return us ? nlohmann::json(formatMicros(*us)) : nlohmann::json(nullptr);
    }

    std::string untilText(const std::optional<std::int64_t>& untilUs)
    {
        return untilUs ? formatMicros(*untilUs) : std::string("resumed");
    }

    nlohmann::json pauseJson(const Pause& p)
    {
        return { { "tenant", p.tenant }, { "operation", p.operation }, { "reason", p.reason },
            { "paused_by", p.pausedBy }, { "paused_at", formatMicros(p.pausedAtUs) },
            { "changed_at", formatMicros(p.changedAtUs) }, { "until", optionalMicros(p.untilUs) },
            { "active", p.active },
            { "remaining_ms", p.remainingMs ? nlohmann::json(*p.remainingMs) : nlohmann::json(nullptr) },
            { "turned_away", p.turnedAway }, { "seen", p.seen }, { "audit_id", p.auditId },
            { "ramp", p.ramp ? rampJson(*p.ramp) : nlohmann::json(nullptr) },
            { "ramp_aborted_at", optionalMicros(p.rampAbortedAtUs) } };
    }

    std::string safe(const std::string& s, std::size_t n = 200) { return displaySafe(s, n); }

} // namespace

int runPause(const std::vector<std::string>& argv)
{
    if (!argv.empty() && argv[0] == "forecast")
        return runPauseForecast(std::vector<std::string>(argv.begin() + 1, argv.end()));
    Args args(argv, { "dsn", "schema", "tenant", "operation", "reason", "actor", "for", "until" }, { "json", "help" });
    if (args.flag("help")) {
        std::cout << pauseHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("pause takes no positional argument");
    PauseRequest r;
    std::tie(r.tenant, r.operation) = scopeFrom(args, "pause");
    const auto reason = args.value("reason");
    if (!reason)
        throw UsageError("--reason is required (it goes into the audit trail and the console's banner)");
    r.reason = *reason;
    r.actor = args.valueOr("actor", localActor());
    if (args.value("for") && args.value("until"))
        throw UsageError("give --for or --until, not both");
    if (const auto f = args.value("for"))
        r.lengthMs = parseLength(*f);
    validatePauseRequest(r);
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl pause" });
    if (const auto u = args.value("until")) {
        pqxx::read_transaction t(*conn);
        t.exec("SELECT pg_catalog.set_config('search_path', 'pg_catalog', true)"); // no shadow on the caller's path
        try {
            r.endUs = t.exec_params("SELECT " + updatedAtMicrosSql("$1::timestamptz"), *u)[0][0].as<std::int64_t>();
        } catch (const pqxx::data_exception&) {
            throw UsageError("--until '" + *u + "' is not a time PostgreSQL understands");
        }
        t.commit();
    }
    PauseChange c;
    try {
        c = setPause(*conn, schema, r);
    } catch (const pqxx::sql_error& e) {
        if (!isIdemRefusal(e.sqlstate()))
            throw;
        std::cerr << "idemctl pause: refused (SQLSTATE " << e.sqlstate()
                  << "): " << displaySafe(serverWords(e), messageDisplay) << "\nnothing changed\n";
        return ExitRefused;
    }
    if (args.flag("json")) {
        std::cout << nlohmann::json({ { "schema", schema.name() }, { "audit_id", c.auditId },
                                        { "was_paused", c.wasPaused },
                                        { "previous_until", optionalMicros(c.previousUntilUs) },
                                        { "pause", pauseJson(c.pause) } })
                         .dump(2)
                  << '\n';
        return ExitOk;
    }
    std::printf("%s %s:%s until %s%s (audit entry %lld)\n", c.wasPaused ? "changed the pause of" : "paused",
        safe(c.pause.tenant, 70).c_str(), safe(c.pause.operation, 70).c_str(), untilText(c.pause.untilUs).c_str(),
        c.pause.remainingMs ? (" (" + formatPauseLength(*c.pause.remainingMs) + " from now)").c_str() : "",
        static_cast<long long>(c.auditId));
    std::printf("claims of this scope now answer 'paused'; executors holding a lease finish their attempt\n");
    return ExitOk;
}

int runResume(const std::vector<std::string>& argv)
{
    for (const auto& a : argv)
        if (a == "--ramp" || a.rfind("--ramp=", 0) == 0)
            return runResumeRamp(argv);
    Args args(argv, { "dsn", "schema", "tenant", "operation", "reason", "actor" }, { "json", "help" });
    if (args.flag("help")) {
        std::cout << resumeHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("resume takes no positional argument");
    const auto [tenant, operation] = scopeFrom(args, "resume");
    const auto reason = args.value("reason");
    if (!reason)
        throw UsageError("--reason is required (it goes into the audit trail)");
    const auto actor = args.valueOr("actor", localActor());
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl resume" });
    ResumeChange c;
    try {
        c = resumePause(*conn, schema, tenant, operation, *reason, actor);
    } catch (const PauseNotFound& e) {
        std::cerr << "idemctl resume: " << displaySafe(e.what(), messageDisplay) << '\n';
        return ExitRefused;
    }
    if (args.flag("json")) {
        nlohmann::json still = nlohmann::json::array();
        for (const auto& [t, o] : c.stillPausedBy)
            still.push_back({ { "tenant", t }, { "operation", o } });
        std::cout << nlohmann::json({ { "schema", schema.name() }, { "audit_id", c.auditId }, { "tenant", c.tenant },
                                        { "operation", c.operation }, { "paused_at", formatMicros(c.pausedAtUs) },
                                        { "until", optionalMicros(c.untilUs) }, { "was_active", c.wasActive },
                                        { "still_paused_by", still } })
                         .dump(2)
                  << '\n';
        return ExitOk;
    }
    std::printf("resumed %s:%s%s (audit entry %lld)\n", safe(c.tenant, 70).c_str(), safe(c.operation, 70).c_str(),
        c.wasActive ? "" : " (it had expired already)", static_cast<long long>(c.auditId));
    for (const auto& [t, o] : c.stillPausedBy)
        std::printf("still paused by %s:%s: some of these claims still answer 'paused'\n", safe(t, 70).c_str(),
            safe(o, 70).c_str());
    return ExitOk;
}

int runPauses(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema", "minutes", "history" }, { "json", "help" });
    if (args.flag("help")) {
        std::cout << pausesHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("pauses takes no positional argument");
    const int minutes = static_cast<int>(args.intValue("minutes", 15, 1, 1440));
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl pauses" });
    const auto list = listPauses(*conn, schema, minutes);
    std::optional<int> hours;
    if (args.value("history"))
        hours = static_cast<int>(args.intValue("history", 24, 1, 8760));
    const auto ended = hours ? listEndedPauses(*conn, schema, *hours) : std::vector<EndedPause> {};
    if (args.flag("json")) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto& p : list.pauses)
            j.push_back(pauseJson(p));
        nlohmann::json out = { { "schema", schema.name() }, { "server_now", formatMicros(list.serverNowUs) },
            { "minutes", minutes }, { "pauses", j } };
        if (hours) {
            nlohmann::json e = nlohmann::json::array();
            for (const auto& x : ended)
                e.push_back({ { "tenant", x.pause.tenant }, { "operation", x.pause.operation },
                    { "reason", x.pause.reason }, { "paused_by", x.pause.pausedBy },
                    { "paused_at",
                        x.pause.pausedAtUs ? nlohmann::json(formatMicros(x.pause.pausedAtUs))
                                           : nlohmann::json(nullptr) },
                    { "until", optionalMicros(x.pause.untilUs) }, { "resumed_at", formatMicros(x.resumedAtUs) },
                    { "resumed_by", x.resumedBy }, { "resume_reason", x.resumeReason },
                    { "resume_audit_id", x.resumeAuditId } });
            out["history_hours"] = *hours;
            out["ended"] = e;
        }
        std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        return ExitOk;
    }
    const auto printEnded = [&] {
        if (!hours)
            return;
        if (ended.empty()) {
            std::printf("\nno pause was lifted in the last %d h\n", *hours);
            return;
        }
        std::printf("\nlifted in the last %d h, newest first:\n", *hours);
        for (const auto& x : ended) {
            std::printf("  %s:%s  paused %s by %s, until %s: %s\n", safe(x.pause.tenant, 70).c_str(),
                safe(x.pause.operation, 70).c_str(),
                x.pause.pausedAtUs ? formatMicros(x.pause.pausedAtUs).c_str() : "?", safe(x.pause.pausedBy).c_str(),
                untilText(x.pause.untilUs).c_str(), safe(x.pause.reason, 400).c_str());
            std::printf("      resumed %s by %s: %s (audit entry #%lld)\n", formatMicros(x.resumedAtUs).c_str(),
                safe(x.resumedBy).c_str(), safe(x.resumeReason, 400).c_str(), static_cast<long long>(x.resumeAuditId));
        }
    };
    if (list.pauses.empty()) {
        std::printf("nothing is paused (server time %s)\n", formatMicros(list.serverNowUs).c_str());
        printEnded();
        return ExitOk;
    }
    std::printf("server time %s; turned away: claims answered 'paused' in the last %d min\n\n",
        formatMicros(list.serverNowUs).c_str(), minutes);
    for (const auto& p : list.pauses) {
        std::string state = p.active ? (p.remainingMs ? formatPauseLength(*p.remainingMs) + " left" : "until resumed")
                                     : "EXPIRED (no longer in force)";
        std::printf("  %s:%s  %s, until %s; turned away %lld%s\n", safe(p.tenant, 70).c_str(),
            safe(p.operation, 70).c_str(), state.c_str(), untilText(p.untilUs).c_str(),
            static_cast<long long>(p.turnedAway), p.seen ? "" : "; matches nothing yet (no traffic counted in the window)");
        std::printf("      since %s by %s: %s\n", formatMicros(p.pausedAtUs).c_str(), safe(p.pausedBy).c_str(),
            safe(p.reason, 400).c_str());
        if (p.ramp)
            std::printf("      %s\n", rampText(*p.ramp).c_str());
    }
    printEnded();
    return ExitOk;
}

} // namespace idem::cli
