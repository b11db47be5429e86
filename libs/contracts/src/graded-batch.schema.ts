// grader -> advantage (`graded-rollouts`): the step's rollouts with the cookbook reward of each.
import { z } from 'zod';
import { checkBatchConsistency } from './batch-consistency';
import { renderedPromptSchema } from './prompt.schema';
import { sampledRolloutSchema } from './sampled-batch.schema';
import { stageTimingsSchema } from './stage-timings.schema';
import { stepHeaderSchema } from './step-header.schema';
import { stepPlanSchema } from './step-plan.schema';

export const gradeSchema = z.object({
  /** format_coef * (correct_format - 1) + correct_answer */
  reward: z.number().finite(),
  /** the correct_answer bit */
  correct: z.boolean(),
  /** the correct_format bit (ended on the stop token and a \boxed{} answer present) */
  formatOk: z.boolean(),
});

export const gradedRolloutSchema = sampledRolloutSchema.merge(gradeSchema);

export const gradedBatchSchema = stepHeaderSchema
  .extend({
    plan: stepPlanSchema,
    samplerPath: z.string().min(1).max(1000),
    prompts: z.array(renderedPromptSchema).min(1).max(4096),
    rollouts: z.array(gradedRolloutSchema).min(1).max(4096),
    timings: stageTimingsSchema,
  })
  .superRefine(checkBatchConsistency);

export type Grade = z.infer<typeof gradeSchema>;
export type GradedRollout = z.infer<typeof gradedRolloutSchema>;
export type GradedBatch = z.infer<typeof gradedBatchSchema>;
