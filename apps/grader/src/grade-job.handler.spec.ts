import { UnrecoverableError } from 'bullmq';
import { CHAR_EOS, charRenderer } from '@rx/backend';
import type { SampledBatch } from '@rx/contracts';
import { gradeCompletion } from '@rx/grading';
import { createRxMetrics } from '@rx/metrics';
import { RecordingProducer, testStepRequest } from '@rx/pipeline';
import { GradeJobHandler } from './grade-job.handler';

function sampled(): SampledBatch {
  const req = testStepRequest('run-g', 'grpo_gs8', 0);
  const texts = ['\\boxed{X}', '\\boxed{0}', 'X', '\\boxed{X}'];
  return {
    runId: req.runId,
    arm: req.arm,
    step: 0,
    plan: req.plan,
    samplerPath: 'memory://w',
    prompts: req.prompts.map((p) => ({ promptId: p.promptId, tokens: charRenderer.buildPrompt(p.question), answer: p.answer })),
    rollouts: req.prompts.flatMap((p, i) => {
      const sum = p.answer.split('#### ')[1];
      return Array.from({ length: 8 }, (_, j) => {
        const text = texts[j % 4].replace('X', sum);
        const stop = j % 4 !== 3;
        const tokens = [...charRenderer.encode(text), ...(stop ? [CHAR_EOS] : [])];
        return { rolloutId: `0-${i * 8 + j}`, promptId: p.promptId, tokens, logprobs: tokens.map(() => -1), stopReason: stop ? ('stop' as const) : ('length' as const), phi: [2, -1] as [number, number] };
      });
    }),
    timings: { sample: 3 },
  };
}

describe('GradeJobHandler (grader processor logic)', () => {
  it('scores every completion with the cookbook reward and enqueues the batch for the advantage service', async () => {
    const queues = new RecordingProducer();
    const handler = new GradeJobHandler({ queues, metrics: createRxMetrics({ service: 'grader', defaultMetrics: false }), renderers: async () => charRenderer, grade: gradeCompletion });
    const out = await handler.handle({ id: 'run-g-grpo_gs8-0-grade', data: sampled(), attemptsMade: 0 });
    const [job] = queues.on('graded-rollouts');
    expect(job.jobId).toBe('run-g-grpo_gs8-0-advantage');
    expect(job.payload.rollouts.slice(0, 4).map((r) => r.reward)).toEqual([1, 0, -0.1, 0.9]);
    expect(out.next).toBe('run-g-grpo_gs8-0-advantage');
    expect(out.rewardMean).toBeCloseTo((1 + 0 - 0.1 + 0.9) / 4, 12);
  });

  it('dead-letters a batch that is not complete (63 of 64 rollouts)', async () => {
    const queues = new RecordingProducer();
    const handler = new GradeJobHandler({ queues, metrics: createRxMetrics({ service: 'grader', defaultMetrics: false }), renderers: async () => charRenderer, grade: gradeCompletion });
    const batch = sampled();
    batch.rollouts.pop();
    await expect(handler.handle({ id: 'short', data: batch, attemptsMade: 0 })).rejects.toBeInstanceOf(UnrecoverableError);
    expect(queues.deadLetters[0].error).toMatch(/expected 64 rollouts \(8 prompts x group size 8\), got 63/);
    expect(queues.on('graded-rollouts')).toEqual([]);
  });
});
