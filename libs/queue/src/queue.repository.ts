// The queue adapter: BullMQ queues of the catalog behind one object. Producers parse before adding; payloads over
// the inline cap are stored under a Redis key and the job carries a reference (consumers load it back).
import { createHash } from 'node:crypto';
import { Queue } from 'bullmq';
import {
  artefactEnvelopeSchema,
  deadLetterJobId,
  INLINE_PAYLOAD_LIMIT_BYTES,
  QUEUE_CATALOG,
  type ArtefactEnvelope,
  type DeadLetter,
  type PayloadOf,
  type QueueName,
} from '@rx/contracts';
import type { QueueSnapshot } from '@rx/metrics';
import { jobNameOf } from '@rx/pipeline';
import type { EnqueueResult, QueueProducer } from '@rx/pipeline';
import type { RedisConnectionFactory } from './redis-connection.factory';

export interface QueueRepositoryOptions {
  connections: RedisConnectionFactory;
  /** BullMQ key prefix (one per deployment; one per test file) */
  prefix: string;
  inlineLimitBytes?: number;
  /** how long a by-reference payload is kept (default a day) */
  artefactTtlSeconds?: number;
  now?: () => number;
}


export class ArtefactError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArtefactError';
  }
}

export class QueueRepository implements QueueProducer {
  private readonly queues = new Map<QueueName, Queue>();
  private closed = false;

  constructor(private readonly opts: QueueRepositoryOptions) {}

  get prefix(): string {
    return this.opts.prefix;
  }

  /** the BullMQ Queue of a catalog queue (created on first use, on the shared producer connection) */
  queue(name: QueueName): Queue {
    if (this.closed) throw new Error('the queue repository is closed');
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, {
        connection: this.opts.connections.producer(),
        prefix: this.opts.prefix,
        defaultJobOptions: { ...QUEUE_CATALOG[name].jobOptions },
      });
      q.on('error', () => undefined);
      this.queues.set(name, q);
    }
    return q;
  }

  async enqueue<Q extends QueueName>(name: Q, payload: PayloadOf<Q>, jobId: string): Promise<EnqueueResult> {
    const spec = QUEUE_CATALOG[name];
    const parsed: unknown = spec.schema.parse(payload);
    const json = JSON.stringify(parsed);
    const bytes = Buffer.byteLength(json, 'utf8');
    let data: unknown = parsed;
    const byReference = bytes > (this.opts.inlineLimitBytes ?? INLINE_PAYLOAD_LIMIT_BYTES);
    if (byReference) {
      const sha256 = createHash('sha256').update(json).digest('hex');
      const key = `${this.opts.prefix}:artefacts:${name}:${jobId}:${sha256.slice(0, 16)}`;
      await this.opts.connections.producer().set(key, json, 'EX', this.opts.artefactTtlSeconds ?? 24 * 3600);
      const header = parsed as { runId?: string; arm?: string; step?: number };
      const envelope: ArtefactEnvelope = { $artefact: { key, sha256, bytes }, runId: header.runId, arm: header.arm, step: header.step };
      data = artefactEnvelopeSchema.parse(envelope);
    }
    await this.queue(name).add(jobNameOf(name), data, { ...spec.jobOptions, jobId });
    return { jobId, bytes, byReference };
  }

  async deadLetter(entry: DeadLetter): Promise<string> {
    const now = this.opts.now ?? Date.now;
    return (await this.enqueue('dead-letters', entry, deadLetterJobId(entry.sourceQueue, entry.sourceJobId ?? undefined, now()))).jobId;
  }

  async loadArtefact(envelope: ArtefactEnvelope): Promise<unknown> {
    const { key, sha256 } = envelope.$artefact;
    const json = await this.opts.connections.producer().get(key);
    if (json === null) throw new ArtefactError(`payload ${key} is gone (expired or never written)`);
    const actual = createHash('sha256').update(json).digest('hex');
    if (actual !== sha256) throw new ArtefactError(`payload ${key} does not match its sha256 (${actual.slice(0, 12)} != ${sha256.slice(0, 12)})`);
    return JSON.parse(json) as unknown;
  }

  /** depth (waiting + prioritized + delayed + active) and oldest-waiting age of each queue */
  async snapshot(names: readonly QueueName[]): Promise<QueueSnapshot[]> {
    const now = this.opts.now ?? Date.now;
    return Promise.all(
      names.map(async (name) => {
        const q = this.queue(name);
        const counts = await q.getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'waiting-children');
        const depth = Object.values(counts).reduce((a, b) => a + b, 0);
        const [oldest] = await q.getJobs(['waiting'], 0, 0, true);
        const age = oldest ? Math.max(0, (now() - oldest.timestamp) / 1000) : 0;
        return { queue: name, depth, oldestWaitingAgeSeconds: age };
      }),
    );
  }

  /** closes the queues (not the connection: the factory owns it) */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }
}
