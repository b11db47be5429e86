// The controller's side of the pipeline: it enqueues `step-requests` (validated by the catalog, job id
// `<run>-<arm>-<step>-prepare`) and runs the graph's `complete` edge on `step-events` (the same edge workers as
// every service). A caller waits for one (run, arm, step): its step-complete event resolves the wait; a
// step-failed event (a stage dead-lettered a job of the step) or a stall fails it with the reason instead of
// hanging. Every step-failed event of the runs it drives is handed to `onDeadLetter` once (the controller keeps
// them in the run directory for `rx status`).
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { chainSuffix, deadLetterJobId, jobIdFor, QUEUE_CATALOG, type StepComplete, type StepEvent, type StepRequest } from '@rx/contracts';
import { NO_STAGE_METRICS, PIPELINE_GRAPH, throughRedisOutages, type JobConsumerDeps } from '@rx/pipeline';
import { QueueRepository, RedisConnectionFactory, startEdgeWorkers, type EdgeWorkers } from '@rx/queue';
import type { SeenDeadLetterLine } from '@rx/run-dir';
import { canonicalJson } from '@rx/run-dir';

export interface StepBusOptions {
  redisUrl: string;
  prefix: string;
  metrics: JobConsumerDeps['metrics'];
  log?: (line: string) => void;
  /** each dead letter of a step of a tracked run, once */
  onDeadLetter?: (letter: SeenDeadLetter) => void;
  /**
   * the run's attempt (1 for its first): a step of a resumed run whose earlier chain of jobs died (a dead letter, a
   * failed job) is requested again as a new chain, `-a<attempt>` on every job id, never deduplicated against the dead
   */
  attempt?: number;
}

/** a dead letter as the controller records it (a line of dead-letters.jsonl, less the time it was written down) */
export type SeenDeadLetter = Omit<SeenDeadLetterLine, 'seen_at'>;

export class StepFailedError extends Error {
  override readonly name = 'StepFailedError';
}

interface Waiter {
  resolve: (e: StepComplete) => void;
  reject: (e: Error) => void;
}

/** step events kept for a later wait */
const MAX_UNCLAIMED_EVENTS = 10_000;

const keyOf = (runId: string, arm: string, step: number): string => `${runId}\\u0000${arm}\\u0000${step}`;

/** clocks of the services and the controller may differ by this much */
const STALE_FAILURE_SKEW_MS = 5_000;

export class StepBus {
  private readonly connections: RedisConnectionFactory;
  private readonly queues: QueueRepository;
  private workers: EdgeWorkers | null = null;
  private readonly waiters = new Map<string, Waiter>();
  /** events (a step-failed one as its error) that arrived before their wait */
  private readonly arrived = new Map<string, StepComplete | StepFailedError>();
  private readonly seenDeadLetters = new Set<string>();
  /** when each step was last requested: a step-failed event from before it (an earlier attempt of the run) is stale */
  private readonly requestedAt = new Map<string, number>();
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

  /** connects and starts the `complete` edge on step-events */
  async start(): Promise<void> {
    await this.connections.ready();
    this.workers = startEdgeWorkers({
      service: 'controller',
      deps: { deliver: (event) => this.deliver(event) },
      connections: this.connections,
      queues: this.queues,
      metrics: { ...NO_STAGE_METRICS, countDeadLetter: (q) => this.opts.metrics.countDeadLetter(q), observeStage: (s, a, t) => this.opts.metrics.observeStage(s, a, t), countJobAttempt: (q, o) => this.opts.metrics.countJobAttempt(q, o) },
      concurrency: 8,
      lockMs: 30_000,
      stalledIntervalMs: 15_000,
      log: (event, fields) => this.opts.log?.(`step-events ${event}: ${JSON.stringify(fields)}`),
    });
    await Promise.all(this.workers.workers.map((w) => w.waitUntilReady()));
  }

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
    const jobId = jobIdFor(req, 'prepare', await this.chainFor(req));
    const key = keyOf(req.runId, req.arm, req.step);
    this.refused.delete(key);
    this.requestedAt.set(key, Date.now());
    if (this.arrived.get(key) instanceof Error) this.arrived.delete(key);
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

  /**
   * The chain suffix a step is requested under: its latest chain from an earlier attempt of the run (so that a step
   * still in flight is not started twice), or a new one (`-a<attempt>`) when that chain has a dead job.
   */
  private async chainFor(req: StepRequest): Promise<string> {
    const attempt = this.opts.attempt ?? 1;
    if (attempt <= 1) return '';
    const requests = this.queues.queue('step-requests');
    let latest = '';
    for (let a = 2; a < attempt; a++) {
      if (await throughRedisOutages(() => requests.getJob(jobIdFor(req, 'prepare', chainSuffix(a))))) latest = chainSuffix(a);
    }
    const dead = await this.deadJobOf(req, latest);
    if (dead === null) return latest;
    const chain = chainSuffix(attempt);
    this.opts.log?.(`step ${req.step} of ${req.runId}/${req.arm}: its job ${dead} died in an earlier attempt; requested again as ${jobIdFor(req, 'prepare', chain)}`);
    return chain;
  }

  /** the id of a job of the step's chain that died (dead-lettered or failed for good), or null */
  private async deadJobOf(req: StepRequest, chain: string): Promise<string | null> {
    const deadLetters = this.queues.queue('dead-letters');
    for (const edge of PIPELINE_GRAPH) {
      if (edge.service === 'controller') continue;
      const id = jobIdFor(req, edge.stage, chain);
      if (await throughRedisOutages(() => deadLetters.getJob(deadLetterJobId(edge.consumes, id, 0)))) return id;
      const job = await throughRedisOutages(() => this.queues.queue(edge.consumes).getJob(id));
      if (job && (await throughRedisOutages(() => job.getState())) === 'failed') return id;
    }
    return null;
  }

  /** the step-complete event of (run, arm, step); rejects on its step-failed event, a stall, or fail() */
  waitFor(runId: string, arm: string, step: number, stallTimeoutMs: number): Promise<StepComplete> {
    const key = keyOf(runId, arm, step);
    this.track(runId);
    if (this.failure) return Promise.reject(this.failure);
    const refused = this.refused.get(key);
    if (refused) return Promise.reject(refused);
    const ready = this.arrived.get(key);
    if (ready) {
      this.arrived.delete(key);
      return ready instanceof Error ? Promise.reject(ready) : Promise.resolve(ready);
    }
    return new Promise<StepComplete>((resolve, reject) => {
      const stall = setTimeout(
        () => finish(new StepFailedError(`step ${step} of ${runId}/${arm} did not complete within ${Math.round(stallTimeoutMs / 1000)} s; are the services running (see their logs)?`)),
        stallTimeoutMs,
      );
      const finish = (outcome: StepComplete | Error): void => {
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
    let outcome: StepComplete | StepFailedError = event as StepComplete;
    if (event.kind === 'step-failed') {
      const { deadLetter } = event;
      // a failure of an earlier request of the step (before a resume re-requested it): recorded, not delivered
      const stale = Date.parse(deadLetter.receivedAt) < (this.requestedAt.get(key) ?? 0) - STALE_FAILURE_SKEW_MS;
      if (this.runIds.has(event.runId) && !this.seenDeadLetters.has(event.deadLetterJobId)) {
        this.seenDeadLetters.add(event.deadLetterJobId);
        this.opts.onDeadLetter?.({ deadLetterJobId: event.deadLetterJobId, ...deadLetter, sourceJobId: deadLetter.sourceJobId ?? '' });
      }
      if (stale) {
        this.opts.log?.(`step-events: a failure of step ${event.step} of ${event.runId}/${event.arm} from before it was requested again (ignored): ${deadLetter.error}`);
        return;
      }
      outcome = new StepFailedError(`step ${event.step} of ${event.runId}/${event.arm} was refused by the pipeline: ${deadLetter.sourceQueue}: ${deadLetter.error || deadLetter.reason}`);
    }
    const waiter = this.waiters.get(key);
    if (waiter) {
      if (outcome instanceof Error) waiter.reject(outcome);
      else waiter.resolve(outcome);
      return;
    }
    // an event nobody waits for yet: kept (a resumed run may wait for it), the oldest dropped past the cap
    if (!this.runIds.has(event.runId)) this.opts.log?.(`step-events: an event of run ${event.runId}, which this controller has not requested (kept)`);
    this.arrived.set(key, outcome);
    if (this.arrived.size > MAX_UNCLAIMED_EVENTS) this.arrived.delete(this.arrived.keys().next().value as string);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.fail(new StepFailedError('the controller is shutting down'));
    await this.workers?.close();
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
