// Independent plain-loop float64 reference of the paired Hoeffding rule, for tests only.
import type { HoeffdingRule } from './paired-hoeffding';

export interface HoeffdingReference {
  effect: number;
  halfwidth: number;
  lower: number;
  upper: number;
  winsTreatment: number;
  winsBaseline: number;
}

// effect = (1/n) sum_i (w_t t_i + w_b b_i); halfwidth = (hi - lo)(|w_t| + |w_b|) sqrt(ln(1/alpha) / (2n))
export function pairedHoeffdingReference(t: readonly number[], b: readonly number[], rule: HoeffdingRule): HoeffdingReference {
  let sum = 0;
  let winsT = 0;
  let winsB = 0;
  for (let i = 0; i < t.length; i++) {
    const di = rule.weights.treatment * t[i] + rule.weights.baseline * b[i];
    sum += di;
    if (di > 0) winsT++;
    if (di < 0) winsB++;
  }
  const n = t.length;
  const effect = sum / n;
  let wsum = 0;
  for (const w of [rule.weights.treatment, rule.weights.baseline]) wsum += w < 0 ? -w : w;
  const r = (rule.bounds[1] - rule.bounds[0]) * wsum;
  const halfwidth = r * Math.sqrt(-Math.log(rule.alpha) / (2 * n));
  return { effect, halfwidth, lower: effect - halfwidth, upper: effect + halfwidth, winsTreatment: winsT, winsBaseline: winsB };
}
