// Wall seconds each stage spent on a step, filled in as the batch moves down the pipeline.
import { z } from 'zod';

const seconds = z.number().nonnegative().finite();

export const stageTimingsSchema = z.object({
  prepare: seconds.optional(),
  sample: seconds.optional(),
  grade: seconds.optional(),
  advantage: seconds.optional(),
  train: seconds.optional(),
});

export type StageTimings = z.infer<typeof stageTimingsSchema>;
