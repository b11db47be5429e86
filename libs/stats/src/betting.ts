// The predictable plug-in betting confidence sequence of Waudby-Smith & Ramdas (2024, JRSS-B 86(1), "Estimating
// means of bounded random variables by betting", Sec. 4-5) on y_i = (d_i - dmin) / R in [0, 1], one-sided at alpha
// on each side, read at the last item. The items are taken in the order given: a spec that pre-registers the bound
// fixes that order by a seed (bettingOrder). float64 throughout.
import { mulberry32 } from './seeded-random';
import { checkRule, outcomeOf, type HoeffdingResult, type HoeffdingRule } from './paired-hoeffding';
import { pairedDifferences, pairedScale } from './paired-scale';

// Math's functions as module constants: inside jest's vm context every global lookup is slow (20x on these loops)
const { log1p, min, sqrt, log } = Math;

/** c in lambda_i(m) = min(lambda_i, c / m): the truncation the paper recommends (1/2 or 3/4) */
export const BETTING_TRUNCATION = 0.5;

// lambda_i = sqrt(2 ln(1/alpha) / (s2_{i-1} i ln(1 + i))), s2_{i-1} = (1/4 + sum_{j<i} (y_j - mu_j)^2) / i, mu_j = (1/2 + sum_{k<=j} y_k) / (j + 1)
export function predictableBets(y: readonly number[], alpha: number): number[] {
  const l = log(1 / alpha);
  const bets: number[] = [];
  let sum = 0;
  let squares = 0.25;
  for (let i = 1; i <= y.length; i++) {
    const s2 = squares / i;
    bets.push(sqrt((2 * l) / (s2 * i * log(1 + i))));
    sum += y[i - 1];
    const mu = (0.5 + sum) / (i + 1);
    squares += (y[i - 1] - mu) * (y[i - 1] - mu);
  }
  return bets;
}

// ln K_n(m) = sum_i ln(1 + min(lambda_i, c / m) (y_i - m)), the capital of betting that the mean exceeds m
function logCapital(y: readonly number[], bets: readonly number[], m: number): number {
  const cap = BETTING_TRUNCATION / m;
  let s = 0;
  for (let i = 0; i < y.length; i++) s += log1p(min(bets[i], cap) * (y[i] - m));
  return s;
}

// lower = inf{m in [0, 1]: K_n(m) < 1/alpha}; K_n is nonincreasing in m, so bisection (to 1e-12) finds it
export function bettingLowerY(y: readonly number[], alpha: number): number {
  if (y.length === 0) throw new RangeError('the betting bound needs at least one item');
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must lie in (0, 1), got ${alpha}`);
  for (const [i, v] of y.entries()) if (!(v >= 0 && v <= 1)) throw new RangeError(`y value ${v} at index ${i} lies outside [0, 1]`);
  const bets = predictableBets(y, alpha);
  const threshold = log(1 / alpha);
  if (logCapital(y, bets, 0) < threshold) return 0;
  let lo = 0;
  let hi = 1;
  while (hi - lo > 1e-12) {
    const mid = (lo + hi) / 2;
    if (logCapital(y, bets, mid) >= threshold) lo = mid;
    else hi = mid;
  }
  return lo;
}

// upper = 1 - lower(1 - y): the same sequence betting that the mean falls below m
export function bettingUpperY(y: readonly number[], alpha: number): number {
  return 1 - bettingLowerY(y.map((v) => 1 - v), alpha);
}

// d_i in the order given; [lower, upper] = dmin + R [lower_y, upper_y]; halfwidth = effect - lower; supported = lower > margin
export function pairedBetting(treatment: readonly number[], baseline: readonly number[], rule: HoeffdingRule): HoeffdingResult {
  checkRule(rule);
  const d = pairedDifferences(treatment, baseline, rule, 'the betting bound');
  const { dmin, range } = pairedScale(rule);
  const y = d.map((x) => (x - dmin) / range);
  const effect = d.reduce((s, x) => s + x, 0) / d.length;
  const lower = dmin + range * bettingLowerY(y, rule.alpha);
  const upper = dmin + range * bettingUpperY(y, rule.alpha);
  return outcomeOf(d, { effect, halfwidth: effect - lower, lower, upper }, rule);
}

// a Fisher-Yates permutation of 0..n-1 drawn with mulberry32(seed): position k holds the index of the k-th item to bet on
export function bettingOrder(n: number, seed: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  const random = mulberry32(seed);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}
