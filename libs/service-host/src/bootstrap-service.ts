// Starts one pipeline service: connections, metrics, queues, the Nest app (HTTP /health and /metrics only), then
// the service's edge workers (plain BullMQ Workers built from the pipeline graph, with the lock and stall settings
// of the config) once health is up. close() shuts it down in order: workers (finishing or returning their jobs),
// HTTP, queues, backend, Redis connections.
// main.ts calls it with installSignalHandlers; tests and the controller call it in-process.
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import type { INestApplication, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger as PinoLogger } from 'nestjs-pino';
import type { PolicyBackend } from '@rx/backend';
import type { StageName } from '@rx/contracts';
import { createRxMetrics } from '@rx/metrics';
import { registerConsumer, startEdgeWorkers, QueueRepository, RedisConnectionFactory } from '@rx/queue';
import { instrumentBackend } from './instrumented-backend';
import { edgesOf, queuesConsumedBy, queuesTouchedBy, type PipelineService, type StageDeps } from '@rx/pipeline';
import { redactConfig, workerTimingsOf, type ServiceConfig } from './service-config';
import { checkHealth } from './health.controller';
import { RxServiceModule, serviceHealthProbes } from './rx-service.module';
import { createRxLogger, lineDestination } from './rx-logger';
import type { ServiceRuntime } from './service-runtime';

export interface BootstrapServiceOptions<S extends Exclude<PipelineService, 'controller'>> {
  service: S;
  config: ServiceConfig;
  /** the model, for a service whose stages call it (sampler, trainer); health waits for it */
  backend?: PolicyBackend;
  /** what the service's stage functions need (the graph's StageDeps of the service), from its runtime */
  stageDeps: (runtime: ServiceRuntime) => StageDeps[S];
  stageTimeoutMs?: Partial<Record<StageName, number>>;
  /** SIGTERM/SIGINT close the service and end the process (main.ts) */
  installSignalHandlers?: boolean;
  /** Nest's logger (default: warnings and errors through the service's pino logger) */
  logger?: LoggerService | LogLevel[] | false;
  /** how long to wait for Redis and the backend at start-up (default 30 s) */
  readyTimeoutMs?: number;
  /** the HTTP interface (default: config.HOST, 0.0.0.0 unless set) */
  host?: string;
  log?: (line: string) => void;
}

export interface RunningService {
  readonly runtime: ServiceRuntime;
  readonly app: INestApplication;
  /** http://127.0.0.1:<port> */
  readonly url: string;
  close(): Promise<void>;
}

/** RX_STAGE_TIMEOUT_MS applied to the stages the service runs (none set: the graph's limits) */
function stageTimeoutsFromConfig(service: PipelineService, config: ServiceConfig): Partial<Record<StageName, number>> {
  const ms = config.RX_STAGE_TIMEOUT_MS;
  if (ms === undefined) return {};
  return Object.fromEntries(edgesOf(service).map((e) => [e.stage, ms]));
}

async function waitUntil(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`${what} did not come up within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function bootstrapService<S extends Exclude<PipelineService, 'controller'>>(opts: BootstrapServiceOptions<S>): Promise<RunningService> {
  const { service, config } = opts;
  const logger = createRxLogger(service, opts.log ? lineDestination(opts.log) : undefined);
  const log = (event: string, fields: Record<string, unknown> = {}) => logger.info({ event, ...fields });
  const consumes = queuesConsumedBy(service);

  const connections = new RedisConnectionFactory(config.REDIS_URL, { connectionName: `rx-${service}` });
  const readyTimeoutMs = opts.readyTimeoutMs ?? 30_000;
  let app: INestApplication | undefined;
  let queues: QueueRepository | undefined;
  try {
    await connections.ready(readyTimeoutMs);
    const metrics = createRxMetrics({ service, queueSnapshot: () => queues!.snapshot(queuesTouchedBy(service)) });
    queues = new QueueRepository({ connections, prefix: config.RX_QUEUE_PREFIX });
    const runtime: ServiceRuntime = {
      service,
      config,
      connections,
      queues,
      backend: opts.backend ? instrumentBackend(opts.backend, metrics) : null,
      metrics,
      stageTimeoutMs: opts.stageTimeoutMs ?? stageTimeoutsFromConfig(service, config),
      logger,
      log,
    };
    // the cross-service start-up check: no other service consumes these queues on this prefix
    await registerConsumer(connections.producer(), config.RX_QUEUE_PREFIX, service, consumes);

    app = await NestFactory.create(RxServiceModule.forRuntime(runtime), { ...(opts.logger === undefined ? { bufferLogs: true } : { logger: opts.logger }), abortOnError: false });
    if (opts.logger === undefined) app.useLogger(app.get(PinoLogger));
    await app.listen(config.PORT, opts.host ?? config.HOST ?? '0.0.0.0');
    const port = (app.getHttpServer().address() as AddressInfo).port;
    const url = `http://127.0.0.1:${port}`;

    const health = serviceHealthProbes(runtime);
    await waitUntil(`${service}: ${opts.backend ? 'Redis and the backend' : 'Redis'}`, readyTimeoutMs, async () => (await checkHealth(health)).status === 'ok');

    const timings = workerTimingsOf(config);
    const workers = startEdgeWorkers({
      service,
      deps: opts.stageDeps(runtime),
      connections,
      queues,
      metrics,
      concurrency: config.RX_JOB_CONCURRENCY,
      lockMs: timings.lockMs,
      stalledIntervalMs: timings.stalledIntervalMs,
      stageTimeoutMs: runtime.stageTimeoutMs,
      log,
    });
    log('ready', { url, consumes, config: redactConfig(config) });

    let closing: Promise<void> | undefined;
    const nestApp = app;
    const close = (): Promise<void> =>
      (closing ??= (async () => {
        log('closing');
        await workers.close(); // active jobs finish (or return to the queue) first
        await nestApp.close();
        await queues!.close();
        await opts.backend?.close();
        await connections.close();
        log('closed');
      })());
    if (opts.installSignalHandlers) {
      const onSignal = (signal: NodeJS.Signals) => {
        log('signal', { signal });
        close().then(
          () => process.exit(0),
          (err: Error) => {
            process.stderr.write(`${service}: shutdown failed: ${err.message}\n`);
            process.exit(1);
          },
        );
      };
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
    }
    return { runtime, app, url, close };
  } catch (err) {
    await app?.close().catch(() => undefined);
    await queues?.close().catch(() => undefined);
    await connections.close().catch(() => undefined);
    throw err;
  }
}
