#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/identifier.h"

#include <pqxx/connection>

namespace idem {

// The schema is SQL compiled into this binary (resources/sql): versioned migrations for tables,
// indexes and data, applied once each; one file per function or procedure, its one live
// definition, applied whenever its checksum differs from the one the database records; the
// role script, re-applied on every migrate. A worker never links this: it needs only the
// protocol functions a migrated schema holds.

struct Migration {
    int version = 0;
    std::string name; // file name, e.g. 0001_initial.sql
    std::string sql;
    std::string checksum; // sha256 hex of sql
    // The checksum the file had up to v13, when it also defined functions; a database migrated
    // then records it, and it is taken as this version. Empty when unchanged.
    std::string supersededChecksum;
};

struct FunctionDefinition {
    std::string name; // the function or procedure, e.g. claim (resources/sql/functions/claim.sql)
    std::string sql; // as shipped; @extschema@ stands for the schema's quoted name
    std::string checksum; // sha256 hex of sql
};

// The migrations compiled into this binary, in version order.
const std::vector<Migration>& bundledMigrations();
// The function files compiled into this binary, in name order.
const std::vector<FunctionDefinition>& bundledFunctions();
// A function file's text for one schema: @extschema@ replaced by its quoted name.
std::string functionSqlFor(const FunctionDefinition& function, const SchemaName& schema);
int latestSchemaVersion();
// The role and grant script migrate applies after the migrations (unless --no-roles).
const std::string& rolesSql();

// What a database holds, read without changing anything.
struct SchemaState {
    bool schemaExists = false;
    bool versionTableExists = false;
    bool articleTableExists = false; // task_idempotency present, e.g. an article-shaped table to adopt
    int version = 0; // highest applied, 0 when none
    int latest = 0; // what this binary knows
    std::vector<std::string> problems; // checksum mismatches, unknown versions
    // At the latest version: function files this binary ships that the database holds another
    // version of, or none (migrate applies them).
    std::vector<std::string> functionsPending;

    bool missing() const { return version == 0; }
    bool newer() const { return version > latest; }
    bool upToDate() const { return version == latest && problems.empty() && functionsPending.empty(); }
};

SchemaState inspectSchema(pqxx::connection& conn, const SchemaName& schema);

// A refusal: migrate stopped before changing anything, for the reason given.
class MigrationRefused : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Another session held migrate's lock of the schema for longer than MigrateOptions::lockTimeout:
// nothing was changed. Any login role can take an advisory lock, so this is never waited out.
class MigrationLockTimeout : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct MigrateOptions {
    SchemaName schema;
    bool applyRoles = true;
    // How long to wait for another migrator (or whoever holds the lock) before giving up.
    std::chrono::milliseconds lockTimeout { 30000 };
    // The version to stop at, 0 for the newest this binary knows. Below the newest, the function
    // files and the role script (written for the newest) are left for a migrate that reaches it.
    int toVersion = 0;
};

struct MigrateReport {
    int fromVersion = 0;
    int toVersion = 0;
    std::vector<std::string> applied; // file names, in order
    std::vector<std::string> functionsApplied; // function files (re)applied, by name
    bool rolesApplied = false;
    bool adoptedExistingTable = false;
    // Set when the schema was current and the roles were not re-applied because another session
    // held the lock: who held it. Nothing else was to be done.
    std::string rolesSkippedLockHolder;
};

// Applies, in ONE transaction under an advisory lock of the schema, every pending migration up
// to options.toVersion (recording version and checksum in idem_schema_version), then, when that is
// the newest version, every function file whose checksum differs from the one recorded in
// idem_schema_functions (dropping any other signature of its name), then the role script (in a
// savepoint: without CREATEROLE the schema still commits, and this throws saying so). A failure
// or a crash anywhere leaves the schema as it was. Idempotent. Throws MigrationRefused, changing
// nothing, when the database's schema is newer than this binary or past toVersion, toVersion is
// not a version this binary knows, or an applied migration's checksum differs from the bundled
// one. Concurrent runs serialise on the lock, waited for at most options.lockTimeout
// (MigrationLockTimeout, naming the holder); the second finds the work done. A schema already
// current takes no lock to find that out, and re-applies the roles only when the lock is free.
MigrateReport migrate(pqxx::connection& conn, const MigrateOptions& options);

// What to run by hand (as a role allowed to create roles) when migrate ran with --no-roles.
std::string manualRolesInstructions(const SchemaName& schema);

} // namespace idem
