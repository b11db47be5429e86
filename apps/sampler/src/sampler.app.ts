// The sampler: the graph's `sample` edge (sample-requests -> rollouts) on BullMQ, /health and /metrics.
// main.ts, the e2e tests and the controller start it with this.
import { backendOf, bootstrapService, type BackendServiceStartOptions, type RunningService } from '@rx/service-host';
import { cachedRendererResolver, type RendererResolver } from '@rx/pipeline';
import type { SamplerConfig } from './config';

export function startSampler(opts: BackendServiceStartOptions<SamplerConfig> & { renderers?: RendererResolver }): Promise<RunningService> {
  const renderers = opts.renderers ?? cachedRendererResolver({ tokenizerPath: opts.config.RX_TOKENIZER_PATH });
  return bootstrapService({
    ...opts,
    service: 'sampler',
    stageDeps: (runtime) => ({ backend: backendOf(runtime), renderers, concurrency: opts.config.RX_CONCURRENCY }),
  });
}
