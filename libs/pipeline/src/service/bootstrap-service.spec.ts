import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { DeadLetter } from '@rx/contracts';
import { applyWorkerTimings, deadLetterFinalFailure, type WorkerHostLike } from './bootstrap-service';

function fakeRepo(existing: string[] = []) {
  const letters: DeadLetter[] = [];
  const counted: string[] = [];
  return {
    letters,
    counted,
    repo: {
      queue: () => ({ getJob: async (id: string) => (existing.includes(id) ? { id } : undefined) }) as never,
      deadLetter: async (entry: DeadLetter) => void letters.push(entry),
    },
    metrics: { countDeadLetter: (q: string) => void counted.push(q) },
  };
}

describe('deadLetterFinalFailure (the backstop of consumeJob)', () => {
  const now = () => Date.parse('2026-08-01T00:00:00Z');

  it('dead-letters a job that failed its last attempt or hit the stall limit, once, and counts it', async () => {
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
    const last = await deadLetterFinalFailure('rollouts', { ...job, id: 'j2', attemptsMade: 3 }, new Error('boom'), f.repo, f.metrics, now);
    expect(last).toBe(true);
    expect(f.letters[1].error).toBe('rollouts job j2 failed for good after 3 attempts: boom');
  });

  it('leaves a job that will be retried, and one consumeJob already dead-lettered', async () => {
    const f = fakeRepo(['train-steps-j-dead']);
    expect(await deadLetterFinalFailure('train-steps', { id: 'k', data: {}, attemptsMade: 1, opts: { attempts: 3 } }, new Error('retry me'), f.repo, f.metrics, now)).toBe(false);
    expect(await deadLetterFinalFailure('train-steps', { id: 'j', data: {}, attemptsMade: 3, opts: { attempts: 3 } }, new Error('x'), f.repo, f.metrics, now)).toBe(false);
    expect(f.letters).toEqual([]);
    expect(f.counted).toEqual([]);
  });
});

describe('applyWorkerTimings', () => {
  it("sets a BullMQ Worker's lock, its renewal (half the lock), the stall check and the stall limit before it runs", async () => {
    const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null, lazyConnect: true });
    const worker = new Worker('t-timings', async () => undefined, { connection, autorun: false, prefix: 't-timings' });
    try {
      applyWorkerTimings(worker as unknown as WorkerHostLike['worker'], { lockMs: 2000, stalledIntervalMs: 500 });
      expect(worker.opts).toMatchObject({ lockDuration: 2000, lockRenewTime: 1000, stalledInterval: 500, maxStalledCount: 3 });
      const lockManager = (worker as unknown as { lockManager: { opts: { lockDuration: number; lockRenewTime: number } } }).lockManager;
      expect(lockManager.opts).toMatchObject({ lockDuration: 2000, lockRenewTime: 1000 });
    } finally {
      await worker.close();
      connection.disconnect();
    }
  });

  it('refuses a worker it cannot configure', () => {
    expect(() => applyWorkerTimings({ concurrency: 1 } as unknown as WorkerHostLike['worker'], { lockMs: 2000, stalledIntervalMs: 500 })).toThrow(/RX_LOCK_MS/);
  });
});
