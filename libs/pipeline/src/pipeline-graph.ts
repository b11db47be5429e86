// The pipeline of one RL step, spelled out once. Follow a batch down this list:
//
//   controller --step-requests--> trainer.prepare --sample-requests--> sampler.sample --rollouts-->
//   grader.grade --graded-rollouts--> advantage.advantage --train-steps--> trainer.train --step-events--> controller
//
// Each edge names the service that consumes the queue, the stage function it runs (./stages), the queue it feeds,
// and how long one attempt of a job may take (consumeJob enforces it; a job that keeps failing is retried with
// the queue's back-off and then dead-lettered, so a step that cannot complete stops with its reason).
// A worker holds a job under a lock it renews every half lock while alive (RX_LOCK_MS); a dead worker's job
// is handed to another after the lock expires. A live but slow worker mistaken for dead is harmless: every
// effect is idempotent (job ids, the window written once, the trainer's fenced ledger claim).
import { QUEUE_CATALOG, type QueueName, type StageName } from '@rx/contracts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

export const PIPELINE_GRAPH = [
  { stage: 'prepare', service: 'trainer', consumes: 'step-requests', produces: 'sample-requests', timeoutMs: 5 * MINUTE },
  { stage: 'sample', service: 'sampler', consumes: 'sample-requests', produces: 'rollouts', timeoutMs: 30 * MINUTE },
  { stage: 'grade', service: 'grader', consumes: 'rollouts', produces: 'graded-rollouts', timeoutMs: 5 * MINUTE },
  { stage: 'advantage', service: 'advantage', consumes: 'graded-rollouts', produces: 'train-steps', timeoutMs: 2 * MINUTE },
  { stage: 'train', service: 'trainer', consumes: 'train-steps', produces: 'step-events', timeoutMs: 30 * MINUTE },
  // the controller (apps/controller) closes the loop: on step N complete it requests step N + 1
  { stage: 'complete', service: 'controller', consumes: 'step-events', produces: 'step-requests', timeoutMs: 5 * MINUTE },
] as const satisfies ReadonlyArray<{
  stage: StageName;
  service: string;
  consumes: QueueName;
  produces: QueueName;
  timeoutMs: number;
}>;

/** Queues with no consumer by design: every service writes to them, humans (bull-board) read them. */
export const SINK_QUEUES = ['dead-letters'] as const satisfies readonly QueueName[];

export type PipelineEdge = (typeof PIPELINE_GRAPH)[number];
export type PipelineService = PipelineEdge['service'];
export type SinkQueue = (typeof SINK_QUEUES)[number];
export type QueuesConsumedBy<S extends PipelineService> = Extract<PipelineEdge, { service: S }>['consumes'];

/** One processor per queue a service consumes: a missing queue does not compile. */
export type ProcessorMap<S extends PipelineService, P = unknown> = { readonly [Q in QueuesConsumedBy<S>]: P };

// Compile-time check: every queue but the sinks has a consumer in the graph.
type Unconsumed = Exclude<QueueName, PipelineEdge['consumes'] | SinkQueue>;
export const EVERY_QUEUE_HAS_A_CONSUMER: [Unconsumed] extends [never] ? true : Unconsumed = true;

export function edgeOfStage(stage: StageName): PipelineEdge {
  const edge = PIPELINE_GRAPH.find((e) => e.stage === stage);
  if (!edge) throw new Error(`no pipeline edge for stage '${stage}'`);
  return edge;
}

export function edgeOfQueue(queue: QueueName): PipelineEdge | undefined {
  return PIPELINE_GRAPH.find((e) => e.consumes === queue);
}

export function queuesConsumedBy<S extends PipelineService>(service: S): Array<QueuesConsumedBy<S>> {
  return PIPELINE_GRAPH.filter((e) => e.service === service).map((e) => e.consumes as QueuesConsumedBy<S>);
}

/** The queues a service reads or writes (its /metrics reports their depth), dead letters included. */
export function queuesTouchedBy(service: PipelineService): QueueName[] {
  const touched = new Set<QueueName>(['dead-letters']);
  for (const e of PIPELINE_GRAPH) {
    if (e.service === service) {
      touched.add(e.consumes);
      touched.add(e.produces);
    }
  }
  return [...touched];
}

/**
 * The start-up check: a service's processors cover exactly the queues the graph gives it, one each.
 * `registered` lists, per processor class, the queue its @Processor names.
 */
export function assertProcessorCoverage(service: PipelineService, registered: readonly QueueName[]): void {
  const expected = new Set<QueueName>(queuesConsumedBy(service));
  const seen = new Map<QueueName, number>();
  for (const q of registered) seen.set(q, (seen.get(q) ?? 0) + 1);
  const problems: string[] = [];
  for (const q of expected) {
    const n = seen.get(q) ?? 0;
    if (n === 0) problems.push(`queue '${q}' has no consumer`);
    if (n > 1) problems.push(`queue '${q}' has ${n} consumers`);
  }
  for (const q of seen.keys()) {
    if (!expected.has(q)) {
      const owner = edgeOfQueue(q)?.service;
      problems.push(owner ? `queue '${q}' belongs to service '${owner}'` : `queue '${q}' is not consumed by any service`);
    }
  }
  if (problems.length > 0) throw new Error(`${service}: refusing to start: ${problems.join('; ')}`);
}

/** a job stalled (its worker died) this many times is failed, then dead-lettered */
export const MAX_STALLED_COUNT = 3;

/** BullMQ worker options of a stage's @Processor: started by bootstrapService once health is up (which sets the lock from RX_LOCK_MS). */
export function workerOptionsFor(stage: StageName): { autorun: false; lockDuration: number; stalledInterval: number; maxStalledCount: number; concurrency: number } {
  edgeOfStage(stage);
  return { autorun: false, lockDuration: 30_000, stalledInterval: 15_000, maxStalledCount: MAX_STALLED_COUNT, concurrency: 2 };
}

// total back-off of a job retried until its last attempt: sum_{n=1}^{attempts-1} delay * 2^(n-1)
function backoffTotalMs(queue: QueueName): number {
  const { attempts, backoff } = QUEUE_CATALOG[queue].jobOptions;
  let total = 0;
  for (let n = 1; n < attempts; n++) total += backoff.delay * 2 ** (n - 1);
  return total;
}

/**
 * The longest one step can spend in the pipeline before the last of its stages gives up and dead-letters it:
 * every stage from prepare to train using all its attempts (each up to its time limit, `timeoutMs` overriding the
 * graph's), plus the back-off between them, plus `slackMs` per stage (redelivery after a worker died).
 * deadline = sum over stages of attempts * timeout + back-off + slack
 */
export function stepDeadlineMs(opts: { timeoutMs?: Partial<Record<StageName, number>>; slackMs?: number } = {}): number {
  return PIPELINE_GRAPH.filter((e) => e.service !== 'controller').reduce((sum, e) => {
    const attempts = QUEUE_CATALOG[e.consumes].jobOptions.attempts;
    return sum + attempts * (opts.timeoutMs?.[e.stage] ?? e.timeoutMs) + backoffTotalMs(e.consumes) + (opts.slackMs ?? 0);
  }, 0);
}
