// run.json (what the run is: id, spec, backend; written once) and state.json (how far it got: completed phases,
// wall seconds per phase, the attempt of each arm), both validated with zod when read back (run-files.ts).
import { z } from 'zod';
import type { RunDir } from './run-layout';

export const PHASES = ['setup', 'effective_config', 'shared_init', 'preflight', 'pilot', 'training', 'evaluation', 'decision', 'record'] as const;
export type PhaseName = (typeof PHASES)[number];

export const runManifestSchema = z.object({
  version: z.literal(1),
  runId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$/),
  createdAt: z.string().datetime(),
  spec: z.object({
    /** the spec file as given (--spec) */
    source: z.string(),
    /** sha256 of that file's bytes */
    sourceSha256: z.string(),
    /** sha256 of the canonical JSON of the spec the run executes (spec.json: the source with the override applied) */
    sha256: z.string(),
  }),
  override: z.object({ source: z.string(), sha256: z.string() }).nullable(),
  backend: z.enum(['embedded', 'tinker']),
  services: z.enum(['spawn', 'external']),
});
export type RunManifest = z.infer<typeof runManifestSchema>;

const attemptSchema = z.object({
  startedAt: z.string().datetime(),
  endedAt: z.string().datetime().nullable(),
  resumed: z.boolean(),
  outcome: z.enum(['running', 'complete', 'stopped', 'failed', 'interrupted']),
  message: z.string().nullable(),
  /** sha256 over the run's source files when this attempt started */
  codeSha256: z.string().nullable(),
  /** sha256 over the files that decide what the run computes (sources less tests and docs, models, the lock file) */
  codeRelevantSha256: z.string().optional(),
  /** what changed since the run started that this attempt resumed anyway (rx run --resume --accept-changes): its revision */
  acceptedChanges: z.array(z.string()).optional(),
});

const armStateSchema = z.object({
  /** 1 for the first attempt; a restarted arm trains again from the shared initial state under a new run id */
  attempt: z.number().int().positive(),
  runId: z.string(),
  stepsDone: z.number().int().nonnegative(),
  done: z.boolean(),
});

export const runStateSchema = z.object({
  runId: z.string(),
  status: z.enum(['running', 'complete', 'stopped', 'failed', 'interrupted']),
  /** why the run stopped or failed */
  reason: z.string().nullable(),
  completed: z.array(z.enum(PHASES)),
  wallSeconds: z.record(z.enum(PHASES), z.number().nonnegative()),
  /** tokens charged against budget.max_tokens / max_usd per phase, as rx plan counts them (@rx/plan budgetCharges);
   * absent until a run with such a cap charged its first unit */
  tokensCharged: z.record(z.enum(PHASES), z.object({ sampled: z.number().nonnegative(), prefill: z.number().nonnegative(), trained: z.number().nonnegative() })).optional(),
  attempts: z.array(attemptSchema),
  arms: z.record(z.string(), armStateSchema),
  /** the pilot attempt (a pilot interrupted before it finished runs again under a new run id) */
  pilotAttempt: z.number().int().nonnegative(),
  updatedAt: z.string().datetime(),
});
export type RunState = z.infer<typeof runStateSchema>;
export type ArmState = z.infer<typeof armStateSchema>;

export class RunStateError extends Error {
  override readonly name = 'RunStateError';
}

/** state.json with helpers that write it back after every change */
export class RunStateStore {
  private constructor(
    private readonly dir: RunDir,
    private value: RunState,
  ) {}

  static create(dir: RunDir, runId: string): RunStateStore {
    const store = new RunStateStore(dir, {
      runId,
      status: 'running',
      reason: null,
      completed: [],
      wallSeconds: {},
      attempts: [],
      arms: {},
      pilotAttempt: 0,
      updatedAt: new Date().toISOString(),
    });
    store.save();
    return store;
  }

  /** the state read back (run-files.ts: loadRunState) */
  static open(dir: RunDir, state: RunState): RunStateStore {
    return new RunStateStore(dir, state);
  }

  get state(): Readonly<RunState> {
    return this.value;
  }

  isDone(phase: PhaseName): boolean {
    return this.value.completed.includes(phase);
  }

  update(change: (s: RunState) => void): void {
    change(this.value);
    this.save();
  }

  addWall(phase: PhaseName, seconds: number): void {
    this.update((s) => {
      s.wallSeconds[phase] = (s.wallSeconds[phase] ?? 0) + seconds;
    });
  }

  chargeTokens(phase: PhaseName, t: { sampled: number; prefill: number; trained: number }): void {
    this.update((s) => {
      const charged = (s.tokensCharged ??= {});
      const was = charged[phase] ?? { sampled: 0, prefill: 0, trained: 0 };
      charged[phase] = { sampled: was.sampled + t.sampled, prefill: was.prefill + t.prefill, trained: was.trained + t.trained };
    });
  }

  complete(phase: PhaseName): void {
    this.update((s) => {
      if (!s.completed.includes(phase)) s.completed.push(phase);
    });
  }

  beginAttempt(resumed: boolean, codeSha256: string | null, acceptedChanges: string[] = [], codeRelevantSha256?: string): void {
    this.update((s) => {
      s.status = 'running';
      s.reason = null;
      s.attempts.push({ startedAt: new Date().toISOString(), endedAt: null, resumed, outcome: 'running', message: null, codeSha256, ...(codeRelevantSha256 ? { codeRelevantSha256 } : {}), ...(acceptedChanges.length > 0 ? { acceptedChanges } : {}) });
    });
  }

  endAttempt(outcome: RunState['status'], message: string | null): void {
    this.update((s) => {
      s.status = outcome;
      s.reason = message;
      const last = s.attempts[s.attempts.length - 1];
      if (last) {
        last.endedAt = new Date().toISOString();
        last.outcome = outcome;
        last.message = message;
      }
    });
  }

  private save(): void {
    this.value.updatedAt = new Date().toISOString();
    this.dir.writeJson(this.dir.stateFile, this.value);
  }
}
