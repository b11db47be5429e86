// The controller's side of the pipeline: it enqueues `step-requests` (validated by the catalog, job id
// `<run>-<arm>-<step>-prepare`) and consumes `step-events` (validated the same way; a bad payload goes to the
// dead-letter queue). A caller waits for one (run, arm, step); while it waits, a dead letter of that step (the
// pipeline refused it) or a stalled step fails the wait with the reason instead of hanging. Every dead letter of
// the runs it drives is handed to `onDeadLetter` once (the controller keeps them in the run directory for
// `rx status`).
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { jobIdFor, QUEUE_CATALOG, type StepEvent, type StepRequest } from '@rx/contracts';
import { consumeJob, PIPELINE_GRAPH, QueueRepository, RedisConnectionFactory, throughRedisOutages } from '@rx/pipeline';
import type { RxMetrics } from '@rx/metrics';
import { canonicalJson } from '../run/canonical-json';

export interface StepBusOptions {
  redisUrl: string;
  prefix: string;
  metrics: Pick<RxMetrics, 'countDeadLetter' | 'observeStage'>;
  /** how often the dead-letter queue is checked while a step is awaited (default 2 s) */
  deadLetterPollMs?: number;
  log?: (line: string) => void;
  /** each dead letter of a tracked run, once */
  onDeadLetter?: (letter: SeenDeadLetter) => void;
}

/** a dead letter as the controller records it */
export interface SeenDeadLetter {
  deadLetterJobId: string;
  sourceQueue: string | null;
  sourceJobId: string;
  reason: string;
  error: string | null;
  receivedAt: string | null;
}

export class StepFailedError extends Error {
  override readonly name = 'StepFailedError';
}

interface Waiter {
  resolve: (e: StepEvent) => void;
  reject: (e: Error) => void;
}

/** step-complete events kept for a later wait */
const MAX_UNCLAIMED_EVENTS = 10_000;

const keyOf = (runId: string, arm: string, step: number): string => `${runId}\u0000${arm}\u0000${step}`;

export class StepBus {
  private readonly connections: RedisConnectionFactory;
  private readonly queues: QueueRepository;
  private worker: Worker | null = null;
  private readonly waiters = new Map<string, Waiter>();
  private readonly arrived = new Map<string, StepEvent>();
  private readonly seenDeadLetters = new Set<string>();
  /** unrecoverable dead letters not yet turned into a failed wait */
  private readonly unclaimedDeadLetters: SeenDeadLetter[] = [];
  private readonly runIds = new Set<string>();
  /** steps whose request BullMQ dropped (their job id held another job): their wait fails at once */
  private readonly refused = new Map<string, StepFailedError>();
  private failure: Error | null = null;
  private closed = false;

  constructor(private readonly opts: StepBusOptions) {
    this.connections = new RedisConnectionFactory(opts.redisUrl, { connectionName: 'rx-controller' });
    this.queues = new QueueRepository({ connections: this.connections, prefix: opts.prefix });
  }

  get queueRepository(): QueueRepository {
    return this.queues;
  }

  get redisUrl(): string {
    return this.opts.redisUrl;
  }

  get prefix(): string {
    return this.opts.prefix;
  }

  /** connects and starts consuming step-events */
  async start(): Promise<void> {
    await this.connections.ready();
    this.worker = new Worker(
      'step-events',
      (job) =>
        consumeJob('step-events', { id: job.id, data: job.data, attemptsMade: job.attemptsMade }, { queues: this.queues, metrics: this.opts.metrics }, async (event) => {
          this.deliver(event);
        }),
      { connection: this.connections.worker(), prefix: this.opts.prefix, concurrency: 8, autorun: true },
    );
    this.worker.on('error', (err) => this.opts.log?.(`step-events worker: ${err.message}`));
    await this.worker.waitUntilReady();
  }

  /**
   * Waits until every queue the pipeline consumes has a worker (the sampler, grader, advantage and trainer are
   * up on this prefix); otherwise one line says which service is missing.
   */
  /** Waits until every queue of the graph has a consumer; an abort (Ctrl-C) ends the wait at once with its reason. */
  async waitForConsumers(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const needed = PIPELINE_GRAPH.filter((e) => e.service !== 'controller');
    const deadline = Date.now() + timeoutMs;
    let missing: string[] = [];
    do {
      signal?.throwIfAborted();
      missing = [];
      for (const e of needed) {
        const workers = await this.queues.queue(e.consumes).getWorkers().catch(() => []);
        if (workers.length === 0) missing.push(`${e.service} (queue '${e.consumes}')`);
      }
      if (missing.length === 0) return;
      await sleep(500, undefined, { signal });
    } while (Date.now() < deadline);
    throw new StepFailedError(
      `no consumer on prefix '${this.opts.prefix}' for ${[...new Set(missing)].join(', ')} after ${Math.round(timeoutMs / 1000)} s: start the services (or use --services spawn) with RX_QUEUE_PREFIX=${this.opts.prefix}`,
    );
  }

  /** the run ids this controller drives: events of other runs are acknowledged and logged, never delivered */
  track(runId: string): void {
    this.runIds.add(runId);
  }

  async request(req: StepRequest): Promise<void> {
    this.track(req.runId);
    const jobId = jobIdFor(req, 'prepare');
    const key = keyOf(req.runId, req.arm, req.step);
    this.refused.delete(key);
    // a Redis restart while a step is requested waits for Redis instead of failing the run
    const enqueued = await throughRedisOutages(() => this.queues.enqueue('step-requests', req, jobId));
    if (enqueued.byReference) return;
    // BullMQ keeps the first job of a job id and drops a later add silently: when the id already held another job
    // (a malformed one, or one the pipeline gave up on), the step would wait for nothing until the stall limit
    const queue = this.queues.queue('step-requests');
    const held = await throughRedisOutages(() => queue.getJob(jobId));
    if (!held || canonicalJson(held.data) === canonicalJson(QUEUE_CATALOG['step-requests'].schema.parse(req))) return;
    const state = await throughRedisOutages(() => held.getState());
    if (state === 'failed' || state === 'completed') {
      // a job that is done with: replaced by the real request (how a resumed run re-enqueues the step)
      await throughRedisOutages(() => held.remove());
      await throughRedisOutages(() => this.queues.enqueue('step-requests', req, jobId));
      this.opts.log?.(`step-requests: ${jobId} held another ${state} job; replaced by this step's request`);
      return;
    }
    this.refused.set(
      key,
      new StepFailedError(`step ${req.step} of ${req.runId}/${req.arm} cannot be requested: its job id ${jobId} already holds another job (${state}), so BullMQ dropped the request; once that job has been dead-lettered, rx run --resume requests the step again`),
    );
    this.waiters.get(key)?.reject(this.refused.get(key) as Error);
  }

  /** the step-complete event of (run, arm, step); rejects on a dead letter of the step, a stall, or fail() */
  waitFor(runId: string, arm: string, step: number, stallTimeoutMs: number): Promise<StepEvent> {
    const key = keyOf(runId, arm, step);
    this.track(runId);
    if (this.failure) return Promise.reject(this.failure);
    const refused = this.refused.get(key);
    if (refused) return Promise.reject(refused);
    const ready = this.arrived.get(key);
    if (ready) {
      this.arrived.delete(key);
      return Promise.resolve(ready);
    }
    return new Promise<StepEvent>((resolve, reject) => {
      const prefix = `${runId}-${arm}-${step}-`;
      const poll = setInterval(() => {
        void this.pollDeadLetters().then(() => {
          const i = this.unclaimedDeadLetters.findIndex((l) => l.sourceJobId.startsWith(prefix));
          if (i < 0) return;
          const [letter] = this.unclaimedDeadLetters.splice(i, 1);
          finish(new StepFailedError(`step ${step} of ${runId}/${arm} was refused by the pipeline: ${letter.sourceQueue}: ${letter.error ?? letter.reason}`));
        });
      }, this.opts.deadLetterPollMs ?? 2000);
      const stall = setTimeout(
        () => finish(new StepFailedError(`step ${step} of ${runId}/${arm} did not complete within ${Math.round(stallTimeoutMs / 1000)} s; are the services running (see their logs)?`)),
        stallTimeoutMs,
      );
      const finish = (outcome: StepEvent | Error): void => {
        clearInterval(poll);
        clearTimeout(stall);
        this.waiters.delete(key);
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      this.waiters.set(key, { resolve: (e) => finish(e), reject: (e) => finish(e) });
    });
  }

  /** fails every wait now and later (a service died, the run was interrupted) */
  fail(err: Error): void {
    this.failure ??= err;
    for (const w of [...this.waiters.values()]) w.reject(err);
  }

  private deliver(event: StepEvent): void {
    const key = keyOf(event.runId, event.arm, event.step);
    const waiter = this.waiters.get(key);
    if (waiter) {
      waiter.resolve(event);
      return;
    }
    // an event nobody waits for yet: kept (a resumed run may wait for it), the oldest dropped past the cap
    if (!this.runIds.has(event.runId)) this.opts.log?.(`step-events: an event of run ${event.runId}, which this controller has not requested (kept)`);
    this.arrived.set(key, event);
    if (this.arrived.size > MAX_UNCLAIMED_EVENTS) this.arrived.delete(this.arrived.keys().next().value as string);
  }

  /** reads the dead-letter queue; each new letter of a tracked run is reported once */
  private async pollDeadLetters(): Promise<void> {
    if (this.closed) return;
    try {
      const jobs = await this.queues.queue('dead-letters').getJobs(['waiting', 'delayed', 'completed', 'failed'], 0, 200);
      for (const job of jobs) {
        if (!job?.id || this.seenDeadLetters.has(job.id)) continue;
        const data = job.data as { sourceJobId?: string | null; reason?: string; error?: string; sourceQueue?: string; receivedAt?: string };
        const source = data.sourceJobId;
        if (!source || ![...this.runIds].some((r) => source.startsWith(`${r}-`))) continue;
        this.seenDeadLetters.add(job.id);
        const letter: SeenDeadLetter = {
          deadLetterJobId: job.id,
          sourceQueue: data.sourceQueue ?? null,
          sourceJobId: source,
          reason: data.reason ?? 'unknown',
          error: data.error ?? null,
          receivedAt: data.receivedAt ?? null,
        };
        this.opts.onDeadLetter?.(letter);
        // a step's job refused for any reason (an invalid payload too) fails that step's wait with the reason
        this.unclaimedDeadLetters.push(letter);
      }
    } catch {
      // Redis away for a moment: the next poll tries again
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.fail(new StepFailedError('the controller is shutting down'));
    await this.worker?.close();
    await this.queues.close();
    await this.connections.close();
  }
}

/** Deletes every key under a prefix (a finished run whose services rx run owned); returns how many. */
export async function deletePrefixKeys(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  redis.on('error', () => undefined);
  try {
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}
