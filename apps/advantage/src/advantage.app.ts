// The advantage service: the graph's `advantage` edge (graded-rollouts -> train-steps) on BullMQ, with each arm's
// rollout window in Redis; /health and /metrics. It never calls the backend. main.ts, the e2e tests and the
// controller start it with this.
import { bootstrapService, type RunningService, type ServiceStartOptions } from '@rx/service-host';
import { RedisRolloutWindowStore } from '@rx/queue';
import type { AdvantageConfig } from './config';

export function startAdvantage(opts: ServiceStartOptions<AdvantageConfig>): Promise<RunningService> {
  return bootstrapService({
    ...opts,
    service: 'advantage',
    stageDeps: (runtime) => ({ windows: new RedisRolloutWindowStore(runtime.connections.producer(), runtime.config.RX_QUEUE_PREFIX) }),
  });
}
