// trainer, on `step-requests`: save the arm's current weights for sampling and ask for the step's samples.
// The arm's origin (LoRA config, initial state) is recorded in the ledger first, so a trainer that restarts
// before step 0 is trained can still build the arm's client; the client is the pooled one or, after a restart,
// one loaded from the state committed with the previous step (TrainingClientPool).
import type { SampleRequest, StepRequest } from '@rx/contracts';
import { OutOfOrderStepError, UnrecoverableStageError } from '../stage-errors';
import type { TrainerStepLedger } from '../trainer-step.ledger';
import { PER_STEP_CHECKPOINT } from '../checkpoint-ttl';
import type { TrainingClientPool } from '../training-client.pool';

export interface PrepareStepDeps {
  ledger: TrainerStepLedger;
  trainers: TrainingClientPool;
}

export type PrepareOutcome =
  | { outcome: 'ready'; sample: SampleRequest }
  /** step already committed, or already being trained: nothing to sample */
  | { outcome: 'skipped'; committed: number };

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export async function prepareStep(req: StepRequest, deps: PrepareStepDeps): Promise<PrepareOutcome> {
  const key = { runId: req.runId, arm: req.arm };
  const status = await deps.ledger.status(key);
  if (req.step <= status.committed || status.claim?.step === req.step) return { outcome: 'skipped', committed: status.committed };
  if (req.step !== status.committed + 1) {
    throw new OutOfOrderStepError(`step ${req.step} of ${req.runId}/${req.arm} requested before step ${status.committed + 1} was committed`);
  }
  const wanted = { lora: req.lora, initStatePath: req.initStatePath ?? null };
  const origin = await deps.ledger.setOrigin(key, wanted);
  if (!sameJson(origin.lora, wanted.lora) || origin.initStatePath !== wanted.initStatePath) {
    throw new UnrecoverableStageError(
      `step ${req.step} of ${req.runId}/${req.arm} asks for LoRA ${JSON.stringify(wanted.lora)} from ${wanted.initStatePath ?? 'a fresh init'}, ` +
        `but the arm started with ${JSON.stringify(origin.lora)} from ${origin.initStatePath ?? 'a fresh init'}: an arm keeps its origin (start a new run id)`,
    );
  }
  const client = await deps.trainers.at(key, status.committed);
  let samplerPath: string;
  try {
    samplerPath = await client.saveWeightsForSampler(`${req.runId}-${req.arm}-${req.step}`, PER_STEP_CHECKPOINT);
  } catch (err) {
    deps.trainers.discard(key, client); // e.g. the backend restarted and forgot the client: the retry rebuilds it
    throw err;
  }
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
