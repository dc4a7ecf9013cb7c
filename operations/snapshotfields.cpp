#include "operations/snapshotfields.h"

#include <pqxx/pqxx>

#include "core/utf8.h"

namespace idem {

namespace {
    std::string html(const std::string& text)
    {
        std::string out;
        for (const char c : displaySafe(text, reportDisplay)) {
            switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
            }
        }
        return out;
    }
} // namespace

std::optional<SnapshotFieldConflictSet> readSnapshotFieldConflicts(pqxx::transaction_base& tx,
    const SchemaName& schema, int windowMinutes, int limit)
{
    const auto fields = schema.qualify("idem_request_fields");
    if (!tx.exec_params("SELECT to_regclass($1) IS NOT NULL", fields)[0][0].as<bool>())
        return std::nullopt;
    SnapshotFieldConflictSet s;
    s.limit = limit;
    const std::string where = " FROM " + schema.qualify("task_idempotency_conflicts") + " c LEFT JOIN " + fields
        + " f USING (idempotency_key) WHERE c.last_fields IS NOT NULL"
          " AND c.last_at >= now() - $1::int * interval '1 minute'";
    s.total = tx.exec_params("SELECT count(*)" + where, windowMinutes)[0][0].as<std::int64_t>();
    const auto r = tx.exec_params("SELECT c.idempotency_key, to_char(c.last_at AT TIME ZONE 'UTC',"
                                  " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), c.n, f.fields::text, f.field_count,"
                                  " c.last_fields::text, c.last_field_count"
            + where + " ORDER BY c.last_at DESC, c.idempotency_key LIMIT $2",
        windowMinutes, limit);
    for (const auto& row : r)
        s.rows.push_back({ row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::int64_t>(),
            compareFields(row[3].is_null() ? std::string() : row[3].as<std::string>(),
                row[4].is_null() ? 0 : row[4].as<int>(), row[5].as<std::string>(),
                row[6].is_null() ? 0 : row[6].as<int>()) });
    return s;
}

nlohmann::json snapshotFieldConflictsJson(const SnapshotFieldConflictSet& s)
{
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : s.rows)
        rows.push_back({ { "key", r.key }, { "last_at", r.lastAt }, { "conflicts", r.n },
            { "fields", fieldComparisonJson(r.fields) } });
    return { { "description",
                 "keys whose last digest conflict in the figures' window came from a request with field fingerprints,"
                 " newest first: which top-level fields differed (names only, never values)" },
        { "limit", s.limit }, { "total", s.total }, { "rows", rows } };
}

SnapshotFieldConflictSet snapshotFieldConflictsFrom(const nlohmann::json& j)
{
    SnapshotFieldConflictSet s;
    s.limit = j.at("limit").get<int>();
    s.total = j.at("total").get<std::int64_t>();
    for (const auto& r : j.at("rows"))
        s.rows.push_back({ r.at("key").get<std::string>(), r.at("last_at").get<std::string>(),
            r.at("conflicts").get<std::int64_t>(), fieldComparisonFromJson(r.at("fields")) });
    return s;
}

std::string snapshotFieldConflictsHtml(const SnapshotFieldConflictSet& s)
{
    std::string h = "<h2>Which fields differed: " + std::to_string(s.total) + " key(s)</h2>\n";
    if (s.rows.empty())
        return h + "<p class=\"note\">No conflict in the window came from a request with field fingerprints.</p>\n";
    h += "<p class=\"note\">The newest " + std::to_string(s.rows.size()) + " of " + std::to_string(s.total)
        + " (at most " + std::to_string(s.limit) + "), compared by keyed fingerprints: names only.</p>\n<table>\n"
          "<tr><th>key</th><th>last conflict (UTC)</th><th>conflicts</th><th>fields</th></tr>\n";
    for (const auto& r : s.rows)
        h += "<tr><td>" + html(r.key.substr(0, 200)) + "</td><td>" + html(r.lastAt) + "</td><td>" + std::to_string(r.n)
            + "</td><td>" + html(fieldComparisonText(r.fields)) + "</td></tr>\n";
    return h + "</table>\n";
}

} // namespace idem
