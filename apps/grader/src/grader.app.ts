// Starts the grader (main.ts, the e2e test and the controller call this).
import type { Type } from '@nestjs/common';
import { bootstrapService, cachedRendererResolver, type ProcessorMap, type RunningService, type ServiceStartOptions, type WorkerHostLike } from '@rx/pipeline';
import type { GraderConfig } from './config';
import { GradeProcessor } from './grade.processor';
import { GraderModule } from './grader.module';

export const GRADER_PROCESSORS: ProcessorMap<'grader', Type<WorkerHostLike>> = { rollouts: GradeProcessor };

export function startGrader(opts: ServiceStartOptions<GraderConfig>): Promise<RunningService> {
  return bootstrapService({
    ...opts,
    service: 'grader',
    renderers: opts.renderers ?? cachedRendererResolver({ tokenizerPath: opts.config.RX_TOKENIZER_PATH }),
    module: (runtime) => GraderModule.forRuntime(runtime),
    processors: GRADER_PROCESSORS,
  });
}
