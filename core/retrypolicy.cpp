#include "core/retrypolicy.h"

#include <algorithm>
#include <stdexcept>

namespace idem {

std::chrono::milliseconds RetryPolicy::ceilingAfter(int attempt) const
{
    const auto cap = std::max<std::int64_t>(0, maxDelay.count());
    std::int64_t ceiling = std::max<std::int64_t>(0, baseDelay.count());
    // Doubling stops at the cap, so large attempt counts cannot overflow; nor can a cap near
    // the type's maximum (doubling past half of it goes straight to the cap).
    for (int i = 1; i < attempt && ceiling > 0 && ceiling < cap; ++i)
        ceiling = ceiling > cap / 2 ? cap : ceiling * 2;
    return std::chrono::milliseconds(std::min(ceiling, cap));
}

std::chrono::milliseconds RetryPolicy::delayAfter(int attempt, std::mt19937_64& rng) const
{
    const auto ceiling = ceilingAfter(attempt).count();
    std::uniform_int_distribution<std::int64_t> pick(0, ceiling);
    return std::chrono::milliseconds(pick(rng));
}

void RetryPolicy::validate() const
{
    if (maxAttempts < 1)
        throw std::invalid_argument("retry policy: maxAttempts must be at least 1");
    if (baseDelay.count() < 0 || maxDelay.count() < 0 || maxAge.count() < 0)
        throw std::invalid_argument("retry policy: delays and age must not be negative");
    if (maxDelay < baseDelay)
        throw std::invalid_argument("retry policy: maxDelay is smaller than baseDelay");
}

} // namespace idem
