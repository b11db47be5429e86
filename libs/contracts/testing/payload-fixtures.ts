// Worst-case-sized payloads for the size and schema tests: Qwen-sized token ids (6 digits), float32 logprobs.
import { compactFloat32, type StepPlan, type TrainStep } from '@rx/contracts';
import { mulberry32 } from '@rx/stats';

export function fixturePlan(groupSize: number): StepPlan {
  return {
    baseModel: 'Qwen/Qwen3.5-2B',
    groupSize,
    sampling: { maxTokens: 512, temperature: 1, seed: 0 },
    advantage:
      groupSize > 1
        ? { estimator: 'group_mean', dropConstantGroups: false }
        : { estimator: 'kernel_cross_prompt_baseline', bandwidth: 0.5, windowSize: 256 },
    learningRate: 4e-5,
    formatCoef: 0.1,
  };
}

/** A train-steps payload of `prompts x groupSize` rollouts of `completionTokens` tokens each. */
export function fixtureTrainStep(opts: { prompts: number; groupSize: number; promptTokens: number; completionTokens: number; seed?: number }): TrainStep {
  // seeded, so fixtures never depend on Math.random
  const rand = mulberry32(opts.seed ?? 1);
  const token = () => 100000 + Math.floor(rand() * 148000); // ids up to 248k, as Qwen3.5's vocabulary
  const prompts = Array.from({ length: opts.prompts }, (_, p) => ({
    promptId: `gsm8k-train-${1000 + p}`,
    tokens: Array.from({ length: opts.promptTokens }, token),
  }));
  const rollouts = [];
  for (let p = 0; p < opts.prompts; p++) {
    for (let g = 0; g < opts.groupSize; g++) {
      const index = p * opts.groupSize + g;
      const reward = [1, 0, -0.1, 0.9][index % 4];
      rollouts.push({
        rolloutId: `7-${index}`,
        promptId: prompts[p].promptId,
        tokens: Array.from({ length: opts.completionTokens }, token),
        logprobs: Array.from({ length: opts.completionTokens }, () => compactFloat32(Math.log(rand() + 1e-12))),
        stopReason: 'stop' as const,
        phi: [Math.log(opts.promptTokens), -1.234567890123] as [number, number],
        reward,
        correct: reward > 0.5,
        formatOk: reward >= 0,
        advantage: reward - 0.3141592653589793,
        baseline: 0.3141592653589793,
        effectiveNeighbors: 12.345678901234,
        fallback: false,
        dropped: false,
      });
    }
  }
  return {
    runId: 'gs1-vs-grpo-2026-08-01',
    arm: opts.groupSize > 1 ? 'grpo_gs8' : 'gs1_kernel',
    step: 7,
    plan: fixturePlan(opts.groupSize),
    samplerPath: 'tinker://8f7c2a44-1e1b-4c55-9d2c-0123456789ab/sampler_weights/gs1-vs-grpo-2026-08-01-gs1_kernel-7',
    prompts,
    rollouts,
    gate: {
      executedGroupSize: opts.groupSize,
      rewardMean: 0.45,
      fracNonzeroAdvantage: 1,
      effectiveNeighbors: { p10: 9.5, p50: 20.25, p90: 40.125 },
      fallbackFraction: 0,
    },
    timings: { prepare: 1.25, sample: 31.5, grade: 0.25, advantage: 0.0625 },
  };
}
