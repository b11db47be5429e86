// The fixed batches of the preflight, generated from a seeded PRNG (the same bytes on every machine, so their
// sha256 identifies them): a GRPO batch of 8 prompts x 8 rollouts with graded rewards, sampling logprobs and
// the training policy's logprobs; and synthetic kernel windows for the forced (non-)activation checks.
import type { GradedBatch, StepPlan } from '@rx/contracts';
import { mulberry32 } from '@rx/stats';

export const FIXED_BATCH_SEED = 20260;
/** the cookbook reward takes these values: format_coef * (correct_format - 1) + correct_answer */
const REWARDS = [1, 0, -0.1, 0.9];

export interface FixedGrpoBatch {
  batch: GradedBatch;
  /** the training policy's logprob of every completion token (same shape as each rollout's logprobs) */
  trainingLogprobs: number[][];
}

const float32 = (x: number): number => Number(Math.fround(x).toPrecision(9));

/** 8 prompts x 8 rollouts; tokens < vocab; two groups have constant rewards (the cookbook's A = 0 case) */
export function fixedGrpoBatch(plan: StepPlan, vocab = 60, seed = FIXED_BATCH_SEED): FixedGrpoBatch {
  const rand = mulberry32(seed);
  const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
  const prompts = Array.from({ length: 8 }, (_, p) => ({ promptId: `fixed-${p}`, tokens: Array.from({ length: int(4, 24) }, () => int(3, vocab - 1)) }));
  const rollouts: GradedBatch['rollouts'] = [];
  const trainingLogprobs: number[][] = [];
  prompts.forEach((prompt, p) => {
    const constant = p === 2 || p === 5;
    const constantReward = REWARDS[int(0, 3)];
    for (let g = 0; g < 8; g++) {
      const n = int(2, 16);
      const logprobs = Array.from({ length: n }, () => float32(-5 * rand()));
      const reward = constant ? constantReward : REWARDS[int(0, 3)];
      rollouts.push({
        rolloutId: `0-${p * 8 + g}`,
        promptId: prompt.promptId,
        tokens: Array.from({ length: n }, () => int(3, vocab - 1)),
        logprobs,
        stopReason: rand() < 0.8 ? 'stop' : 'length',
        phi: [Math.log(prompt.tokens.length), float32(-3 * rand())],
        reward,
        correct: reward >= 0.9,
        formatOk: reward === 1 || reward === 0,
      });
      // the training policy has moved a little since sampling: ratios exp(logp - logp_sampled) near 1
      trainingLogprobs.push(logprobs.map((l) => l + (rand() - 0.5) * 0.2));
    }
  });
  return {
    batch: { runId: 'preflight', arm: 'grpo_preflight', step: 0, plan, samplerPath: 'preflight://fixed', prompts, rollouts, timings: {} },
    trainingLogprobs,
  };
}

export interface KernelCase {
  batch: GradedBatch;
  /** per rollout, the true success rate of its prompt kind */
  kindRate: number[];
}

/** Two prompt kinds far apart in phi (short, likely prompts that succeed 90%; long, unlikely ones 10%). */
export function heterogeneousKernelBatch(plan: StepPlan, seed = FIXED_BATCH_SEED + 1): KernelCase {
  const rand = mulberry32(seed);
  const rollouts: GradedBatch['rollouts'] = [];
  const prompts: GradedBatch['prompts'] = [];
  const kindRate: number[] = [];
  for (let i = 0; i < 64; i++) {
    const easy = i % 2 === 0;
    const rate = easy ? 0.9 : 0.1;
    const len = easy ? 20 + Math.floor(rand() * 4) : 200 + Math.floor(rand() * 40);
    const reward = rand() < rate ? 1 : 0;
    prompts.push({ promptId: `kind-${i}`, tokens: Array.from({ length: 3 }, () => 5) });
    rollouts.push({
      rolloutId: `0-${i}`,
      promptId: `kind-${i}`,
      tokens: [5, 6],
      logprobs: [-1, -1],
      stopReason: 'stop',
      phi: [Math.log(len), (easy ? -1 : -2.5) + (rand() - 0.5) * 0.1],
      reward,
      correct: reward === 1,
      formatOk: true,
    });
    kindRate.push(rate);
  }
  return { batch: { runId: 'preflight', arm: 'gs1_preflight', step: 0, plan, samplerPath: 'preflight://fixed', prompts, rollouts, timings: {} }, kindRate };
}
