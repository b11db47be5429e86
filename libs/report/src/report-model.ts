// What the report shows, computed from a run: the chart.js configuration of every chart (plain JSON, drawn by
// the page as is) and the tables: RunData in, ReportModel out (the provenance block and the discordant items are
// read from the run directory unless given).
import type { ChartConfiguration } from 'chart.js';
import { pairItems, PairedItemsError, percentile } from '@rx/stats';
import { histogram, sharedRange } from './histogram';
import { discordantItems, readProvenance, type DiscordantItem, type Provenance } from './provenance';
import { readArmCurves, type ArmCurves } from './step-curves';
import type { DecisionNumbers, DevAccuracySeries, GateBound, GateReportEntry, RunData, StepSeries } from './run-data';

export type SectionId = 'reward' | 'gates' | 'distributions' | 'decision';

type BarLineData = Array<[number, number] | { x: string; y: number } | null>;
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

export interface GateRow {
  report: string;
  metric: string;
  measures: string;
  value: string;
  bound: string;
  pass: boolean;
}

export interface PairedTable {
  treatment: string;
  baseline: string;
  n: number;
  /** treatment correct, baseline correct */
  both: number;
  treatmentOnly: number;
  baselineOnly: number;
  neither: number;
  treatmentAccuracy: number;
  baselineAccuracy: number;
}

export type VerdictTone = 'supported' | 'refuted' | 'inconclusive' | 'stopped' | 'unknown';

export interface ReportModel {
  title: string;
  runId: string | null;
  meta: Array<[string, string]>;
  verdict: { headline: string; reasoning: string[]; tone: VerdictTone; source: string | null };
  gateRows: GateRow[];
  paired: PairedTable | null;
  baseAccuracy: { n: number; accuracy: number } | null;
  decision: DecisionNumbers | null;
  charts: ChartSpec[];
  provenance: Provenance;
  discordant: { items: DiscordantItem[]; total: number; treatment: string; baseline: string } | null;
  /** what a section lacks, shown in its place */
  missing: Partial<Record<SectionId | 'paired', string>>;
  notes: string[];
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

const HISTOGRAM_BINS = 30;

export interface ReportExtras {
  provenance: Provenance;
  discordant: ReportModel['discordant'];
  /** each arm's metrics.jsonl */
  curves: ArmCurves[];
}

/** the provenance block and the discordant items of a run, read from its directory */
export function readReportExtras(run: RunData): ReportExtras {
  return {
    provenance: readProvenance(run.root),
    discordant: run.treatment && run.baseline ? { ...discordantItems(run.root, run.treatment, run.baseline), treatment: run.treatment, baseline: run.baseline } : null,
    curves: readArmCurves(run.root, run.arms.map((a) => a.name)).curves,
  };
}

export function buildReportModel(run: RunData, generatedAt?: string, extras: ReportExtras = readReportExtras(run)): ReportModel {
  const notes = [...run.notes];
  const missing: ReportModel['missing'] = {};
  const color = seriesColors(run);
  const charts: ChartSpec[] = [];

  const reward = rewardChart(run.steps, color);
  if (reward) charts.push(reward);
  else missing.reward = 'no step logs with a reward in this run';
  const dev = devAccuracyChart(run.devAccuracy, (arm) => color({ arm, label: arm }));
  if (dev) charts.push(dev);
  const neighbors = neighborsPerStepChart(run.steps.filter((s) => s.phase === 'training'), color);
  if (neighbors) charts.push(neighbors);

  charts.push(...curveCharts(extras.curves, color));

  const gateCharts = run.gateReports.length > 0 ? gateMetricCharts(run.gateReports) : [];
  charts.push(...gateCharts);
  if (run.gateReports.length === 0) missing.gates = 'no gate report in this run';

  const training = run.steps.filter((s) => s.phase === 'training');
  const distSeries = training.length > 0 ? training : run.steps;
  const adv = distributionChart('chart-advantages', 'Advantage A_i over all rollouts', 'advantage A_i', distSeries, (s) => s.steps.flatMap((p) => p.advantages), color);
  const ness = distributionChart('chart-neighbors', 'Effective neighbours n_eff,i = (Σw)² / Σw² over all rollouts', 'effective neighbours n_eff,i', distSeries, (s) => s.steps.flatMap((p) => p.effectiveNeighbors), color);
  if (adv) charts.push(adv);
  if (ness) charts.push(ness);
  if (!adv && !ness) missing.distributions = 'no rollouts with advantages in the step logs';

  const paired = pairedTable(run, notes);
  if (!paired) missing.paired = run.treatment && run.baseline ? `needs ${run.treatment}/eval.jsonl and ${run.baseline}/eval.jsonl` : 'the treatment and baseline arms are not known (no spec in the run)';
  if (paired && run.decision) crossCheck(paired, run.decision, notes);

  if (run.decision) charts.push(hoeffdingChart(run.decision));
  else missing.decision = 'no decision in this run (decision-summary.json)';

  const base = run.evals.find((e) => e.model === 'base');
  const meta: Array<[string, string]> = [];
  if (run.runId) meta.push(['run', run.runId]);
  if (run.backend) meta.push(['backend', run.backend]);
  if (run.createdAt) meta.push(['started', run.createdAt]);
  if (run.status) meta.push(['status', run.status.reason ? `${run.status.status}: ${run.status.reason}` : run.status.status]);
  meta.push(['arms', run.arms.map((a) => (a.role ? `${a.name} (${a.role})` : a.name)).join(', ') || 'unknown']);
  meta.push(['directory', run.root]);
  if (generatedAt) meta.push(['report written', generatedAt]);

  return {
    title: titleFor(run.title ?? 'Experiment run', extras.provenance),
    runId: run.runId,
    meta,
    verdict: run.verdict
      ? { headline: run.verdict.headline, reasoning: run.verdict.reasoning, tone: toneOf(run.verdict.headline, run.status?.status ?? null), source: run.verdict.source }
      : { headline: 'no verdict yet', reasoning: [run.status ? `the run is ${run.status.status}` : 'the run has no decision or record'], tone: 'unknown', source: null },
    gateRows: run.gateReports.flatMap((r) =>
      r.results.map((g) => ({ report: r.label, metric: g.metric, measures: g.measures, value: formatGateValue(g.value), bound: g.boundText, pass: g.pass })),
    ),
    paired,
    baseAccuracy: base ? { n: base.items.length, accuracy: base.items.filter((i) => i.correct).length / base.items.length } : null,
    decision: run.decision,
    provenance: extras.provenance,
    discordant: extras.discordant,
    charts,
    missing,
    notes,
  };
}

/** a title that names GSM8K says what stands in for it */
function titleFor(title: string, p: Provenance): string {
  const dataset = p.rows.find(([k]) => k === 'dataset')?.[1];
  return p.datasetNote && dataset && /gsm8k/i.test(title) ? `${title} (run on ${dataset}, standing in for GSM8K)` : title;
}

// --- colours -----------------------------------------------------------------------------------------------------
type SeriesColor = (s: { arm: string; label: string }) => string;

/** an arm's first series (training) in the arm's colour, its further series (pilots) in the next shades */
function seriesColors(run: RunData): SeriesColor {
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

const baseOptions = (title: string) => ({
  animation: false as const,
  responsive: true,
  maintainAspectRatio: false,
  plugins: { title: { display: true, text: title, font: { size: 15 } }, legend: { position: 'top' as const } },
});

// --- reward per step ---------------------------------------------------------------------------------------------
function rewardChart(series: readonly StepSeries[], color: SeriesColor): ChartSpec | null {
  const drawn = series.filter((s) => s.steps.some((p) => p.rewardMean !== null));
  if (drawn.length === 0) return null;
  const config: ChartConfiguration<'line'> = {
    type: 'line',
    data: {
      datasets: drawn.map((s) => ({
        label: s.phase === 'training' ? `${s.label} (training)` : s.label,
        data: s.steps.filter((p) => p.rewardMean !== null).map((p) => ({ x: p.step, y: p.rewardMean as number })),
        borderColor: color(s),
        backgroundColor: color(s),
        borderWidth: s.phase === 'training' ? 2.5 : 1.5,
        borderDash: s.phase === 'training' ? [] : [6, 4],
        pointRadius: s.phase === 'training' ? 3 : 4.5,
        tension: 0,
      })),
    },
    options: {
      ...baseOptions('Mean training reward per step'),
      scales: {
        x: { type: 'linear', title: { display: true, text: 'step' }, ticks: { precision: 0 } },
        y: { title: { display: true, text: 'mean reward of the step\'s rollouts' } },
      },
    },
  };
  return { id: 'chart-reward', section: 'reward', title: 'Reward per step', config, dataColors: [...new Set(drawn.map((s) => color(s)))] };
}

// --- format rate and completion length per step (metrics.jsonl) --------------------------------------------------
function curveCharts(curves: readonly ArmCurves[], color: SeriesColor): ChartSpec[] {
  if (curves.length === 0) return [];
  const chart = (id: string, title: string, yTitle: string, y: (l: ArmCurves['lines'][number]) => number | undefined, yRange?: { min: number; max: number }): ChartSpec => {
    const config: ChartConfiguration<'line'> = {
      type: 'line',
      data: {
        datasets: curves.map((c) => ({
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
        })),
      },
      options: {
        ...baseOptions(title),
        scales: { x: { type: 'linear', title: { display: true, text: 'step' }, ticks: { precision: 0 } }, y: { ...(yRange ?? {}), title: { display: true, text: yTitle } } },
      },
    };
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
function devAccuracyChart(series: readonly DevAccuracySeries[], color: (arm: string) => string): ChartSpec | null {
  if (series.length === 0) return null;
  const config: ChartConfiguration<'line'> = {
    type: 'line',
    data: {
      datasets: series.map((s) => ({
        label: `${s.arm} (${s.points[0].n} dev items)`,
        data: s.points.map((p) => ({ x: p.updates, y: p.accuracy })),
        borderColor: color(s.arm),
        backgroundColor: color(s.arm),
        borderWidth: 2.5,
        pointRadius: 4,
        tension: 0,
      })),
    },
    options: {
      ...baseOptions('Greedy accuracy on the fixed dev sample (train items, never RL prompts or test)'),
      scales: {
        x: { type: 'linear', title: { display: true, text: 'updates' }, ticks: { precision: 0 } },
        y: { title: { display: true, text: 'dev accuracy' } },
      },
    },
  };
  return { id: 'chart-dev-accuracy', section: 'reward', title: 'Dev accuracy', config, dataColors: [...new Set(series.map((s) => color(s.arm)))] };
}

// --- effective neighbours per step --------------------------------------------------------------------------------
// per step: p10 and median over the step's rollouts of n_eff,i = (Σw)² / Σw² (the gate reads the p10)
function neighborsPerStepChart(series: readonly StepSeries[], color: SeriesColor): ChartSpec | null {
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
  const config: ChartConfiguration<'line'> = {
    type: 'line',
    data: { datasets: drawn.flatMap((s) => [line(s, 10, 'p10', []), line(s, 50, 'median', [6, 4])]) },
    options: {
      ...baseOptions('Effective neighbours n_eff,i = (Σw)² / Σw² per training step (p10 solid, median dashed)'),
      scales: {
        x: { type: 'linear', title: { display: true, text: 'step' }, ticks: { precision: 0 } },
        y: { title: { display: true, text: 'effective neighbours' } },
      },
    },
  };
  return { id: 'chart-neighbors-per-step', section: 'reward', title: 'Effective neighbours per step', config, dataColors: [...new Set(drawn.map((s) => color(s)))] };
}

// --- gates against their bounds ----------------------------------------------------------------------------------
function gateMetricCharts(reports: readonly GateReportEntry[]): ChartSpec[] {
  const metrics = [...new Set(reports.flatMap((r) => r.results.map((g) => g.metric)))];
  return metrics.map((metric, index) => {
    const rows = reports.flatMap((r) => r.results.filter((g) => g.metric === metric).map((g) => ({ label: r.label, g })));
    const labels = rows.map((r) => r.label);
    const values = rows.flatMap((r) => valuesOf(r.g.value));
    const boundNumbers = rows.flatMap((r) => [...(r.g.bound.one_of ?? []), ...(r.g.bound.min !== undefined ? [r.g.bound.min] : []), ...(r.g.bound.max !== undefined ? [r.g.bound.max] : [])]);
    const [axisMin, axisMax] = paddedRange([...values, ...boundNumbers]);
    const halfBand = (axisMax - axisMin) * 0.03;
    const maxAllowed = Math.max(1, ...rows.map((r) => r.g.bound.one_of?.length ?? 1));
    const bands = Array.from({ length: maxAllowed }, (_, k) => ({
      type: 'bar' as const,
      label: k === 0 ? 'allowed by the bound' : `allowed by the bound (${k + 1})`,
      data: rows.map((r) => bandOf(r.g.bound, k, axisMin, axisMax, halfBand)),
      backgroundColor: 'rgba(64, 192, 87, 0.22)',
      borderColor: COLORS.band,
      borderWidth: 2,
      borderSkipped: false,
      grouped: false,
      // drawn under the values (chart.js draws a lower order on top)
      order: 2,
      barPercentage: 0.55,
      categoryPercentage: 1,
    }));
    const first = rows[0].g;
    // a one-sided bound (min only or max only) is also drawn as a threshold line across the reports
    const thresholdOf = (b: GateBound): number | null => (b.min !== undefined && b.max === undefined ? b.min : b.max !== undefined && b.min === undefined ? b.max : null);
    const thresholds = rows.map((r) => ({ x: r.label, y: thresholdOf(r.g.bound) }));
    const threshold = thresholds.every((t) => t.y !== null)
      ? [{ type: 'line' as const, label: `threshold (${first.boundText})`, data: thresholds as Array<{ x: string; y: number }>, order: 0, borderColor: COLORS.margin, backgroundColor: COLORS.margin, borderWidth: 2, borderDash: [8, 5], pointRadius: 0, fill: false }]
      : [];
    const points = rows.flatMap((r) => valuesOf(r.g.value).map((v) => ({ x: r.label, y: v, pass: r.g.pass })));
    const pointColors = points.map((p) => (p.pass ? COLORS.pass : COLORS.fail));
    const config: ChartConfiguration<'bar' | 'line', BarLineData, string> = {
      type: 'bar',
      data: {
        labels,
        datasets: [
          ...bands.filter((b) => b.data.some((d) => d !== null)).map((b) => ({ ...b, data: b.data as BarLineData })),
          {
            type: 'line' as const,
            label: 'measured value (blue pass, red fail)',
            data: points.map((p) => ({ x: p.x, y: p.y })),
            showLine: false,
            order: 1,
            pointRadius: 8,
            pointHoverRadius: 9,
            pointBackgroundColor: pointColors,
            pointBorderColor: pointColors,
            backgroundColor: COLORS.pass,
            borderColor: COLORS.pass,
          },
          ...threshold,
        ],
      },
      options: {
        ...baseOptions(`${metric}: needs ${first.boundText}`),
        scales: {
          x: { title: { display: true, text: 'gate report' } },
          y: { min: axisMin, max: axisMax, title: { display: true, text: metric } },
        },
      },
    };
    const dataColors = [...new Set([COLORS.band, ...pointColors, ...(threshold.length > 0 ? [COLORS.margin] : [])])];
    return { id: `chart-gate-${index}`, section: 'gates' as const, title: metric, config, dataColors };
  });
}

function valuesOf(v: number | number[] | null): number[] {
  return v === null ? [] : Array.isArray(v) ? v : [v];
}

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

/** the allowed region of a bound drawn as a floating bar: [min, max], open ends to the axis edge, ±halfBand around an allowed value */
function bandOf(b: GateBound, k: number, axisMin: number, axisMax: number, halfBand: number): [number, number] | null {
  if (b.one_of) {
    const v = b.one_of[k];
    return v === undefined ? null : [v - halfBand, v + halfBand];
  }
  if (k > 0 || (b.min === undefined && b.max === undefined)) return null;
  return [b.min ?? axisMin, b.max ?? axisMax];
}

function formatGateValue(v: number | number[] | null): string {
  if (v === null) return 'no value';
  return Array.isArray(v) ? `{${v.map(fmt).join(', ')}}` : fmt(v);
}

// --- distributions -----------------------------------------------------------------------------------------------
function distributionChart(
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

// --- the paired table and the decision ---------------------------------------------------------------------------
function pairedTable(run: RunData, notes: string[]): PairedTable | null {
  const t = run.evals.find((e) => e.model === run.treatment);
  const b = run.evals.find((e) => e.model === run.baseline);
  if (!t || !b || !run.treatment || !run.baseline) return null;
  try {
    const p = pairItems({ source: t.source, items: t.items }, { source: b.source, items: b.items });
    const n = p.itemIds.length;
    let both = 0;
    let treatmentOnly = 0;
    let baselineOnly = 0;
    for (let i = 0; i < n; i++) {
      if (p.treatment[i] === 1 && p.baseline[i] === 1) both++;
      else if (p.treatment[i] === 1) treatmentOnly++;
      else if (p.baseline[i] === 1) baselineOnly++;
    }
    const neither = n - both - treatmentOnly - baselineOnly;
    return { treatment: run.treatment, baseline: run.baseline, n, both, treatmentOnly, baselineOnly, neither, treatmentAccuracy: (both + treatmentOnly) / n, baselineAccuracy: (both + baselineOnly) / n };
  } catch (err) {
    if (!(err instanceof PairedItemsError)) throw err;
    notes.push(`the eval files do not pair: ${err.message}`);
    return null;
  }
}

/** the decision's n and wins should be those of the eval files (treatment-only = d_i > 0 for weights +1/-1) */
function crossCheck(p: PairedTable, d: DecisionNumbers, notes: string[]): void {
  if (d.n !== p.n) notes.push(`the decision counts n = ${d.n} items, the eval files pair ${p.n}`);
  if (d.winsTreatment !== null && d.winsTreatment !== p.treatmentOnly) notes.push(`the decision counts ${d.winsTreatment} treatment wins, the eval files ${p.treatmentOnly}`);
  if (d.winsBaseline !== null && d.winsBaseline !== p.baselineOnly) notes.push(`the decision counts ${d.winsBaseline} baseline wins, the eval files ${p.baselineOnly}`);
}

function hoeffdingChart(d: DecisionNumbers): ChartSpec {
  const alpha = d.alpha !== null ? `, α = ${d.alpha} each side` : '';
  const datasets: ChartConfiguration<'scatter'>['data']['datasets'] = [
    {
      label: `Hoeffding interval [${fmt(d.lower)}, ${fmt(d.upper)}] = effect ± ${fmt(d.halfwidth)}${alpha}`,
      data: [{ x: d.lower, y: 0 }, { x: d.upper, y: 0 }],
      showLine: true,
      borderColor: COLORS.pass,
      backgroundColor: COLORS.pass,
      borderWidth: 8,
      pointRadius: 6,
      pointStyle: 'line',
    },
    {
      label: `effect (mean paired difference) = ${fmt(d.effect)}`,
      data: [{ x: d.effect, y: 0 }],
      borderColor: COLORS.effect,
      backgroundColor: COLORS.effect,
      pointRadius: 9,
      pointStyle: 'rectRot',
    },
    {
      label: 'no difference (0)',
      data: [{ x: 0, y: -1 }, { x: 0, y: 1 }],
      showLine: true,
      borderColor: COLORS.zero,
      backgroundColor: COLORS.zero,
      borderWidth: 1.5,
      borderDash: [2, 3],
      pointRadius: 0,
    },
  ];
  if (d.margin !== null) {
    datasets.push({
      label: `margin = ${fmt(d.margin)} (supported when the lower bound exceeds it)`,
      data: [{ x: d.margin, y: -1 }, { x: d.margin, y: 1 }],
      showLine: true,
      borderColor: COLORS.margin,
      backgroundColor: COLORS.margin,
      borderWidth: 2.5,
      borderDash: [8, 5],
      pointRadius: 0,
    });
  }
  const xs = [d.lower, d.upper, 0, ...(d.margin !== null ? [d.margin] : [])];
  const [xMin, xMax] = paddedRange(xs);
  const title = `Paired Hoeffding interval against the margin (n = ${d.n}): ${d.outcome ?? 'no outcome'}`;
  const config: ChartConfiguration<'scatter'> = {
    type: 'scatter',
    data: { datasets },
    options: {
      ...baseOptions(title),
      plugins: { title: { display: true, text: title, font: { size: 15 } }, legend: { position: 'top', align: 'start' } },
      scales: {
        x: { type: 'linear', min: xMin, max: xMax, title: { display: true, text: 'paired difference in accuracy, treatment − baseline' } },
        y: { type: 'linear', min: -1.5, max: 1.5, display: false },
      },
    },
  };
  return { id: 'chart-hoeffding', section: 'decision', title: 'Hoeffding interval', config, dataColors: d.margin !== null ? [COLORS.pass, COLORS.margin] : [COLORS.pass] };
}

function toneOf(headline: string, status: string | null): VerdictTone {
  const h = headline.toLowerCase();
  if (/\binconclusive\b/.test(h)) return 'inconclusive';
  if (/\brefuted\b|\bnot supported\b/.test(h)) return 'refuted';
  if (/\bsupported\b|\bnoninferior\b/.test(h)) return 'supported';
  if (/\bstopped\b|\bfailed\b/.test(h) || status === 'stopped' || status === 'failed') return 'stopped';
  return 'unknown';
}

/** 3 significant digits, no trailing zeros */
export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  return String(Number(x.toPrecision(Math.abs(x) >= 1000 ? 6 : 3)));
}
