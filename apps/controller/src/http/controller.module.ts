// The controller's Nest module: health and metrics over the probes it is given.
import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { CONTROLLER_PROBES, type ControllerProbes } from './controller-probes';
import { HealthController } from './health.controller';

@Module({})
export class ControllerModule {
  static forRoot(probes: ControllerProbes): DynamicModule {
    return { module: ControllerModule, imports: [TerminusModule.forRoot({ logger: false })], controllers: [HealthController], providers: [{ provide: CONTROLLER_PROBES, useValue: probes }] };
  }
}
