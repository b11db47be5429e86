// The charts of the page's distributions section: a histogram per arm over all its rollouts, on shared bins.
import type { ChartConfiguration } from 'chart.js';
import { baseOptions, type ChartSpec, type SeriesColor } from './chart-spec';
import { histogram, sharedRange } from './histogram';
import { fmt } from './number-format';
import type { StepSeries } from './run-data';

const HISTOGRAM_BINS = 30;

export function distributionChart(
  id: string,
  title: string,
  axis: string,
  series: readonly StepSeries[],
  pick: (s: StepSeries) => number[],
  color: SeriesColor,
): ChartSpec | null {
  const byArm = new Map<string, { label: string; arm: string; values: number[] }>();
  for (const s of series) {
    const key = s.label;
    const entry = byArm.get(key) ?? { label: s.label, arm: s.arm, values: [] };
    entry.values.push(...pick(s));
    byArm.set(key, entry);
  }
  const withValues = [...byArm.values()].filter((a) => a.values.length > 0);
  // an arm whose every value is the same (the group mean's n_eff = group size - 1) is said in words, so the
  // spike does not flatten the other arm's distribution; unless no arm varies
  const isConstant = (a: { values: number[] }) => a.values.every((v) => v === a.values[0]);
  const varying = withValues.filter((a) => !isConstant(a));
  const arms = varying.length > 0 ? varying : withValues;
  const constant = varying.length > 0 ? withValues.filter(isConstant) : [];
  const caption = constant.map((a) => `${a.label}: all ${a.values.length} rollouts at ${fmt(a.values[0])}`).join('; ');
  const range = sharedRange(...arms.map((a) => a.values));
  if (!range || arms.length === 0) return null;
  const hists = arms.map((a) => ({ ...a, h: histogram(a.values, HISTOGRAM_BINS, range) }));
  const edges = hists[0].h.edges;
  const labels = edges.slice(0, -1).map((e, k) => fmt((e + edges[k + 1]) / 2));
  const config: ChartConfiguration<'bar'> = {
    type: 'bar',
    data: {
      labels,
      datasets: hists.map((a) => ({
        label: `${a.label} (${a.h.total} rollouts)`,
        data: a.h.counts.map((c) => c / a.h.total),
        backgroundColor: color(a),
        borderColor: color(a),
        borderWidth: 1,
        barPercentage: 1,
        categoryPercentage: 0.9,
      })),
    },
    options: {
      ...baseOptions(title),
      scales: {
        x: { title: { display: true, text: `${axis} (bin centre)` } },
        y: { min: 0, title: { display: true, text: 'fraction of the arm\'s rollouts' } },
      },
    },
  };
  return { id, section: 'distributions', title, config, dataColors: [...new Set(hists.map((a) => color(a)))], ...(caption ? { caption } : {}) };
}
