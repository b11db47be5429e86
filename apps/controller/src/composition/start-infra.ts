// The infrastructure of one attempt of a run: Redis (found or started), the services (spawned, or the user's),
// the backend client, the step bus, the controller's HTTP server (/health, /metrics, /queues); logs/endpoints.json
// says where each answers. close() stops them in reverse order.
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { TinkerBackend, type PolicyBackend } from '@rx/backend';
import { QUEUE_NAME_LIST } from '@rx/contracts';
import type { RxMetrics } from '@rx/metrics';
import { appendRunLine, writeRunFile } from '@rx/run-dir';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { redactUrl } from '../config';
import { controllerHttpHost, startControllerHttp, type ControllerHttp } from '../http/controller-http';
import { freePort, ServiceSupervisor, type ServiceSpec } from '@rx/local-stack';
import { locateRedis, pingRedis, type RedisHandle } from '../infra/redis-locator';
import { waitForNoConsumers } from '../infra/stale-consumers';
import { StepBus } from '../infra/step-bus';
import type { OpenedRun } from '../experiment/open-run';
import { EXTERNAL_NEEDS_BACKEND, RunUserError, type RunOptions } from './run-options';
import { tinkerCredentials } from './tinker-credentials';

/** the old-space cap of each worker service rx run spawns (MB) */
const WORKER_HEAP_MB = 160;

export interface Infra {
  redis: RedisHandle;
  supervisor: ServiceSupervisor | null;
  backend: PolicyBackend;
  bus: StepBus;
  http: ControllerHttp | null;
  prefix: string;
  close(): Promise<void>;
}

/** `tokenizerPath`: the run's tokenizer file, handed to every service it starts (RX_TOKENIZER_PATH), null when none */
export async function startInfra(run: OpenedRun, opts: RunOptions, metrics: RxMetrics, abort: AbortController, phase: () => string | null, tokenizerPath: string | null = null): Promise<Infra> {
  const { config, progress } = opts;
  const closers: Array<() => Promise<void>> = [];
  const close = async (): Promise<void> => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
    closers.length = 0;
  };
  try {
    const redis = await locateRedis({ url: config.REDIS_URL, allowPrivate: opts.services === 'spawn', dataDir: path.join(run.dir.servicesDataDir, 'redis'), log: (l) => progress.info(l) });
    closers.push(() => redis.close());
    const prefix = opts.services === 'spawn' ? `rx.${run.manifest.runId}` : config.RX_QUEUE_PREFIX;
    let supervisor: ServiceSupervisor | null = null;
    let backendUrl: string;
    let apiKey: string;
    if (run.manifest.backend === 'tinker') {
      ({ baseUrl: backendUrl, apiKey } = tinkerCredentials(config));
    } else if (opts.services === 'external') {
      if (!config.RX_BACKEND_URL) throw new RunUserError(EXTERNAL_NEEDS_BACKEND);
      backendUrl = config.RX_BACKEND_URL;
      apiKey = config.TINKER_API_KEY ?? 'rx-local-policy-server';
    } else {
      backendUrl = '';
      apiKey = config.RX_POLICY_API_KEY ?? `rx-local-${randomBytes(12).toString('hex')}`;
    }
    if (opts.services === 'spawn') {
      // a resumed run's queues: no worker of an earlier attempt may still take their jobs
      if (run.resumed) await waitForNoConsumers(redis.url, prefix, 15_000, abort.signal);
      supervisor = new ServiceSupervisor({ logsDir: run.dir.logsDir, healthTimeoutMs: opts.healthTimeoutMs, signal: abort.signal });
      supervisor.onUnexpectedExit((name, code, signal) => abort.abort(new Error(`the ${name} service exited (${code ?? signal}) during the run; see ${path.join(run.dir.logsDir, `${name}.log`)}`)));
      closers.push(() => (supervisor as ServiceSupervisor).stop());
      const dataDir = run.dir.servicesDataDir;
      if (run.manifest.backend === 'embedded') {
        const port = await freePort();
        progress.info('starting the policy server (embedded model) ...');
        const env: Record<string, string> = {
          HOST: '127.0.0.1',
          RX_DATA_DIR: path.join(dataDir, 'policy-server'),
          RX_POLICY_API_KEY: apiKey,
        };
        if (config.RX_POLICY_LATENCY_MS !== undefined) env.RX_POLICY_LATENCY_MS = String(config.RX_POLICY_LATENCY_MS);
        const [server] = await supervisor.start([{ name: 'policy-server', port, env }]);
        backendUrl = server.url;
      }
      const common: Record<string, string> = { REDIS_URL: redis.url, RX_BACKEND_URL: backendUrl, TINKER_API_KEY: apiKey, RX_DATA_DIR: dataDir, RX_QUEUE_PREFIX: prefix, HOST: '127.0.0.1' };
      if (config.RX_TINKER_STUCK_TIMEOUT_MS !== undefined) common.RX_TINKER_STUCK_TIMEOUT_MS = String(config.RX_TINKER_STUCK_TIMEOUT_MS);
      // one tokenizer file for the run: the one the controller resolved and hashed, whatever the services' environment says
      if (tokenizerPath !== null) common.RX_TOKENIZER_PATH = tokenizerPath;
      if (redis.insecureLocal) {
        // the services refuse a Redis without a password unless told this is a development machine: it is
        common.RX_ALLOW_INSECURE_REDIS = '1';
        progress.info(`Redis at ${redactUrl(redis.url)} has no password; the services rx run starts use it because it is on this machine (RX_ALLOW_INSECURE_REDIS=1)`);
      }
      const specs: ServiceSpec[] = [];
      // a worker's heap is capped so that V8 collects instead of growing over a long run (payloads are <= 1 MB)
      for (const name of ['sampler', 'grader', 'advantage', 'trainer']) specs.push({ name, port: await freePort(), env: { ...common }, nodeArgs: [`--max-old-space-size=${WORKER_HEAP_MB}`] });
      progress.info(`starting ${specs.map((s) => s.name).join(', ')} (logs in ${run.dir.relative(run.dir.logsDir)}/) ...`);
      await supervisor.start(specs);
    }
    const backend: PolicyBackend =
      opts.backendFor?.() ??
      new TinkerBackend({
        baseUrl: backendUrl,
        apiKey,
        logger: { warn: (m) => progress.warn(`backend: ${m}`) },
        timing: config.RX_TINKER_STUCK_TIMEOUT_MS === undefined ? {} : { stuckTimeoutMs: config.RX_TINKER_STUCK_TIMEOUT_MS },
      });
    closers.push(() => backend.close());
    const bus = new StepBus({
      redisUrl: redis.url,
      prefix,
      attempt: run.state.state.attempts.length,
      metrics,
      log: (l) => progress.warn(l),
      onDeadLetter: (letter) => {
        appendRunLine(run.dir, 'dead-letters.jsonl', run.dir.deadLettersFile, { ...letter, seen_at: new Date().toISOString() });
        progress.warn(`dead letter: ${letter.sourceJobId} on ${letter.sourceQueue}: ${letter.error ?? letter.reason}`);
      },
    });
    closers.push(() => bus.close());
    await bus.start();
    await bus.waitForConsumers(opts.services === 'spawn' ? 30_000 : (opts.healthTimeoutMs ?? 120_000), abort.signal);
    let http: ControllerHttp | null = null;
    const port = opts.httpPort === undefined ? config.PORT : opts.httpPort;
    if (port !== null) {
      const host = controllerHttpHost(config.HOST, opts.serviceMode ? 'service' : 'rx-run');
      const boardConnection = new Redis(redis.url, { maxRetriesPerRequest: null });
      boardConnection.on('error', () => undefined);
      const boardQueues = QUEUE_NAME_LIST.map((q) => new Queue(q, { connection: boardConnection, prefix }));
      // a Redis outage is one line per outage on the board's queues, not a stack trace per queue and retry
      let boardDown = false;
      boardConnection.on('ready', () => (boardDown = false));
      for (const q of boardQueues) {
        q.on('error', (err: Error) => {
          if (boardDown) return;
          boardDown = true;
          progress.warn(`/queues: Redis unavailable (${err.message}); the board shows the queues again once it is back`);
        });
      }
      closers.push(async () => {
        await Promise.all(boardQueues.map((q) => q.close()));
        await boardConnection.quit().catch(() => boardConnection.disconnect());
      });
      const probes = { redis: () => pingRedis(redis.url), backend: () => backend.ping(), runId: () => run.manifest.runId, phase, metrics };
      try {
        http = await startControllerHttp(probes, { host, port, queues: boardQueues });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        http = await startControllerHttp(probes, { host, port: 0, queues: boardQueues });
        progress.warn(`port ${port} is taken: the controller serves /health, /metrics and /queues on ${http.url} instead`);
      }
      closers.push(() => (http as ControllerHttp).close());
    }
    progress.info(`Redis ${redactUrl(redis.url)} (prefix ${prefix}); backend ${run.manifest.backend} at ${redactUrl(backendUrl)}${http ? `; controller ${http.url} (/health, /metrics, /queues)` : ''}`);
    // where to scrape /metrics while the run goes on (Prometheus, or a person with curl)
    const endpoints: Record<string, string> = {};
    if (http) endpoints.controller = http.url;
    for (const s of supervisor?.running() ?? []) endpoints[s.name] = s.url;
    writeRunFile(run.dir, 'logs/endpoints.json', { written_at: new Date().toISOString(), endpoints });
    return { redis, supervisor, backend, bus, http, prefix, close };
  } catch (err) {
    await close();
    throw err;
  }
}
