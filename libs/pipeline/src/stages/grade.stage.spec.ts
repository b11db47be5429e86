import { CHAR_EOS, charRenderer } from '@rx/backend';
import { QUEUE_CATALOG, type SampledBatch } from '@rx/contracts';
import { gradeCompletion } from '@rx/grading';
import { testStepRequest } from '@rx/pipeline/testing';
import { gradeBatch, type GradeFn } from './grade.stage';

function batchOf(completions: Array<{ text: string; stop: boolean }>): SampledBatch {
  const prompt = { promptId: 'p0', tokens: charRenderer.buildPrompt('what is 12 + 7?'), answer: '12 + 7 = 19\n#### 19' };
  return {
    runId: 'r',
    arm: 'grpo_gs8',
    step: 0,
    plan: { ...testStepRequest('r', 'grpo_gs8', 0).plan, groupSize: completions.length },
    samplerPath: 'memory://w',
    prompts: [prompt],
    rollouts: completions.map((c, i) => {
      const tokens = [...charRenderer.encode(c.text), ...(c.stop ? [CHAR_EOS] : [])];
      return { rolloutId: `0-${i}`, promptId: 'p0', tokens, logprobs: tokens.map(() => -0.5), stopReason: c.stop ? ('stop' as const) : ('length' as const), phi: [1, -1] as [number, number] };
    }),
    timings: { sample: 2 },
  };
}

describe('gradeBatch', () => {
  it('gives the cookbook rewards 1, 0, -0.1 and 0.9 with the real grader', () => {
    const batch = batchOf([
      { text: 'so \\boxed{19}', stop: true }, // right, well formed
      { text: 'so \\boxed{20}', stop: true }, // wrong, well formed
      { text: 'so 19', stop: true }, // no box: format fails
      { text: 'so \\boxed{19}', stop: false }, // right but truncated: format fails
    ]);
    const graded = gradeBatch(batch, { renderer: charRenderer, grade: gradeCompletion });
    expect(graded.rollouts.map((r) => r.reward)).toEqual([1, 0, -0.1, 0.9]);
    expect(graded.rollouts.map((r) => r.correct)).toEqual([true, false, false, true]);
    expect(graded.rollouts.map((r) => r.formatOk)).toEqual([true, true, false, false]);
    expect(QUEUE_CATALOG['graded-rollouts'].schema.safeParse(graded).success).toBe(true);
    expect(graded.timings.sample).toBe(2);
    expect(graded.prompts[0]).not.toHaveProperty('answer');
  });

  it('grades the text without the stop token, says whether it ended on one, and passes format_coef', () => {
    const seen: Array<Parameters<GradeFn>> = [];
    const spy: GradeFn = (...args) => {
      seen.push(args);
      return { correct: false, formatOk: false, extracted: null, reward: 0 };
    };
    const batch = batchOf([
      { text: 'a', stop: true },
      { text: 'b', stop: false },
    ]);
    batch.plan.formatCoef = 0.25;
    gradeBatch(batch, { renderer: charRenderer, grade: spy });
    expect(seen).toEqual([
      ['a', '12 + 7 = 19\n#### 19', { endedOnStop: true, formatCoef: 0.25 }],
      ['b', '12 + 7 = 19\n#### 19', { endedOnStop: false, formatCoef: 0.25 }],
    ]);
  });
});
