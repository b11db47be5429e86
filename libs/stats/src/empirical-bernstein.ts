// The empirical-Bernstein bound of Maurer & Pontil (2009, Theorem 4) on the paired difference: one-sided at alpha,
// with the unbiased sample variance of y_i = (d_i - dmin) / R in [0, 1]; its half-width on the d scale is R times
// the one on the y scale (R = 2 for accuracies with weights +1/-1). float64 throughout.
import { checkRule, outcomeOf, type HoeffdingResult, type HoeffdingRule } from './paired-hoeffding';
import { pairedDifferences, pairedScale } from './paired-scale';

// Math's functions as module constants: inside jest's vm context every global lookup is slow (20x on these loops)
const { sqrt, log } = Math;

// hw_y = sqrt(2 V ln(2/alpha) / n) + 7 ln(2/alpha) / (3 (n - 1)), V the unbiased sample variance of y (Maurer & Pontil 2009, Thm 4)
export function empiricalBernsteinHalfwidthY(n: number, sampleVariance: number, alpha: number): number {
  if (!(Number.isInteger(n) && n >= 2)) throw new RangeError(`the empirical-Bernstein bound needs at least 2 items, got ${n}`);
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must lie in (0, 1), got ${alpha}`);
  if (!(sampleVariance >= 0 && Number.isFinite(sampleVariance))) throw new RangeError(`the sample variance must be finite and >= 0, got ${sampleVariance}`);
  const l = log(2 / alpha);
  return sqrt((2 * sampleVariance * l) / n) + (7 * l) / (3 * (n - 1));
}

// V = sum_i (y_i - ybar)^2 / (n - 1), two passes (mean first)
export function unbiasedVariance(y: readonly number[]): number {
  const n = y.length;
  if (n < 2) throw new RangeError(`the sample variance needs at least 2 values, got ${n}`);
  const mean = y.reduce((s, v) => s + v, 0) / n;
  return y.reduce((s, v) => s + (v - mean) * (v - mean), 0) / (n - 1);
}

// effect = mean d; halfwidth = R hw_y(n, V(y), alpha); [lower, upper] = effect -/+ halfwidth; supported = lower > margin
export function pairedEmpiricalBernstein(treatment: readonly number[], baseline: readonly number[], rule: HoeffdingRule): HoeffdingResult {
  checkRule(rule);
  const d = pairedDifferences(treatment, baseline, rule, 'the empirical-Bernstein bound');
  const { dmin, range } = pairedScale(rule);
  const n = d.length;
  const effect = d.reduce((s, x) => s + x, 0) / n;
  const halfwidth = range * empiricalBernsteinHalfwidthY(n, unbiasedVariance(d.map((x) => (x - dmin) / range)), rule.alpha);
  return outcomeOf(d, { effect, halfwidth, lower: effect - halfwidth, upper: effect + halfwidth }, rule);
}
