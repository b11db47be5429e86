// The pipeline of one RL step, spelled out once. Follow a batch down this list:
//
//   controller --step-requests--> trainer.prepare --sample-requests--> sampler.sample --rollouts-->
//   grader.grade --graded-rollouts--> advantage.advantage --train-steps--> trainer.train --step-events--> controller
//
// Each edge names the service that consumes a queue, the queue it feeds, how long one attempt may take, and its
// stage function (`run`: the consumed payload in, the produced payload out, or NothingSent saying why not). The
// edge runner (./edge-runner.ts) does the rest for every edge alike: parse, run, enqueue the output under its
// deterministic job id, time it, dead-letter what cannot be done and tell the controller (a `step-failed` event).
// A service is its edges: libs/queue's edge workers run them on BullMQ, InProcessPipeline on an in-memory transport.
// Adding a stage: one entry here, one schema in the queue catalog, one stage function.
import type { PolicyBackend } from '@rx/backend';
import { QUEUE_CATALOG, type PayloadOf, type QueueName, type StageName, type StepEvent } from '@rx/contracts';
import type { RxMetrics } from '@rx/metrics';
import type { RendererResolver } from './renderer-resolver';
import type { RolloutWindowStore } from './rollout-window.store';
import { computeAdvantages } from './stages/advantage.stage';
import { gradeBatch, type GradeFn } from './stages/grade.stage';
import { prepareStep } from './stages/prepare-step.stage';
import { sampleBatch } from './stages/sample.stage';
import { trainAndAnnounce, type TrainEdgeDeps } from './stages/train.stage';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

/** What each service's stage functions need, built once when the service starts. */
export interface StageDeps {
  trainer: TrainEdgeDeps;
  sampler: { backend: PolicyBackend; renderers: RendererResolver; /** backend requests in flight at most (RX_CONCURRENCY) */ concurrency: number };
  grader: { renderers: RendererResolver; /** libs/grading gradeCompletion */ grade: GradeFn };
  advantage: { windows: RolloutWindowStore };
  controller: { deliver(event: StepEvent): void };
}

export type PipelineService = keyof StageDeps;

/**
 * The metrics a stage function reports beside the runner's own (stage time, attempts, dead letters). The step
 * gauges are not among them: the controller sets them once per step, from the record it writes to steps.jsonl.
 */
export type StageMetrics = Pick<RxMetrics, 'countRollouts' | 'stepCommitted'>;

/** for a runner that keeps no metrics (the in-process pipeline) or an edge whose stage counts nothing (the controller's) */
export const NO_STAGE_METRICS: StageMetrics = { countRollouts: () => undefined, stepCommitted: () => undefined };

export interface StageContext<S extends PipelineService> {
  deps: StageDeps[S];
  metrics: StageMetrics;
  /** the delivery being run (a redelivery has the same id and a higher attemptsMade) */
  job: { id?: string; attemptsMade: number };
}

/**
 * A stage's answer when it sends nothing on, and why: `skipped` (the work was done already, e.g. a step committed
 * before) or `delivered` (the edge ends the chain by design: the controller took the event). The edge runner
 * returns it as the job's result and counts the attempt under its outcome.
 */
export class NothingSent {
  private constructor(
    readonly outcome: 'skipped' | 'delivered',
    readonly reason: string,
  ) {}

  static skipped(reason: string): NothingSent {
    return new NothingSent('skipped', reason);
  }

  static delivered(reason: string): NothingSent {
    return new NothingSent('delivered', reason);
  }
}

export interface PipelineEdgeOf<St extends StageName, S extends PipelineService, C extends QueueName, P extends QueueName> {
  readonly stage: St;
  readonly service: S;
  readonly consumes: C;
  readonly produces: P;
  /** one attempt's time limit (the runner enforces it; RX_STAGE_TIMEOUT_MS overrides it) */
  readonly timeoutMs: number;
  /** the stage: what to send on `produces` (parsed there by the catalog), or NothingSent with the reason */
  run(payload: PayloadOf<C>, ctx: StageContext<S>): Promise<PayloadOf<P> | NothingSent>;
}

function edge<const St extends StageName, const S extends PipelineService, const C extends QueueName, const P extends QueueName>(
  e: PipelineEdgeOf<St, S, C, P>,
): PipelineEdgeOf<St, S, C, P> {
  return e;
}

export const PIPELINE_GRAPH = [
  edge({
    stage: 'prepare',
    service: 'trainer',
    consumes: 'step-requests',
    produces: 'sample-requests',
    timeoutMs: 5 * MINUTE,
    // save the arm's weights for sampling (a step already committed or in training: nothing to sample)
    async run(request, { deps }) {
      const prepared = await prepareStep(request, deps);
      return prepared.outcome === 'ready' ? prepared.sample : NothingSent.skipped(`step ${request.step} is committed or in training (committed: ${prepared.committed})`);
    },
  }),
  edge({
    stage: 'sample',
    service: 'sampler',
    consumes: 'sample-requests',
    produces: 'rollouts',
    timeoutMs: 30 * MINUTE,
    // every prompt's completions from the saved weights, all requests in flight up to RX_CONCURRENCY
    async run(request, { deps, metrics }) {
      const renderer = await deps.renderers(request.plan.baseModel);
      const batch = await sampleBatch(request, { backend: deps.backend, renderer, concurrency: deps.concurrency });
      metrics.countRollouts('sample', batch.arm, batch.rollouts.length);
      return batch;
    },
  }),
  edge({
    stage: 'grade',
    service: 'grader',
    consumes: 'rollouts',
    produces: 'graded-rollouts',
    timeoutMs: 5 * MINUTE,
    // the cookbook reward of every completion
    async run(batch, { deps, metrics }) {
      const renderer = await deps.renderers(batch.plan.baseModel);
      const graded = gradeBatch(batch, { renderer, grade: deps.grade });
      metrics.countRollouts('grade', graded.arm, graded.rollouts.length);
      return graded;
    },
  }),
  edge({
    stage: 'advantage',
    service: 'advantage',
    consumes: 'graded-rollouts',
    produces: 'train-steps',
    timeoutMs: 2 * MINUTE,
    // the arm's estimator against the rollout window (advanced once per step), and the step's gate metrics (in the payload)
    async run(batch, { deps, metrics }) {
      const step = await computeAdvantages(batch, deps);
      metrics.countRollouts('advantage', step.arm, step.rollouts.length);
      return step;
    },
  }),
  edge({
    stage: 'train',
    service: 'trainer',
    consumes: 'train-steps',
    produces: 'step-events',
    timeoutMs: 30 * MINUTE,
    // the step applied exactly once on the arm's lineage (the ledger, which keeps its record), and announced; a
    // replay of a committed step announces it again (same job id), so a crash between commit and announce loses
    // nothing. The controller writes the run's one step log (<arm>/steps.jsonl) from the announced records.
    async run(step, { deps, metrics, job }) {
      const event = await trainAndAnnounce(step, deps, job);
      if (!event) return NothingSent.skipped(`step ${step.step} was committed without a kept record: nothing to announce`);
      if (event.outcome === 'applied') {
        metrics.stepCommitted(event.arm);
        metrics.countRollouts('train', event.arm, event.record.rollouts.length);
      }
      return event;
    },
  }),
  edge({
    stage: 'complete',
    service: 'controller',
    consumes: 'step-events',
    produces: 'step-requests',
    timeoutMs: 5 * MINUTE,
    // the controller (apps/controller's StepBus) hands the event to the wait for its step; it requests step N + 1
    // itself when the phase wants one, so nothing is sent on from here
    async run(event, { deps }) {
      deps.deliver(event);
      return NothingSent.delivered(`${event.kind} of step ${event.step} handed to the controller`);
    },
  }),
] as const;

/** Queues with no consumer by design: every service writes to them, humans (bull-board) read them. */
export const SINK_QUEUES = ['dead-letters'] as const satisfies readonly QueueName[];

export type PipelineEdge = (typeof PIPELINE_GRAPH)[number];
export type SinkQueue = (typeof SINK_QUEUES)[number];
export type EdgeOfService<S extends PipelineService> = Extract<PipelineEdge, { service: S }>;
export type QueuesConsumedBy<S extends PipelineService> = EdgeOfService<S>['consumes'];
/** any edge, as the runner sees it: run takes the payload of the edge's own queue */
export type AnyPipelineEdge = PipelineEdgeOf<StageName, PipelineService, QueueName, QueueName>;

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

/** the edges a service runs, in graph order */
export function edgesOf<S extends PipelineService>(service: S): Array<EdgeOfService<S>> {
  return PIPELINE_GRAPH.filter((e): e is EdgeOfService<S> => e.service === service);
}

export function queuesConsumedBy<S extends PipelineService>(service: S): Array<QueuesConsumedBy<S>> {
  return edgesOf(service).map((e) => e.consumes as QueuesConsumedBy<S>);
}

/** the BullMQ job name of a job on `queue`: the stage that consumes it (dead letters: 'dead-letter') */
export function jobNameOf(queue: QueueName): StageName | 'dead-letter' {
  return edgeOfQueue(queue)?.stage ?? 'dead-letter';
}

/** The queues a service reads or writes (its /metrics reports their depth): dead letters and step failures included. */
export function queuesTouchedBy(service: PipelineService): QueueName[] {
  const touched = new Set<QueueName>(['dead-letters', 'step-events']);
  for (const e of edgesOf(service)) {
    touched.add(e.consumes);
    touched.add(e.produces);
  }
  return [...touched];
}

/** a job stalled (its worker died) this many times is failed, then dead-lettered */
export const MAX_STALLED_COUNT = 3;

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
