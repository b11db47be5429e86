// rx status <dir>: what a run directory says about its run, from its files alone (it reads, never writes):
// the phases done and their wall times, each arm's steps, the gate table, the evaluation and the decision.
import { formatGateNumber, type GateResult } from '@rx/gates';
import {
  checkRunFilesAgainstState,
  loadRunState,
  PHASES,
  readManifest,
  readRunFile,
  readRunFileIfExists,
  readRunLines,
  RunDir,
  type DecisionSummary,
  type RunRecord,
  type SeenDeadLetterLine,
} from '@rx/run-dir';
import { exchangeCheckLines } from './exchange/exchange-lines';
import { formatDuration } from './format-duration';

export interface RunStatus {
  dir: string;
  run_id: string;
  title: string;
  backend: string;
  status: string;
  reason: string | null;
  phases: Array<{ phase: string; done: boolean; wall_seconds: number }>;
  arms: Array<{ arm: string; steps_done: number; steps: number; attempt: number; last_reward: number | null }>;
  /** each pilot's gates as data: the metric, its exact value, the spec's bound, pass or fail */
  gates: Array<{ bandwidth: number; pass: boolean; checks: Array<Pick<GateResult, 'metric' | 'value' | 'bound' | 'boundText' | 'pass'>> }>;
  chosen_bandwidth: number | null;
  evaluation: Array<{ model: string; accuracy: number; n: number }>;
  decision: Pick<DecisionSummary, 'n' | 'effect' | 'lower' | 'upper' | 'outcome'> | null;
  verdict: RunRecord['verdict'] | null;
  /** jobs of this run the pipeline gave up on (dead-letters.jsonl): how many, and the latest few */
  dead_letters: { count: number; latest: Array<Pick<SeenDeadLetterLine, 'sourceQueue' | 'sourceJobId' | 'reason' | 'error'>> };
  /** the exchange's validators on exchange/record.json, one line each (null: not exported) */
  exchange_record: string[] | null;
}

const DEAD_LETTERS_SHOWN = 5;

export function runStatus(root: string): RunStatus {
  const dir = new RunDir(root);
  const manifest = readManifest(dir);
  const state = loadRunState(dir).state;
  const spec = readRunFile(dir, 'spec.json');
  checkRunFilesAgainstState(dir, state, spec.arms.map((a) => a.name));
  const pilot = readRunFileIfExists(dir, 'pilot.json');
  const evaluation = readRunFileIfExists(dir, 'evaluation.json');
  const decision = readRunFileIfExists(dir, 'decision-summary.json');
  const record = readRunFileIfExists(dir, 'record.json');
  return {
    dir: dir.root,
    run_id: manifest.runId,
    title: spec.title,
    backend: manifest.backend,
    status: state.status,
    reason: state.reason,
    phases: PHASES.map((p) => ({ phase: p, done: state.completed.includes(p), wall_seconds: state.wallSeconds[p] ?? 0 })),
    arms: spec.arms.map((a) => {
      const s = state.arms[a.name];
      const steps = readRunLines(dir, '<arm>/steps.jsonl', dir.stepsFile(a.name)).filter((r) => !s || r.runId === s.runId);
      return { arm: a.name, steps_done: steps.length, steps: spec.steps, attempt: s?.attempt ?? 0, last_reward: steps.length ? steps[steps.length - 1].gate.rewardMean : null };
    }),
    gates: (pilot?.pilots ?? []).map((p) => ({
      bandwidth: p.bandwidth,
      pass: p.report.pass,
      checks: p.report.results.map((r) => ({ metric: r.metric, value: r.value, bound: r.bound, boundText: r.boundText, pass: r.pass })),
    })),
    chosen_bandwidth: pilot?.chosen_bandwidth ?? null,
    evaluation: Object.values(evaluation?.models ?? {}).map((m) => ({ model: m.model, accuracy: m.accuracy, n: m.n })),
    decision: decision ? { n: decision.n, effect: decision.effect, lower: decision.lower, upper: decision.upper, outcome: decision.outcome } : null,
    verdict: record?.verdict ?? null,
    dead_letters: deadLetters(dir),
    exchange_record: exchangeCheckLines(dir.root),
  };
}

function deadLetters(dir: RunDir): RunStatus['dead_letters'] {
  const all = readRunLines(dir, 'dead-letters.jsonl', dir.deadLettersFile);
  return {
    count: all.length,
    latest: all.slice(-DEAD_LETTERS_SHOWN).map((l) => ({ sourceQueue: l.sourceQueue, sourceJobId: l.sourceJobId, reason: l.reason, error: l.error })),
  };
}

function formatGateValue(v: GateResult['value']): string {
  if (v === null) return 'no value';
  return Array.isArray(v) ? `{${v.map(formatGateNumber).join(', ')}}` : formatGateNumber(v);
}

export function formatRunStatus(s: RunStatus): string {
  const out: string[] = [];
  out.push(`run ${s.run_id}: "${s.title}"`);
  out.push(`  ${s.dir} (${s.backend} backend)`);
  out.push(`status: ${s.status}${s.reason ? ` (${s.reason})` : ''}`);
  out.push(`phases: ${s.phases.map((p) => `${p.phase} ${p.done ? `done ${formatDuration(p.wall_seconds)}` : p.wall_seconds > 0 ? `started ${formatDuration(p.wall_seconds)}` : '-'}`).join(', ')}`);
  for (const a of s.arms) out.push(`  ${a.arm.padEnd(12)} ${a.steps_done}/${a.steps} steps${a.attempt > 1 ? ` (attempt ${a.attempt})` : ''}${a.last_reward !== null ? `, last reward ${a.last_reward.toFixed(3)}` : ''}`);
  for (const g of s.gates) {
    out.push(`gates at bandwidth ${g.bandwidth}: ${g.pass ? 'pass' : 'FAIL'}`);
    for (const c of g.checks) out.push(`  ${c.pass ? 'pass' : 'FAIL'} ${c.metric} = ${formatGateValue(c.value)}, needs ${c.boundText}`);
  }
  if (s.chosen_bandwidth !== null) out.push(`kernel bandwidth: ${s.chosen_bandwidth}`);
  for (const e of s.evaluation) out.push(`eval ${e.model.padEnd(12)} accuracy ${e.accuracy.toFixed(4)} (${e.n} items)`);
  if (s.decision) out.push(`decision: ${s.decision.outcome}: effect ${s.decision.effect.toFixed(4)}, interval [${s.decision.lower.toFixed(4)}, ${s.decision.upper.toFixed(4)}] over ${s.decision.n} paired items`);
  if (s.dead_letters.count > 0) {
    const shown = s.dead_letters.latest.length;
    out.push(`dead letters: ${s.dead_letters.count}${s.dead_letters.count > shown ? ` (the latest ${shown})` : ''}; in ${s.dir}/dead-letters.jsonl`);
    for (const l of s.dead_letters.latest) out.push(`  ${l.sourceJobId} on ${l.sourceQueue ?? '?'} (${l.reason}): ${(l.error ?? '').slice(0, 300)}`);
  }
  if (s.verdict) {
    // the reasoning's first line usually opens with the outcome itself ("Inconclusive: the interval ...")
    const first = s.verdict.reasoning[0] ?? '';
    out.push(first.toLowerCase().startsWith(s.verdict.outcome) ? `verdict: ${first}` : `verdict: ${s.verdict.outcome}: ${first}`);
  }
  if (s.exchange_record) {
    out.push('exchange record (rx check-record):');
    for (const l of s.exchange_record) out.push(`  ${l}`);
  }
  return out.join('\n');
}
