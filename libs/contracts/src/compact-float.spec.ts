import fc from 'fast-check';
import { compactFloat32, compactFloat32Array, expandFloat32 } from './compact-float';

describe('compactFloat32', () => {
  it('round-trips every finite float32 exactly', () => {
    fc.assert(
      fc.property(fc.float({ noNaN: true, noDefaultInfinity: true }), (f) => {
        const x = Math.fround(f);
        const carried = JSON.parse(JSON.stringify(compactFloat32(x))) as number;
        expect(Object.is(expandFloat32(carried), x) || (x === 0 && expandFloat32(carried) === 0)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('writes a logprob in at most 15 JSON characters, 17 between -1e-4 and -1e-6', () => {
    // JSON writes -1e-4 < x <= -1e-6 in fixed notation, '-0.0000' or '-0.00000' and 9 digits (below, an exponent)
    fc.assert(
      fc.property(fc.double({ min: -30, max: 0, noNaN: true }), (x) => {
        const c = compactFloat32(x);
        expect(JSON.stringify(c).length).toBeLessThanOrEqual(c <= -1e-4 || c > -1e-6 ? 15 : 17);
      }),
    );
    expect(JSON.stringify(compactFloat32(-0.0000011404084593213817))).toBe('-0.00000114040847');
  });

  it('moves a float64 by less than float32 rounding', () => {
    const x = -0.6931471805599453;
    expect(Math.abs(compactFloat32(x) - x)).toBeLessThan(Math.abs(x) * 2 ** -24);
  });

  it('refuses non-finite values', () => {
    expect(() => compactFloat32(Number.NaN)).toThrow(/non-finite/);
    expect(() => compactFloat32Array([0, -Infinity])).toThrow(/non-finite/);
  });
});
