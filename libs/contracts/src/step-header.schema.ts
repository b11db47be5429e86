// Every payload of a step starts with (runId, arm, step): the key that orders, dedupes and names its jobs.
import { z } from 'zod';

/** A run id: letters, digits, `_`, `.`, `-` (no `:`, which BullMQ reserves in job ids). */
export const runIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'a run id is 1-64 letters, digits, "_", "." or "-", starting with a letter or digit');

/** An arm name from the spec (`grpo_gs8`, `gs1_kernel`): lower-case, digits, `_`; no `-`, so job ids split cleanly. */
export const armNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,31}$/, 'an arm name is 1-32 lower-case letters, digits or "_", starting with a letter');

/** Steps count from 0 within a run and arm. */
export const stepIndexSchema = z.number().int().nonnegative();

export const stepHeaderSchema = z.object({ runId: runIdSchema, arm: armNameSchema, step: stepIndexSchema });

export type RunId = z.infer<typeof runIdSchema>;
export type ArmName = z.infer<typeof armNameSchema>;
export type StepHeader = z.infer<typeof stepHeaderSchema>;
