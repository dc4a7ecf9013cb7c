#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <pqxx/connection>
#include <pqxx/transaction_base>

#include "core/identifier.h"

namespace idem {

// Events that explain a change in a chart (schema v17): the audited recovery actions, retention
// changes, purges, pauses, resumes, and operators' annotations, from the audit trail; and (v18)
// deploys, a worker reporting a version the fleet had not run before (idem_deploys). Both through
// idem_events. No Qt: idemctl and the console's worker thread call these.
struct Event {
    std::int64_t auditId = 0; // the audit entry's id; for a deploy, the deploy's (idem_deploys.id)
    std::int64_t atUs = 0; // microseconds since the epoch, the server's clock
    std::string action; // requeue, release, fail, retention, purge, pause, resume, annotate, deploy
    std::string tenant; // "*" for all (a deploy's)
    std::string operation; // "*" for all (a deploy's)
    std::string actor; // "db_role (actor)"; a deploy's "db_role (worker)"
    std::string text; // the entry's reason; an annotation's text; a deploy's "worker: old -> new"
    // Deploys only (empty on the others): the worker whose report it was, the version it (or, for a
    // worker new by name, the fleet) ran before (empty: none reported before), the new version.
    std::string worker;
    std::string oldVersion;
    std::string newVersion;

    bool isDeploy() const { return action == "deploy"; }
};

// What one read of the events holds (schema v24, issue 40): each source (the audit trail's
// operator actions, deploys, failovers) bounded on its own to its newest `limit`, so workers'
// reports never crowd an operator's pause out, and how many of each the bound left out.
struct EventList {
    std::vector<Event> events; // oldest first
    std::int64_t omittedAudit = 0; // recovery actions, pauses, annotations, ... not listed
    std::int64_t omittedDeploys = 0;
    std::int64_t omittedFailovers = 0;
    // A server before v24 bounds all sources together and cannot count what it left out: set when
    // its list came back full.
    bool omittedUncounted = false;
    std::int64_t omitted() const { return omittedAudit + omittedDeploys + omittedFailovers; }
    bool truncated() const { return omittedUncounted || omitted() > 0; }
};

// The events of [fromUs, toUs) (at most 31 days) concerning tenant / operation (empty: any; '*'
// events always concern them), oldest first, at most `limit` (1 to 10000) of each source, and
// what was left out (one more round trip, only when a source came back full). Needs idem_reader.
EventList readEvents(pqxx::connection& conn, const SchemaName& schema, std::int64_t fromUs, std::int64_t toUs,
    const std::string& tenant = {}, const std::string& operation = {}, int limit = 1000);
// The same in a transaction the caller holds (an incident snapshot's REPEATABLE READ read).
EventList readEvents(pqxx::transaction_base& tx, const SchemaName& schema, std::int64_t fromUs, std::int64_t toUs,
    const std::string& tenant = {}, const std::string& operation = {}, int limit = 1000);

// The console's chart marks: the events of [now - beforeUs, now + afterUs) by the server's clock,
// as readEvents() reads them, in one read-only transaction bounded by statementTimeoutMs. On a
// connection a DirectReads scope names, one round trip (one more only when a source came back
// full); elsewhere (behind a transaction pooler) statement by statement.
struct RecentEvents {
    std::int64_t fromUs = 0;
    std::int64_t toUs = 0;
    EventList list;
};
RecentEvents readRecentEvents(pqxx::connection& conn, const SchemaName& schema, std::int64_t beforeUs,
    std::int64_t afterUs, const std::string& tenant, const std::string& operation, int limit, int statementTimeoutMs);

// readEvents' events alone.
std::vector<Event> listEvents(pqxx::connection& conn, const SchemaName& schema, std::int64_t fromUs, std::int64_t toUs,
    const std::string& tenant = {}, const std::string& operation = {}, int limit = 1000);
// The same in a transaction the caller holds (an incident snapshot's REPEATABLE READ read).
std::vector<Event> listEvents(pqxx::transaction_base& tx, const SchemaName& schema, std::int64_t fromUs,
    std::int64_t toUs, const std::string& tenant = {}, const std::string& operation = {}, int limit = 1000);

struct Annotation {
    std::string text; // the recovery actions' reason rules (validateReasonAndActor)
    std::string actor; // empty: localActor()
    std::string tenant = "*";
    std::string operation = "*";
};

// Records an annotation: one audit entry, action 'annotate'. Needs idem_operator. Returns the
// entry's id and time. Throws std::invalid_argument for bad input before any I/O.
Event annotate(pqxx::connection& conn, const SchemaName& schema, const Annotation& annotation);

} // namespace idem
