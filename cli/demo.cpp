#include "cli/demo.h"

#include <iostream>
#include <sys/socket.h>
#include <thread>

namespace idem::cli::demo {

const char* tallyName(Tally t)
{
    switch (t) {
    case Tally::Succeeded:
        return "succeeded";
    case Tally::Replayed:
        return "replayed";
    case Tally::InProgress:
        return "in_progress";
    case Tally::Conflict:
        return "conflict";
    case Tally::RetryLater:
        return "retry_later";
    case Tally::Failed:
        return "failed";
    case Tally::WillRetry:
        return "will_retry";
    case Tally::LostOwnership:
        return "lost_ownership";
    case Tally::Paused:
        return "paused";
    case Tally::Requests:
        return "requests";
    case Tally::Died:
        return "died";
    case Tally::StaleAttempts:
        return "stale_attempts";
    case Tally::DownstreamPaid:
        return "downstream_paid";
    case Tally::DownstreamDeduped:
        return "downstream_deduped";
    case Tally::RetriesAbandoned:
        return "retries_abandoned";
    case Tally::DatabaseErrors:
        return "database_errors";
    case Tally::NotPrimary:
        return "not_primary";
    case Tally::CutAtStop:
        return "cut_at_stop";
    case Tally::Errors:
        return "errors";
    case Tally::Count:
        break;
    }
    return "?";
}

Tally tallyOf(RunOutcome::Kind kind)
{
    using K = RunOutcome::Kind;
    switch (kind) {
    case K::Succeeded:
        return Tally::Succeeded;
    case K::Replayed:
        return Tally::Replayed;
    case K::InProgress:
        return Tally::InProgress;
    case K::Conflict:
        return Tally::Conflict;
    case K::RetryLater:
        return Tally::RetryLater;
    case K::Failed:
        return Tally::Failed;
    case K::WillRetry:
        return Tally::WillRetry;
    case K::LostOwnership:
        return Tally::LostOwnership;
    case K::Paused:
        return Tally::Paused;
    }
    return Tally::Errors;
}

Stats::Snapshot Stats::snapshot() const
{
    Snapshot s {};
    for (std::size_t i = 0; i < tallyCount; ++i)
        s[i] = m_values[i].load(std::memory_order_relaxed);
    return s;
}

namespace {
    std::uint64_t fnv1a(const std::string& s)
    {
        std::uint64_t h = 14695981039346656037ULL;
        for (unsigned char c : s) {
            h ^= c;
            h *= 1099511628211ULL;
        }
        return h;
    }
} // namespace

nlohmann::json bodyFor(const TaskKey& key)
{
    static const char* const currencies[] = { "EUR", "USD", "GBP", "CHF" };
    const std::uint64_t h = fnv1a(key.str());
    return { { "amount_cents", static_cast<long long>(100 + h % 99'900) }, { "currency", currencies[(h >> 20) % 4] },
        { "target", "acct-" + std::to_string((h >> 32) % 10'000) } };
}

const std::vector<std::string>& ignoredFields()
{
    static const std::vector<std::string> fields { "meta.trace_id", "meta.sent_at" };
    return fields;
}

void RecentRequests::remember(const Request& r)
{
    std::lock_guard lock(m_mutex);
    if (m_ring.size() < capacity) {
        m_ring.push_back(r);
    } else {
        m_ring[m_next] = r;
        m_next = (m_next + 1) % capacity;
    }
}

std::optional<Request> RecentRequests::pick(std::mt19937_64& rng) const
{
    std::lock_guard lock(m_mutex);
    if (m_ring.empty())
        return std::nullopt;
    // Half of the duplicates come right after the original (a double click, an impatient
    // client): those are the ones that find it still in progress.
    const std::size_t newest = m_ring.size() < capacity ? m_ring.size() - 1 : (m_next + capacity - 1) % capacity;
    const std::size_t window = std::min<std::size_t>(m_ring.size(), 8);
    if (std::bernoulli_distribution(0.5)(rng)) {
        const std::size_t back = std::uniform_int_distribution<std::size_t>(0, window - 1)(rng);
        return m_ring[(newest + m_ring.size() - back) % m_ring.size()];
    }
    std::uniform_int_distribution<std::size_t> index(0, m_ring.size() - 1);
    return m_ring[index(rng)];
}

bool RetryQueue::push(Request r, Clock::time_point due)
{
    std::lock_guard lock(m_mutex);
    if (m_queue.size() >= capacity)
        return false;
    m_queue.emplace(due, std::move(r));
    return true;
}

std::optional<Request> RetryQueue::takeDue(Clock::time_point now)
{
    std::lock_guard lock(m_mutex);
    if (m_queue.empty() || m_queue.begin()->first > now)
        return std::nullopt;
    auto node = m_queue.extract(m_queue.begin());
    return std::move(node.mapped());
}

std::size_t RetryQueue::size() const
{
    std::lock_guard lock(m_mutex);
    return m_queue.size();
}

std::set<std::string> RetryQueue::keys() const
{
    std::lock_guard lock(m_mutex);
    std::set<std::string> out;
    for (const auto& [due, request] : m_queue)
        out.insert(request.key.str());
    return out;
}

RateLimiter::RateLimiter(double perSecond)
    : m_next(std::chrono::steady_clock::now())
{
    if (perSecond > 0)
        m_interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(1.0 / perSecond));
}

bool RateLimiter::acquire(const std::atomic<bool>& stop)
{
    using Clock = std::chrono::steady_clock;
    if (m_interval == Clock::duration::zero())
        return !stop.load();
    Clock::time_point slot;
    {
        std::lock_guard lock(m_mutex);
        // A slot missed while everyone was busy is not made up for later: no bursts.
        slot = std::max(m_next, Clock::now());
        m_next = slot + m_interval;
    }
    for (auto now = Clock::now(); now < slot; now = Clock::now()) {
        if (stop.load())
            return false;
        std::this_thread::sleep_for(std::min<Clock::duration>(slot - now, std::chrono::milliseconds(50)));
    }
    return !stop.load();
}

void Ledger::acknowledge(const std::string& key, const std::string& resultJson)
{
    nlohmann::json result = nlohmann::json::parse(resultJson, nullptr, false);
    std::lock_guard lock(m_mutex);
    const auto [it, inserted] = m_told.emplace(key, result);
    if (!inserted && it->second != result)
        m_contradicted.insert(key);
}

std::map<std::string, nlohmann::json> Ledger::entries() const
{
    std::lock_guard lock(m_mutex);
    return m_told;
}

std::set<std::string> Ledger::contradicted() const
{
    std::lock_guard lock(m_mutex);
    return m_contradicted;
}

void SocketRegistry::set(int slot, int fd)
{
    std::lock_guard lock(m_mutex);
    if (fd < 0) {
        m_fds.erase(slot);
        return;
    }
    m_fds[slot] = fd;
    if (m_interrupted)
        ::shutdown(fd, SHUT_RDWR);
}

int SocketRegistry::interruptAll()
{
    std::lock_guard lock(m_mutex);
    m_interrupted = true;
    for (const auto& [slot, fd] : m_fds)
        ::shutdown(fd, SHUT_RDWR);
    return static_cast<int>(m_fds.size());
}

void Shared::reportError(const std::string& message)
{
    constexpr int shown = 10;
    std::lock_guard lock(m_errorMutex);
    if (m_errorsShown < shown)
        std::cerr << "idemctl demo: " << message << '\n';
    else if (m_errorsShown == shown)
        std::cerr << "idemctl demo: further errors are counted, not shown\n";
    ++m_errorsShown;
}

} // namespace idem::cli::demo
