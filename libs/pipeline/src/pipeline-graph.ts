// The pipeline of one RL step, spelled out once. Follow a batch down this list:
//
//   controller --step-requests--> trainer.prepare --sample-requests--> sampler.sample --rollouts-->
//   grader.grade --graded-rollouts--> advantage.advantage --train-steps--> trainer.train --step-events--> controller
//
// Each edge names the service that consumes the queue, the stage function it runs (./stages), the queue it feeds,
// how long one job may take, and the worker lock (longer than the stage, so a busy worker is never taken for dead).
import type { QueueName, StageName } from '@rx/contracts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

export const PIPELINE_GRAPH = [
  { stage: 'prepare', service: 'trainer', consumes: 'step-requests', produces: 'sample-requests', timeoutMs: 5 * MINUTE, lockMs: 6 * MINUTE },
  { stage: 'sample', service: 'sampler', consumes: 'sample-requests', produces: 'rollouts', timeoutMs: 30 * MINUTE, lockMs: 31 * MINUTE },
  { stage: 'grade', service: 'grader', consumes: 'rollouts', produces: 'graded-rollouts', timeoutMs: 5 * MINUTE, lockMs: 6 * MINUTE },
  { stage: 'advantage', service: 'advantage', consumes: 'graded-rollouts', produces: 'train-steps', timeoutMs: 2 * MINUTE, lockMs: 3 * MINUTE },
  { stage: 'train', service: 'trainer', consumes: 'train-steps', produces: 'step-events', timeoutMs: 30 * MINUTE, lockMs: 31 * MINUTE },
  // the controller (apps/controller) closes the loop: on step N complete it requests step N + 1
  { stage: 'complete', service: 'controller', consumes: 'step-events', produces: 'step-requests', timeoutMs: 5 * MINUTE, lockMs: 6 * MINUTE },
] as const satisfies ReadonlyArray<{
  stage: StageName;
  service: string;
  consumes: QueueName;
  produces: QueueName;
  timeoutMs: number;
  lockMs: number;
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

/** BullMQ worker options of a stage's @Processor: started by bootstrapService once health is up, locked longer than the stage runs. */
export function workerOptionsFor(stage: StageName): { autorun: false; lockDuration: number; concurrency: number } {
  return { autorun: false, lockDuration: edgeOfStage(stage).lockMs, concurrency: 2 };
}
