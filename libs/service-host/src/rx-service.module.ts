// The part every pipeline service shares: /health (terminus: live, ready) and
// /metrics over its probes (Redis, and the backend where the service has one), and Nest's logger on the runtime's pino logger (warnings and
// errors; no line per request).
import { Module, type DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { healthEndpoints, type HealthProbes } from './health.controller';
import type { ServiceRuntime } from './service-runtime';

/** A pipeline service's health: Redis answers, and its backend where it calls one; the report names the service. */
export function serviceHealthProbes(runtime: ServiceRuntime): HealthProbes {
  const backend = runtime.backend;
  return {
    probes: { redis: () => runtime.connections.ping(), ...(backend ? { backend: () => backend.ping() } : {}) },
    details: () => ({ service: runtime.service }),
    metrics: { exposition: () => runtime.metrics.exposition(), contentType: runtime.metrics.registry.contentType },
  };
}

@Module({})
export class RxServiceModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    const health = healthEndpoints({ useValue: serviceHealthProbes(runtime) });
    return {
      module: RxServiceModule,
      imports: [...health.imports, LoggerModule.forRoot({ pinoHttp: { logger: runtime.logger.child({ source: 'nest' }, { level: 'warn' }), autoLogging: false } })],
      providers: health.providers,
      controllers: health.controllers,
    };
  }
}
