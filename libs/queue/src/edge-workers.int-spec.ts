// A service's edge workers on the real Redis: built from the graph with the config's lock and stall settings, a
// job run through the edge runner end to end, and the dead-letter backstop for failures the runner never saw.
import type { DeadLetter } from '@rx/contracts';
import { createRxMetrics } from '@rx/metrics';
import { deadLetterFinalFailure, startEdgeWorkers } from './edge-workers';
import { QueueRepository } from './queue.repository';
import { createRedisHarness } from '@rx/queue/testing';
import { testStepRequest } from '@rx/pipeline/testing';

function fakeRepo(existing: string[] = []) {
  const letters: DeadLetter[] = [];
  const events: unknown[] = [];
  const counted: string[] = [];
  return {
    letters,
    events,
    counted,
    repo: {
      queue: () => ({ getJob: async (id: string) => (existing.includes(id) ? { id } : undefined) }) as never,
      deadLetter: async (entry: DeadLetter) => {
        letters.push(entry);
        return `${entry.sourceQueue}-${entry.sourceJobId}-dead`;
      },
      enqueue: async (queue: string, payload: unknown, jobId: string) => {
        events.push({ queue, jobId, payload });
        return { jobId, bytes: 0, byReference: false };
      },
      loadArtefact: async () => undefined,
    } as never,
    metrics: { countDeadLetter: (q: string) => void counted.push(q) },
  };
}

describe('deadLetterFinalFailure (the backstop of the edge runner)', () => {
  const now = () => Date.parse('2026-08-01T00:00:00Z');

  it('dead-letters a job that failed its last attempt or hit the stall limit, once, counts it and reports its step failed', async () => {
    const f = fakeRepo();
    const job = { id: 'r-grpo_gs8-1-train', data: { runId: 'r', step: 1 }, attemptsMade: 1, opts: { attempts: 3 } };
    const stalled = Object.assign(new Error('job stalled more than allowable limit'), { name: 'UnrecoverableError' });
    expect(await deadLetterFinalFailure('train-steps', job, stalled, f.repo, f.metrics, now)).toBe(true);
    expect(f.letters).toEqual([
      {
        sourceQueue: 'train-steps',
        sourceJobId: 'r-grpo_gs8-1-train',
        reason: 'unrecoverable',
        error: 'train-steps job r-grpo_gs8-1-train failed for good after 1 attempt: job stalled more than allowable limit',
        issues: [],
        dataPreview: '{"runId":"r","step":1}',
        receivedAt: '2026-08-01T00:00:00.000Z',
      },
    ]);
    expect(f.counted).toEqual(['train-steps']);
    expect(f.events).toEqual([
      expect.objectContaining({ queue: 'step-events', jobId: `r-grpo_gs8-1-train-failed-${now()}`, payload: expect.objectContaining({ kind: 'step-failed', runId: 'r', arm: 'grpo_gs8', step: 1, stage: 'train' }) }),
    ]);
    const last = await deadLetterFinalFailure('rollouts', { ...job, id: 'j2', attemptsMade: 3 }, new Error('boom'), f.repo, f.metrics, now);
    expect(last).toBe(true);
    expect(f.letters[1].error).toBe('rollouts job j2 failed for good after 3 attempts: boom');
  });

  it('leaves a job that will be retried, and one the runner already dead-lettered', async () => {
    const f = fakeRepo(['train-steps-j-dead']);
    expect(await deadLetterFinalFailure('train-steps', { id: 'k', data: {}, attemptsMade: 1, opts: { attempts: 3 } }, new Error('retry me'), f.repo, f.metrics, now)).toBe(false);
    expect(await deadLetterFinalFailure('train-steps', { id: 'j', data: {}, attemptsMade: 3, opts: { attempts: 3 } }, new Error('x'), f.repo, f.metrics, now)).toBe(false);
    expect(f.letters).toEqual([]);
    expect(f.counted).toEqual([]);
  });
});

describe('startEdgeWorkers', () => {
  const harness = createRedisHarness('edge-workers');
  const connections = harness.connections();
  const queues = new QueueRepository({ connections, prefix: harness.prefix });
  afterAll(async () => {
    await queues.close();
    await harness.close();
  });

  it("builds one plain BullMQ Worker per edge of the service, with the config's lock, its renewal (half), the stall check and limit", async () => {
    const metrics = createRxMetrics({ service: 'trainer', defaultMetrics: false });
    const workers = startEdgeWorkers({ service: 'trainer', deps: {} as never, connections, queues, metrics, concurrency: 3, lockMs: 2000, stalledIntervalMs: 500, autorun: false, log: () => undefined });
    try {
      expect(workers.workers.map((w) => w.name)).toEqual(['step-requests', 'train-steps']);
      for (const w of workers.workers) {
        expect(w.opts).toMatchObject({ lockDuration: 2000, lockRenewTime: 1000, stalledInterval: 500, maxStalledCount: 3, concurrency: 3, prefix: harness.prefix });
      }
    } finally {
      await workers.close();
    }
  });

  it('runs the edge on a job and dead-letters a malformed one without retry, reporting its step failed', async () => {
    const metrics = createRxMetrics({ service: 'advantage', defaultMetrics: false });
    const workers = startEdgeWorkers({ service: 'advantage', deps: { windows: {} as never }, connections, queues, metrics, concurrency: 1, lockMs: 5000, stalledIntervalMs: 5000, log: () => undefined });
    try {
      const req = testStepRequest('run-w', 'grpo_gs8', 3);
      await queues.queue('graded-rollouts').add('advantage', { ...req, rollouts: 'nope' }, { jobId: 'run-w-grpo_gs8-3-advantage', attempts: 3 });
      let failed: { kind: string; stage?: string } | undefined;
      for (let i = 0; i < 100 && !failed; i++) {
        const [job] = await queues.queue('step-events').getJobs(['waiting'], 0, 0);
        failed = job?.data as typeof failed;
        if (!failed) await new Promise((r) => setTimeout(r, 50));
      }
      expect(failed).toMatchObject({ kind: 'step-failed', stage: 'advantage', runId: 'run-w', arm: 'grpo_gs8', step: 3 });
      const job = await queues.queue('graded-rollouts').getJob('run-w-grpo_gs8-3-advantage');
      for (let i = 0; i < 50 && (await job!.getState()) !== 'failed'; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await job!.getState()).toBe('failed');
      expect((await queues.queue('graded-rollouts').getJob('run-w-grpo_gs8-3-advantage'))!.attemptsMade).toBe(1); // not retried
      expect(await queues.queue('dead-letters').getJob('graded-rollouts-run-w-grpo_gs8-3-advantage-dead')).toBeDefined();
    } finally {
      await workers.close();
    }
  });
});
