#include "operations/rights.h"

#include <algorithm>

#include <pqxx/pqxx>

namespace idem {

std::string rightRole(std::string_view right)
{
    return right == "read" ? std::string("idem_reader") : "idem_may_" + std::string(right);
}

bool Rights::may(std::string_view right) const
{
    if (!known)
        return true;
    const auto it = std::find_if(rights.begin(), rights.end(), [&](const Right& r) { return r.name == right; });
    return it != rights.end() && it->granted;
}

std::string Rights::whyNot(std::string_view right) const
{
    if (may(right))
        return {};
    const std::string role = caller.empty() ? login : caller;
    const auto it = std::find_if(rights.begin(), rights.end(), [&](const Right& r) { return r.name == right; });
    return "role " + role + " does not hold the " + std::string(right) + " right: an administrator grants it with GRANT "
        + (it != rights.end() ? it->grantRole : rightRole(right)) + " TO " + role;
}

Rights readRights(pqxx::connection& conn, const SchemaName& schema, int boundMs)
{
    Rights out;
    try {
        pqxx::read_transaction t(conn);
        if (boundMs > 0)
            t.exec_params("SELECT pg_catalog.set_config('statement_timeout', $1, true),"
                          "       pg_catalog.set_config('lock_timeout', $2, true)",
                std::to_string(boundMs), std::to_string(boundMs / 2));
        const auto r = t.exec("SELECT r.login, r.caller, r.right_name, r.grant_role, r.granted, r.description FROM "
            + schema.qualify("idem_rights") + "() r");
        t.commit();
        for (const auto& row : r) {
            out.login = row[0].as<std::string>();
            out.caller = row[1].as<std::string>();
            out.rights.push_back(
                { row[2].as<std::string>(), row[3].as<std::string>(), row[4].as<bool>(), row[5].as<std::string>() });
        }
        out.known = true;
        return out;
    } catch (const pqxx::undefined_function&) {
        // A schema before v21: nothing known.
    } catch (const pqxx::insufficient_privilege&) {
        // No Idem role at all (not even the schema's USAGE): no right.
        out.known = true;
    }
    pqxx::read_transaction t(conn);
    const auto r = t.exec("SELECT session_user::text, current_user::text");
    t.commit();
    out.login = r[0][0].as<std::string>();
    out.caller = r[0][1].as<std::string>();
    return out;
}

} // namespace idem
