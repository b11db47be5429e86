// The sampler service: /health, /metrics and the `sample-requests` processor.
import { Module, type DynamicModule } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { QUEUE_NAMES } from '@rx/contracts';
import { RxServiceModule, type ServiceRuntime } from '@rx/pipeline';
import { SampleJobHandler } from './sample-job.handler';
import { SampleProcessor } from './sample.processor';

@Module({})
export class SamplerModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    const handler = new SampleJobHandler({
      queues: runtime.queues,
      metrics: runtime.metrics,
      backend: runtime.backend,
      renderers: runtime.renderers,
      concurrency: runtime.config.RX_CONCURRENCY,
      timeoutMs: runtime.stageTimeoutMs.sample,
    });
    return {
      module: SamplerModule,
      imports: [
        RxServiceModule.forRuntime(runtime),
        // workers on the shared worker connection; registering the consumed queue brings in @nestjs/bullmq's explorer
        BullModule.forRoot({ connection: runtime.connections.worker(), prefix: runtime.config.RX_QUEUE_PREFIX }),
        BullModule.registerQueue({ name: QUEUE_NAMES.sampleRequests }),
      ],
      providers: [{ provide: SampleJobHandler, useValue: handler }, SampleProcessor],
    };
  }
}
