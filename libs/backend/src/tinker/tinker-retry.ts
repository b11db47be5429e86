// Retry policy of the Tinker client (the SDK's: exponential back-off with jitter, bounded, honouring the
// server's retry-after hints). Pure functions so the policy is testable without a network.

export interface RetryPolicy {
  /** retries after the first attempt (attempts = retries + 1) */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 5, baseDelayMs: 500, maxDelayMs: 10_000 };

/** Longest server-requested wait honoured (retry-after / retry-after-ms); longer hints fall back to back-off. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** Statuses retried: 408 (timeout), 429 (rate limit), 5xx; a 400 with an empty body (proxy reset) too. */
export function isRetryableStatus(status: number, body: string): boolean {
  if (status === 408 || status === 429 || status >= 500) return true;
  return status === 400 && body.trim() === '';
}

// delay(n) = min(max, base * 2^n) * (1 - 0.25 * u), u ~ U[0,1): exponential with up to 25 % jitter below
export function backoffDelayMs(retryIndex: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retryIndex);
  return Math.max(0, exp * (1 - 0.25 * random()));
}

/** The wait the server asked for in `retry-after-ms` (ms) or `retry-after` (seconds or an HTTP date), if sane. */
export function retryAfterMs(headers: { get(name: string): string | null }, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null) {
    const v = Number(ms);
    if (Number.isFinite(v) && v >= 0 && v <= MAX_RETRY_AFTER_MS) return v;
  }
  const after = headers.get('retry-after');
  if (after !== null) {
    const seconds = Number(after);
    const v = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(after) - now;
    if (Number.isFinite(v) && v >= 0 && v <= MAX_RETRY_AFTER_MS) return v;
  }
  return undefined;
}
