#include "operations/redriveview.h"

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "operations/actions.h"

namespace idem {

namespace {
    std::optional<std::int64_t> optionalInt(const pqxx::field& f)
    {
        return f.is_null() ? std::nullopt : std::optional<std::int64_t>(f.as<std::int64_t>());
    }
    std::string text(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }
    std::string us(const std::string& column) { return updatedAtMicrosSql(column); }
} // namespace

std::int64_t RedriveOutcomes::total() const
{
    std::int64_t n = queued + running + succeeded + failed + conflict + gone;
    for (const auto& [state, count] : other)
        n += count;
    return n;
}

void RedriveOutcomes::add(const std::string& state, std::int64_t n)
{
    if (state == "queued")
        queued += n;
    else if (state == "running")
        running += n;
    else if (state == "succeeded")
        succeeded += n;
    else if (state == "failed")
        failed += n;
    else if (state == "conflict")
        conflict += n;
    else if (state == "gone")
        gone += n;
    else
        other[state] += n;
}

std::vector<RedriveStatus> readRedriveStatus(pqxx::connection& conn, const SchemaName& schema,
    const std::optional<std::string>& tenant, const std::optional<std::string>& operation)
{
    pqxx::read_transaction t(conn);
    const auto r = t.exec_params("SELECT s.tenant, s.operation, s.registered, s.online_workers,"
                                 " pg_catalog.array_to_json(s.workers)::text, "
            + us("s.last_seen") + ", s.queued, s.running FROM " + schema.qualify("idem_redrive_status")
            + "($1, $2) s ORDER BY s.tenant, s.operation",
        tenant ? tenant->c_str() : nullptr, operation ? operation->c_str() : nullptr);
    t.commit();
    std::vector<RedriveStatus> out;
    for (const auto& row : r) {
        RedriveStatus s;
        s.tenant = row[0].as<std::string>();
        s.operation = row[1].as<std::string>();
        s.registered = !row[2].is_null() && row[2].as<bool>();
        s.onlineWorkers = row[3].is_null() ? 0 : row[3].as<int>();
        if (!row[4].is_null())
            for (const auto& w : nlohmann::json::parse(row[4].as<std::string>()))
                if (w.is_string())
                    s.workers.push_back(w.get<std::string>());
        s.lastSeenUs = optionalInt(row[5]);
        s.queued = row[6].is_null() ? 0 : row[6].as<std::int64_t>();
        s.running = row[7].is_null() ? 0 : row[7].as<std::int64_t>();
        out.push_back(std::move(s));
    }
    return out;
}

std::map<std::int64_t, RedriveOutcomes> readRedriveOutcomes(
    pqxx::connection& conn, const SchemaName& schema, const std::vector<std::int64_t>& jobIds)
{
    std::map<std::int64_t, RedriveOutcomes> out;
    if (jobIds.empty())
        return out;
    nlohmann::json ids = nlohmann::json::array();
    for (auto id : jobIds)
        ids.push_back(id);
    pqxx::read_transaction t(conn);
    const auto r
        = t.exec_params("SELECT j.id, o.state, o.n FROM (SELECT pg_catalog.jsonb_array_elements_text($1::jsonb)"
                        "::bigint AS id) j CROSS JOIN LATERAL "
                + schema.qualify("idem_redrive_outcomes") + "(j.id) o",
            ids.dump());
    t.commit();
    for (auto id : jobIds)
        out[id];
    for (const auto& row : r)
        out[row[0].as<std::int64_t>()].add(row[1].as<std::string>(), row[2].as<std::int64_t>());
    return out;
}

KeyRedrive readKeyRedrive(pqxx::connection& conn, const SchemaName& schema, const std::string& key)
{
    KeyRedrive out;
    pqxx::read_transaction t(conn);
    const auto items = t.exec_params("SELECT i.item_id, i.job_id, i.state, i.worker, i.tries, " + us("i.requested_at")
            + ", i.requested_role, i.requested_actor, " + us("i.taken_at") + ", " + us("i.finished_at")
            + ", i.detail FROM " + schema.qualify("idem_redrive_items_of") + "($1) i",
        key);
    for (const auto& row : items) {
        RedriveItem i;
        i.id = row[0].as<std::int64_t>();
        i.jobId = optionalInt(row[1]);
        i.state = row[2].as<std::string>();
        i.worker = text(row[3]);
        i.tries = row[4].is_null() ? 0 : row[4].as<int>();
        i.requestedAtUs = row[5].is_null() ? 0 : row[5].as<std::int64_t>();
        const std::string role = text(row[6]), actor = text(row[7]);
        i.requestedBy = actor.empty() ? role : role + " (" + actor + ")";
        i.takenAtUs = optionalInt(row[8]);
        i.finishedAtUs = optionalInt(row[9]);
        i.detail = text(row[10]);
        out.items.push_back(std::move(i));
    }
    const auto stored = t.exec_params("SELECT s.stored, s.bytes, " + us("s.stored_at") + ", s.request::text FROM "
            + schema.qualify("idem_stored_request") + "($1) s",
        key);
    t.commit();
    if (!stored.empty()) {
        const auto row = stored[0];
        out.request.stored = !row[0].is_null() && row[0].as<bool>();
        out.request.bytes = row[1].is_null() ? 0 : row[1].as<std::int64_t>();
        out.request.storedAtUs = optionalInt(row[2]);
        if (!row[3].is_null())
            out.request.content = row[3].as<std::string>();
    }
    return out;
}

} // namespace idem
