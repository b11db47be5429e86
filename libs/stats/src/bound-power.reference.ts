// Independent float64 reference of the planned power of the Hoeffding and empirical-Bernstein bounds, for tests
// only. Written apart from bound-power.ts on purpose: the multinomial as N+ ~ Bin(n, p+) and N- | N+ = a ~
// Bin(n - a, p- / (1 - p+)), each pmf by its ratio recurrence (no log-factorials), and the bounds on the d scale
// from the counts' own mean and variance.

function binomialPmf(n: number, p: number): number[] {
  const out = new Array<number>(n + 1).fill(0);
  if (p <= 0) {
    out[0] = 1;
    return out;
  }
  if (p >= 1) {
    out[n] = 1;
    return out;
  }
  // P(0) = (1 - p)^n, P(k) = P(k - 1) (n - k + 1) / k * p / (1 - p)
  out[0] = Math.pow(1 - p, n);
  for (let k = 1; k <= n; k++) out[k] = (out[k - 1] * (n - k + 1) * p) / (k * (1 - p));
  return out;
}

// hoeffding: mean - 2w sqrt(-ln(alpha) / (2n)); empirical Bernstein: mean - sqrt(2 S2 L / n) - 7 (2w) L / (3 (n - 1)), L = ln(2/alpha), S2 of d in {+w, -w, 0}
function concludes(bound: 'hoeffding' | 'empirical_bernstein', a: number, b: number, n: number, alpha: number, w: number, margin: number): boolean {
  const mean = (w * a - w * b) / n;
  if (bound === 'hoeffding') return mean - 2 * w * Math.sqrt(-Math.log(alpha) / (2 * n)) > margin;
  const c = n - a - b;
  const s2 = (a * (w - mean) * (w - mean) + b * (-w - mean) * (-w - mean) + c * mean * mean) / (n - 1);
  const l = -Math.log(alpha / 2);
  return mean - Math.sqrt((2 * s2 * l) / n) - (14 * w * l) / (3 * (n - 1)) > margin;
}

export function powerReference(bound: 'hoeffding' | 'empirical_bernstein', n: number, alpha: number, margin: number, w: number, q: number, delta: number): number {
  const plus = (q + delta / w) / 2;
  const minus = (q - delta / w) / 2;
  const first = binomialPmf(n, plus);
  let total = 0;
  for (let a = 0; a <= n; a++) {
    if (first[a] === 0) continue;
    const second = binomialPmf(n - a, plus >= 1 ? 0 : minus / (1 - plus));
    for (let b = 0; b <= n - a; b++) if (concludes(bound, a, b, n, alpha, w, margin)) total += first[a] * second[b];
  }
  return total;
}
