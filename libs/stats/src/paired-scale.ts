// The paired difference d_i = w_t t_i + w_b b_i of a criterion, rescaled to y_i = (d_i - dmin) / R in [0, 1]: the
// scale the empirical-Bernstein and betting bounds are stated on (a bound on mean y is R times a bound on mean d).
import type { HoeffdingRule } from './paired-hoeffding';

export interface PairedScale {
  /** the smallest value d_i can take */
  dmin: number;
  /** R = (hi - lo)(|w_t| + |w_b|), the width of d's range */
  range: number;
}

// dmin = min(w_t lo, w_t hi) + min(w_b lo, w_b hi); R = (hi - lo)(|w_t| + |w_b|)
export function pairedScale(rule: HoeffdingRule): PairedScale {
  const [lo, hi] = rule.bounds;
  const { treatment: wt, baseline: wb } = rule.weights;
  return { dmin: Math.min(wt * lo, wt * hi) + Math.min(wb * lo, wb * hi), range: (hi - lo) * (Math.abs(wt) + Math.abs(wb)) };
}

// d_i = w_t t_i + w_b b_i, checked against the bounds (the message names the index)
export function pairedDifferences(treatment: readonly number[], baseline: readonly number[], rule: HoeffdingRule, what: string): number[] {
  if (treatment.length !== baseline.length) {
    throw new RangeError(`${what} needs paired items: ${treatment.length} treatment values, ${baseline.length} baseline values`);
  }
  if (treatment.length === 0) throw new RangeError(`${what} needs at least one paired item`);
  const [lo, hi] = rule.bounds;
  return treatment.map((t, i) => {
    const b = baseline[i];
    if (!(t >= lo && t <= hi)) throw new RangeError(`treatment value ${t} at index ${i} lies outside the bounds [${lo}, ${hi}]`);
    if (!(b >= lo && b <= hi)) throw new RangeError(`baseline value ${b} at index ${i} lies outside the bounds [${lo}, ${hi}]`);
    return rule.weights.treatment * t + rule.weights.baseline * b;
  });
}
