import { UnrecoverableError } from 'bullmq';
import type { GradedBatch } from '@rx/contracts';
import { appendToWindow, emptyWindow, kernelBaseline } from '@rx/estimators';
import { createRxMetrics, metricSamples } from '@rx/metrics';
import { InMemoryRolloutWindowStore, RecordingProducer, scoredRollouts, testStepRequest } from '@rx/pipeline';
import { AdvantageJobHandler } from './advantage-job.handler';

function graded(step: number): GradedBatch {
  const req = testStepRequest('run-k', 'gs1_kernel', step);
  return {
    runId: req.runId,
    arm: req.arm,
    step,
    plan: req.plan,
    samplerPath: 'memory://w',
    prompts: req.prompts.map((p) => ({ promptId: p.promptId, tokens: [1, 2, 3] })),
    rollouts: req.prompts.map((p, i) => {
      const reward = [1, 0, -0.1, 0.9][(i * 5 + step) % 4];
      return { rolloutId: `${step}-${i}`, promptId: p.promptId, tokens: [4], logprobs: [-1], stopReason: 'stop' as const, phi: [Math.log(30 + (i % 9)), -1 - (i % 7) / 5] as [number, number], reward, correct: reward > 0.5, formatOk: reward >= 0 };
    }),
    timings: {},
  };
}

function setup() {
  const queues = new RecordingProducer();
  const metrics = createRxMetrics({ service: 'advantage', defaultMetrics: false });
  const windows = new InMemoryRolloutWindowStore();
  return { queues, metrics, windows, handler: new AdvantageJobHandler({ queues, metrics, windows }) };
}

describe('AdvantageJobHandler (advantage processor logic)', () => {
  it('applies the kernel against the kept window and enqueues the train step with gate metrics', async () => {
    const { queues, metrics, windows, handler } = setup();
    await handler.handle({ id: 'a0', data: graded(0), attemptsMade: 0 });
    await handler.handle({ id: 'a1', data: graded(1), attemptsMade: 0 });
    const jobs = queues.on('train-steps');
    expect(jobs.map((j) => j.jobId)).toEqual(['run-k-gs1_kernel-0-train', 'run-k-gs1_kernel-1-train']);
    const window0 = appendToWindow(emptyWindow(256), scoredRollouts(graded(0)));
    const expected = kernelBaseline(scoredRollouts(graded(1)), window0.rollouts, { bandwidth: 0.5, windowSize: 256 });
    expect(jobs[1].payload.rollouts.map((r) => r.baseline)).toEqual(expected.map((a) => a.baseline));
    expect(jobs[1].payload.gate.executedGroupSize).toBe(1);
    expect((await windows.latest({ runId: 'run-k', arm: 'gs1_kernel' }))!.window.rollouts).toHaveLength(128);
    const ratio = await metricSamples(metrics.registry, 'rx_step_nonzero_advantage_ratio');
    expect(ratio[0]).toMatchObject({ labels: { arm: 'gs1_kernel' }, value: jobs[1].payload.gate.fracNonzeroAdvantage });
  });

  it('a redelivered job (after a crash past the window commit) yields the same train step', async () => {
    const { queues, handler } = setup();
    await handler.handle({ id: 'a0', data: graded(0), attemptsMade: 0 });
    await handler.handle({ id: 'a1', data: graded(1), attemptsMade: 0 });
    await handler.handle({ id: 'a1', data: graded(1), attemptsMade: 1 });
    const [, first, again] = queues.on('train-steps');
    expect(again.jobId).toBe(first.jobId);
    expect({ ...again.payload, timings: {} }).toEqual({ ...first.payload, timings: {} });
  });

  it('dead-letters a graded batch with a non-finite reward', async () => {
    const { queues, handler } = setup();
    const bad = graded(0) as unknown as { rollouts: Array<{ reward: unknown }> };
    bad.rollouts[3].reward = 'high';
    await expect(handler.handle({ id: 'bad', data: bad, attemptsMade: 0 })).rejects.toBeInstanceOf(UnrecoverableError);
    expect(queues.deadLetters[0].issues).toEqual([{ path: 'rollouts.3.reward', message: 'Expected number, received string' }]);
  });
});
