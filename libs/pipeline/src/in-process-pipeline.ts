// The same five stage functions as the services, called in one process without Redis or queues, each payload
// parsed against the catalog as the transport does at both edges. The overhead benchmark runs a step both ways.
import type { PolicyBackend } from '@rx/backend';
import { QUEUE_CATALOG, type StepEvent, type StepRequest } from '@rx/contracts';
import { randomUUID } from 'node:crypto';
import type { RendererResolver } from './renderer-resolver';
import { InMemoryRolloutWindowStore, type RolloutWindowStore } from './rollout-window.store';
import { computeAdvantages } from './stages/advantage.stage';
import { gradeBatch, type GradeFn } from './stages/grade.stage';
import { prepareStep } from './stages/prepare-step.stage';
import { sampleBatch } from './stages/sample.stage';
import { trainStep } from './stages/train.stage';
import { InMemoryTrainerStepLedger, type TrainerStepLedger } from './trainer-step.ledger';
import { TrainingClientPool } from './training-client.pool';

export interface InProcessPipelineDeps {
  backend: PolicyBackend;
  renderers: RendererResolver;
  grade: GradeFn;
  concurrency: number;
  windows?: RolloutWindowStore;
  ledger?: TrainerStepLedger;
}

export class InProcessPipeline {
  readonly windows: RolloutWindowStore;
  readonly ledger: TrainerStepLedger;
  private readonly trainers: TrainingClientPool;

  constructor(private readonly deps: InProcessPipelineDeps) {
    this.windows = deps.windows ?? new InMemoryRolloutWindowStore();
    this.ledger = deps.ledger ?? new InMemoryTrainerStepLedger();
    this.trainers = new TrainingClientPool(deps.backend, this.ledger);
  }

  /** runs one step of one arm to its step-complete event */
  async runStep(request: StepRequest): Promise<StepEvent> {
    const req = QUEUE_CATALOG['step-requests'].schema.parse(request);
    const prepared = await prepareStep(req, { ledger: this.ledger, trainers: this.trainers });
    if (prepared.outcome === 'skipped') {
      const record = await this.ledger.record(req, req.step);
      if (!record) throw new Error(`step ${req.step} of ${req.runId}/${req.arm} is in flight elsewhere`);
      return QUEUE_CATALOG['step-events'].schema.parse({ runId: req.runId, arm: req.arm, step: req.step, kind: 'step-complete', outcome: 'skipped', record });
    }
    const sampleReq = QUEUE_CATALOG['sample-requests'].schema.parse(prepared.sample);
    const renderer = await this.deps.renderers(sampleReq.plan.baseModel);
    const sampled = QUEUE_CATALOG.rollouts.schema.parse(await sampleBatch(sampleReq, { backend: this.deps.backend, renderer, concurrency: this.deps.concurrency }));
    const graded = QUEUE_CATALOG['graded-rollouts'].schema.parse(gradeBatch(sampled, { renderer, grade: this.deps.grade }));
    const train = QUEUE_CATALOG['train-steps'].schema.parse(await computeAdvantages(graded, { windows: this.windows }));
    const outcome = await trainStep(train, { ledger: this.ledger, trainers: this.trainers, attemptToken: randomUUID() });
    const record = outcome.record ?? (await this.ledger.record(train, train.step));
    if (!record) throw new Error(`step ${train.step} of ${train.runId}/${train.arm} skipped without a record`);
    return QUEUE_CATALOG['step-events'].schema.parse({ runId: train.runId, arm: train.arm, step: train.step, kind: 'step-complete', outcome: outcome.outcome, record });
  }
}
