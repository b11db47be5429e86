// The paired Hoeffding decision rule of the spec's `decision_rule` (method `paired_hoeffding`, bound `hoeffding`).
import { pairedDifferences } from './paired-scale';

/** One criterion of the decision rule, with the rule's alpha: all that the Hoeffding bound needs. */
export interface HoeffdingRule {
  /** one-sided error level, 0 < alpha < 1 */
  alpha: number;
  /** [lo, hi]: every per-item value lies in this range */
  bounds: readonly [number, number];
  /** the claim holds when the lower bound exceeds this */
  margin: number;
  weights: { treatment: number; baseline: number };
}

export type HoeffdingOutcome = 'supported' | 'inconclusive' | 'refuted';

export interface HoeffdingResult {
  n: number;
  effect: number;
  halfwidth: number;
  lower: number;
  upper: number;
  /** items with d_i > 0 */
  winsTreatment: number;
  /** items with d_i < 0 */
  winsBaseline: number;
  supported: boolean;
  outcome: HoeffdingOutcome;
}

/** The result as the CLI prints it and the run record stores it. */
export interface HoeffdingRecord {
  n: number;
  effect: number;
  halfwidth: number;
  lower: number;
  upper: number;
  wins_treatment: number;
  wins_baseline: number;
  supported: boolean;
  outcome: HoeffdingOutcome;
}

// halfwidth = R * sqrt(ln(1/alpha) / (2n)), R = (hi - lo) * (|w_t| + |w_b|)  (Hoeffding, bounded d_i)
export function hoeffdingHalfwidth(rule: HoeffdingRule, n: number): number {
  const [lo, hi] = rule.bounds;
  const range = (hi - lo) * (Math.abs(rule.weights.treatment) + Math.abs(rule.weights.baseline));
  return range * Math.sqrt(Math.log(1 / rule.alpha) / (2 * n));
}

// d_i = w_t t_i + w_b b_i; effect = mean d; [lower, upper] = effect -/+ halfwidth; supported = lower > margin
export function pairedHoeffding(treatment: readonly number[], baseline: readonly number[], rule: HoeffdingRule): HoeffdingResult {
  checkRule(rule);
  const d = pairedDifferences(treatment, baseline, rule, 'paired Hoeffding');
  const n = d.length;
  const effect = d.reduce((s, x) => s + x, 0) / n;
  const halfwidth = hoeffdingHalfwidth(rule, n);
  return outcomeOf(d, { effect, halfwidth, lower: effect - halfwidth, upper: effect + halfwidth }, rule);
}

/**
 * The result of any of the paired bounds from its interval (halfwidth: effect - lower, the side the rule reads; the
 * interval is symmetric for Hoeffding and empirical Bernstein): supported = lower > margin; refuted = upper <= margin.
 */
export function outcomeOf(d: readonly number[], i: { effect: number; halfwidth: number; lower: number; upper: number }, rule: HoeffdingRule): HoeffdingResult {
  checkRule(rule);
  const supported = i.lower > rule.margin;
  const outcome: HoeffdingOutcome = supported ? 'supported' : i.upper <= rule.margin ? 'refuted' : 'inconclusive';
  return {
    n: d.length,
    effect: i.effect,
    halfwidth: i.halfwidth,
    lower: i.lower,
    upper: i.upper,
    winsTreatment: d.filter((x) => x > 0).length,
    winsBaseline: d.filter((x) => x < 0).length,
    supported,
    outcome,
  };
}

/** The snake_case record that `rx decide` prints. */
export function hoeffdingRecord(r: HoeffdingResult): HoeffdingRecord {
  return {
    n: r.n,
    effect: r.effect,
    halfwidth: r.halfwidth,
    lower: r.lower,
    upper: r.upper,
    wins_treatment: r.winsTreatment,
    wins_baseline: r.winsBaseline,
    supported: r.supported,
    outcome: r.outcome,
  };
}

export function checkRule(rule: HoeffdingRule): void {
  const [lo, hi] = rule.bounds;
  if (!(rule.alpha > 0 && rule.alpha < 1)) throw new RangeError(`alpha must lie in (0, 1), got ${rule.alpha}`);
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && lo < hi)) throw new RangeError(`bounds must be finite with lo < hi, got [${lo}, ${hi}]`);
  const { treatment, baseline } = rule.weights;
  if (!Number.isFinite(treatment) || !Number.isFinite(baseline) || Math.abs(treatment) + Math.abs(baseline) === 0) {
    throw new RangeError(`weights must be finite and not all zero, got treatment ${treatment}, baseline ${baseline}`);
  }
  if (!Number.isFinite(rule.margin)) throw new RangeError(`margin must be finite, got ${rule.margin}`);
}
