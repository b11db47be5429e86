// GET /health: 200 when Redis and the backend answer, 503 (with which one did not) otherwise.
import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { withTimeout } from '../stage-timeout';
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

@Controller()
export class HealthController {
  constructor(@Inject(RX_RUNTIME) private readonly runtime: ServiceRuntime) {}

  @Get('health')
  async health(): Promise<HealthReport> {
    const report = await checkHealth(this.runtime);
    if (report.status !== 'ok') throw new ServiceUnavailableException(report);
    return report;
  }
}
