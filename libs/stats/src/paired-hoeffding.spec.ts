import fc from 'fast-check';
import { hoeffdingRecord, pairedHoeffding, type HoeffdingRule } from './paired-hoeffding';
import { pairedHoeffdingReference } from './paired-hoeffding.reference';

// the spec's primary criterion
const rule: HoeffdingRule = { alpha: 0.05, bounds: [0, 1], margin: -0.03, weights: { treatment: 1, baseline: -1 } };

describe('pairedHoeffding', () => {
  it('matches a hand-computed case', () => {
    // d = [1, 0, 0, 1], effect 0.5; R = 2; halfwidth = 2 sqrt(ln 20 / 8) = 1.2238734...
    const r = pairedHoeffding([1, 1, 0, 1], [0, 1, 0, 0], rule);
    expect(r.n).toBe(4);
    expect(r.effect).toBe(0.5);
    expect(r.halfwidth).toBeCloseTo(1.2238734, 6);
    expect(r.halfwidth).toBe(2 * Math.sqrt(Math.log(20) / 8));
    expect(r.lower).toBeCloseTo(-0.7238734, 6);
    expect(r.upper).toBeCloseTo(1.7238734, 6);
    expect(r.winsTreatment).toBe(2);
    expect(r.winsBaseline).toBe(0);
    expect(r.supported).toBe(false);
    expect(r.outcome).toBe('inconclusive');
  });

  it('is supported when the lower bound clears the margin and refuted when the upper bound does not reach it', () => {
    const ones = Array<number>(100).fill(1);
    const zeros = Array<number>(100).fill(0);
    // effect 1, halfwidth 2 sqrt(ln 20 / 200) = 0.24477
    const up = pairedHoeffding(ones, zeros, rule);
    expect(up.lower).toBeCloseTo(1 - 0.2447746, 6);
    expect(up.supported).toBe(true);
    expect(up.outcome).toBe('supported');
    expect(up.winsTreatment).toBe(100);
    const down = pairedHoeffding(zeros, ones, rule);
    expect(down.upper).toBeCloseTo(-1 + 0.2447746, 6);
    expect(down.outcome).toBe('refuted');
    expect(down.supported).toBe(false);
    expect(down.winsBaseline).toBe(100);
  });

  it('treats the margin as strict for support and inclusive for refutation', () => {
    const t = [1, 0, 1, 1, 0, 1, 1, 1];
    const b = [0, 0, 1, 0, 1, 0, 0, 0];
    const first = pairedHoeffding(t, b, rule);
    expect(pairedHoeffding(t, b, { ...rule, margin: first.lower }).outcome).toBe('inconclusive');
    expect(pairedHoeffding(t, b, { ...rule, margin: first.upper }).outcome).toBe('refuted');
    expect(pairedHoeffding(t, b, { ...rule, margin: first.lower - 1e-12 }).outcome).toBe('supported');
  });

  it('is symmetric: swapping the arms negates the effect and keeps the half-width', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.boolean()), { minLength: 1, maxLength: 200 }), (pairs) => {
        const t = pairs.map(([a]) => (a ? 1 : 0));
        const b = pairs.map(([, c]) => (c ? 1 : 0));
        const ab = pairedHoeffding(t, b, rule);
        const ba = pairedHoeffding(b, t, rule);
        expect(ba.effect === -ab.effect).toBe(true); // exact (0/1 sums), and 0 === -0
        expect(ba.halfwidth).toBe(ab.halfwidth);
        expect(ba.lower).toBeCloseTo(-ab.upper, 14);
        expect(ba.upper).toBeCloseTo(-ab.lower, 14);
        expect(ba.winsTreatment).toBe(ab.winsBaseline);
        expect(ba.winsBaseline).toBe(ab.winsTreatment);
      }),
    );
  });

  it('matches the plain-loop float64 reference on random inputs and rules', () => {
    const value = fc.double({ min: 0, max: 1, noNaN: true });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(value, value), { minLength: 1, maxLength: 300 }),
        fc.double({ min: 1e-6, max: 0.5, noNaN: true }),
        fc.double({ min: 0.1, max: 3, noNaN: true }),
        (pairs, alpha, w) => {
          const r: HoeffdingRule = { alpha, bounds: [0, 1], margin: -0.03, weights: { treatment: w, baseline: -w } };
          const t = pairs.map(([a]) => a);
          const b = pairs.map(([, c]) => c);
          const got = pairedHoeffding(t, b, r);
          const ref = pairedHoeffdingReference(t, b, r);
          expect(Math.abs(got.effect - ref.effect)).toBeLessThan(1e-12);
          expect(Math.abs(got.halfwidth - ref.halfwidth)).toBeLessThan(1e-12);
          expect(Math.abs(got.lower - ref.lower)).toBeLessThan(1e-12);
          expect(got.winsTreatment).toBe(ref.winsTreatment);
          expect(got.winsBaseline).toBe(ref.winsBaseline);
        },
      ),
    );
  });

  it('refuses unpaired, empty and out-of-bounds input and a bad rule', () => {
    expect(() => pairedHoeffding([1], [1, 0], rule)).toThrow(/paired/);
    expect(() => pairedHoeffding([], [], rule)).toThrow(/at least one/);
    expect(() => pairedHoeffding([2], [0], rule)).toThrow(/outside the bounds/);
    expect(() => pairedHoeffding([NaN], [0], rule)).toThrow(/outside the bounds/);
    expect(() => pairedHoeffding([1], [0], { ...rule, alpha: 0 })).toThrow(/alpha/);
    expect(() => pairedHoeffding([1], [0], { ...rule, bounds: [1, 0] })).toThrow(/bounds/);
    expect(() => pairedHoeffding([1], [0], { ...rule, weights: { treatment: 0, baseline: 0 } })).toThrow(/weights/);
  });

  it('renders the snake_case record', () => {
    const rec = hoeffdingRecord(pairedHoeffding([1, 0], [0, 0], rule));
    expect(Object.keys(rec)).toEqual(['n', 'effect', 'halfwidth', 'lower', 'upper', 'wins_treatment', 'wins_baseline', 'supported', 'outcome']);
    expect(rec.wins_treatment).toBe(1);
    expect(rec.effect).toBe(0.5);
  });
});
