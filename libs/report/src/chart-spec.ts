// What every chart of the report shares: the chart spec the page draws (a chart.js configuration, plain JSON, drawn
// by the page as is), the colours, each series' colour, the options every chart starts from, and the axis range of
// the gate and decision charts.
import type { ChartConfiguration } from 'chart.js';
import type { RunData } from './run-data';

/** the page's sections that hold charts */
export type SectionId = 'reward' | 'gates' | 'distributions' | 'decision';

export type BarLineData = Array<[number, number] | { x: string; y: number } | null>;
export type ReportChartConfig = ChartConfiguration<'line'> | ChartConfiguration<'bar'> | ChartConfiguration<'scatter'> | ChartConfiguration<'bar' | 'line', BarLineData, string>;

export interface ChartSpec {
  /** the canvas id */
  id: string;
  section: SectionId;
  title: string;
  config: ReportChartConfig;
  /** the colours (#rrggbb) of the drawn data: a canvas where the chart drew shows pixels of each */
  dataColors: string[];
  /** a line under the chart */
  caption?: string;
}

export const COLORS = {
  treatment: '#e8590c',
  baseline: '#1971c2',
  treatmentShades: ['#e8590c', '#f08c00', '#c2255c', '#e64980'],
  baselineShades: ['#1971c2', '#0c8599', '#5f3dc4', '#3bc9db'],
  others: ['#2f9e44', '#9c36b5', '#f08c00', '#0c8599'],
  band: '#2b8a3e',
  pass: '#1864ab',
  fail: '#e03131',
  margin: '#e03131',
  effect: '#5f3dc4',
  zero: '#868e96',
} as const;

export type SeriesColor = (s: { arm: string; label: string }) => string;

/** an arm's first series (training) in the arm's colour, its further series (pilots) in the next shades */
export function seriesColors(run: RunData): SeriesColor {
  const palettes = new Map<string, readonly string[]>();
  let next = 0;
  for (const name of [...run.arms.map((a) => a.name), ...run.steps.map((s) => s.arm)]) {
    if (palettes.has(name)) continue;
    if (name === run.treatment) palettes.set(name, COLORS.treatmentShades);
    else if (name === run.baseline) palettes.set(name, COLORS.baselineShades);
    else palettes.set(name, [COLORS.others[next++ % COLORS.others.length]]);
  }
  const byLabel = new Map<string, string>();
  const used = new Map<string, number>();
  for (const s of run.steps) {
    if (byLabel.has(s.label)) continue;
    const k = used.get(s.arm) ?? 0;
    const palette = palettes.get(s.arm) ?? COLORS.others;
    byLabel.set(s.label, palette[k % palette.length]);
    used.set(s.arm, k + 1);
  }
  return (s) => byLabel.get(s.label) ?? palettes.get(s.arm)?.[0] ?? COLORS.others[0];
}

export const baseOptions = (title: string) => ({
  animation: false as const,
  responsive: true,
  maintainAspectRatio: false,
  plugins: { title: { display: true, text: title, font: { size: 15 } }, legend: { position: 'top' as const } },
});

// [lo - pad, hi + pad] widened to multiples of a round step (1, 2, 2.5 or 5 x 10^k, about 6 steps over the span);
// pad = 5% of the span (0.5 when all values are equal)
export function paddedRange(xs: readonly number[]): [number, number] {
  if (xs.length === 0) return [0, 1];
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  const pad = hi > lo ? 0.05 * (hi - lo) : Math.max(0.5, Math.abs(lo) * 0.25);
  const [a, b] = [lo - pad, hi + pad];
  const raw = (b - a) / 6;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * mag >= raw) as number) * mag;
  const round = (x: number) => Number(x.toPrecision(12));
  return [round(Math.floor(a / step) * step), round(Math.ceil(b / step) * step)];
}
