import fc from 'fast-check';
import { pearson } from './pearson';
import { pearsonReference } from './stats.reference';

describe('pearson', () => {
  it('matches a hand-computed case', () => {
    // x = [1,2,3], y = [2,4,7]: sxy = 5, sxx = 2, syy = 114/9, r = 15 / sqrt(228)
    const r = pearson([1, 2, 3], [2, 4, 7]);
    expect(r.ok).toBe(true);
    if (r.ok) expect(Math.abs(r.r - 15 / Math.sqrt(228))).toBeLessThan(1e-15);
  });

  it('gives +1 and -1 for exact linear relations', () => {
    const x = [0.3, -1.2, 4.5, 2.25, 0];
    const up = pearson(x, x.map((v) => 3 * v + 1));
    const down = pearson(x, x.map((v) => -0.5 * v + 7));
    expect(up.ok && Math.abs(up.r - 1) < 1e-15).toBe(true);
    expect(down.ok && Math.abs(down.r + 1) < 1e-15).toBe(true);
  });

  it('reports zero variance instead of dividing by it (even where the mean is not exact)', () => {
    // mean of three 0.1s is 0.10000000000000002: a naive sxx is tiny but not 0
    expect(pearson([0.1, 0.1, 0.1], [1, 2, 3])).toEqual({ ok: false, n: 3, reason: 'zero_variance_x' });
    expect(pearson([1, 2, 3], [0.7, 0.7, 0.7])).toEqual({ ok: false, n: 3, reason: 'zero_variance_y' });
    expect(pearson([5, 5], [1, 1])).toEqual({ ok: false, n: 2, reason: 'zero_variance_both' });
    expect(pearson([1], [2])).toEqual({ ok: false, n: 1, reason: 'too_few_points' });
    expect(pearson([1, NaN], [2, 3])).toEqual({ ok: false, n: 2, reason: 'non_finite' });
    expect(() => pearson([1, 2], [1])).toThrow(/paired/);
  });

  it('matches the plain-loop reference on random data', () => {
    const v = fc.double({ min: -100, max: 100, noNaN: true });
    fc.assert(
      fc.property(fc.array(fc.tuple(v, v), { minLength: 3, maxLength: 100 }), (pairs) => {
        const x = pairs.map(([a]) => a);
        const y = pairs.map(([, b]) => b);
        const got = pearson(x, y);
        if (!got.ok) return;
        const ref = pearsonReference(x, y);
        // the one-pass reference loses digits when the spread is tiny next to the values
        const spread = Math.min(Math.max(...x) - Math.min(...x), Math.max(...y) - Math.min(...y));
        fc.pre(spread > 1e-3);
        expect(Math.abs(got.r - ref)).toBeLessThan(1e-6);
        expect(Math.abs(got.r)).toBeLessThanOrEqual(1);
      }),
    );
  });
});
