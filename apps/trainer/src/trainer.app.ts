// The trainer: the graph's `prepare` (step-requests -> sample-requests) and `train` (train-steps -> step-events)
// edges on BullMQ, sharing the arms' training clients (rebuilt from the ledger's committed states after a restart)
// and the step ledger in Redis; /health and /metrics. main.ts, the e2e tests and the controller start it with this.
import { bootstrapService, type RunningService, type ServiceStartOptions } from '@rx/service-host';
import { cachedRendererResolver, TrainingClientPool } from '@rx/pipeline';
import { RedisTrainerStepLedger } from '@rx/queue';
import type { TrainerConfig } from './config';

export function startTrainer(opts: ServiceStartOptions<TrainerConfig>): Promise<RunningService> {
  return bootstrapService({
    ...opts,
    service: 'trainer',
    renderers: opts.renderers ?? cachedRendererResolver(),
    stageDeps: (runtime) => {
      const ledger = new RedisTrainerStepLedger(runtime.connections.producer(), runtime.config.RX_QUEUE_PREFIX);
      return { ledger, trainers: new TrainingClientPool(runtime.backend, ledger), log: (e, f) => runtime.log(e, f) };
    },
  });
}
