// trainer, on `train-steps`: Datums from the batch, forward_backward('importance_sampling'), then
// optim_step(AdamW), applied at most once per step through the ledger (see trainer-step.ledger.ts).
import type { AdamParams, Datum } from '@rx/backend';
import { expandFloat32, type StepRecord, type TrainStep } from '@rx/contracts';
import { buildDatum } from '../datum-builder';
import { OutOfOrderStepError, UnrecoverableStageError } from '../stage-errors';
import type { TrainerStepLedger } from '../trainer-step.ledger';
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
}

export type TrainOutcome = { outcome: 'applied'; record: StepRecord } | { outcome: 'skipped'; record: StepRecord | null };

/** The datums of a batch: rollouts of dropped groups left out; logprobs back to the backend's float32 values. */
export function datumsOf(step: TrainStep): Datum[] {
  const prompts = new Map(step.prompts.map((p) => [p.promptId, p.tokens]));
  return step.rollouts
    .filter((r) => !r.dropped)
    .map((r) => buildDatum(prompts.get(r.promptId)!, r.tokens, r.logprobs.map(expandFloat32), r.advantage));
}

export async function trainStep(step: TrainStep, deps: TrainStageDeps): Promise<TrainOutcome> {
  const now = deps.now ?? Date.now;
  const started = now();
  const key = { runId: step.runId, arm: step.arm };
  const claim = await deps.ledger.claim(key, step.step, deps.attemptToken, new Date(started));
  switch (claim.kind) {
    case 'skipped':
      return { outcome: 'skipped', record: claim.record };
    case 'out-of-order':
      throw new OutOfOrderStepError(`train step ${step.step} of ${step.runId}/${step.arm} arrived before step ${claim.committed + 1} was committed`);
    case 'in-doubt':
      throw new UnrecoverableStageError(
        `step ${step.step} of ${step.runId}/${step.arm} is in doubt: an earlier attempt claimed it at ${claim.claim.since} ` +
          `(phase ${claim.claim.phase}) and never committed; it may have been applied, so it is not retried. ` +
          'Restore the arm from its last saved state, clear the claim, and resume.',
      );
    case 'claimed':
      break;
  }

  const client = await deps.trainers.existing(key, claim.committed).catch(async (err: unknown) => {
    await deps.ledger.release(key, step.step, deps.attemptToken);
    throw err;
  });
  const datums = datumsOf(step);
  let loss: number;
  try {
    loss = (await client.forwardBackward(datums, 'importance_sampling')).loss;
  } catch (err) {
    // nothing reached the optimizer: the step may be retried
    await deps.ledger.release(key, step.step, deps.attemptToken);
    throw err;
  }
  await deps.ledger.markPhase(key, step.step, deps.attemptToken, 'optim_step');
  const { step: optimizerStep } = await client.optimStep(adamParamsFor(step.plan.learningRate));

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
  };
  await deps.ledger.commit(key, step.step, deps.attemptToken, record);
  return { outcome: 'applied', record };
}
