// What the report shows, assembled from a run: the charts of each section (reward-charts.ts, gate-charts.ts,
// distribution-charts.ts, decision-chart.ts), the tables, the verdict and what each section lacks: RunData in,
// ReportModel out (the provenance block, the discordant items and the metrics.jsonl curves are read from the run
// directory: report-extras.ts).
import { pairItems, PairedItemsError } from '@rx/stats';
import { seriesColors, type ChartSpec, type SectionId } from './chart-spec';
import { hoeffdingChart } from './decision-chart';
import { distributionChart } from './distribution-charts';
import { gateMetricCharts } from './gate-charts';
import { fmt } from './number-format';
import type { Provenance } from './provenance';
import { readReportExtras, type ReportExtras } from './report-extras';
import { curveCharts, devAccuracyChart, neighborsPerStepChart, rewardChart } from './reward-charts';
import type { DecisionNumbers, RunData } from './run-data';

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
  discordant: ReportExtras['discordant'];
  /** what a section lacks, shown in its place */
  missing: Partial<Record<SectionId | 'paired', string>>;
  notes: string[];
}

export function buildReportModel(run: RunData, generatedAt?: string): ReportModel {
  const extras = readReportExtras(run);
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

function formatGateValue(v: number | number[] | null): string {
  if (v === null) return 'no value';
  return Array.isArray(v) ? `{${v.map(fmt).join(', ')}}` : fmt(v);
}

// --- the paired table, checked against the decision --------------------------------------------------------------
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

function toneOf(headline: string, status: string | null): VerdictTone {
  const h = headline.toLowerCase();
  if (/\binconclusive\b/.test(h)) return 'inconclusive';
  if (/\brefuted\b|\bnot supported\b/.test(h)) return 'refuted';
  if (/\bsupported\b|\bnoninferior\b/.test(h)) return 'supported';
  if (/\bstopped\b|\bfailed\b/.test(h) || status === 'stopped' || status === 'failed') return 'stopped';
  return 'unknown';
}
