// What the advantage service does with a `graded-rollouts` job: the arm's estimator against the window kept in
// Redis, the window advanced (once per step), the step's gate metrics, then `train-steps`.
import { jobIdFor } from '@rx/contracts';
import type { RxMetrics } from '@rx/metrics';
import { computeAdvantages, consumeJob, type ConsumedJob, type QueueProducer, type RolloutWindowStore } from '@rx/pipeline';

export interface AdvantageJobDeps {
  queues: QueueProducer;
  metrics: RxMetrics;
  windows: RolloutWindowStore;
  timeoutMs?: number;
}

export interface AdvantageJobResult {
  next: string;
  fracNonzeroAdvantage: number;
}

export class AdvantageJobHandler {
  constructor(private readonly deps: AdvantageJobDeps) {}

  handle(job: ConsumedJob): Promise<AdvantageJobResult> {
    return consumeJob('graded-rollouts', job, this.deps, async (batch) => {
      const step = await computeAdvantages(batch, { windows: this.deps.windows });
      const next = await this.deps.queues.enqueue('train-steps', step, jobIdFor(step, 'train'));
      this.deps.metrics.countRollouts('advantage', step.arm, step.rollouts.length);
      this.deps.metrics.recordStep(step.arm, {
        rewardMean: step.gate.rewardMean,
        fracNonzeroAdvantage: step.gate.fracNonzeroAdvantage,
        effectiveNeighbors: step.gate.effectiveNeighbors,
      });
      return { next: next.jobId, fracNonzeroAdvantage: step.gate.fracNonzeroAdvantage };
    });
  }
}
