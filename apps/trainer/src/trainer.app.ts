// Starts the trainer (main.ts, the e2e test and the controller call this).
import type { Type } from '@nestjs/common';
import { bootstrapService, cachedRendererResolver, type ProcessorMap, type RunningService, type ServiceStartOptions, type WorkerHostLike } from '@rx/pipeline';
import type { TrainerConfig } from './config';
import { PrepareStepProcessor } from './prepare-step.processor';
import { TrainProcessor } from './train.processor';
import { TrainerModule } from './trainer.module';

export const TRAINER_PROCESSORS: ProcessorMap<'trainer', Type<WorkerHostLike>> = {
  'step-requests': PrepareStepProcessor,
  'train-steps': TrainProcessor,
};

export function startTrainer(opts: ServiceStartOptions<TrainerConfig>): Promise<RunningService> {
  return bootstrapService({
    ...opts,
    service: 'trainer',
    renderers: opts.renderers ?? cachedRendererResolver(),
    module: (runtime) => TrainerModule.forRuntime(runtime),
    processors: TRAINER_PROCESSORS,
  });
}
