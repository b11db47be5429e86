// sampler -> grader (`rollouts`): the sampled completions of one step, with phi and per-token sampling logprobs.
import { z } from 'zod';
import { checkBatchConsistency } from './batch-consistency';
import { MAX_SEQUENCE_TOKENS, promptIdSchema, renderedPromptSchema, tokenArraySchema } from './prompt.schema';
import { stageTimingsSchema } from './stage-timings.schema';
import { stepHeaderSchema } from './step-header.schema';
import { stepPlanSchema } from './step-plan.schema';
import { enumIssueMap } from './issue-text';
import { numberArraySchema } from './number-array.schema';

/** `<step>-<index in batch>`, index = prompt index * group size + sample index */
export const rolloutIdSchema = z.string().max(64).regex(/^\d+-\d+$/, 'a rollout id is `<step>-<index in batch>`');

/** Per-token logprobs: float32 values at 9 significant digits (compactFloat32), finite. */
export const logprobArraySchema = numberArraySchema({ finite: true, max: MAX_SEQUENCE_TOKENS });

/** phi = (ln prompt_token_count, mean prompt-token logprob under the sampling policy) */
export const phiSchema = z.tuple([z.number().finite(), z.number().finite()]);

export const sampledRolloutSchema = z.object({
  rolloutId: rolloutIdSchema,
  promptId: promptIdSchema,
  /** completion tokens, the stop token included when it ended on one */
  tokens: tokenArraySchema,
  /** sampling-policy logprob of each completion token */
  logprobs: logprobArraySchema,
  stopReason: z.enum(['stop', 'length'], { errorMap: enumIssueMap }),
  phi: phiSchema,
});

export const sampledPromptSchema = renderedPromptSchema.extend({
  /** the dataset's reference answer (graded against by the grader) */
  answer: z.string().max(20000),
});

export const sampledBatchSchema = stepHeaderSchema
  .extend({
    plan: stepPlanSchema,
    samplerPath: z.string().min(1).max(1000),
    prompts: z.array(sampledPromptSchema).min(1).max(4096),
    rollouts: z.array(sampledRolloutSchema).min(1).max(4096),
    timings: stageTimingsSchema,
  })
  .superRefine(checkBatchConsistency);

export type SampledRollout = z.infer<typeof sampledRolloutSchema>;
export type SampledPrompt = z.infer<typeof sampledPromptSchema>;
export type SampledBatch = z.infer<typeof sampledBatchSchema>;
