// The sampler: the graph's `sample` edge (sample-requests -> rollouts) on BullMQ, /health and /metrics.
// main.ts, the e2e tests and the controller start it with this.
import { bootstrapService, type RunningService, type ServiceStartOptions } from '@rx/service-host';
import { cachedRendererResolver } from '@rx/pipeline';
import type { SamplerConfig } from './config';

export function startSampler(opts: ServiceStartOptions<SamplerConfig>): Promise<RunningService> {
  return bootstrapService({
    ...opts,
    service: 'sampler',
    renderers: opts.renderers ?? cachedRendererResolver({ tokenizerPath: opts.config.RX_TOKENIZER_PATH }),
    stageDeps: (runtime) => ({ backend: runtime.backend, renderers: runtime.renderers, concurrency: runtime.config.RX_CONCURRENCY }),
  });
}
