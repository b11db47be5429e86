// The edge runner: what happens to every job of every edge of the pipeline graph, on any transport.
//   1. load a by-reference payload and safeParse it against the queue catalog (failure: a dead letter with zod's
//      path-named issues; never retried);
//   2. run the edge's stage function under its time limit, through Redis outages (a restart must not use up a
//      job's attempts: stages are idempotent, so running one again is safe);
//   3. enqueue what it produced on the edge's `produces` queue under the deterministic job id of the next stage;
//   4. time it by stage and arm. A stage that keeps failing is retried with the queue's back-off; its last
//      attempt's failure is dead-lettered too. Every dead letter of a step also goes to the controller as a
//      `step-failed` event on `step-events`, which its wait for the step receives at once.
// A dead-lettered job ends in DeadLetteredError: the BullMQ workers turn it into UnrecoverableError (no retry).
import {
  artefactEnvelopeSchema,
  isArtefactEnvelope,
  chainOfJobId,
  jobIdFor,
  parseJobId,
  QUEUE_CATALOG,
  stepFailedJobId,
  stepHeaderSchema,
  type DeadLetter,
  type PayloadOf,
  type QueueName,
  type StageName,
  type StepHeader,
} from '@rx/contracts';
import type { JobOutcome, RxMetrics } from '@rx/metrics';
import type { ZodIssue } from 'zod';
import { edgeOfQueue, NothingSent, type AnyPipelineEdge, type EdgeOfService, type PipelineService, type StageDeps, type StageMetrics } from './pipeline-graph';
import type { QueueProducer } from './queue-producer';
import { throughRedisOutages } from './redis-outage';
import { DeadLetteredError, UnrecoverableStageError } from './stage-errors';
import { withTimeout } from './stage-timeout';

/** The part of a delivered job the runner reads (a BullMQ Job is one). */
export interface ConsumedJob {
  id?: string;
  data: unknown;
  /** failed attempts so far (BullMQ's count: 0 during the first) */
  attemptsMade: number;
  /** the job's options; attempts = the most tries it gets (default: the queue catalog's) */
  opts?: { attempts?: number };
}

export interface JobConsumerDeps {
  queues: QueueProducer;
  metrics: Pick<RxMetrics, 'countDeadLetter' | 'observeStage' | 'countJobAttempt'>;
  /** overrides the graph's stage time limit */
  timeoutMs?: number;
  /** how long a stage waits, in all, for Redis to come back before the failure counts as an attempt (default 60 s) */
  redisOutageMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const MAX_ISSUES_IN_MESSAGE = 5;

export function formatIssues(issues: readonly ZodIssue[]): Array<{ path: string; message: string }> {
  return issues.slice(0, 100).map((i) => ({ path: i.path.length ? i.path.join('.') : '(root)', message: i.message }));
}

export function dataPreview(data: unknown): string {
  try {
    return (JSON.stringify(data) ?? String(data)).slice(0, 2000);
  } catch {
    return '<unserialisable>';
  }
}

/**
 * The (run, arm, step) a job is about: its deterministic job id (`<run>-<arm>-<step>-<stage>`) says it; a job with
 * another id, only its payload once it has passed its schema. A malformed job with no step id is never taken for
 * a step: whatever header its data claims, failing it must not fail a step that is running.
 */
export function stepOfJob(job: Pick<ConsumedJob, 'id'>, payload?: unknown): StepHeader | null {
  const fromId = job.id ? parseJobId(job.id) : null;
  if (fromId) return fromId;
  const header = stepHeaderSchema.safeParse(payload);
  return header.success ? header.data : null;
}

/**
 * Writes a dead letter and, for a job of a step on any queue but `step-events` itself, the step-failed event the
 * controller awaits. Resolves with the dead letter's job id.
 */
export async function deadLetterStep(queues: QueueProducer, letter: DeadLetter, step: StepHeader | null, now: () => number = Date.now): Promise<string> {
  const deadLetterJobId = await queues.deadLetter(letter);
  const stage = edgeOfQueue(letter.sourceQueue)?.stage;
  if (step && stage && letter.sourceQueue !== 'step-events') {
    const { sourceQueue, sourceJobId, reason, error, receivedAt } = letter;
    await queues.enqueue(
      'step-events',
      { ...step, kind: 'step-failed', stage, deadLetterJobId, deadLetter: { sourceQueue, sourceJobId, reason, error: error.slice(0, 8000), receivedAt } },
      stepFailedJobId(step, stage, now()),
    );
  }
  return deadLetterJobId;
}

/** Steps 1, 2 and 4 above around `handle`, for one job of `queue` (runEdge's part before the enqueue). */
async function consumeJob<Q extends QueueName, R>(
  queue: Q,
  job: ConsumedJob,
  deps: JobConsumerDeps,
  handle: (payload: PayloadOf<Q>) => Promise<R>,
): Promise<R> {
  const edge = edgeOfQueue(queue);
  if (!edge) throw new Error(`queue '${queue}' has no stage in the pipeline graph`);
  const now = deps.now ?? Date.now;
  let payload: PayloadOf<Q> | undefined;

  const deadLetter = async (reason: DeadLetter['reason'], error: string, issues: DeadLetter['issues']): Promise<never> => {
    const letter: DeadLetter = {
      sourceQueue: queue,
      sourceJobId: job.id ?? null,
      reason,
      error: error.slice(0, 8000),
      issues,
      dataPreview: dataPreview(job.data),
      receivedAt: new Date(now()).toISOString(),
    };
    await deadLetterStep(deps.queues, letter, stepOfJob(job, payload), now);
    deps.metrics.countDeadLetter(queue);
    throw new DeadLetteredError(error);
  };

  let data = job.data;
  if (isArtefactEnvelope(data)) {
    const envelope = artefactEnvelopeSchema.safeParse(data);
    if (!envelope.success) return deadLetter('invalid-payload', `invalid '${queue}' payload reference (job ${job.id})`, formatIssues(envelope.error.issues));
    try {
      data = await deps.queues.loadArtefact(envelope.data);
    } catch (err) {
      return deadLetter('invalid-payload', `'${queue}' job ${job.id}: ${(err as Error).message}`, []);
    }
  }

  const parsed = QUEUE_CATALOG[queue].schema.safeParse(data);
  if (!parsed.success) {
    const issues = formatIssues(parsed.error.issues);
    const shown = issues.slice(0, MAX_ISSUES_IN_MESSAGE).map((i) => `${i.path}: ${i.message}`);
    const more = issues.length > MAX_ISSUES_IN_MESSAGE ? `; and ${issues.length - MAX_ISSUES_IN_MESSAGE} more` : '';
    return deadLetter('invalid-payload', `invalid '${queue}' payload (job ${job.id}): ${shown.join('; ')}${more}`, issues);
  }
  payload = parsed.data as PayloadOf<Q>;
  const started = now();
  try {
    const result = await throughRedisOutages(() => withTimeout(handle(payload as PayloadOf<Q>), deps.timeoutMs ?? edge.timeoutMs, `${edge.stage} of job ${job.id}`), {
      budgetMs: deps.redisOutageMs,
      sleep: deps.sleep,
    });
    const arm = (payload as { arm?: string }).arm;
    if (arm) deps.metrics.observeStage(edge.stage, arm, (now() - started) / 1000);
    return result;
  } catch (err) {
    if (err instanceof UnrecoverableStageError) return deadLetter('unrecoverable', err.message, []);
    const attempts = job.opts?.attempts ?? QUEUE_CATALOG[queue].jobOptions.attempts;
    if (job.attemptsMade + 1 >= attempts) {
      const message = err instanceof Error ? err.message : String(err);
      return deadLetter('unrecoverable', `${edge.stage} of job ${job.id} gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${message}`, []);
    }
    throw err;
  }
}

export interface EdgeRunnerDeps<S extends PipelineService> extends JobConsumerDeps {
  deps: StageDeps[S];
  metrics: JobConsumerDeps['metrics'] & StageMetrics;
}

/** what a job of an edge leaves as its result: the id of the job it enqueued, or why nothing was sent on */
export type EdgeResult = { outcome: 'sent'; next: string } | { outcome: NothingSent['outcome']; reason: string };

/** the job id of a payload sent on `queue`: `<run>-<arm>-<step>-<the stage consuming queue>[<chain>]` */
export function nextJobId(queue: QueueName, header: StepHeader, chain = ''): string {
  const stage: StageName | undefined = edgeOfQueue(queue)?.stage;
  if (!stage) throw new Error(`queue '${queue}' has no consumer in the pipeline graph`);
  return jobIdFor(header, stage, chain);
}

/** One job of one edge, steps 1-4; every attempt counted by the queue and what it ended in. */
export async function runEdge<S extends PipelineService>(edge: EdgeOfService<S>, job: ConsumedJob, runner: EdgeRunnerDeps<S>): Promise<EdgeResult> {
  const e = edge as AnyPipelineEdge;
  let result: EdgeResult;
  try {
    result = await consumeJob(e.consumes, job, runner, async (payload): Promise<EdgeResult> => {
      const output = await e.run(payload, { deps: runner.deps, metrics: runner.metrics, job: { id: job.id, attemptsMade: job.attemptsMade } });
      if (output instanceof NothingSent) return { outcome: output.outcome, reason: output.reason };
      const header = output as StepHeader;
      // a step requested again after its earlier chain died: every job of the new chain carries its suffix
      const sent = await runner.queues.enqueue(e.produces, output, nextJobId(e.produces, header, chainOfJobId(job.id)));
      return { outcome: 'sent', next: sent.jobId };
    });
  } catch (err) {
    const outcome: JobOutcome = err instanceof DeadLetteredError ? 'dead_lettered' : 'failed';
    runner.metrics.countJobAttempt(e.consumes, outcome);
    throw err;
  }
  runner.metrics.countJobAttempt(e.consumes, result.outcome);
  return result;
}
