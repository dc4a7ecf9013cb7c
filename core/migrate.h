#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/identifier.h"

#include <pqxx/connection>

namespace idem {

struct Migration {
    int version = 0;
    std::string name; // file name, e.g. 0001_initial.sql
    std::string sql;
    std::string checksum; // sha256 hex of sql
};

// The migrations compiled into this binary, in version order.
const std::vector<Migration>& bundledMigrations();
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

    bool missing() const { return version == 0; }
    bool newer() const { return version > latest; }
    bool upToDate() const { return version == latest && problems.empty(); }
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
};

struct MigrateReport {
    int fromVersion = 0;
    int toVersion = 0;
    std::vector<std::string> applied; // file names, in order
    bool rolesApplied = false;
    bool adoptedExistingTable = false;
    // Set when the schema was current and the roles were not re-applied because another session
    // held the lock: who held it. Nothing else was to be done.
    std::string rolesSkippedLockHolder;
};

// Applies pending migrations, each in its own transaction, recording version and checksum in
// idem_schema_version; then the role script. Idempotent. Throws MigrationRefused, changing
// nothing, when the database's schema is newer than this binary or an applied migration's
// checksum differs from the bundled one. Concurrent runs serialise on an advisory lock, waited for
// at most options.lockTimeout (MigrationLockTimeout, naming the holder); a schema already current
// takes no lock to find that out, and re-applies the roles only when the lock is free at once.
MigrateReport migrate(pqxx::connection& conn, const MigrateOptions& options);

// What to run by hand (as a role allowed to create roles) when migrate ran with --no-roles.
std::string manualRolesInstructions(const SchemaName& schema);

} // namespace idem
