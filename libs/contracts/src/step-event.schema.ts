// trainer -> controller (`step-events`): step N of an arm is committed (applied now, or found already applied).
import { z } from 'zod';
import { stepHeaderSchema } from './step-header.schema';
import { stepRecordSchema } from './step-record.schema';
import { enumIssueMap } from './issue-text';

export const stepEventSchema = stepHeaderSchema.extend({
  kind: z.literal('step-complete'),
  /** applied: this delivery ran the optimizer step; skipped: a replay of a step already committed */
  outcome: z.enum(['applied', 'skipped'], { errorMap: enumIssueMap }),
  record: stepRecordSchema,
});

export type StepEvent = z.infer<typeof stepEventSchema>;
