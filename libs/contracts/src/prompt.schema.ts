// A training prompt as drawn by the controller, and as carried once rendered into tokens.
import { z } from 'zod';

/** Token ids: non-negative integers, carried as plain JSON arrays. */
export const tokenArraySchema = z.array(z.number().int().nonnegative());

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
  tokens: tokenArraySchema.min(1),
});

export type Problem = z.infer<typeof problemSchema>;
export type RenderedPrompt = z.infer<typeof renderedPromptSchema>;
