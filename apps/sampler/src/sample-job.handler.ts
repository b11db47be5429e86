// What the sampler does with a `sample-requests` job: sample the batch (all requests in flight, bounded by
// RX_CONCURRENCY) and hand it to the grader on `rollouts`.
import type { PolicyBackend } from '@rx/backend';
import { jobIdFor } from '@rx/contracts';
import type { RxMetrics } from '@rx/metrics';
import { consumeJob, sampleBatch, type ConsumedJob, type QueueProducer, type RendererResolver } from '@rx/pipeline';

export interface SampleJobDeps {
  queues: QueueProducer;
  metrics: RxMetrics;
  backend: PolicyBackend;
  renderers: RendererResolver;
  /** backend requests in flight at most (RX_CONCURRENCY) */
  concurrency: number;
  timeoutMs?: number;
}

export interface SampleJobResult {
  next: string;
  rollouts: number;
}

export class SampleJobHandler {
  constructor(private readonly deps: SampleJobDeps) {}

  handle(job: ConsumedJob): Promise<SampleJobResult> {
    return consumeJob('sample-requests', job, this.deps, async (req) => {
      const renderer = await this.deps.renderers(req.plan.baseModel);
      const batch = await sampleBatch(req, { backend: this.deps.backend, renderer, concurrency: this.deps.concurrency });
      const next = await this.deps.queues.enqueue('rollouts', batch, jobIdFor(batch, 'grade'));
      this.deps.metrics.countRollouts('sample', batch.arm, batch.rollouts.length);
      return { next: next.jobId, rollouts: batch.rollouts.length };
    });
  }
}
