// `step-events`, pipeline -> controller: step N of an arm is committed (trainer), or it failed for good in some
// stage (any service, when it dead-letters a job of the step): the controller awaits one or the other.
import { z } from 'zod';
import { deadLetterSchema } from './dead-letter.schema';
import { enumIssueMap } from './issue-text';
import { stageNameSchema } from './stage-name';
import { stepHeaderSchema } from './step-header.schema';
import { stepRecordSchema } from './step-record.schema';

export const stepCompleteSchema = stepHeaderSchema.extend({
  kind: z.literal('step-complete'),
  /** applied: this delivery ran the optimizer step; skipped: a replay of a step already committed */
  outcome: z.enum(['applied', 'skipped'], { errorMap: enumIssueMap }),
  record: stepRecordSchema,
});

export const stepFailedSchema = stepHeaderSchema.extend({
  kind: z.literal('step-failed'),
  /** the stage that gave up on the step */
  stage: stageNameSchema,
  /** the job id of the dead letter written for it (`rx status` lists them) */
  deadLetterJobId: z.string().max(300),
  deadLetter: deadLetterSchema.pick({ sourceQueue: true, sourceJobId: true, reason: true, error: true, receivedAt: true }),
});

export const stepEventSchema = z.discriminatedUnion('kind', [stepCompleteSchema, stepFailedSchema]);

export type StepComplete = z.infer<typeof stepCompleteSchema>;
export type StepFailed = z.infer<typeof stepFailedSchema>;
export type StepEvent = z.infer<typeof stepEventSchema>;

/** a step-complete event as it is; a step-failed one as an error naming the stage and its reason */
export function stepCompleteOrThrow(event: StepEvent): StepComplete {
  if (event.kind === 'step-failed') throw new Error(`step ${event.step} of ${event.runId}/${event.arm} failed in ${event.stage}: ${event.deadLetter.error}`);
  return event;
}
