// The part every pipeline service shares: the runtime as a global provider, /health (terminus: live, ready),
// /metrics, and Nest's logger on the runtime's pino logger (warnings and errors; no line per request).
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule } from 'nestjs-pino';
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
      imports: [TerminusModule.forRoot({ logger: false }), LoggerModule.forRoot({ pinoHttp: { logger: runtime.logger.child({ source: 'nest' }, { level: 'warn' }), autoLogging: false } })],
      providers: [{ provide: RX_RUNTIME, useValue: runtime }],
      controllers: [HealthController, MetricsController],
      exports: [RX_RUNTIME],
    };
  }
}
