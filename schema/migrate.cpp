#include "schema/migrate.h"
#include "schema/inspect.h"

#include <pqxx/pqxx>

#include <algorithm>
#include <map>

#include "core/sha256.h"
#include "core/utf8.h"
#include "embedded_sql.h"

namespace idem {

namespace {

    // Serialises migrators of one schema across processes; transaction-scoped, so it is
    // released by every commit or rollback and works behind PgBouncer in transaction mode.
    // Any login role may take this advisory lock too, so it is waited for only so long.
    constexpr const char* lockKeySql = "hashtext('idem.migrate'), hashtext($1)";

    // Who holds the lock, for the message: pg_locks is readable by every role; the session's
    // times only by its own role, pg_read_all_stats and superusers.
    std::string describeLockHolder(pqxx::transaction_base& t, const SchemaName& schema)
    {
        const auto r
            = t.exec_params("SELECT l.pid, a.usename, a.application_name, a.xact_start::text, a.backend_start::text,"
                            "       l.pid = pg_backend_pid()"
                            "  FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
                            " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2"
                            "   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                            "   AND l.classid = hashtext('idem.migrate')::oid AND l.objid = hashtext($1)::oid",
                schema.name());
        std::string out;
        for (const auto& row : r) {
            if (row[5].as<bool>())
                continue;
            if (!out.empty())
                out += "; ";
            out += "pid " + row[0].as<std::string>() + " (role "
                + (row[1].is_null() ? std::string("?") : displaySafe(row[1].as<std::string>(), 64)) + ", application '"
                + (row[2].is_null() ? std::string() : displaySafe(row[2].as<std::string>(), 64)) + "', ";
            if (!row[3].is_null())
                out += "in a transaction since " + row[3].as<std::string>() + ")";
            else if (!row[4].is_null())
                out += "idle, holding it as a session lock, connected since " + row[4].as<std::string>() + ")";
            else
                out += "since: not visible to this role, which needs pg_read_all_stats for that)";
        }
        return out.empty() ? std::string("a session that has let go of it since") : out;
    }

    // Waits at most `timeout` for the lock; lock_timeout is set for this one statement only, so
    // the migrations' own statements wait as they always did.
    void lockSchema(pqxx::work& w, const SchemaName& schema, std::chrono::milliseconds timeout)
    {
        const auto before = w.exec("SELECT current_setting('lock_timeout')")[0][0].as<std::string>();
        w.exec_params("SELECT set_config('lock_timeout', $1, true)", std::to_string(timeout.count()) + "ms");
        try {
            w.exec_params(std::string("SELECT pg_advisory_xact_lock(") + lockKeySql + ")", schema.name());
        } catch (const pqxx::sql_error& e) {
            if (e.sqlstate() != "55P03")
                throw;
            w.abort();
            pqxx::read_transaction t(w.conn());
            throw MigrationLockTimeout("another session held the migrate lock of schema " + schema.quoted()
                + " for more than " + std::to_string(timeout.count()) + " ms: " + describeLockHolder(t, schema)
                + ". Nothing was changed by this wait; end that session (pg_terminate_backend(pid)) or wait"
                  " for it, then migrate again");
        }
        w.exec_params("SELECT set_config('lock_timeout', $1, true)", before);
    }

    bool tryLockSchema(pqxx::work& w, const SchemaName& schema)
    {
        return w.exec_params(std::string("SELECT pg_try_advisory_xact_lock(") + lockKeySql + ")", schema.name())[0][0]
            .as<bool>();
    }

    void useSchema(pqxx::work& w, const SchemaName& schema)
    {
        // Unqualified names in the migration files land in the target schema; pg_catalog is
        // searched first implicitly and pg_temp last, so nothing can shadow a built-in.
        w.exec_params("SELECT set_config('search_path', $1, true)", schema.quoted() + ", pg_temp");
    }

    std::vector<std::string> functionNames()
    {
        std::vector<std::string> out;
        for (const auto& f : bundledFunctions())
            out.push_back(f.name);
        return out;
    }

    struct Applied {
        int version;
        std::string name;
        std::string checksum;
    };

    std::vector<Applied> readApplied(pqxx::transaction_base& t, const SchemaName& schema)
    {
        std::vector<Applied> out;
        const auto r = t.exec("SELECT version, name, checksum FROM " + schema.qualify("idem_schema_version")
                              + " ORDER BY version");
        for (const auto& row : r)
            out.push_back({ row[0].as<int>(), row[1].as<std::string>(), row[2].as<std::string>() });
        return out;
    }

    // The function files whose checksum the database does not record (all of them before v14).
    std::vector<std::string> pendingFunctions(pqxx::transaction_base& t, const SchemaName& schema)
    {
        std::map<std::string, std::string> recorded;
        const auto table = schema.qualify("idem_schema_functions");
        if (!t.exec_params("SELECT to_regclass($1) IS NOT NULL", table)[0][0].as<bool>())
            return functionNames();
        for (const auto& row : t.exec("SELECT name, checksum FROM " + table))
            recorded[row[0].as<std::string>()] = row[1].as<std::string>();
        std::vector<std::string> out;
        for (const auto& f : bundledFunctions()) {
            const auto it = recorded.find(f.name);
            if (it == recorded.end() || it->second != f.checksum)
                out.push_back(f.name);
        }
        return out;
    }

    std::vector<std::string> checkApplied(const std::vector<Applied>& applied)
    {
        std::vector<std::string> problems;
        const auto& bundled = bundledMigrations();
        for (const auto& a : applied) {
            if (a.version > latestSchemaVersion()) {
                problems.push_back("the database has schema version " + std::to_string(a.version) + " (" + a.name
                                   + "), newer than this idemctl knows (" + std::to_string(latestSchemaVersion())
                                   + "); upgrade Idem before migrating");
                continue;
            }
            const Migration* m = nullptr;
            for (const auto& b : bundled)
                if (b.version == a.version)
                    m = &b;
            if (!m) {
                problems.push_back("applied migration " + std::to_string(a.version) + " (" + a.name
                                   + ") is not one this idemctl ships");
            } else if (m->checksum != a.checksum
                && (m->supersededChecksum.empty() || m->supersededChecksum != a.checksum)) {
                problems.push_back("applied migration " + a.name + " has checksum " + a.checksum
                                   + " but this idemctl ships " + m->name + " with checksum " + m->checksum
                                   + "; the migration file was changed after it was applied");
            }
        }
        return problems;
    }

    std::string joinProblems(const std::vector<std::string>& problems)
    {
        std::string out;
        for (const auto& p : problems) {
            if (!out.empty())
                out += "; ";
            out += p;
        }
        return out;
    }

    // Applies, in w, the function files the database holds another version of, and records them.
    // Bodies are checked when called, not here (check_function_bodies off, as pg_dump restores):
    // the files can then come in name order whatever calls what. A file's function is its name's
    // one routine in the schema: any other routine of that name (a signature an older file had,
    // which CREATE OR REPLACE leaves beside the new one) is dropped. The schema's routines named
    // like a function file are Idem's. Does not commit.
    std::vector<std::string> applyFunctions(pqxx::work& w, const SchemaName& schema)
    {
        const auto pending = pendingFunctions(w, schema);
        if (pending.empty())
            return pending;
        useSchema(w, schema);
        w.exec("SET LOCAL check_function_bodies = off");
        for (const auto& f : bundledFunctions()) {
            if (std::find(pending.begin(), pending.end(), f.name) == pending.end())
                continue;
            try {
                w.exec(functionSqlFor(f, schema));
                // CREATE OR REPLACE writes the routine's catalogue row in this transaction, even
                // when nothing changed: every other row of that name is an older signature.
                const auto stale = w.exec_params(
                    "SELECT p.oid::pg_catalog.regprocedure::text, p.prokind = 'p'"
                    "  FROM pg_catalog.pg_proc p"
                    " WHERE p.pronamespace = (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = $1)"
                    "   AND p.proname = $2"
                    "   AND NOT p.xmin = (pg_catalog.txid_current() % 4294967296)::text::xid"
                    " ORDER BY 1",
                    schema.name(), f.name);
                for (const auto& row : stale)
                    // A name the catalogue wrote (regprocedure quotes and qualifies it).
                    w.exec(std::string(row[1].as<bool>() ? "DROP PROCEDURE " : "DROP FUNCTION ")
                        + row[0].as<std::string>());
            } catch (const pqxx::sql_error& e) {
                throw std::runtime_error(
                    "function file " + f.name + ".sql failed (SQLSTATE " + e.sqlstate() + "): " + e.what());
            }
            w.exec_params("INSERT INTO " + schema.qualify("idem_schema_functions")
                    + " (name, checksum) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE"
                      " SET checksum = excluded.checksum, applied_at = now(), applied_by = current_user",
                f.name, f.checksum);
        }
        return pending;
    }

    // Commits w.
    void applyRolesScript(pqxx::work& w, const SchemaName& schema)
    {
        useSchema(w, schema);
        try {
            w.exec(rolesSql());
        } catch (const pqxx::insufficient_privilege& e) {
            throw std::runtime_error(std::string("the schema is migrated, but creating the Idem roles needs the "
                                                 "CREATEROLE privilege: ")
                + e.what() + "Re-run with --no-roles and have an administrator apply the roles.");
        }
        w.commit();
    }

} // namespace

const std::vector<Migration>& bundledMigrations()
{
    static const std::vector<Migration> all = [] {
        std::vector<Migration> out;
        for (const auto& e : sql::embeddedMigrations())
            out.push_back({ e.version, e.name, e.text, sha256Hex(e.text), e.supersededChecksum });
        return out;
    }();
    return all;
}

const std::vector<FunctionDefinition>& bundledFunctions()
{
    static const std::vector<FunctionDefinition> all = [] {
        std::vector<FunctionDefinition> out;
        for (const auto& e : sql::embeddedFunctions())
            out.push_back({ e.name, e.text, sha256Hex(e.text) });
        return out;
    }();
    return all;
}

std::string functionSqlFor(const FunctionDefinition& function, const SchemaName& schema)
{
    static const std::string token = "@extschema@";
    std::string out = function.sql;
    for (auto at = out.find(token); at != std::string::npos; at = out.find(token, at)) {
        out.replace(at, token.size(), schema.quoted());
        at += schema.quoted().size();
    }
    return out;
}

int latestSchemaVersion()
{
    const auto& all = bundledMigrations();
    return all.empty() ? 0 : all.back().version;
}

const std::string& rolesSql()
{
    static const std::string text = sql::rolesSql();
    return text;
}

SchemaState inspectSchema(pqxx::connection& conn, const SchemaName& schema) { return inspectSchemaBounded(conn, schema, 0); }

SchemaState inspectSchemaBounded(pqxx::connection& conn, const SchemaName& schema, int boundMs)
{
    SchemaState state;
    state.latest = latestSchemaVersion();
    pqxx::read_transaction t(conn);
    if (boundMs > 0)
        t.exec_params("SELECT pg_catalog.set_config('statement_timeout', $1, true),"
                      "       pg_catalog.set_config('lock_timeout', $2, true)",
            std::to_string(boundMs), std::to_string(boundMs / 2));
    const auto r = t.exec_params("SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1),"
                                 "       to_regclass($2) IS NOT NULL, to_regclass($3) IS NOT NULL",
                                 schema.name(), schema.qualify("idem_schema_version"),
                                 schema.qualify("task_idempotency"));
    state.schemaExists = r[0][0].as<bool>();
    state.versionTableExists = r[0][1].as<bool>();
    state.articleTableExists = r[0][2].as<bool>();
    if (state.versionTableExists) {
        const auto applied = readApplied(t, schema);
        for (const auto& a : applied)
            state.version = std::max(state.version, a.version);
        state.problems = checkApplied(applied);
        if (state.version == state.latest && state.problems.empty())
            state.functionsPending = pendingFunctions(t, schema);
    }
    return state;
}

MigrateReport migrate(pqxx::connection& conn, const MigrateOptions& options)
{
    const SchemaName& schema = options.schema;
    MigrateReport report;
    const int latest = latestSchemaVersion();
    const int target = options.toVersion == 0 ? latest : options.toVersion;
    if (target < 1 || target > latest)
        throw MigrationRefused("there is no schema version " + std::to_string(target)
            + " to migrate to: this binary knows versions 1 to " + std::to_string(latest));

    // Refusals come first, from a read that changes nothing.
    const SchemaState before = inspectSchema(conn, schema);
    if (!before.problems.empty())
        throw MigrationRefused(joinProblems(before.problems));
    if (before.version > target)
        throw MigrationRefused("schema " + schema.quoted() + " is at version " + std::to_string(before.version)
            + ", past version " + std::to_string(target) + ": migrate never takes a schema back");
    report.fromVersion = before.version;
    report.toVersion = before.version;

    // Nothing to apply is decided without the lock (which anyone can hold): every bundled version
    // up to the target is recorded, with its checksum (checked above). Versions are only ever
    // added, so a later migrator cannot make this schema need one of ours.
    bool current = before.versionTableExists;
    if (current) {
        pqxx::read_transaction t(conn);
        const auto applied = readApplied(t, schema);
        for (const auto& m : bundledMigrations()) {
            bool found = m.version > target;
            for (const auto& a : applied)
                found = found || a.version == m.version;
            current = current && found;
        }
        // Every version applied: current when every function file is too (one read, same snapshot).
        current = current && (target < latest || pendingFunctions(t, schema).empty());
    }
    // The role script, like the function files, is written for the newest version.
    const bool applyRoles = options.applyRoles && target == latest;
    if (current) {
        if (applyRoles) {
            // Re-applied only if nobody holds the lock right now: a migrator that does applies them
            // itself when it ends, and anyone else must not be able to make this wait.
            pqxx::work w(conn);
            if (!tryLockSchema(w, schema)) {
                report.rolesSkippedLockHolder = describeLockHolder(w, schema);
                return report;
            }
            applyRolesScript(w, schema);
            report.rolesApplied = true;
        }
        return report;
    }

    // Every pending migration, the function files and the role script in one transaction: a
    // failure or a crash anywhere leaves the schema as it was, tables and bodies of one version.
    // No migration holds a statement that cannot run in a transaction block (an index that must
    // not block writers is built CONCURRENTLY by hand beforehand, and the migration checks it).
    pqxx::work w(conn);
    lockSchema(w, schema, options.lockTimeout);
    w.exec("CREATE SCHEMA IF NOT EXISTS " + schema.quoted());
    w.exec("CREATE TABLE IF NOT EXISTS " + schema.qualify("idem_schema_version")
        + " (version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL,"
          " applied_at TIMESTAMPTZ NOT NULL DEFAULT now(), applied_by TEXT NOT NULL DEFAULT current_user)");
    // Re-read under the lock: another migrator may have got here first.
    const auto applied = readApplied(w, schema);
    if (auto problems = checkApplied(applied); !problems.empty())
        throw MigrationRefused(joinProblems(problems));
    int at = 0;
    for (const auto& a : applied)
        at = std::max(at, a.version);
    if (at > target)
        throw MigrationRefused("schema " + schema.quoted() + " was taken to version " + std::to_string(at)
            + " by another migrate meanwhile, past version " + std::to_string(target) + ": nothing changed");
    report.toVersion = at;
    useSchema(w, schema);
    for (const auto& m : bundledMigrations()) {
        if (m.version > target)
            break;
        bool done = false;
        for (const auto& a : applied)
            done = done || a.version == m.version;
        if (done)
            continue;
        if (m.version == 1 && before.articleTableExists)
            report.adoptedExistingTable = true;
        try {
            w.exec(m.sql);
        } catch (const pqxx::sql_error& e) {
            throw std::runtime_error("migration " + m.name + " failed (SQLSTATE " + e.sqlstate()
                + "); nothing was applied, the schema is still at version " + std::to_string(at) + ": " + e.what());
        }
        w.exec_params(
            "INSERT INTO " + schema.qualify("idem_schema_version") + " (version, name, checksum) VALUES ($1, $2, $3)",
            m.version, m.name, m.checksum);
        report.applied.push_back(m.name);
        report.toVersion = m.version;
    }

    // The function files (and the role script) are written for the newest version: a migrate that
    // stops short of it leaves the bodies and grants the database had until one that reaches it.
    if (target == latest) {
        try {
            report.functionsApplied = applyFunctions(w, schema);
        } catch (const std::runtime_error& e) {
            throw std::runtime_error(std::string(e.what()) + " (nothing was applied, the schema is still at version "
                + std::to_string(at) + ")");
        }
    }

    // The role script in the same transaction, in a savepoint: a migrator without CREATEROLE
    // still commits the schema, and is told to have the roles applied.
    std::string rolesRefused;
    if (applyRoles) {
        pqxx::subtransaction s(w, "roles");
        try {
            s.exec(rolesSql());
            s.commit();
            report.rolesApplied = true;
        } catch (const pqxx::insufficient_privilege& e) {
            s.abort();
            rolesRefused = e.what();
        }
    }
    w.commit();
    if (!rolesRefused.empty())
        throw std::runtime_error("the schema is migrated, but creating the Idem roles needs the CREATEROLE privilege: "
            + rolesRefused + "Re-run with --no-roles and have an administrator apply the roles.");
    return report;
}

std::string manualRolesInstructions(const SchemaName& schema)
{
    return "Roles and grants were not applied. As a role with CREATEROLE that owns schema " + schema.quoted()
        + ", run:\n  psql \"$DSN\" -v ON_ERROR_STOP=1 -c 'SET search_path = " + schema.quoted()
        + ", pg_temp' -f /usr/share/idem/sql/roles.sql\n(the file is resources/sql/roles.sql in the source tree; "
          "`idemctl migrate --print-roles` prints it).";
}

} // namespace idem
