// /health (is the backend answering?, public) and /metrics (Prometheus text, needs the key), outside the Tinker
// protocol.
import { Controller, Get, Header, HttpException } from '@nestjs/common';
import { Public } from './auth';
import { TinkerApiService } from './tinker-api.service';

@Controller()
export class HealthController {
  constructor(private readonly api: TinkerApiService) {}

  @Public()
  @Get('health')
  async health(): Promise<{ status: string; backend: string }> {
    const up = await this.api.ping().catch(() => false);
    if (!up) throw new HttpException({ status: 'unavailable', backend: this.api.backendKind, error: 'the backend does not answer' }, 503);
    return { status: 'ok', backend: this.api.backendKind };
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return this.api.metrics.registry.metrics();
  }
}
