import fc from 'fast-check';
import { percentile } from './percentile';
import { percentileReference } from './stats.reference';

describe('percentile', () => {
  it('interpolates linearly between order statistics, like numpy.percentile', () => {
    // values numpy gives for these calls
    expect(percentile([15, 20, 35, 40, 50], 40)).toBe(29);
    expect(percentile([1, 2, 3, 4], 10)).toBeCloseTo(1.3, 15);
    expect(percentile([10, 9, 8, 7, 6, 5, 4, 3, 2, 1], 10)).toBeCloseTo(1.9, 15);
    expect(percentile([10, 7, 4, 3, 2, 1], 50)).toBe(3.5);
    expect(percentile([3, 1, 2], 50)).toBe(2);
    expect(percentile([3, 1, 2], 0)).toBe(1);
    expect(percentile([3, 1, 2], 100)).toBe(3);
    expect(percentile([42], 10)).toBe(42);
  });

  it('does not reorder its input', () => {
    const v = [3, 1, 2];
    percentile(v, 50);
    expect(v).toEqual([3, 1, 2]);
  });

  it('matches the plain-loop reference', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: 1, maxLength: 80 }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (values, q) => {
          expect(Math.abs(percentile(values, q) - percentileReference(values, q))).toBeLessThan(1e-9);
        },
      ),
    );
  });

  it('refuses empty input, NaN and q outside [0, 100]', () => {
    expect(() => percentile([], 10)).toThrow(/empty/);
    expect(() => percentile([1, NaN], 10)).toThrow(/NaN/);
    expect(() => percentile([1], 101)).toThrow(/q/);
    expect(() => percentile([1], -1)).toThrow(/q/);
  });
});
