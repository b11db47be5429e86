// The four pipeline services (any number of replicas each) as child processes running their real main.ts
// against the real Redis, on a BullMQ prefix of their own, and the benchmark as the controller: it enqueues
// step requests and waits for the step-complete events, noting when each arrived.
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { jobIdFor, QUEUE_CATALOG, stepCompleteOrThrow, type QueueName, type StepComplete, type StepRequest } from '@rx/contracts';
import { QueueRepository, RedisConnectionFactory } from '@rx/queue';
import { randomBytes } from 'node:crypto';
import { processMemory, startNodeProcesses, stopAll, type BenchProcess, type ProcessMemory } from './bench-process';

export const SERVICES = ['sampler', 'grader', 'advantage', 'trainer'] as const;
export type ServiceName = (typeof SERVICES)[number];

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function redisUrl(): string {
  return process.env.REDIS_URL || DEFAULT_REDIS_URL;
}

export function benchPrefix(tag: string): string {
  return `bench-${tag}-${randomBytes(3).toString('hex')}`;
}

export interface StackOptions {
  prefix: string;
  backendUrl: string;
  dataDir: string;
  /** replicas per service (0 or absent: not started) */
  replicas: Partial<Record<ServiceName, number>>;
  /** extra environment for every service (RX_CONCURRENCY, RX_JOB_CONCURRENCY) */
  env?: Record<string, string>;
}

export interface ServiceMemory extends ProcessMemory {
  name: string;
  pid: number;
}

export class ServiceStack {
  private constructor(readonly processes: BenchProcess[], readonly options: StackOptions) {}

  /** starts every replica in parallel; if one fails, stops the others and throws */
  static async start(options: StackOptions): Promise<ServiceStack> {
    const env = {
      REDIS_URL: redisUrl(),
      RX_BACKEND_URL: options.backendUrl,
      RX_QUEUE_PREFIX: options.prefix,
      RX_DATA_DIR: options.dataDir,
      PORT: '0',
      // the services refuse a Redis without a password unless told this is a development machine
      ...(new URL(redisUrl()).password ? {} : { RX_ALLOW_INSECURE_REDIS: '1' }),
      ...options.env,
    };
    const names = SERVICES.flatMap((s) => Array.from({ length: options.replicas[s] ?? 0 }, (_, i) => ({ service: s, name: `${s}-${i + 1}` })));
    return new ServiceStack(await startNodeProcesses(names.map((n) => ({ name: n.name, script: `apps/${n.service}/src/main.ts`, env }))), options);
  }

  memory(): ServiceMemory[] {
    return this.processes.map((p) => ({ name: p.name, pid: p.pid, ...processMemory(p.pid) }));
  }

  async stop(): Promise<void> {
    await stopAll(this.processes);
  }
}

export interface ReceivedEvent {
  event: StepComplete;
  /** performance.now() when the controller's worker received it */
  receivedAt: number;
}

/** The controller's side of the queues: enqueue step requests, await each arm's step-complete event. */
export class StepDriver {
  private readonly connections: RedisConnectionFactory;
  readonly queues: QueueRepository;
  private readonly worker: Worker;
  private readonly seen = new Map<string, ReceivedEvent>();
  private readonly waiters = new Map<string, (e: ReceivedEvent) => void>();

  constructor(readonly prefix: string) {
    this.connections = new RedisConnectionFactory(redisUrl(), { connectionName: 'rx-bench-controller' });
    this.queues = new QueueRepository({ connections: this.connections, prefix });
    this.worker = new Worker(
      'step-events',
      async (job: Job) => {
        const receivedAt = performance.now();
        const event = stepCompleteOrThrow(QUEUE_CATALOG['step-events'].schema.parse(job.data));
        const k = key(event);
        const r = { event, receivedAt };
        this.seen.set(k, r);
        this.waiters.get(k)?.(r);
      },
      { connection: this.connections.worker(), prefix, concurrency: 4 },
    );
    this.worker.on('error', () => undefined);
  }

  /** enqueues the requests at once; resolves with their events in request order */
  async runStep(requests: readonly StepRequest[], timeoutMs = 300_000): Promise<ReceivedEvent[]> {
    const done = requests.map((r) => this.wait(key(r), timeoutMs));
    await Promise.all(requests.map((r) => this.queues.enqueue('step-requests', r, jobIdFor(r, 'prepare'))));
    return Promise.all(done);
  }

  private wait(k: string, timeoutMs: number): Promise<ReceivedEvent> {
    const seen = this.seen.get(k);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no step-complete event for ${k} within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.set(k, (e) => {
        clearTimeout(t);
        resolve(e);
      });
    });
  }

  async close(): Promise<void> {
    await this.worker.close();
    await this.queues.close();
    await this.connections.close();
  }
}

function key(h: { runId: string; arm: string; step: number }): string {
  return `${h.runId}/${h.arm}/${h.step}`;
}

/** A sink at the end of a partial pipeline: counts the rollouts of each job that reaches `queue`, and when. */
export class QueueSink {
  private readonly connections: RedisConnectionFactory;
  private readonly worker: Worker;
  readonly arrivals: Array<{ at: number; rollouts: number }> = [];

  constructor(prefix: string, queue: QueueName) {
    this.connections = new RedisConnectionFactory(redisUrl(), { connectionName: `rx-bench-sink-${queue}` });
    this.worker = new Worker(
      queue,
      async (job: Job) => {
        const data = job.data as { rollouts?: unknown[] };
        this.arrivals.push({ at: performance.now(), rollouts: Array.isArray(data.rollouts) ? data.rollouts.length : 0 });
      },
      { connection: this.connections.worker(), prefix, concurrency: 16 },
    );
    this.worker.on('error', () => undefined);
  }

  /** resolves once `jobs` jobs have arrived */
  async waitFor(jobs: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.arrivals.length < jobs) {
      if (Date.now() > deadline) throw new Error(`only ${this.arrivals.length} of ${jobs} jobs reached the sink within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async close(): Promise<void> {
    await this.worker.close();
    await this.connections.close();
  }
}

/** deletes every key under the prefix (the benchmark's queues, windows, ledgers, consumer registrations) */
export async function deletePrefix(prefix: string): Promise<void> {
  const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}
