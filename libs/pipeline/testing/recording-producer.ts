// TEST DOUBLE. A QueueProducer that records what it was given (for handler and consumer unit tests): each
// enqueue is parsed with the catalog schema, as the real repository does.
import { deadLetterJobId, QUEUE_CATALOG, type ArtefactEnvelope, type DeadLetter, type PayloadOf, type QueueName } from '@rx/contracts';
import type { EnqueueResult, QueueProducer } from '@rx/pipeline';

export interface RecordedJob {
  queue: QueueName;
  jobId: string;
  payload: unknown;
}

export class RecordingProducer implements QueueProducer {
  readonly jobs: RecordedJob[] = [];
  readonly deadLetters: DeadLetter[] = [];
  readonly artefacts = new Map<string, unknown>();

  async enqueue<Q extends QueueName>(queue: Q, payload: PayloadOf<Q>, jobId: string): Promise<EnqueueResult> {
    const parsed: unknown = QUEUE_CATALOG[queue].schema.parse(payload);
    this.jobs.push({ queue, jobId, payload: parsed });
    return { jobId, bytes: JSON.stringify(parsed).length, byReference: false };
  }

  async deadLetter(entry: DeadLetter): Promise<string> {
    this.deadLetters.push(QUEUE_CATALOG['dead-letters'].schema.parse(entry));
    return deadLetterJobId(entry.sourceQueue, entry.sourceJobId ?? undefined, Date.parse(entry.receivedAt));
  }

  async loadArtefact(envelope: ArtefactEnvelope): Promise<unknown> {
    if (!this.artefacts.has(envelope.$artefact.key)) throw new Error(`payload ${envelope.$artefact.key} is gone`);
    return this.artefacts.get(envelope.$artefact.key);
  }

  on<Q extends QueueName>(queue: Q): Array<{ jobId: string; payload: PayloadOf<Q> }> {
    return this.jobs.filter((j) => j.queue === queue).map((j) => ({ jobId: j.jobId, payload: j.payload as PayloadOf<Q> }));
  }
}
