#pragma once

// What the three parts of the stats reading share and nobody else calls: the exact refresh's
// statements (statssql.cpp) and the conversion of a reader's own exact row (statsrow.cpp), used
// by the refresh protocol (statsrefresh.cpp).

#include <string>

#include <pqxx/row>

#include "core/identifier.h"
#include "operations/stats.h"

namespace idem {

// A reader's own exact figures: idem_exact_stats($1 tenant, $2 operation, $3 long-unfinished
// minutes) with taken_at, oldest_age_s and attempts_text at this statement's now().
std::string ownExactSql(const SchemaName& schema);
// idem_exact_refresh_begin(): the attempt's token, or NULL when none is due or another runs it.
std::string exactRefreshBeginSql(const SchemaName& schema);
// idem_exact_refresh_finish($1 token, $2 long-unfinished minutes): true when this call refreshed.
std::string exactRefreshFinishSql(const SchemaName& schema);

// ownExactSql()'s row as figures (without the cost and period, which the caller measures).
ExactFigures ownExactFromRow(const pqxx::row& row);

} // namespace idem
