// What makes a chaos run "identical" to the clean run with the same seeds, and what every run must hold on its
// own. Pure: over the RunResult each run's controller wrote (and the backend-side step counts read for it).
import type { StepRecord } from '@rx/contracts';
import type { RunResult } from './chaos-controller';

/** a step record without what differs between two runs by construction: ids, paths, wall-clock fields */
export function comparableRecord(r: StepRecord): Omit<StepRecord, 'runId' | 'samplerPath' | 'committedAt' | 'timings'> {
  const { runId: _runId, samplerPath: _samplerPath, committedAt: _committedAt, timings: _timings, ...rest } = r;
  return rest;
}

/** where two JSON values first differ (null: equal) */
export function firstDifference(a: unknown, b: unknown, where: string): string | null {
  if (Object.is(a, b)) return null;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return `${where}: ${JSON.stringify(a)?.slice(0, 80)} != ${JSON.stringify(b)?.slice(0, 80)}`;
  if (Array.isArray(a) !== Array.isArray(b)) return `${where}: array != object`;
  const ka = Object.keys(a as object).sort();
  const kb = Object.keys(b as object).sort();
  if (ka.join() !== kb.join()) return `${where}: fields {${ka.join(',')}} != {${kb.join(',')}}`;
  for (const k of ka) {
    const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${where}.${k}`);
    if (d) return d;
  }
  return null;
}

/**
 * The differences between a run and the clean run: per arm every step's record (rollouts, rewards, advantages,
 * baselines, loss, optimizer step, gate metrics), the final weights hash and the eval file, then the decision.
 */
export function compareRuns(clean: RunResult, run: RunResult): string[] {
  const diffs: string[] = [];
  if (clean.steps !== run.steps) diffs.push(`steps: ${run.steps} != ${clean.steps}`);
  for (const [arm, c] of Object.entries(clean.arms)) {
    const r = run.arms[arm];
    if (!r) {
      diffs.push(`${arm}: missing`);
      continue;
    }
    if (r.records.length !== c.records.length) diffs.push(`${arm}: ${r.records.length} steps != ${c.records.length}`);
    c.records.forEach((cr, i) => {
      const d = r.records[i] ? firstDifference(comparableRecord(r.records[i]), comparableRecord(cr), `${arm} step ${i}`) : `${arm} step ${i}: missing`;
      if (d) diffs.push(d);
    });
    if (r.final.weightsHash !== c.final.weightsHash) diffs.push(`${arm}: final weights hash ${r.final.weightsHash.slice(0, 12)} != ${c.final.weightsHash.slice(0, 12)}`);
    if (r.evalSha256 !== c.evalSha256) diffs.push(`${arm}: eval.jsonl sha256 ${r.evalSha256.slice(0, 12)} != ${c.evalSha256.slice(0, 12)}`);
  }
  const d = firstDifference(run.decision, clean.decision, 'decision');
  if (d) diffs.push(d);
  return diffs;
}

/**
 * What one run must hold by itself: each arm applied exactly `steps` optimizer steps on its final lineage (the
 * backend's own count of the final state, and the optimizer counter of the last record), and no rollout was
 * trained twice (every rollout id once across the arm's steps, every non-dropped rollout one datum).
 */
export function checkRun(run: RunResult, backendSteps: Readonly<Record<string, number | null>>, initialOptimizerSteps = 0): string[] {
  const problems: string[] = [];
  for (const [arm, a] of Object.entries(run.arms)) {
    const applied = backendSteps[arm];
    if (applied !== initialOptimizerSteps + run.steps) problems.push(`${arm}: the backend's final state holds ${applied ?? 'no'} optimizer steps, expected ${initialOptimizerSteps + run.steps}`);
    const last = a.records[a.records.length - 1];
    if (last?.optimizerStep !== initialOptimizerSteps + run.steps) problems.push(`${arm}: the last record's optimizer step is ${last?.optimizerStep}, expected ${initialOptimizerSteps + run.steps}`);
    const ids = a.records.flatMap((r) => r.rollouts.map((x) => x.rolloutId));
    const dup = ids.find((id, i) => ids.indexOf(id) !== i);
    if (dup !== undefined) problems.push(`${arm}: rollout ${dup} trained in two steps`);
    a.records.forEach((r, i) => {
      if (r.step !== i) problems.push(`${arm}: record ${i} is step ${r.step}`);
      const live = r.rollouts.filter((x) => !x.dropped).length;
      if (r.datums !== live) problems.push(`${arm} step ${r.step}: ${r.datums} datums for ${live} rollouts`);
    });
  }
  return problems;
}
