#include "models/dashboardpolling.h"

#include <algorithm>

namespace idem::console {

std::chrono::milliseconds DashboardPolling::answered(qint64 elapsedMs, int intervalMs, int statementTimeoutMs)
{
    m_failures = 0;
    const bool hung = statementTimeoutMs > 0 && elapsedMs > statementTimeoutMs;
    const auto budgeted = hung ? std::chrono::milliseconds(0) : std::chrono::milliseconds(elapsedMs * tickBudgetDivisor);
    return delay(std::max(std::chrono::milliseconds(intervalMs), budgeted));
}

std::chrono::milliseconds DashboardPolling::cancelAfter(int statementTimeoutMs)
{
    const qint64 timeout = std::max(statementTimeoutMs, 1000);
    return std::chrono::milliseconds(timeout + std::max<qint64>(timeout, 2000));
}

std::chrono::milliseconds DashboardPolling::cutAfter(int statementTimeoutMs)
{
    return cancelAfter(statementTimeoutMs) + std::chrono::milliseconds(5000);
}

std::chrono::milliseconds DashboardPolling::failed(int intervalMs)
{
    ++m_failures;
    const std::chrono::milliseconds backoff(qint64(intervalMs) << std::min(m_failures, 5));
    return delay(std::min(maxDelay, backoff));
}

std::chrono::milliseconds DashboardPolling::delay(std::chrono::milliseconds after)
{
    m_nextTick = std::min(after, maxDelay);
    return m_nextTick;
}

int DashboardPolling::historyMinutes(qint64 loadedMinutes, int windowMinutes, qint64 lastServerMs, qint64 nowMs)
{
    if (loadedMinutes < 2 * windowMinutes || !lastServerMs)
        return 2 * windowMinutes;
    return std::clamp<int>(static_cast<int>((nowMs - lastServerMs) / 60000) + 2, 2, windowMinutes);
}

bool DashboardPolling::setFreshness(Freshness freshness, const QString& reason)
{
    if (freshness == m_freshness && reason == m_reason)
        return false;
    m_freshness = freshness;
    m_reason = reason;
    return true;
}

} // namespace idem::console
