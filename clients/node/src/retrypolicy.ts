// Exponential backoff with full jitter, as core/retrypolicy.cpp: the delay after attempt n is
// uniform in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))].
import { randomInt } from 'crypto';

import { InvalidArgumentError } from './errors';

export interface RetryPolicy {
    /** Attempts before a retryable failure ends in failed (1 to 1000). Default 5. */
    maxAttempts: number;
    /** Default 200. */
    baseDelayMs: number;
    /** Default 30 000 (at most 7 days). */
    maxDelayMs: number;
    /** 0: no limit (default); older records end in failed (at most 365 days). */
    maxAgeMs: number;
}

export const defaultRetryPolicy: Readonly<RetryPolicy> = Object.freeze({
    maxAttempts: 5,
    baseDelayMs: 200,
    maxDelayMs: 30_000,
    maxAgeMs: 0,
});

export function validateRetryPolicy(p: RetryPolicy): void {
    for (const [name, v] of Object.entries(p))
        if (!Number.isSafeInteger(v)) throw new InvalidArgumentError(`retry policy: ${name} must be an integer`);
    if (p.maxAttempts < 1) throw new InvalidArgumentError('retry policy: maxAttempts must be at least 1');
    if (p.baseDelayMs < 0 || p.maxDelayMs < 0 || p.maxAgeMs < 0)
        throw new InvalidArgumentError('retry policy: delays and age must not be negative');
    if (p.maxDelayMs < p.baseDelayMs) throw new InvalidArgumentError('retry policy: maxDelay is smaller than baseDelay');
}

/** The ceiling of the jitter window after `attempt` attempts (1-based). */
export function ceilingAfter(p: RetryPolicy, attempt: number): number {
    const cap = Math.max(0, p.maxDelayMs);
    let ceiling = Math.max(0, p.baseDelayMs);
    for (let i = 1; i < attempt && ceiling > 0 && ceiling < cap; ++i) ceiling = ceiling > cap / 2 ? cap : ceiling * 2;
    return Math.min(ceiling, cap);
}

/** A delay drawn from [0, ceilingAfter(attempt)]. */
export function delayAfter(p: RetryPolicy, attempt: number): number {
    const ceiling = ceilingAfter(p, attempt);
    return ceiling <= 0 ? 0 : randomInt(0, ceiling + 1);
}
