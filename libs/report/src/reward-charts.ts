// The charts of the page's reward section, per step or per update and per arm: the mean reward (training and
// pilots), the format rate, completion length and batch signals of each arm's metrics.jsonl, the dev accuracy, and
// the effective neighbours.
import type { ChartConfiguration } from 'chart.js';
import { percentile } from '@rx/stats';
import { baseOptions, type ChartSpec, type SeriesColor } from './chart-spec';
import type { DevAccuracySeries, StepSeries } from './run-data';
import type { ArmCurves } from './step-curves';

/** a line chart over a whole-number x axis (steps or updates), as every chart of this section draws it */
function lineChartConfig(
  title: string,
  datasets: ChartConfiguration<'line'>['data']['datasets'],
  axes: { x: string; y: string; yRange?: { min: number; max: number } },
): ChartConfiguration<'line'> {
  return {
    type: 'line',
    data: { datasets },
    options: {
      ...baseOptions(title),
      scales: {
        x: { type: 'linear', title: { display: true, text: axes.x }, ticks: { precision: 0 } },
        y: { ...axes.yRange, title: { display: true, text: axes.y } },
      },
    },
  };
}

// --- reward per step ---------------------------------------------------------------------------------------------
export function rewardChart(series: readonly StepSeries[], color: SeriesColor): ChartSpec | null {
  const drawn = series.filter((s) => s.steps.some((p) => p.rewardMean !== null));
  if (drawn.length === 0) return null;
  const datasets = drawn.map((s) => ({
    label: s.phase === 'training' ? `${s.label} (training)` : s.label,
    data: s.steps.filter((p) => p.rewardMean !== null).map((p) => ({ x: p.step, y: p.rewardMean as number })),
    borderColor: color(s),
    backgroundColor: color(s),
    borderWidth: s.phase === 'training' ? 2.5 : 1.5,
    borderDash: s.phase === 'training' ? [] : [6, 4],
    pointRadius: s.phase === 'training' ? 3 : 4.5,
    tension: 0,
  }));
  const config = lineChartConfig('Mean training reward per step', datasets, { x: 'step', y: 'mean reward of the step\'s rollouts' });
  return { id: 'chart-reward', section: 'reward', title: 'Reward per step', config, dataColors: [...new Set(drawn.map((s) => color(s)))] };
}

// --- format rate and completion length per step (metrics.jsonl) --------------------------------------------------
export function curveCharts(curves: readonly ArmCurves[], color: SeriesColor): ChartSpec[] {
  if (curves.length === 0) return [];
  const chart = (id: string, title: string, yTitle: string, y: (l: ArmCurves['lines'][number]) => number | undefined, yRange?: { min: number; max: number }): ChartSpec => {
    const datasets = curves.map((c) => ({
      label: c.arm,
      // a key older lines lack leaves their steps out
      data: c.lines.flatMap((l) => {
        const v = y(l);
        return v === undefined ? [] : [{ x: l.step, y: v }];
      }),
      borderColor: color({ arm: c.arm, label: c.arm }),
      backgroundColor: color({ arm: c.arm, label: c.arm }),
      borderWidth: 2.5,
      pointRadius: 3,
      tension: 0,
    }));
    const config = lineChartConfig(title, datasets, { x: 'step', y: yTitle, yRange });
    return { id, section: 'reward', title, config, dataColors: [...new Set(curves.map((c) => color({ arm: c.arm, label: c.arm })))] };
  };
  const has = (key: 'rx/frac_reward_zero_std' | 'rx/completions/clipped_ratio') => curves.some((c) => c.lines.some((l) => l[key] !== undefined));
  return [
    chart('chart-format-rate', 'Format rate per step (env/all/format)', 'fraction of rollouts well formed', (l) => l['env/all/format'], { min: 0, max: 1 }),
    chart('chart-completion-length', 'Mean completion length per step (env/all/ac_tokens_per_turn)', 'completion tokens per rollout', (l) => l['env/all/ac_tokens_per_turn']),
    // the batch signals (absent in runs written before them)
    ...(has('rx/frac_reward_zero_std')
      ? [chart('chart-zero-spread', 'Zero reward spread per step (rx/frac_reward_zero_std)', 'groups with zero reward spread (GS1: rollouts with baseline = reward)', (l) => l['rx/frac_reward_zero_std'], { min: 0, max: 1 })]
      : []),
    ...(has('rx/completions/clipped_ratio')
      ? [chart('chart-length-clipped', 'Completions cut by a length limit per step (rx/completions/clipped_ratio)', 'fraction cut by max_tokens or the context', (l) => l['rx/completions/clipped_ratio'], { min: 0, max: 1 })]
      : []),
  ];
}

// --- dev accuracy every 10 updates -------------------------------------------------------------------------------
export function devAccuracyChart(series: readonly DevAccuracySeries[], color: (arm: string) => string): ChartSpec | null {
  if (series.length === 0) return null;
  const datasets = series.map((s) => ({
    label: `${s.arm} (${s.points[0].n} dev items)`,
    data: s.points.map((p) => ({ x: p.updates, y: p.accuracy })),
    borderColor: color(s.arm),
    backgroundColor: color(s.arm),
    borderWidth: 2.5,
    pointRadius: 4,
    tension: 0,
  }));
  const config = lineChartConfig('Greedy accuracy on the fixed dev sample (train items, never RL prompts or test)', datasets, { x: 'updates', y: 'dev accuracy' });
  return { id: 'chart-dev-accuracy', section: 'reward', title: 'Dev accuracy', config, dataColors: [...new Set(series.map((s) => color(s.arm)))] };
}

// --- effective neighbours per step --------------------------------------------------------------------------------
// per step: p10 and median over the step's rollouts of n_eff,i = (Σw)² / Σw² (the gate reads the p10)
export function neighborsPerStepChart(series: readonly StepSeries[], color: SeriesColor): ChartSpec | null {
  const drawn = series.filter((s) => s.steps.some((p) => p.effectiveNeighbors.length > 0));
  if (drawn.length === 0) return null;
  const line = (s: StepSeries, q: number, name: string, dash: number[]) => ({
    label: `${s.label} ${name}`,
    data: s.steps.filter((p) => p.effectiveNeighbors.length > 0).map((p) => ({ x: p.step, y: percentile(p.effectiveNeighbors, q) })),
    borderColor: color(s),
    backgroundColor: color(s),
    borderWidth: 2,
    borderDash: dash,
    pointRadius: 2.5,
    tension: 0,
  });
  const datasets = drawn.flatMap((s) => [line(s, 10, 'p10', []), line(s, 50, 'median', [6, 4])]);
  const config = lineChartConfig('Effective neighbours n_eff,i = (Σw)² / Σw² per training step (p10 solid, median dashed)', datasets, { x: 'step', y: 'effective neighbours' });
  return { id: 'chart-neighbors-per-step', section: 'reward', title: 'Effective neighbours per step', config, dataColors: [...new Set(drawn.map((s) => color(s)))] };
}
