#include "core/workerversion.h"

#include <stdexcept>

#include <pqxx/pqxx>
#include <unistd.h>

#include "core/connection.h"
#include "core/taskstore.h"
#include "core/utf8.h"

namespace idem {

namespace {
    constexpr std::size_t maxVersionChars = 200;

    // Unicode's space separators (Zs) besides U+0020, which the rule refuses at either end too.
    bool isSpace(char32_t cp)
    {
        return cp == 0x20 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F
            || cp == 0x205F || cp == 0x3000;
    }
} // namespace

const char* versionReportOutcomeName(VersionReport::Outcome outcome)
{
    switch (outcome) {
    case VersionReport::Outcome::Unchanged:
        return "unchanged";
    case VersionReport::Outcome::NewWorker:
        return "new_worker";
    case VersionReport::Outcome::Changed:
        return "changed";
    case VersionReport::Outcome::NotRecorded:
        return "not_recorded";
    }
    return "unchanged";
}

void validateVersionText(const std::string& text, const char* what)
{
    if (const auto problem = utf8Problem(text))
        throw std::invalid_argument(std::string("a ") + what + " must be UTF-8: " + *problem);
    const std::u32string cps = utf8ToCodePoints(text);
    if (cps.empty() || cps.size() > maxVersionChars)
        throw std::invalid_argument(std::string("a ") + what + " must be 1 to " + std::to_string(maxVersionChars)
            + " characters, not " + std::to_string(cps.size()));
    bool visible = false;
    for (const char32_t cp : cps) {
        if (cp == 0 || isDisplayControl(cp))
            throw std::invalid_argument(std::string("a ") + what + " must not hold a control or format character: '"
                + quoteForMessage(text) + "'");
        visible = visible || !isSpace(cp);
    }
    if (!visible || isSpace(cps.front()) || isSpace(cps.back()))
        throw std::invalid_argument(std::string("a ") + what
            + " needs a visible character and no leading or trailing space: '" + quoteForMessage(text) + "'");
}

VersionReport reportVersion(
    pqxx::connection& conn, const SchemaName& schema, const std::string& worker, const std::string& version)
{
    validateVersionText(worker, "worker name");
    validateVersionText(version, "version");
    pqxx::result r;
    try {
        pqxx::nontransaction w(conn); // one statement: its own transaction
        r = w.exec_params(
            "SELECT outcome, previous_version, deploy_id FROM " + schema.qualify("idem_report_version") + "($1, $2)",
            worker, version);
    } catch (const pqxx::broken_connection& e) {
        throw DatabaseUnavailable(describeLostConnection(e.what()));
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() == sqlstate::InvalidArgument)
            throw std::invalid_argument(e.what());
        throw;
    }
    const auto row = r.at(0);
    VersionReport out;
    const std::string outcome = row[0].as<std::string>();
    if (outcome == "unchanged")
        out.outcome = VersionReport::Outcome::Unchanged;
    else if (outcome == "new_worker")
        out.outcome = VersionReport::Outcome::NewWorker;
    else if (outcome == "changed")
        out.outcome = VersionReport::Outcome::Changed;
    else if (outcome == "not_recorded")
        out.outcome = VersionReport::Outcome::NotRecorded;
    else
        throw std::runtime_error(
            "idem_report_version returned an unknown outcome '" + quoteForMessage(outcome) + "'; is the schema newer?");
    if (!row[1].is_null())
        out.previousVersion = row[1].as<std::string>();
    if (!row[2].is_null())
        out.deployId = row[2].as<std::int64_t>();
    return out;
}

std::string hostWorkerName(const std::string& service)
{
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
        return "unknown-host/" + service;
    std::string h(host);
    // Host names are ASCII; keep the service whole and cut the host so the name fits.
    const std::size_t room = service.size() + 1 < maxVersionChars ? maxVersionChars - service.size() - 1 : 0;
    if (h.size() > room)
        h.resize(room);
    return h + "/" + service;
}

} // namespace idem
