// idemctl rights: what the connected role may do (schema v21), right by right as the database lists
// them (idem_right_list, operations/rights.h).
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

What the connected role may do, as the database enforces it (schema v21): one line per right, with
the role that grants it and what it allows, as the database lists them (idem_right_list). Each
right is granted through a role of its own (idem_reader for read, idem_may_RIGHT for the others);
idem_operator is a member of most of them (not of read_requests: stored requests hold personal
data). A right counts when the role holds it directly or through roles it inherits from. After
SET ROLE (options=-crole=NAME in the DSN) the rights are the role's, not the login's.

  --dsn DSN         libpq conninfo, URI or service=NAME (default: $IDEM_DSN, then PG* variables)
  --schema S        schema holding the Idem tables (default: idem)
  --json            one JSON document: schema, login, role, known, and per right granted, role
                    and description
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
            j["rights"][x.name] = { { "granted", x.granted }, { "role", x.grantRole }, { "description", x.description } };
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        return ExitOk;
    }
    if (!r.known) {
        std::printf("the schema predates per-action rights (v21): run idemctl migrate\n");
        return ExitFailure;
    }
    std::printf("login %s, acting as %s\n", displaySafe(r.login, 64).c_str(), displaySafe(r.caller, 64).c_str());
    if (r.rights.empty())
        std::printf("  no right: the role holds no Idem role (grant idem_reader, or a right's role)\n");
    for (const auto& x : r.rights)
        std::printf("  %-13s %-4s %-22s %s\n", x.name.c_str(), x.granted ? "yes" : "no", x.grantRole.c_str(),
            displaySafe(x.description, 200).c_str());
    return ExitOk;
}

} // namespace idem::cli
