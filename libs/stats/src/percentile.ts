// Percentile with linear interpolation between order statistics (numpy.percentile's default, method='linear').

// pos = (n - 1) q / 100; v = s[floor(pos)] + (s[ceil(pos)] - s[floor(pos)]) (pos - floor(pos)), s sorted ascending
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new RangeError('percentile of an empty list');
  if (!(q >= 0 && q <= 100)) throw new RangeError(`percentile q must lie in [0, 100], got ${q}`);
  if (!values.every((v) => !Number.isNaN(v))) throw new RangeError('percentile of a list that holds NaN');
  const s = [...values].sort((a, b) => a - b);
  const pos = ((s.length - 1) * q) / 100;
  const i = Math.floor(pos);
  const t = pos - i;
  if (t === 0) return s[i];
  const a = s[i];
  const b = s[i + 1];
  // numpy's _lerp: a + (b - a) t, evaluated from the nearer end for t >= 0.5
  return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}
