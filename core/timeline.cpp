#include "core/timeline.h"

#include <pqxx/pqxx>

namespace idem {

TimelineNote noteTimeline(pqxx::connection& conn, const SchemaName& schema)
{
    pqxx::work w(conn);
    w.exec("SET LOCAL statement_timeout = '5s'");
    w.exec("SELECT pg_catalog.set_config('search_path', 'pg_catalog', true)"); // no shadow on the caller's path
    // Qualified as well: numeric times an integer has no exact match in pg_catalog, so an
    // unqualified * on a path with public would pick a *(numeric, double precision) planted there.
    const auto row = w.exec("SELECT outcome, system_identifier::text, timeline, previous_timeline,"
                            " (extract(epoch FROM since) OPERATOR(pg_catalog.*) 1000000::numeric)::bigint FROM "
        + schema.qualify("idem_note_timeline") + "()")[0];
    w.commit();
    TimelineNote note;
    note.outcome = row[0].as<std::string>();
    if (!row[1].is_null())
        note.systemIdentifier = row[1].as<std::string>();
    if (!row[2].is_null())
        note.timeline = row[2].as<int>();
    if (!row[3].is_null())
        note.previousTimeline = row[3].as<int>();
    if (!row[4].is_null())
        note.sinceUs = row[4].as<std::int64_t>();
    return note;
}

} // namespace idem
