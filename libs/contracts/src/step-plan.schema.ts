// What a step does, fixed by the controller from the spec and carried by every payload of the step.
import { z } from 'zod';

export const groupMeanPlanSchema = z.object({
  estimator: z.literal('group_mean'),
  /** the cookbook's remove_constant_reward_groups (off by default in the cookbook) */
  dropConstantGroups: z.boolean(),
});

export const kernelPlanSchema = z.object({
  estimator: z.literal('kernel_cross_prompt_baseline'),
  /** h of the Gaussian kernel (0.5 pre-registered, 1.0 the one calibration alternative) */
  bandwidth: z.number().positive().finite(),
  /** rollouts in the window, the batch included (256 pre-registered) */
  windowSize: z.number().int().min(2),
});

export const advantagePlanSchema = z.discriminatedUnion('estimator', [groupMeanPlanSchema, kernelPlanSchema]);

export const samplingPlanSchema = z.object({
  maxTokens: z.number().int().min(1).max(32768),
  /** 0 means greedy */
  temperature: z.number().nonnegative().finite(),
  /** the step's seed; prompt i of the batch samples with seed + i */
  seed: z.number().int().nonnegative().max(2 ** 31 - 1),
});

export const stepPlanSchema = z.object({
  /** the arm's base model: its renderer (rendererFor in libs/backend) turns questions into prompt tokens and back */
  baseModel: z.string().min(1).max(200),
  /** samples per prompt (GRPO 8, GS1 1) */
  groupSize: z.number().int().min(1).max(64),
  sampling: samplingPlanSchema,
  advantage: advantagePlanSchema,
  /** AdamW learning rate of this step's optim_step */
  learningRate: z.number().positive().finite(),
  /** format_coef of the cookbook reward (0.1 default) */
  formatCoef: z.number().nonnegative().finite(),
});

export type AdvantagePlan = z.infer<typeof advantagePlanSchema>;
export type SamplingPlan = z.infer<typeof samplingPlanSchema>;
export type StepPlan = z.infer<typeof stepPlanSchema>;
