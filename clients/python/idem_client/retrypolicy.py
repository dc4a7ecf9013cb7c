"""Backoff with full jitter, as core/retrypolicy.h."""

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """When to try again after a retryable failure: the delay before attempt n+1 is uniform in
    [0, min(max_delay_ms, base_delay_ms * 2^(n-1))]. max_age_ms 0: no age limit."""

    max_attempts: int = 5
    base_delay_ms: int = 200
    max_delay_ms: int = 30_000
    max_age_ms: int = 0

    def validate(self):
        if self.max_attempts < 1:
            raise ValueError("retry policy: max_attempts must be at least 1")
        if self.base_delay_ms < 0 or self.max_delay_ms < 0 or self.max_age_ms < 0:
            raise ValueError("retry policy: delays and age must not be negative")
        if self.max_delay_ms < self.base_delay_ms:
            raise ValueError("retry policy: max_delay_ms is smaller than base_delay_ms")

    def ceiling_after(self, attempt):
        """The ceiling of the jitter window after `attempt` attempts (1-based), in ms."""
        cap = max(0, self.max_delay_ms)
        ceiling = max(0, self.base_delay_ms)
        i = 1
        while i < attempt and 0 < ceiling < cap:
            ceiling = cap if ceiling > cap // 2 else ceiling * 2
            i += 1
        return min(ceiling, cap)

    def delay_after(self, attempt, rng=random):
        """A delay in ms drawn from [0, ceiling_after(attempt)]."""
        return rng.randint(0, self.ceiling_after(attempt))
