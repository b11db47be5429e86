// trainer, on `step-requests`: save the arm's current weights for sampling and ask for the step's samples.
import type { SampleRequest, StepRequest } from '@rx/contracts';
import { OutOfOrderStepError } from '../stage-errors';
import type { TrainerStepLedger } from '../trainer-step.ledger';
import type { TrainingClientPool } from '../training-client.pool';

export interface PrepareStepDeps {
  ledger: TrainerStepLedger;
  trainers: TrainingClientPool;
}

export type PrepareOutcome =
  | { outcome: 'ready'; sample: SampleRequest }
  /** step already committed, or already being trained: nothing to sample */
  | { outcome: 'skipped'; committed: number };

export async function prepareStep(req: StepRequest, deps: PrepareStepDeps): Promise<PrepareOutcome> {
  const key = { runId: req.runId, arm: req.arm };
  const status = await deps.ledger.status(key);
  if (req.step <= status.committed || status.claim?.step === req.step) return { outcome: 'skipped', committed: status.committed };
  if (req.step !== status.committed + 1) {
    throw new OutOfOrderStepError(`step ${req.step} of ${req.runId}/${req.arm} requested before step ${status.committed + 1} was committed`);
  }
  const client = await deps.trainers.acquire(key, req.lora, req.initStatePath, status.committed);
  const samplerPath = await client.saveWeightsForSampler(`${req.runId}-${req.arm}-${req.step}`);
  return {
    outcome: 'ready',
    sample: {
      runId: req.runId,
      arm: req.arm,
      step: req.step,
      plan: req.plan,
      samplerPath,
      prompts: req.prompts,
    },
  };
}
