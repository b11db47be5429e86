// Starts the controller's HTTP server: /health, /metrics and bull-board (read-only) at /queues over the
// pipeline's queues. Used by main.ts (service mode) and by rx run, which serves it while the experiment runs; it
// binds 127.0.0.1 unless in service mode or told otherwise (controllerHttpHost).
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

/**
 * Where the controller's HTTP server listens: HOST when set; else 0.0.0.0 in service mode (a container, where the
 * probes and Prometheus reach it; in Kubernetes a NetworkPolicy admits Prometheus only), and 127.0.0.1 for `rx run`
 * on a machine, whatever --services says: bull-board shows prompts, model ids and stack traces to whoever reaches it.
 */
export function controllerHttpHost(configuredHost: string | undefined, mode: 'service' | 'rx-run'): string {
  return configuredHost ?? (mode === 'service' ? '0.0.0.0' : '127.0.0.1');
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
  // the address it really listens on
  const { port, address } = app.getHttpServer().address() as AddressInfo;
  return { url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`, port, close: () => app.close() };
}
