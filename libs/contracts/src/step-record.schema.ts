// What the trainer commits and logs for a step (one line of <data dir>/<run>/<arm>/steps.jsonl).
import { z } from 'zod';
import { gradeSchema } from './graded-batch.schema';
import { MAX_BATCH_ENTRIES, promptIdSchema } from './prompt.schema';
import { phiSchema, rolloutIdSchema, sampledRolloutSchema } from './sampled-batch.schema';
import { stageTimingsSchema } from './stage-timings.schema';
import { stepGateMetricsSchema } from './step-gate-metrics.schema';
import { stepHeaderSchema } from './step-header.schema';
import { trainerLogprobStatsSchema } from './trainer-logprob-stats.schema';
import { TRANSCRIPTS_PER_STEP, transcriptSampleSchema } from './transcript-sample.schema';
import { advantageFieldsSchema } from './train-step.schema';
import { enumIssueMap } from './issue-text';

export const loggedRolloutSchema = z
  .object({
    rolloutId: rolloutIdSchema,
    promptId: promptIdSchema,
    phi: phiSchema,
    completionTokens: z.number().int().nonnegative(),
    /** 'length': cut by max_tokens or the model's context (absent in records written before the field) */
    stopReason: sampledRolloutSchema.shape.stopReason.optional(),
  })
  .merge(gradeSchema)
  .merge(advantageFieldsSchema);

export const stepRecordSchema = stepHeaderSchema.extend({
  estimator: z.enum(['group_mean', 'kernel_cross_prompt_baseline'], { errorMap: enumIssueMap }),
  /** rollouts the trainer received */
  rollouts: z.array(loggedRolloutSchema).max(MAX_BATCH_ENTRIES),
  /** datums sent to forward_backward (rollouts not dropped) */
  datums: z.number().int().nonnegative(),
  /** forward_backward('importance_sampling') loss, summed over datums and positions */
  loss: z.number().finite(),
  /** the optimizer's own step counter after this step's optim_step */
  optimizerStep: z.number().int().nonnegative(),
  learningRate: z.number().positive(),
  gate: stepGateMetricsSchema,
  timings: stageTimingsSchema,
  samplerPath: z.string().max(1000),
  committedAt: z.string().max(64).datetime(),
  /** sampler vs learner logprobs on the completion tokens (absent when the backend returned no logprobs) */
  logprobStats: trainerLogprobStatsSchema.optional(),
  /** a few completions kept whole (evenly spaced over the batch) */
  transcripts: z.array(transcriptSampleSchema).max(TRANSCRIPTS_PER_STEP).optional(),
});

export type LoggedRollout = z.infer<typeof loggedRolloutSchema>;
export type StepRecord = z.infer<typeof stepRecordSchema>;
