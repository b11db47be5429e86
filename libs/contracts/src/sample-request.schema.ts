// trainer -> sampler (`sample-requests`): sample groupSize completions per prompt from these weights.
import { z } from 'zod';
import { problemSchema } from './prompt.schema';
import { stepHeaderSchema } from './step-header.schema';
import { stepPlanSchema } from './step-plan.schema';
import { uniqueBy } from './unique-by';

export const sampleRequestSchema = stepHeaderSchema
  .extend({
    plan: stepPlanSchema,
    /** saveWeightsForSampler path of the weights before this step's update */
    samplerPath: z.string().min(1).max(1000),
    prompts: z.array(problemSchema).min(1).max(4096),
  })
  .superRefine(uniqueBy('prompts', (p) => p.promptId));

export type SampleRequest = z.infer<typeof sampleRequestSchema>;
