// A stage that never finishes is bounded end to end: the sampler (in-process, real BullMQ on the real Redis)
// gives each attempt its time limit (RX_STAGE_TIMEOUT_MS), retries with the queue's back-off, and dead-letters the
// job with the reason after its last attempt: a step that cannot complete stops with a clear reason, counted on
// /metrics, instead of hanging.
import type { PolicyBackend, SamplingClient } from '@rx/backend';
import { deadLetterJobId, jobIdFor } from '@rx/contracts';
import { parseExposition } from '@rx/metrics/testing';
import { testStepRequest } from '@rx/pipeline/testing';
import { createRedisHarness } from '@rx/queue/testing';
import { HashChainPolicyBackend } from '@rx/backend/testing';
import { QueueRepository } from '@rx/queue';
import { loadSamplerConfig } from './config';
import { startSampler } from './sampler.app';

jest.setTimeout(30_000);

const harness = createRedisHarness('sample-timeout');
afterAll(() => harness.close());

/** the hash-chain policy, except that sampling never answers (a hung backend) */
function hangingBackend(): PolicyBackend {
  const inner = new HashChainPolicyBackend();
  return {
    kind: inner.kind,
    createLoraTrainingClient: (c) => inner.createLoraTrainingClient(c),
    createSamplingClient: async (p): Promise<SamplingClient> => {
      const c = await inner.createSamplingClient(p);
      return { modelPath: c.modelPath, sample: () => new Promise(() => undefined), computeLogprobs: () => new Promise(() => undefined) };
    },
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
}

it('a sample that never returns: 3 attempts of 300 ms with back-off, then a dead letter naming the limit, counted on /metrics', async () => {
  const config = loadSamplerConfig({
    REDIS_URL: harness.url,
    RX_ALLOW_INSECURE_REDIS: '1',
    RX_BACKEND_URL: 'http://127.0.0.1:1',
    RX_QUEUE_PREFIX: harness.prefix,
    PORT: '0',
    HOST: '127.0.0.1',
    RX_STAGE_TIMEOUT_MS: '300',
  });
  const sampler = await startSampler({ config, backend: hangingBackend(), logger: false, log: () => undefined });
  const queues = new QueueRepository({ connections: harness.connections(), prefix: harness.prefix });
  try {
    const trainer = await new HashChainPolicyBackend().createLoraTrainingClient({ baseModel: 'rx/char-lm', rank: 32, seed: 0 });
    const req = testStepRequest('run-hang', 'gs1_kernel', 0);
    const sample = { runId: req.runId, arm: req.arm, step: 0, plan: req.plan, prompts: req.prompts, samplerPath: await trainer.saveWeightsForSampler('w') };
    const jobId = jobIdFor(sample, 'sample');
    const t0 = Date.now();
    await queues.enqueue('sample-requests', sample, jobId);
    const deadId = deadLetterJobId('sample-requests', jobId, 0);
    let dead = await queues.queue('dead-letters').getJob(deadId);
    while (!dead && Date.now() - t0 < 20_000) {
      await new Promise((r) => setTimeout(r, 100));
      dead = await queues.queue('dead-letters').getJob(deadId);
    }
    const elapsed = Date.now() - t0;
    expect(dead?.data).toMatchObject({
      sourceQueue: 'sample-requests',
      sourceJobId: jobId,
      reason: 'unrecoverable',
      error: `sample of job ${jobId} gave up after 3 attempts: sample of job ${jobId} took longer than 300 ms`,
    });
    // three attempts of 300 ms and the back-off between them (1 s, then 2 s)
    expect(elapsed).toBeGreaterThanOrEqual(3 * 300 + 1000 + 2000);
    // the runner writes the dead letter (and the step's failure event) before it fails the job: BullMQ marks it
    // failed a moment later
    for (let i = 0; i < 50 && (await queues.queue('sample-requests').getJobState(jobId)) !== 'failed'; i++) await new Promise((r) => setTimeout(r, 100));
    const job = await queues.queue('sample-requests').getJob(jobId);
    expect(await job?.getState()).toBe('failed');
    expect(job?.attemptsMade).toBe(3);
    const metrics = parseExposition(await (await fetch(`${sampler.url}/metrics`)).text());
    expect(metrics.get('rx_dead_letters_total')!.metrics).toEqual([{ labels: { queue: 'sample-requests', service: 'sampler' }, value: '1' }]);
  } finally {
    await queues.close();
    await sampler.close();
  }
});
