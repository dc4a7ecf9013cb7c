#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace idem {

// When to try again after a retryable failure. Exponential backoff with full jitter: the
// delay before attempt n+1 is uniform in [0, min(maxDelay, baseDelay * 2^(n-1))], so a crowd
// of clients that failed together does not come back together.
struct RetryPolicy {
    int maxAttempts = 5;
    std::chrono::milliseconds baseDelay { 200 };
    std::chrono::milliseconds maxDelay { 30'000 };
    std::chrono::milliseconds maxAge { 0 }; // 0: no limit; older records end in failed

    // The ceiling of the jitter window after `attempt` attempts (1-based).
    std::chrono::milliseconds ceilingAfter(int attempt) const;
    // A delay drawn from [0, ceilingAfter(attempt)].
    std::chrono::milliseconds delayAfter(int attempt, std::mt19937_64& rng) const;

    // Throws std::invalid_argument for values that make no sense (no attempts, negative delays).
    void validate() const;
};

} // namespace idem
