// budget-revisions.json: each raise of a run's budget, made on resuming a run its budget stopped
// (rx run --resume DIR --override raise-budget.json): the caps before and after, the override file and its sha256,
// when. The run keeps its spec.json; the budget in force is the last revision's `to` (or the spec's budget).
import { z } from 'zod';
import { isoTime, jsonObject } from './json-object';

export const budgetCapsSchema = jsonObject({
  gpu_hours: z.number().positive(),
  max_wall_minutes: z.number().positive(),
  max_tokens: z.number().int().positive().optional(),
  max_usd: z.number().positive().optional(),
});
export type BudgetCaps = z.infer<typeof budgetCapsSchema>;

export const budgetRevisionSchema = jsonObject({
  number: z.number().int().positive(),
  at: isoTime,
  from: budgetCapsSchema,
  to: budgetCapsSchema,
  /** the override file as given, and the sha256 of its bytes */
  source: z.string(),
  sha256: z.string(),
  /** the stop it lifts (state.json's reason when it was made) */
  lifts: z.string().nullable(),
});
export type BudgetRevision = z.infer<typeof budgetRevisionSchema>;

export const budgetRevisionsSchema = jsonObject({ revisions: z.array(budgetRevisionSchema) });
export type BudgetRevisions = z.infer<typeof budgetRevisionsSchema>;
