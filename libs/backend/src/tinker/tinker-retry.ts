// Retry policy of the Tinker client (the SDK's: exponential back-off with jitter, bounded, honouring the
// server's retry-after hints). Pure functions so the policy is testable without a network.

export interface RetryPolicy {
  /** retries after the first attempt (attempts = retries + 1) */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** The SDK's HTTP layer: 10 retries, 0.5 s doubling to 10 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 10, baseDelayMs: 500, maxDelayMs: 10_000 };

/** Longest server-requested wait honoured (retry-after / retry-after-ms); longer hints fall back to back-off. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** Statuses retried, as by the SDK: 408 (timeout), 409 (lock timeout), 429 (rate limit), 5xx; a 400 with an empty body (proxy reset) too. */
export function isRetryableStatus(status: number, body: string): boolean {
  if (status === 408 || status === 409 || status === 429 || status >= 500) return true;
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

// delay(n) = min(max, base * 2^n): the SDK's application-level retries (1 s doubling to 30 s) and its
// back-off on 429 or a lost connection while polling a future
export function doublingDelayMs(retryIndex: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(retryIndex, 30));
}
