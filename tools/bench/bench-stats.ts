// Small summary statistics and number formatting for the benchmarks' tables.
import { percentile } from '@rx/stats';

export interface Summary {
  n: number;
  median: number;
  p25: number;
  p75: number;
  min: number;
  max: number;
}

// median = 50th percentile (linear interpolation between order statistics)
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

// sum = x_1 + ... + x_n
export function sum(values: readonly number[]): number {
  let s = 0;
  for (const v of values) s += v;
  return s;
}

// summary = (n, median, 25th and 75th percentile, min, max)
export function summarize(values: readonly number[]): Summary {
  return {
    n: values.length,
    median: percentile(values, 50),
    p25: percentile(values, 25),
    p75: percentile(values, 75),
    min: Math.min(...values),
    max: Math.max(...values),
  };
}

// scaling efficiency at k workers = (throughput_k / throughput_1) / k  (1 = perfectly linear)
export function scalingEfficiency(throughput1: number, throughputK: number, k: number): number {
  if (!(throughput1 > 0) || !(k > 0)) throw new RangeError(`scaling efficiency needs a positive base throughput and worker count (got ${throughput1}, ${k})`);
  return throughputK / throughput1 / k;
}

/** a number with `digits` significant digits, no exponent for the sizes the tables show */
export function fmt(x: number, digits = 3): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const magnitude = Math.floor(Math.log10(Math.abs(x)));
  const decimals = Math.max(0, digits - 1 - magnitude);
  return x.toFixed(Math.min(decimals, 12));
}

/** milliseconds from seconds, formatted */
export function ms(seconds: number, digits = 3): string {
  return `${fmt(seconds * 1000, digits)} ms`;
}

/** a ratio against a target, e.g. `1.04 (target <= 1.02: missed by 0.02)` */
export function verdict(value: number, target: number, direction: 'max' | 'min', unit = ''): string {
  const ok = direction === 'max' ? value <= target : value >= target;
  const sign = direction === 'max' ? '<=' : '>=';
  const gap = Math.abs(value - target);
  return ok ? `met (target ${sign} ${fmt(target)}${unit})` : `MISSED by ${fmt(gap)}${unit} (target ${sign} ${fmt(target)}${unit})`;
}
