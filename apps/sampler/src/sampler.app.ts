// Starts the sampler (main.ts, the e2e test and the controller call this).
import { bootstrapService, cachedRendererResolver, type ProcessorMap, type RunningService, type ServiceStartOptions, type WorkerHostLike } from '@rx/pipeline';
import type { Type } from '@nestjs/common';
import type { SamplerConfig } from './config';
import { SampleProcessor } from './sample.processor';
import { SamplerModule } from './sampler.module';

export const SAMPLER_PROCESSORS: ProcessorMap<'sampler', Type<WorkerHostLike>> = { 'sample-requests': SampleProcessor };

export function startSampler(opts: ServiceStartOptions<SamplerConfig>): Promise<RunningService> {
  return bootstrapService({
    ...opts,
    service: 'sampler',
    renderers: opts.renderers ?? cachedRendererResolver({ tokenizerPath: opts.config.RX_TOKENIZER_PATH }),
    module: (runtime) => SamplerModule.forRuntime(runtime),
    processors: SAMPLER_PROCESSORS,
  });
}
