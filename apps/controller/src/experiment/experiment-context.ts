// What every phase of a run works with: the run directory and its state, the spec, the data, the backend (for
// the probe, the shared initialisation, held-out sampling and evaluation) and the step bus (training steps go
// through the services).
import type { PolicyBackend, Renderer, RunTokenizer } from '@rx/backend';
import type { RxMetrics } from '@rx/metrics';
import type { ExperimentSpec } from '@rx/spec';
import type { StepBus } from '../infra/step-bus';
import type { ProgressReporter } from '../progress/progress.reporter';
import type { RunDir, RunManifest, RunStateStore } from '@rx/run-dir';
import type { BudgetGuard } from './budget-guard';
import type { ExperimentData } from './experiment-data';

export interface ExperimentContext {
  dir: RunDir;
  manifest: RunManifest;
  state: RunStateStore;
  spec: ExperimentSpec;
  data: ExperimentData;
  backend: PolicyBackend;
  renderer: Renderer;
  /** the run's tokenizer file (null: the renderer needs none), the one every process of the run reads */
  tokenizer?: RunTokenizer | null;
  bus: StepBus;
  progress: ProgressReporter;
  metrics: RxMetrics;
  /** backend requests in flight at once (held-out sampling, evaluation) */
  concurrency: number;
  /** a step that has not completed after this long fails the run */
  stepStallTimeoutMs: number;
  /** set when the run is interrupted (SIGINT/SIGTERM) or a service died */
  signal: AbortSignal;
  /** the budget in force, checked before each step and each model's evaluation (budget-guard.ts) */
  budget?: BudgetGuard;
  /** test hooks */
  hooks?: { afterTrainingStep?: (arm: string, step: number) => void };
}

/** The run was stopped by a pre-registered rule (preflight, gates): not an error, the record says why. */
export class RunStopped extends Error {
  override readonly name = 'RunStopped';
  constructor(
    message: string,
    readonly phase: 'preflight' | 'shared_init' | 'pilot' | 'training' | 'evaluation',
  ) {
    super(message);
  }
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason ?? 'interrupted'));
}
