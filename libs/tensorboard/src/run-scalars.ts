// What a run directory gives TensorBoard, per TensorBoard run (a folder of the export):
//   <arm>            every numeric key of <arm>/metrics.jsonl at its step (the tag is the key: env/all/reward/total, ...),
//                    and dev/accuracy from <arm>/training.json at step = updates (step s of metrics.jsonl sampled
//                    from the weights after s updates, so both share one axis)
//   <pilot>          the pilot's gates from <pilot>/gate-report.json at step 0: gates/<metric> (a set of values as
//                    gates/<metric>/min and /max), gates/<metric>/pass (1 or 0), gates/<metric>/bound_min|bound_max,
//                    gates/pass
//   <pilot>/<arm>    every numeric key of the pilot arm's metrics.jsonl
// Wall times are the steps' commit times (steps.jsonl's committedAt) where known, else `now`. Files are read through
// @rx/run-dir's schemas; a part that does not read back is left out with a note.
import { existsSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { readRunFileIfExists, readRunLines, RUN_FILE_NAMES, RunDir, RunFileError } from '@rx/run-dir';
import type { ScalarPoint } from './event-file';

/** The directory holds no run, or nothing to export: one line for the CLI. */
export class TensorBoardExportError extends Error {
  override readonly name = 'TensorBoardExportError';
}

export interface TensorBoardRun {
  /** the folder under the export, relative (`gs1_kernel`, `pilot_bw1.0`, `pilot_bw1.0/gs1_kernel`) */
  name: string;
  points: ScalarPoint[];
}

const leaf = (name: string): string => name.slice(name.indexOf('/') + 1);
const isDir = (p: string): boolean => existsSync(p) && statSync(p).isDirectory();

/** the TensorBoard runs of a run directory, with a note for each part left out */
export function runScalars(root: string, now: number): { runs: TensorBoardRun[]; notes: string[] } {
  const abs = path.resolve(root);
  if (!existsSync(abs)) throw new TensorBoardExportError(`no run directory at ${root}: pass the --out directory of an rx run`);
  if (!statSync(abs).isDirectory()) throw new TensorBoardExportError(`${root} is a file, not a run directory: pass the --out directory of an rx run`);
  if (!existsSync(path.join(abs, RUN_FILE_NAMES.manifest)) && !existsSync(path.join(abs, RUN_FILE_NAMES.record))) {
    throw new TensorBoardExportError(`${root} is not a run directory (no ${RUN_FILE_NAMES.manifest} or ${RUN_FILE_NAMES.record}): pass the --out directory of an rx run`);
  }
  const dir = new RunDir(abs);
  const notes: string[] = [];
  const runs: TensorBoardRun[] = [];
  const subdirs = readdirSync(abs).filter((name) => isDir(path.join(abs, name))).sort();
  for (const name of subdirs) {
    if (name.startsWith('pilot_bw')) {
      const gates = gatePoints(dir, path.join(abs, name), now, notes);
      if (gates.length > 0) runs.push({ name, points: gates });
      for (const arm of readdirSync(path.join(abs, name)).filter((a) => isDir(path.join(abs, name, a))).sort()) {
        const points = metricsPoints(dir, path.join(abs, name, arm), now);
        if (points.length > 0) runs.push({ name: `${name}/${arm}`, points });
      }
    } else {
      const armDir = path.join(abs, name);
      const points = [...metricsPoints(dir, armDir, now), ...devAccuracyPoints(dir, name, armDir, now, notes)];
      if (points.length > 0) runs.push({ name, points });
    }
  }
  return { runs, notes };
}

/** seconds since the epoch at which each step was committed (steps.jsonl beside the metrics) */
function commitTimes(dir: RunDir, armDir: string): Map<number, number> {
  const times = new Map<number, number>();
  for (const r of readRunLines(dir, RUN_FILE_NAMES.steps, path.join(armDir, leaf(RUN_FILE_NAMES.steps)))) {
    const t = Date.parse(r.committedAt);
    if (Number.isFinite(t)) times.set(r.step, t / 1000);
  }
  return times;
}

// every numeric key of every line (the lines that match the schema, up to the first that does not), at the line's step
function metricsPoints(dir: RunDir, armDir: string, now: number): ScalarPoint[] {
  const lines = readRunLines(dir, RUN_FILE_NAMES.stepMetrics, path.join(armDir, leaf(RUN_FILE_NAMES.stepMetrics)));
  if (lines.length === 0) return [];
  const times = commitTimes(dir, armDir);
  return lines.flatMap((line) =>
    Object.entries(line as Record<string, unknown>)
      .filter((e): e is [string, number] => e[0] !== 'step' && typeof e[1] === 'number' && Number.isFinite(e[1]))
      .map(([tag, value]) => ({ tag, step: line.step, value, wallTime: times.get(line.step) ?? now })),
  );
}

function devAccuracyPoints(dir: RunDir, arm: string, armDir: string, now: number, notes: string[]): ScalarPoint[] {
  let training;
  try {
    training = readRunFileIfExists(dir, RUN_FILE_NAMES.armTraining, dir.trainingFile(arm));
  } catch (err) {
    if (!(err instanceof RunFileError)) throw err;
    notes.push(`${arm}: dev accuracy left out (${err.message})`);
    return [];
  }
  if (!training?.dev_accuracy) return [];
  const times = commitTimes(dir, armDir);
  // the weights after u updates were saved with step u - 1
  return training.dev_accuracy.map((p) => ({ tag: 'dev/accuracy', step: p.updates, value: p.accuracy, wallTime: times.get(p.updates - 1) ?? now }));
}

function gatePoints(dir: RunDir, pilotDir: string, now: number, notes: string[]): ScalarPoint[] {
  let pilot;
  try {
    pilot = readRunFileIfExists(dir, RUN_FILE_NAMES.gateReport, dir.gateReportFile(pilotDir));
  } catch (err) {
    if (!(err instanceof RunFileError)) throw err;
    notes.push(`${path.basename(pilotDir)}: gates left out (${err.message})`);
    return [];
  }
  if (!pilot) return [];
  const at = (tag: string, value: number): ScalarPoint => ({ tag, step: 0, value, wallTime: now });
  const points = [at('gates/pass', pilot.report.pass ? 1 : 0)];
  for (const g of pilot.report.results) {
    const tag = `gates/${g.metric}`;
    if (typeof g.value === 'number') points.push(at(tag, g.value));
    else if (Array.isArray(g.value) && g.value.length > 0) points.push(at(`${tag}/min`, Math.min(...g.value)), at(`${tag}/max`, Math.max(...g.value)));
    points.push(at(`${tag}/pass`, g.pass ? 1 : 0));
    if (g.bound.min !== undefined) points.push(at(`${tag}/bound_min`, g.bound.min));
    if (g.bound.max !== undefined) points.push(at(`${tag}/bound_max`, g.bound.max));
  }
  return points;
}
