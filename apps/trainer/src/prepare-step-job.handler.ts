// What the trainer does with a `step-requests` job: save the arm's weights for sampling, then `sample-requests`.
import { jobIdFor } from '@rx/contracts';
import type { RxMetrics } from '@rx/metrics';
import { consumeJob, prepareStep, type ConsumedJob, type QueueProducer, type TrainerStepLedger, type TrainingClientPool } from '@rx/pipeline';

export interface PrepareStepJobDeps {
  queues: QueueProducer;
  metrics: RxMetrics;
  ledger: TrainerStepLedger;
  trainers: TrainingClientPool;
  timeoutMs?: number;
}

export type PrepareStepJobResult = { outcome: 'ready'; next: string; samplerPath: string } | { outcome: 'skipped'; committed: number };

export class PrepareStepJobHandler {
  constructor(private readonly deps: PrepareStepJobDeps) {}

  handle(job: ConsumedJob): Promise<PrepareStepJobResult> {
    return consumeJob('step-requests', job, this.deps, async (req) => {
      const out = await prepareStep(req, { ledger: this.deps.ledger, trainers: this.deps.trainers });
      if (out.outcome === 'skipped') return out;
      const next = await this.deps.queues.enqueue('sample-requests', out.sample, jobIdFor(out.sample, 'sample'));
      return { outcome: 'ready', next: next.jobId, samplerPath: out.sample.samplerPath };
    });
  }
}
