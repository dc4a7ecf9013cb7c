#include <iostream>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "schema/migrate.h"

namespace idem::cli {

namespace {
    constexpr const char* migrateHelp
        = R"(Usage: idemctl migrate [--dsn DSN] [--schema NAME] [--to-version N] [--no-roles] [--lock-timeout D] [--status] [--print-roles]

Applies the SQL migrations this idemctl ships that the schema lacks, in order, recording each
version with its SHA-256 checksum in idem_schema_version; then every function file whose
checksum differs from the one recorded in idem_schema_functions (each function is one file,
its one live definition; another signature of its name is dropped); then the role script. All
of it is one transaction under the schema's migrate lock: a failure or a crash leaves the
schema at the version it had, with the function bodies it had. Running it again is a no-op. An
existing task_idempotency table of the article's shape is adopted in place.

  --dsn DSN       libpq conninfo, postgresql:// URI or service=NAME (default: $IDEM_DSN,
                  then the PG* environment variables, as psql)
  --schema NAME   schema holding the Idem tables (default: idem)
  --to-version N  stop at schema version N (default: the newest this idemctl ships). The
                  function files and the role script are written for the newest version:
                  below it they are left as the database has them until a migrate that
                  reaches the newest
  --no-roles      do not create the idem_reader/idem_operator/idem_worker roles or grant;
                  prints what to run by hand instead
  --lock-timeout D  how long to wait for the migrate lock another session holds (another
                  migrate holds it until it commits): 30s, 500ms, 2m (default: 30s); then it
                  gives up, changing nothing, names the holder (pid, role, application, since
                  when) and exits 1. A current schema needs no lock: it returns at once,
                  re-applying the roles only if the lock is free
  --status        only report the schema version; change nothing
  --print-roles   print the role and grant script and exit

Refuses, changing nothing (exit 3): a schema newer than this idemctl or past --to-version, or
an applied migration whose checksum differs from the one shipped. A --to-version this idemctl
does not ship is a usage error (exit 2).
)";
} // namespace

int runMigrate(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema", "lock-timeout", "to-version" }, { "no-roles", "status", "print-roles", "help" });
    if (args.flag("help")) {
        std::cout << migrateHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("migrate takes no positional arguments");
    MigrateOptions options { SchemaName(args.valueOr("schema", SchemaName::defaultName)), !args.flag("no-roles"),
        parseInterval(args.valueOr("lock-timeout", "30s"), "lock-timeout") };
    if (args.value("to-version")) {
        const int latest = latestSchemaVersion();
        const auto n = args.intValue("to-version", latest, 0, 1'000'000);
        if (n < 1 || n > latest)
            throw UsageError("--to-version " + std::to_string(n) + ": this idemctl ships schema versions 1 to "
                + std::to_string(latest) + " (the newest is " + std::to_string(latest) + ")");
        options.toVersion = static_cast<int>(n);
    }
    if (args.flag("print-roles")) {
        std::cout << rolesSql();
        return ExitOk;
    }

    auto conn = connect(dsnFrom(args), { "idemctl migrate" });
    if (args.flag("status")) {
        const auto state = inspectSchema(*conn, options.schema);
        std::cout << "schema " << options.schema.quoted() << ": version " << state.version << ", this idemctl ships "
                  << state.latest << '\n';
        for (const auto& p : state.problems)
            std::cout << "problem: " << p << '\n';
        if (!state.functionsPending.empty())
            std::cout << state.functionsPending.size() << " function file(s) to apply, the first "
                      << state.functionsPending.front() << ".sql\n";
        return state.problems.empty() ? ExitOk : ExitRefused;
    }

    try {
        const auto report = migrate(*conn, options);
        if (report.applied.empty() && report.functionsApplied.empty()) {
            std::cout << "schema " << options.schema.quoted()
                      << (options.toVersion != 0 && options.toVersion < latestSchemaVersion()
                                 ? " is at version "
                                 : " is up to date at version ")
                      << report.toVersion << '\n';
        } else if (report.applied.empty()) {
            std::cout << "schema " << options.schema.quoted() << " at version " << report.toVersion << ": applied "
                      << report.functionsApplied.size() << " changed function file(s)\n";
        } else {
            for (const auto& name : report.applied)
                std::cout << "applied " << name << '\n';
            if (report.adoptedExistingTable)
                std::cout << "adopted the existing task_idempotency table: every row kept, new columns filled\n";
            std::cout << "schema " << options.schema.quoted() << " migrated from version " << report.fromVersion
                      << " to " << report.toVersion << ", " << report.functionsApplied.size()
                      << " function file(s) applied, in one transaction\n";
            if (report.toVersion < latestSchemaVersion())
                std::cout << "the newest version is " << latestSchemaVersion()
                          << "; the function files are applied by the migrate that reaches it\n";
        }
        if (report.toVersion < latestSchemaVersion())
            std::cout << "roles and grants: applied by the migrate that reaches version " << latestSchemaVersion()
                      << '\n';
        else if (report.rolesApplied)
            std::cout << "roles idem_reader, idem_operator, idem_worker and their grants are in place\n";
        else if (!report.rolesSkippedLockHolder.empty())
            std::cout << "roles and grants not re-applied: the migrate lock is held by "
                      << report.rolesSkippedLockHolder << "; the schema is current, nothing else was to be done\n";
        else
            std::cout << manualRolesInstructions(options.schema) << '\n';
    } catch (const MigrationRefused& e) {
        std::cerr << "idemctl migrate: refused, nothing changed: " << e.what() << '\n';
        return ExitRefused;
    } catch (const MigrationLockTimeout& e) {
        std::cerr << "idemctl migrate: gave up waiting: " << e.what() << '\n';
        return ExitFailure;
    }
    return ExitOk;
}

} // namespace idem::cli
