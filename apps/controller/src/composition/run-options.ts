// What rx run is given (the flags, the config, the hooks of the tests) and what it gives back, and the errors that
// end a run attempt early: a user's mistake (one line, exit 2) or an interruption (the run can be resumed).
import type { PolicyBackend } from '@rx/backend';
import type { PhaseName, RunRecord, RunState } from '@rx/run-dir';
import type { ControllerConfig } from '../config';
import type { ProgressReporter } from '../progress/progress.reporter';
import type { ExperimentData } from '../experiment/experiment-data';

export type BackendKind = 'embedded' | 'tinker';
export type ServicesMode = 'spawn' | 'external';

export interface RunOptions {
  /** a new run: the spec file and where to put the run */
  specPath?: string;
  outDir?: string;
  overridePath?: string;
  /** continue the run in this directory */
  resumeDir?: string;
  /** resume although the spec, effective configuration or code changed since the run started (recorded as a revision) */
  acceptChanges?: boolean;
  /** default: embedded for the embedded model, tinker otherwise */
  backend?: BackendKind;
  services: ServicesMode;
  config: ControllerConfig;
  progress: ProgressReporter;
  signal: AbortSignal;
  /** the controller's own HTTP server: a port (0: any free one), or null for none; default config.PORT */
  httpPort?: number | null;
  /** started as the service-mode controller (a container): its HTTP server binds 0.0.0.0 unless HOST says otherwise */
  serviceMode?: boolean;
  /** tests only: the controller's own backend (a test double; its services are started through their test entry points) */
  backendFor?: () => PolicyBackend;
  /** tests only: the problems to train and evaluate on, in place of the spec's dataset */
  data?: ExperimentData;
  stepStallTimeoutMs?: number;
  healthTimeoutMs?: number;
  /** test hook: end the attempt as interrupted once this phase has completed */
  interruptAfter?: PhaseName;
  /** test hook: interrupt the attempt once an arm has completed this training step */
  interruptAfterTrainingStep?: number;
}

export interface RunOutcome {
  dir: string;
  status: RunState['status'];
  record: RunRecord | null;
  message: string | null;
  /** a complete run's exchange record: every validator passes (false), or not (true: rx run exits 4) */
  recordFails?: boolean;
}

/** A mistake of the user's (flags, files, environment): one line (plus path-named spec errors), exit 2. */
export class RunUserError extends Error {
  override readonly name = 'RunUserError';
  constructor(
    message: string,
    readonly details: string[] = [],
  ) {
    super(message);
  }
}

export class Interrupted extends Error {
  override readonly name = 'Interrupted';
}

/** --services external with the embedded backend: the policy server is the user's to name */
export const EXTERNAL_NEEDS_BACKEND = '--services external needs RX_BACKEND_URL (the policy server the services use, e.g. http://127.0.0.1:8000); nothing was written';
