// GET /metrics: the Prometheus text exposition of the service's registry.
import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { RX_RUNTIME, type ServiceRuntime } from './service-runtime';

@Controller()
export class MetricsController {
  constructor(@Inject(RX_RUNTIME) private readonly runtime: ServiceRuntime) {}

  @Get('metrics')
  async metrics(@Res() res: Response): Promise<void> {
    const body = await this.runtime.metrics.exposition();
    res.setHeader('Content-Type', this.runtime.metrics.registry.contentType);
    res.send(body);
  }
}
