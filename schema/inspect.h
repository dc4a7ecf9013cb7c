#pragma once

#include <pqxx/connection>

#include "core/identifier.h"
#include "schema/migrate.h"

namespace idem {

// inspectSchema() whose statements give up after boundMs (0: no bound), waiting for a lock
// included: the console's read of the server must not wait for whoever holds a lock on a schema
// table (a migration's ALTER, a LOCK TABLE; issue 40); a lock is waited for half as long, so
// that its wait is named as such. Apart from migrate.h, which most of the
// code includes, so that this bound changes nothing else.
SchemaState inspectSchemaBounded(pqxx::connection& conn, const SchemaName& schema, int boundMs);

} // namespace idem
