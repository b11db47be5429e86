// The trainer service: /health, /metrics and the `step-requests` and `train-steps` processors, sharing the
// arms' training clients (rebuilt from the ledger's committed states after a restart) and the step ledger in Redis.
import { Module, type DynamicModule } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { QUEUE_NAMES } from '@rx/contracts';
import { RedisTrainerStepLedger, RxServiceModule, StepLog, TrainingClientPool, type ServiceRuntime } from '@rx/pipeline';
import { PrepareStepJobHandler } from './prepare-step-job.handler';
import { PrepareStepProcessor } from './prepare-step.processor';
import { TrainJobHandler } from './train-job.handler';
import { TrainProcessor } from './train.processor';

@Module({})
export class TrainerModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    const ledger = new RedisTrainerStepLedger(runtime.connections.producer(), runtime.config.RX_QUEUE_PREFIX);
    const trainers = new TrainingClientPool(runtime.backend, ledger);
    const common = { queues: runtime.queues, metrics: runtime.metrics, ledger, trainers };
    return {
      module: TrainerModule,
      imports: [
        RxServiceModule.forRuntime(runtime),
        // workers on the shared worker connection; registering the consumed queue brings in @nestjs/bullmq's explorer
        BullModule.forRoot({ connection: runtime.connections.worker(), prefix: runtime.config.RX_QUEUE_PREFIX }),
        BullModule.registerQueue({ name: QUEUE_NAMES.stepRequests }, { name: QUEUE_NAMES.trainSteps }),
      ],
      providers: [
        { provide: PrepareStepJobHandler, useValue: new PrepareStepJobHandler({ ...common, timeoutMs: runtime.stageTimeoutMs.prepare }) },
        { provide: TrainJobHandler, useValue: new TrainJobHandler({ ...common, stepLog: new StepLog(runtime.config.RX_DATA_DIR), timeoutMs: runtime.stageTimeoutMs.train, log: (e, f) => runtime.log(e, f) }) },
        PrepareStepProcessor,
        TrainProcessor,
      ],
    };
  }
}
