// TEST FIXTURE. Step requests shaped like the spec's two arms, over arithmetic problems the hash-chain policy
// answers: grpo_gs8 takes 8 prompts x 8 samples with group-mean advantages, gs1_kernel 64 prompts x 1 with the
// kernel baseline (bandwidth 0.5, window 256). Step s of an arm draws prompts [64 s, 64 s + 64).
import type { StepRequest } from '@rx/contracts';
import { arithmeticProblems } from './arithmetic-problems';

export const TEST_BASE_MODEL = 'rx/char-lm';
export type TestArm = 'grpo_gs8' | 'gs1_kernel';

export function testStepRequest(runId: string, arm: TestArm, step: number, opts: { maxTokens?: number } = {}): StepRequest {
  const grpo = arm === 'grpo_gs8';
  const prompts = arithmeticProblems(grpo ? 8 : 64, 64 * step);
  return {
    runId,
    arm,
    step,
    plan: {
      baseModel: TEST_BASE_MODEL,
      groupSize: grpo ? 8 : 1,
      sampling: { maxTokens: opts.maxTokens ?? 64, temperature: 1, seed: 1000 * step },
      advantage: grpo
        ? { estimator: 'group_mean', dropConstantGroups: false }
        : { estimator: 'kernel_cross_prompt_baseline', bandwidth: 0.5, windowSize: 256 },
      learningRate: 4e-5,
      formatCoef: 0.1,
    },
    lora: { baseModel: TEST_BASE_MODEL, rank: 32, seed: 0 },
    prompts,
  };
}
