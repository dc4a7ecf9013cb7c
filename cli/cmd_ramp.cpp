// idemctl pause forecast | resume --ramp: what a resume sends downstream, and a resume in steps
// (schema v33, operations/pauseramp.h).
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/pauseramp.h"
#include "operations/pauses.h"

namespace idem::cli {

namespace {

    constexpr const char* forecastHelp = R"(Usage: idemctl pause forecast [--tenant T] [--operation O] [--minutes N] [--cap N] [--json]
                              [--dsn DSN] [--schema S]

What a resume of the pause of exactly this scope (as it was set, '*' included; at least one of
--tenant and --operation, the other is then '*') sends at the recovering downstream, by the
server's clock:
  - the scope's retryable keys falling due, per minute for the next N minutes (default 30, 1 to
    1440); the first minute includes the keys due already, which the pause has held back;
  - the claims turned away since the pause began (the outcome counters' 'paused' answers, over at
    most the last 24 h; a key asked again counts again);
  - their sum.
The due keys are read from the retry index in due order, at most --cap entries of every scope
(default 100000, 1 to 1000000): when the cap is reached the figures are lower bounds, written
"at least". Exit code 3 when the scope has no pause. Needs idem_reader.
)";

    constexpr const char* rampHelp = R"(Usage: idemctl resume [--tenant T] [--operation O] --reason TEXT --ramp P1,P2,...,100
                      [--step-minutes M | --step-seconds S] [--abort-above RATE] [--abort-min N]
                      [--actor NAME] [--json] [--dsn DSN] [--schema S]

Resumes the pause of exactly this scope in steps: the first step admits P1 % of its keys, each
later step (every M minutes, default 5; or S seconds, 1 to 86400) the next percentage, the last
100 %, when the pause ends by itself. A key is in or out by its hash (the same set on every
server and client), and stays in at every later step. Keys outside the step's share still answer
'paused'. When a step has admitted at least N claims (default 20, 1 to 1000000) and more than
RATE (default 0.2, above 0 and at most 1) of them failed, the database pauses the scope again,
until resumed, with an audit entry (ramp_abort) naming the step's figures. The ramp's start is
audited (ramp), and each step by the first claim that reads it (ramp_step). Needs what resume
needs (the pause right). Exit code 3 when there is no such pause or it has ended already.
)";

    std::pair<std::string, std::string> scopeOf(const Args& args, const char* verb)
    {
        const auto tenant = args.value("tenant");
        const auto operation = args.value("operation");
        if (!tenant && !operation)
            throw UsageError(std::string(verb) + " needs --tenant, --operation or both ('*' for all)");
        return { tenant.value_or("*"), operation.value_or("*") };
    }

    std::string safe(const std::string& s, std::size_t n = 200) { return displaySafe(s, n); }

    int refused(const char* verb, const pqxx::sql_error& e)
    {
        std::cerr << "idemctl " << verb << ": refused (SQLSTATE " << e.sqlstate()
                  << "): " << displaySafe(serverWords(e), messageDisplay) << '\n';
        return ExitRefused;
    }

} // namespace

nlohmann::json rampJson(const Ramp& r)
{
    const auto rate = r.failureRate();
    return { { "steps", r.steps }, { "step_ms", r.stepMs }, { "started_at", formatMicros(r.startedAtUs) },
        { "step", r.step }, { "step_count", r.stepCount() }, { "percent", r.percent },
        { "step_began_at", formatMicros(r.stepBeganAtUs()) }, { "ends_at", formatMicros(r.endsAtUs()) },
        { "done", r.done() }, { "abort_above", r.abortAbove }, { "abort_min_claims", r.minClaims },
        { "claimed", r.claimed }, { "failed", r.failed },
        { "failure_rate", rate ? nlohmann::json(*rate) : nlohmann::json(nullptr) } };
}

std::string rampText(const Ramp& r)
{
    if (r.done())
        return "ramp done: 100 % of keys admitted since " + formatMicros(r.endsAtUs());
    const auto rate = r.failureRate();
    char buf[160];
    std::snprintf(buf, sizeof buf, "%.1f %% of %lld admitted claims failed", rate ? *rate * 100 : 0.0,
        static_cast<long long>(r.claimed));
    return "ramping: step " + std::to_string(r.step + 1) + " of " + std::to_string(r.stepCount()) + ", "
        + std::to_string(r.percent) + " % of keys admitted; " + (rate ? std::string(buf) : "no admitted claim yet")
        + " (re-pauses above " + std::to_string(static_cast<int>(r.abortAbove * 1000 + 0.5) / 10) + "."
        + std::to_string(static_cast<int>(r.abortAbove * 1000 + 0.5) % 10) + " % once "
        + std::to_string(r.minClaims) + " claims were admitted); 100 % at " + formatMicros(r.endsAtUs());
}

int runPauseForecast(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema", "tenant", "operation", "minutes", "cap" }, { "json", "help" });
    if (args.flag("help")) {
        std::cout << forecastHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("pause forecast takes no positional argument");
    const auto [tenant, operation] = scopeOf(args, "pause forecast");
    const int minutes = static_cast<int>(args.intValue("minutes", 30, 1, 1440));
    const int cap = static_cast<int>(args.intValue("cap", 100000, 1, 1000000));
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl pause forecast" });
    PauseForecast f;
    try {
        f = forecastResume(*conn, schema, tenant, operation, minutes, cap);
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() != "ID002")
            throw;
        return refused("pause forecast", e);
    }
    if (args.flag("json")) {
        nlohmann::json by = nlohmann::json::array();
        for (const auto& [us, n] : f.dueByMinute)
            by.push_back({ { "minute", formatMicros(us) }, { "due", n } });
        std::cout << nlohmann::json({ { "schema", schema.name() }, { "tenant", f.tenant }, { "operation", f.operation },
                                        { "paused_at", formatMicros(f.pausedAtUs) },
                                        { "server_now", formatMicros(f.serverNowUs) }, { "minutes", f.minutes },
                                        { "due_by_minute", by }, { "due_now", f.dueNow }, { "due_total", f.dueTotal },
                                        { "at_least", f.dueBounded }, { "scanned", f.scanned }, { "cap", cap },
                                        { "turned_away", f.turnedAway },
                                        { "turned_away_since", formatMicros(f.turnedAwaySinceUs) },
                                        { "total", f.total } })
                         .dump(2)
                  << '\n';
        return ExitOk;
    }
    std::printf("resuming %s:%s (paused since %s; server time %s) sends:\n", safe(f.tenant, 70).c_str(),
        safe(f.operation, 70).c_str(), formatMicros(f.pausedAtUs).c_str(), formatMicros(f.serverNowUs).c_str());
    std::printf("  retries due in the next %d min: %s (%s due already)\n", f.minutes, f.label(f.dueTotal).c_str(),
        f.label(f.dueNow).c_str());
    for (const auto& [us, n] : f.dueByMinute)
        std::printf("    %s  %s\n", formatMicros(us).c_str(), f.label(n).c_str());
    std::printf("  claims turned away since %s: %lld\n", formatMicros(f.turnedAwaySinceUs).c_str(),
        static_cast<long long>(f.turnedAway));
    std::printf("  sum: %s\n", f.label(f.total).c_str());
    if (f.dueBounded)
        std::printf("(the retry index was read up to its cap of %d entries: due figures are lower bounds)\n", cap);
    return ExitOk;
}

int runResumeRamp(const std::vector<std::string>& argv)
{
    // "--ramp --help": the help, whatever --ramp would have taken as its value.
    if (std::find(argv.begin(), argv.end(), "--help") != argv.end()) {
        std::cout << rampHelp;
        return ExitOk;
    }
    Args args(argv,
        { "dsn", "schema", "tenant", "operation", "reason", "actor", "ramp", "step-minutes", "step-seconds",
            "abort-above", "abort-min" },
        { "json", "help" });
    if (args.flag("help")) {
        std::cout << rampHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("resume takes no positional argument");
    RampRequest r;
    std::tie(r.tenant, r.operation) = scopeOf(args, "resume");
    const auto reason = args.value("reason");
    if (!reason)
        throw UsageError("--reason is required (it goes into the audit trail)");
    r.reason = *reason;
    r.actor = args.valueOr("actor", localActor());
    try {
        r.steps = parseRampSteps(args.valueOr("ramp", ""));
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--ramp: ") + e.what());
    }
    if (args.value("step-minutes") && args.value("step-seconds"))
        throw UsageError("give --step-minutes or --step-seconds, not both");
    if (args.value("step-seconds"))
        r.stepMs = args.intValue("step-seconds", 300, 1, 86400) * 1000;
    else
        r.stepMs = args.intValue("step-minutes", 5, 1, 1440) * 60000;
    if (const auto a = args.value("abort-above")) {
        try {
            std::size_t used = 0;
            r.abortAbove = std::stod(*a, &used);
            if (used != a->size())
                throw std::invalid_argument(*a);
        } catch (const std::exception&) {
            throw UsageError("--abort-above is a failure rate such as 0.2, not '" + *a + "'");
        }
    }
    r.minClaims = static_cast<int>(args.intValue("abort-min", 20, 1, 1000000));
    try {
        validateRampRequest(r);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl resume" });
    RampChange c;
    try {
        c = startRamp(*conn, schema, r);
    } catch (const PauseNotFound& e) {
        std::cerr << "idemctl resume: " << displaySafe(e.what(), messageDisplay) << '\n';
        return ExitRefused;
    } catch (const pqxx::sql_error& e) {
        if (!isIdemRefusal(e.sqlstate()))
            throw;
        return refused("resume", e);
    }
    if (args.flag("json")) {
        std::cout << nlohmann::json({ { "schema", schema.name() }, { "audit_id", c.auditId }, { "tenant", r.tenant },
                                        { "operation", r.operation }, { "steps", r.steps }, { "step_ms", r.stepMs },
                                        { "started_at", formatMicros(c.startedAtUs) },
                                        { "ends_at", formatMicros(c.endsAtUs) }, { "abort_above", r.abortAbove },
                                        { "abort_min_claims", r.minClaims } })
                         .dump(2)
                  << '\n';
        return ExitOk;
    }
    std::string steps;
    for (std::size_t i = 0; i < r.steps.size(); ++i)
        steps += (i ? ", " : "") + std::to_string(r.steps[i]) + " %";
    std::printf("resuming %s:%s in steps (%s), one every %s from %s; 100 %% at %s (audit entry %lld)\n",
        safe(r.tenant, 70).c_str(), safe(r.operation, 70).c_str(), steps.c_str(), formatPauseLength(r.stepMs).c_str(),
        formatMicros(c.startedAtUs).c_str(), formatMicros(c.endsAtUs).c_str(), static_cast<long long>(c.auditId));
    std::printf("re-pauses by itself when more than %g of a step's admitted claims fail (once it admitted %d); "
                "idemctl pauses shows the step\n",
        r.abortAbove, r.minClaims);
    return ExitOk;
}

} // namespace idem::cli
