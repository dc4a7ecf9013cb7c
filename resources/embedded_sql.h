#pragma once

#include <string>
#include <vector>

namespace idem::sql {

struct EmbeddedMigration {
    int version;
    std::string name;
    std::string text;
    // The checksum this version's file had up to schema v13, when it also defined functions
    // (migrations/superseded.sha256); empty when the file is unchanged since.
    std::string supersededChecksum;
};

struct EmbeddedFunction {
    std::string name; // the file's name without .sql: the function or procedure it defines
    std::string text;
};

// resources/sql/migrations/NNNN_*.sql in version order, byte for byte.
const std::vector<EmbeddedMigration>& embeddedMigrations();
// resources/sql/functions/*.sql in name order, byte for byte.
const std::vector<EmbeddedFunction>& embeddedFunctions();
// resources/sql/roles.sql: role creation and grants, re-applied on every migrate.
const char* rolesSql();

} // namespace idem::sql
