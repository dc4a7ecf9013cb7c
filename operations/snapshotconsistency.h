#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "operations/snapshot.h"

namespace idem {

// Whether a snapshot agrees with itself (issue 40): a signature says who wrote a bundle, not that
// what they wrote is true, so verify and the viewer also hold its parts against each other.
//
// - Nothing is dated after taken_at: no event, no audit entry of the tail.
// - An event taken from the audit trail (every kind but those idem_events takes from elsewhere:
//   deploy, failover) cites its entry (audit_id); when the tail holds that entry, the event's
//   time, kind, actor ("db_role (os_user)"), text (the reason), tenant and operation are the
//   entry's. An event citing no entry, an entry past the chain head, or an entry the tail should
//   hold (its id or its time within the tail's range) but does not, contradicts the tail.
// - Every entry of the tail within the events' window and scope is among the events (unless the
//   event set says it was cut at its bound): an operator's action cannot be dropped from the
//   charts' marks while its entry stays in the tail.
// Entries are appended under one lock with clock_timestamp(), so ids and times rise together.
struct SnapshotConsistency {
    std::vector<std::string> contradictions; // one sentence each, naming what contradicts what; text escaped
    std::size_t eventsChecked = 0; // events held against an entry of the tail
    std::size_t eventsBeforeTail = 0; // audit-trail events older than the tail: not checkable here

    bool consistent() const { return contradictions.empty(); }
};

// Kinds of event that idem_events does not take from the audit trail (their audit_id names
// another table's row, or nothing).
bool eventOutsideAudit(const std::string& action);

SnapshotConsistency checkSnapshotConsistency(const SnapshotData& data);

} // namespace idem
