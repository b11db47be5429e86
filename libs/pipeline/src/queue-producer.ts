// What the edge runner needs of a transport: enqueue a payload under its job id, write a dead letter, load a
// by-reference payload back. libs/queue's QueueRepository is the BullMQ one, InMemoryTransport the in-process one.
import type { ArtefactEnvelope, DeadLetter, PayloadOf, QueueName } from '@rx/contracts';

export interface EnqueueResult {
  jobId: string;
  bytes: number;
  byReference: boolean;
}

export interface QueueProducer {
  /** parses the payload with the catalog schema, then adds it (a job id already held: BullMQ keeps the first) */
  enqueue<Q extends QueueName>(queue: Q, payload: PayloadOf<Q>, jobId: string): Promise<EnqueueResult>;
  /** adds the dead letter on `dead-letters`; resolves with its job id */
  deadLetter(entry: DeadLetter): Promise<string>;
  /** the payload a by-reference job points at (sha256 checked) */
  loadArtefact(envelope: ArtefactEnvelope): Promise<unknown>;
}
