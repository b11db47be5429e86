// A service's edges on BullMQ: one plain Worker per edge the graph gives the service, each job run by the edge
// runner. The lock and stall settings come from the service's config (RX_LOCK_MS, RX_STALLED_INTERVAL_MS): a
// live worker renews its job's lock every half lock; a dead worker's job is handed to another once the lock has
// expired, and a job that stalled MAX_STALLED_COUNT times fails. A job that failed for good where the runner could
// not dead-letter it (the stall limit: the runner never ran) is dead-lettered here, and its step reported failed.
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { deadLetterJobId, type QueueName, type StageName } from '@rx/contracts';
import type { RxMetrics } from '@rx/metrics';
import type { JobConsumerDeps } from '@rx/pipeline';
import { dataPreview, deadLetterStep, runEdge, stepOfJob, type EdgeResult, edgesOf, MAX_STALLED_COUNT, type PipelineService, type StageDeps, type StageMetrics, DeadLetteredError } from '@rx/pipeline';
import type { QueueRepository } from './queue.repository';
import type { RedisConnectionFactory } from './redis-connection.factory';

export interface EdgeWorkersOptions<S extends PipelineService> {
  service: S;
  deps: StageDeps[S];
  connections: RedisConnectionFactory;
  queues: QueueRepository;
  metrics: JobConsumerDeps['metrics'] & StageMetrics;
  /** jobs of one edge run at once in this process (RX_JOB_CONCURRENCY) */
  concurrency: number;
  lockMs: number;
  stalledIntervalMs: number;
  /** per-stage time limits overriding the graph's */
  stageTimeoutMs?: Partial<Record<StageName, number>>;
  /** default true; false builds the workers stopped (run() starts them) */
  autorun?: boolean;
  log(event: string, fields?: Record<string, unknown>): void;
}

/** The part of a failed BullMQ Job the dead-letter backstop reads. */
export interface FailedJobLike {
  id?: string;
  data: unknown;
  attemptsMade: number;
  opts: { attempts?: number };
}

/**
 * The backstop of the runner's dead letters: a job that failed for good (its last attempt, an UnrecoverableError,
 * or BullMQ's stall limit, where the runner never ran) gets its dead letter and step-failed event unless it has a
 * dead letter already. True when written.
 */
export async function deadLetterFinalFailure(
  queue: QueueName,
  job: FailedJobLike,
  err: Error,
  repo: Pick<QueueRepository, 'queue' | 'deadLetter' | 'enqueue' | 'loadArtefact'>,
  metrics: Pick<RxMetrics, 'countDeadLetter'>,
  now: () => number = Date.now,
): Promise<boolean> {
  const final = err.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
  if (!final) return false;
  if (await repo.queue('dead-letters').getJob(deadLetterJobId(queue, job.id, now()))) return false;
  const letter = {
    sourceQueue: queue,
    sourceJobId: job.id ?? null,
    reason: 'unrecoverable' as const,
    error: `${queue} job ${job.id} failed for good after ${job.attemptsMade} attempt${job.attemptsMade === 1 ? '' : 's'}: ${err.message}`.slice(0, 8000),
    issues: [],
    dataPreview: dataPreview(job.data),
    receivedAt: new Date(now()).toISOString(),
  };
  await deadLetterStep(repo, letter, stepOfJob(job), now);
  metrics.countDeadLetter(queue);
  return true;
}

export interface EdgeWorkers {
  readonly workers: ReadonlyArray<Worker>;
  /** starts workers built with autorun: false */
  run(): void;
  /** stops taking jobs and waits for the active ones to finish (or return to the queue) */
  close(): Promise<void>;
}

export function startEdgeWorkers<S extends PipelineService>(opts: EdgeWorkersOptions<S>): EdgeWorkers {
  const workers = edgesOf(opts.service).map((edge) => {
    const queue = edge.consumes as QueueName;
    const worker = new Worker<unknown, EdgeResult>(
      queue,
      async (job: Job) => {
        try {
          return await runEdge(edge, job, {
            queues: opts.queues,
            deps: opts.deps,
            metrics: opts.metrics,
            timeoutMs: opts.stageTimeoutMs?.[edge.stage],
          });
        } catch (err) {
          if (err instanceof DeadLetteredError) throw new UnrecoverableError(err.message);
          throw err;
        }
      },
      {
        connection: opts.connections.worker(),
        prefix: opts.queues.prefix,
        concurrency: opts.concurrency,
        lockDuration: opts.lockMs,
        lockRenewTime: Math.floor(opts.lockMs / 2),
        stalledInterval: opts.stalledIntervalMs,
        maxStalledCount: MAX_STALLED_COUNT,
        autorun: opts.autorun ?? true,
      },
    );
    worker.on('failed', (job, err) => {
      opts.log('job-failed', { queue, jobId: job?.id, attempt: job ? job.attemptsMade : undefined, error: err.message });
      if (job) {
        void deadLetterFinalFailure(queue, job, err, opts.queues, opts.metrics).catch((e: Error) => opts.log('dead-letter-failed', { queue, jobId: job.id, error: e.message }));
      }
    });
    worker.on('error', (err) => opts.log('worker-error', { queue, error: err.message }));
    return worker;
  });
  return {
    workers,
    run() {
      for (const w of workers) {
        if (!w.isRunning()) w.run().catch((err: Error) => opts.log('worker-stopped', { queue: w.name, error: err.message }));
      }
    },
    close: async () => {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}
