// A training prompt as drawn by the controller, and as carried once rendered into tokens.
import { z } from 'zod';
import { numberArraySchema } from './number-array.schema';

/**
 * Most tokens of one sequence (a prompt, or a completion and its logprobs): the largest `maxTokens` a step plan
 * allows (samplingPlanSchema), far above the experiment's max_seq_len of 1024. A batch holds at most
 * MAX_BATCH_ENTRIES sequences, and the whole payload goes inline only under INLINE_PAYLOAD_LIMIT_BYTES.
 */
export const MAX_SEQUENCE_TOKENS = 32_768;
/** Most prompts or rollouts in one step's payload. */
export const MAX_BATCH_ENTRIES = 4096;

/** Token ids: non-negative integers, carried as plain JSON arrays. */
export const tokenArraySchema = numberArraySchema({ int: true, nonnegative: true, max: MAX_SEQUENCE_TOKENS });

export const promptIdSchema = z.string().min(1).max(128);

export const problemSchema = z.object({
  promptId: promptIdSchema,
  question: z.string().min(1).max(20000),
  /** the dataset's reference answer text (GSM8K: reasoning, then `#### <answer>`) */
  answer: z.string().max(20000),
});

export const renderedPromptSchema = z.object({
  promptId: promptIdSchema,
  /** generation prompt tokens (renderer.buildPrompt) */
  tokens: numberArraySchema({ int: true, nonnegative: true, min: 1, max: MAX_SEQUENCE_TOKENS }),
});

export type Problem = z.infer<typeof problemSchema>;
export type RenderedPrompt = z.infer<typeof renderedPromptSchema>;
