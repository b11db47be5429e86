// The Nest module of the policy server, built around one PolicyBackend and one configuration.
import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import type { PolicyBackend } from '@rx/backend';
import { ApiKeyGuard } from './auth';
import type { PolicyServerConfig } from './config';
import { HealthController } from './health.controller';
import { TinkerApiController } from './tinker-api.controller';
import { TinkerApiService } from './tinker-api.service';
import { POLICY_BACKEND, POLICY_SERVER_CONFIG } from './tokens';

@Module({})
export class PolicyServerModule {
  static forRoot(config: PolicyServerConfig, backend: PolicyBackend): DynamicModule {
    return {
      module: PolicyServerModule,
      imports: [TerminusModule.forRoot({ logger: false })],
      controllers: [TinkerApiController, HealthController],
      providers: [
        { provide: POLICY_SERVER_CONFIG, useValue: config },
        { provide: POLICY_BACKEND, useValue: backend },
        TinkerApiService,
        { provide: APP_GUARD, useClass: ApiKeyGuard },
      ],
    };
  }
}
