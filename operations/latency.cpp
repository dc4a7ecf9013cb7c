#include "operations/latency.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include <pqxx/pqxx>

#include "core/key.h"
#include "operations/actions.h"
#include "operations/readframe.h"

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


    // The histograms of the window with (when percentiles) idem_latency_percentiles' figures;
    // `window` is the two instants' SQL, then $n.. the query's four values.
    std::string histogramsSql(const SchemaName& schema, const std::string& window, int n, bool percentiles)
    {
        const std::string args = "(" + window + ", $" + std::to_string(n) + ", $" + std::to_string(n + 1) + ", $"
            + std::to_string(n + 2) + ", $" + std::to_string(n + 3) + ")";
        std::string sql = "SELECT " + micros("h.bucket") + ", h.operation, h.kind, h.n, h.total::float8,"
            " array_to_string(h.slots, ','), array_to_string(h.counts, ',')";
        if (percentiles)
            sql += ", p.mean, p.p50, p.p95, p.p99 FROM " + schema.qualify("idem_latency_histogram") + args + " h JOIN "
                + schema.qualify("idem_latency_percentiles") + args
                + " p ON p.bucket IS NOT DISTINCT FROM h.bucket AND p.operation = h.operation AND p.kind = h.kind";
        else
            sql += " FROM " + schema.qualify("idem_latency_histogram") + args + " h";
        sql += " ORDER BY h.bucket NULLS FIRST, h.operation, h.kind";
        return sql;
    }

    std::optional<std::string> optional(const std::string& s)
    {
        return s.empty() ? std::optional<std::string>() : std::optional(s);
    }

    template <typename Result> std::vector<LatencyHistogram> histogramsFrom(const Result& r, bool percentiles)
    {
        std::vector<LatencyHistogram> out;
        for (std::size_t i = 0; i < r.size(); ++i) {
            const auto row = r[i];
            LatencyHistogram h;
            if (!row[0].is_null())
                h.minuteUs = row[0].template as<std::int64_t>();
            h.operation = row[1].template as<std::string>();
            const auto kind = row[2].template as<std::string>();
            const auto k = latencyKindFromName(kind);
            if (!k)
                throw std::runtime_error("the server reported an unknown latency kind '" + kind + "'");
            h.kind = *k;
            h.count = row[3].template as<std::int64_t>();
            h.total = row[4].template as<double>();
            h.slotCounts = parseSlotCounts(row[5].template as<std::string>(), row[6].template as<std::string>());
            if (percentiles) {
                h.mean = row[7].template as<double>();
                h.p50 = row[8].template as<double>();
                h.p95 = row[9].template as<double>();
                h.p99 = row[10].template as<double>();
            }
            out.push_back(std::move(h));
        }
        return out;
    }

    std::vector<LatencyHistogram> readHistograms(pqxx::transaction_base& tx, const SchemaName& schema,
        std::int64_t fromUs, std::int64_t toUs, const LatencyQuery& q, bool percentiles)
    {
        const auto r = tx.exec_params(histogramsSql(schema, microsParamSql(1) + ", " + microsParamSql(2), 3, percentiles),
            fromUs, toUs, optional(q.tenant), optional(q.operation), q.byOperation, q.perMinute);
        return histogramsFrom(r, percentiles);
    }

    std::string stateSql(const SchemaName& schema)
    {
        return "SELECT " + micros("s.folded_to") + ", " + micros("s.folded_at") + ", " + micros("clock_timestamp()")
            + " FROM " + schema.qualify("idem_latency_state") + " s";
    }

    template <typename Row> void stateFrom(const Row& state, const LatencyQuery& query, LatencyReport& out)
    {
        out.toUs = state[0].template as<std::int64_t>();
        if (!state[1].is_null())
            out.foldedAtUs = state[1].template as<std::int64_t>();
        out.serverNowUs = state[2].template as<std::int64_t>();
        out.fromUs = out.toUs - static_cast<std::int64_t>(query.minutes) * 60'000'000;
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
    stateFrom(tx.exec(stateSql(schema)).at(0), query, out);
    out.histograms = readHistograms(tx, schema, out.fromUs, out.toUs, query, true);
    return out;
}

LatencyView readLatencyView(pqxx::connection& conn, const SchemaName& schema, const LatencyQuery& perMinute,
    const LatencyQuery& byOperation, int rollupMinutes, int statementTimeoutMs)
{
    checkQuery(perMinute); // before any I/O
    checkQuery(byOperation);
    if (rollupMinutes < 0 || rollupMinutes > 1440)
        throw std::invalid_argument("a roll-up folds 1 to 1440 minutes, not " + std::to_string(rollupMinutes));
    LatencyView out;
    const std::string timeout = std::to_string(statementTimeoutMs);
    if (!directReads(conn)) {
        // Statement by statement, as a transaction pooler needs it: each transaction its own limit.
        if (rollupMinutes > 0) {
            pqxx::work w(conn);
            w.exec_params("SELECT pg_catalog.set_config('statement_timeout', $1, true)", timeout);
            out.minutesFolded = rollupLatency(w, schema, rollupMinutes);
            w.commit();
        }
        pqxx::read_transaction tx(conn);
        tx.exec_params("SELECT pg_catalog.set_config('statement_timeout', $1, true)", timeout);
        out.perMinute = readLatency(tx, schema, perMinute);
        out.byOperation = readLatency(tx, schema, byOperation);
        tx.commit();
        return out;
    }
    // One round trip: the roll-up's transaction, then one REPEATABLE READ snapshot for the state
    // and both reports, whose window is the state's folded_to less the minutes (bound), as the
    // statement by statement form computes it.
    FrameTransaction write;
    write.readOnly = false;
    write.catalogPath = false;
    write.statementTimeoutMs = statementTimeoutMs;
    FrameTransaction read;
    read.repeatableRead = true;
    read.statementTimeoutMs = statementTimeoutMs;
    ReadFrame frame(rollupMinutes > 0 ? write : read);
    std::size_t rolled = 0;
    if (rollupMinutes > 0) {
        rolled = frame.add("SELECT " + schema.qualify("idem_latency_rollup") + "($1)", rollupMinutes);
        frame.begin(read);
    }
    const std::size_t state = frame.add(stateSql(schema));
    const std::string folded = "(SELECT s.folded_to FROM " + schema.qualify("idem_latency_state") + " s)";
    const std::string window = "(" + folded + " - $1::bigint * interval '1 minute'), " + folded;
    std::size_t reports[2];
    int i = 0;
    for (const auto* q : { &perMinute, &byOperation })
        reports[i++] = frame.add(histogramsSql(schema, window, 2, true), q->minutes, optional(q->tenant),
            optional(q->operation), q->byOperation, q->perMinute);
    const auto r = frame.run(conn);
    if (rollupMinutes > 0)
        out.minutesFolded = r[rolled].at(0)[0].as<int>();
    stateFrom(r[state].at(0), perMinute, out.perMinute);
    stateFrom(r[state].at(0), byOperation, out.byOperation);
    out.perMinute.histograms = histogramsFrom(r[reports[0]], true);
    out.byOperation.histograms = histogramsFrom(r[reports[1]], true);
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
