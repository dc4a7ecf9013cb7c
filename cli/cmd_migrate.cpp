#include <iostream>
#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "schema/migrate.h"

namespace idem::cli {

namespace {
    constexpr const char* migrateHelp
        = R"(Usage: idemctl migrate [--dsn DSN] [--schema NAME] [--no-roles] [--lock-timeout D] [--status] [--print-roles]

Applies the SQL migrations this idemctl ships, in order, each in its own transaction, and
records each version with its SHA-256 checksum in idem_schema_version; then, in one
transaction, every function file whose checksum differs from the one recorded in
idem_schema_functions (each function is one file, its one live definition). Running it
again is a no-op. An existing task_idempotency table of the article's shape is adopted in
place.

  --dsn DSN       libpq conninfo, postgresql:// URI or service=NAME (default: $IDEM_DSN,
                  then the PG* environment variables, as psql)
  --schema NAME   schema holding the Idem tables (default: idem)
  --no-roles      do not create the idem_reader/idem_operator/idem_worker roles or grant;
                  prints what to run by hand instead
  --lock-timeout D  how long to wait for the migrate lock another session holds: 30s, 500ms,
                  2m (default: 30s); then it gives up, changing nothing, names the holder
                  (pid, role, application, since when) and exits 1. A current schema needs
                  no lock: it returns at once, re-applying the roles only if the lock is free
  --status        only report the schema version; change nothing
  --print-roles   print the role and grant script and exit

Refuses, changing nothing (exit 3): a schema newer than this idemctl, or an applied
migration whose checksum differs from the one shipped.
)";
} // namespace

int runMigrate(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema", "lock-timeout" }, { "no-roles", "status", "print-roles", "help" });
    if (args.flag("help")) {
        std::cout << migrateHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("migrate takes no positional arguments");
    MigrateOptions options { SchemaName(args.valueOr("schema", SchemaName::defaultName)), !args.flag("no-roles"),
        parseInterval(args.valueOr("lock-timeout", "30s"), "lock-timeout") };
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
            std::cout << "schema " << options.schema.quoted() << " is up to date at version " << report.toVersion
                      << '\n';
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
                      << " function file(s) applied\n";
        }
        if (report.rolesApplied)
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
