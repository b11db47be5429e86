// Pearson correlation that never divides by a zero variance: it reports why there is no r instead.

export type PearsonResult =
  | { ok: true; r: number; n: number }
  | { ok: false; n: number; reason: 'too_few_points' | 'zero_variance_x' | 'zero_variance_y' | 'zero_variance_both' | 'non_finite' };

// r = sum (x - mx)(y - my) / sqrt(sum (x - mx)^2 * sum (y - my)^2); zero variance = all values equal
export function pearson(x: readonly number[], y: readonly number[]): PearsonResult {
  if (x.length !== y.length) throw new RangeError(`pearson needs paired values: ${x.length} x values, ${y.length} y values`);
  const n = x.length;
  if (!x.every(Number.isFinite) || !y.every(Number.isFinite)) return { ok: false, n, reason: 'non_finite' };
  if (n < 2) return { ok: false, n, reason: 'too_few_points' };
  const constX = x.every((v) => v === x[0]);
  const constY = y.every((v) => v === y[0]);
  if (constX && constY) return { ok: false, n, reason: 'zero_variance_both' };
  if (constX) return { ok: false, n, reason: 'zero_variance_x' };
  if (constY) return { ok: false, n, reason: 'zero_variance_y' };
  const mx = x.reduce((s, v) => s + v, 0) / n;
  const my = y.reduce((s, v) => s + v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  x.forEach((xi, i) => {
    const dx = xi - mx;
    const dy = y[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  });
  // rounding can push |r| a hair past 1
  const r = Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy)));
  return { ok: true, r, n };
}
