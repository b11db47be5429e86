// Consumer of `train-steps`: parse, apply the step once, log it, emit `step-events` (TrainJobHandler).
// Its lock outlasts the stage's time limit (workerOptionsFor('train')), so a long step is never redelivered.
import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { QUEUE_NAMES } from '@rx/contracts';
import { workerOptionsFor } from '@rx/pipeline';
import { TrainJobHandler, type TrainJobResult } from './train-job.handler';

@Processor(QUEUE_NAMES.trainSteps, workerOptionsFor('train'))
export class TrainProcessor extends WorkerHost {
  constructor(@Inject(TrainJobHandler) private readonly handler: TrainJobHandler) {
    super();
  }

  process(job: Job): Promise<TrainJobResult> {
    return this.handler.handle(job);
  }
}
