// controller -> trainer (`step-requests`): start step N of an arm with these prompts.
import { z } from 'zod';
import { problemSchema } from './prompt.schema';
import { stepHeaderSchema } from './step-header.schema';
import { stepPlanSchema } from './step-plan.schema';
import { uniqueBy } from './unique-by';

export const loraSchema = z.object({
  baseModel: z.string().min(1).max(200),
  rank: z.number().int().positive(),
  seed: z.number().int().nonnegative(),
});

export const stepRequestSchema = stepHeaderSchema
  .extend({
    plan: stepPlanSchema,
    lora: loraSchema,
    /** a saveState path both arms start from (loaded when the arm's training client is created) */
    initStatePath: z.string().min(1).max(1000).optional(),
    prompts: z.array(problemSchema).min(1).max(4096),
  })
  .superRefine(uniqueBy('prompts', (p) => p.promptId));

export type LoraSpec = z.infer<typeof loraSchema>;
export type StepRequest = z.infer<typeof stepRequestSchema>;
