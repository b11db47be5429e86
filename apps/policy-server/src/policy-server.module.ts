// The Nest module of the policy server, built around one PolicyBackend and one configuration; its health and
// metrics endpoints are @rx/service-host's over the backend's ping, the health routes public, /metrics behind the key.
import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import type { PolicyBackend } from '@rx/backend';
import { healthEndpoints, type HealthProbes } from '@rx/service-host';
import { ApiKeyGuard, Public } from './auth';
import type { PolicyServerConfig } from './config';
import { TinkerApiController } from './tinker-api.controller';
import { CheckpointsService } from './checkpoints.service';
import { FuturesService } from './futures.service';
import { PolicyServerContext } from './policy-server.context';
import { SamplersService } from './samplers.service';
import { SessionsService } from './sessions.service';
import { TrainingModelsService } from './training-models.service';
import { TrainingOpsService } from './training-ops.service';
import { POLICY_BACKEND, POLICY_SERVER_CONFIG } from './tokens';

/** The policy server's health: its backend answers; the report names the backend's kind. */
export function policyServerHealthProbes(ctx: PolicyServerContext): HealthProbes {
  return {
    probes: { backend: () => ctx.backend.ping() },
    details: () => ({ backendKind: ctx.backend.kind }),
    metrics: { exposition: () => ctx.metrics.registry.metrics(), contentType: ctx.metrics.registry.contentType },
  };
}

@Module({})
export class PolicyServerModule {
  static forRoot(config: PolicyServerConfig, backend: PolicyBackend): DynamicModule {
    const health = healthEndpoints({ useFactory: policyServerHealthProbes, inject: [PolicyServerContext] }, { health: [Public()] });
    return {
      module: PolicyServerModule,
      imports: health.imports,
      controllers: [TinkerApiController, ...health.controllers],
      providers: [
        { provide: POLICY_SERVER_CONFIG, useValue: config },
        { provide: POLICY_BACKEND, useValue: backend },
        PolicyServerContext,
        SessionsService,
        TrainingModelsService,
        TrainingOpsService,
        SamplersService,
        FuturesService,
        CheckpointsService,
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        ...health.providers,
      ],
    };
  }
}
