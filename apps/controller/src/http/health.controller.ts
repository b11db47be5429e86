// /health (ready when Redis and the backend answer), terminus's /health/live (the process answers) and
// /health/ready (Redis and the backend, 503 naming the one that does not), and /metrics (the Prometheus registry).
import { Controller, Get, Header, HttpException, Inject } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService, type HealthCheckResult } from '@nestjs/terminus';
import { probeIndicator } from '@rx/service-host';
import { CONTROLLER_PROBES, type ControllerProbes } from './controller-probes';

@Controller()
export class HealthController {
  constructor(
    @Inject(CONTROLLER_PROBES) private readonly probes: ControllerProbes,
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
  ) {}

  @Get('health')
  async report(): Promise<{ status: string; redis: boolean; backend: boolean; run: string | null; phase: string | null }> {
    const [redis, backend] = await Promise.all([this.probes.redis().catch(() => false), this.probes.backend().catch(() => false)]);
    const body = { status: redis && backend ? 'ok' : 'unavailable', redis, backend, run: this.probes.runId(), phase: this.probes.phase() };
    if (!redis || !backend) throw new HttpException(body, 503);
    return body;
  }

  @Get('health/live')
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('health/ready')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => probeIndicator(this.indicators, 'redis', () => this.probes.redis()), () => probeIndicator(this.indicators, 'backend', () => this.probes.backend())]);
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return this.probes.metrics.exposition();
  }
}
