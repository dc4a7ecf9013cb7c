#include <cstdlib>
#include <cstring>
#include <iostream>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/wording.h"

namespace {

using idem::cli::Command;

const Command commands[] = {
    { "migrate", "create or upgrade the Idem schema, roles and grants", &idem::cli::runMigrate },
    { "digest", "print the request digest (or RFC 8785 canonical form) of a JSON request", &idem::cli::runDigest },
    { "verify", "run the verification scenarios against a database, in a scratch schema", &idem::cli::runVerify },
    { "stats", "print the dashboard figures as a table, JSON or Prometheus text", &idem::cli::runStats },
    { "exporter", "serve the stats figures and outcome counters to Prometheus over HTTP", &idem::cli::runExporter },
    { "demo", "run a live workload with injected faults, then check for duplicate effects", &idem::cli::runDemo },
    { "snapshot", "export, verify or show an incident snapshot bundle; make its signing key", &idem::cli::runSnapshot },
    { "tasks", "list task records a page at a time, with the exact updated_at actions check", &idem::cli::runTasks },
    { "requeue", "audited: failed or retryable_failed tasks become due now, N more attempts", &idem::cli::runRequeue },
    { "release", "audited: expire a processing task's lease and revoke its owner token", &idem::cli::runRelease },
    { "fail", "audited: mark processing or retryable_failed tasks failed (no more retries)", &idem::cli::runFail },
    { "audit", "list the recovery actions' audit trail, or verify its hash chain", &idem::cli::runAudit },
    { "purge", "audited: remove succeeded keys past their retention horizon, in small batches", &idem::cli::runPurge },
    { "retention", "show or change (audited) how long succeeded keys are kept, per operation", &idem::cli::runRetention },
    { "pause", "audited: stop intake of a tenant or operation (claims answer 'paused'), optionally for a time",
        &idem::cli::runPause },
    { "resume", "audited: lift a pause; the scope's claims acquire again", &idem::cli::runResume },
    { "pauses", "list the pauses, what each turned away, and whether it matches any traffic", &idem::cli::runPauses },
    { "latency", "run time, time to success and attempts per operation: p50, p95, p99 by the server's clock",
        &idem::cli::runLatency },
    { "annotate", "audited: mark the charts' time axis with a text (a deploy, a vendor's incident)",
        &idem::cli::runAnnotate },
    { "job", "audited: requeue, release or fail every task a filter matches, in the database, in batches",
        &idem::cli::runJob },
    { "approvals", "a second person's approval: list, show, approve or decline requests; the policy",
        &idem::cli::runApprovals },
    { "rights", "what the connected role may do: read, requeue, release, fail, pause, purge, approve",
        &idem::cli::runRights },
    { "events", "what happened in a window: recovery actions, purges, pauses, annotations", &idem::cli::runEvents },
    { "reconcile", "check effects against records on a schedule: probes per operation, their runs, run one now",
        &idem::cli::runReconcile },
    { "fencing", "late calls refused after takeovers, per operation and worker; run times against the lease",
        &idem::cli::runFencing },
    { "storage", "table and index sizes, rows by status, rows due for purge, the last purge", &idem::cli::runStorage },
    // Internal: the worker process that `verify` starts and kills. Not listed.
    { "scenario-worker", nullptr, &idem::cli::runScenarioWorker },
};

void printUsage(std::ostream& out)
{
    out << "Usage: idemctl COMMAND [OPTIONS]\n\nCommands:\n";
    for (const auto& c : commands)
        if (c.summary)
            out << "  " << c.name << std::string(12 - std::min<std::size_t>(11, std::strlen(c.name)), ' ') << c.summary
            << '\n';
    out << "\n`idemctl COMMAND --help` describes each command.\n"
           "Exit codes: 0 ok, 1 failure, 2 usage error, 3 refused by the database (nothing changed).\n";
}

// The role a command's connection acts as, asked again on a connection of its own (the refused
// one is gone with its command); empty when that fails. Only after a refusal: never on the way.
std::string refusedRole(const std::vector<std::string>& args)
{
    std::string dsn;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--dsn" && i + 1 < args.size())
            dsn = args[i + 1];
        else if (args[i].rfind("--dsn=", 0) == 0)
            dsn = args[i].substr(6);
    }
    if (dsn.empty())
        if (const char* env = std::getenv("IDEM_DSN"))
            dsn = env;
    try {
        auto conn = idem::connect(dsn, idem::ConnectOptions { "idemctl", 5 });
        pqxx::read_transaction t(*conn);
        return t.exec("SELECT current_user::text")[0][0].as<std::string>();
    } catch (const std::exception&) {
        return {};
    }
}

// A refusal (42501) in the console's words when it is about a right (operations/wording): who
// lacks which right and the GRANT that gives it; the server's own text otherwise.
std::string refusalText(const std::vector<std::string>& args, const std::exception& e)
{
    const std::string right = idem::rightOfRefusal(e.what());
    if (!right.empty()) {
        const std::string role = refusedRole(args);
        if (!role.empty())
            return idem::rightMissing(role, right) + "\n";
    }
    return e.what();
}

} // namespace

int main(int argc, char** argv)
{
    using namespace idem::cli;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        printUsage(args.empty() ? std::cerr : std::cout);
        return args.empty() ? ExitUsage : ExitOk;
    }
    if (args[0] == "--version") {
        std::cout << "idemctl " << IDEM_VERSION << '\n';
        return ExitOk;
    }
    const std::string name = idem::displaySafe(args[0], 64);
    // Every message may quote the database (a key, a RAISE), so none reaches the terminal raw.
    const auto msg = [](const std::exception& e) { return idem::displaySafe(e.what(), idem::messageDisplay); };
    for (const auto& c : commands) {
        if (args[0] != c.name)
            continue;
        try {
            return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
        } catch (const UsageError& e) {
            std::cerr << "idemctl " << name << ": " << msg(e) << "\n(see idemctl " << name << " --help)\n";
            return ExitUsage;
        } catch (const std::invalid_argument& e) {
            std::cerr << "idemctl " << name << ": " << msg(e) << '\n';
            return ExitUsage;
        } catch (const idem::ConnectError& e) {
            std::cerr << "idemctl " << name << ": cannot connect (" << idem::connectErrorKindName(e.kind())
                      << "): " << msg(e) << '\n';
            return ExitFailure;
        } catch (const pqxx::broken_connection& e) {
            // libpqxx's own text is often only "Could not obtain client encoding: not connected".
            std::cerr << "idemctl " << name << ": lost the connection to the database server: "
                      << idem::displaySafe(idem::describeLostConnection(e.what()), idem::messageDisplay) << '\n';
            return ExitFailure;
        } catch (const pqxx::insufficient_privilege& e) {
            // libpqxx 6.4 leaves sqlstate() empty on this class; it is only ever 42501.
            std::cerr << "idemctl " << name << ": refused by the database (SQLSTATE "
                      << (e.sqlstate().empty() ? std::string("42501") : e.sqlstate())
                      << "): " << idem::displaySafe(refusalText(args, e), idem::messageDisplay);
            return ExitRefused;
        } catch (const pqxx::sql_error& e) {
            if (idem::isReadOnlyRefusal(e)) {
                std::cerr
                    << "idemctl " << name << ": "
                    << idem::displaySafe(idem::describeReadOnly(e.what()), idem::messageDisplay)
                    << "; the refused transaction changed nothing. Connect to the primary (with several hosts in the "
                       "conninfo, target_session_attrs=read-write picks it)\n";
                return ExitFailure;
            }
            if (idem::isIdemRefusal(e.sqlstate())) {
                // Not found (ID002), a bad argument (ID003), a state or policy (ID004): in the
                // server's words, and the transaction it ended changed nothing.
                std::cerr << "idemctl " << name << ": refused (SQLSTATE " << e.sqlstate()
                          << "): " << idem::displaySafe(idem::serverWords(e), idem::messageDisplay)
                          << "\nnothing changed\n";
                return ExitRefused;
            }
            std::cerr << "idemctl " << name << ": database error (SQLSTATE " << e.sqlstate() << "): " << msg(e);
            return ExitFailure;
        } catch (const std::exception& e) {
            std::cerr << "idemctl " << name << ": " << msg(e) << '\n';
            return ExitFailure;
        }
    }
    std::cerr << "idemctl: unknown command '" << name << "'\n\n";
    printUsage(std::cerr);
    return ExitUsage;
}
