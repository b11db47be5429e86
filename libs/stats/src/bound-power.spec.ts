import { cellProbabilities, empiricalBernsteinHalfwidthAt, exactPower, lowerFromCounts, minConcludingEffect, plannedHalfwidth, simulatedBettingPower, type PlanSetting } from './bound-power';
import { powerReference } from './bound-power.reference';
import { pairedEmpiricalBernstein } from './empirical-bernstein';
import { pairedHoeffding } from './paired-hoeffding';
import { publishedPairs, PUBLISHED_RULE } from './published-pairs.fixture';

const published: PlanSetting = { n: 1319, alpha: 0.05, margin: -0.03, weight: 1, discordance: 0.2 };

describe('planned power and smallest concluding effect', () => {
  it('matches the binomial-factorised reference for both exact bounds', () => {
    for (const bound of ['hoeffding', 'empirical_bernstein'] as const) {
      for (const [n, q, delta, w] of [
        [200, 0.2, 0, 1],
        [200, 0.3, 0.05, 1],
        [150, 0.1, -0.02, 1],
        [120, 0.4, 0.1, 2],
      ]) {
        const s: PlanSetting = { n, alpha: 0.05, margin: -0.03 * w, weight: w, discordance: q };
        const got = exactPower(bound, s, delta * w) as number;
        const ref = powerReference(bound, n, 0.05, -0.03 * w, w, q, delta * w);
        expect(Math.abs(got - ref)).toBeLessThan(1e-10);
      }
    }
  });

  it('scores counts as the bounds score the items themselves', () => {
    const { treatment, baseline } = publishedPairs();
    expect(lowerFromCounts('hoeffding', 152, 112, published)).toBeCloseTo(pairedHoeffding(treatment, baseline, PUBLISHED_RULE).lower, 14);
    expect(lowerFromCounts('empirical_bernstein', 152, 112, published)).toBeCloseTo(pairedEmpiricalBernstein(treatment, baseline, PUBLISHED_RULE).lower, 14);
  });

  it('holds the error level at the margin and grows with the true effect', () => {
    for (const bound of ['hoeffding', 'empirical_bernstein'] as const) {
      const at = [-0.03, 0, 0.01, 0.03].map((e) => exactPower(bound, { ...published, n: 500 }, e) as number);
      expect(at[0]).toBeLessThanOrEqual(0.05);
      expect(at[1]).toBeLessThan(at[2]);
      expect(at[2]).toBeLessThan(at[3]);
    }
    const betting = [-0.03, 0.03].map((e) => simulatedBettingPower({ ...published, n: 400 }, e, 100) as number);
    expect(betting[0]).toBeLessThanOrEqual(0.05 + 3 * Math.sqrt((0.05 * 0.95) / 100));
    expect(betting[1]).toBeGreaterThan(betting[0]);
    expect(exactPower('hoeffding', published, 0.25)).toBeNull(); // an effect above the discordance cannot happen
    expect(cellProbabilities(published, 0.2)).toEqual({ plus: 0.2, minus: 0, zero: 0.8 });
  });

  it('needs +0.0374 under Hoeffding at n = 1319 and less under empirical Bernstein at discordance 0.2', () => {
    expect(plannedHalfwidth('hoeffding', published)).toBeCloseTo(0.0674, 4);
    expect(minConcludingEffect('hoeffding', published)).toBeCloseTo(0.0374, 4);
    const eb = minConcludingEffect('empirical_bernstein', published) as number;
    // the root: an effect at it has lower bound = margin, just above concludes, just below does not
    expect(eb - empiricalBernsteinHalfwidthAt(published, eb)).toBeCloseTo(-0.03, 10);
    expect(eb + 1e-6 - empiricalBernsteinHalfwidthAt(published, eb + 1e-6)).toBeGreaterThan(-0.03);
    expect(eb - 1e-6 - empiricalBernsteinHalfwidthAt(published, eb - 1e-6)).toBeLessThan(-0.03);
    expect(eb).toBeLessThan(0.0374);
    expect(plannedHalfwidth('empirical_bernstein', published)).toBeCloseTo(0.0465, 4);
    // betting: the smallest difference of counts whose items in the seed order conclude
    const bet = minConcludingEffect('betting', { ...published, n: 400 }) as number;
    expect(Number.isInteger(Math.round(bet * 400)) && Math.abs(bet * 400 - Math.round(bet * 400)) < 1e-9).toBe(true);
    expect(minConcludingEffect('betting', { ...published, n: 400 }, 0.5)).toBeNull();
  });
});
