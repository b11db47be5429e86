// The fixed inputs of the preflight. The correctness checks run on real batches sampled once from the shared
// initial state by the loop's own sample and grade stages (seeded, so the embedded backend draws the same bytes on
// every machine; their sha256 identifies them either way): the GRPO arm's step-0 batch (8 prompts x 8) and the
// GS1 arm's step-1 batch (64 prompts x 1) with the step-0 batch as the kernel window carried into it. The
// forced (non-)activation checks of the estimator use synthetic kernel windows from a seeded PRNG.
import type { PolicyBackend, Renderer } from '@rx/backend';
import type { GradedBatch, StepPlan } from '@rx/contracts';
import { gradeCompletion } from '@rx/grading';
import { gradeBatch, sampleBatch } from '@rx/pipeline';
import { baselineArm, treatmentArm, type ExperimentSpec } from '@rx/spec';
import { mulberry32 } from '@rx/stats';
import { sha256Json } from '@rx/run-dir';
import { promptsForStep, stepPlanFor } from '@rx/step-schedule';

export const FIXED_BATCH_SEED = 20260;

export interface FixedBatches {
  /** the baseline arm's step 0: groups_per_batch prompts x group_size rollouts */
  grpo: GradedBatch;
  /** the treatment arm's step 0: the kernel window carried into step 1 */
  gs1Window: GradedBatch;
  /** the treatment arm's step 1 */
  gs1: GradedBatch;
}

/** sha256 of what a batch holds (prompts and rollouts; not its timings) */
export function batchSha256(...batches: GradedBatch[]): string {
  return sha256Json(batches.map((b) => ({ arm: b.arm, step: b.step, plan: b.plan, prompts: b.prompts, rollouts: b.rollouts })));
}

export async function sampleFixedBatches(args: {
  spec: ExperimentSpec;
  backend: PolicyBackend;
  renderer: Renderer;
  train: readonly { id: string; question: string; answer: string }[];
  samplerPath: string;
  runId: string;
  bandwidth: number;
  concurrency: number;
}): Promise<FixedBatches> {
  const { spec } = args;
  const one = async (arm: ReturnType<typeof baselineArm>, step: number): Promise<GradedBatch> => {
    const plan = stepPlanFor(spec, arm, step, args.bandwidth);
    const sampled = await sampleBatch(
      { runId: `${args.runId}.preflight`, arm: arm.name, step, plan, samplerPath: args.samplerPath, prompts: promptsForStep(args.train, arm, step) },
      { backend: args.backend, renderer: args.renderer, concurrency: args.concurrency },
    );
    return gradeBatch(sampled, { renderer: args.renderer, grade: gradeCompletion });
  };
  const grpo = await one(baselineArm(spec), 0);
  const gs1Window = await one(treatmentArm(spec), 0);
  const gs1 = await one(treatmentArm(spec), 1);
  return { grpo, gs1Window, gs1 };
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
