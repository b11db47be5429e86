// advantage -> trainer (`train-steps`): the step's rollouts with advantage, baseline and effective neighbours.
import { z } from 'zod';
import { checkBatchConsistency } from './batch-consistency';
import { gradedRolloutSchema } from './graded-batch.schema';
import { renderedPromptSchema } from './prompt.schema';
import { stageTimingsSchema } from './stage-timings.schema';
import { stepGateMetricsSchema } from './step-gate-metrics.schema';
import { stepHeaderSchema } from './step-header.schema';
import { stepPlanSchema } from './step-plan.schema';

export const advantageFieldsSchema = z.object({
  advantage: z.number().finite(),
  baseline: z.number().finite(),
  effectiveNeighbors: z.number().finite().nonnegative(),
  /** kernel mass < 1e-3: the baseline fell back to the window mean */
  fallback: z.boolean(),
  /** constant-reward group dropped from training (group mean with dropConstantGroups) */
  dropped: z.boolean(),
});

export const trainRolloutSchema = gradedRolloutSchema.merge(advantageFieldsSchema);

export const trainStepSchema = stepHeaderSchema
  .extend({
    plan: stepPlanSchema,
    samplerPath: z.string().min(1).max(1000),
    prompts: z.array(renderedPromptSchema).min(1).max(4096),
    rollouts: z.array(trainRolloutSchema).min(1).max(4096),
    gate: stepGateMetricsSchema,
    timings: stageTimingsSchema,
  })
  .superRefine(checkBatchConsistency);

export type TrainRollout = z.infer<typeof trainRolloutSchema>;
export type TrainStep = z.infer<typeof trainStepSchema>;
