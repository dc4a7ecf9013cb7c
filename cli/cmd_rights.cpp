// idemctl rights: what the connected role may do (schema v21, operations/rights.h).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/connection.h"
#include "core/utf8.h"
#include "operations/rights.h"

namespace idem::cli {

namespace {
    constexpr const char* rightsHelp = R"(Usage: idemctl rights [--json]

What the connected role may do, as the database enforces it (schema v21). Each right is granted
through a role of its own; idem_operator is a member of all of them but read_requests:
  read     idem_reader       the console, status, tasks, audit, jobs
  requeue  idem_may_requeue  requeue tasks; start, run and cancel requeue jobs
  release  idem_may_release  release leases; release jobs
  fail     idem_may_fail     mark tasks failed; fail jobs
  pause    idem_may_pause    pause and resume claims
  purge    idem_may_purge    purge, and change the retention policy
  approve  idem_may_approve  approve another login's job (and turn it down by cancelling it)
  read_requests  idem_may_read_requests  read stored requests (personal data; schema v25,
           granted on its own: idem_operator does not hold it)
A right counts when the role holds it directly or through roles it inherits from. After SET ROLE
(options=-crole=NAME in the DSN) the rights are the role's, not the login's.
)";
} // namespace

int runRights(const std::vector<std::string>& argv)
{
    Args args(argv, { "dsn", "schema" }, { "help", "json" });
    if (args.flag("help")) {
        std::cout << rightsHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("rights takes no argument");
    const SchemaName schema(args.valueOr("schema", SchemaName::defaultName));
    auto conn = connect(dsnFrom(args), ConnectOptions { "idemctl rights" });
    const Rights r = readRights(*conn, schema);
    if (args.flag("json")) {
        nlohmann::json j = { { "schema", schema.name() }, { "login", r.login }, { "role", r.caller },
            { "known", r.known }, { "rights", nlohmann::json::object() } };
        for (const auto& x : r.rights)
            j["rights"][x.name] = { { "granted", x.granted }, { "role", x.grantRole } };
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        return ExitOk;
    }
    if (!r.known) {
        std::printf("the schema predates per-action rights (v21): run idemctl migrate\n");
        return ExitFailure;
    }
    std::printf("login %s, acting as %s\n", displaySafe(r.login, 64).c_str(), displaySafe(r.caller, 64).c_str());
    for (const auto& x : r.rights)
        std::printf("  %-13s %-4s (%s)\n", x.name.c_str(), x.granted ? "yes" : "no", x.grantRole.c_str());
    return ExitOk;
}

} // namespace idem::cli
