// Consumer of `step-requests`: parse, save weights for sampling, enqueue `sample-requests` (PrepareStepJobHandler).
import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { QUEUE_NAMES } from '@rx/contracts';
import { workerOptionsFor } from '@rx/pipeline';
import { PrepareStepJobHandler, type PrepareStepJobResult } from './prepare-step-job.handler';

@Processor(QUEUE_NAMES.stepRequests, workerOptionsFor('prepare'))
export class PrepareStepProcessor extends WorkerHost {
  constructor(@Inject(PrepareStepJobHandler) private readonly handler: PrepareStepJobHandler) {
    super();
  }

  process(job: Job): Promise<PrepareStepJobResult> {
    return this.handler.handle(job);
  }
}
