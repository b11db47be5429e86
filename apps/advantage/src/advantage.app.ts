// Starts the advantage service (main.ts, the e2e test and the controller call this).
import type { Type } from '@nestjs/common';
import { bootstrapService, cachedRendererResolver, type ProcessorMap, type RunningService, type ServiceStartOptions, type WorkerHostLike } from '@rx/pipeline';
import { AdvantageModule } from './advantage.module';
import { AdvantageProcessor } from './advantage.processor';
import type { AdvantageConfig } from './config';

export const ADVANTAGE_PROCESSORS: ProcessorMap<'advantage', Type<WorkerHostLike>> = { 'graded-rollouts': AdvantageProcessor };

export function startAdvantage(opts: ServiceStartOptions<AdvantageConfig>): Promise<RunningService> {
  return bootstrapService({
    ...opts,
    service: 'advantage',
    renderers: opts.renderers ?? cachedRendererResolver(),
    module: (runtime) => AdvantageModule.forRuntime(runtime),
    processors: ADVANTAGE_PROCESSORS,
  });
}
