// The in-process transport of the edge runner: one FIFO per queue in memory. Like the BullMQ one it parses every
// payload with the catalog schema before adding it and keeps the first job of a job id; it never holds a payload
// by reference. InProcessPipeline runs the graph's edges on it.
import { deadLetterJobId, QUEUE_CATALOG, type ArtefactEnvelope, type DeadLetter, type PayloadOf, type QueueName } from '@rx/contracts';
import type { ConsumedJob } from './edge-runner';
import type { EnqueueResult, QueueProducer } from './queue-producer';

export class InMemoryTransport implements QueueProducer {
  private readonly waiting = new Map<QueueName, Array<{ id: string; data: unknown }>>();
  private readonly ids = new Set<string>();

  async enqueue<Q extends QueueName>(queue: Q, payload: PayloadOf<Q>, jobId: string): Promise<EnqueueResult> {
    const data: unknown = QUEUE_CATALOG[queue].schema.parse(payload);
    const key = `${queue}\u0000${jobId}`;
    if (!this.ids.has(key)) {
      this.ids.add(key);
      const list = this.waiting.get(queue) ?? [];
      list.push({ id: jobId, data });
      this.waiting.set(queue, list);
    }
    return { jobId, bytes: 0, byReference: false };
  }

  async deadLetter(entry: DeadLetter): Promise<string> {
    const jobId = deadLetterJobId(entry.sourceQueue, entry.sourceJobId ?? undefined, Date.parse(entry.receivedAt));
    await this.enqueue('dead-letters', entry, jobId);
    return jobId;
  }

  async loadArtefact(envelope: ArtefactEnvelope): Promise<unknown> {
    throw new Error(`payload ${envelope.$artefact.key}: the in-memory transport holds no payload by reference`);
  }

  /** the oldest waiting job of a queue (first delivery), removed; undefined when there is none */
  take(queue: QueueName): ConsumedJob | undefined {
    const job = this.waiting.get(queue)?.shift();
    return job && { id: job.id, data: job.data, attemptsMade: 0 };
  }
}
