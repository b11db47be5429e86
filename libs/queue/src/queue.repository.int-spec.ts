import { Job, Worker } from 'bullmq';
import { createRxMetrics } from '@rx/metrics';
import { runStandInStage, testStepRequest } from '@rx/pipeline/testing';
import { QueueRepository } from './queue.repository';
import { createRedisHarness } from '@rx/queue/testing';

const harness = createRedisHarness('queues');
const connections = harness.connections();
const repo = new QueueRepository({ connections, prefix: harness.prefix, inlineLimitBytes: 5_000 });
afterAll(async () => {
  await repo.close();
  await harness.close();
});

describe('QueueRepository on Redis', () => {
  it('parses before adding: an invalid payload never reaches Redis', async () => {
    const bad = { ...testStepRequest('r', 'grpo_gs8', 0), arm: 'Not An Arm' };
    await expect(repo.enqueue('step-requests', bad, 'bad-job')).rejects.toThrow(/arm/);
    expect(await repo.queue('step-requests').getJob('bad-job')).toBeUndefined();
  });

  it('adds with the deterministic id and the catalog options; the same id twice is one job', async () => {
    const req = testStepRequest('r1', 'grpo_gs8', 0);
    const a = await repo.enqueue('step-requests', req, 'r1-grpo_gs8-0-prepare');
    await repo.enqueue('step-requests', { ...req, prompts: req.prompts.slice(1) }, 'r1-grpo_gs8-0-prepare');
    expect(a).toMatchObject({ jobId: 'r1-grpo_gs8-0-prepare', byReference: false });
    const counts = await repo.queue('step-requests').getJobCounts('waiting');
    expect(counts.waiting).toBe(1);
    const job = (await repo.queue('step-requests').getJob('r1-grpo_gs8-0-prepare'))!;
    expect(job.data.prompts).toHaveLength(8);
    expect(job.name).toBe('prepare');
    expect(job.opts).toMatchObject({ attempts: 3, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: { age: 86400, count: 1000 } });
  });

  it('reports depth and the age of the oldest waiting job', async () => {
    const now = Date.now();
    const snap = await repo.snapshot(['step-requests', 'rollouts']);
    expect(snap[0]).toMatchObject({ queue: 'step-requests', depth: 1 });
    expect(snap[0].oldestWaitingAgeSeconds).toBeGreaterThanOrEqual(0);
    expect(snap[0].oldestWaitingAgeSeconds).toBeLessThan((Date.now() - now) / 1000 + 30);
    expect(snap[1]).toEqual({ queue: 'rollouts', depth: 0, oldestWaitingAgeSeconds: 0 });
  });

  it('carries a payload over the inline cap by reference, and a worker gets it back whole', async () => {
    const req = testStepRequest('big', 'gs1_kernel', 0); // 64 prompts: ~8 kB of JSON, over this repo's 5 kB cap
    const r = await repo.enqueue('step-requests', req, 'big-gs1_kernel-0-prepare');
    expect(r.byReference).toBe(true);
    expect(r.bytes).toBeGreaterThan(5_000);
    const stored = (await repo.queue('step-requests').getJob('big-gs1_kernel-0-prepare'))!;
    expect(stored.data).toMatchObject({ $artefact: { bytes: r.bytes }, runId: 'big', arm: 'gs1_kernel', step: 0 });
    expect(JSON.stringify(stored.data).length).toBeLessThan(500);

    const metrics = createRxMetrics({ service: 'trainer', defaultMetrics: false });
    const got = await runStandInStage('step-requests', { id: stored.id, data: stored.data, attemptsMade: 0 }, { queues: repo, metrics }, async (p) => p);
    expect(got).toEqual(req);
  });

  it('dead-letters a by-reference job whose stored payload was tampered with', async () => {
    const req = testStepRequest('tamper', 'gs1_kernel', 0);
    await repo.enqueue('step-requests', req, 'tamper-gs1_kernel-0-prepare');
    const job = (await repo.queue('step-requests').getJob('tamper-gs1_kernel-0-prepare'))!;
    const key = (job.data as { $artefact: { key: string } }).$artefact.key;
    await connections.producer().set(key, JSON.stringify({ ...req, step: 5 }));
    const metrics = createRxMetrics({ service: 'trainer', defaultMetrics: false });
    await expect(runStandInStage('step-requests', { id: job.id, data: job.data, attemptsMade: 0 }, { queues: repo, metrics }, async () => 1)).rejects.toThrow(/does not match its sha256/);
    const dead = (await repo.queue('dead-letters').getJob('step-requests-tamper-gs1_kernel-0-prepare-dead'))!;
    expect(dead.data).toMatchObject({ sourceQueue: 'step-requests', reason: 'invalid-payload' });
  });

  it('a worker on the repository prefix consumes what it enqueued', async () => {
    const worker = new Worker('sample-requests', async (job: Job) => job.data.runId as string, { connection: connections.worker(), prefix: harness.prefix, autorun: false });
    const done = new Promise<string>((resolve) => worker.on('completed', (_job, result: string) => resolve(result)));
    void worker.run();
    const req = testStepRequest('w', 'grpo_gs8', 0);
    await repo.enqueue('sample-requests', { runId: req.runId, arm: req.arm, step: 0, plan: req.plan, samplerPath: 'memory://x', prompts: req.prompts }, 'w-grpo_gs8-0-sample');
    expect(await done).toBe('w');
    await worker.close();
  });
});
