import { backoffDelayMs, doublingDelayMs, isRetryableStatus, retryAfterMs } from './tinker-retry';

const policy = { retries: 5, baseDelayMs: 500, maxDelayMs: 10_000 };
const headers = (h: Record<string, string>) => ({ get: (n: string) => h[n] ?? null });

describe('retry policy', () => {
  it('doubles the delay per retry up to the cap, with at most 25 % jitter below', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((i) => backoffDelayMs(i, policy, () => 0))).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(backoffDelayMs(2, policy, () => 0.999999)).toBeCloseTo(1500, 2);
    for (let i = 0; i < 200; i++) {
      const d = backoffDelayMs(1, policy);
      expect(d).toBeGreaterThan(750);
      expect(d).toBeLessThanOrEqual(1000);
    }
  });

  it('retries 408, 409, 429, 5xx and an empty 400 (as the SDK), nothing else (402 is a billing pause, handled above)', () => {
    expect([408, 409, 429, 500, 502, 503, 504].every((s) => isRetryableStatus(s, '{}'))).toBe(true);
    expect([400, 401, 402, 403, 404, 410, 413, 422].some((s) => isRetryableStatus(s, '{"error":"x"}'))).toBe(false);
    expect(isRetryableStatus(400, '  ')).toBe(true);
  });

  it('honours retry-after-ms and retry-after (seconds or date) within 60 s', () => {
    expect(retryAfterMs(headers({ 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterMs(headers({ 'retry-after': '2' }))).toBe(2000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), now)).toBe(3000);
    expect(retryAfterMs(headers({ 'retry-after': '3600' }))).toBeUndefined();
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterMs(headers({}))).toBeUndefined();
  });

  it("doubles the application-level delay from its base up to its cap (the SDK's 1 s .. 30 s)", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 60].map((i) => doublingDelayMs(i, 1000, 30_000))).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
  });
});
