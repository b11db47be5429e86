// Every JSON file of a run directory is read back through this one reader: its name -> its zod schema -> the parsed
// value, or a RunFileError of one line that names the file, what is wrong with it (missing, a directory, not JSON,
// which field) and the fix. The schemas hold the fields the readers (the controller on --resume, rx status) rely on;
// the rest of each file passes through. A file's content is never echoed (a key put there by mistake stays unseen).
import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { parseSpec, type ExperimentSpec } from '@rx/spec';
import type { DecisionSummary } from '../phases/decision.phase';
import type { EvaluationResult } from '../phases/evaluation/evaluation.phase';
import type { PilotResult } from '../phases/pilot.phase';
import type { RunRecord } from '../phases/record/record.phase';
import type { SharedInitResult } from '../phases/shared-init.phase';
import type { ArmTraining } from '../phases/training.phase';
import type { RunDir } from './run-dir';
import { runManifestSchema, runStateSchema, RunStateError, RunStateStore, type PhaseName, type RunManifest, type RunState } from './run-state';

/** A run directory's file is missing, unreadable or malformed: one line, exit 2. */
export class RunFileError extends RunStateError {}

const num = z.number();
const gateResultSchema = z
  .object({ metric: z.string(), value: z.union([num, z.array(num), z.null()]), bound: z.unknown(), boundText: z.string(), pass: z.boolean() })
  .passthrough();
const pilotSchema = z
  .object({
    chosen_bandwidth: num.nullable(),
    pilots: z.array(z.object({ bandwidth: num, report: z.object({ pass: z.boolean(), results: z.array(gateResultSchema) }).passthrough() }).passthrough()),
  })
  .passthrough();
const evaluationSchema = z
  .object({
    evaluator_id: z.string(),
    models: z.record(z.string(), z.object({ model: z.string(), sha256: z.string(), n: z.number().int().nonnegative(), accuracy: num }).passthrough()),
  })
  .passthrough();
const decisionSchema = z.object({ n: z.number().int().nonnegative(), effect: num, lower: num, upper: num, outcome: z.string() }).passthrough();
const recordSchema = z
  .object({ version: z.literal(1), run_id: z.string(), status: z.string(), verdict: z.object({ outcome: z.string(), reasoning: z.array(z.string()) }).passthrough() })
  .passthrough();
const sharedInitSchema = z.object({ state_path: z.string(), sampler_path: z.string(), arms: z.record(z.string(), z.object({ output_sha256: z.string() }).passthrough()) }).passthrough();
const trainingSummarySchema = z.object({ bandwidth: num.nullable(), first_update_check: z.unknown(), arms: z.record(z.string(), z.string()) }).passthrough();
const armTrainingSchema = z.object({ arm: z.string(), run_id: z.string(), steps: z.number().int().nonnegative(), checkpoints: z.array(z.object({ step: num }).passthrough()) }).passthrough();
const specSchema = z.unknown().transform((value, ctx): ExperimentSpec => {
  const parsed = parseSpec(value);
  if (parsed.ok) return parsed.spec;
  for (const e of parsed.errors.slice(0, 3)) ctx.addIssue({ code: 'custom', message: e });
  return z.NEVER;
});

interface RunFileKind<T> {
  schema: z.ZodType<unknown, z.ZodTypeDef, unknown>;
  /** what the file is, for the message */
  what: string;
  /** how to get a readable run back */
  fix: string;
  /** the type the rest of the controller uses (the schema checks its fields read back) */
  _type?: T;
}

const RESTART = 'restore it from a copy of the run, or start the run again in a new directory (rx run --spec <spec.json> --out <new dir>)';
const REDO = (phase: PhaseName) => `restore it from a copy of the run, or remove '${phase}' from "completed" in state.json and continue with rx run --resume (the phase runs again)`;

const kind = <T>(schema: z.ZodType<unknown, z.ZodTypeDef, unknown>, what: string, fix: string): RunFileKind<T> => ({ schema, what, fix });

/** file name -> schema, what it is and the fix */
export const RUN_FILES = {
  'run.json': kind<RunManifest>(runManifestSchema, 'a run manifest', RESTART),
  'state.json': kind<RunState>(runStateSchema, 'a run state', RESTART),
  'spec.json': kind<ExperimentSpec>(specSchema, "a run's spec", RESTART),
  'shared-init.json': kind<SharedInitResult>(sharedInitSchema, 'a shared initialisation', REDO('shared_init')),
  'pilot.json': kind<PilotResult>(pilotSchema, "a pilot's gates", REDO('pilot')),
  'training.json': kind<{ bandwidth: number | null; first_update_check: unknown; arms: Record<string, string> }>(trainingSummarySchema, "a training summary", REDO('training')),
  'evaluation.json': kind<EvaluationResult>(evaluationSchema, 'an evaluation', REDO('evaluation')),
  'decision-summary.json': kind<DecisionSummary>(decisionSchema, 'a decision summary', REDO('decision')),
  'record.json': kind<RunRecord>(recordSchema, 'a run record', 'restore it from a copy of the run (rx run writes it when the run ends)'),
  '<arm>/training.json': kind<ArmTraining>(armTrainingSchema, "an arm's training", REDO('training')),
} as const;

export type RunFileName = keyof typeof RUN_FILES;
type RunFileType<N extends RunFileName> = (typeof RUN_FILES)[N] extends RunFileKind<infer T> ? T : never;

/** the files each completed phase leaves (a resumed run reads them back instead of running the phase again) */
export const PHASE_FILES: Partial<Record<PhaseName, RunFileName[]>> = {
  shared_init: ['shared-init.json'],
  pilot: ['pilot.json'],
  training: ['training.json'],
  evaluation: ['evaluation.json'],
  decision: ['decision-summary.json'],
  record: ['record.json'],
};

function issuesOf(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
    .join('; ');
}

function readText(file: string, name: RunFileName, fix: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    const why = code === 'EISDIR' ? 'is a directory, not a file' : code === 'EACCES' || code === 'EPERM' ? 'cannot be read (permission denied)' : `cannot be read (${code ?? (err as Error).message})`;
    throw new RunFileError(`${file} (${RUN_FILES[name].what}) ${why}: ${fix}`);
  }
}

/**
 * The file `name` of the run (at `file`, default `<run>/<name>`), parsed and checked; null when it does not exist.
 * Anything else wrong with it (a directory, not JSON, a field missing or of the wrong type) is a RunFileError.
 */
export function readRunFileIfExists<N extends RunFileName>(dir: RunDir, name: N, file: string = dir.path(name)): RunFileType<N> | null {
  const { schema, what, fix } = RUN_FILES[name];
  const text = readText(file, name, fix);
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw new RunFileError(`${file} (${what}) is not JSON (${text.trim() === '' ? 'empty' : `${Buffer.byteLength(text)} bytes`}): ${fix}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new RunFileError(`${file} is not ${what} (${issuesOf(parsed.error)}): ${fix}`);
  return parsed.data as RunFileType<N>;
}

/** as readRunFileIfExists, and a missing file is a RunFileError too */
export function readRunFile<N extends RunFileName>(dir: RunDir, name: N, file: string = dir.path(name)): RunFileType<N> {
  const value = readRunFileIfExists(dir, name, file);
  if (value === null) throw new RunFileError(`${file} (${RUN_FILES[name].what}) is missing${name === 'run.json' ? `: ${dir.root} holds no run` : ''}: ${RUN_FILES[name].fix}`);
  return value;
}

/** run.json */
export function readManifest(dir: RunDir): RunManifest {
  return readRunFile(dir, 'run.json');
}

/** state.json, with the helpers that write it back */
export function loadRunState(dir: RunDir): RunStateStore {
  return RunStateStore.open(dir, readRunFile(dir, 'state.json'));
}

/**
 * Before a resumed run starts anything: every file its completed phases left is there and reads back (a
 * half-deleted run directory is refused with the file and the fix, not found out after the services are up).
 */
export function checkRunFilesAgainstState(dir: RunDir, state: RunState, arms: readonly string[]): void {
  for (const phase of state.completed) {
    for (const name of PHASE_FILES[phase] ?? []) readRunFile(dir, name);
    if (phase === 'training') for (const arm of arms) readRunFile(dir, '<arm>/training.json', dir.trainingFile(arm));
  }
  // a directory where a file should be is refused even before its phase is done
  for (const name of Object.keys(RUN_FILES) as RunFileName[]) {
    if (name.startsWith('<')) continue;
    try {
      if (statSync(dir.path(name)).isDirectory()) readRunFileIfExists(dir, name);
    } catch (err) {
      if (err instanceof RunFileError) throw err;
    }
  }
}
