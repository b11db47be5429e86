// The advantage service: /health, /metrics and the `graded-rollouts` processor, with the windows in Redis.
import { Module, type DynamicModule } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { QUEUE_NAMES } from '@rx/contracts';
import { RedisRolloutWindowStore, RxServiceModule, type ServiceRuntime } from '@rx/pipeline';
import { AdvantageJobHandler } from './advantage-job.handler';
import { AdvantageProcessor } from './advantage.processor';

@Module({})
export class AdvantageModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    const handler = new AdvantageJobHandler({
      queues: runtime.queues,
      metrics: runtime.metrics,
      windows: new RedisRolloutWindowStore(runtime.connections.producer(), runtime.config.RX_QUEUE_PREFIX),
      timeoutMs: runtime.stageTimeoutMs.advantage,
    });
    return {
      module: AdvantageModule,
      imports: [
        RxServiceModule.forRuntime(runtime),
        // workers on the shared worker connection; registering the consumed queue brings in @nestjs/bullmq's explorer
        BullModule.forRoot({ connection: runtime.connections.worker(), prefix: runtime.config.RX_QUEUE_PREFIX }),
        BullModule.registerQueue({ name: QUEUE_NAMES.gradedRollouts }),
      ],
      providers: [{ provide: AdvantageJobHandler, useValue: handler }, AdvantageProcessor],
    };
  }
}
