#include "operations/pauseramp.h"

#include <stdexcept>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "operations/actions.h"
#include "operations/pauses.h"

namespace idem {

namespace {
    std::string micros(const std::string& column) { return updatedAtMicrosSql(column); }

    std::string grouped(std::int64_t n)
    {
        std::string digits = std::to_string(n < 0 ? -n : n), out;
        for (std::size_t i = 0; i < digits.size(); ++i) {
            if (i > 0 && (digits.size() - i) % 3 == 0)
                out += ',';
            out += digits[i];
        }
        return (n < 0 ? "-" : "") + out;
    }
} // namespace

void validatePauseScope(const std::string& tenant, const std::string& operation)
{
    if (!validPauseName(tenant))
        throw std::invalid_argument(
            "the tenant must be '*' or 1 to 64 visible ASCII characters without ':', not '" + tenant + "'");
    if (!validPauseName(operation))
        throw std::invalid_argument(
            "the operation must be '*' or 1 to 64 visible ASCII characters without ':', not '" + operation + "'");
}

std::string PauseForecast::label(std::int64_t n) const { return (dueBounded ? "at least " : "") + grouped(n); }

PauseForecast forecastResume(pqxx::connection& conn, const SchemaName& schema, const std::string& tenant,
    const std::string& operation, int minutes, int cap)
{
    validatePauseScope(tenant, operation);
    if (minutes < 1 || minutes > 1440)
        throw std::invalid_argument("the forecast covers 1 to 1440 minutes, not " + std::to_string(minutes));
    if (cap < 1 || cap > 1000000)
        throw std::invalid_argument("the forecast reads 1 to 1000000 retry entries, not " + std::to_string(cap));
    pqxx::read_transaction t(conn);
    t.exec("SELECT pg_catalog.set_config('search_path', 'pg_catalog', true)");
    const auto r = t.exec_params("SELECT " + micros("f.paused_at") + ", " + micros("f.server_now")
            + ", f.minutes,"
              " (SELECT COALESCE(jsonb_agg(jsonb_build_array(round(extract(epoch FROM (e ->> 'minute')::timestamptz)"
              " * 1000000)::bigint, (e ->> 'due')::bigint)), '[]'::jsonb)::text"
              "    FROM jsonb_array_elements(f.due_by_minute) e),"
              " f.due_now, f.due_total, f.due_bounded, f.scanned, f.turned_away, "
            + micros("f.turned_away_since") + ", f.total FROM " + schema.qualify("idem_pause_forecast")
            + "($1, $2, $3, $4) f",
        tenant, operation, minutes, cap);
    t.commit();
    const auto row = r.at(0);
    PauseForecast out;
    out.tenant = tenant;
    out.operation = operation;
    out.pausedAtUs = row[0].as<std::int64_t>();
    out.serverNowUs = row[1].as<std::int64_t>();
    out.minutes = row[2].as<int>();
    for (const auto& m : nlohmann::json::parse(row[3].as<std::string>()))
        out.dueByMinute.emplace_back(m.at(0).get<std::int64_t>(), m.at(1).get<std::int64_t>());
    out.dueNow = row[4].as<std::int64_t>();
    out.dueTotal = row[5].as<std::int64_t>();
    out.dueBounded = row[6].as<bool>();
    out.scanned = row[7].as<std::int64_t>();
    out.turnedAway = row[8].as<std::int64_t>();
    out.turnedAwaySinceUs = row[9].as<std::int64_t>();
    out.total = row[10].as<std::int64_t>();
    return out;
}

std::vector<int> parseRampSteps(const std::string& text)
{
    std::vector<int> out;
    std::size_t at = 0;
    while (at <= text.size()) {
        const auto comma = std::min(text.find(',', at), text.size());
        const std::string part = text.substr(at, comma - at);
        if (part.empty() || part.size() > 3 || part.find_first_not_of("0123456789") != std::string::npos)
            throw std::invalid_argument("ramp steps are percentages separated by commas (10,25,50,100), not '" + text + "'");
        out.push_back(std::stoi(part));
        at = comma + 1;
    }
    return out;
}

void validateRampRequest(const RampRequest& r)
{
    validatePauseScope(r.tenant, r.operation);
    validateReasonAndActor(r.reason, r.actor);
    if (r.steps.size() < 2 || r.steps.size() > 20)
        throw std::invalid_argument("a ramp has 2 to 20 steps, not " + std::to_string(r.steps.size()));
    for (std::size_t i = 0; i < r.steps.size(); ++i)
        if (r.steps[i] < 1 || r.steps[i] > 100 || (i > 0 && r.steps[i] <= r.steps[i - 1]))
            throw std::invalid_argument("a ramp's steps are rising percentages from 1 to 100");
    if (r.steps.back() != 100)
        throw std::invalid_argument("a ramp's last step admits 100 % of keys, not " + std::to_string(r.steps.back()));
    if (r.stepMs < 1000 || r.stepMs > 86400000)
        throw std::invalid_argument("a ramp step lasts 1 s to 24 h, not " + std::to_string(r.stepMs) + " ms");
    if (!(r.abortAbove > 0 && r.abortAbove <= 1))
        throw std::invalid_argument("the abort threshold is a failure rate above 0 and at most 1");
    if (r.minClaims < 1 || r.minClaims > 1000000)
        throw std::invalid_argument("a step needs 1 to 1000000 admitted claims before it may abort");
    if (r.lockTimeoutMs < 1)
        throw std::invalid_argument("the lock timeout must be positive");
}

RampChange startRamp(pqxx::connection& conn, const SchemaName& schema, const RampRequest& request)
{
    validateRampRequest(request);
    std::string steps = "{";
    for (std::size_t i = 0; i < request.steps.size(); ++i)
        steps += (i ? "," : "") + std::to_string(request.steps[i]);
    steps += "}";
    pqxx::work w(conn);
    w.exec_params("SELECT pg_catalog.set_config('lock_timeout', $1, true),"
                  " pg_catalog.set_config('search_path', 'pg_catalog', true)",
        std::to_string(request.lockTimeoutMs));
    pqxx::result r;
    try {
        r = w.exec_params("SELECT r.audit_id, " + micros("r.started_at") + ", " + micros("r.ends_at") + " FROM "
                + schema.qualify("idem_resume_ramp") + "($1, $2, $3::integer[], $4, $5, $6, $7, $8) r",
            request.tenant, request.operation, steps, request.stepMs, request.abortAbove, request.minClaims,
            request.reason, request.actor.empty() ? localActor() : request.actor);
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() == "ID002")
            throw PauseNotFound("there is no pause of tenant '" + request.tenant + "' and operation '"
                + request.operation + "' (a ramp resumes a pause with the tenant and operation it was set with, '*'"
                                      " included); nothing changed");
        throw;
    }
    w.commit();
    RampChange out;
    out.auditId = r.at(0)[0].as<std::int64_t>();
    out.startedAtUs = r.at(0)[1].as<std::int64_t>();
    out.endsAtUs = r.at(0)[2].as<std::int64_t>();
    return out;
}

} // namespace idem
