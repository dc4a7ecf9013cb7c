#pragma once

#include <cstdint>
#include <string>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem {

// Failovers (schema v20): the first client to see a new timeline on the primary records it, and
// every console marks it on its charts (idem_events lists it). A worker calls noteTimeline when it
// connects and reconnects, beside reportVersion, so a failover is recorded when the workers reach
// the new primary even while no console or exporter is running; nothing is written unless the
// timeline is new (resources/sql/functions/idem_note_timeline.sql).

// What idem_note_timeline answered.
struct TimelineNote {
    std::string outcome; // known, first, failover, standby, read_only, not_allowed
    std::string systemIdentifier; // empty: not known
    int timeline = 0;
    int previousTimeline = 0; // 0: none (the system's first timeline)
    std::int64_t sinceUs = 0; // when the timeline was first seen by any client; 0: not known
};

// Its own short transaction (statement_timeout 5 s) on conn, which has none open. Needs
// idem_reader or idem_worker and a schema of v20 or later: before v20 the server answers
// SQLSTATE 42883 (pqxx::undefined_function), which the caller decides about.
TimelineNote noteTimeline(pqxx::connection& conn, const SchemaName& schema);

} // namespace idem
