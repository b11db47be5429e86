// What every processor does with a job, before and after its stage function: load a by-reference payload,
// safeParse it against the catalog (failure: dead letter with zod's path-named issues, a counter up, and
// UnrecoverableError so BullMQ never retries it), run the stage under its time limit, time it. A stage that
// keeps failing is retried with the queue's back-off; its last attempt's failure is dead-lettered too, so the
// controller sees why the step stopped instead of waiting for it. A stage that failed because Redis was away (a
// restart) is run again once it answers, within the same attempt and for up to `redisOutageMs`: stages are
// idempotent (a redelivery runs them again anyway), and an outage must not use up a job's attempts.
import { UnrecoverableError } from 'bullmq';
import { artefactEnvelopeSchema, isArtefactEnvelope, QUEUE_CATALOG, type DeadLetter, type PayloadOf, type QueueName } from '@rx/contracts';
import type { RxMetrics } from '@rx/metrics';
import type { ZodIssue } from 'zod';
import { edgeOfQueue } from './pipeline-graph';
import type { QueueProducer } from './queue.repository';
import { throughRedisOutages } from './redis-outage';
import { UnrecoverableStageError } from './stage-errors';
import { withTimeout } from './stage-timeout';

/** The part of a BullMQ Job a consumer reads. */
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
  metrics: Pick<RxMetrics, 'countDeadLetter' | 'observeStage'>;
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

function preview(data: unknown): string {
  try {
    return (JSON.stringify(data) ?? String(data)).slice(0, 2000);
  } catch {
    return '<unserialisable>';
  }
}

export async function consumeJob<Q extends QueueName, R>(
  queue: Q,
  job: ConsumedJob,
  deps: JobConsumerDeps,
  handle: (payload: PayloadOf<Q>) => Promise<R>,
): Promise<R> {
  const edge = edgeOfQueue(queue);
  if (!edge) throw new Error(`queue '${queue}' has no stage in the pipeline graph`);
  const now = deps.now ?? Date.now;

  const deadLetter = async (reason: DeadLetter['reason'], error: string, issues: DeadLetter['issues']): Promise<never> => {
    await deps.queues.deadLetter({
      sourceQueue: queue,
      sourceJobId: job.id ?? null,
      reason,
      error: error.slice(0, 8000),
      issues,
      dataPreview: preview(job.data),
      receivedAt: new Date(now()).toISOString(),
    });
    deps.metrics.countDeadLetter(queue);
    throw new UnrecoverableError(error);
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
  const payload = parsed.data as PayloadOf<Q>;
  const started = now();
  try {
    const result = await throughRedisOutages(() => withTimeout(handle(payload), deps.timeoutMs ?? edge.timeoutMs, `${edge.stage} of job ${job.id}`), {
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
