import fc from 'fast-check';
import { histogram, sharedRange } from './histogram';

describe('histogram', () => {
  it('bins by half-open intervals, the last one closed', () => {
    const h = histogram([0, 0.1, 0.25, 0.5, 0.74, 0.75, 1, 1.5, -0.1], 4, [0, 1]);
    expect(h.edges).toEqual([0, 0.25, 0.5, 0.75, 1]);
    expect(h.counts).toEqual([2, 1, 2, 2]);
    expect(h.total).toBe(7);
  });

  it('counts what a per-bin scan counts', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { maxLength: 200 }), fc.integer({ min: 1, max: 40 }), (xs, bins) => {
        const range = sharedRange(xs) ?? [0, 1];
        const h = histogram(xs, bins, range);
        // reference: for each bin, the values between its edges (the last bin includes its right edge)
        const expected: number[] = [];
        for (let k = 0; k < bins; k++) {
          let c = 0;
          for (const x of xs) if (x >= h.edges[k] && (x < h.edges[k + 1] || (k === bins - 1 && x <= h.edges[k + 1]))) c++;
          expected.push(c);
        }
        expect(h.counts).toEqual(expected);
        expect(h.total).toBe(xs.length);
      }),
    );
  });

  it('refuses bad bins and ranges', () => {
    expect(() => histogram([1], 0, [0, 1])).toThrow('bins must be a positive integer, got 0');
    expect(() => histogram([1], 3, [1, 1])).toThrow('range must be finite with lo < hi, got [1, 1]');
    expect(() => histogram([0], 2, [0, 5e-324])).toThrow('range [0, 5e-324] is too narrow for 2 bins');
  });
});

describe('sharedRange', () => {
  it('spans every series, widens a single value, and is null for no values', () => {
    expect(sharedRange([1, 3], [-2, 0.5])).toEqual([-2, 3]);
    expect(sharedRange([7, 7], [7])).toEqual([6.5, 7.5]);
    expect(sharedRange([1e-300, 2e-300])).toEqual([-0.5, 0.5]);
    expect(sharedRange([], [])).toBeNull();
  });
});
