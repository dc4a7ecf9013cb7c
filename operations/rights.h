#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem {

// Per-action rights (schema v21, resources/sql/migrations/0021_action_rights.sql): each right is
// granted through a NOLOGIN role of its own, and the database enforces them. idem_operator is a
// member of every one but read_requests (schema v25: stored requests hold personal data, so
// that right is granted on its own). No Qt.
//   read     idem_reader       the console, idemctl stats, tasks, audit, jobs
//   requeue  idem_may_requeue  requeue a task, or start/run/cancel a requeue job
//   release  idem_may_release  release a task's lease, or a release job
//   fail     idem_may_fail     mark a task failed, or a fail job
//   pause    idem_may_pause    pause and resume claims
//   purge    idem_may_purge    purge and change the retention policy
//   approve  idem_may_approve  approve (or turn down) another login's job
//   read_requests  idem_may_read_requests  read the content of stored requests (docs/redrive.md)
struct Right {
    std::string name; // read, requeue, release, fail, pause, purge, approve, read_requests
    std::string grantRole; // the role that grants it
    bool granted = false;
};

struct Rights {
    std::string login; // session_user
    std::string caller; // the role the session acts as (SET ROLE, else the login)
    std::vector<Right> rights;
    // false: the server's schema predates v21 (no idem_rights): nothing is known, may() is true
    // for every right and the database still refuses what the role may not do.
    bool known = false;

    bool may(std::string_view right) const;
    // Why `right` is not granted, for a tooltip or a refusal: "role alice does not hold the
    // requeue right: an administrator grants it with GRANT idem_may_requeue TO alice". Empty
    // when it is granted.
    std::string whyNot(std::string_view right) const;
};

// The first schema version with per-action rights and approvals (0021_action_rights.sql).
constexpr int firstRightsSchemaVersion = 21;

// The rights names in display order.
const std::vector<std::string>& rightNames();
// The role that grants `right` (idem_reader for read, idem_may_<right> else); throws
// std::invalid_argument for another name.
std::string rightRole(std::string_view right);

// The connected role's rights (idem_rights()). A role without any Idem role may not call it:
// every right false. A schema before v21: known false.
// boundMs > 0: gives up after that long, and after half as long waiting for a lock.
Rights readRights(pqxx::connection& conn, const SchemaName& schema, int boundMs = 0);

} // namespace idem
