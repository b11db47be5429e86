// any consumer -> `dead-letters`: a job that cannot be processed (bad payload, or a step that must not be retried).
import { z } from 'zod';
import { QUEUE_NAME_LIST } from './queue-names';
import { enumIssueMap } from './issue-text';

export const deadLetterSchema = z.object({
  sourceQueue: z.enum(QUEUE_NAME_LIST, { errorMap: enumIssueMap }),
  /** BullMQ job ids here are `<run>-<arm>-<step>-<stage>` (at most ~120 characters) */
  sourceJobId: z.string().max(200).nullable(),
  /** invalid-payload: failed its schema; unrecoverable: the stage refused it (e.g. a step in doubt) */
  reason: z.enum(['invalid-payload', 'unrecoverable'], { errorMap: enumIssueMap }),
  /** one line: zod's path-named issues, or the stage's error message */
  error: z.string().max(8000),
  issues: z.array(z.object({ path: z.string().max(1000), message: z.string().max(2000) })).max(100),
  /** the start of the job data as JSON (never the whole of a large payload) */
  dataPreview: z.string().max(2000),
  receivedAt: z.string().max(64).datetime(),
});

export type DeadLetter = z.infer<typeof deadLetterSchema>;
