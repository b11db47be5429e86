// /health (ready when Redis and the backend answer) and /metrics (the controller's Prometheus registry).
import { Controller, Get, Header, HttpException, Inject } from '@nestjs/common';
import { CONTROLLER_PROBES, type ControllerProbes } from './controller-probes';

@Controller()
export class HealthController {
  constructor(@Inject(CONTROLLER_PROBES) private readonly probes: ControllerProbes) {}

  @Get('health')
  async health(): Promise<{ status: string; redis: boolean; backend: boolean; run: string | null; phase: string | null }> {
    const [redis, backend] = await Promise.all([this.probes.redis().catch(() => false), this.probes.backend().catch(() => false)]);
    const body = { status: redis && backend ? 'ok' : 'unavailable', redis, backend, run: this.probes.runId(), phase: this.probes.phase() };
    if (!redis || !backend) throw new HttpException(body, 503);
    return body;
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return this.probes.metrics.exposition();
  }
}
