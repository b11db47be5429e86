// The grader service: /health, /metrics and the `rollouts` processor.
import { Module, type DynamicModule } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { QUEUE_NAMES } from '@rx/contracts';
import { gradeCompletion } from '@rx/grading';
import { RxServiceModule, type ServiceRuntime } from '@rx/pipeline';
import { GradeJobHandler } from './grade-job.handler';
import { GradeProcessor } from './grade.processor';

@Module({})
export class GraderModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    const handler = new GradeJobHandler({
      queues: runtime.queues,
      metrics: runtime.metrics,
      renderers: runtime.renderers,
      grade: gradeCompletion,
      timeoutMs: runtime.stageTimeoutMs.grade,
    });
    return {
      module: GraderModule,
      imports: [
        RxServiceModule.forRuntime(runtime),
        // workers on the shared worker connection; registering the consumed queue brings in @nestjs/bullmq's explorer
        BullModule.forRoot({ connection: runtime.connections.worker(), prefix: runtime.config.RX_QUEUE_PREFIX }),
        BullModule.registerQueue({ name: QUEUE_NAMES.rollouts }),
      ],
      providers: [{ provide: GradeJobHandler, useValue: handler }, GradeProcessor],
    };
  }
}
