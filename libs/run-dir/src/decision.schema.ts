// decision-summary.json: the spec's paired rule under its pre-registered bound on the two arms' eval files (@rx/stats),
// the other bounds on the same pairs (exploratory), the rule,
// the files it read and the command that reproduces it; written by the decision phase, read back by the record,
// rx status, rx export and rx report.
import { z } from 'zod';
import { BOUND_NAMES } from '@rx/stats';
import { jsonObject } from './json-object';

export const decisionRuleSchema = jsonObject({
  method: z.literal('paired_hoeffding'),
  /** the pre-registered bound (absent in runs made before bounds were selectable: hoeffding) */
  bound: z.enum(BOUND_NAMES).optional(),
  orderSeed: z.number().int().nonnegative().optional(),
  criterionId: z.string(),
  metric: z.string(),
  alpha: z.number(),
  bounds: z.tuple([z.number(), z.number()]).readonly(),
  margin: z.number(),
  weights: jsonObject({ treatment: z.number(), baseline: z.number() }),
});

/** one bound's numbers on the same pairs (@rx/stats' BoundRecord) */
export const boundRecordSchema = jsonObject({
  bound: z.enum(BOUND_NAMES),
  n: z.number().int().nonnegative(),
  effect: z.number(),
  halfwidth: z.number(),
  lower: z.number(),
  upper: z.number(),
  wins_treatment: z.number().int().nonnegative(),
  wins_baseline: z.number().int().nonnegative(),
  supported: z.boolean(),
  outcome: z.enum(['supported', 'inconclusive', 'refuted']),
});

const scoredArmSchema = jsonObject({ arm: z.string(), file: z.string(), sha256: z.string(), accuracy: z.number() });

export const decisionSummarySchema = jsonObject({
  // @rx/stats' HoeffdingRecord
  n: z.number().int().nonnegative(),
  effect: z.number(),
  halfwidth: z.number(),
  lower: z.number(),
  upper: z.number(),
  wins_treatment: z.number().int().nonnegative(),
  wins_baseline: z.number().int().nonnegative(),
  supported: z.boolean(),
  outcome: z.enum(['supported', 'inconclusive', 'refuted']),
  rule: decisionRuleSchema,
  treatment: scoredArmSchema,
  baseline: scoredArmSchema,
  evaluator_id: z.string(),
  /** the bounds the spec did not pre-register, on the same pairs: exploratory, never the verdict */
  exploratory: z.array(boundRecordSchema).optional(),
  /** the same numbers from the command line */
  reproduce: z.string(),
});
export type DecisionSummary = z.infer<typeof decisionSummarySchema>;
