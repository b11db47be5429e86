// What a paired bound can conclude before the data exist: for per-item correctness (bounds [0, 1], weights +w/-w,
// so d_i in {-w, 0, +w}) with a discordance rate q (the share of items exactly one arm gets right) and a true
// effect delta, the items are multinomial: d = +w with p+ = (q + delta/w) / 2, -w with p- = (q - delta/w) / 2, 0
// otherwise. Power = P(lower bound > margin). Exact sums for Hoeffding and empirical Bernstein, a seeded
// simulation for betting. float64 throughout.
import { bettingLowerY, bettingOrder } from './betting';
import { empiricalBernsteinHalfwidthY } from './empirical-bernstein';
import type { BoundName } from './paired-bound';
import { mulberry32 } from './seeded-random';

// Math's functions as module constants: inside jest's vm context every global lookup is slow (20x on these loops)
const { exp, log, sqrt } = Math;

export interface PlanSetting {
  n: number;
  alpha: number;
  margin: number;
  /** w: d_i in {-w, 0, +w} */
  weight: number;
  /** q in [0, 1] */
  discordance: number;
}

/** draws of the betting bound's simulations, and their seed */
export const BETTING_DRAWS = 200;
export const BETTING_SIMULATION_SEED = 20_240_101;
/** arrangements of a count difference's items over which the betting bound's median is taken (odd) */
export const BETTING_ARRANGEMENTS = 41;

// hoeffding: lower = w (a - b)/n - 2w sqrt(ln(1/alpha) / (2n));  empirical_bernstein: lower = w (a - b)/n - 2w hw_y(n, V, alpha),
// V = (a (1 - ybar)^2 + b ybar^2 + c (1/2 - ybar)^2) / (n - 1), ybar = (a + c/2) / n, c = n - a - b
export function lowerFromCounts(bound: 'hoeffding' | 'empirical_bernstein', a: number, b: number, s: Pick<PlanSetting, 'n' | 'alpha' | 'weight'>): number {
  const { n, alpha, weight: w } = s;
  const effect = (w * (a - b)) / n;
  if (bound === 'hoeffding') return effect - 2 * w * sqrt(log(1 / alpha) / (2 * n));
  const c = n - a - b;
  const ybar = (a + c / 2) / n;
  const v = (a * (1 - ybar) ** 2 + b * ybar ** 2 + c * (0.5 - ybar) ** 2) / (n - 1);
  return effect - 2 * w * empiricalBernsteinHalfwidthY(n, v, alpha);
}

// p+ = (q + delta/w)/2, p- = (q - delta/w)/2, p0 = 1 - q; null when delta cannot happen at this q (|delta/w| > q)
export function cellProbabilities(s: Pick<PlanSetting, 'weight' | 'discordance'>, trueEffect: number): { plus: number; minus: number; zero: number } | null {
  const e = trueEffect / s.weight;
  if (Math.abs(e) > s.discordance + 1e-15) return null;
  return { plus: Math.max(0, (s.discordance + e) / 2), minus: Math.max(0, (s.discordance - e) / 2), zero: 1 - s.discordance };
}

// power = sum_{a+b<=n} n!/(a! b! c!) p+^a p-^b p0^c [lower(a, b) > margin], the pmf in logs (log-factorials by summation)
export function exactPower(bound: 'hoeffding' | 'empirical_bernstein', s: PlanSetting, trueEffect: number): number | null {
  const p = cellProbabilities(s, trueEffect);
  if (!p) return null;
  const { n } = s;
  const logFact = [0];
  for (let k = 1; k <= n; k++) logFact.push(logFact[k - 1] + log(k));
  const logTerm = (count: number, prob: number) => (count === 0 ? 0 : prob === 0 ? -Infinity : count * log(prob));
  let power = 0;
  for (let a = 0; a <= n; a++) {
    const la = logTerm(a, p.plus);
    if (la === -Infinity) break;
    for (let b = 0; a + b <= n; b++) {
      const lb = logTerm(b, p.minus);
      if (lb === -Infinity) break;
      const c = n - a - b;
      const lc = logTerm(c, p.zero);
      if (lc === -Infinity) continue;
      if (!(lowerFromCounts(bound, a, b, s) > s.margin)) continue;
      power += exp(logFact[n] - logFact[a] - logFact[b] - logFact[c] + la + lb + lc);
    }
  }
  return Math.min(1, power);
}

// y_i drawn iid from {1: p+, 0: p-, 1/2: p0} by mulberry32(seed); lower = w (2 L_y - 1)
function simulateBettingLowers(s: PlanSetting, trueEffect: number, draws: number, seed: number): Array<{ effect: number; lower: number }> | null {
  const p = cellProbabilities(s, trueEffect);
  if (!p) return null;
  const random = mulberry32(seed);
  const out: Array<{ effect: number; lower: number }> = [];
  for (let k = 0; k < draws; k++) {
    const y: number[] = [];
    let sum = 0;
    for (let i = 0; i < s.n; i++) {
      const u = random();
      const v = u < p.plus ? 1 : u < p.plus + p.minus ? 0 : 0.5;
      y.push(v);
      sum += v;
    }
    out.push({ effect: s.weight * (2 * (sum / s.n) - 1), lower: s.weight * (2 * bettingLowerY(y, s.alpha) - 1) });
  }
  return out;
}

/** the betting bound's power: the share of `draws` simulated evaluations whose lower bound clears the margin */
export function simulatedBettingPower(s: PlanSetting, trueEffect: number, draws = BETTING_DRAWS, seed = BETTING_SIMULATION_SEED): number | null {
  const sims = simulateBettingLowers(s, trueEffect, draws, seed);
  return sims ? sims.filter((x) => x.lower > s.margin).length / draws : null;
}

/** the betting bound's half-width (effect - lower), the median over `draws` simulated evaluations at true effect 0 */
export function simulatedBettingHalfwidth(s: PlanSetting, draws = BETTING_DRAWS, seed = BETTING_SIMULATION_SEED): number {
  const sims = simulateBettingLowers(s, 0, draws, seed) ?? [];
  const widths = sims.map((x) => x.effect - x.lower).sort((a, b) => a - b);
  return widths.length % 2 === 1 ? widths[(widths.length - 1) / 2] : (widths[widths.length / 2 - 1] + widths[widths.length / 2]) / 2;
}

// empirical Bernstein at observed effect e and discordance q: V = (q - (e/w)^2) / 4 * n / (n - 1); halfwidth = 2w hw_y(n, V, alpha)
export function empiricalBernsteinHalfwidthAt(s: PlanSetting, observedEffect: number): number {
  const e = observedEffect / s.weight;
  const v = (Math.max(0, s.discordance - e * e) / 4) * (s.n / (s.n - 1));
  return 2 * s.weight * empiricalBernsteinHalfwidthY(s.n, v, s.alpha);
}

/**
 * The smallest observed effect that concludes against `margin` (lower bound above it): Hoeffding margin + hw;
 * empirical Bernstein the root of e - hw(e) = margin at discordance q (bisection); betting the smallest w (a - b)/n,
 * a + b = round(q n), whose median lower bound over 41 seeded arrangements of its items concludes (the bound moves a
 * lot with where the items fall in the order). Null when no effect possible at q concludes.
 */
export function minConcludingEffect(bound: BoundName, s: PlanSetting, margin = s.margin): number | null {
  const { n, weight: w } = s;
  if (bound === 'hoeffding') return margin + 2 * w * sqrt(log(1 / s.alpha) / (2 * n));
  if (bound === 'empirical_bernstein') {
    const f = (e: number) => e - empiricalBernsteinHalfwidthAt(s, e) - margin;
    let lo = -w * s.discordance;
    let hi = w * s.discordance;
    if (!(f(hi) > 0)) return null;
    if (f(lo) > 0) return lo;
    for (let k = 0; k < 200 && hi - lo > 1e-14; k++) {
      const mid = (lo + hi) / 2;
      if (f(mid) > 0) hi = mid;
      else lo = mid;
    }
    return hi;
  }
  // betting: the bound depends on where the items fall in the order, so a count difference concludes when the
  // median lower bound over BETTING_ARRANGEMENTS arrangements of its items (seeded) clears the margin; bisection on k
  const m = Math.round(s.discordance * n);
  const orders = Array.from({ length: BETTING_ARRANGEMENTS }, (_, r) => bettingOrder(n, BETTING_SIMULATION_SEED + r));
  const concludes = (k: number) => {
    const a = (m + k) / 2;
    const laid = Array.from({ length: n }, (_, i) => (i < a ? 1 : i < m ? 0 : 0.5));
    const lowers = orders.map((order) => w * (2 * bettingLowerY(order.map((i) => laid[i]), s.alpha) - 1)).sort((x, y) => x - y);
    return lowers[(lowers.length - 1) / 2] > margin;
  };
  if (!concludes(m)) return null;
  // k runs over -m, -m + 2, ..., m: search the index j (k = -m + 2j) of the first concluding one
  let lo = -1;
  let hi = m;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (concludes(-m + 2 * mid)) hi = mid;
    else lo = mid;
  }
  return (w * (-m + 2 * hi)) / n;
}

/** the bound's half-width at true effect 0 and discordance q (betting: the simulated median) */
export function plannedHalfwidth(bound: BoundName, s: PlanSetting): number {
  if (bound === 'hoeffding') return 2 * s.weight * sqrt(log(1 / s.alpha) / (2 * s.n));
  if (bound === 'empirical_bernstein') return empiricalBernsteinHalfwidthAt(s, 0);
  return simulatedBettingHalfwidth(s);
}

/** P(lower bound > margin) at a true effect: exact for Hoeffding and empirical Bernstein, simulated for betting */
export function plannedPower(bound: BoundName, s: PlanSetting, trueEffect: number): number | null {
  return bound === 'betting' ? simulatedBettingPower(s, trueEffect) : exactPower(bound, s, trueEffect);
}
