#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem {

// Per-action rights (schema v21): each right is granted through a NOLOGIN role of its own, and the
// database enforces them. Which rights there are, the role that grants each, whether
// idem_operator holds it and what it allows are one list in the database, idem_right_list()
// (resources/sql/functions/idem_right_list.sql); this side reads it through idem_rights() and
// names no right but those its callers check. No Qt.
struct Right {
    std::string name; // as the list names it: read, requeue, ...
    std::string grantRole; // the role that grants it
    bool granted = false;
    std::string description; // what it allows
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

// The role that grants `right`, by the rule the list follows (idem_reader for read,
// idem_may_<right> for the others), for words written without the list at hand (a refusal).
std::string rightRole(std::string_view right);

// The connected role's rights (idem_rights()), in the list's order. A role without any Idem role
// may not call it: known, and no right listed (may() is false for every one). A schema before
// v21: known false.
// boundMs > 0: gives up after that long, and after half as long waiting for a lock.
Rights readRights(pqxx::connection& conn, const SchemaName& schema, int boundMs = 0);

} // namespace idem
