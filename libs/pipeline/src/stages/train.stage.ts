// trainer, on `train-steps`: Datums from the batch, forward_backward('importance_sampling'), optim_step(AdamW),
// saveState, then the ledger commit naming that state: applied exactly once on the arm's surviving lineage.
// A step left in doubt by an attempt that died (or gave up) is taken over and redone on a fresh client loaded
// from the state committed with step N-1 (see trainer-step.ledger.ts and apps/trainer/README.md).
import { randomBytes, randomUUID } from 'node:crypto';
import type { AdamParams, Datum, TrainingClient } from '@rx/backend';
import { expandFloat32, transcriptIndices, type StepComplete, type StepRecord, type TrainerLogprobStats, type TrainStep } from '@rx/contracts';
import { buildDatum } from '../datum-builder';
import { trainerLogprobStats } from '../logprob-stats';
import { OutOfOrderStepError } from '../stage-errors';
import type { LedgerClaim, LedgerKey, TrainerStepLedger } from '../trainer-step.ledger';
import { PER_STEP_CHECKPOINT } from '../checkpoint-ttl';
import type { TrainingClientPool } from '../training-client.pool';

/** AdamW of the spec: Tinker's AdamParams with beta1 0.9, beta2 0.95, eps 1e-8 and the step's learning rate. */
export function adamParamsFor(learningRate: number): AdamParams {
  return { learningRate, beta1: 0.9, beta2: 0.95, eps: 1e-8 };
}

export interface TrainStageDeps {
  ledger: TrainerStepLedger;
  trainers: TrainingClientPool;
  /** unique per delivery attempt (fencing token of the ledger claim) */
  attemptToken: string;
  now?: () => number;
  /** the saveState name of this attempt (default `<run>-<arm>-state-<step>-<8 random hex>`: attempts never share one) */
  stateName?: (step: TrainStep) => string;
}

export type TrainOutcome =
  | { outcome: 'applied'; record: StepRecord; statePath: string; tookOver: LedgerClaim | null }
  | { outcome: 'skipped'; record: StepRecord | null };

/** The claim on the step is held by an attempt that is taking it over right now: retry after the back-off. */
export class ClaimContendedError extends OutOfOrderStepError {
  constructor(message: string) {
    super(message);
    this.name = 'ClaimContendedError';
  }
}

/** The datums of a batch: rollouts of dropped groups left out; logprobs back to the backend's float32 values. */
export function datumsOf(step: TrainStep): Datum[] {
  const prompts = new Map(step.prompts.map((p) => [p.promptId, p.tokens]));
  return trainedRollouts(step).map((r) => buildDatum(prompts.get(r.promptId)!, r.tokens, r.logprobs.map(expandFloat32), r.advantage));
}

/** the rollouts that become datums (dropped groups left out), in datum order */
function trainedRollouts(step: TrainStep): TrainStep['rollouts'] {
  return step.rollouts.filter((r) => !r.dropped);
}

export function defaultStateName(step: TrainStep): string {
  return `${step.runId}-${step.arm}-state-${step.step}-${randomBytes(4).toString('hex')}`;
}

export async function trainStep(step: TrainStep, deps: TrainStageDeps): Promise<TrainOutcome> {
  const now = deps.now ?? Date.now;
  const started = now();
  const key: LedgerKey = { runId: step.runId, arm: step.arm };
  const token = deps.attemptToken;
  const claim = await deps.ledger.claim(key, step.step, token, new Date(started));
  let tookOver: LedgerClaim | null = null;
  switch (claim.kind) {
    case 'skipped':
      return { outcome: 'skipped', record: claim.record };
    case 'out-of-order':
      throw new OutOfOrderStepError(`train step ${step.step} of ${step.runId}/${step.arm} arrived before step ${claim.committed + 1} was committed`);
    case 'in-doubt':
      // an earlier attempt claimed N and never committed it (it died, timed out or failed after forward_backward):
      // whatever it applied lives on its own client, which is never used again; N is redone from the state after N-1
      if (!(await deps.ledger.takeOver(key, step.step, token, claim.claim.token, new Date(now())))) {
        throw new ClaimContendedError(`step ${step.step} of ${step.runId}/${step.arm}: another attempt took the in-doubt claim over first`);
      }
      tookOver = claim.claim;
      deps.trainers.discard(key);
      break;
    case 'claimed':
      break;
  }

  const client: TrainingClient = await deps.trainers.at(key, claim.committed).catch(async (err: unknown) => {
    await deps.ledger.release(key, step.step, token).catch(() => undefined);
    throw err;
  });
  const datums = datumsOf(step);
  let loss: number;
  let logprobStats: TrainerLogprobStats | undefined;
  try {
    const out = await client.forwardBackward(datums, 'importance_sampling');
    loss = out.loss;
    logprobStats = trainerLogprobStats(datums, trainedRollouts(step).map((r) => r.tokens.length), out.logprobs);
  } catch (err) {
    // it may have accumulated part of a gradient: never use this client again; nothing reached the optimizer
    deps.trainers.discard(key, client);
    await deps.ledger.release(key, step.step, token).catch(() => undefined);
    throw err;
  }

  let optimizerStep: number;
  let statePath: string;
  try {
    await deps.ledger.markPhase(key, step.step, token, 'optim_step');
    ({ step: optimizerStep } = await client.optimStep(adamParamsFor(step.plan.learningRate)));
    // commit = state saved, then the ledger entry naming it
    statePath = await client.saveState((deps.stateName ?? defaultStateName)(step), PER_STEP_CHECKPOINT);
  } catch (err) {
    // the claim stays: the retry takes it over and redoes N on a client loaded from the state after N-1
    deps.trainers.discard(key, client);
    throw err;
  }

  const record: StepRecord = {
    runId: step.runId,
    arm: step.arm,
    step: step.step,
    estimator: step.plan.advantage.estimator,
    rollouts: step.rollouts.map((r) => ({
      rolloutId: r.rolloutId,
      promptId: r.promptId,
      phi: r.phi,
      completionTokens: r.tokens.length,
      stopReason: r.stopReason,
      reward: r.reward,
      correct: r.correct,
      formatOk: r.formatOk,
      advantage: r.advantage,
      baseline: r.baseline,
      effectiveNeighbors: r.effectiveNeighbors,
      fallback: r.fallback,
      dropped: r.dropped,
    })),
    datums: datums.length,
    loss,
    optimizerStep,
    learningRate: step.plan.learningRate,
    gate: step.gate,
    timings: { ...step.timings, train: (now() - started) / 1000 },
    samplerPath: step.samplerPath,
    committedAt: new Date(now()).toISOString(),
    ...(logprobStats ? { logprobStats } : {}),
    transcripts: transcriptIndices(step.rollouts.length).map((i) => ({ rolloutId: step.rollouts[i].rolloutId, tokens: step.rollouts[i].tokens })),
  };
  try {
    await deps.ledger.commit(key, step.step, token, { record, statePath });
  } catch (err) {
    deps.trainers.discard(key, client);
    throw err;
  }
  deps.trainers.advanced(key, client, step.step);
  return { outcome: 'applied', record, statePath, tookOver };
}

export interface TrainEdgeDeps {
  ledger: TrainerStepLedger;
  trainers: TrainingClientPool;
  /** one JSON line per notable event (a take-over of an in-doubt step) */
  log?: (event: string, fields: Record<string, unknown>) => void;
}

/**
 * The train edge's work for one delivery: the step applied exactly once on the arm's lineage (trainStep; a replay
 * gets the committed record), a take-over logged, and the step-complete event that announces it (a replay announces
 * it again under the same job id, so a crash between commit and announce loses nothing). Null: the step was
 * committed without a kept record, so there is nothing to announce.
 */
export async function trainAndAnnounce(step: TrainStep, deps: TrainEdgeDeps, job: { id?: string; attemptsMade: number }): Promise<StepComplete | null> {
  // the fencing token of this delivery: a second delivery of the same job never holds the same claim
  const attemptToken = `${job.id ?? 'job'}:${job.attemptsMade}:${randomUUID()}`;
  const out = await trainStep(step, { ledger: deps.ledger, trainers: deps.trainers, attemptToken });
  const record = out.record;
  if (!record) return null;
  if (out.outcome === 'applied' && out.tookOver) {
    const { token, phase, since } = out.tookOver;
    deps.log?.('step-taken-over', { runId: record.runId, arm: record.arm, step: record.step, from: { token, phase, since } });
  }
  return { runId: record.runId, arm: record.arm, step: record.step, kind: 'step-complete', outcome: out.outcome, record };
}
