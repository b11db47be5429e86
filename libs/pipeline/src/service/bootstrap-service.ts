// Starts one pipeline service: connections, metrics, queues, the Nest app (HTTP /health, /metrics, the
// processors), the start-up checks, then the workers once health is up (with the lock and stall settings of
// the config). A job that failed for good (its last attempt, a stall limit) is dead-lettered here if its
// processor could not do it. close() shuts it down in order: workers (finishing or returning their jobs), HTTP,
// queues, backend, Redis connections.
// main.ts calls it with installSignalHandlers; tests and the controller call it in-process.
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import type { DynamicModule, INestApplication, LoggerService, LogLevel, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger as PinoLogger } from 'nestjs-pino';
import type { PolicyBackend } from '@rx/backend';
import { deadLetterJobId, type QueueName, type StageName } from '@rx/contracts';
import { createRxMetrics } from '@rx/metrics';
import { registerConsumer } from '../consumer-registry';
import { instrumentBackend } from '../instrumented-backend';
import { assertProcessorCoverage, edgeOfQueue, MAX_STALLED_COUNT, queuesConsumedBy, queuesTouchedBy, type PipelineService, type ProcessorMap } from '../pipeline-graph';
import { QueueRepository } from '../queue.repository';
import { RedisConnectionFactory } from '../redis-connection.factory';
import type { RendererResolver } from '../renderer-resolver';
import { redactConfig, workerTimingsOf, type ServiceConfig, type WorkerTimings } from '../service-config';
import { checkHealth } from './health.controller';
import { RxServiceModule } from './rx-service.module';
import { createRxLogger, lineDestination } from './rx-logger';
import type { ServiceRuntime } from './service-runtime';

/** @nestjs/bullmq's metadata key of @Processor (read to check what each processor class consumes) */
export const PROCESSOR_METADATA_KEY = 'bullmq:processor_metadata';

/** The part of a failed BullMQ Job the dead-letter backstop reads. */
export interface FailedJobLike {
  id?: string;
  data: unknown;
  attemptsMade: number;
  opts: { attempts?: number };
}

/** What bootstrapService needs of a WorkerHost (no import of @nestjs/bullmq here: it is ESM-only). */
export interface WorkerHostLike {
  readonly worker: {
    concurrency: number;
    run(): Promise<void>;
    on(event: 'failed', listener: (job: FailedJobLike | undefined, err: Error) => void): unknown;
    on(event: 'error', listener: (err: Error) => void): unknown;
  };
}

/**
 * Sets a BullMQ Worker's lock and stall settings before it runs. BullMQ reads them when it builds the worker's
 * lock manager (in its constructor, from the @Processor options), so the lock manager is built again here.
 */
export function applyWorkerTimings(worker: WorkerHostLike['worker'], timings: WorkerTimings): void {
  const w = worker as unknown as {
    opts: { lockDuration?: number; lockRenewTime?: number; stalledInterval?: number; maxStalledCount?: number };
    createLockManager?: () => void;
  };
  if (typeof w.opts !== 'object' || typeof w.createLockManager !== 'function') {
    throw new Error('this BullMQ Worker has no opts/createLockManager: the lock settings (RX_LOCK_MS) cannot be applied');
  }
  w.opts.lockDuration = timings.lockMs;
  w.opts.lockRenewTime = Math.floor(timings.lockMs / 2);
  w.opts.stalledInterval = timings.stalledIntervalMs;
  w.opts.maxStalledCount = MAX_STALLED_COUNT;
  w.createLockManager();
}

export interface BootstrapServiceOptions<S extends PipelineService> {
  service: S;
  config: ServiceConfig;
  backend: PolicyBackend;
  renderers: RendererResolver;
  /** the app's root module for this runtime: imports BullModule.forRoot(...) and RxServiceModule.forRuntime(runtime) */
  module: (runtime: ServiceRuntime) => DynamicModule;
  /** queue -> the @Processor class consuming it */
  processors: ProcessorMap<S, Type<WorkerHostLike>>;
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
  return Object.fromEntries(queuesConsumedBy(service).map((q) => [edgeOfQueue(q)!.stage, ms]));
}

/**
 * The backstop of consumeJob's dead letters: a job that failed for good (its last attempt, an UnrecoverableError,
 * or BullMQ's stall limit, where the processor never ran) gets its dead letter unless it has one. True when written.
 */
export async function deadLetterFinalFailure(
  queue: QueueName,
  job: FailedJobLike,
  err: Error,
  repo: Pick<QueueRepository, 'queue' | 'deadLetter'>,
  metrics: { countDeadLetter(queue: QueueName): void },
  now: () => number = Date.now,
): Promise<boolean> {
  const final = err.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
  if (!final) return false;
  if (await repo.queue('dead-letters').getJob(deadLetterJobId(queue, job.id, now()))) return false;
  let preview: string;
  try {
    preview = (JSON.stringify(job.data) ?? '').slice(0, 2000);
  } catch {
    preview = '<unserialisable>';
  }
  await repo.deadLetter({
    sourceQueue: queue,
    sourceJobId: job.id ?? null,
    reason: 'unrecoverable',
    error: `${queue} job ${job.id} failed for good after ${job.attemptsMade} attempt${job.attemptsMade === 1 ? '' : 's'}: ${err.message}`.slice(0, 8000),
    issues: [],
    dataPreview: preview,
    receivedAt: new Date(now()).toISOString(),
  });
  metrics.countDeadLetter(queue);
  return true;
}

export function processorQueueOf(cls: Type<unknown>): string | undefined {
  const meta = Reflect.getMetadata(PROCESSOR_METADATA_KEY, cls) as { name?: string } | undefined;
  return meta?.name;
}

async function waitUntil(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`${what} did not come up within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function bootstrapService<S extends PipelineService>(opts: BootstrapServiceOptions<S>): Promise<RunningService> {
  const { service, config } = opts;
  const logger = createRxLogger(service, opts.log ? lineDestination(opts.log) : undefined);
  const log = (event: string, fields: Record<string, unknown> = {}) => logger.info({ event, ...fields });

  // the start-up check, before anything connects: one processor per queue the graph gives this service
  const entries = Object.entries(opts.processors) as Array<[QueueName, Type<WorkerHostLike>]>;
  assertProcessorCoverage(
    service,
    entries.map(([queue, cls]) => {
      const consumed = processorQueueOf(cls);
      if (consumed === undefined) throw new Error(`${service}: refusing to start: ${cls.name} (for '${queue}') has no @Processor`);
      return consumed as QueueName;
    }),
  );

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
      backend: instrumentBackend(opts.backend, metrics),
      metrics,
      renderers: opts.renderers,
      stageTimeoutMs: opts.stageTimeoutMs ?? stageTimeoutsFromConfig(service, config),
      logger,
      log,
    };
    await registerConsumer(connections.producer(), config.RX_QUEUE_PREFIX, service, queuesConsumedBy(service));

    app = await NestFactory.create(opts.module(runtime), { ...(opts.logger === undefined ? { bufferLogs: true } : { logger: opts.logger }), abortOnError: false });
    if (opts.logger === undefined) app.useLogger(app.get(PinoLogger));
    await app.listen(config.PORT, opts.host ?? config.HOST ?? '0.0.0.0');
    const port = (app.getHttpServer().address() as AddressInfo).port;
    const url = `http://127.0.0.1:${port}`;

    await waitUntil(`${service}: Redis and the backend`, readyTimeoutMs, async () => (await checkHealth(runtime)).status === 'ok');

    const repo = queues;
    for (const [queue] of entries) {
      // the Queue @nestjs/bullmq registers beside each worker: its connection errors (Redis restarting) are
      // reported by health and the workers; without a listener BullMQ prints each one with a stack
      const registered = (() => {
        try {
          return app.get<{ on(event: 'error', l: (e: Error) => void): unknown }>(`BullQueue_${queue}`, { strict: false });
        } catch {
          return undefined;
        }
      })();
      registered?.on('error', () => undefined);
    }
    for (const [queue, cls] of entries) {
      const host = app.get(cls, { strict: false });
      host.worker.concurrency = config.RX_JOB_CONCURRENCY;
      applyWorkerTimings(host.worker, workerTimingsOf(config));
      host.worker.on('failed', (job, err) => {
        log('job-failed', { queue, jobId: job?.id, attempt: job ? job.attemptsMade : undefined, error: err.message });
        if (job) void deadLetterFinalFailure(queue, job, err, repo, metrics).catch((e: Error) => log('dead-letter-failed', { queue, jobId: job.id, error: e.message }));
      });
      host.worker.on('error', (err) => log('worker-error', { queue, error: err.message }));
      host.worker.run().catch((err: Error) => log('worker-stopped', { queue, error: err.message }));
    }
    log('ready', { url, consumes: entries.map(([q]) => q), config: redactConfig(config) });

    let closing: Promise<void> | undefined;
    const nestApp = app;
    const close = (): Promise<void> =>
      (closing ??= (async () => {
        log('closing');
        await nestApp.close(); // @nestjs/bullmq closes the workers (active jobs finish) on shutdown, then HTTP stops
        await queues!.close();
        await opts.backend.close();
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
