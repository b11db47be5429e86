// Starts the controller's HTTP server: /health, /metrics and bull-board (read-only) at /queues over the
// pipeline's queues. Used by main.ts (service mode) and by rx run, which serves it while the experiment runs.
import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Queue } from 'bullmq';
import type { ControllerProbes } from './controller-probes';
import { ControllerModule } from './controller.module';

export interface ControllerHttp {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startControllerHttp(probes: ControllerProbes, opts: { host: string; port: number; queues: readonly Queue[] }): Promise<ControllerHttp> {
  const app = await NestFactory.create<NestExpressApplication>(ControllerModule.forRoot(probes), { logger: ['error', 'warn'], abortOnError: false });
  app.disable('x-powered-by');
  if (opts.queues.length > 0) {
    const board = new ExpressAdapter();
    board.setBasePath('/queues');
    // @bull-board/express pins its own copy of @bull-board/api (one patch version apart): the same adapter shape
    const serverAdapter = board as unknown as Parameters<typeof createBullBoard>[0]['serverAdapter'];
    createBullBoard({ queues: opts.queues.map((q) => new BullMQAdapter(q, { readOnlyMode: true })), serverAdapter });
    app.use('/queues', board.getRouter());
  }
  await app.listen(opts.port, opts.host);
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`, port, close: () => app.close() };
}
