#include "operations/fencing.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "operations/actions.h"
#include "operations/duration.h"
#include "operations/snapshotreport.h"
#include "operations/stats.h"
#include "operations/tasklist.h"

namespace idem {

std::optional<double> FencingOperation::overrunPercent() const
{
    if (measured <= 0)
        return std::nullopt;
    return 100.0 * static_cast<double>(overruns) / static_cast<double>(measured);
}

bool FencingOperation::leaseTooShort() const
{
    if (!leaseMs)
        return false;
    return overruns > 0 || (runP99Ms && *runP99Ms > static_cast<double>(*leaseMs));
}

const FencingOperation* FencingReading::worst() const
{
    const FencingOperation* out = nullptr;
    for (const auto& op : operations)
        if (op.leaseTooShort()
            && (!out || op.overrunPercent().value_or(0) > out->overrunPercent().value_or(0)
                || (op.overrunPercent() == out->overrunPercent() && op.refused > out->refused)))
            out = &op;
    return out;
}

namespace {

    std::int64_t integer(const nlohmann::json& j, const char* name)
    {
        const auto it = j.find(name);
        return it == j.end() || it->is_null() ? 0 : it->get<std::int64_t>();
    }

    std::optional<double> number(const nlohmann::json& j, const char* name)
    {
        const auto it = j.find(name);
        if (it == j.end() || it->is_null())
            return std::nullopt;
        return it->get<double>();
    }

    void checkArgs(int minutes, int limit)
    {
        if (minutes < 1 || minutes > maxFencingMinutes)
            throw std::invalid_argument("the window must be 1 to 1440 minutes, not " + std::to_string(minutes));
        if (limit < 1 || limit > 1000)
            throw std::invalid_argument("the rows listed must be 1 to 1000, not " + std::to_string(limit));
    }

} // namespace

FencingReading fencingFromJson(const std::string& json, int minutes)
{
    const auto j = nlohmann::json::parse(json);
    FencingReading out;
    out.available = true;
    out.minutes = minutes;
    for (const auto& o : j.at("operations")) {
        FencingOperation op;
        op.operation = o.at("operation").get<std::string>();
        op.takeovers = integer(o, "takeovers");
        op.refused = integer(o, "refused");
        op.runs = integer(o, "runs");
        op.runP50Ms = number(o, "run_p50_ms");
        op.runP95Ms = number(o, "run_p95_ms");
        op.runP99Ms = number(o, "run_p99_ms");
        if (const auto lease = number(o, "lease_ms"))
            op.leaseMs = static_cast<std::int64_t>(*lease);
        op.leases = integer(o, "leases");
        op.measured = integer(o, "measured");
        op.overruns = integer(o, "overruns");
        out.operations.push_back(std::move(op));
    }
    out.operationsOmitted = integer(j, "operations_omitted");
    for (const auto& w : j.at("workers")) {
        FencingWorker x;
        x.worker = w.at("worker").get<std::string>();
        x.operation = w.at("operation").get<std::string>();
        x.takeovers = integer(w, "takeovers");
        x.refused = integer(w, "refused");
        out.workers.push_back(std::move(x));
    }
    out.workersOmitted = integer(j, "workers_omitted");
    for (const auto& m : j.at("minutes"))
        out.perMinute.push_back(
            { m.at(0).get<std::int64_t>(), m.at(1).get<std::int64_t>(), m.at(2).get<std::int64_t>() });
    const auto& t = j.at("totals");
    out.takeovers = integer(t, "takeovers");
    out.refused = integer(t, "refused");
    out.measured = integer(t, "measured");
    out.overruns = integer(t, "overruns");
    return out;
}

FencingReading readFencing(pqxx::transaction_base& tx, const SchemaName& schema, int minutes, int limit)
{
    checkArgs(minutes, limit);
    const std::string fn = schema.qualify("idem_fencing");
    // One statement: whether the schema has it (v31), the server's now, and the document.
    const auto r
        = tx.exec_params("SELECT (extract(epoch FROM now()) * 1000000)::bigint, to_regprocedure($1) IS NOT NULL",
            fn + "(timestamptz, timestamptz, integer)");
    FencingReading out;
    out.minutes = minutes;
    out.asOfUs = r[0][0].as<std::int64_t>();
    if (!r[0][1].as<bool>())
        return out;
    const auto doc
        = tx.exec_params("SELECT " + fn + "(now() - $1 * interval '1 minute', now(), $2)::text", minutes, limit);
    out = fencingFromJson(doc[0][0].as<std::string>(), minutes);
    out.asOfUs = r[0][0].as<std::int64_t>();
    return out;
}

FencingReading readFencing(
    pqxx::connection& conn, const SchemaName& schema, int minutes, int limit, int statementTimeoutMs)
{
    checkArgs(minutes, limit); // before any I/O
    const std::string timeout = std::to_string(statementTimeoutMs);
    try {
        pqxx::work w(conn);
        w.exec_params("SELECT pg_catalog.set_config('statement_timeout', $1, true)", timeout);
        w.exec("SELECT " + schema.qualify("idem_latency_rollup") + "(60)");
        w.commit();
    } catch (const pqxx::sql_error& e) {
        // A standby (or a read-only session) folds nothing: read what the primary folded.
        if (e.sqlstate() != "25006")
            throw;
    }
    pqxx::read_transaction tx(conn);
    boundRead(tx, statementTimeoutMs);
    auto out = readFencing(tx, schema, minutes, limit);
    tx.commit();
    return out;
}

namespace {
    nlohmann::json optionalJson(const std::optional<double>& v)
    {
        return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    }

    std::int64_t micros(const nlohmann::json& j, const char* name)
    {
        const auto us = parseIsoMicros(j.at(name).get<std::string>());
        if (!us)
            throw std::runtime_error(std::string("fencing: ") + name + " is not an ISO 8601 time");
        return *us;
    }
} // namespace

std::string fencingJson(const FencingReading& r)
{
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& o : r.operations)
        ops.push_back({ { "operation", o.operation }, { "takeovers", o.takeovers }, { "refused", o.refused },
            { "runs", o.runs }, { "run_p50_ms", optionalJson(o.runP50Ms) }, { "run_p95_ms", optionalJson(o.runP95Ms) },
            { "run_p99_ms", optionalJson(o.runP99Ms) },
            { "lease_ms", o.leaseMs ? nlohmann::json(*o.leaseMs) : nlohmann::json(nullptr) }, { "leases", o.leases },
            { "measured", o.measured }, { "overruns", o.overruns },
            { "overrun_percent", optionalJson(o.overrunPercent()) }, { "lease_too_short", o.leaseTooShort() },
            { "advice", leaseAdvice(o) } });
    nlohmann::json workers = nlohmann::json::array();
    for (const auto& w : r.workers)
        workers.push_back({ { "worker", w.worker }, { "operation", w.operation }, { "takeovers", w.takeovers },
            { "refused", w.refused } });
    nlohmann::json minutes = nlohmann::json::array();
    for (const auto& m : r.perMinute)
        minutes.push_back(
            { { "minute", formatMicros(m.minute * 1000000) }, { "takeovers", m.takeovers }, { "refused", m.refused } });
    return nlohmann::json {
        { "as_of", formatMicros(r.asOfUs) }, { "minutes", r.minutes }, { "takeovers", r.takeovers },
        { "refused", r.refused }, { "measured", r.measured }, { "overruns", r.overruns }, { "operations", ops },
        { "operations_omitted", r.operationsOmitted }, { "workers", workers }, { "workers_omitted", r.workersOmitted },
        { "per_minute", minutes }
    }.dump();
}

FencingReading fencingFromReportJson(const std::string& json)
{
    try {
        const auto j = nlohmann::json::parse(json);
        FencingReading out;
        out.available = true;
        out.asOfUs = micros(j, "as_of");
        out.minutes = j.at("minutes").get<int>();
        out.takeovers = integer(j, "takeovers");
        out.refused = integer(j, "refused");
        out.measured = integer(j, "measured");
        out.overruns = integer(j, "overruns");
        for (const auto& o : j.at("operations")) {
            FencingOperation op;
            op.operation = o.at("operation").get<std::string>();
            op.takeovers = integer(o, "takeovers");
            op.refused = integer(o, "refused");
            op.runs = integer(o, "runs");
            op.runP50Ms = number(o, "run_p50_ms");
            op.runP95Ms = number(o, "run_p95_ms");
            op.runP99Ms = number(o, "run_p99_ms");
            if (const auto lease = number(o, "lease_ms"))
                op.leaseMs = static_cast<std::int64_t>(*lease);
            op.leases = integer(o, "leases");
            op.measured = integer(o, "measured");
            op.overruns = integer(o, "overruns");
            out.operations.push_back(std::move(op));
        }
        out.operationsOmitted = integer(j, "operations_omitted");
        for (const auto& w : j.at("workers"))
            out.workers.push_back({ w.at("worker").get<std::string>(), w.at("operation").get<std::string>(),
                integer(w, "takeovers"), integer(w, "refused") });
        out.workersOmitted = integer(j, "workers_omitted");
        for (const auto& m : j.at("per_minute"))
            out.perMinute.push_back({ micros(m, "minute") / 1000000, integer(m, "takeovers"), integer(m, "refused") });
        return out;
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("fencing: ") + e.what());
    }
}

std::string fencingReportHtml(const FencingReading& r)
{
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    const auto cell = [](const std::string& v) { return "<td>" + v + "</td>"; };
    std::string h = "<h2>Fencing: " + n(r.refused) + " late calls refused, " + n(r.takeovers)
        + " leases taken over, in the last " + n(r.minutes) + " min</h2>\n"
        + "<p class=\"note\">A late complete, fail, heartbeat or fence refused because another claim had taken the "
          "key over (as the workers' counters recorded them): each is a double execution the fence stopped. The "
          "advice compares the p99 run time (within 3.7 %) with the lease the claims asked for; the percentage "
          "counts the succeeded attempts that ran longer than their lease.</p>\n<table>\n"
          "<tr><th>operation</th><th>takeovers</th><th>refused</th><th>lease advice</th></tr>\n";
    for (const auto& o : r.operations) {
        h += "<tr>" + cell(htmlEscape(o.operation)) + cell(n(o.takeovers)) + cell(n(o.refused))
            + cell((o.leaseTooShort() ? "&#9888; " : "") + htmlEscape(leaseAdvice(o))) + "</tr>\n";
    }
    h += "</table>\n";
    if (!r.workers.empty()) {
        h += "<table>\n<tr><th>worker</th><th>operation</th><th>takeovers</th><th>refused</th></tr>\n";
        for (const auto& w : r.workers)
            h += "<tr>" + cell(htmlEscape(w.worker)) + cell(htmlEscape(w.operation)) + cell(n(w.takeovers))
                + cell(n(w.refused)) + "</tr>\n";
        h += "</table>\n";
    }
    return h;
}

std::string fencingDuration(double ms) { return formatDuration(ms, DurationForm::Precise); }

std::string leaseAdvice(const FencingOperation& op)
{
    std::string out = op.operation + ": ";
    if (!op.runP99Ms) {
        out += "no run time measured";
        if (op.leaseMs)
            out += " against the " + fencingDuration(static_cast<double>(*op.leaseMs)) + " lease";
        return out;
    }
    out += "p99 run time " + fencingDuration(*op.runP99Ms);
    if (!op.leaseMs)
        return out + "; no lease recorded (claims before schema v31)";
    const std::string lease = fencingDuration(static_cast<double>(*op.leaseMs));
    char percent[32] = "";
    const auto p = op.overrunPercent();
    if (p)
        std::snprintf(percent, sizeof percent, "%.1f %%", *p);
    if (*op.runP99Ms > static_cast<double>(*op.leaseMs)) {
        out += " exceeds the " + lease + " lease";
        if (p)
            out += std::string(": ") + percent + " of attempts outlive their lease";
        return out;
    }
    out += " is within the " + lease + " lease";
    if (p)
        out += std::string(": ") + percent + " of attempts outlive it";
    return out;
}

} // namespace idem
