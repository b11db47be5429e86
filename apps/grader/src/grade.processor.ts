// Consumer of `rollouts`: parse, grade, enqueue `graded-rollouts` (all in GradeJobHandler).
import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { QUEUE_NAMES } from '@rx/contracts';
import { workerOptionsFor } from '@rx/pipeline';
import { GradeJobHandler, type GradeJobResult } from './grade-job.handler';

@Processor(QUEUE_NAMES.rollouts, workerOptionsFor('grade'))
export class GradeProcessor extends WorkerHost {
  constructor(@Inject(GradeJobHandler) private readonly handler: GradeJobHandler) {
    super();
  }

  process(job: Job): Promise<GradeJobResult> {
    return this.handler.handle(job);
  }
}
