#include "operations/latency.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include <pqxx/pqxx>

#include "core/key.h"
#include "operations/actions.h"

namespace idem {

namespace {
    constexpr int maxWindowMinutes = 31 * 24 * 60;

    std::string micros(const std::string& column) { return updatedAtMicrosSql(column); }

    // What the reads call besides the functions they name with the schema (extract, *, +,
    // to_timestamp, array_to_string) resolves in pg_catalog for the rest of the transaction, never in
    // a schema on the caller's path that another role may write (public before PostgreSQL 15;
    // tst_lowroles plants there).
    void catalogPath(pqxx::transaction_base& tx)
    {
        tx.exec("SELECT pg_catalog.set_config('search_path', 'pg_catalog', true)");
    }

    void checkQuery(const LatencyQuery& q)
    {
        if (q.minutes < 1 || q.minutes > maxWindowMinutes)
            throw std::invalid_argument("the window must be 1 to 44640 minutes (31 days), not " + std::to_string(q.minutes));
        if (!q.tenant.empty() && !isKeyName(q.tenant))
            throw std::invalid_argument("a tenant is 1 to 64 visible ASCII characters without ':', not '" + q.tenant + "'");
        if (!q.operation.empty() && !isKeyName(q.operation))
            throw std::invalid_argument(
                "an operation is 1 to 64 visible ASCII characters without ':', not '" + q.operation + "'");
    }

    LatencyKind kindFrom(const pqxx::field& f)
    {
        const auto k = latencyKindFromName(f.as<std::string>());
        if (!k)
            throw std::runtime_error("the server reported an unknown latency kind '" + f.as<std::string>() + "'");
        return *k;
    }

    // The histograms of the window with (when percentiles) idem_latency_percentiles' figures.
    std::vector<LatencyHistogram> readHistograms(pqxx::transaction_base& tx, const SchemaName& schema,
        std::int64_t fromUs, std::int64_t toUs, const LatencyQuery& q, bool percentiles)
    {
        const std::string args = "(" + microsParamSql(1) + ", " + microsParamSql(2) + ", $3, $4, $5, $6)";
        std::string sql = "SELECT " + micros("h.bucket") + ", h.operation, h.kind, h.n, h.total::float8,"
            " array_to_string(h.slots, ','), array_to_string(h.counts, ',')";
        if (percentiles)
            sql += ", p.mean, p.p50, p.p95, p.p99 FROM " + schema.qualify("idem_latency_histogram") + args + " h JOIN "
                + schema.qualify("idem_latency_percentiles") + args
                + " p ON p.bucket IS NOT DISTINCT FROM h.bucket AND p.operation = h.operation AND p.kind = h.kind";
        else
            sql += " FROM " + schema.qualify("idem_latency_histogram") + args + " h";
        sql += " ORDER BY h.bucket NULLS FIRST, h.operation, h.kind";
        const auto optional = [](const std::string& s) { return s.empty() ? std::optional<std::string>() : std::optional(s); };
        const auto r = tx.exec_params(
            sql, fromUs, toUs, optional(q.tenant), optional(q.operation), q.byOperation, q.perMinute);
        std::vector<LatencyHistogram> out;
        for (const auto& row : r) {
            LatencyHistogram h;
            if (!row[0].is_null())
                h.minuteUs = row[0].as<std::int64_t>();
            h.operation = row[1].as<std::string>();
            h.kind = kindFrom(row[2]);
            h.count = row[3].as<std::int64_t>();
            h.total = row[4].as<double>();
            h.slotCounts = parseSlotCounts(row[5].as<std::string>(), row[6].as<std::string>());
            if (percentiles) {
                h.mean = row[7].as<double>();
                h.p50 = row[8].as<double>();
                h.p95 = row[9].as<double>();
                h.p99 = row[10].as<double>();
            }
            out.push_back(std::move(h));
        }
        return out;
    }
} // namespace

const char* latencyKindName(LatencyKind kind)
{
    switch (kind) {
    case LatencyKind::Run:
        return "run";
    case LatencyKind::TimeToSuccess:
        return "tts";
    case LatencyKind::Attempts:
        return "attempts";
    }
    return "run";
}

std::optional<LatencyKind> latencyKindFromName(const std::string& name)
{
    for (const auto k : { LatencyKind::Run, LatencyKind::TimeToSuccess, LatencyKind::Attempts })
        if (name == latencyKindName(k))
            return k;
    return std::nullopt;
}

double latencySlotUpperUs(int slot) { return std::pow(10.0, static_cast<double>(slot + 1) / latencySlotsPerDecade); }

std::optional<double> latencyQuantile(
    LatencyKind kind, const std::vector<std::pair<int, std::int64_t>>& slotCounts, double q)
{
    if (!(q > 0 && q <= 1))
        return std::nullopt;
    std::int64_t total = 0;
    for (const auto& [slot, n] : slotCounts)
        total += n;
    if (total <= 0)
        return std::nullopt;
    const auto rank = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(total)));
    std::int64_t seen = 0;
    for (const auto& [slot, n] : slotCounts) {
        seen += n;
        if (seen >= rank)
            return kind == LatencyKind::Attempts
                ? static_cast<double>(slot)
                : std::pow(10.0, (slot + 0.5) / latencySlotsPerDecade) / 1000.0;
    }
    return std::nullopt;
}

std::vector<std::pair<int, std::int64_t>> parseSlotCounts(const std::string& slots, const std::string& counts)
{
    std::vector<std::pair<int, std::int64_t>> out;
    std::istringstream s(slots), c(counts);
    std::string a, b;
    while (std::getline(s, a, ',') && std::getline(c, b, ','))
        out.emplace_back(std::stoi(a), std::stoll(b));
    return out;
}

void mergeSlotCounts(std::vector<std::pair<int, std::int64_t>>& into, const std::vector<std::pair<int, std::int64_t>>& from)
{
    std::vector<std::pair<int, std::int64_t>> out;
    out.reserve(into.size() + from.size());
    auto a = into.begin();
    auto b = from.begin();
    while (a != into.end() || b != from.end()) {
        if (b == from.end() || (a != into.end() && a->first < b->first))
            out.push_back(*a++);
        else if (a == into.end() || b->first < a->first)
            out.push_back(*b++);
        else {
            out.emplace_back(a->first, a->second + b->second);
            ++a;
            ++b;
        }
    }
    into = std::move(out);
}

int rollupLatency(pqxx::transaction_base& tx, const SchemaName& schema, int maxMinutes)
{
    if (maxMinutes < 1 || maxMinutes > 1440)
        throw std::invalid_argument("a roll-up folds 1 to 1440 minutes, not " + std::to_string(maxMinutes));
    return tx.exec_params("SELECT " + schema.qualify("idem_latency_rollup") + "($1)", maxMinutes)[0][0].as<int>();
}

int rollupLatency(pqxx::connection& conn, const SchemaName& schema, int maxMinutes)
{
    if (maxMinutes < 1 || maxMinutes > 1440) // before any I/O
        throw std::invalid_argument("a roll-up folds 1 to 1440 minutes, not " + std::to_string(maxMinutes));
    pqxx::work w(conn);
    const int n = rollupLatency(w, schema, maxMinutes);
    w.commit();
    return n;
}

std::int64_t latencyFoldedToUs(pqxx::transaction_base& tx, const SchemaName& schema)
{
    catalogPath(tx);
    return tx.exec("SELECT " + micros("s.folded_to") + " FROM " + schema.qualify("idem_latency_state") + " s")
        .at(0)[0]
        .as<std::int64_t>();
}

LatencyReport readLatency(pqxx::connection& conn, const SchemaName& schema, const LatencyQuery& query)
{
    checkQuery(query); // before any I/O
    const int folded = rollupLatency(conn, schema);
    pqxx::read_transaction tx(conn);
    LatencyReport out = readLatency(tx, schema, query);
    tx.commit();
    out.minutesFolded = folded;
    return out;
}

LatencyReport readLatency(pqxx::transaction_base& tx, const SchemaName& schema, const LatencyQuery& query)
{
    checkQuery(query);
    catalogPath(tx);
    LatencyReport out;
    const auto state = tx.exec("SELECT " + micros("s.folded_to") + ", " + micros("s.folded_at") + ", "
        + micros("clock_timestamp()") + " FROM " + schema.qualify("idem_latency_state") + " s").at(0);
    out.toUs = state[0].as<std::int64_t>();
    if (!state[1].is_null())
        out.foldedAtUs = state[1].as<std::int64_t>();
    out.serverNowUs = state[2].as<std::int64_t>();
    out.fromUs = out.toUs - static_cast<std::int64_t>(query.minutes) * 60'000'000;
    out.histograms = readHistograms(tx, schema, out.fromUs, out.toUs, query, true);
    return out;
}

std::vector<LatencyHistogram> readLatencyHistograms(
    pqxx::transaction_base& tx, const SchemaName& schema, std::int64_t fromUs, std::int64_t toUs)
{
    if (toUs < fromUs || toUs - fromUs > static_cast<std::int64_t>(maxWindowMinutes) * 60'000'000)
        throw std::invalid_argument("a histogram window is 0 to 31 days long");
    catalogPath(tx);
    return readHistograms(tx, schema, fromUs, toUs, LatencyQuery {}, false);
}

} // namespace idem
