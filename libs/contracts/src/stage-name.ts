// The stages of one RL step, in pipeline order; a job id and the stage label of a metric name one of these.
import { z } from 'zod';
import { enumIssueMap } from './issue-text';

export const STAGE_NAMES = ['prepare', 'sample', 'grade', 'advantage', 'train', 'complete'] as const;
export const stageNameSchema = z.enum(STAGE_NAMES, { errorMap: enumIssueMap });
export type StageName = z.infer<typeof stageNameSchema>;
