// What the grader does with a `rollouts` job: the cookbook reward of every completion, then `graded-rollouts`.
import { jobIdFor } from '@rx/contracts';
import type { RxMetrics } from '@rx/metrics';
import { consumeJob, gradeBatch, type ConsumedJob, type GradeFn, type QueueProducer, type RendererResolver } from '@rx/pipeline';

export interface GradeJobDeps {
  queues: QueueProducer;
  metrics: RxMetrics;
  renderers: RendererResolver;
  /** libs/grading gradeCompletion */
  grade: GradeFn;
  timeoutMs?: number;
}

export interface GradeJobResult {
  next: string;
  rewardMean: number;
}

export class GradeJobHandler {
  constructor(private readonly deps: GradeJobDeps) {}

  handle(job: ConsumedJob): Promise<GradeJobResult> {
    return consumeJob('rollouts', job, this.deps, async (batch) => {
      const renderer = await this.deps.renderers(batch.plan.baseModel);
      const graded = gradeBatch(batch, { renderer, grade: this.deps.grade });
      const next = await this.deps.queues.enqueue('graded-rollouts', graded, jobIdFor(graded, 'advantage'));
      this.deps.metrics.countRollouts('grade', graded.arm, graded.rollouts.length);
      const rewardMean = graded.rollouts.reduce((s, r) => s + r.reward, 0) / graded.rollouts.length;
      return { next: next.jobId, rewardMean };
    });
  }
}
