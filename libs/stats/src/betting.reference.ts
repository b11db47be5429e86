// Independent float64 reference of the predictable plug-in betting bound, for tests only. Written apart from
// betting.ts on purpose: the running mean and variance recomputed from scratch for every item (O(n^2)), the capital
// as a plain product, the upper bound from its own capital process (not by reflecting y), and the bound found by a
// three-level grid search instead of bisection (resolution 1e-9).

function bets(y: readonly number[], alpha: number): number[] {
  // mu_i = (1/2 + sum_{k=1}^{i} y_k) / (i + 1), each summed from scratch
  const mu: number[] = [];
  for (let i = 1; i <= y.length; i++) {
    let s = 1 / 2;
    for (let k = 1; k <= i; k++) s += y[k - 1];
    mu.push(s / (i + 1));
  }
  const out: number[] = [];
  for (let t = 1; t <= y.length; t++) {
    // sigma^2_{t-1} = (1/4 + sum_{i=1}^{t-1} (y_i - mu_i)^2) / t, summed from scratch
    let acc = 1 / 4;
    for (let i = 1; i <= t - 1; i++) acc += (y[i - 1] - mu[i - 1]) ** 2;
    const sigma2 = acc / t;
    out.push(Math.sqrt((-2 * Math.log(alpha)) / (sigma2 * t * Math.log(1 + t))));
  }
  return out;
}

// K+(m) = prod (1 + min(l_i, 1/(2m)) (y_i - m));  K-(m) = prod (1 - min(l_i, 1/(2(1-m))) (y_i - m))
function capital(y: readonly number[], l: readonly number[], m: number, side: 1 | -1): number {
  const cap = side === 1 ? 0.5 / m : 0.5 / (1 - m);
  let k = 1;
  for (let i = 0; i < y.length; i++) k *= 1 + side * (l[i] < cap ? l[i] : cap) * (y[i] - m);
  return k;
}

// lower: the first m on a grid, refined three times, with K+(m) < 1/alpha; upper: the last m with K-(m) < 1/alpha
export function bettingBoundsReference(y: readonly number[], alpha: number): { lower: number; upper: number } {
  const l = bets(y, alpha);
  const rejectedBelow = (m: number) => capital(y, l, m, 1) >= 1 / alpha;
  const rejectedAbove = (m: number) => capital(y, l, m, -1) >= 1 / alpha;
  let a = 0;
  let step = 1e-3;
  for (let level = 0; level < 3; level++) {
    let m = a;
    while (m + step <= 1 && rejectedBelow(m + step)) m += step;
    a = m;
    step /= 1000;
  }
  const lower = rejectedBelow(0) ? a : 0;
  let z = 1;
  step = 1e-3;
  for (let level = 0; level < 3; level++) {
    let m = z;
    while (m - step >= 0 && rejectedAbove(m - step)) m -= step;
    z = m;
    step /= 1000;
  }
  const upper = rejectedAbove(1) ? z : 1;
  return { lower, upper };
}
