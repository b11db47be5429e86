// Health of a pipeline service through @nestjs/terminus: GET /health/live (the process answers: liveness, never
// Redis or the backend, so a Redis restart does not get every pod killed) and GET /health/ready (Redis and the
// backend answer: readiness, 503 naming the one that did not). GET /health keeps its earlier report.
import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService, type HealthCheckResult, type HealthIndicatorResult } from '@nestjs/terminus';
import { withTimeout } from '@rx/pipeline';
import { RX_RUNTIME, type ServiceRuntime } from './service-runtime';

export interface HealthReport {
  status: 'ok' | 'unavailable';
  service: string;
  redis: boolean;
  backend: boolean;
}

const PROBE_TIMEOUT_MS = 2500;

export async function checkHealth(runtime: ServiceRuntime): Promise<HealthReport> {
  const [redis, backend] = await Promise.all([
    withTimeout(runtime.connections.ping(), PROBE_TIMEOUT_MS, 'redis ping').catch(() => false),
    withTimeout(runtime.backend.ping(), PROBE_TIMEOUT_MS, 'backend ping').catch(() => false),
  ]);
  return { status: redis && backend ? 'ok' : 'unavailable', service: runtime.service, redis, backend };
}

/** a terminus indicator over a yes/no probe (up when it answers true within the probe timeout) */
export async function probeIndicator(indicators: HealthIndicatorService, key: string, probe: () => Promise<boolean>): Promise<HealthIndicatorResult> {
  const session = indicators.check(key);
  const up = await withTimeout(probe(), PROBE_TIMEOUT_MS, `${key} ping`).catch(() => false);
  return up ? session.up() : session.down({ message: `${key} does not answer` });
}

@Controller()
export class HealthController {
  constructor(
    @Inject(RX_RUNTIME) private readonly runtime: ServiceRuntime,
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
  ) {}

  @Get('health')
  async report(): Promise<HealthReport> {
    const report = await checkHealth(this.runtime);
    if (report.status !== 'ok') throw new ServiceUnavailableException(report);
    return report;
  }

  @Get('health/live')
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('health/ready')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.health.check([
      () => probeIndicator(this.indicators, 'redis', () => this.runtime.connections.ping()),
      () => probeIndicator(this.indicators, 'backend', () => this.runtime.backend.ping()),
    ]);
  }
}
