import { UnrecoverableError } from 'bullmq';
import { charRenderer } from '@rx/backend';
import { createRxMetrics, metricSamples } from '@rx/metrics';
import { HashChainPolicyBackend, RecordingProducer, testStepRequest } from '@rx/pipeline';
import { SampleJobHandler } from './sample-job.handler';

async function setup(concurrency = 4) {
  const backend = new HashChainPolicyBackend({ latencyMs: 2 });
  const queues = new RecordingProducer();
  const metrics = createRxMetrics({ service: 'sampler', defaultMetrics: false });
  const handler = new SampleJobHandler({ queues, metrics, backend, renderers: async () => charRenderer, concurrency });
  const req = testStepRequest('run-1', 'gs1_kernel', 2);
  const client = await backend.createLoraTrainingClient(req.lora);
  const sample = { runId: req.runId, arm: req.arm, step: req.step, plan: req.plan, samplerPath: await client.saveWeightsForSampler('w'), prompts: req.prompts };
  return { backend, queues, metrics, handler, sample };
}

describe('SampleJobHandler (sampler processor logic)', () => {
  it('samples the batch through the backend and enqueues it for the grader under <run>-<arm>-<step>-grade', async () => {
    const { backend, queues, metrics, handler, sample } = await setup(4);
    const out = await handler.handle({ id: 'run-1-gs1_kernel-2-sample', data: sample, attemptsMade: 0 });
    expect(out).toEqual({ next: 'run-1-gs1_kernel-2-grade', rollouts: 64 });
    const [job] = queues.on('rollouts');
    expect(job.jobId).toBe('run-1-gs1_kernel-2-grade');
    expect(job.payload.rollouts).toHaveLength(64);
    expect(job.payload.rollouts[5].rolloutId).toBe('2-5');
    expect(backend.calls.maxInFlight).toBe(4); // RX_CONCURRENCY bounds the fan-out
    const counted = await metricSamples(metrics.registry, 'rx_rollouts_processed_total');
    expect(counted).toEqual([{ metricName: undefined, labels: { stage: 'sample', arm: 'gs1_kernel' }, value: 64 }]);
  });

  it('dead-letters a malformed request without calling the backend', async () => {
    const { backend, queues, handler, sample } = await setup();
    const bad = { ...sample, samplerPath: '' };
    await expect(handler.handle({ id: 'bad', data: bad, attemptsMade: 0 })).rejects.toBeInstanceOf(UnrecoverableError);
    expect(queues.deadLetters[0]).toMatchObject({ sourceQueue: 'sample-requests', issues: [{ path: 'samplerPath' }] });
    expect(queues.on('rollouts')).toEqual([]);
    expect(backend.calls.sample).toBe(0);
  });

  it('lets a backend failure through for a retry (no dead letter)', async () => {
    const { backend, queues, handler, sample } = await setup();
    await backend.close();
    await expect(handler.handle({ id: 'j', data: sample, attemptsMade: 0 })).rejects.toThrow('backend closed');
    expect(queues.deadLetters).toEqual([]);
  });
});
