#include "core/migrate.h"

#include <pqxx/pqxx>

#include "core/sha256.h"
#include "embedded_sql.h"

namespace idem {

namespace {

    // Serialises migrators of one schema across processes; transaction-scoped, so it is
    // released by every commit or rollback and works behind PgBouncer in transaction mode.
    void lockSchema(pqxx::work& w, const SchemaName& schema)
    {
        w.exec_params("SELECT pg_advisory_xact_lock(hashtext('idem.migrate'), hashtext($1))", schema.name());
    }

    void useSchema(pqxx::work& w, const SchemaName& schema)
    {
        // Unqualified names in the migration files land in the target schema; pg_catalog is
        // searched first implicitly and pg_temp last, so nothing can shadow a built-in.
        w.exec_params("SELECT set_config('search_path', $1, true)", schema.quoted() + ", pg_temp");
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
            } else if (m->checksum != a.checksum) {
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

} // namespace

const std::vector<Migration>& bundledMigrations()
{
    static const std::vector<Migration> all = [] {
        std::vector<Migration> out;
        for (const auto& e : sql::embeddedMigrations())
            out.push_back({ e.version, e.name, e.text, sha256Hex(e.text) });
        return out;
    }();
    return all;
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

SchemaState inspectSchema(pqxx::connection& conn, const SchemaName& schema)
{
    SchemaState state;
    state.latest = latestSchemaVersion();
    pqxx::read_transaction t(conn);
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
    }
    return state;
}

MigrateReport migrate(pqxx::connection& conn, const MigrateOptions& options)
{
    const SchemaName& schema = options.schema;
    MigrateReport report;

    // Refusals come first, from a read that changes nothing.
    const SchemaState before = inspectSchema(conn, schema);
    if (!before.problems.empty())
        throw MigrationRefused(joinProblems(before.problems));
    report.fromVersion = before.version;
    report.toVersion = before.version;

    {
        pqxx::work w(conn);
        lockSchema(w, schema);
        w.exec("CREATE SCHEMA IF NOT EXISTS " + schema.quoted());
        w.exec("CREATE TABLE IF NOT EXISTS " + schema.qualify("idem_schema_version")
               + " (version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL,"
                 " applied_at TIMESTAMPTZ NOT NULL DEFAULT now(), applied_by TEXT NOT NULL DEFAULT current_user)");
        w.commit();
    }

    for (const auto& m : bundledMigrations()) {
        pqxx::work w(conn);
        lockSchema(w, schema);
        // Re-read under the lock: another migrator may have got here first.
        const auto applied = readApplied(w, schema);
        if (auto problems = checkApplied(applied); !problems.empty())
            throw MigrationRefused(joinProblems(problems));
        bool done = false;
        for (const auto& a : applied)
            done = done || a.version == m.version;
        if (done) {
            // Possibly applied by a concurrent migrator since `before` was read.
            report.toVersion = std::max(report.toVersion, m.version);
            continue;
        }
        if (m.version == 1 && before.articleTableExists)
            report.adoptedExistingTable = true;
        useSchema(w, schema);
        try {
            w.exec(m.sql);
        } catch (const pqxx::sql_error& e) {
            throw std::runtime_error("migration " + m.name + " failed (SQLSTATE " + e.sqlstate()
                                     + "), nothing of it was applied: " + e.what());
        }
        w.exec_params("INSERT INTO " + schema.qualify("idem_schema_version")
                          + " (version, name, checksum) VALUES ($1, $2, $3)",
                      m.version, m.name, m.checksum);
        w.commit();
        report.applied.push_back(m.name);
        report.toVersion = m.version;
    }

    if (options.applyRoles) {
        pqxx::work w(conn);
        lockSchema(w, schema);
        useSchema(w, schema);
        try {
            w.exec(rolesSql());
        } catch (const pqxx::insufficient_privilege& e) {
            throw std::runtime_error(std::string("the schema is migrated, but creating the Idem roles needs the "
                                                 "CREATEROLE privilege: ")
                                     + e.what() + "Re-run with --no-roles and have an administrator apply the roles.");
        }
        w.commit();
        report.rolesApplied = true;
    }
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
