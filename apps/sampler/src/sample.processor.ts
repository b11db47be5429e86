// Consumer of `sample-requests`: parse, sample, enqueue `rollouts` (all in SampleJobHandler).
import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { QUEUE_NAMES } from '@rx/contracts';
import { workerOptionsFor } from '@rx/pipeline';
import { SampleJobHandler, type SampleJobResult } from './sample-job.handler';

@Processor(QUEUE_NAMES.sampleRequests, workerOptionsFor('sample'))
export class SampleProcessor extends WorkerHost {
  constructor(@Inject(SampleJobHandler) private readonly handler: SampleJobHandler) {
    super();
  }

  process(job: Job): Promise<SampleJobResult> {
    return this.handler.handle(job);
  }
}
