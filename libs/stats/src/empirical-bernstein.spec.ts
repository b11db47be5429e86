import fc from 'fast-check';
import { empiricalBernsteinHalfwidthY, pairedEmpiricalBernstein, unbiasedVariance } from './empirical-bernstein';
import { empiricalBernsteinReference } from './empirical-bernstein.reference';
import { pairedHoeffding, type HoeffdingRule } from './paired-hoeffding';
import { pairedScale } from './paired-scale';
import { publishedPairs, PUBLISHED_RULE } from './published-pairs.fixture';
import { mulberry32 } from './seeded-random';

type Halfwidth = (t: readonly number[], b: readonly number[], rule: HoeffdingRule) => number;

const real: Halfwidth = (t, b, rule) => pairedEmpiricalBernstein(t, b, rule).halfwidth;
// the injected bugs, built from the real pieces with one input wrong
const yOf = (t: readonly number[], b: readonly number[], rule: HoeffdingRule) => {
  const { dmin, range } = pairedScale(rule);
  return t.map((x, i) => (rule.weights.treatment * x + rule.weights.baseline * b[i] - dmin) / range);
};
const varianceOverN: Halfwidth = (t, b, rule) => {
  const y = yOf(t, b, rule);
  return pairedScale(rule).range * empiricalBernsteinHalfwidthY(y.length, (unbiasedVariance(y) * (y.length - 1)) / y.length, rule.alpha);
};
const logOneOverAlpha: Halfwidth = (t, b, rule) => {
  const y = yOf(t, b, rule);
  return pairedScale(rule).range * empiricalBernsteinHalfwidthY(y.length, unbiasedVariance(y), 2 * rule.alpha); // ln(2 / 2alpha) = ln(1/alpha)
};

/** what the tests below check of a half-width: the seed's number and the reference on fixed random data */
function violations(halfwidth: Halfwidth): string[] {
  const out: string[] = [];
  const { treatment, baseline } = publishedPairs();
  const seed = halfwidth(treatment, baseline, PUBLISHED_RULE);
  if (!(Math.abs(seed - 0.04646) < 5e-6)) out.push(`published half-width ${seed}, not 0.04646`);
  const random = mulberry32(7);
  for (let k = 0; k < 50; k++) {
    const n = 2 + Math.floor(random() * 40);
    const t = Array.from({ length: n }, () => random());
    const b = Array.from({ length: n }, () => random());
    const ref = empiricalBernsteinReference(t, b, 0.05, 0, 1, 1, -1).halfwidth;
    const got = halfwidth(t, b, PUBLISHED_RULE);
    if (!(Math.abs(got - ref) < 1e-12)) {
      out.push(`n = ${n}: ${got} against the reference ${ref}`);
      break;
    }
  }
  return out;
}

describe('pairedEmpiricalBernstein', () => {
  it("gives the seed's numbers on the published pairs (152 / 112 / 1055, alpha 0.05), where Hoeffding stays at -0.03707", () => {
    const { treatment, baseline } = publishedPairs();
    const eb = pairedEmpiricalBernstein(treatment, baseline, PUBLISHED_RULE);
    expect(eb.n).toBe(1319);
    expect(eb.effect).toBeCloseTo(0.03033, 5);
    expect(Math.abs(eb.halfwidth - 0.04646)).toBeLessThan(5e-6);
    expect(Math.abs(eb.lower - -0.01613)).toBeLessThan(5e-6);
    expect(eb.outcome).toBe('supported');
    expect(eb.winsTreatment).toBe(152);
    expect(eb.winsBaseline).toBe(112);
    const h = pairedHoeffding(treatment, baseline, PUBLISHED_RULE);
    expect(Math.abs(h.lower - -0.03707)).toBeLessThan(5e-6);
    expect(h.outcome).toBe('inconclusive');
  });

  it('passes the checks, and a variance over n instead of n - 1 or ln(1/alpha) instead of ln(2/alpha) fails them', () => {
    expect(violations(real)).toEqual([]);
    expect(violations(varianceOverN).length).toBeGreaterThan(0);
    expect(violations(logOneOverAlpha).length).toBeGreaterThan(0);
  });

  it('matches the d-scale Welford reference on random inputs, bounds and weights', () => {
    const value = fc.double({ min: 0, max: 1, noNaN: true });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(value, value), { minLength: 2, maxLength: 300 }),
        fc.double({ min: 1e-6, max: 0.5, noNaN: true }),
        fc.double({ min: 0.1, max: 3, noNaN: true }),
        fc.double({ min: -2, max: 2, noNaN: true }),
        (pairs, alpha, w, shift) => {
          const rule: HoeffdingRule = { alpha, bounds: [shift, shift + 1], margin: -0.03, weights: { treatment: w, baseline: -w } };
          const t = pairs.map(([a]) => a + shift);
          const b = pairs.map(([, c]) => c + shift);
          const got = pairedEmpiricalBernstein(t, b, rule);
          const ref = empiricalBernsteinReference(t, b, alpha, shift, shift + 1, w, -w);
          expect(Math.abs(got.effect - ref.effect)).toBeLessThan(1e-12 * (1 + Math.abs(ref.effect)));
          expect(Math.abs(got.halfwidth - ref.halfwidth)).toBeLessThan(1e-11 * ref.halfwidth);
          expect(Math.abs(got.lower - ref.lower)).toBeLessThan(1e-11 * (1 + ref.halfwidth));
        },
      ),
    );
  });

  it('leaves only the range term for a constant difference, and refuses one item', () => {
    const ones = Array<number>(100).fill(1);
    const r = pairedEmpiricalBernstein(ones, ones, PUBLISHED_RULE);
    expect(r.halfwidth).toBeCloseTo((2 * 7 * Math.log(40)) / (3 * 99), 12);
    expect(() => pairedEmpiricalBernstein([1], [0], PUBLISHED_RULE)).toThrow(/at least 2/);
    expect(() => pairedEmpiricalBernstein([1, 2], [0, 0], PUBLISHED_RULE)).toThrow(/outside the bounds/);
  });
});
