// Independent float64 reference of the paired empirical-Bernstein bound, for tests only. Written apart from
// empirical-bernstein.ts on purpose: it works on the d scale throughout (Var(d) = R^2 Var(y)), with Welford's
// one-pass variance, ln 2 - ln alpha, and index loops.

export interface EmpiricalBernsteinReference {
  effect: number;
  halfwidth: number;
  lower: number;
  upper: number;
}

// hw_d = sqrt(2 S2_d (ln 2 - ln alpha) / n) + 7 R (ln 2 - ln alpha) / (3 (n - 1)), S2_d = M2 / (n - 1) by Welford
export function empiricalBernsteinReference(t: readonly number[], b: readonly number[], alpha: number, lo: number, hi: number, wt: number, wb: number): EmpiricalBernsteinReference {
  const n = t.length;
  let sum = 0;
  let mean = 0;
  let m2 = 0;
  for (let i = 0; i < n; i++) {
    const d = wt * t[i] + wb * b[i];
    sum += d;
    const delta = d - mean;
    mean += delta / (i + 1);
    m2 += delta * (d - mean);
  }
  const s2 = m2 / (n - 1);
  const absT = wt < 0 ? -wt : wt;
  const absB = wb < 0 ? -wb : wb;
  const r = (hi - lo) * (absT + absB);
  const l = Math.log(2) - Math.log(alpha);
  const halfwidth = Math.sqrt((2 * s2 * l) / n) + (7 * r * l) / (3 * (n - 1));
  const effect = sum / n;
  return { effect, halfwidth, lower: effect - halfwidth, upper: effect + halfwidth };
}
