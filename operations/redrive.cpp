#include "operations/redrive.h"

#include <array>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "operations/duration.h"

namespace idem {

namespace {

    std::string text(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }

    // A timestamptz column as ISO 8601 UTC with microseconds (NULL: empty).
    std::string iso(const std::string& column)
    {
        return "to_char(" + column + " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')";
    }

    std::vector<std::string> textArray(const pqxx::field& f)
    {
        std::vector<std::string> out;
        if (f.is_null())
            return out;
        auto parser = f.as_array();
        for (auto item = parser.get_next(); item.first != pqxx::array_parser::done; item = parser.get_next())
            if (item.first == pqxx::array_parser::string_value)
                out.push_back(item.second);
        return out;
    }

} // namespace

std::vector<RedriveStatus> readRedriveStatus(
    pqxx::connection& conn, const SchemaName& schema, const std::string& tenant, const std::string& operation)
{
    pqxx::read_transaction t(conn);
    const auto r
        = t.exec_params("SELECT s.tenant, s.operation, s.registered, s.online_workers, s.workers, " + iso("s.last_seen")
                + ", s.queued, s.running, s.redrivers FROM " + schema.qualify("idem_redrive_status") + "($1, $2) s",
            tenant.empty() ? static_cast<const char*>(nullptr) : tenant.c_str(),
            operation.empty() ? static_cast<const char*>(nullptr) : operation.c_str());
    t.commit();
    std::vector<RedriveStatus> out;
    for (const auto& row : r) {
        RedriveStatus s;
        s.tenant = text(row[0]);
        s.operation = text(row[1]);
        s.registered = row[2].as<bool>();
        s.onlineWorkers = row[3].as<int>();
        s.workers = textArray(row[4]);
        s.lastSeen = text(row[5]);
        s.queued = row[6].as<std::int64_t>();
        s.running = row[7].as<std::int64_t>();
        if (!row[8].is_null())
            for (const auto& j : nlohmann::json::parse(row[8].c_str())) {
                RedriverSeen seen;
                seen.worker = j.value("worker", "");
                seen.version = j.value("version", "");
                seen.lastSeen = j.value("last_seen", "");
                seen.secondsAgo = j.value("seconds_ago", std::int64_t { 0 });
                seen.online = j.value("online", false);
                s.redrivers.push_back(std::move(seen));
            }
        out.push_back(std::move(s));
    }
    return out;
}

const RedriverSeen* RedriveStatus::lastOffline() const
{
    for (const auto& r : redrivers)
        if (!r.online)
            return &r; // the list is online first, then the most recently seen
    return nullptr;
}

std::string redriveAvailability(const RedriveStatus& status)
{
    if (!status.registered)
        return status.operation + " is not re-drivable: the key waits for its client";
    if (status.onlineWorkers == 0) {
        std::string s = "no re-driver for " + status.operation + " is online";
        if (const auto* last = status.lastOffline())
            s += " (" + last->worker + " was last seen " + formatDuration(double(last->secondsAgo) * 1000.0)
                + " ago, at " + last->lastSeen + ")";
        return s + ": the key waits for its client";
    }
    if (status.onlineWorkers == 1)
        return "1 worker of " + status.operation + " is online";
    return std::to_string(status.onlineWorkers) + " workers of " + status.operation + " are online";
}

namespace {

    void addOutcome(RedriveOutcomes& out, const std::string& state, std::int64_t n)
    {
        if (state == "queued")
            out.queued = n;
        else if (state == "running")
            out.running = n;
        else if (state == "succeeded")
            out.succeeded = n;
        else if (state == "failed")
            out.failed = n;
        else if (state == "conflict")
            out.conflict = n;
        else if (state == "gone")
            out.gone = n;
    }

} // namespace

RedriveOutcomes readRedriveOutcomes(pqxx::connection& conn, const SchemaName& schema, std::int64_t jobId)
{
    pqxx::read_transaction t(conn);
    const auto r = t.exec_params("SELECT o.state, o.n FROM " + schema.qualify("idem_redrive_outcomes") + "($1) o",
        static_cast<long long>(jobId));
    t.commit();
    RedriveOutcomes out;
    for (const auto& row : r)
        addOutcome(out, row[0].as<std::string>(), row[1].as<std::int64_t>());
    return out;
}

std::map<std::int64_t, RedriveOutcomes> readRedriveOutcomesOf(
    pqxx::connection& conn, const SchemaName& schema, const std::vector<std::int64_t>& jobIds)
{
    if (jobIds.size() > 1000)
        throw std::invalid_argument("at most 1000 jobs' re-drive outcomes at once");
    std::map<std::int64_t, RedriveOutcomes> out;
    if (jobIds.empty())
        return out;
    std::string ids = "{";
    for (const auto id : jobIds) {
        if (id < 1)
            throw std::invalid_argument("a job id is a positive number");
        ids += (ids.size() > 1 ? "," : "") + std::to_string(id);
        out[id];
    }
    ids += '}';
    pqxx::read_transaction t(conn);
    const auto r = t.exec_params(
        "SELECT o.job_id, o.state, o.n FROM " + schema.qualify("idem_redrive_outcomes_of") + "($1::bigint[]) o", ids);
    t.commit();
    for (const auto& row : r)
        addOutcome(out[row[0].as<std::int64_t>()], row[1].as<std::string>(), row[2].as<std::int64_t>());
    return out;
}

std::string redriveOutcomeSentence(std::int64_t requeued, const RedriveOutcomes& o)
{
    const std::array<std::pair<const char*, std::int64_t>, 6> parts { { { "succeeded", o.succeeded },
        { "failed", o.failed }, { "conflict", o.conflict }, { "gone", o.gone }, { "running", o.running },
        { "queued", o.queued } } };
    std::string s = std::to_string(requeued) + " requeued";
    const char* sep = ": ";
    for (const auto& [name, n] : parts) {
        if (n == 0)
            continue;
        s += sep + std::to_string(n) + ' ' + name;
        sep = ", ";
    }
    return s;
}

std::vector<RedriveItemRow> readRedriveItems(pqxx::connection& conn, const SchemaName& schema, const std::string& key)
{
    pqxx::read_transaction t(conn);
    const auto r = t.exec_params("SELECT i.item_id, i.state, i.job_id, i.worker, i.tries, " + iso("i.requested_at")
            + ", i.requested_role, i.requested_actor, " + iso("i.taken_at") + ", " + iso("i.lease_until") + ", "
            + iso("i.not_before") + ", " + iso("i.finished_at") + ", i.detail, i.audit_id FROM "
            + schema.qualify("idem_redrive_items_of") + "($1) i",
        key);
    t.commit();
    std::vector<RedriveItemRow> out;
    for (const auto& row : r) {
        RedriveItemRow i;
        i.id = row[0].as<std::int64_t>();
        i.state = text(row[1]);
        if (!row[2].is_null())
            i.jobId = row[2].as<std::int64_t>();
        i.worker = text(row[3]);
        i.tries = row[4].as<int>();
        i.requestedAt = text(row[5]);
        i.requestedBy = text(row[6]) + " (" + text(row[7]) + ")";
        i.takenAt = text(row[8]);
        i.leaseUntil = text(row[9]);
        i.notBefore = text(row[10]);
        i.finishedAt = text(row[11]);
        i.detail = text(row[12]);
        if (!row[13].is_null())
            i.auditId = row[13].as<std::int64_t>();
        out.push_back(std::move(i));
    }
    return out;
}

StoredRequest readStoredRequest(pqxx::connection& conn, const SchemaName& schema, const std::string& key)
{
    pqxx::read_transaction t(conn);
    const auto r = t.exec_params("SELECT s.stored, s.bytes, " + iso("s.stored_at") + ", s.request::text FROM "
            + schema.qualify("idem_stored_request") + "($1) s",
        key);
    t.commit();
    StoredRequest out;
    const auto row = r.at(0);
    out.stored = row[0].as<bool>();
    if (!row[1].is_null())
        out.bytes = row[1].as<int>();
    out.storedAt = text(row[2]);
    out.readable = !row[3].is_null();
    out.request = text(row[3]);
    return out;
}

} // namespace idem
