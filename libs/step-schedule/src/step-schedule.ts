// What the controller asks of step N of an arm: its prompts (the arm's slice of the fixed shuffled order), its
// plan (base model, group size, sampling, estimator, learning rate) and its sampling seed. A pure function of the
// spec, the arm, the step and the bandwidth, so a resumed or repeated run asks for exactly the same steps.
import type { LoraSpec, Problem, StepPlan, StepRequest } from '@rx/contracts';
import { DEFAULT_FORMAT_COEF } from '@rx/grading';
import { kernelSettings, samplingSettings, type ArmSpec, type ExperimentSpec } from '@rx/spec';

/** a training prompt as the datasets give it (@rx/datasets' Problem) */
export interface TrainPrompt {
  id: string;
  question: string;
  answer: string;
}

/** largest seed a step may start from: prompt i of the step samples with seed + i (< 4096 prompts a step) */
const SEED_SPACE = 2 ** 31 - 4096;

// seed(arm, step) = ((arm.seed * 7919 + step) * 4096) mod (2^31 - 4096)
export function samplingSeed(armSeed: number, step: number): number {
  return ((armSeed * 7919 + step) * 4096) % SEED_SPACE;
}

// prompts of step s = order[s * G, (s + 1) * G), G = groups_per_batch
export function promptsForStep(train: readonly TrainPrompt[], arm: ArmSpec, step: number): Problem[] {
  const g = arm.groups_per_batch;
  const slice = train.slice(step * g, (step + 1) * g);
  if (slice.length !== g) throw new RangeError(`step ${step} of ${arm.name} needs prompts ${step * g}..${(step + 1) * g - 1}, but only ${train.length} training prompts exist`);
  return slice.map((p) => ({ promptId: p.id, question: p.question, answer: p.answer }));
}

export function stepPlanFor(spec: ExperimentSpec, arm: ArmSpec, step: number, bandwidth: number): StepPlan {
  const sampling = samplingSettings(spec);
  return {
    baseModel: spec.base_model,
    groupSize: arm.group_size,
    sampling: { maxTokens: sampling.maxTokens, temperature: sampling.temperature, seed: samplingSeed(arm.seed, step) },
    advantage:
      arm.advantage === 'group_mean'
        ? { estimator: 'group_mean', dropConstantGroups: false }
        : { estimator: 'kernel_cross_prompt_baseline', bandwidth, windowSize: kernelSettings(spec).windowSize },
    learningRate: arm.lr,
    formatCoef: DEFAULT_FORMAT_COEF,
  };
}

export function loraFor(spec: ExperimentSpec, arm: ArmSpec): LoraSpec {
  return { baseModel: spec.base_model, rank: spec.lora_rank, seed: arm.seed };
}

export interface StepRequestInput {
  spec: ExperimentSpec;
  arm: ArmSpec;
  runId: string;
  step: number;
  train: readonly TrainPrompt[];
  bandwidth: number;
  initStatePath: string;
}

export function stepRequestFor(i: StepRequestInput): StepRequest {
  return {
    runId: i.runId,
    arm: i.arm.name,
    step: i.step,
    plan: stepPlanFor(i.spec, i.arm, i.step, i.bandwidth),
    lora: loraFor(i.spec, i.arm),
    initStatePath: i.initStatePath,
    prompts: promptsForStep(i.train, i.arm, i.step),
  };
}
