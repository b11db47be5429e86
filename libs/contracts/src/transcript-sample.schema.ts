// A few completions of a step kept whole in its record, so the run directory can show what the policy wrote.
import { z } from 'zod';
import { tokenArraySchema } from './prompt.schema';
import { rolloutIdSchema } from './sampled-batch.schema';

/** completions a step record keeps whole (rollouts evenly spaced over the batch) */
export const TRANSCRIPTS_PER_STEP = 4;

export const transcriptSampleSchema = z.object({
  rolloutId: rolloutIdSchema,
  /** the completion tokens as sampled */
  tokens: tokenArraySchema,
});

export type TranscriptSample = z.infer<typeof transcriptSampleSchema>;

/** the indices of the rollouts kept whole: `count` evenly spaced over a batch of n */
export function transcriptIndices(n: number, count = TRANSCRIPTS_PER_STEP): number[] {
  const k = Math.min(n, count);
  return Array.from({ length: k }, (_, i) => Math.floor((i * n) / k));
}
