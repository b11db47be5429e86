// dead-letters.jsonl: every dead letter of the run's steps, one JSON line each, as the controller's step bus saw it
// (appended as they come; rx status shows the count and the latest few).
import { z } from 'zod';
import { jsonObject } from './json-object';

export const seenDeadLetterSchema = jsonObject({
  deadLetterJobId: z.string(),
  sourceQueue: z.string().nullable(),
  sourceJobId: z.string(),
  reason: z.string(),
  error: z.string().nullable(),
  receivedAt: z.string().nullable(),
  /** when the controller wrote it down */
  seen_at: z.string(),
});
export type SeenDeadLetterLine = z.infer<typeof seenDeadLetterSchema>;
