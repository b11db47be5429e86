// /health (is the backend answering?), terminus's /health/live (the process answers) and /health/ready (the
// backend answers; 503 otherwise), all public, and /metrics (Prometheus text, needs the key), outside the Tinker
// protocol.
import { Controller, Get, Header, HttpException } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService, type HealthCheckResult } from '@nestjs/terminus';
import { Public } from './auth';
import { TinkerApiService } from './tinker-api.service';

@Controller()
export class HealthController {
  constructor(
    private readonly api: TinkerApiService,
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
  ) {}

  @Public()
  @Get('health')
  async report(): Promise<{ status: string; backend: string }> {
    const up = await this.api.ping().catch(() => false);
    if (!up) throw new HttpException({ status: 'unavailable', backend: this.api.backendKind, error: 'the backend does not answer' }, 503);
    return { status: 'ok', backend: this.api.backendKind };
  }

  @Public()
  @Get('health/live')
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Public()
  @Get('health/ready')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.health.check([
      async () => {
        const backend = this.indicators.check('backend');
        return (await this.api.ping().catch(() => false)) ? backend.up({ kind: this.api.backendKind }) : backend.down({ kind: this.api.backendKind, message: 'the backend does not answer' });
      },
    ]);
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return this.api.metrics.registry.metrics();
  }
}
