// The part every pipeline service shares: the runtime as a global provider, /health and /metrics.
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { HealthController } from './health.controller';
import { MetricsController } from './metrics.controller';
import { RX_RUNTIME, type ServiceRuntime } from './service-runtime';

@Global()
@Module({})
export class RxServiceModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: RxServiceModule,
      global: true,
      providers: [{ provide: RX_RUNTIME, useValue: runtime }],
      controllers: [HealthController, MetricsController],
      exports: [RX_RUNTIME],
    };
  }
}
