#pragma once

#include <string>
#include <vector>

namespace idem::sql {

struct EmbeddedMigration {
    int version;
    std::string name;
    std::string text;
};

// resources/sql/NNNN_*.sql in version order, byte for byte.
const std::vector<EmbeddedMigration>& embeddedMigrations();
// resources/sql/roles.sql: role creation and grants, re-applied on every migrate.
const char* rolesSql();

} // namespace idem::sql
