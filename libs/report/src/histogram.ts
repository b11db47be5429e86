// Equal-width histograms over a shared range, so the arms' distributions are drawn on the same bins.

export interface Histogram {
  /** bins + 1 edges, increasing */
  edges: number[];
  counts: number[];
  total: number;
}

// range = [min, max] over all values; a single value v (or a span under 1e-9 of the magnitude) gives
// [v - 0.5, v + 0.5] around the midpoint; null when there are none
export function sharedRange(...series: ReadonlyArray<readonly number[]>): [number, number] | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const xs of series) {
    for (const x of xs) {
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
  }
  if (lo === Infinity) return null;
  if (hi - lo <= 1e-9 * Math.max(1, Math.abs(lo), Math.abs(hi))) {
    const mid = lo + (hi - lo) / 2;
    return [mid - 0.5, mid + 0.5];
  }
  return [lo, hi];
}

// bin k holds lo + k w <= x < lo + (k + 1) w, w = (hi - lo) / bins; the last bin also holds x = hi
export function histogram(values: readonly number[], bins: number, range: readonly [number, number]): Histogram {
  const [lo, hi] = range;
  if (!Number.isInteger(bins) || bins < 1) throw new RangeError(`bins must be a positive integer, got ${bins}`);
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && lo < hi)) throw new RangeError(`range must be finite with lo < hi, got [${lo}, ${hi}]`);
  const width = (hi - lo) / bins;
  if (!(lo + width > lo)) throw new RangeError(`range [${lo}, ${hi}] is too narrow for ${bins} bins`);
  const edges = Array.from({ length: bins + 1 }, (_, k) => (k === bins ? hi : lo + k * width));
  const counts = new Array<number>(bins).fill(0);
  let total = 0;
  for (const x of values) {
    if (!(x >= lo && x <= hi)) continue;
    let k = Math.min(bins - 1, Math.floor((x - lo) / width));
    // the division can round across an edge: settle on the bin whose stated edges hold x
    while (k > 0 && x < edges[k]) k--;
    while (k < bins - 1 && x >= edges[k + 1]) k++;
    counts[k] += 1;
    total += 1;
  }
  return { edges, counts, total };
}
