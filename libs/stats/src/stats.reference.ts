// Independent plain-loop references of Pearson's r and the linear percentile, for tests only.

// r = (n sum xy - sum x sum y) / sqrt((n sum x^2 - (sum x)^2)(n sum y^2 - (sum y)^2))
export function pearsonReference(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    syy += y[i] * y[i];
    sxy += x[i] * y[i];
  }
  return (n * sxy - sx * sy) / Math.sqrt((n * sxx - sx * sx) * (n * syy - sy * sy));
}

// the value at fractional rank h = (n - 1) q / 100 of the sorted list: (1 - f) s[k] + f s[k + 1]
export function percentileReference(values: readonly number[], q: number): number {
  const s: number[] = [];
  for (const v of values) {
    let j = s.length;
    s.push(v);
    while (j > 0 && s[j - 1] > v) {
      s[j] = s[j - 1];
      j--;
    }
    s[j] = v;
  }
  const h = ((s.length - 1) * q) / 100;
  const k = Math.floor(h);
  if (k >= s.length - 1) return s[s.length - 1];
  const f = h - k;
  return (1 - f) * s[k] + f * s[k + 1];
}
