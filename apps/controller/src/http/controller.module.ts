// The controller's Nest module: @rx/service-host's health and metrics endpoints over the controller's probes (Redis
// and the backend; the report adds the run and its phase).
import { Module, type DynamicModule } from '@nestjs/common';
import { healthEndpoints, type HealthProbes } from '@rx/service-host';
import type { ControllerProbes } from './controller-probes';

export function controllerHealthProbes(probes: ControllerProbes): HealthProbes {
  return {
    probes: { redis: () => probes.redis(), backend: () => probes.backend() },
    details: () => ({ run: probes.runId(), phase: probes.phase() }),
    metrics: { exposition: () => probes.metrics.exposition(), contentType: probes.metrics.registry.contentType },
  };
}

@Module({})
export class ControllerModule {
  static forRoot(probes: ControllerProbes): DynamicModule {
    return { module: ControllerModule, ...healthEndpoints({ useValue: controllerHealthProbes(probes) }) };
  }
}
