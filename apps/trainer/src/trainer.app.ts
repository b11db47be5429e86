// The trainer: the graph's `prepare` (step-requests -> sample-requests) and `train` (train-steps -> step-events)
// edges on BullMQ, sharing the arms' training clients (rebuilt from the ledger's committed states after a restart)
// and the step ledger in Redis; /health and /metrics. main.ts, the e2e tests and the controller start it with this.
import { backendOf, bootstrapService, type BackendServiceStartOptions, type RunningService } from '@rx/service-host';
import { TrainingClientPool } from '@rx/pipeline';
import { RedisTrainerStepLedger } from '@rx/queue';
import type { TrainerConfig } from './config';

export function startTrainer(opts: BackendServiceStartOptions<TrainerConfig>): Promise<RunningService> {
  return bootstrapService({
    ...opts,
    service: 'trainer',
    stageDeps: (runtime) => {
      const ledger = new RedisTrainerStepLedger(runtime.connections.producer(), runtime.config.RX_QUEUE_PREFIX);
      return { ledger, trainers: new TrainingClientPool(backendOf(runtime), ledger), log: (e, f) => runtime.log(e, f) };
    },
  });
}
