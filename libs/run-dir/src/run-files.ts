// Every file of a run directory that the controller writes and anything reads back goes through this catalog: its
// name -> its zod schema, what it is and how to get a readable run back. The writer checks a value against its
// file's schema before it writes it (atomically); the reader parses the file and checks it, or throws a RunFileError
// of one line that names the file, what is wrong with it (missing, a directory, not JSON, which field) and the fix.
// A file's content is never echoed (a key put there by mistake stays unseen). What a reader gets back is the file's
// JSON as written (checked, never reordered or stripped), so a record that embeds it keeps it byte for byte.
import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { budgetRevisionsSchema } from './budget-revisions.schema';
import { stepMetricsLineSchema, stepRecordSchema, transcriptLineSchema } from '@rx/contracts';
import { preflightResultSchema } from '@rx/preflight';
import { parseSpec, type ExperimentSpec } from '@rx/spec';
import { seenDeadLetterSchema } from './dead-letter.schema';
import { decisionSummarySchema } from './decision.schema';
import { effectiveConfigSchema } from './effective-config.schema';
import { endpointsSchema } from './endpoints.schema';
import { evalLineSchema, evaluationSchema } from './evaluation.schema';
import { pilotReportSchema, pilotResultSchema } from './pilot.schema';
import { runRecordSchema } from './record.schema';
import { RUN_FILE_NAMES, type RunDir } from './run-layout';
import { runManifestSchema, runStateSchema, RunStateError, RunStateStore, type PhaseName, type RunState } from './run-state';
import { sharedInitSchema } from './shared-init.schema';
import { armTrainingSchema, trainingSummarySchema } from './training.schema';

/** A run directory's file is missing, unreadable or malformed: one line, exit 2. */
export class RunFileError extends RunStateError {}

const specSchema = z.unknown().transform((value, ctx): ExperimentSpec => {
  const parsed = parseSpec(value);
  if (parsed.ok) return parsed.spec;
  for (const e of parsed.errors.slice(0, 3)) ctx.addIssue({ code: 'custom', message: e });
  return z.NEVER;
});

interface RunFileKind<S extends z.ZodTypeAny> {
  schema: S;
  /** what the file is, for the message */
  what: string;
  /** how to get a readable run back */
  fix: string;
  /** the reader returns the schema's output (spec.json: the spec with its defaults) rather than the file's JSON */
  transforms?: true;
}

const RESTART = 'restore it from a copy of the run, or start the run again in a new directory (rx run --spec <spec.json> --out <new dir>)';
const REDO = (phase: PhaseName) => `restore it from a copy of the run, or remove '${phase}' from "completed" in state.json and continue with rx run --resume (the phase runs again)`;

const kind = <S extends z.ZodTypeAny>(schema: S, what: string, fix: string, transforms?: true): RunFileKind<S> => ({ schema, what, fix, ...(transforms ? { transforms } : {}) });

/** file name (as in RUN_FILE_NAMES; <arm>/<pilot> for the files of each arm or pilot) -> schema, what it is, the fix */
export const RUN_FILES = {
  [RUN_FILE_NAMES.manifest]: kind(runManifestSchema, 'a run manifest', RESTART),
  [RUN_FILE_NAMES.state]: kind(runStateSchema, 'a run state', RESTART),
  [RUN_FILE_NAMES.spec]: kind(specSchema, "a run's spec", RESTART, true),
  [RUN_FILE_NAMES.sourceSpec]: kind(specSchema, "a run's spec before its override", RESTART, true),
  [RUN_FILE_NAMES.effectiveConfig]: kind(effectiveConfigSchema, 'an effective configuration', REDO('effective_config')),
  [RUN_FILE_NAMES.sharedInit]: kind(sharedInitSchema, 'a shared initialisation', REDO('shared_init')),
  [RUN_FILE_NAMES.preflight]: kind(preflightResultSchema, 'a correctness preflight', REDO('preflight')),
  [RUN_FILE_NAMES.pilot]: kind(pilotResultSchema, "a pilot's gates", REDO('pilot')),
  [RUN_FILE_NAMES.gateReport]: kind(pilotReportSchema, "one pilot's gate report", REDO('pilot')),
  [RUN_FILE_NAMES.training]: kind(trainingSummarySchema, 'a training summary', REDO('training')),
  [RUN_FILE_NAMES.armTraining]: kind(armTrainingSchema, "an arm's training", REDO('training')),
  [RUN_FILE_NAMES.evaluation]: kind(evaluationSchema, 'an evaluation', REDO('evaluation')),
  [RUN_FILE_NAMES.decision]: kind(decisionSummarySchema, 'a decision summary', REDO('decision')),
  [RUN_FILE_NAMES.record]: kind(runRecordSchema, 'a run record', 'restore it from a copy of the run (rx run writes it when the run ends)'),
  [RUN_FILE_NAMES.budgetRevisions]: kind(budgetRevisionsSchema, "a run's budget revisions", 'restore it from a copy of the run (a missing file means the spec\'s budget)'),
  [RUN_FILE_NAMES.endpoints]: kind(endpointsSchema, "the services' endpoints", 'rx run --resume writes it again when it starts the services'),
} as const;

export type RunFileName = keyof typeof RUN_FILES;
/** what the file holds, as its schema gives it */
export type RunFileType<N extends RunFileName> = z.output<(typeof RUN_FILES)[N]['schema']>;

/** the JSON-lines files: one schema per line */
export const RUN_LINE_FILES = {
  [RUN_FILE_NAMES.steps]: stepRecordSchema,
  [RUN_FILE_NAMES.stepMetrics]: stepMetricsLineSchema,
  [RUN_FILE_NAMES.transcripts]: transcriptLineSchema,
  [RUN_FILE_NAMES.eval]: evalLineSchema,
  [RUN_FILE_NAMES.deadLetters]: seenDeadLetterSchema,
} as const;
export type RunLineFileName = keyof typeof RUN_LINE_FILES;
export type RunLineType<N extends RunLineFileName> = z.output<(typeof RUN_LINE_FILES)[N]>;

/** the files each completed phase leaves (a resumed run reads them back instead of running the phase again) */
export const PHASE_FILES: Partial<Record<PhaseName, RunFileName[]>> = {
  shared_init: [RUN_FILE_NAMES.sharedInit],
  pilot: [RUN_FILE_NAMES.pilot],
  training: [RUN_FILE_NAMES.training],
  evaluation: [RUN_FILE_NAMES.evaluation],
  decision: [RUN_FILE_NAMES.decision],
  record: [RUN_FILE_NAMES.record],
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

/** the default place of a file: `<run>/<name>`; the files of an arm or a pilot need theirs given (RunDir names them) */
function defaultFile(dir: RunDir, name: RunFileName): string {
  if (name.startsWith('<')) throw new Error(`${name}: pass the file (its arm or pilot is part of its path)`);
  return dir.path(name);
}

/**
 * The file `name` of the run (at `file`, default `<run>/<name>`), parsed and checked; null when it does not exist.
 * Anything else wrong with it (a directory, not JSON, a field missing or of the wrong type) is a RunFileError.
 */
export function readRunFileIfExists<N extends RunFileName>(dir: RunDir, name: N, file: string = defaultFile(dir, name)): RunFileType<N> | null {
  const kind: RunFileKind<z.ZodTypeAny> = RUN_FILES[name];
  const text = readText(file, name, kind.fix);
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw new RunFileError(`${file} (${kind.what}) is not JSON (${text.trim() === '' ? 'empty' : `${Buffer.byteLength(text)} bytes`}): ${kind.fix}`);
  }
  const parsed = kind.schema.safeParse(value);
  if (!parsed.success) throw new RunFileError(`${file} is not ${kind.what} (${issuesOf(parsed.error)}): ${kind.fix}`);
  return (kind.transforms ? parsed.data : value) as RunFileType<N>;
}

/** as readRunFileIfExists, and a missing file is a RunFileError too */
export function readRunFile<N extends RunFileName>(dir: RunDir, name: N, file: string = defaultFile(dir, name)): RunFileType<N> {
  const value = readRunFileIfExists(dir, name, file);
  if (value === null) throw new RunFileError(`${file} (${RUN_FILES[name].what}) is missing${name === RUN_FILE_NAMES.manifest ? `: ${dir.root} holds no run` : ''}: ${RUN_FILES[name].fix}`);
  return value;
}

/**
 * Writes `value` to the file `name` (at `file`, default `<run>/<name>`) atomically, as pretty JSON, after checking
 * it against the file's schema: a value its readers would refuse is never written (a bug, thrown as such).
 */
export function writeRunFile<N extends RunFileName>(dir: RunDir, name: N, value: z.input<(typeof RUN_FILES)[N]['schema']>, file: string = defaultFile(dir, name)): void {
  const kind: RunFileKind<z.ZodTypeAny> = RUN_FILES[name];
  // JSON as it will be read back (undefined fields dropped, non-finite numbers null)
  const parsed = kind.schema.safeParse(JSON.parse(JSON.stringify(value)));
  if (!parsed.success) throw new Error(`not writing ${file}: the value is not ${kind.what} (${issuesOf(parsed.error)})`);
  dir.writeJson(file, value);
}

/**
 * The lines of a JSON-lines file that parse and match its schema, in order, up to the first that does not (a torn
 * last line from a crash ends the read); [] when the file is absent. Each line is returned as written.
 */
export function readRunLines<N extends RunLineFileName>(dir: RunDir, name: N, file: string): Array<RunLineType<N>> {
  const schema: z.ZodTypeAny = RUN_LINE_FILES[name];
  const out: Array<RunLineType<N>> = [];
  for (const value of dir.readLines(file)) {
    if (!schema.safeParse(value).success) break;
    out.push(value as RunLineType<N>);
  }
  return out;
}

/** appends one line to a JSON-lines file, checked against its schema */
export function appendRunLine<N extends RunLineFileName>(dir: RunDir, name: N, file: string, value: z.input<(typeof RUN_LINE_FILES)[N]>): void {
  const schema: z.ZodTypeAny = RUN_LINE_FILES[name];
  const parsed = schema.safeParse(JSON.parse(JSON.stringify(value)));
  if (!parsed.success) throw new Error(`not appending to ${file}: the line is not a ${name} line (${issuesOf(parsed.error)})`);
  dir.appendLine(file, value);
}

/** run.json */
export function readManifest(dir: RunDir) {
  return readRunFile(dir, RUN_FILE_NAMES.manifest);
}

/** state.json, with the helpers that write it back */
export function loadRunState(dir: RunDir): RunStateStore {
  return RunStateStore.open(dir, readRunFile(dir, RUN_FILE_NAMES.state) as RunState);
}

/**
 * Before a resumed run starts anything (and before rx status shows it): every file its completed phases left is
 * there and reads back (a half-deleted run directory is refused with the file and the fix, not found out after the
 * services are up).
 */
export function checkRunFilesAgainstState(dir: RunDir, state: RunState, arms: readonly string[]): void {
  for (const phase of state.completed) {
    for (const name of PHASE_FILES[phase] ?? []) readRunFile(dir, name);
    if (phase === 'training') for (const arm of arms) readRunFile(dir, RUN_FILE_NAMES.armTraining, dir.trainingFile(arm));
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

