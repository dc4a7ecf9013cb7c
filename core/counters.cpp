#include "core/counters.h"

#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string_view>
#include <vector>
#include <pqxx/pqxx>

#include "core/connection.h"

namespace idem {

void OutcomeCounters::add(const std::string& tenant, const std::string& operation, const char* what, long long n)
{
    // A name the table's CHECK rejects would make every later flush fail with it: refuse it here.
    static const std::set<std::string_view> known = {
        outcome::Acquired, outcome::ReacquiredLease, outcome::ReacquiredRetry, outcome::Replayed,
        outcome::InProgress, outcome::Conflict, outcome::RetryLater, outcome::RejectedFailed,
        outcome::StaleToken, outcome::Succeeded, outcome::FailedRetryable, outcome::FailedPermanent,
        outcome::FailedUnknown, outcome::Exhausted, outcome::RetryFailed, outcome::Paused,
    };
    if (!what || !known.count(what))
        throw std::invalid_argument(std::string("unknown outcome counter '") + (what ? what : "") + "'");
    // The bounds add_counters() (schema v6) enforces, refused here rather than at the flush.
    if (tenant.empty() || tenant.size() > maxNameBytes || operation.empty() || operation.size() > maxNameBytes)
        throw std::invalid_argument("counter tenant and operation must be 1 to " + std::to_string(maxNameBytes)
                                    + " bytes");
    if (n < 0 || n > maxAdd)
        throw std::invalid_argument("an outcome count must be 0 to " + std::to_string(maxAdd));
    using namespace std::chrono;
    const auto minute = duration_cast<minutes>(system_clock::now().time_since_epoch()).count();
    std::lock_guard lock(m_mutex);
    m_pending[Key { minute, tenant, operation, what }] += n;
}

void OutcomeCounters::restore(const std::map<Key, long long>& batch)
{
    std::lock_guard lock(m_mutex);
    for (const auto& [key, n] : batch)
        m_pending[key] += n;
}

std::size_t OutcomeCounters::pendingRows() const
{
    std::lock_guard lock(m_mutex);
    return m_pending.size();
}

std::size_t OutcomeCounters::flush(pqxx::connection& conn, const SchemaName& schema)
{
    std::map<Key, long long> batch;
    {
        std::lock_guard lock(m_mutex);
        batch.swap(m_pending);
    }
    if (batch.empty())
        return 0;
    // JSON parameters carry the batch, at most maxBatchRows counter rows each, in one
    // transaction; the map's order is the key order, so two flushers lock counter rows in the
    // same order and cannot deadlock each other. Rows older than the database keeps accepting
    // (a flush that failed for a month) are dropped: they would be refused every time.
    using namespace std::chrono;
    const auto oldest = duration_cast<minutes>(system_clock::now().time_since_epoch() - maxAgeDays).count();
    bool hasRetryFailed = false;
    const auto chunksOf = [&](bool withRetryFailed) {
        std::vector<nlohmann::json> chunks;
        for (const auto& [key, n] : batch) {
            const auto& [minute, tenant, operation, what] = key;
            if (minute < oldest)
                continue;
            if (what == outcome::RetryFailed) {
                hasRetryFailed = true;
                if (!withRetryFailed)
                    continue;
            }
            if (chunks.empty() || chunks.back().size() >= maxBatchRows)
                chunks.push_back(nlohmann::json::array());
            chunks.back().push_back(
                { { "m", minute * 60 }, { "t", tenant }, { "o", operation }, { "w", what }, { "n", n } });
        }
        return chunks;
    };
    const auto send = [&](const std::vector<nlohmann::json>& chunks) {
        pqxx::work w(conn);
        for (const auto& rows : chunks)
            w.exec_params("SELECT " + schema.qualify("add_counters") + "($1::jsonb)", rows.dump());
        w.commit();
    };
    try {
        try {
            send(chunksOf(m_sendRetryFailed.load()));
        } catch (const pqxx::sql_error& e) {
            if (e.sqlstate() != "ID003" || !hasRetryFailed || !m_sendRetryFailed.load())
                throw;
            // Refused: perhaps only for retry_failed, which schemas before v10 do not know. The
            // rest goes again; if that lands, the schema is older than this worker.
            send(chunksOf(false));
            m_sendRetryFailed = false;
        }
    } catch (const pqxx::sql_error& e) {
        // Refused as out of bounds (a worker clock an hour or more ahead of the server's): it
        // would be refused again, so it is dropped rather than kept to block every later flush.
        if (e.sqlstate() == "ID003")
            throw std::invalid_argument(std::string("counter batch refused, dropped: ") + e.what());
        restore(batch);
        throw;
    } catch (...) {
        restore(batch);
        throw;
    }
    return batch.size();
}

CounterFlusher::CounterFlusher(std::string conninfo, SchemaName schema, OutcomeCounters& counters,
                               std::chrono::milliseconds interval)
    : m_conninfo(std::move(conninfo))
    , m_schema(std::move(schema))
    , m_counters(counters)
    , m_interval(interval)
    , m_thread([this] { loop(); })
{
}

CounterFlusher::~CounterFlusher()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    m_thread.join();
    flushOnce();
}

bool CounterFlusher::flushOnce()
{
    try {
        if (!m_conn || !m_conn->is_open())
            m_conn = connect(m_conninfo, { "idem counters" });
        m_counters.flush(*m_conn, m_schema);
        return true;
    } catch (const std::exception&) {
        // The counts stay pending; a dashboard gap is better than a worker that stops.
        m_conn.reset();
        return false;
    }
}

bool CounterFlusher::flushNow()
{
    std::lock_guard lock(m_mutex);
    return flushOnce();
}

void CounterFlusher::loop()
{
    std::unique_lock lock(m_mutex);
    while (!m_stop) {
        m_wake.wait_for(lock, m_interval, [this] { return m_stop; });
        if (m_stop)
            break;
        flushOnce();
    }
}

} // namespace idem
