// The phases of a run after setup, in order, as one table: each phase's name, what runs it, and the file it writes
// its result to (the phase's own module writes it, through @rx/run-dir). runExperiment drives the table with one
// loop: a phase an earlier attempt completed is not run again; its result is read back from its file when a later
// phase needs it. The record (record.json) is not in the table: it is written when the attempt ends, however it
// ends (complete, stopped or failed).
import { readRunFile, type DecisionSummary, type EffectiveConfig, type EvaluationResult, type PhaseName, type PilotResult, type RunFileName, type SharedInitResult, type TrainingResult } from '@rx/run-dir';
import type { PreflightResult } from '@rx/preflight';
import { runDecision } from '../phases/decision.phase';
import { writeEffectiveConfig } from '../phases/effective-config.phase';
import { runEvaluation } from '../phases/evaluation/evaluation.phase';
import { runPilot } from '../phases/pilot.phase';
import { runPreflight } from '../phases/preflight/preflight.phase';
import { runSharedInit } from '../phases/shared-init.phase';
import { loadTraining, runTraining } from '../phases/training.phase';
import type { ExperimentContext } from './experiment-context';

/** what the phases of this attempt produced or read back so far, by phase */
export interface PhaseResults {
  effective_config?: EffectiveConfig;
  shared_init?: SharedInitResult;
  preflight?: PreflightResult;
  pilot?: PilotResult;
  training?: TrainingResult;
  evaluation?: EvaluationResult;
  decision?: DecisionSummary;
}

export interface PhaseEntry {
  phase: PhaseName & keyof PhaseResults;
  /** the file the phase writes its result to */
  resultFile: RunFileName;
  /** runs the phase (it writes resultFile) and keeps its result in `done` */
  run: (ctx: ExperimentContext, done: PhaseResults) => Promise<void>;
  /** a phase completed by an earlier attempt: its result read back into `done`; absent when no later phase reads it */
  load?: (ctx: ExperimentContext, done: PhaseResults) => void;
}

/** the result of an earlier phase of the table (a phase listed before the one asking) */
function need<P extends keyof PhaseResults>(done: PhaseResults, phase: P): NonNullable<PhaseResults[P]> {
  const result = done[phase];
  if (result === undefined) throw new Error(`the ${phase} phase has no result: the phase table runs it later than a phase that needs it`);
  return result as NonNullable<PhaseResults[P]>;
}

function chosenBandwidth(pilot: PilotResult): number {
  if (pilot.chosen_bandwidth === null) throw new Error('the pilot chose no bandwidth, yet the run went on to training');
  return pilot.chosen_bandwidth;
}

export const PHASE_TABLE: readonly PhaseEntry[] = [
  {
    phase: 'effective_config',
    resultFile: 'effective-config.json',
    run: async (ctx, done) => void (done.effective_config = writeEffectiveConfig(ctx)),
  },
  {
    phase: 'shared_init',
    resultFile: 'shared-init.json',
    run: async (ctx, done) => void (done.shared_init = await runSharedInit(ctx)),
    load: (ctx, done) => void (done.shared_init = readRunFile(ctx.dir, 'shared-init.json')),
  },
  {
    phase: 'preflight',
    resultFile: 'preflight.json',
    run: async (ctx, done) => void (done.preflight = await runPreflight(ctx, need(done, 'shared_init'))),
  },
  {
    phase: 'pilot',
    resultFile: 'pilot.json',
    run: async (ctx, done) => void (done.pilot = await runPilot(ctx, need(done, 'shared_init'))),
    load: (ctx, done) => void (done.pilot = readRunFile(ctx.dir, 'pilot.json')),
  },
  {
    phase: 'training',
    resultFile: 'training.json',
    run: async (ctx, done) => void (done.training = await runTraining(ctx, need(done, 'shared_init'), chosenBandwidth(need(done, 'pilot')))),
    load: (ctx, done) => void (done.training = loadTraining(ctx.dir, ctx.spec)),
  },
  {
    phase: 'evaluation',
    resultFile: 'evaluation.json',
    run: async (ctx, done) => void (done.evaluation = await runEvaluation(ctx, need(done, 'shared_init'), need(done, 'training'))),
    load: (ctx, done) => void (done.evaluation = readRunFile(ctx.dir, 'evaluation.json')),
  },
  {
    phase: 'decision',
    resultFile: 'decision-summary.json',
    run: async (ctx, done) => void (done.decision = runDecision(ctx, need(done, 'evaluation'))),
  },
];
