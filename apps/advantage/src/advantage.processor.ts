// Consumer of `graded-rollouts`: parse, compute advantages, enqueue `train-steps` (all in AdvantageJobHandler).
import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { QUEUE_NAMES } from '@rx/contracts';
import { workerOptionsFor } from '@rx/pipeline';
import { AdvantageJobHandler, type AdvantageJobResult } from './advantage-job.handler';

@Processor(QUEUE_NAMES.gradedRollouts, workerOptionsFor('advantage'))
export class AdvantageProcessor extends WorkerHost {
  constructor(@Inject(AdvantageJobHandler) private readonly handler: AdvantageJobHandler) {
    super();
  }

  process(job: Job): Promise<AdvantageJobResult> {
    return this.handler.handle(job);
  }
}
